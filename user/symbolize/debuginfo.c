// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "symbolize/debuginfo.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

void debuginfo_ctx_init(struct debuginfo_ctx *c, const char *path, const struct target_ref *who,
			const char *module)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	c->who = who;
	c->module = module;
	c->alt_fd = -1;
}

void debuginfo_ctx_clear(struct debuginfo_ctx *c)
{
	if (c->alt)
		dwarf_end(c->alt);
	if (c->alt_fd >= 0)
		close(c->alt_fd);
	free(c->found);
	c->alt = NULL;
	c->alt_fd = -1;
	c->found = NULL;
}

static int open_as(const struct debuginfo_ctx *c, const char *path, unsigned flags)
{
	struct target_ref self;

	if (!c->who)
		target_ref_self(&self);
	return target_open_path(c->who ? c->who : &self, path, flags, TARGET_ELF_MAX_BYTES, NULL);
}

/* Whether the ELF file at fd carries the GNU build-id id. Read, not
 * mapped: a file its owner truncates meanwhile is a short read, not a
 * SIGBUS. */
static bool has_build_id(int fd, const void *id, size_t id_len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *got = NULL;
	ssize_t n = -1;
	bool same;

	if (elf)
		n = dwelf_elf_gnu_build_id(elf, &got);
	/* got points into elf's data: compared before elf_end. */
	same = n > 0 && (size_t)n == id_len && got && !memcmp(got, id, id_len);
	if (elf)
		elf_end(elf);
	return same;
}

/* The CRC-32 .gnu_debuglink names (zlib's, the same polynomial), over the
 * whole file. */
static bool has_crc(int fd, GElf_Word want)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t r;

	while ((r = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)r);
		off += r;
	}
	return r == 0 && (GElf_Word)crc == want;
}

/* Opens path (resolved per flags) if it is the debug file wanted: with
 * id's build-id, or without one the CRC (0: anything). -1 otherwise. */
static int open_candidate(const struct debuginfo_ctx *c, const char *path, unsigned flags,
			  const void *id, size_t id_len, GElf_Word crc)
{
	int fd = open_as(c, path, flags);

	if (fd < 0)
		return -1;
	if (id_len ? has_build_id(fd, id, id_len) : !crc || has_crc(fd, crc))
		return fd;
	close(fd);
	return -1;
}

/* Each absolute directory of the debuginfo path (':'-separated as
 * libdwfl's, a leading '+' or '-' ignored; relative entries are for
 * debuglinks) into dirs[], pointing into buf. */
static size_t debug_dirs(const struct debuginfo_ctx *c, char *buf, size_t len, char **dirs,
			 size_t max)
{
	size_t n = 0;

	snprintf(buf, len, "%s", c->path ? c->path : "/usr/lib/debug");
	for (char *save = NULL, *d = strtok_r(buf, ":", &save); d && n < max;
	     d = strtok_r(NULL, ":", &save)) {
		if (*d == '+' || *d == '-')
			d++;
		if (*d == '/')
			dirs[n++] = d;
	}
	return n;
}

/* By build-id under each debug directory. */
static int by_build_id(struct debuginfo_ctx *c, const unsigned char *id, size_t id_len, char *cand,
		       size_t clen)
{
	char buf[PATH_MAX], *dirs[16];
	size_t nd = debug_dirs(c, buf, sizeof(buf), dirs, 16);

	for (size_t k = 0; k < nd && id_len >= 2; k++) {
		int n = snprintf(cand, clen, "%s/.build-id/%02x/", dirs[k], id[0]), fd;

		for (size_t i = 1; i < id_len && n > 0 && (size_t)n + 3 < clen; i++)
			n += snprintf(cand + n, clen - (size_t)n, "%02x", id[i]);
		if (n <= 0 || (size_t)n + 7 >= clen)
			continue;
		strcat(cand, ".debug");
		fd = open_candidate(c, cand, TARGET_OUR_ROOT, id, id_len, 0);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

static void found(struct debuginfo_ctx *c, const char *path, unsigned flags)
{
	free(c->found);
	c->found = strdup(path);
	c->found_flags = flags;
}

int debuginfo_find(struct debuginfo_ctx *c, Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	const unsigned char *id = NULL;
	char buf[PATH_MAX], *dirs[16], cand[PATH_MAX], fdir[PATH_MAX];
	/* The module's directory as the program sees it (in its root), else
	 * the name libdwfl has (ours). */
	const char *mpath = c->module ? c->module : file_name;
	unsigned mflags = c->module ? 0 : TARGET_OUR_ROOT;
	GElf_Addr id_vaddr;
	size_t nd;
	int id_len, fd;

	id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	if (id_len < 0)
		id_len = 0;
	fd = id_len ? by_build_id(c, id, (size_t)id_len, cand, sizeof(cand)) : -1;
	if (fd >= 0) {
		found(c, cand, TARGET_OUR_ROOT);
		goto done;
	}
	fdir[0] = '\0';
	if (mpath && mpath[0] == '/') {
		const char *slash = strrchr(mpath, '/');

		if ((size_t)(slash - mpath) < sizeof(fdir)) {
			memcpy(fdir, mpath, (size_t)(slash - mpath));
			fdir[slash - mpath] = '\0';
		}
	}
	/* A debuglink is a file name: with a '/' it is not one (libdwfl
	 * also asks here for a dwz alternate file by its path, which
	 * debuginfo_set_alt finds instead). */
	if (fdir[0] && debuglink_file && *debuglink_file && !strchr(debuglink_file, '/') &&
	    strcmp(debuglink_file, ".") && strcmp(debuglink_file, "..")) {
		/* Beside the module, in its .debug subdirectory, then under
		 * each debug directory by the module's directory. */
		for (int i = 0; i < 2; i++) {
			if (snprintf(cand, sizeof(cand), "%s/%s%s", fdir, i ? ".debug/" : "",
				     debuglink_file) >= (int)sizeof(cand))
				continue;
			fd = open_candidate(c, cand, mflags, id, (size_t)id_len, debuglink_crc);
			if (fd >= 0) {
				found(c, cand, mflags);
				goto done;
			}
		}
		nd = debug_dirs(c, buf, sizeof(buf), dirs, 16);
		for (size_t k = 0; k < nd; k++) {
			if (snprintf(cand, sizeof(cand), "%s%s/%s", dirs[k], fdir,
				     debuglink_file) >= (int)sizeof(cand))
				continue;
			fd = open_candidate(c, cand, TARGET_OUR_ROOT, id, (size_t)id_len,
					    debuglink_crc);
			if (fd >= 0) {
				found(c, cand, TARGET_OUR_ROOT);
				goto done;
			}
		}
	}
	/* A configured server, by build-id alone: no file name, no
	 * debuglink, so libdwfl looks at no path of the program's. */
	if (urls && *urls && id_len > 0)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, NULL, NULL, 0,
						    debuginfo_file_name);
	return -1;
done:
	*debuginfo_file_name = strdup(cand);
	return fd;
}

int debuginfo_set_alt(struct debuginfo_ctx *c, Dwarf *dw)
{
	const char *name = NULL;
	const void *id = NULL;
	ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &name, &id) : 0;
	char cand[PATH_MAX];
	unsigned flags;
	int fd = -1;

	if (n == 0)
		return 0;
	if (n < 0 || !name || !*name || n > 64)
		return -EINVAL;
	if (c->alt)
		return 0;
	fd = by_build_id(c, id, (size_t)n, cand, sizeof(cand));
	/* Beside the file that names it: the debug file found, else the
	 * module itself. */
	flags = c->found ? c->found_flags : c->module ? 0 : TARGET_OUR_ROOT;
	if (fd < 0 && name[0] == '/') {
		fd = open_candidate(c, name, flags, id, (size_t)n, 0);
	} else if (fd < 0 && (c->found || c->module)) {
		const char *base = c->found ? c->found : c->module, *slash = strrchr(base, '/');

		if (slash && snprintf(cand, sizeof(cand), "%.*s/%s", (int)(slash - base), base,
				      name) < (int)sizeof(cand))
			fd = open_candidate(c, cand, flags, id, (size_t)n, 0);
	}
	if (fd < 0)
		return -ENOENT;
	c->alt = dwarf_begin(fd, DWARF_C_READ);
	if (!c->alt) {
		close(fd);
		return -EINVAL;
	}
	c->alt_fd = fd;
	dwarf_setalt(dw, c->alt);
	return 0;
}
