// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/ksym_cache.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/log.h"
#include "symbolize/kallsyms.h"

#define PREFIX "kallsyms-"
/* The core kernel's text lines take ~5 MB; far more is not such a file. */
#define FILE_MAX (64u << 20)
/* Module and BPF lines: a few hundred, tens of thousands with many modules. */
#define TAIL_MAX   (64u << 20)
#define SAMPLE_MIN 8
#define IO_BUF	   (64u << 10)
/* The first lines of /proc/kallsyms checked against a saved core table. */
#define HEAD_BYTES (16u << 10)

/* "kallsyms-<boot id>": a new boot, a new name. */
static int file_name(char *buf, size_t len)
{
	char id[64];
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(id, 1, sizeof(id) - 1, f);
	fclose(f);
	while (n && id[n - 1] == '\n')
		n--;
	id[n] = '\0';
	if (n < 16 || strspn(id, "0123456789abcdef-") != n)
		return -EINVAL;
	snprintf(buf, len, PREFIX "%s", id);
	return 0;
}

/* Ours alone: a file someone else could have written is not believed. */
static bool trusted(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH)) && st.st_size <= (off_t)FILE_MAX;
}

bool ksym_cache_present(int dirfd)
{
	char name[128];
	struct stat st;

	return dirfd >= 0 && !file_name(name, sizeof(name)) &&
	       !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

/* "ADDR TYPE NAME": the address of a line (up to end). */
static bool line_addr(const char *l, const char *end, uint64_t *addr)
{
	const char *p = l;
	int n = 0;

	*addr = 0;
	for (; p < end && n <= 16; p++, n++) {
		char c = *p;

		if (c >= '0' && c <= '9')
			*addr = *addr << 4 | (uint64_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*addr = *addr << 4 | (uint64_t)(c - 'a' + 10);
		else
			break;
	}
	return n > 0 && n <= 16 && end - p >= 4 && p[0] == ' ' && p[2] == ' ';
}

bool ksym_cache_sample_ok(const struct kallsyms *core, const char *sample, size_t len)
{
	const char *p = sample, *end = sample + len;
	size_t matched = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		uint64_t a, off = 1;

		if (le - p < 2 || p[0] != 'C' || p[1] != ' ' || !line_addr(p + 2, le, &a) || !a ||
		    !kallsyms_lookup(core, a, &off) || off)
			return false;
		matched++;
		p = le + 1;
	}
	return matched >= SAMPLE_MIN;
}

/* The iterator's whole output, its "C " sample lines apart. */
static int read_iter(int link_fd, char **sample, size_t *slen, char **tail, size_t *tlen)
{
	size_t cap = 0, len = 0, sl = 0, tl = 0;
	char *buf = NULL, *s = NULL, *t = NULL;
	int fd = bpf_iter_create(link_fd), err = 0;

	*sample = *tail = NULL;
	*slen = *tlen = 0;
	if (fd < 0) /* libbpf 1.x: the negative errno */
		return fd;
	for (;;) {
		ssize_t n;

		if (len + IO_BUF > cap) {
			char *nb = cap + IO_BUF > TAIL_MAX ? NULL
							   : realloc(buf, cap = 2 * cap + IO_BUF);

			if (!nb) {
				err = cap > TAIL_MAX ? -EFBIG : -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!err) {
		s = calloc(1, len + 1);
		t = calloc(1, len + 1);
		if (!s || !t)
			err = -ENOMEM;
	}
	for (size_t i = 0; !err && i < len;) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - (buf + i)) + 1 : len - i;

		if (ll >= 2 && buf[i] == 'C' && buf[i + 1] == ' ') {
			memcpy(s + sl, buf + i, ll);
			sl += ll;
		} else {
			memcpy(t + tl, buf + i, ll);
			tl += ll;
		}
		i += ll;
	}
	free(buf);
	if (err) {
		free(s);
		free(t);
		return err;
	}
	*sample = s;
	*slen = sl;
	*tail = t;
	*tlen = tl;
	return 0;
}

/* This boot's file, if ours. */
static int load_file(int dirfd, struct kallsyms **core)
{
	char name[128];
	struct stat st;
	int fd, err;

	*core = NULL;
	if (dirfd < 0)
		return -ENOENT;
	err = file_name(name, sizeof(name));
	if (err)
		return err;
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!trusted(fd) || fstat(fd, &st)) {
		close(fd);
		return -EPERM;
	}
	err = kallsyms_load_saved(fd, (size_t)st.st_size, core);
	close(fd);
	return err;
}

int ksym_cache_read_rest(const struct kallsyms *core, int iter_link_fd, struct kallsyms **rest)
{
	char *sample = NULL, *tail = NULL;
	size_t slen = 0, tlen = 0;
	FILE *f = NULL;
	int err;

	*rest = NULL;
	if (iter_link_fd < 0)
		return -ENOTSUP;
	err = read_iter(iter_link_fd, &sample, &slen, &tail, &tlen);
	if (err)
		goto out;
	if (!ksym_cache_sample_ok(core, sample, slen)) {
		err = -ESTALE;
		goto out;
	}
	if (tlen) {
		f = fmemopen(tail, tlen, "r");
		if (!f) {
			err = -errno;
			goto out;
		}
	}
	err = kallsyms_load_streams(&f, f ? 1 : 0, NULL, rest);
out:
	if (f)
		fclose(f);
	free(sample);
	free(tail);
	return err;
}

int ksym_cache_load_rest(struct kallsyms *core, int iter_link_fd, struct kallsyms **out)
{
	struct kallsyms *rest = NULL;
	int err;

	*out = NULL;
	err = ksym_cache_read_rest(core, iter_link_fd, &rest);
	if (!err)
		err = kallsyms_merge(core, rest, out);
	kallsyms_free(rest);
	return err;
}

int ksym_cache_load(int dirfd, int iter_link_fd, struct kallsyms **out)
{
	struct kallsyms *core = NULL;
	int err;

	*out = NULL;
	err = load_file(dirfd, &core);
	if (err)
		return err;
	if (iter_link_fd < 0)
		err = -ENOTSUP;
	else
		err = ksym_cache_load_rest(core, iter_link_fd, out);
	kallsyms_free(core);
	return err;
}

bool ksym_cache_head_ok(const struct kallsyms *core, const char *head, size_t len)
{
	const char *p = head, *end = head + len;
	size_t matched = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		uint64_t a, off = 1;

		if (!nl)
			break; /* cut by the read: not judged */
		size_t hex = strspn(p, "0123456789abcdef");
		char type = line_addr(p, nl, &a) ? p[hex + 1] : '?';

		/* Text lines of the core kernel; a tab starts a module's. */
		if ((type == 't' || type == 'T' || type == 'w' || type == 'W') &&
		    !memchr(p, '\t', (size_t)(nl - p))) {
			if (!a || !kallsyms_lookup(core, a, &off) || off)
				return false;
			matched++;
		}
		p = nl + 1;
	}
	return matched >= SAMPLE_MIN;
}

int ksym_cache_load_core(int dirfd, const char *kallsyms_path, struct kallsyms **core)
{
	char head[HEAD_BYTES];
	size_t len = 0;
	int fd, err;

	*core = NULL;
	err = load_file(dirfd, core);
	if (err)
		return err;
	/* The kernel prints /proc/kallsyms as it is read: one read of the
	 * first lines costs what they cost, not the whole table. */
	fd = open(kallsyms_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto fail;
	}
	while (len < sizeof(head)) {
		ssize_t n = read(fd, head + len, sizeof(head) - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!ksym_cache_head_ok(*core, head, len)) {
		err = -ESTALE;
		goto fail;
	}
	return 0;
fail:
	kallsyms_free(*core);
	*core = NULL;
	return err;
}

static void remove_stale(int dirfd, const char *keep)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strncmp(e->d_name, PREFIX, strlen(PREFIX)) && strcmp(e->d_name, keep) &&
		    !strstr(e->d_name, ".tmp."))
			unlinkat(dirfd, e->d_name, 0);
	}
	closedir(d);
}

/* The table of the core kernel's lines (text, in file order) written to
 * this boot's file. */
static void save_core(int dirfd, const char *lines, size_t len)
{
	struct kallsyms *core = NULL;
	char name[128], tmp[192];
	FILE *in, *out;
	bool ok;
	int fd;

	if (file_name(name, sizeof(name)))
		return;
	in = fmemopen((void *)lines, len, "r");
	if (!in)
		return;
	ok = !kallsyms_load_streams(&in, 1, NULL, &core) && kallsyms_count(core) > 0;
	fclose(in);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid());
	fd = ok ? openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
		: -1;
	out = fd >= 0 ? fdopen(fd, "we") : NULL;
	if (fd >= 0 && !out)
		close(fd);
	if (out) {
		ok = !kallsyms_save(core, out);
		ok = !fclose(out) && ok;
		if (ok && !renameat(dirfd, tmp, dirfd, name))
			remove_stale(dirfd, name);
		else
			unlinkat(dirfd, tmp, 0);
	}
	kallsyms_free(core);
}

int ksym_cache_full_load(int dirfd, const char *path, struct kallsyms **out)
{
	char *lines = NULL;
	size_t len = 0;
	FILE *f, *core = NULL;
	int err;

	*out = NULL;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* Fewer read() calls: each one makes the kernel re-walk its seq_file. */
	setvbuf(f, NULL, _IOFBF, IO_BUF);
	if (dirfd >= 0)
		core = open_memstream(&lines, &len);
	err = kallsyms_load_streams(&f, 1, core, out);
	fclose(f);
	if (!core)
		return err;
	if (!fclose(core) && !err && !kallsyms_restricted(*out) && len)
		save_core(dirfd, lines, len);
	free(lines);
	/* -EIO may be the copy's: the table does not need it. */
	if (err == -EIO)
		err = kallsyms_load(path, out);
	return err;
}

/* A [bpf] symbol can come or go between two reads: other tools load
 * programs at any time. */
static bool bpf_sym(const char *name)
{
	size_t n = strlen(name);

	return n > 6 && !strcmp(name + n - 6, " [bpf]");
}

size_t ksym_cache_diff(const struct kallsyms *a, const struct kallsyms *b, size_t *bpf_alike)
{
	size_t i = 0, j = 0, diff = 0;
	uint64_t aa = 0, ba = 0;
	const char *an = kallsyms_at(a, 0, &aa), *bn = kallsyms_at(b, 0, &ba);

	*bpf_alike = 0;
	while (an || bn) {
		if (an && bn && aa == ba) {
			if (strcmp(an, bn))
				diff++;
			else if (bpf_sym(an))
				(*bpf_alike)++;
			an = kallsyms_at(a, ++i, &aa);
			bn = kallsyms_at(b, ++j, &ba);
		} else if (an && (!bn || aa < ba)) {
			diff += !bpf_sym(an);
			an = kallsyms_at(a, ++i, &aa);
		} else {
			diff += !bpf_sym(bn);
			bn = kallsyms_at(b, ++j, &ba);
		}
	}
	return diff;
}
