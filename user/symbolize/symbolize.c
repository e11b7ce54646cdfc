// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer: see symbolize.h and docs/symbolization.md.
 *
 * Per pid we keep the parsed /proc/PID/maps, one libdwfl session (Dwfl) to
 * which every file-backed mapping group is reported with dwfl_report_module,
 * the JIT perf map, and a cache addr -> result. Names handed out are interned
 * in a symbolizer-wide string table, so they outlive the per-pid state.
 *
 * Shared across pids: a cache (build-id, file offset) -> name, so a process
 * mapping a library another process already used gets its names without its
 * own libdwfl session loading that ELF file. The build-id of a mapped file is
 * read from its note once per file identity (dev, inode, size, mtime, ctime).
 */
#include "util/clock.h"
#include "util/interner.h"
#include "util/vec.h"
#include "symbolize/symbolize.h"
#include "symbolize/symidx.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/hashmap.h"
#include "symbolize/bpf_ksyms.h"
#include "symbolize/debuginfo.h"
#include "symbolize/demangle.h"
#include "symbolize/kallsyms.h"
#include "symbolize/ksym_cache.h"
#include "util/log.h"
#include "symbolize/perfmap.h"
#include "proc/proc_maps.h"
#include "proc/target_open.h"

#define MAPS_MAX_BYTES	  (64u << 20)
#define MAPS_MAX_ENTRIES  (1u << 20)
#define CACHE_INIT_CAP	  1024u
#define CACHE_MAX_CAP	  (1u << 18)
#define PID_BUCKETS	  256u
#define DEFAULT_RELOAD_MS 250
#define VDSO_MAX_SIZE	  (1u << 20)
/* Build-id cache bounds. Entries are 32 bytes plus 12 bytes per index slot:
 * at most about 7 MiB. When full it is emptied and refilled. */
#define BID_CACHE_MAX (1u << 17)
/* Distinct build-ids and file identities remembered; files beyond that are
 * symbolized per pid as without the cache. */
#define BID_MAX_IDS	4096u
#define FILE_ID_MAX	16384u
#define BID_MAX_LEN	64u
#define KCACHE_INIT_CAP 256u
#define KCACHE_MAX_CAP	(1u << 15)
/* Module paths remembered for symbolizer_module_file: every file a frame
 * can name, as long as a program maps fewer distinct files. */
#define MODFILE_MAX 8192u

/* ---- string interning ---- */

struct strtab {
	struct interner in;
	/* Per id, for names worth demangling: the interned demangled form,
	 * the id's own string if it does not demangle, NULL if not tried. */
	const char **dem;
	size_t capdem;
};

static const char *strtab_intern(struct strtab *t, const char *s)
{
	int64_t id = interner_add(&t->in, s);

	return id < 0 ? NULL : interner_str(&t->in, (size_t)id);
}

/* The interned display form of a symbol name: demangled once per distinct
 * name (the demangler costs microseconds; a name recurs in many samples
 * and at many addresses), the name itself if it does not demangle. */
static const char *strtab_intern_demangled(struct strtab *t, const char *s)
{
	int64_t id = interner_add(&t->in, s);
	const char *d;
	char *dm;

	if (id < 0 ||
	    ep_vec_grow_zeroed((void **)&t->dem, &t->capdem, (size_t)id + 1, sizeof(*t->dem)))
		return NULL;
	if (t->dem[id])
		return t->dem[id];
	dm = demangle(s);
	d = dm ? strtab_intern(t, dm) : NULL;
	free(dm);
	t->dem[id] = d ? d : interner_str(&t->in, (size_t)id);
	return t->dem[id];
}

static void strtab_free(struct strtab *t)
{
	interner_free(&t->in);
	free(t->dem);
}

/* ---- build-id tables (shared by all pids) ---- */

enum { BID_UNKNOWN = -2, BID_NONE = -1 };

struct build_id {
	uint32_t len;
	unsigned char b[BID_MAX_LEN];
};

/* What identifies file content without reading it. */
struct file_id {
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
	int32_t bid; /* index into bids, or BID_NONE (no usable build-id note) */
};

struct bid_ent {
	uint64_t foff;
	uint32_t bid;
	bool resolved;
	const char *name; /* interned; NULL if unresolved */
	uint64_t sym_off;
};

struct bid_tables {
	struct build_id *ids;
	size_t n_ids, cap_ids;
	struct hashmap ids_idx;
	struct file_id *files;
	size_t n_files, cap_files;
	struct hashmap files_idx;
	struct bid_ent *ents;
	size_t n_ents, cap_ents;
	struct hashmap ents_idx;
};

/* ---- per-pid state ---- */

struct cache_ent {
	uint64_t addr;
	struct sym_result res;
	bool used;
	bool retry; /* unresolved for a reason a reload might fix */
};

/* Open-addressing table addr -> result (power-of-two capacity). */
struct addr_cache {
	struct cache_ent *e;
	size_t cap, n, max_cap;
};

struct pid_state;

/* Userdata of one reported Dwfl module: which mapping backs it. */
struct mod_ctx {
	struct pid_state *ps;
	uint64_t start, end; /* the first VMA of the group, names map_files/<start>-<end> */
	uint64_t inode;
	bool deleted, vdso;
	char *path;
	/* The module's symbols sorted (symidx.h), built at its first lookup;
	 * NULL after a failed build: libdwfl's own scan then. */
	struct symidx *idx;
	bool idx_tried;
	struct mod_ctx *next;
};

struct pid_state {
	uint32_t pid;
	struct symbolizer *s;
	Dwfl *dwfl;
	struct proc_maps maps;
	int32_t *map_bid; /* per maps entry: build-id index, BID_NONE or BID_UNKNOWN */
	struct mod_ctx *mods;
	struct addr_cache cache;
	uint64_t last_reload_ns;
	uint64_t mmap_gen; /* symbolizer.mmap_gen when the maps were read */
	dev_t exe_dev;	   /* identity of /proc/PID/exe when the state was built: */
	ino_t exe_ino;	   /* a change means exec, and every cached answer is stale */
	bool same_root;	   /* /proc/PID/root is our own root: plain paths work */
	/* On whose behalf its files are opened (target_open.h): its
	 * credentials as last read, kept for after its exit. */
	struct target_ref who;
	struct perfmap *pm;
	bool pm_tried;
	uint64_t pm_unread; /* bytes its perf map's cut left unread (largest seen) */
	struct timespec pm_mtime;
	off_t pm_size;
	bool retired; /* symbolizer_retire_pid: exited, kept for late records */
	struct pid_state *next;
};

/* The last opening of a module path: which process mapped it where, with
 * whose credentials (symbolizer_module_file). */
struct modfile {
	const char *path; /* interned */
	struct target_ref who;
	uint64_t start, end, dev, ino;
	bool deleted;
};

struct symbolizer {
	char *proc_root, *kallsyms_path, *perfmap_dir, *debuginfo_path;
	int64_t reload_ns;
	const volatile uint64_t *mmap_gen; /* symbolizer_set_mmap_gen */
	bool demangle;
	Dwfl_Callbacks cb; /* libdwfl keeps a pointer to it: must not move */
	struct pid_state *pids[PID_BUCKETS];
	struct pid_state *last_ps; /* samples come in runs from one pid */
	/* symbolizer_retire_pid: the exited pids kept, oldest first (a ring). */
	uint32_t retired[SYMBOLIZER_RETIRED_MAX];
	size_t retired_head, nretired;
	struct strtab strs;
	struct bid_tables bt;
	struct addr_cache kcache; /* kernel addr -> result */
	struct kallsyms *ks;
	bool ks_tried;
	/* symbolizer_preload_kernel: kallsyms parsed on its own thread, which
	 * alone writes ks_pending/ks_err until it is joined. */
	pthread_t ks_thread;
	bool ks_loading;
	struct kallsyms *ks_pending;
	int ks_err;
	uint64_t ks_load_ns;
	/* symbolizer_set_kernel_cache (ksym_cache.h); -1: read kallsyms whole. */
	int ks_dirfd, ks_iter_fd;
	int ks_cache_err;	/* why the boot cache was not used; 0: it was */
	size_t ks_check_diff;	/* EBPF_PROF_KSYM_CHECK: entries unlike a full read */
	size_t ks_check_bpf;	/* and [bpf] symbols alike in both */
	size_t ks_check_info;	/* and [bpf] symbols named alike from program info */
	size_t ks_check_stable; /* of the [bpf] symbols there before and after that read */
	bool ks_checked;
	/* ks holds the core kernel only (ksym_cache_load_core): an address
	 * outside [ks_lo, ks_hi] is looked up in the BPF programs' info, else
	 * the rest of the table is read then (ks_rest_tried). */
	bool ks_core_only, ks_rest_tried, bpfks_tried;
	uint64_t ks_lo, ks_hi;
	struct bpf_ksyms *bpfks;
	unsigned char *vdso_img; /* copy of our own vDSO: the kernel's image is the same */
	size_t vdso_img_size, vdso_map_size;
	bool vdso_tried;
	struct modfile *modfiles;
	size_t n_modfiles, cap_modfiles;
	struct hashmap modfiles_idx;
	struct symbolizer_stats st;
};

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : p;
}

/* ---- vDSO ---- */

static void load_own_vdso(struct symbolizer *s)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	struct proc_maps self;
	const struct proc_map *m;
	char *buf;
	size_t len;

	s->vdso_tried = true;
	if (!base || proc_maps_read_file("/proc/self/maps", MAPS_MAX_BYTES, &buf, &len) < 0)
		return;
	if (proc_maps_parse_buf(buf, len, MAPS_MAX_ENTRIES, &self) == 0) {
		m = proc_maps_find(&self, (uint64_t)(uintptr_t)base);
		if (m && m->kind == PROC_MAP_VDSO && m->end - m->start <= VDSO_MAX_SIZE &&
		    (uint64_t)(uintptr_t)base == m->start) {
			s->vdso_img = malloc(m->end - m->start);
			if (s->vdso_img) {
				memcpy(s->vdso_img, base, m->end - m->start);
				s->vdso_img_size = m->end - m->start;
				s->vdso_map_size = s->vdso_img_size;
			}
		}
		proc_maps_free(&self);
	}
	free(buf);
}

/* ---- libdwfl callbacks ---- */

static bool modfile_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct symbolizer *s = ctx;

	return !strcmp(s->modfiles[idx].path, key);
}

static uint64_t path_hash(const char *p)
{
	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(p, strlen(p), HASHMAP_SEED));
}

/* Remembers how path was last opened, for symbolizer_module_file. */
static void modfile_note(struct pid_state *ps, const struct target_map *m, const struct stat *st)
{
	struct symbolizer *s = ps->s;
	const char *path = strtab_intern(&s->strs, m->path);
	uint64_t h;
	int64_t i;

	if (!path)
		return;
	h = path_hash(path);
	i = ep_hashmap_find(&s->modfiles_idx, h, path, modfile_eq, s);
	if (i < 0) {
		if (s->n_modfiles >= MODFILE_MAX ||
		    ep_vec_grow((void **)&s->modfiles, &s->cap_modfiles, s->n_modfiles + 1,
				sizeof(*s->modfiles)) < 0 ||
		    ep_hashmap_insert(&s->modfiles_idx, h, (uint32_t)s->n_modfiles) < 0)
			return;
		i = (int64_t)s->n_modfiles++;
	}
	s->modfiles[i] = (struct modfile){ .path = path,
					   .who = ps->who,
					   .start = m->start,
					   .end = m->end,
					   .dev = (uint64_t)st->st_dev,
					   .ino = (uint64_t)st->st_ino,
					   .deleted = m->deleted };
}

int symbolizer_module_file(void *sym, const char *path, struct target_ref *t, struct target_map *m)
{
	struct symbolizer *s = sym;
	int64_t i =
		s && path ? ep_hashmap_find(&s->modfiles_idx, path_hash(path), path, modfile_eq, s)
			  : -1;
	const struct modfile *f;

	if (i < 0)
		return -ENOENT;
	f = &s->modfiles[i];
	*t = f->who;
	*m = (struct target_map){ .path = f->path,
				  .start = f->start,
				  .end = f->end,
				  .dev = f->dev,
				  .ino = f->ino,
				  .deleted = f->deleted };
	return 0;
}

/* Opens the file mapped at [start, end) of ps as the target sees it: the
 * same rules for libdwfl and for reading build-ids, so both see one file.
 * map_files names exactly the mapped file, even if deleted or replaced on
 * disk since, and in any mount namespace; else its path in the process's
 * root (ours once it is gone, if it shared ours) must still lead to the
 * inode mapped: a file replaced since would give wrong names. Always with
 * the process's permissions (target_open.h). */
static int open_mapped(struct pid_state *ps, uint64_t start, uint64_t end, const char *path,
		       uint64_t inode, bool deleted)
{
	struct target_map m = {
		.path = path, .start = start, .end = end, .ino = inode, .deleted = deleted
	};
	struct stat st;
	int fd = target_open_map(&ps->who, &m, 0, TARGET_ELF_MAX_BYTES, &st);

	if (fd < 0) {
		if (fd != -ENOENT)
			log_debug("symbolize: pid %u: %s: %s", ps->pid, path,
				  target_open_strerror(fd));
		return -1;
	}
	modfile_note(ps, &m, &st);
	return fd;
}

/* Debug files of a module are looked for as the process that mapped it
 * (debuginfo.h), in the symbolizer's debuginfo path. */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct mod_ctx *mc = *userdata;
	struct debuginfo_ctx c;
	int fd;

	if (!mc || !mc->ps)
		return -1;
	debuginfo_ctx_init(&c, mc->ps->s->debuginfo_path, &mc->ps->who, mc->path);
	fd = debuginfo_find(&c, mod, userdata, modname, base, file_name, debuglink_file,
			    debuglink_crc, debuginfo_file_name);
	debuginfo_ctx_clear(&c);
	return fd;
}

static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct mod_ctx *mc = *userdata;
	struct pid_state *ps;
	char *rp;
	int fd;

	(void)mod;
	(void)modname;
	(void)base;
	if (!mc)
		return -1;
	ps = mc->ps;
	if (mc->vdso) {
		struct symbolizer *s = ps->s;

		if (!s->vdso_tried)
			load_own_vdso(s);
		/* A vDSO of another size is not ours (e.g. a 32-bit process). */
		if (!s->vdso_img || mc->end - mc->start != s->vdso_map_size)
			return -1;
		*elfp = elf_memory((char *)s->vdso_img, s->vdso_img_size);
		return -1;
	}
	rp = ps->same_root && !mc->deleted
		     ? strdup(mc->path)
		     : xasprintf("%s/%u/root%s", ps->s->proc_root, ps->pid, mc->path);
	if (!rp)
		return -1;
	fd = open_mapped(ps, mc->start, mc->end, mc->path, mc->inode, mc->deleted);
	if (fd < 0) {
		log_debug("symbolize: pid %u: cannot open %s%s (no map_files access?)", ps->pid,
			  mc->path, mc->deleted ? " (deleted)" : "");
		free(rp);
		return -1;
	}
	/* The name is where libdwfl looks for .gnu_debuglink siblings. */
	*file_name = rp;
	ps->s->st.elf_opens++;
	return fd;
}

/* ---- build-id cache ---- */

static bool bid_id_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct build_id *k = key;

	return bt->ids[idx].len == k->len && memcmp(bt->ids[idx].b, k->b, k->len) == 0;
}

static bool file_id_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct file_id *a = &bt->files[idx], *b = key;

	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns && a->ctime_s == b->ctime_s &&
	       a->ctime_ns == b->ctime_ns;
}

struct bid_key {
	uint64_t foff;
	uint32_t bid;
};

static bool bid_ent_eq(uint32_t idx, const void *key, const void *ctx)
{
	const struct bid_tables *bt = ctx;
	const struct bid_key *k = key;

	return bt->ents[idx].foff == k->foff && bt->ents[idx].bid == k->bid;
}

static uint64_t file_id_hash(const struct file_id *f)
{
	uint64_t v[7] = { f->dev,
			  f->ino,
			  f->size,
			  (uint64_t)f->mtime_s,
			  (uint64_t)f->mtime_ns,
			  (uint64_t)f->ctime_s,
			  (uint64_t)f->ctime_ns };

	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(v, sizeof(v), HASHMAP_SEED));
}

static uint64_t bid_key_hash(const struct bid_key *k)
{
	uint64_t v[2] = { k->foff, k->bid };

	return ep_hashmap_hash_finish(ep_hashmap_hash_bytes(v, sizeof(v), HASHMAP_SEED));
}

/* Index of the interned build-id, or BID_NONE if the table is full. */
static int32_t bid_intern(struct bid_tables *bt, const void *id, size_t len)
{
	struct build_id k = { .len = (uint32_t)len };
	uint64_t h;
	int64_t i;

	memcpy(k.b, id, len);
	h = ep_hashmap_hash_finish(ep_hashmap_hash_bytes(k.b, len, HASHMAP_SEED));
	i = ep_hashmap_find(&bt->ids_idx, h, &k, bid_id_eq, bt);
	if (i >= 0)
		return (int32_t)i;
	if (bt->n_ids >= BID_MAX_IDS ||
	    ep_vec_grow((void **)&bt->ids, &bt->cap_ids, bt->n_ids + 1, sizeof(*bt->ids)) < 0 ||
	    ep_hashmap_insert(&bt->ids_idx, h, (uint32_t)bt->n_ids) < 0)
		return BID_NONE;
	bt->ids[bt->n_ids] = k;
	return (int32_t)bt->n_ids++;
}

/* The GNU build-id note of an opened ELF file; 0 if it has none. The file is
 * outside input: libelf bounds-checks the notes against the file size. Read,
 * not mapped: a file its owner truncates meanwhile is a short read, not a
 * SIGBUS. */
static ssize_t read_build_id(int fd, unsigned char *out, size_t cap)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *id = NULL;
	ssize_t n;

	if (!elf)
		return 0;
	n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &id) : 0;
	/* Too short to identify a build, or longer than any real one. */
	if (n < 8 || (size_t)n > cap)
		n = 0;
	else
		memcpy(out, id, (size_t)n);
	elf_end(elf);
	return n;
}

/* Build-id index of the file behind maps entry idx, computed once per entry
 * and, across pids, once per file identity. */
static int32_t map_build_id(struct pid_state *ps, size_t idx)
{
	struct symbolizer *s = ps->s;
	struct bid_tables *bt = &s->bt;
	const struct proc_map *m = &ps->maps.maps[idx];
	unsigned char id[BID_MAX_LEN];
	struct file_id k = { 0 };
	struct stat st;
	int32_t bid = BID_NONE;
	uint64_t h;
	int64_t fi;
	ssize_t n;
	int fd;

	if (!ps->map_bid)
		return BID_NONE;
	if (ps->map_bid[idx] != BID_UNKNOWN)
		return ps->map_bid[idx];
	fd = open_mapped(ps, m->start, m->end, m->path, m->inode, m->deleted);
	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	k.dev = (uint64_t)st.st_dev;
	k.ino = (uint64_t)st.st_ino;
	k.size = (uint64_t)st.st_size;
	k.mtime_s = st.st_mtim.tv_sec;
	k.mtime_ns = st.st_mtim.tv_nsec;
	k.ctime_s = st.st_ctim.tv_sec;
	k.ctime_ns = st.st_ctim.tv_nsec;
	h = file_id_hash(&k);
	fi = ep_hashmap_find(&bt->files_idx, h, &k, file_id_eq, bt);
	if (fi >= 0) {
		bid = bt->files[fi].bid;
		goto out;
	}
	s->st.buildid_reads++;
	n = read_build_id(fd, id, sizeof(id));
	if (n > 0)
		bid = bid_intern(bt, id, (size_t)n);
	k.bid = bid;
	if (bt->n_files < FILE_ID_MAX &&
	    ep_vec_grow((void **)&bt->files, &bt->cap_files, bt->n_files + 1, sizeof(*bt->files)) ==
		    0 &&
	    ep_hashmap_insert(&bt->files_idx, h, (uint32_t)bt->n_files) == 0)
		bt->files[bt->n_files++] = k;
out:
	if (fd >= 0)
		close(fd);
	ps->map_bid[idx] = bid;
	return bid;
}

static const struct bid_ent *bid_cache_find(const struct bid_tables *bt, uint32_t bid,
					    uint64_t foff)
{
	struct bid_key k = { .foff = foff, .bid = bid };
	int64_t i = ep_hashmap_find(&bt->ents_idx, bid_key_hash(&k), &k, bid_ent_eq, bt);

	return i >= 0 ? &bt->ents[i] : NULL;
}

static void bid_cache_put(struct symbolizer *s, uint32_t bid, uint64_t foff, const char *name,
			  uint64_t sym_off)
{
	struct bid_tables *bt = &s->bt;
	struct bid_key k = { .foff = foff, .bid = bid };
	uint64_t h = bid_key_hash(&k);

	if (bt->n_ents >= BID_CACHE_MAX) {
		/* Start over rather than grow past the bound. */
		ep_hashmap_free(&bt->ents_idx);
		bt->n_ents = 0;
		s->st.buildid_resets++;
	}
	/* A failed insert only costs a later libdwfl lookup. */
	if (ep_vec_grow((void **)&bt->ents, &bt->cap_ents, bt->n_ents + 1, sizeof(*bt->ents)) < 0 ||
	    ep_hashmap_insert(&bt->ents_idx, h, (uint32_t)bt->n_ents) < 0)
		return;
	bt->ents[bt->n_ents++] = (struct bid_ent){
		.foff = foff, .bid = bid, .resolved = name != NULL, .name = name, .sym_off = sym_off
	};
}

static void bid_tables_free(struct bid_tables *bt)
{
	free(bt->ids);
	free(bt->files);
	free(bt->ents);
	ep_hashmap_free(&bt->ids_idx);
	ep_hashmap_free(&bt->files_idx);
	ep_hashmap_free(&bt->ents_idx);
}

/* ---- maps (re)loading ---- */

static void cache_clear(struct addr_cache *c)
{
	if (c->e)
		memset(c->e, 0, c->cap * sizeof(*c->e));
	c->n = 0;
}

static int cache_init(struct addr_cache *c, size_t cap, size_t max_cap)
{
	c->e = calloc(cap, sizeof(*c->e));
	c->cap = cap;
	c->max_cap = max_cap;
	c->n = 0;
	return c->e ? 0 : -ENOMEM;
}

/* The entry for addr, or the empty slot where it belongs. O(1) expected: the
 * load factor stays below 3/4. */
static struct cache_ent *cache_slot(const struct addr_cache *c, uint64_t addr)
{
	size_t mask = c->cap - 1;
	size_t j = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & mask;

	while (c->e[j].used && c->e[j].addr != addr)
		j = (j + 1) & mask;
	return &c->e[j];
}

static void cache_put(struct addr_cache *c, uint64_t addr, const struct sym_result *r, bool retry)
{
	struct cache_ent *e;

	if ((c->n + 1) * 4 > c->cap * 3) {
		size_t ncap = c->cap * 2;
		struct cache_ent *nc = ncap <= c->max_cap ? calloc(ncap, sizeof(*nc)) : NULL;

		if (nc) {
			struct cache_ent *old = c->e;
			size_t ocap = c->cap;

			c->e = nc;
			c->cap = ncap;
			for (size_t i = 0; i < ocap; i++)
				if (old[i].used)
					*cache_slot(c, old[i].addr) = old[i];
			free(old);
		} else {
			/* At the size limit (or out of memory) start over rather than grow. */
			cache_clear(c);
		}
	}
	e = cache_slot(c, addr);
	if (!e->used)
		c->n++;
	e->used = true;
	e->addr = addr;
	e->res = *r;
	e->retry = retry;
}

static struct mod_ctx *mod_ctx_new(struct pid_state *ps, const struct proc_map *m)
{
	struct mod_ctx *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return NULL;
	mc->path = strdup(m->path);
	if (!mc->path) {
		free(mc);
		return NULL;
	}
	mc->ps = ps;
	mc->start = m->start;
	mc->end = m->end;
	mc->inode = m->inode;
	mc->deleted = m->deleted;
	mc->vdso = m->kind == PROC_MAP_VDSO;
	mc->next = ps->mods;
	ps->mods = mc;
	return mc;
}

static void report_group(struct pid_state *ps, const struct proc_map *first, uint64_t end)
{
	Dwfl_Module *mod;
	void **ud;

	mod = dwfl_report_module(ps->dwfl, first->path, first->start, end);
	if (!mod) {
		log_debug("symbolize: pid %u: cannot report %s: %s", ps->pid, first->path,
			  dwfl_errmsg(-1));
		return;
	}
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	/* A module re-reported unchanged keeps its context and loaded ELF. */
	if (!*ud)
		*ud = mod_ctx_new(ps, first);
}

/* True if every file mapping of old is still mapped identically in new. */
static bool file_maps_unchanged(const struct proc_maps *old, const struct proc_maps *new)
{
	for (size_t i = 0; i < old->n; i++) {
		const struct proc_map *o = &old->maps[i], *n;

		if (o->kind != PROC_MAP_FILE && o->kind != PROC_MAP_VDSO)
			continue;
		n = proc_maps_find(new, o->start);
		if (!n || n->start != o->start || n->end != o->end || n->pgoff != o->pgoff ||
		    n->inode != o->inode || strcmp(n->path, o->path) != 0)
			return false;
	}
	return true;
}

static int load_maps(struct pid_state *ps)
{
	struct proc_maps nm;
	char *path, *buf;
	size_t len, i;
	int err;

	path = xasprintf("%s/%u/maps", ps->s->proc_root, ps->pid);
	if (!path)
		return -ENOMEM;
	/* Its credentials now (it may have changed them since), kept for
	 * after its exit. */
	{
		struct target_cred c;

		if (target_cred_read(ps->s->proc_root, ps->pid, &c) == 0)
			ps->who.cred = c;
	}
	/* Before the read: a mapping made during it moves the count again. */
	if (ps->s->mmap_gen)
		ps->mmap_gen = *ps->s->mmap_gen;
	err = proc_maps_read_file(path, MAPS_MAX_BYTES, &buf, &len);
	if (err < 0) {
		log_debug("symbolize: cannot read %s: %s", path, strerror(-err));
		free(path);
		return err;
	}
	err = proc_maps_parse_buf(buf, len, MAPS_MAX_ENTRIES, &nm);
	free(buf);
	if (err < 0) {
		free(path);
		return err;
	}
	if (nm.bad_lines)
		log_debug("symbolize: %s: skipped %zu malformed lines", path, nm.bad_lines);
	log_debug("symbolize: %s: %zu mappings", path, nm.n);
	free(path);
	/* A live process always maps something (its stack, the vDSO); none
	 * means it exited (a zombie's maps are empty) while its samples are
	 * still being drained: what was read before is all there is. */
	if (!nm.n && ps->maps.n) {
		proc_maps_free(&nm);
		return -ESRCH;
	}

	if (!file_maps_unchanged(&ps->maps, &nm))
		cache_clear(&ps->cache);
	proc_maps_free(&ps->maps);
	ps->maps = nm;
	/* Recomputed lazily: one open per entry, the file identity cache spares
	 * re-reading notes. Without the array the build-id cache is skipped. */
	free(ps->map_bid);
	ps->map_bid = nm.n ? malloc(nm.n * sizeof(*ps->map_bid)) : NULL;
	for (i = 0; ps->map_bid && i < nm.n; i++)
		ps->map_bid[i] = BID_UNKNOWN;

	dwfl_report_begin(ps->dwfl);
	for (i = 0; i < nm.n;) {
		const struct proc_map *first = &nm.maps[i];
		size_t j = i;

		if (first->kind == PROC_MAP_VDSO) {
			report_group(ps, first, first->end);
			i++;
			continue;
		}
		if (first->kind != PROC_MAP_FILE) {
			i++;
			continue;
		}
		/* libdwfl derives the load bias from the module start, which must
		 * be where the file's first page (ELF header, first PT_LOAD) is;
		 * the module spans every segment, across holes between them. */
		if (first->pgoff == 0)
			report_group(ps, first, proc_maps_file_group(&nm, i, &j));
		i = j + 1;
	}
	if (dwfl_report_end(ps->dwfl, NULL, NULL) != 0)
		log_debug("symbolize: pid %u: dwfl_report_end: %s", ps->pid, dwfl_errmsg(-1));
	return 0;
}

static void pid_state_free(struct pid_state *ps)
{
	if (!ps)
		return;
	if (ps->dwfl)
		dwfl_end(ps->dwfl);
	while (ps->mods) {
		struct mod_ctx *n = ps->mods->next;

		free(ps->mods->path);
		symidx_free(ps->mods->idx);
		free(ps->mods);
		ps->mods = n;
	}
	proc_maps_free(&ps->maps);
	free(ps->map_bid);
	perfmap_free(ps->pm);
	free(ps->cache.e);
	free(ps);
}

/* stat() through /proc/PID/exe names the executable's file; 0/0 when it
 * cannot be read (kernel thread, gone, no permission). */
static void exe_identity(const struct symbolizer *s, uint32_t pid, dev_t *dev, ino_t *ino)
{
	char *path = xasprintf("%s/%u/exe", s->proc_root, pid);
	struct stat st;

	*dev = 0;
	*ino = 0;
	if (path && stat(path, &st) == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	free(path);
}

static struct pid_state *get_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state **bucket = &s->pids[pid % PID_BUCKETS], *ps;

	if (s->last_ps && s->last_ps->pid == pid)
		return s->last_ps;
	for (ps = *bucket; ps; ps = ps->next) {
		if (ps->pid == pid) {
			s->last_ps = ps;
			return ps;
		}
	}
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->pid = pid;
	ps->s = s;
	ps->dwfl = dwfl_begin(&s->cb);
	if (cache_init(&ps->cache, CACHE_INIT_CAP, CACHE_MAX_CAP) < 0 || !ps->dwfl) {
		pid_state_free(ps);
		return NULL;
	}
	/* Gone already: its files stay unreadable (credentials unknown). */
	target_ref_init(&ps->who, s->proc_root, pid);
	ps->same_root = ps->who.same_root;
	exe_identity(s, pid, &ps->exe_dev, &ps->exe_ino);
	/* A process that cannot be read yields unresolved frames, not an error. */
	load_maps(ps);
	ps->last_reload_ns = mono_ns();
	ps->next = *bucket;
	*bucket = ps;
	s->last_ps = ps;
	return ps;
}

/* ---- perf map ---- */

/* The pid the target knows itself by (innermost PID namespace), from NSpid. */
static uint32_t ns_pid(const char *proc_root, uint32_t pid)
{
	char *path = xasprintf("%s/%u/status", proc_root, pid), *buf = NULL, *l;
	uint32_t r = pid;
	size_t len;

	if (!path)
		return pid;
	if (proc_maps_read_file(path, 1u << 20, &buf, &len) == 0 &&
	    (l = strstr(buf, "\nNSpid:")) != NULL) {
		char *e = l + 7 + strcspn(l + 7, "\n");
		char *last = NULL;

		*e = '\0';
		for (char *t = strtok(l + 7, " \t"); t; t = strtok(NULL, " \t"))
			last = t;
		if (last) {
			char *end;
			unsigned long v = strtoul(last, &end, 10);

			if (*end == '\0' && v > 0 && v <= UINT32_MAX)
				r = (uint32_t)v;
		}
	}
	free(buf);
	free(path);
	return r;
}

static void load_perfmap(struct pid_state *ps)
{
	struct symbolizer *s = ps->s;
	uint32_t nspid = ns_pid(s->proc_root, ps->pid);
	struct perfmap *pm;
	struct stat st, pst;
	char *path, *pdir, *root = NULL;
	const char *rel;
	int err, pmfd, dirfd = AT_FDCWD;

	/* In another PID namespace the JIT wrote the file under its own pid and
	 * its own /tmp: resolved inside the target's root, never outside it. */
	path = xasprintf("%s/perf-%u.map", s->perfmap_dir, nspid);
	pdir = xasprintf("%s/%u", s->proc_root, ps->pid);
	if (!path || !pdir)
		goto out;
	rel = path;
	if (nspid != ps->pid) {
		root = xasprintf("%s/%u/root", s->proc_root, ps->pid);
		dirfd = root ? open(root, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		if (dirfd < 0)
			goto out;
		while (*rel == '/')
			rel++;
	}
	/* Only the target's own file (or root's) is trusted: when its owner
	 * cannot be known, nothing is read. */
	if (stat(pdir, &pst) < 0)
		goto out;
	if (fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
		goto out;
	if (ps->pm_tried && st.st_size == ps->pm_size && st.st_mtim.tv_sec == ps->pm_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == ps->pm_mtime.tv_nsec)
		goto out;
	ps->pm_size = st.st_size;
	ps->pm_mtime = st.st_mtim;
	/* Read as the process would (its credentials, no symlink, no FIFO):
	 * the stat above only says whether anything changed. */
	pmfd = target_open_path(&ps->who, path,
				TARGET_NO_SYMLINKS | (nspid == ps->pid ? TARGET_OUR_ROOT : 0), 0,
				NULL);
	err = pmfd < 0 ? pmfd : perfmap_load_fd(pmfd, pst.st_uid, &pm);
	if (pmfd >= 0)
		close(pmfd);
	if (err < 0) {
		log_debug("symbolize: cannot load %s%s: %s", root ? root : "", path,
			  target_open_strerror(err));
		goto out;
	}
	if (perfmap_bad_lines(pm))
		log_debug("symbolize: %s: %zu bad lines", path, perfmap_bad_lines(pm));
	/* A cut map names JIT code of the part read only: the rest shows as
	 * [unknown]. Said once per process, counted (issue 17: it was silent). */
	if (perfmap_truncated(pm) && perfmap_unread_bytes(pm) > ps->pm_unread) {
		if (!ps->pm_unread) {
			s->st.perfmaps_cut++;
			log_warn(
				"perf map %s of pid %u is larger than %u MiB (or %u symbols): only "
				"that much is read, JIT code named in the rest (%.1f MiB) shows as "
				"[unknown]; node: --perf-basic-prof-only-functions writes a "
				"smaller map",
				path, ps->pid, PERFMAP_MAX_BYTES >> 20, PERFMAP_MAX_ENTRIES,
				(double)perfmap_unread_bytes(pm) / (1 << 20));
		}
		s->st.perfmap_unread_bytes += perfmap_unread_bytes(pm) - ps->pm_unread;
		ps->pm_unread = perfmap_unread_bytes(pm);
	}
	perfmap_free(ps->pm);
	ps->pm = pm;
out:
	ps->pm_tried = true;
	if (dirfd >= 0 && dirfd != AT_FDCWD)
		close(dirfd);
	free(root);
	free(path);
	free(pdir);
}

/* ---- resolution ---- */

static int set_result(struct symbolizer *s, struct sym_result *out, const char *name,
		      const char *module, uint64_t offset, uint64_t sym_off, bool resolved)
{
	out->name = resolved && s->demangle && demangle_candidate(name)
			    ? strtab_intern_demangled(&s->strs, name)
			    : strtab_intern(&s->strs, name);
	out->module = module ? strtab_intern(&s->strs, module) : NULL;
	if (!out->name || (module && !out->module))
		return -ENOMEM;
	out->offset = offset;
	out->sym_offset = resolved ? sym_off : 0;
	out->resolved = resolved;
	return 0;
}

static int set_unknown(struct symbolizer *s, struct sym_result *out, const char *what,
		       const char *module, uint64_t offset)
{
	char buf[PATH_MAX + 64];

	snprintf(buf, sizeof(buf), "[unknown] %s+0x%" PRIx64, what, offset);
	return set_result(s, out, buf, module, offset, 0, false);
}

/* Name of the symbol containing addr, or NULL; never the symbol before a gap.
 * *have_elf says whether the module's ELF was found, i.e. whether a NULL is
 * a property of the file rather than of this pid's access to it. */
static const char *dwfl_name(struct pid_state *ps, uint64_t addr, uint64_t *sym_off, bool *have_elf)
{
	Dwfl_Module *mod = dwfl_addrmodule(ps->dwfl, addr);
	struct mod_ctx *mc;
	void **ud = NULL;
	int found;
	uint64_t off = 0;
	GElf_Addr bias;
	GElf_Sym sym;
	const char *name;

	*have_elf = false;
	if (!mod)
		return NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	mc = ud ? *ud : NULL;
	if (mc && !mc->idx_tried) {
		mc->idx_tried = true;
		if (symidx_build(mod, &mc->idx) == 0)
			ps->s->st.symidx_builds++;
	}
	name = NULL;
	found = mc && mc->idx ? symidx_lookup(mc->idx, addr, &name, &off, &sym) : -ENOENT;
	if (found < 0)
		name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
	/* Already loaded by addrinfo: this does not open anything. */
	*have_elf = dwfl_module_getelf(mod, &bias) != NULL;
	if (!name || !*name)
		return NULL;
	/* Sized symbols must contain addr; a sizeless one is only believed for
	 * functions (hand-written assembly often lacks .size). */
	if (sym.st_size ? off >= sym.st_size : GELF_ST_TYPE(sym.st_info) != STT_FUNC)
		return NULL;
	*sym_off = off;
	return name;
}

/* One attempt with the current maps. *retry says a reload might help. */
static int resolve_user(struct pid_state *ps, uint64_t addr, struct sym_result *out, bool *retry)
{
	struct symbolizer *s = ps->s;
	const struct proc_map *m = proc_maps_find(&ps->maps, addr);
	const char *name;
	uint64_t soff = 0;
	bool have_elf;
	char buf[64];

	*retry = false;
	if (m && m->kind == PROC_MAP_FILE) {
		uint64_t foff = addr - m->start + m->pgoff;
		int32_t bid = map_build_id(ps, (size_t)(m - ps->maps.maps));
		int err;

		if (bid >= 0) {
			const struct bid_ent *be = bid_cache_find(&s->bt, (uint32_t)bid, foff);

			if (be) {
				s->st.buildid_hits++;
				if (be->resolved)
					return set_result(s, out, be->name, m->path, foff,
							  be->sym_off, true);
				return set_unknown(s, out, proc_maps_basename(m->path), m->path,
						   foff);
			}
		}
		name = dwfl_name(ps, addr, &soff, &have_elf);
		if (!name && !have_elf) {
			/* Outside every module: a part of a loaded file mapped
			 * again elsewhere is named from the loaded image. */
			const struct proc_map *alias = proc_maps_find_alias(&ps->maps, m, foff);

			if (alias)
				name = dwfl_name(ps, alias->start + (foff - alias->pgoff), &soff,
						 &have_elf);
		}
		if (name)
			err = set_result(s, out, name, m->path, foff, soff, true);
		else
			err = set_unknown(s, out, proc_maps_basename(m->path), m->path, foff);
		/* "No symbol here" is only shared if the file was actually read. */
		if (!err && bid >= 0 && (name || have_elf))
			bid_cache_put(s, (uint32_t)bid, foff, name ? out->name : NULL,
				      out->sym_offset);
		return err;
	}
	if (m && m->kind == PROC_MAP_VDSO) {
		name = dwfl_name(ps, addr, &soff, &have_elf);
		if (name)
			return set_result(s, out, name, "[vdso]", addr - m->start, soff, true);
		return set_unknown(s, out, "[vdso]", "[vdso]", addr - m->start);
	}
	if (!m || m->kind == PROC_MAP_ANON) {
		if (!ps->pm_tried)
			load_perfmap(ps);
		name = ps->pm ? perfmap_lookup(ps->pm, addr, &soff) : NULL;
		if (name)
			return set_result(s, out, name, "[perf-map]", addr - (m ? m->start : 0),
					  soff, true);
		*retry = true;
	}
	if (!m) {
		snprintf(buf, sizeof(buf), "[unknown] 0x%" PRIx64, addr);
		return set_result(s, out, buf, NULL, addr, 0, false);
	}
	/* [heap], [stack], [anon:name] say more than a generic [anon]. */
	return set_unknown(s, out, m->path[0] == '[' ? m->path : "[anon]", NULL, addr - m->start);
}

static bool may_reload(const struct pid_state *ps, uint64_t now)
{
	return ps->s->reload_ns < 0 || now - ps->last_reload_ns >= (uint64_t)ps->s->reload_ns;
}

/* A traced process mapped code since ps's maps were read. */
static bool maps_stale(const struct pid_state *ps)
{
	return ps->s->mmap_gen && *ps->s->mmap_gen != ps->mmap_gen;
}

void symbolizer_set_mmap_gen(struct symbolizer *s, const volatile uint64_t *gen)
{
	s->mmap_gen = gen;
}

int symbolizer_user(struct symbolizer *s, uint32_t pid, uint64_t addr, struct sym_result *out)
{
	struct pid_state *ps;
	struct cache_ent *e;
	bool retry;
	int err;

	s->st.lookups++;
	ps = get_pid(s, pid);
	if (!ps)
		return -ENOMEM;
	e = cache_slot(&ps->cache, addr);
	if (e->used && (!e->retry || !(may_reload(ps, mono_ns()) || maps_stale(ps)))) {
		s->st.cache_hits++;
		*out = e->res;
		if (!out->resolved)
			s->st.unresolved++;
		return 0;
	}
	err = resolve_user(ps, addr, out, &retry);
	if (err)
		return err;
	if (retry) {
		uint64_t now = mono_ns();

		/* Outside every known mapping and too soon to reload: if the
		 * process exec'ed since its state was built (a launched command
		 * symbolized once before exec, or by another module's stack),
		 * start over now rather than answer from the old image. */
		if (!may_reload(ps, now) && !proc_maps_find(&ps->maps, addr)) {
			dev_t dev;
			ino_t ino;

			/* A process gone since (no exe to read: 0/0) has not
			 * exec'ed: starting over would replace the maps read
			 * while it ran with a zombie's empty ones, and every
			 * later frame of it would be unknown (seen when the
			 * recorder fell seconds behind a short command). */
			exe_identity(s, pid, &dev, &ino);
			if ((dev || ino) && (dev != ps->exe_dev || ino != ps->exe_ino)) {
				symbolizer_forget_pid(s, pid);
				s->st.reloads++;
				s->st.lookups--; /* counted again below */
				return symbolizer_user(s, pid, addr, out);
			}
		}
		if (may_reload(ps, now) || (maps_stale(ps) && !proc_maps_find(&ps->maps, addr))) {
			const struct proc_map *m = proc_maps_find(&ps->maps, addr);

			ps->last_reload_ns = now;
			/* Not in any known mapping: maybe dlopen'ed or mmap'ed since. */
			if (!m) {
				s->st.reloads++;
				load_maps(ps);
			}
			load_perfmap(ps);
			err = resolve_user(ps, addr, out, &retry);
			if (err)
				return err;
		}
	}
	cache_put(&ps->cache, addr, out, retry);
	if (!out->resolved)
		s->st.unresolved++;
	return 0;
}

struct Dwfl *symbolizer_dwfl(struct symbolizer *s, uint32_t pid)
{
	struct pid_state *ps = get_pid(s, pid);

	return ps ? ps->dwfl : NULL;
}

/* BPF program symbols of table (read before the program info) that a
 * second read of path, after it, still has at the same address: *stable.
 * Returns how many of those the program info names alike (same address
 * and name). Programs loaded or unloaded around the info read (other
 * tools, our own modules) are left out instead of counting as a
 * difference (CI: "70 alike, 69 named alike"). The info is read twice,
 * before and after the second read: a program being loaded has its
 * functions in kallsyms before it has an ID (so before the program info
 * can list it), and one unloaded right after the second read is gone from
 * a later info read; each is compared with the info read that has it. */
static size_t check_bpf_info(const struct kallsyms *table, const char *path, size_t *stable)
{
	struct kallsyms *after = NULL;
	struct bpf_ksyms *b, *b2 = NULL;
	size_t alike = 0;
	uint64_t a, off;
	const char *n, *m;

	*stable = 0;
	if (bpf_ksyms_load(&b))
		return 0;
	if (kallsyms_load(path, &after)) {
		bpf_ksyms_free(b);
		return 0;
	}
	if (bpf_ksyms_load(&b2))
		b2 = NULL;
	for (size_t i = 0; (n = kallsyms_at(table, i, &a)); i++) {
		size_t l = strlen(n);

		if (l <= 6 || strcmp(n + l - 6, " [bpf]") || strncmp(n, "bpf_prog_", 9))
			continue;
		m = kallsyms_lookup(after, a, &off);
		if (!m || off || strcmp(m, n))
			continue;
		/* Known to neither info read: its program has lost its ID and
		 * is being freed (a program of an earlier run, torn down
		 * slowly by the kernel), its symbols not yet removed: not
		 * loaded throughout. */
		if (!bpf_ksyms_lookup(b, a, &off) && !(b2 && bpf_ksyms_lookup(b2, a, &off)))
			continue;
		(*stable)++;
		if (((m = bpf_ksyms_lookup(b, a, &off)) && !off && !strcmp(m, n)) ||
		    (b2 && (m = bpf_ksyms_lookup(b2, a, &off)) && !off && !strcmp(m, n)))
			alike++;
		else
			log_debug("kallsyms check: %s at 0x%llx, program info: %s", n,
				  (unsigned long long)a, m ? m : "(none)");
	}
	kallsyms_free(after);
	bpf_ksyms_free(b);
	bpf_ksyms_free(b2);
	return alike;
}

/* From this boot's cache and the iterator when they can be used, else
 * whole (and then the cache is written for the next run). */
static int load_kernel_syms(struct symbolizer *s, struct kallsyms **out)
{
	struct kallsyms *full;
	bool check = getenv("EBPF_PROF_KSYM_CHECK");

	/* The core kernel alone, unless the tests compare whole tables: the
	 * iterator makes the kernel expand all ~120k core names, ~10% of the
	 * collector's CPU on a short run, for modules, trampolines and BPF
	 * programs that most profiles never meet (docs/performance.md). */
	if (!check && s->ks_iter_fd >= 0) {
		s->ks_cache_err = ksym_cache_load_core(s->ks_dirfd, s->kallsyms_path, out);
		if (!s->ks_cache_err) {
			s->ks_core_only = kallsyms_at(*out, 0, &s->ks_lo) &&
					  kallsyms_at(*out, kallsyms_count(*out) - 1, &s->ks_hi);
			return 0;
		}
	}
	s->ks_cache_err = ksym_cache_load(s->ks_dirfd, s->ks_iter_fd, out);
	if (!s->ks_cache_err) {
		/* The tests' proof that the two ways give one table, and that
		 * program info names BPF functions as the kernel does. */
		if (check && !kallsyms_load(s->kallsyms_path, &full)) {
			s->ks_check_diff = ksym_cache_diff(*out, full, &s->ks_check_bpf);
			s->ks_check_info =
				check_bpf_info(full, s->kallsyms_path, &s->ks_check_stable);
			/* Programs load and unload while the tables are read
			 * (ours among them, on other threads): a difference is
			 * looked at again once; a naming that is wrong stays. */
			if (s->ks_check_info != s->ks_check_stable) {
				kallsyms_free(full);
				full = NULL;
				if (!kallsyms_load(s->kallsyms_path, &full))
					s->ks_check_info = check_bpf_info(full, s->kallsyms_path,
									  &s->ks_check_stable);
			}
			s->ks_checked = true;
			kallsyms_free(full);
		}
		return 0;
	}
	/* A good file that only lacks the iterator is not written again. */
	return ksym_cache_full_load(s->ks_cache_err == -ENOTSUP ? -1 : s->ks_dirfd,
				    s->kallsyms_path, out);
}

static void log_kernel_syms(const struct symbolizer *s)
{
	if (s->ks_iter_fd < 0 && s->ks_dirfd < 0)
		return;
	if (!s->ks_cache_err && s->ks_core_only)
		log_info("kallsyms: core kernel from this boot's cache; BPF programs from their "
			 "info and the rest from the kernel's iterator when a frame needs them");
	else if (!s->ks_cache_err)
		log_info("kallsyms: core kernel from this boot's cache, the rest from the kernel's "
			 "iterator");
	else
		log_info("kallsyms: read whole (boot cache: %s)", strerror(-s->ks_cache_err));
	if (s->ks_checked)
		log_info("kallsyms check: %zu entries unlike /proc/kallsyms, %zu [bpf] symbols "
			 "alike, %zu named alike by program info of %zu loaded throughout",
			 s->ks_check_diff, s->ks_check_bpf, s->ks_check_info, s->ks_check_stable);
}

/* An address outside the core kernel with only the core loaded: a BPF
 * function named from its program's info (read once), else the rest of
 * the table from the iterator (once; the table then holds everything). */
static const char *beyond_core(struct symbolizer *s, uint64_t addr, uint64_t *off)
{
	struct kallsyms *full;
	const char *name;
	int err;

	if (!s->bpfks_tried) {
		s->bpfks_tried = true;
		err = bpf_ksyms_load(&s->bpfks);
		if (err)
			log_info("kallsyms: BPF program info not read (%s)", strerror(-err));
		else
			log_info("kallsyms: %zu BPF functions from program info",
				 bpf_ksyms_count(s->bpfks));
	}
	name = s->bpfks ? bpf_ksyms_lookup(s->bpfks, addr, off) : NULL;
	if (name || s->ks_rest_tried)
		return name;
	s->ks_rest_tried = true;
	err = ksym_cache_load_rest(s->ks, s->ks_iter_fd, &full);
	if (err) {
		log_warn("kallsyms: cannot read the module and BPF symbols (%s): kernel frames "
			 "outside the core kernel are [unknown]",
			 strerror(-err));
		return NULL;
	}
	log_info("kallsyms: modules and the rest read for a frame at 0x%" PRIx64, addr);
	kallsyms_free(s->ks);
	s->ks = full;
	s->ks_core_only = false;
	return NULL;
}

static int resolve_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	const char *name;
	uint64_t off = 0;
	char buf[64];

	if (!s->ks_tried) {
		int err;

		if (s->ks_loading) {
			uint64_t t0 = mono_ns();

			pthread_join(s->ks_thread, NULL);
			s->ks_loading = false;
			s->ks = s->ks_pending;
			s->ks_pending = NULL;
			err = s->ks_err;
			log_info("kallsyms: loaded in %.1f ms off the recorder thread; the first "
				 "kernel frame waited %.1f ms for it",
				 (double)s->ks_load_ns / 1e6, (double)(mono_ns() - t0) / 1e6);
		} else {
			err = load_kernel_syms(s, &s->ks);
		}
		log_kernel_syms(s);
		s->ks_tried = true;
		if (err < 0)
			log_warn(
				"cannot read %s: %s; kernel frames will show as [unknown] [kernel]",
				s->kallsyms_path, strerror(-err));
		else if (kallsyms_restricted(s->ks))
			log_warn(
				"%s shows only zero addresses (kernel.kptr_restrict); kernel frames "
				"will show as [unknown] [kernel]",
				s->kallsyms_path);
	}
	if (!s->ks || kallsyms_restricted(s->ks))
		return set_result(s, out, "[unknown] [kernel]", "[kernel.kallsyms]", addr, 0,
				  false);
	if (s->ks_core_only && (addr < s->ks_lo || addr > s->ks_hi)) {
		name = beyond_core(s, addr, &off);
		if (name)
			return set_result(s, out, name, "[kernel.kallsyms]", addr, off, true);
	}
	name = kallsyms_lookup(s->ks, addr, &off);
	if (name)
		return set_result(s, out, name, "[kernel.kallsyms]", addr, off, true);
	snprintf(buf, sizeof(buf), "[unknown] [kernel]+0x%" PRIx64, addr);
	return set_result(s, out, buf, "[kernel.kallsyms]", addr, 0, false);
}

static void *kallsyms_thread(void *arg)
{
	struct symbolizer *s = arg;
	uint64_t t0 = mono_ns();

	s->ks_err = load_kernel_syms(s, &s->ks_pending);
	/* Logged by the joining thread: lines from two threads could mix. */
	s->ks_load_ns = mono_ns() - t0;
	return NULL;
}

void symbolizer_set_kernel_cache(struct symbolizer *s, int dirfd, int iter_link_fd)
{
	s->ks_dirfd = dirfd;
	s->ks_iter_fd = iter_link_fd;
}

int symbolizer_preload_kernel(struct symbolizer *s)
{
	int err;

	if (s->ks_tried || s->ks_loading)
		return 0;
	err = pthread_create(&s->ks_thread, NULL, kallsyms_thread, s);
	if (err)
		return -err; /* the first kernel frame loads it, as without preload */
	s->ks_loading = true;
	return 0;
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	struct cache_ent *e;
	int err;

	s->st.lookups++;
	/* A hash probe instead of a binary search plus interning the name. */
	e = cache_slot(&s->kcache, addr);
	if (e->used) {
		s->st.cache_hits++;
		*out = e->res;
	} else {
		err = resolve_kernel(s, addr, out);
		if (err)
			return err;
		cache_put(&s->kcache, addr, out, false);
	}
	if (!out->resolved)
		s->st.unresolved++;
	return 0;
}

/* ---- lifecycle ---- */

static char *dup_or(const char *v, const char *def)
{
	return strdup(v ? v : def);
}

int symbolizer_new(struct symbolizer **out, const struct symbolizer_opts *opts)
{
	static const struct symbolizer_opts none;
	struct symbolizer *s;

	*out = NULL;
	if (!opts)
		opts = &none;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->proc_root = dup_or(opts->proc_root, "/proc");
	s->kallsyms_path = dup_or(opts->kallsyms_path, "/proc/kallsyms");
	s->ks_dirfd = s->ks_iter_fd = -1;
	s->ks_cache_err = -ENOENT;
	s->perfmap_dir = dup_or(opts->perfmap_dir, "/tmp");
	if (opts->debuginfo_path)
		s->debuginfo_path = strdup(opts->debuginfo_path);
	if (!s->proc_root || !s->kallsyms_path || !s->perfmap_dir ||
	    (opts->debuginfo_path && !s->debuginfo_path) ||
	    cache_init(&s->kcache, KCACHE_INIT_CAP, KCACHE_MAX_CAP) < 0) {
		symbolizer_free(s);
		return -ENOMEM;
	}
	if (opts->reload_min_interval_ms < 0)
		s->reload_ns = -1;
	else
		s->reload_ns = (int64_t)(opts->reload_min_interval_ms ? opts->reload_min_interval_ms
								      : DEFAULT_RELOAD_MS) *
			       1000000;
	s->demangle = !opts->no_demangle;
	s->cb.find_elf = sym_find_elf;
	s->cb.find_debuginfo = sym_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

void symbolizer_prepare_pid(struct symbolizer *s, uint32_t pid)
{
	get_pid(s, pid);
}

void symbolizer_exec_pid(struct symbolizer *s, uint32_t pid, uint64_t ts_ns)
{
	struct pid_state *ps = s->pids[pid % PID_BUCKETS];

	dev_t dev;
	ino_t ino;

	while (ps && ps->pid != pid)
		ps = ps->next;
	if (!ps || ps->last_reload_ns >= ts_ns)
		return;
	/* Read before the event's time is not always read before the exec:
	 * a launched command is read as soon as its ELF is loaded, and the
	 * tracepoint fires after that. The same executable now means the
	 * same image; a process already gone keeps what was read. */
	exe_identity(s, pid, &dev, &ino);
	log_debug("symbolize: pid %u exec'ed: %s", pid,
		  !dev && !ino				     ? "gone, maps kept"
		  : dev == ps->exe_dev && ino == ps->exe_ino ? "same executable, maps kept"
							     : "maps dropped");
	if ((!dev && !ino) || (dev == ps->exe_dev && ino == ps->exe_ino))
		return;
	symbolizer_forget_pid(s, pid);
}

void symbolizer_forget_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state **pp = &s->pids[pid % PID_BUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct pid_state *ps = *pp;

			*pp = ps->next;
			if (s->last_ps == ps)
				s->last_ps = NULL;
			pid_state_free(ps);
			return;
		}
	}
}

static struct pid_state *find_pid(const struct symbolizer *s, uint32_t pid)
{
	struct pid_state *ps = s->pids[pid % PID_BUCKETS];

	while (ps && ps->pid != pid)
		ps = ps->next;
	return ps;
}

void symbolizer_retire_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state *ps = find_pid(s, pid);

	if (!ps || ps->retired)
		return;
	/* The oldest goes, unless its pid has been taken by a new process
	 * since (forgotten at the fork, then built again: not retired). */
	if (s->nretired == SYMBOLIZER_RETIRED_MAX) {
		struct pid_state *old = find_pid(s, s->retired[s->retired_head]);

		if (old && old->retired)
			symbolizer_forget_pid(s, old->pid);
		s->retired_head = (s->retired_head + 1) % SYMBOLIZER_RETIRED_MAX;
		s->nretired--;
	}
	ps->retired = true;
	s->retired[(s->retired_head + s->nretired) % SYMBOLIZER_RETIRED_MAX] = pid;
	s->nretired++;
}

void symbolizer_fork_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state *ps = find_pid(s, pid);

	if (ps && ps->retired)
		symbolizer_forget_pid(s, pid);
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < PID_BUCKETS; i++) {
		while (s->pids[i]) {
			struct pid_state *n = s->pids[i]->next;

			pid_state_free(s->pids[i]);
			s->pids[i] = n;
		}
	}
	if (s->ks_loading) {
		pthread_join(s->ks_thread, NULL);
		kallsyms_free(s->ks_pending);
	}
	kallsyms_free(s->ks);
	bpf_ksyms_free(s->bpfks);
	free(s->kcache.e);
	bid_tables_free(&s->bt);
	strtab_free(&s->strs);
	free(s->modfiles);
	ep_hashmap_free(&s->modfiles_idx);
	free(s->vdso_img);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s->perfmap_dir);
	free(s->debuginfo_path);
	free(s);
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st)
{
	*st = s->st;
}
