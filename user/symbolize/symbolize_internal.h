/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The symbolizer's state, shared by the files that implement it
 * (symbolize.c, symbolize_elf.c, symbolize_buildid.c, symbolize_pid.c,
 * symbolize_kernel.c). Not part of the interface: see symbolize.h.
 */
#ifndef EBPF_PROF_SYMBOLIZE_INTERNAL_H
#define EBPF_PROF_SYMBOLIZE_INTERNAL_H

#include <elfutils/libdwfl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "proc/proc_maps.h"
#include "proc/target_open.h"
#include "symbolize/symbolize.h"
#include "util/hashmap.h"
#include "util/interner.h"

#define MAPS_MAX_BYTES	 (64u << 20)
#define MAPS_MAX_ENTRIES (1u << 20)
#define CACHE_INIT_CAP	 1024u
/* Per-process address caches: 56-byte entries, at most 1.8 MiB each; when
 * 3/4 full it is emptied and refilled. Kept small on purpose: every distinct
 * leaf address of a hot loop takes an entry, so a larger bound is only
 * reached after hours and the collector's memory would grow all that time. */
#define CACHE_MAX_CAP	  (1u << 15)
#define PID_BUCKETS	  256u
#define DEFAULT_RELOAD_MS 250
#define VDSO_MAX_SIZE	  (1u << 20)
/* Build-id cache bounds. Entries are 32 bytes plus 12 bytes per index slot:
 * at most about 0.7 MiB. When full it is emptied and refilled (the
 * per-process caches in front of it take most lookups). */
#define BID_CACHE_MAX (1u << 14)
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

/* Names handed out, interned (symbolize.c). */
struct strtab {
	struct interner in;
	/* Per id, for names worth demangling: the interned demangled form,
	 * the id's own string if it does not demangle, NULL if not tried. */
	const char **dem;
	size_t capdem;
};
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
	struct kallsyms *ks_rest; /* the rest, once read (beside ks, not merged) */
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

/* symbolize_elf.c */
int sym_open_mapped(struct pid_state *ps, uint64_t start, uint64_t end, const char *path,
		    uint64_t inode, bool deleted);
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		       char **debuginfo_file_name);
int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		 char **file_name, Elf **elfp);

/* symbolize_buildid.c */
int32_t sym_map_build_id(struct pid_state *ps, size_t idx);
const struct bid_ent *sym_bid_cache_find(const struct bid_tables *bt, uint32_t bid, uint64_t foff);
void sym_bid_cache_put(struct symbolizer *s, uint32_t bid, uint64_t foff, const char *name,
		       uint64_t sym_off);
void sym_bid_tables_free(struct bid_tables *bt);

/* symbolize.c */
const char *sym_intern(struct strtab *t, const char *s);
char *sym_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sym_cache_clear(struct addr_cache *c);
int sym_cache_init(struct addr_cache *c, size_t cap, size_t max_cap);
struct cache_ent *sym_cache_slot(const struct addr_cache *c, uint64_t addr);
void sym_cache_put(struct addr_cache *c, uint64_t addr, const struct sym_result *r, bool retry);

/* symbolize_pid.c */
int sym_load_maps(struct pid_state *ps);
void sym_pid_state_free(struct pid_state *ps);
void sym_exe_identity(const struct symbolizer *s, uint32_t pid, dev_t *dev, ino_t *ino);
struct pid_state *sym_get_pid(struct symbolizer *s, uint32_t pid);
void sym_load_perfmap(struct pid_state *ps);

/* symbolize.c: a result with its strings interned. */
int sym_set_result(struct symbolizer *s, struct sym_result *out, const char *name,
		   const char *module, uint64_t offset, uint64_t sym_off, bool resolved);

#endif
