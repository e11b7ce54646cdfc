// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "jetson/jetson_fs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory with more entries than this is not a sysfs class we understand. */
#define JFS_MAX_LIST 4096

int jfs_path(char *out, size_t outlen, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, outlen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	return 0;
}

int jfs_open(struct jfs *fs, const char *root)
{
	memset(fs, 0, sizeof(*fs));
	fs->dirfd = -1;
	if (!root || !*root)
		root = "/";
	if (strlen(root) >= sizeof(fs->root))
		return -ENAMETOOLONG;
	strcpy(fs->root, root);
	fs->dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->dirfd < 0)
		return -errno;
	fs->stubs = strcmp(root, "/") != 0;
	return 0;
}

void jfs_close(struct jfs *fs)
{
	if (fs->dirfd >= 0)
		close(fs->dirfd);
	fs->dirfd = -1;
}

/* A link stub holds one relative path: printable, no spaces, no newline. */
static bool stub_target(const struct jfs *fs, const char *path, char *out, size_t outlen)
{
	char buf[256];
	ssize_t n;
	int fd;

	fd = openat(fs->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0 || (size_t)n >= sizeof(buf) || (size_t)n >= outlen)
		return false;
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (!isgraph(c))
			return false;
	}
	buf[n] = '\0';
	if (buf[0] == '/')
		return false;
	memcpy(out, buf, (size_t)n + 1);
	return true;
}

static void pop_component(char *cur)
{
	char *slash = strrchr(cur, '/');

	if (slash)
		*slash = '\0';
	else
		cur[0] = '\0';
}

int jfs_resolve(const struct jfs *fs, const char *rel, bool want_dir, char *out, size_t outlen)
{
	char cur[PATH_MAX] = "";
	char rest[PATH_MAX];
	char cand[PATH_MAX];
	char target[PATH_MAX];
	int links = 0;

	if (strlen(rel) >= sizeof(rest))
		return -ENAMETOOLONG;
	strcpy(rest, rel);

	for (;;) {
		char comp[NAME_MAX + 1];
		char *p = rest, *end;
		size_t clen;
		struct stat st;
		bool last, follow = false;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchr(p, '/');
		clen = end ? (size_t)(end - p) : strlen(p);
		if (clen > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(comp, p, clen);
		comp[clen] = '\0';
		memmove(rest, p + clen, strlen(p + clen) + 1);
		last = strspn(rest, "/") == strlen(rest);

		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			pop_component(cur); /* ".." at the root stays at the root */
			continue;
		}
		if (jfs_path(cand, sizeof(cand), "%s%s%s", cur, *cur ? "/" : "", comp))
			return -ENAMETOOLONG;
		if (fstatat(fs->dirfd, cand, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlinkat(fs->dirfd, cand, target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			follow = true;
		} else if (S_ISREG(st.st_mode) && fs->stubs && (!last || want_dir)) {
			if (!stub_target(fs, cand, target, sizeof(target)))
				return -ENOTDIR;
			follow = true;
		} else if (S_ISREG(st.st_mode) && fs->stubs && last && st.st_size < 256) {
			follow = stub_target(fs, cand, target, sizeof(target)) &&
				 !strncmp(target, "../", 3);
		} else if (!last && !S_ISDIR(st.st_mode)) {
			return -ENOTDIR;
		}
		if (!follow) {
			strcpy(cur, cand);
			continue;
		}
		if (++links > JFS_MAX_LINKS)
			return -ELOOP;
		if (target[0] == '/')
			cur[0] = '\0'; /* absolute targets restart at the fake root */
		if (strlen(target) + 1 + strlen(rest) >= sizeof(rest))
			return -ENAMETOOLONG;
		memmove(rest + strlen(target) + 1, rest, strlen(rest) + 1);
		memcpy(rest, target, strlen(target));
		rest[strlen(target)] = '/';
	}
	if (jfs_path(out, outlen, "%s", *cur ? cur : "."))
		return -ENAMETOOLONG;
	return 0;
}

static bool is_debugfs(const char *canon)
{
	return !strncmp(canon, "sys/kernel/debug", 16) && (canon[16] == '\0' || canon[16] == '/');
}

static int open_rel(const struct jfs *fs, const char *rel, int flags)
{
	char canon[PATH_MAX];
	const char *p = rel;
	int fd, err;

	while (*p == '/')
		p++;
	if (!fs->stubs) {
		/* Real root "/": the kernel resolves; nothing to confine. */
		if (fs->deny_debugfs && is_debugfs(p))
			return -EACCES;
		fd = openat(fs->dirfd, p, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	err = jfs_resolve(fs, p, (flags & O_DIRECTORY) != 0, canon, sizeof(canon));
	if (err)
		return err;
	if (fs->deny_debugfs && is_debugfs(canon))
		return -EACCES;
	fd = openat(fs->dirfd, canon, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -errno : fd;
}

int jfs_read_raw(const struct jfs *fs, const char *rel, char *buf, size_t buflen)
{
	struct stat st;
	size_t len = 0;
	int fd;

	if (buflen < 2)
		return -EINVAL;
	fd = open_rel(fs, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return fd;
	/* FIFOs, devices and directories in a hostile tree must not block or confuse us. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	for (;;) {
		ssize_t n = read(fd, buf + len, buflen - 1 - len);
		if (n < 0) {
			int err = -errno;
			if (errno == EINTR)
				continue;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len >= buflen - 1 || len >= JFS_MAX_FILE) {
			char extra;
			n = read(fd, &extra, 1);
			if (n != 0) {
				close(fd);
				return -EFBIG;
			}
			break;
		}
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

int jfs_read(const struct jfs *fs, const char *rel, char *buf, size_t buflen)
{
	int n = jfs_read_raw(fs, rel, buf, buflen);

	if (n < 0)
		return n;
	/* Strings end at the first NUL (device-tree properties are NUL-terminated). */
	n = (int)strlen(buf);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n;
}

int jfs_parse_ll(const char *s, long long *out)
{
	char *end;
	long long v;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int jfs_read_ll(const struct jfs *fs, const char *rel, long long *out)
{
	char buf[64];
	int n = jfs_read(fs, rel, buf, sizeof(buf));

	if (n == -EFBIG)
		return -EINVAL; /* a number never needs 64 bytes */
	if (n < 0)
		return n;
	return jfs_parse_ll(buf, out);
}

static int cmp_str(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;
	return strverscmp(*x, *y);
}

void jfs_free_list(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int jfs_list(const struct jfs *fs, const char *rel, char ***names, size_t *n)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	DIR *d;
	int fd;

	*names = NULL;
	*n = 0;
	fd = open_rel(fs, rel, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd;
	d = fdopendir(fd);
	if (!d) {
		int err = -errno;
		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (cnt >= JFS_MAX_LIST)
			break;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof(*v));
			if (!nv)
				goto nomem;
			v = nv;
			cap = ncap;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto nomem;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_str);
	*names = v;
	*n = cnt;
	return 0;
nomem:
	closedir(d);
	jfs_free_list(v, cnt);
	return -ENOMEM;
}
