// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Build-ids and function sources for the pprof export (pprof_elf.h). */
#include "export/pprof_elf.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "util/log.h"
#include "proc/target_open.h"
#include "symbolize/debuginfo.h"
#include "util/clock.h"

/* Module files whose DWARF is read in one pprof_elf_sources call: past
 * this much time the rest keep no source (a debug file can be large; a
 * FUSE file can stall each open up to its deadline). */
#define SOURCES_BUDGET_NS (5ull * 1000000000ull)

static void to_hex(const uint8_t *b, size_t n, char *hex, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n && 2 * i + 2 < len; i++) {
		hex[2 * i] = digits[b[i] >> 4];
		hex[2 * i + 1] = digits[b[i] & 15];
	}
	hex[2 * i] = '\0';
}

static size_t align4(size_t v)
{
	return (v + 3) & ~(size_t)3;
}

int pprof_notes_build_id(const void *notes, size_t size, char *hex, size_t len)
{
	const uint8_t *p = notes;
	size_t off = 0;

	if (len)
		hex[0] = '\0';
	/* Elf32_Nhdr and Elf64_Nhdr are the same three 32-bit words. */
	while (size - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		if (nh.n_namesz > size - name_off)
			break;
		desc_off = name_off + align4(nh.n_namesz);
		if (desc_off > size || nh.n_descsz > size - desc_off)
			break;
		next = desc_off + align4(nh.n_descsz);
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name_off, "GNU", 4) && nh.n_descsz &&
		    nh.n_descsz <= PPROF_BUILD_ID_MAX) {
			to_hex(p + desc_off, nh.n_descsz, hex, len);
			return 0;
		}
		if (next <= off || next > size)
			break;
		off = next;
	}
	return -ENOENT;
}

int pprof_elf_build_id_fd(int fd, char *hex, size_t len)
{
	Elf_Scn *scn = NULL;
	int err = -ENOENT;
	Elf *e;

	if (len)
		hex[0] = '\0';
	elf_version(EV_CURRENT);
	/* Read, not mapped: a file its owner truncates meanwhile is a short
	 * read, not a SIGBUS. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	while (e && err && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && d->d_buf)
			err = pprof_notes_build_id(d->d_buf, d->d_size, hex, len);
	}
	if (e)
		elf_end(e);
	return err;
}

int pprof_elf_build_id(const char *path, char *hex, size_t len)
{
	struct target_ref self;
	int fd, err;

	if (len)
		hex[0] = '\0';
	target_ref_self(&self);
	fd = target_open_path(&self, path, 0, TARGET_ELF_MAX_BYTES, NULL);
	if (fd < 0)
		return fd;
	err = pprof_elf_build_id_fd(fd, hex, len);
	close(fd);
	return err;
}

int pprof_kernel_build_id(char *hex, size_t len)
{
	uint8_t buf[4096];
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (len)
		hex[0] = '\0';
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return -EIO;
	return pprof_notes_build_id(buf, (size_t)n, hex, len);
}

/* ---- sources ---- */

struct names {
	const struct profile *p;
	uint32_t *frames; /* frames of one module */
	size_t n;
	struct hashmap idx;
};

static bool name_eq(uint32_t i, const void *key, const void *ctx)
{
	const struct names *nm = ctx;

	return !strcmp(nm->p->frames[nm->frames[i]].name, key);
}

static uint64_t name_hash(const char *s)
{
	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(s, strlen(s), HASHMAP_SEED));
}

/* Debug files of a module are looked for as the process that mapped it
 * (debuginfo.h): the module's userdata is its debuginfo_ctx. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct debuginfo_ctx *c = *userdata;

	if (!c)
		return -1;
	return debuginfo_find(c, mod, userdata, modname, base, file_name, debuglink_file,
			      debuglink_crc, debuginfo_file_name);
}

static const Dwfl_Callbacks offline_cb = {
	.find_elf = dwfl_build_id_find_elf,
	/* Not dwfl_standard_find_debuginfo: for a file without local
	 * debuginfo it loads libdebuginfod (~5 ms, ~7 MB) even with no
	 * server configured, and it opens files beside the module as root. */
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* The compile units of a module by address range, read once: clang (14)
 * writes no .debug_aranges unless asked (-gdwarf-aranges), and libdw's
 * address lookups (dwfl_module_addrdie, dwfl_module_getsrc) use only that
 * table, so every function of a clang-built file had no source. */
struct cu_ranges {
	struct cu_range {
		Dwarf_Addr lo, hi;
		Dwarf_Die cu;
	} * r;
	size_t n, cap;
	bool read;
};

/* Bound on ranges kept per module (a CU has a few; a huge file's many
 * CUs): past it the rest are not looked at. */
#define CU_RANGES_MAX (1u << 20)

static void cu_ranges_read(Dwfl_Module *mod, struct cu_ranges *cr)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	cr->read = true;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (cr->n == cr->cap) {
				size_t cap = cr->cap ? 2 * cr->cap : 64;
				void *nr = cap <= CU_RANGES_MAX
						   ? realloc(cr->r, cap * sizeof(*cr->r))
						   : NULL;

				if (!nr)
					return;
				cr->r = nr;
				cr->cap = cap;
			}
			cr->r[cr->n++] = (struct cu_range){ lo + bias, hi + bias, *cu };
		}
	}
}

static Dwarf_Die *cu_of(Dwfl_Module *mod, struct cu_ranges *cr, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);

	if (cu)
		return cu;
	if (!cr->read)
		cu_ranges_read(mod, cr);
	if (!dwfl_module_getdwarf(mod, bias))
		return NULL;
	for (size_t i = 0; i < cr->n; i++)
		if (addr >= cr->r[i].lo && addr < cr->r[i].hi)
			return &cr->r[i].cu;
	return NULL;
}

/* Where the function at addr is declared: its subprogram DIE's
 * DW_AT_decl_file/decl_line (the line of the definition, which the line
 * table's entry for its first instruction is not: that is the first
 * statement once the prologue is scheduled away); else the line table's
 * line for addr. */
static const char *decl_of(Dwfl_Module *mod, struct cu_ranges *cr, Dwarf_Addr addr, int *line)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = cu_of(mod, cr, addr, &bias);
	Dwarf_Die *scopes = NULL;
	const char *file = NULL;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	Dwarf_Line *dl;

	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_subprogram)
			continue;
		file = dwarf_decl_file(&scopes[i]);
		if (file && dwarf_decl_line(&scopes[i], line))
			*line = 0;
		break;
	}
	free(scopes);
	if (!file && cu && (dl = dwarf_getsrc_die(cu, addr - bias))) {
		file = dwarf_linesrc(dl, NULL, NULL);
		if (file && dwarf_lineno(dl, line))
			*line = 0;
	}
	return file;
}

/* One module, open at fd (consumed), with t the process it is read for:
 * its function symbols, matched by name to the frames. True when the
 * module has DWARF (its answers, found or not, then hold for its
 * build-id). */
static bool module_sources(const char *path, int fd, const struct target_ref *t, struct names *nm,
			   struct pprof_src *src)
{
	Dwfl *d = dwfl_begin(&offline_cb);
	struct debuginfo_ctx dc;
	Dwfl_Module *mod;
	bool looked = false, dwarf = false, dw_checked = false, dw_ok = false;
	Dwarf_Addr bias;
	void **ud = NULL;
	struct cu_ranges cr = { 0 };
	int nsym;

	if (!d) {
		close(fd);
		return false;
	}
	debuginfo_ctx_init(&dc, NULL, t, path);
	mod = dwfl_report_offline(d, "", path, fd);
	if (!mod)
		close(fd); /* libdwfl consumes it only on success */
	dwfl_report_end(d, NULL, NULL);
	if (mod) {
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (ud)
			*ud = &dc;
	}
	nsym = mod ? dwfl_module_getsymtab(mod) : -1;
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		const char *file;
		Dwfl_Line *ln;
		int64_t k;
		int line = 0;

		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
			continue;
		k = ep_hashmap_find(&nm->idx, name_hash(name), name, name_eq, nm);
		if (k < 0 || src[nm->frames[k]].file)
			continue;
		looked = true;
		/* A dwz alternate file is set by us or the DIEs not read:
		 * libdw would open the path the debug file names itself. */
		if (!dw_checked) {
			Dwarf *dw = dwfl_module_getdwarf(mod, &bias);

			dw_checked = true;
			dw_ok = dw && debuginfo_set_alt(&dc, dw) == 0;
			if (dw && !dw_ok)
				log_debug("pprof: %s: its DWARF names an alternate file not found: "
					  "no source lines",
					  path);
		}
		if (!dw_ok)
			break;
		file = decl_of(mod, &cr, addr, &line);
		if (!file) {
			ln = dwfl_module_getsrc(mod, addr);
			file = ln ? dwfl_lineinfo(ln, NULL, &line, NULL, NULL, NULL) : NULL;
		}
		if (file) {
			src[nm->frames[k]].file = strdup(file);
			src[nm->frames[k]].line = line;
		}
	}
	/* Read already by the lookups when there were any: no second inflate. */
	dwarf = looked && dw_ok;
	free(cr.r);
	dwfl_end(d);
	debuginfo_ctx_clear(&dc);
	return dwarf;
}

static bool symbol_frame(const struct prof_frame *f)
{
	return !f->kernel && f->module && f->module[0] == '/' && f->name && f->name[0] &&
	       f->name[0] != '[';
}

/* ---- cache ---- */

struct cached_fn {
	char *name;
	char *file; /* NULL: looked up, not found */
	int64_t line;
};

struct cached_mod {
	char *path;
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	int bid_err; /* 1: not read yet */
	char bid[2 * PPROF_BUILD_ID_MAX + 1];
	struct cached_fn *fns;
	size_t nfns, cap;
	struct hashmap idx;
	bool disk_read; /* its pprof-src2-<build-id> file was read */
	bool stalled;	/* an open of it passed its deadline: not tried again */
};

struct pprof_elf_cache {
	struct cached_mod *m;
	size_t n, cap;
	int dirfd; /* pprof_elf_cache_set_dir; -1: nothing on disk */
	pprof_elf_locate_fn locate;
	void *locate_ctx;
};

/* A cache file is a few hundred bytes per function looked up. */
#define SRC_CACHE_MAX (16u << 20)

int pprof_elf_cache_new(struct pprof_elf_cache **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	(*out)->dirfd = -1;
	return 0;
}

void pprof_elf_cache_set_dir(struct pprof_elf_cache *c, int dirfd)
{
	if (!c)
		return;
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = dirfd >= 0 ? fcntl(dirfd, F_DUPFD_CLOEXEC, 0) : -1;
}

static void mod_clear(struct cached_mod *m)
{
	for (size_t i = 0; i < m->nfns; i++) {
		free(m->fns[i].name);
		free(m->fns[i].file);
	}
	free(m->fns);
	m->fns = NULL;
	m->nfns = m->cap = 0;
	ep_hashmap_free(&m->idx);
	ep_hashmap_init(&m->idx);
	m->bid_err = 1;
	m->bid[0] = '\0';
	m->disk_read = false;
}

void pprof_elf_cache_free(struct pprof_elf_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		mod_clear(&c->m[i]);
		ep_hashmap_free(&c->m[i].idx);
		free(c->m[i].path);
	}
	free(c->m);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c);
}

void pprof_elf_cache_set_locate(struct pprof_elf_cache *c, pprof_elf_locate_fn fn, void *ctx)
{
	if (!c)
		return;
	c->locate = fn;
	c->locate_ctx = ctx;
}

void pprof_elf_cache_share_locate(struct pprof_elf_cache *dst, const struct pprof_elf_cache *src)
{
	if (dst && src)
		pprof_elf_cache_set_locate(dst, src->locate, src->locate_ctx);
}

/* Opens the module file path as the process that mapped it (c's locate),
 * or as ourselves without one; *t says on whose behalf (for the debug
 * files beside it). -ENOENT: no traced process mapped it. */
static int open_module(const struct pprof_elf_cache *c, const char *path, struct target_ref *t,
		       struct stat *st)
{
	struct target_map m = { .path = path };
	int err;

	if (c && c->locate) {
		err = c->locate(c->locate_ctx, path, t, &m);
		if (err)
			return err;
	} else {
		target_ref_self(t);
	}
	return target_open_map(t, &m, 0, TARGET_ELF_MAX_BYTES, st);
}

/* The entry of path, emptied if the file changed; NULL on ENOMEM. *fd:
 * the file opened (-errno when it cannot be), for the caller to read or
 * close; fd NULL: not needed. */
static struct cached_mod *cache_mod(struct pprof_elf_cache *c, const char *path, int *fd,
				    struct target_ref *t)
{
	struct stat st;
	struct cached_mod *m = NULL;
	struct target_ref tr;
	bool have;
	int f;

	for (size_t i = 0; i < c->n && !m; i++)
		if (!strcmp(c->m[i].path, path))
			m = &c->m[i];
	f = m && m->stalled ? -ETIMEDOUT : open_module(c, path, t ? t : &tr, &st);
	have = f >= 0;
	if (fd)
		*fd = f;
	else if (f >= 0)
		close(f);
	if (!m) {
		if (c->n == c->cap) {
			size_t cap = c->cap ? 2 * c->cap : 16;
			void *nm = realloc(c->m, cap * sizeof(*c->m));

			if (!nm)
				goto nomem;
			c->m = nm;
			c->cap = cap;
		}
		m = &c->m[c->n];
		memset(m, 0, sizeof(*m));
		m->path = strdup(path);
		if (!m->path)
			goto nomem;
		ep_hashmap_init(&m->idx);
		m->bid_err = 1;
		c->n++;
	} else if (m->stalled) {
		return m;
	} else if (!have || m->dev != st.st_dev || m->ino != st.st_ino ||
		   m->mtime.tv_sec != st.st_mtim.tv_sec || m->mtime.tv_nsec != st.st_mtim.tv_nsec) {
		mod_clear(m);
	}
	if (f == -ETIMEDOUT) {
		m->stalled = true;
		log_warn("pprof: opening %s did not finish within %u ms: its build-id and sources "
			 "are left out",
			 path, TARGET_OPEN_TIMEOUT_MS);
	}
	if (have) {
		m->dev = st.st_dev;
		m->ino = st.st_ino;
		m->mtime = st.st_mtim;
	}
	return m;
nomem:
	if (fd && *fd >= 0) {
		close(*fd);
		*fd = -ENOMEM;
	}
	return NULL;
}

static bool fn_eq(uint32_t i, const void *key, const void *ctx)
{
	const struct cached_mod *m = ctx;

	return !strcmp(m->fns[i].name, key);
}

static const struct cached_fn *fn_find(const struct cached_mod *m, const char *name)
{
	int64_t i = ep_hashmap_find(&m->idx, name_hash(name), name, fn_eq, m);

	return i < 0 ? NULL : &m->fns[i];
}

static void fn_add(struct cached_mod *m, const char *name, const char *file, int64_t line)
{
	struct cached_fn f = { strdup(name), file ? strdup(file) : NULL, line };

	if (!f.name || (file && !f.file))
		goto fail;
	if (m->nfns == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		void *n = realloc(m->fns, cap * sizeof(*m->fns));

		if (!n)
			goto fail;
		m->fns = n;
		m->cap = cap;
	}
	if (ep_hashmap_insert(&m->idx, name_hash(name), (uint32_t)m->nfns))
		goto fail;
	m->fns[m->nfns++] = f;
	return;
fail: /* not cached: read again next time */
	free(f.name);
	free(f.file);
}

int pprof_elf_build_id_cached(struct pprof_elf_cache *c, const char *path, char *hex, size_t len)
{
	struct cached_mod *m;
	struct target_ref t;
	int fd = -1;

	if (!c)
		return pprof_elf_build_id(path, hex, len);
	m = cache_mod(c, path, &fd, NULL);
	if (!m) {
		if (len)
			hex[0] = '\0';
		return fd < 0 ? fd : -ENOMEM;
	}
	if (m->bid_err == 1) {
		if (fd < 0 && !m->stalled)
			fd = open_module(c, path, &t, NULL);
		m->bid_err = fd < 0 ? fd : pprof_elf_build_id_fd(fd, m->bid, sizeof(m->bid));
	}
	if (fd >= 0)
		close(fd);
	snprintf(hex, len, "%s", m->bid);
	return m->bid_err;
}

/* ---- the cache on disk ---- */

size_t pprof_src_cache_parse(const char *buf, size_t len,
			     void (*add)(void *ctx, const char *name, const char *file,
					 int64_t line),
			     void *ctx)
{
	char name[1024], file[4096];
	size_t bad = 0, i = 0;

	while (i < len) {
		const char *l = buf + i, *nl = memchr(l, '\n', len - i), *t1, *t2;
		size_t ll = nl ? (size_t)(nl - l) : len - i, nlen, flen;
		int64_t line = 0;
		bool ok;

		i += ll + 1;
		if (!nl) { /* a write cut short */
			bad++;
			break;
		}
		t1 = memchr(l, '\t', ll);
		t2 = t1 ? memchr(t1 + 1, '\t', ll - (size_t)(t1 + 1 - l)) : NULL;
		if (!t2 || t1 == l || t2 == t1 + 1 || t2 - t1 - 1 > 9 || memchr(l, '\0', ll)) {
			bad++;
			continue;
		}
		nlen = (size_t)(t1 - l);
		flen = ll - (size_t)(t2 + 1 - l);
		ok = nlen < sizeof(name) && flen < sizeof(file);
		for (const char *d = t1 + 1; ok && d < t2; d++) {
			ok = *d >= '0' && *d <= '9';
			line = line * 10 + (*d - '0');
		}
		if (!ok) {
			bad++;
			continue;
		}
		memcpy(name, l, nlen);
		name[nlen] = '\0';
		memcpy(file, t2 + 1, flen);
		file[flen] = '\0';
		add(ctx, name, flen ? file : NULL, line);
	}
	return bad;
}

/* Ours alone: a file someone else could have written is not believed. */
static bool trusted(int fd, struct stat *st)
{
	return !fstat(fd, st) && S_ISREG(st->st_mode) && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH)) && st->st_size <= (off_t)SRC_CACHE_MAX;
}

static void disk_add(void *ctx, const char *name, const char *file, int64_t line)
{
	struct cached_mod *m = ctx;

	if (!fn_find(m, name))
		fn_add(m, name, file, line);
}

/* "2": files written before compile units were found without
 * .debug_aranges (cu_ranges) hold "not found" for every function of a
 * clang-built module; a new name leaves them unread. */
static void disk_name(const struct cached_mod *m, char *buf, size_t len)
{
	snprintf(buf, len, "pprof-src2-%s", m->bid);
}

static void disk_load(struct pprof_elf_cache *c, struct cached_mod *m)
{
	char name[32 + 2 * PPROF_BUILD_ID_MAX];
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd;

	m->disk_read = true;
	if (c->dirfd < 0 || m->bid_err || !m->bid[0])
		return;
	disk_name(m, name, sizeof(name));
	fd = openat(c->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	buf = trusted(fd, &st) ? malloc((size_t)st.st_size + 1) : NULL;
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (buf)
		pprof_src_cache_parse(buf, got, disk_add, m);
	free(buf);
	close(fd);
}

static bool field_ok(const char *s, size_t max)
{
	return strlen(s) < max && !strpbrk(s, "\t\n");
}

/* Appends what module_sources just answered for nm's frames. */
static void disk_append(struct pprof_elf_cache *c, const struct cached_mod *m,
			const struct profile *p, const struct names *nm,
			const struct pprof_src *src)
{
	char name[32 + 2 * PPROF_BUILD_ID_MAX];
	size_t len = 0, cap = 0;
	char *buf = NULL;
	struct stat st;
	int fd;

	if (c->dirfd < 0 || m->bid_err || !m->bid[0])
		return;
	for (size_t k = 0; k < nm->n; k++) {
		const char *fn = p->frames[nm->frames[k]].name, *file = src[nm->frames[k]].file;
		size_t need = strlen(fn) + (file ? strlen(file) : 0) + 24;

		if (!field_ok(fn, 1024) || (file && !field_ok(file, 4096)))
			continue;
		if (len + need > cap) {
			char *nb = realloc(buf, cap = 2 * (len + need));

			if (!nb)
				goto out;
			buf = nb;
		}
		len += (size_t)snprintf(buf + len, cap - len, "%s\t%lld\t%s\n", fn,
					(long long)src[nm->frames[k]].line, file ? file : "");
	}
	if (!len)
		goto out;
	disk_name(m, name, sizeof(name));
	fd = openat(c->dirfd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		goto out;
	/* One write: O_APPEND keeps two runs' lines whole. */
	if (trusted(fd, &st) && (uint64_t)st.st_size + len <= SRC_CACHE_MAX &&
	    write(fd, buf, len) != (ssize_t)len)
		log_debug("pprof source cache %s: short write", name);
	close(fd);
out:
	free(buf);
}

void pprof_elf_sources(const struct profile *p, struct pprof_src *src, struct pprof_elf_cache *c)
{
	bool *done = calloc(p->nframes ? p->nframes : 1, sizeof(*done));
	struct names nm = { .p = p };

	uint64_t t0 = mono_ns();
	size_t skipped = 0;

	nm.frames = malloc((p->nframes ? p->nframes : 1) * sizeof(*nm.frames));
	if (!done || !nm.frames)
		goto out;
	for (size_t f = 0; f < p->nframes; f++) {
		const char *mod = p->frames[f].module;
		struct target_ref t;
		int fd = -1;

		if (done[f] || !symbol_frame(&p->frames[f]))
			continue;
		/* Past the budget: the rest keep what the cache knows. */
		if (mono_ns() - t0 > SOURCES_BUDGET_NS) {
			for (size_t g = f; g < p->nframes; g++) {
				const struct cached_fn *hit;
				struct cached_mod *km = NULL;

				if (done[g] || !symbol_frame(&p->frames[g]) ||
				    strcmp(p->frames[g].module, mod))
					continue;
				done[g] = true;
				for (size_t i = 0; c && i < c->n && !km; i++)
					if (!strcmp(c->m[i].path, mod))
						km = &c->m[i];
				hit = km ? fn_find(km, p->frames[g].name) : NULL;
				if (hit && hit->file) {
					src[g].file = strdup(hit->file);
					src[g].line = hit->line;
				}
			}
			skipped++;
			continue;
		}
		struct cached_mod *cm = c ? cache_mod(c, mod, &fd, &t) : NULL;
		bool dup = false;

		if (!c)
			fd = open_module(NULL, mod, &t, NULL);
		if (cm && cm->bid_err == 1 && fd >= 0)
			cm->bid_err = pprof_elf_build_id_fd(fd, cm->bid, sizeof(cm->bid));
		if (cm && !cm->disk_read)
			disk_load(c, cm);

		nm.n = 0;
		ep_hashmap_init(&nm.idx);
		for (size_t g = f; g < p->nframes; g++) {
			const struct cached_fn *hit;

			if (done[g] || !symbol_frame(&p->frames[g]) ||
			    strcmp(p->frames[g].module, mod))
				continue;
			done[g] = true;
			hit = cm ? fn_find(cm, p->frames[g].name) : NULL;
			if (hit) {
				src[g].file = hit->file ? strdup(hit->file) : NULL;
				src[g].line = hit->line;
				continue;
			}
			/* A name twice (profiles merged by pprof_elf_prefetch) is
			 * looked up once and answered from the cache below. */
			if (cm && ep_hashmap_find(&nm.idx, name_hash(p->frames[g].name),
						  p->frames[g].name, name_eq, &nm) >= 0) {
				dup = true;
				continue;
			}
			nm.frames[nm.n] = (uint32_t)g;
			if (ep_hashmap_insert(&nm.idx, name_hash(p->frames[g].name),
					      (uint32_t)nm.n))
				break;
			nm.n++;
		}
		/* Written to disk only with DWARF: a "not found" without it would
		 * outlive a debuginfo package installed later. */
		if (nm.n && fd >= 0 && module_sources(mod, fd, &t, &nm, src) && cm)
			disk_append(c, cm, p, &nm, src);
		else if (fd >= 0 && !nm.n)
			close(fd); /* else module_sources consumed it */
		for (size_t k = 0; cm && k < nm.n; k++)
			fn_add(cm, p->frames[nm.frames[k]].name, src[nm.frames[k]].file,
			       src[nm.frames[k]].line);
		for (size_t g = f; dup && g < p->nframes; g++) {
			const struct cached_fn *hit;

			if (!done[g] || src[g].file || !symbol_frame(&p->frames[g]) ||
			    strcmp(p->frames[g].module, mod) ||
			    !(hit = fn_find(cm, p->frames[g].name)) || !hit->file)
				continue;
			src[g].file = strdup(hit->file);
			src[g].line = hit->line;
		}
		ep_hashmap_free(&nm.idx);
	}
	if (skipped)
		log_warn("pprof: source lookups stopped after %.0f s: %zu module(s) left without "
			 "source files",
			 SOURCES_BUDGET_NS / 1e9, skipped);
out:
	free(done);
	free(nm.frames);
}

void pprof_elf_prefetch(struct pprof_elf_cache *c, const struct profile *const *ps, size_t n)
{
	struct profile all = { 0 };
	struct pprof_src *src;
	size_t total = 0, k = 0;

	if (!c)
		return;
	for (size_t i = 0; i < n; i++)
		total += ps[i] ? ps[i]->nframes : 0;
	/* Shallow copies: pprof_elf_sources reads names and modules only. */
	all.frames = malloc((total ? total : 1) * sizeof(*all.frames));
	src = calloc(total ? total : 1, sizeof(*src));
	if (all.frames && src) {
		for (size_t i = 0; i < n; i++)
			for (size_t f = 0; ps[i] && f < ps[i]->nframes; f++)
				all.frames[k++] = ps[i]->frames[f];
		all.nframes = k;
		pprof_elf_sources(&all, src, c);
		for (size_t f = 0; f < k; f++)
			free(src[f].file);
	}
	free(src);
	free(all.frames);
}
