// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc/proc_maps.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Parses exactly a hex number of 1..16 digits; returns the position after it. */
static const char *parse_hex(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (n < 17) {
		char c = *p;
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		v = (v << 4) | d;
		p++;
		n++;
	}
	if (n == 0 || n > 16)
		return NULL;
	*out = v;
	return p;
}

static const char *parse_dec(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (*p >= '0' && *p <= '9') {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return NULL;
		v = v * 10 + d;
		p++;
		n++;
	}
	if (n == 0)
		return NULL;
	*out = v;
	return p;
}

static enum proc_map_kind classify(const char *path)
{
	if (path[0] == '/')
		return PROC_MAP_FILE;
	if (path[0] == '\0' || strncmp(path, "[anon:", 6) == 0 || strcmp(path, "[heap]") == 0 ||
	    strncmp(path, "[stack", 6) == 0 || strncmp(path, "[anon_shmem:", 12) == 0)
		return PROC_MAP_ANON;
	if (strcmp(path, "[vdso]") == 0)
		return PROC_MAP_VDSO;
	return PROC_MAP_OTHER;
}

int proc_maps_parse_line(const char *line, struct proc_map *out)
{
	static const char deleted_sfx[] = " (deleted)";
	const size_t sfx_len = sizeof(deleted_sfx) - 1;
	uint64_t start, end, pgoff, maj, min, ino;
	const char *p = line, *path;
	size_t len;

	memset(out, 0, sizeof(*out));
	p = parse_hex(p, &start);
	if (!p || *p++ != '-')
		return -EINVAL;
	p = parse_hex(p, &end);
	if (!p || *p++ != ' ' || end <= start)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		static const char allowed[4][3] = { "r-", "w-", "x-", "ps" };

		if (!p[i] || !strchr(allowed[i], p[i]))
			return -EINVAL;
		out->perms[i] = p[i];
	}
	p += 4;
	if (*p++ != ' ')
		return -EINVAL;
	p = parse_hex(p, &pgoff);
	if (!p || *p++ != ' ')
		return -EINVAL;
	p = parse_hex(p, &maj);
	if (!p || *p++ != ':' || maj > UINT32_MAX)
		return -EINVAL;
	p = parse_hex(p, &min);
	if (!p || *p++ != ' ' || min > UINT32_MAX)
		return -EINVAL;
	p = parse_dec(p, &ino);
	if (!p || (*p != ' ' && *p != '\n' && *p != '\0'))
		return -EINVAL;
	/* An offset that would wrap when the mapping length is added is nonsense. */
	if (pgoff > UINT64_MAX - (end - start))
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	path = p;
	len = strcspn(path, "\n");
	if (len >= sfx_len && memcmp(path + len - sfx_len, deleted_sfx, sfx_len) == 0) {
		out->deleted = true;
		len -= sfx_len;
	}
	out->path = strndup(path, len);
	if (!out->path)
		return -ENOMEM;
	out->start = start;
	out->end = end;
	out->pgoff = pgoff;
	out->dev_major = (uint32_t)maj;
	out->dev_minor = (uint32_t)min;
	out->inode = ino;
	out->kind = classify(out->path);
	/* A "file" without inode is not something we could ever open. */
	if (out->kind == PROC_MAP_FILE && ino == 0 && maj == 0 && min == 0)
		out->kind = PROC_MAP_OTHER;
	return 0;
}

int proc_maps_parse_buf(const char *buf, size_t len, size_t max_entries, struct proc_maps *out)
{
	const char *p = buf, *endp = buf + len;
	char *line = NULL;
	size_t line_cap = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	while (p < endp) {
		const char *nl = memchr(p, '\n', (size_t)(endp - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(endp - p);
		struct proc_map m;
		int r;

		if (l + 1 > line_cap) {
			char *nline = realloc(line, l + 1);

			if (!nline) {
				err = -ENOMEM;
				break;
			}
			line = nline;
			line_cap = l + 1;
		}
		memcpy(line, p, l);
		line[l] = '\0';
		p += l + 1;
		if (l == 0)
			continue;
		/* Embedded NULs would make the line parse as something shorter. */
		r = memchr(line, '\0', l) ? -EINVAL : proc_maps_parse_line(line, &m);
		if (r == -ENOMEM) {
			err = r;
			break;
		}
		if (r < 0 || out->n >= max_entries ||
		    (out->n && m.start < out->maps[out->n - 1].end)) {
			if (r == 0)
				free(m.path);
			out->bad_lines++;
			continue;
		}
		if (out->n == out->cap) {
			size_t ncap = out->cap ? out->cap * 2 : 64;
			struct proc_map *nm = realloc(out->maps, ncap * sizeof(*nm));

			if (!nm) {
				free(m.path);
				err = -ENOMEM;
				break;
			}
			out->maps = nm;
			out->cap = ncap;
		}
		out->maps[out->n++] = m;
	}
	free(line);
	if (err)
		proc_maps_free(out);
	return err;
}

int proc_maps_read_file(const char *path, size_t max_bytes, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 16384;
	char *buf;
	int fd, err = 0;

	*bufp = NULL;
	*lenp = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (len + 1 >= cap) {
			char *nb;

			if (cap > max_bytes) {
				err = -EFBIG;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len > max_bytes) {
			err = -EFBIG;
			break;
		}
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

const struct proc_map *proc_maps_find(const struct proc_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->maps[mid].start)
			hi = mid;
		else if (addr >= m->maps[mid].end)
			lo = mid + 1;
		else
			return &m->maps[mid];
	}
	return NULL;
}

/* Anonymous entries skipped between two mappings of one file: .bss and
 * [heap] after .data, a guard page; more than that is not one ELF image. */
#define GROUP_MAX_SKIP 4

static bool same_file(const struct proc_map *a, const struct proc_map *b)
{
	return b->kind == PROC_MAP_FILE && a->inode == b->inode && a->dev_major == b->dev_major &&
	       a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

uint64_t proc_maps_file_group(const struct proc_maps *m, size_t i, size_t *last)
{
	const struct proc_map *first = &m->maps[i];
	size_t skipped = 0;

	*last = i;
	for (size_t j = i + 1; j < m->n && skipped <= GROUP_MAX_SKIP; j++) {
		const struct proc_map *e = &m->maps[j];

		if (same_file(first, e)) {
			if (e->pgoff == 0 || e->pgoff < m->maps[*last].pgoff)
				break;
			*last = j;
			skipped = 0;
		} else if (e->kind == PROC_MAP_ANON) {
			skipped++;
		} else {
			break;
		}
	}
	return m->maps[*last].end;
}

const struct proc_map *proc_maps_find_alias(const struct proc_maps *m, const struct proc_map *like,
					    uint64_t foff)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_map *e = &m->maps[i];

		if (e != like && same_file(like, e) && foff >= e->pgoff &&
		    foff - e->pgoff < e->end - e->start)
			return e;
	}
	return NULL;
}

void proc_maps_free(struct proc_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->maps[i].path);
	free(m->maps);
	memset(m, 0, sizeof(*m));
}

const char *proc_maps_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}
