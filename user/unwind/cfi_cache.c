// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * On-disk cache of compiled unwind tables: see cfi_table.h and
 * docs/unwinding.md.
 *
 * One file per object identity, "<arch>-b<build-id>.uwt" (else
 * "<arch>-h<hash of the CFI section>.uwt"): a header, then the rows as the
 * BPF maps take them. Files are outside input even in our own directory (a
 * crash mid-write, another version, another user): every field is checked
 * on load and anything that does not hold is recompiled and replaced.
 * Writes go to a temporary file renamed over the entry, so a reader sees a
 * whole old file or a whole new one; nothing is opened through a symlink.
 */
#include "unwind/cfi_table.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/log.h"

/* Bump when the header or the compiler's output changes: older entries
 * are then recompiled, not misread. */
/* 2: EP_UW_REG_AT_SP rows (arm64 frames larger than 1 KiB) */
#define UW_CACHE_VERSION 2
#define UW_CACHE_MAGIC	 "EPUWTAB\n"
/* A table past this is not an unwind table of a real object (libLLVM's
 * 110 MB compile to 1M rows). */
#define UW_CACHE_MAX_ROWS (64u << 20)
#define UW_KEY_MAX	  160
/* Entries of library versions no longer in use pile up: past this size the
 * least recently used go. 256 MiB holds ~50 tables the size of libLLVM's. */
#define UW_CACHE_MAX_BYTES (256ull << 20)
/* A hit refreshes the entry's mtime (the LRU clock) at most this often. */
#define UW_CACHE_TOUCH_S 3600

struct uw_cache {
	int dirfd; /* -1: no usable directory, tables are compiled each time */
	char *dir;
	uint64_t max_bytes;
};

struct uw_cache_hdr {
	char magic[8];
	uint32_t version;
	uint32_t row_size;
	uint32_t arch;
	uint32_t source;
	uint32_t n;
	uint32_t fdes;
	uint32_t rows_unsupported;
	uint32_t fdes_bad;
	uint64_t checksum; /* of the rows */
	char key[UW_KEY_MAX];
};

static uint64_t rows_checksum(const struct ep_uw_row *rows, uint32_t n)
{
	const unsigned char *p = (const unsigned char *)rows;
	size_t len = (size_t)n * sizeof(*rows), i = 0;
	uint64_t h = 0xcbf29ce484222325ull ^ len;

	/* FNV-style, 8 bytes per step: detects corruption, not attacks
	 * (an attacker who can write the directory can write valid rows). */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static int mkdir_owned(const char *path, mode_t mode)
{
	if (!mkdir(path, mode) || errno == EEXIST)
		return 0;
	return -errno;
}

/* The cache directory: a real directory (not a symlink) that we own and
 * nobody else can write, so no other user can plant tables for us. */
static int open_dir(const char *path)
{
	struct stat st;
	int fd;

	if ((fd = mkdir_owned(path, 0755)))
		return fd;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int uw_cache_open(struct uw_cache **out, const char *dir)
{
	struct uw_cache *c = calloc(1, sizeof(*c));
	char path[4096];
	const char *env;
	int fd;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->dirfd = -1;
	c->max_bytes = UW_CACHE_MAX_BYTES;
	if (dir) {
		snprintf(path, sizeof(path), "%s", dir);
	} else if (geteuid() == 0) {
		snprintf(path, sizeof(path), "/var/cache/ebpf-prof");
	} else if ((env = getenv("XDG_CACHE_HOME")) && env[0] == '/') {
		snprintf(path, sizeof(path), "%s/ebpf-prof", env);
	} else if ((env = getenv("HOME")) && env[0] == '/') {
		snprintf(path, sizeof(path), "%s/.cache", env);
		mkdir_owned(path, 0700);
		snprintf(path, sizeof(path), "%s/.cache/ebpf-prof", env);
	} else {
		path[0] = '\0';
	}
	if (path[0]) {
		fd = open_dir(path);
		if (fd >= 0) {
			c->dirfd = fd;
			if (!(c->dir = strdup(path))) {
				uw_cache_free(c);
				return -ENOMEM;
			}
		} else {
			log_warn(
				"unwind table cache %s not used (%s): tables are compiled each run",
				path,
				fd == -EPERM ? "owned by another user or writable by others"
					     : strerror(-fd));
		}
	}
	*out = c;
	return 0;
}

int uw_cache_dirfd(const struct uw_cache *c)
{
	return c ? c->dirfd : -1;
}

void uw_cache_free(struct uw_cache *c)
{
	if (!c)
		return;
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	free(c);
}

static bool build_id(Elf *elf, const uint8_t **id, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= 64) {
				*id = (const uint8_t *)d->d_buf + desc_off;
				*len = nh.n_descsz;
				return true;
			}
		}
	}
	return false;
}

/* The object's identity as a file name; 0 or -ENOEXEC. */
static int cache_key(Elf *elf, enum uw_arch arch, char *key, size_t size)
{
	const char *a = arch == UW_ARCH_X86_64 ? "x86_64" : "arm64";
	const uint8_t *id;
	size_t len, shstrndx, n;
	Elf_Scn *scn = NULL, *cfi = NULL;

	if (build_id(elf, &id, &len)) {
		n = (size_t)snprintf(key, size, "%s-b", a);
		for (size_t i = 0; i < len && n + 3 < size; i++)
			n += (size_t)snprintf(key + n, size - n, "%02x", id[i]);
		snprintf(key + n, size - n, ".uwt");
		return 0;
	}
	/* No build-id: the CFI itself, with the address it is linked at
	 * (pc-relative entries mean the same bytes elsewhere are other pcs). */
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame")) {
			cfi = scn;
			break;
		}
		if (!strcmp(name, ".debug_frame"))
			cfi = scn;
	}
	uint64_t h = 0xcbf29ce484222325ull, size_b = 0, addr = 0;
	if (cfi) {
		GElf_Shdr sh;
		Elf_Data *d = elf_rawdata(cfi, NULL);
		if (gelf_getshdr(cfi, &sh))
			addr = sh.sh_addr;
		if (d && d->d_buf) {
			const unsigned char *p = d->d_buf;
			size_b = d->d_size;
			for (size_t i = 0; i < d->d_size; i++)
				h = (h ^ p[i]) * 0x100000001b3ull;
		}
	}
	snprintf(key, size, "%s-h%016llx-%llx-%llx.uwt", a, (unsigned long long)h,
		 (unsigned long long)size_b, (unsigned long long)addr);
	return 0;
}

static bool rows_valid(const struct ep_uw_row *rows, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if (rows[i].cfa > EP_UW_CFA_FP_DEREF || rows[i].fp > EP_UW_REG_AT_FP)
			return false;
		if (i && rows[i].pc <= rows[i - 1].pc)
			return false;
	}
	return !n || rows[n - 1].cfa == EP_UW_CFA_NONE;
}

static int read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		got += (size_t)r;
	}
	return 0;
}

/* 0 and out filled from a valid entry, else a negative errno (a miss). */
static int cache_load(const struct uw_cache *c, const char *key, enum uw_arch arch,
		      struct uw_table *out)
{
	struct uw_cache_hdr h;
	struct stat st;
	struct ep_uw_row *rows = NULL;
	int fd, err = -EINVAL;

	fd = openat(c->dirfd, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(h))
		goto out;
	if (read_full(fd, &h, sizeof(h)))
		goto out;
	if (memcmp(h.magic, UW_CACHE_MAGIC, 8) || h.version != UW_CACHE_VERSION ||
	    h.row_size != sizeof(struct ep_uw_row) || h.arch != (uint32_t)arch ||
	    h.source > UW_SRC_DEBUG_FRAME || (h.source == UW_SRC_NONE) != (h.n == 0) ||
	    h.n > UW_CACHE_MAX_ROWS || memchr(h.key, '\0', sizeof(h.key)) == NULL ||
	    strcmp(h.key, key) ||
	    (uint64_t)st.st_size != sizeof(h) + (uint64_t)h.n * sizeof(struct ep_uw_row))
		goto out;
	if (h.n) {
		if (!(rows = malloc((size_t)h.n * sizeof(*rows)))) {
			err = -ENOMEM;
			goto out;
		}
		if (read_full(fd, rows, (size_t)h.n * sizeof(*rows)))
			goto out;
	}
	if (rows_checksum(rows, h.n) != h.checksum || !rows_valid(rows, h.n))
		goto out;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now); /* file times are wall-clock */
	if (st.st_mtime + UW_CACHE_TOUCH_S < now.tv_sec)
		futimens(fd, NULL); /* in use: last to be pruned */
	*out = (struct uw_table){ .rows = rows,
				  .n = h.n,
				  .arch = arch,
				  .source = (enum uw_source)h.source,
				  .stats = { .fdes = h.fdes,
					     .rows_unsupported = h.rows_unsupported,
					     .fdes_bad = h.fdes_bad } };
	rows = NULL;
	err = 0;
out:
	free(rows);
	close(fd);
	return err;
}

static int write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		done += (size_t)w;
	}
	return 0;
}

static int cache_store(const struct uw_cache *c, const char *key, const struct uw_table *t)
{
	struct uw_cache_hdr h = { .version = UW_CACHE_VERSION,
				  .row_size = sizeof(struct ep_uw_row),
				  .arch = t->arch,
				  .source = t->source,
				  .n = t->n,
				  .fdes = t->stats.fdes,
				  .rows_unsupported = t->stats.rows_unsupported,
				  .fdes_bad = t->stats.fdes_bad,
				  .checksum = rows_checksum(t->rows, t->n) };
	char tmp[UW_KEY_MAX + 48];
	struct timespec ts;
	int fd = -1, err;

	memcpy(h.magic, UW_CACHE_MAGIC, 8);
	snprintf(h.key, sizeof(h.key), "%s", key);
	for (int tries = 0; fd < 0 && tries < 8; tries++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		snprintf(tmp, sizeof(tmp), ".tmp-%d-%lx-%s", (int)getpid(),
			 (unsigned long)ts.tv_nsec ^ (unsigned long)tries, key);
		fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno != EEXIST)
			return -errno;
	}
	if (fd < 0)
		return -EEXIST;
	/* umask may have narrowed it: other users' runs read the entries. */
	if ((err = fchmod(fd, 0644) ? -errno : 0) || (err = write_full(fd, &h, sizeof(h))) ||
	    (err = write_full(fd, t->rows, (size_t)t->n * sizeof(*t->rows)))) {
		close(fd);
		unlinkat(c->dirfd, tmp, 0);
		return err;
	}
	if (close(fd)) {
		err = -errno;
		unlinkat(c->dirfd, tmp, 0);
		return err;
	}
	/* rename replaces a symlink at key itself, never what it points to. */
	if (renameat(c->dirfd, tmp, c->dirfd, key)) {
		err = -errno;
		unlinkat(c->dirfd, tmp, 0);
		return err;
	}
	return 0;
}

struct entry {
	char name[UW_KEY_MAX];
	off_t size;
	time_t mtime;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Keeps the directory under max_bytes: removes the least recently used
 * entries (never keep, just stored) down to 3/4 of it, and temporary files
 * an interrupted store left (older than an hour). */
static void cache_prune(const struct uw_cache *c, const char *keep)
{
	int fd = openat(c->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct entry *ents = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct timespec now;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((de = readdir(d))) {
		struct stat st;
		size_t len = strlen(de->d_name);
		if (len >= UW_KEY_MAX || fstatat(c->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (!strncmp(de->d_name, ".tmp-", 5)) {
			if (st.st_mtime + 3600 < now.tv_sec)
				unlinkat(c->dirfd, de->d_name, 0);
			continue;
		}
		if (len < 5 || strcmp(de->d_name + len - 4, ".uwt"))
			continue;
		total += (uint64_t)st.st_size;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct entry *e = realloc(ents, ncap * sizeof(*e));
			if (!e)
				goto out;
			ents = e;
			cap = ncap;
		}
		memcpy(ents[n].name, de->d_name, len + 1);
		ents[n].size = st.st_size;
		ents[n].mtime = st.st_mtime;
		n++;
	}
	if (total <= c->max_bytes)
		goto out;
	qsort(ents, n, sizeof(*ents), cmp_entry);
	for (size_t i = 0; i < n && total > c->max_bytes / 4 * 3; i++) {
		if (!strcmp(ents[i].name, keep) || unlinkat(c->dirfd, ents[i].name, 0))
			continue;
		total -= (uint64_t)ents[i].size;
	}
out:
	free(ents);
	closedir(d);
}

void uw_cache_set_max_bytes(struct uw_cache *c, uint64_t max_bytes)
{
	if (c)
		c->max_bytes = max_bytes;
}

int uw_cache_get(struct uw_cache *c, int fd, struct uw_table *out, bool *from_cache)
{
	char key[UW_KEY_MAX];
	enum uw_arch arch;
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	*from_cache = false;
	elf_version(EV_CURRENT);
	/* pread, not mmap: a library rewritten in place while we read it must
	 * give an error, not SIGBUS in the collector. */
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -ENOEXEC;
	if ((err = uw_table_arch_of(elf, &arch)) || (err = cache_key(elf, arch, key, sizeof(key))))
		goto out;
	if (c && c->dirfd >= 0 && !cache_load(c, key, arch, out)) {
		*from_cache = true;
		goto out;
	}
	if ((err = uw_table_build(elf, out)))
		goto out;
	if (c && c->dirfd >= 0) {
		int serr = cache_store(c, key, out);
		if (serr)
			log_debug("unwind table cache: cannot store %s/%s: %s", c->dir, key,
				  strerror(-serr));
		else
			cache_prune(c, key);
	}
out:
	elf_end(elf);
	return err;
}
