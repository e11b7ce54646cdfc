// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERFMAP_MAX_NAME 1024
/* When the closest entry does not contain addr, look this many entries back:
 * overlapping entries (a big stub containing small ones) are rare and local. */
#define PERFMAP_BACKSCAN 16

struct pm_entry {
	uint64_t start, size;
	uint32_t name_off;
	uint32_t idx;
};

struct perfmap {
	struct pm_entry *e;
	size_t n;
	char *names;
	size_t bad_lines;
	bool truncated;
	uint64_t unread_bytes;
};

/* Reads no further than end: the last line of a buffer need not end in a
 * newline, and nothing follows it (found by fuzzing). */
static const char *parse_hex(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	if (end - p >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; p < end; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (unsigned)((*p | 0x20) - 'a' + 10);
		else
			break;
		if (++n > 16)
			return NULL;
		v = (v << 4) | d;
	}
	if (n == 0)
		return NULL;
	*out = v;
	return p;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

int perfmap_parse(const char *buf, size_t len, struct perfmap **out)
{
	const char *p = buf, *endp = buf + len;
	size_t cap = 0, names_len = 0, names_cap = 0, w;
	struct perfmap *pm;
	int err = 0;

	*out = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	while (p < endp) {
		const char *nl = memchr(p, '\n', (size_t)(endp - p));
		const char *le = nl ? nl : endp, *q = p, *line = p, *name;
		uint64_t start, size;
		size_t nlen;

		p = le + 1;
		if (le == q)
			continue;
		q = parse_hex(q, le, &start);
		if (!q || q >= le || *q != ' ') {
			pm->bad_lines++;
			continue;
		}
		q = parse_hex(q + 1, le, &size);
		if (!q || q >= le || *q != ' ' || size == 0 || start > UINT64_MAX - size) {
			pm->bad_lines++;
			continue;
		}
		name = q + 1;
		nlen = (size_t)(le - name);
		if (nlen && name[nlen - 1] == '\r')
			nlen--;
		if (nlen == 0 || nlen >= PERFMAP_MAX_NAME || memchr(name, '\0', nlen)) {
			pm->bad_lines++;
			continue;
		}
		if (pm->n >= PERFMAP_MAX_ENTRIES) {
			pm->truncated = true;
			pm->unread_bytes = (uint64_t)(endp - line);
			break;
		}
		if (pm->n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct pm_entry *ne = realloc(pm->e, nc * sizeof(*ne));

			if (!ne) {
				err = -ENOMEM;
				break;
			}
			pm->e = ne;
			cap = nc;
		}
		if (names_len + nlen + 1 > names_cap) {
			size_t nc = names_cap ? names_cap * 2 : 16384;
			char *nn;

			while (nc < names_len + nlen + 1)
				nc *= 2;
			nn = realloc(pm->names, nc);
			if (!nn) {
				err = -ENOMEM;
				break;
			}
			pm->names = nn;
			names_cap = nc;
		}
		memcpy(pm->names + names_len, name, nlen);
		pm->names[names_len + nlen] = '\0';
		pm->e[pm->n] = (struct pm_entry){ .start = start,
						  .size = size,
						  .name_off = (uint32_t)names_len,
						  .idx = (uint32_t)pm->n };
		names_len += nlen + 1;
		pm->n++;
	}
	if (err) {
		perfmap_free(pm);
		return err;
	}
	if (pm->n) {
		qsort(pm->e, pm->n, sizeof(*pm->e), entry_cmp);
		/* Same start: keep only the newest (last written) entry. */
		w = 0;
		for (size_t i = 0; i < pm->n; i++) {
			if (w && pm->e[w - 1].start == pm->e[i].start)
				pm->e[w - 1] = pm->e[i];
			else
				pm->e[w++] = pm->e[i];
		}
		pm->n = w;
	}
	*out = pm;
	return 0;
}

/* Anyone can create files in /tmp, and a directory on the way could be a
 * symlink planted by another user: the path is walked one component at a
 * time with O_NOFOLLOW, so no symlink is followed anywhere (ELOOP). ".." is
 * resolved by name and never climbs above the starting directory (dirfd, or
 * "/" for an absolute path), as openat2's RESOLVE_IN_ROOT would do; done by
 * hand because openat2 is missing before Linux 5.6 and under qemu-user. */
#define PATH_MAX_COMPONENTS 64

static int open_no_symlinks(int dirfd, const char *path)
{
	const char *comp[PATH_MAX_COMPONENTS];
	char *copy, *save = NULL;
	int n = 0, cur, fd, err = 0;

	copy = strdup(path);
	if (!copy) {
		errno = ENOMEM;
		return -1;
	}
	for (char *t = strtok_r(copy, "/", &save); t; t = strtok_r(NULL, "/", &save)) {
		if (strcmp(t, ".") == 0)
			continue;
		if (strcmp(t, "..") == 0) {
			if (n > 0)
				n--;
			else if (dirfd == AT_FDCWD && path[0] != '/')
				err = EXDEV; /* above a relative start: not ours */
			continue;
		}
		if (n == PATH_MAX_COMPONENTS) {
			err = ENAMETOOLONG;
			break;
		}
		comp[n++] = t;
	}
	if (!err && n == 0)
		err = EISDIR;
	if (err) {
		free(copy);
		errno = err;
		return -1;
	}
	if (dirfd == AT_FDCWD)
		cur = open(path[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	else
		cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	for (int i = 0; cur >= 0 && i < n - 1; i++) {
		int next = openat(cur, comp[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat lst;

		err = errno;
		/* O_DIRECTORY reports a symlink as ENOTDIR: say what it is. */
		if (next < 0 && err == ENOTDIR &&
		    fstatat(cur, comp[i], &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
			err = ELOOP;
		close(cur);
		cur = next;
		errno = err;
	}
	if (cur < 0) {
		free(copy);
		return -1;
	}
	fd = openat(cur, comp[n - 1], O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	err = errno;
	close(cur);
	free(copy);
	errno = err;
	return fd;
}

int perfmap_load(const char *path, uid_t owner_uid, struct perfmap **out)
{
	return perfmap_load_at(AT_FDCWD, path, owner_uid, out);
}

int perfmap_load_at(int dirfd, const char *path, uid_t owner_uid, struct perfmap **out)
{
	int fd, err;

	*out = NULL;
	fd = open_no_symlinks(dirfd, path);
	if (fd < 0)
		return -errno;
	err = perfmap_load_fd(fd, owner_uid, out);
	close(fd);
	return err;
}

int perfmap_load_fd(int fd, uid_t owner_uid, struct perfmap **out)
{
	struct stat st;
	size_t len = 0, cap;
	char *buf;
	bool truncated = false;
	uint64_t unread = 0;
	int err;

	*out = NULL;
	if (fstat(fd, &st) < 0)
		return -errno;
	/* Anyone can create /tmp/perf-PID.map: only trust the target's own. */
	if (!S_ISREG(st.st_mode) ||
	    (owner_uid != (uid_t)-1 && st.st_uid != 0 && st.st_uid != owner_uid))
		return -EPERM;
	cap = st.st_size > 0 && (uint64_t)st.st_size < PERFMAP_MAX_BYTES ? (size_t)st.st_size + 1
									 : 65536;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			char *nb;

			if (cap >= PERFMAP_MAX_BYTES) {
				truncated = true;
				break;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	/* What the cap left unread, counted from the file's size now (the JIT
	 * may still be appending). */
	if (truncated && fstat(fd, &st) == 0 && (uint64_t)st.st_size > len)
		unread = (uint64_t)st.st_size - len;
	/* A partially written last line (the JIT is appending) is not a symbol. */
	while (len && buf[len - 1] != '\n') {
		len--;
		unread += truncated;
	}
	err = perfmap_parse(buf, len, out);
	free(buf);
	if (!err && truncated) {
		(*out)->truncated = true;
		(*out)->unread_bytes += unread;
	}
	return err;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	free(pm->e);
	free(pm->names);
	free(pm);
}

const char *perfmap_lookup(const struct perfmap *pm, uint64_t addr, uint64_t *sym_off)
{
	size_t lo = 0, hi = pm->n;

	if (pm->n == 0 || addr < pm->e[0].start)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->e[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	for (size_t k = 0; k <= PERFMAP_BACKSCAN && k <= lo; k++) {
		const struct pm_entry *e = &pm->e[lo - k];

		if (addr - e->start < e->size) {
			if (sym_off)
				*sym_off = addr - e->start;
			return pm->names + e->name_off;
		}
	}
	return NULL;
}

size_t perfmap_count(const struct perfmap *pm)
{
	return pm->n;
}

size_t perfmap_bad_lines(const struct perfmap *pm)
{
	return pm->bad_lines;
}

bool perfmap_truncated(const struct perfmap *pm)
{
	return pm->truncated;
}

uint64_t perfmap_unread_bytes(const struct perfmap *pm)
{
	return pm->unread_bytes;
}
