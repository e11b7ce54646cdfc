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
 *
 * This file holds the string table, the address caches, user-space
 * resolution and the lifecycle; symbolize_internal.h lists the others
 * (ELF opening, build-id tables, per-pid state, kernel symbols).
 */
#include "symbolize/symbolize_internal.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/bpf_ksyms.h"
#include "symbolize/demangle.h"
#include "symbolize/kallsyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/symidx.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

/* ---- string interning ---- */

const char *sym_intern(struct strtab *t, const char *s)
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
	d = dm ? sym_intern(t, dm) : NULL;
	free(dm);
	t->dem[id] = d ? d : interner_str(&t->in, (size_t)id);
	return t->dem[id];
}

static void strtab_free(struct strtab *t)
{
	interner_free(&t->in);
	free(t->dem);
}

char *sym_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&p, fmt, ap);
	va_end(ap);
	return r < 0 ? NULL : p;
}

/* ---- address caches (per pid, and the kernel's) ---- */

void sym_cache_clear(struct addr_cache *c)
{
	if (c->e)
		memset(c->e, 0, c->cap * sizeof(*c->e));
	c->n = 0;
}

int sym_cache_init(struct addr_cache *c, size_t cap, size_t max_cap)
{
	c->e = calloc(cap, sizeof(*c->e));
	c->cap = cap;
	c->max_cap = max_cap;
	c->n = 0;
	return c->e ? 0 : -ENOMEM;
}

/* The entry for addr, or the empty slot where it belongs. O(1) expected: the
 * load factor stays below 3/4. */
struct cache_ent *sym_cache_slot(const struct addr_cache *c, uint64_t addr)
{
	size_t mask = c->cap - 1;
	size_t j = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & mask;

	while (c->e[j].used && c->e[j].addr != addr)
		j = (j + 1) & mask;
	return &c->e[j];
}

void sym_cache_put(struct addr_cache *c, uint64_t addr, const struct sym_result *r, bool retry)
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
					*sym_cache_slot(c, old[i].addr) = old[i];
			free(old);
		} else {
			/* At the size limit (or out of memory) start over rather than grow. */
			sym_cache_clear(c);
		}
	}
	e = sym_cache_slot(c, addr);
	if (!e->used)
		c->n++;
	e->used = true;
	e->addr = addr;
	e->res = *r;
	e->retry = retry;
}

/* ---- resolution ---- */

int sym_set_result(struct symbolizer *s, struct sym_result *out, const char *name,
		   const char *module, uint64_t offset, uint64_t sym_off, bool resolved)
{
	out->name = resolved && s->demangle && demangle_candidate(name)
			    ? strtab_intern_demangled(&s->strs, name)
			    : sym_intern(&s->strs, name);
	out->module = module ? sym_intern(&s->strs, module) : NULL;
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
	return sym_set_result(s, out, buf, module, offset, 0, false);
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
		int32_t bid = sym_map_build_id(ps, (size_t)(m - ps->maps.maps));
		int err;

		if (bid >= 0) {
			const struct bid_ent *be = sym_bid_cache_find(&s->bt, (uint32_t)bid, foff);

			if (be) {
				s->st.buildid_hits++;
				if (be->resolved)
					return sym_set_result(s, out, be->name, m->path, foff,
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
		if (name) {
			err = sym_set_result(s, out, name, m->path, foff, soff, true);
		} else {
			err = set_unknown(s, out, proc_maps_basename(m->path), m->path, foff);
			/* Code runs from executable mappings only: an address in
			 * another one (ld.so.cache, mapped while dlopen ran, where
			 * the library then landed) says the maps are stale. */
			*retry = m->perms[2] != 'x';
		}
		/* "No symbol here" is only shared if the file was actually read. */
		if (!err && bid >= 0 && (name || have_elf))
			sym_bid_cache_put(s, (uint32_t)bid, foff, name ? out->name : NULL,
					  out->sym_offset);
		return err;
	}
	if (m && m->kind == PROC_MAP_VDSO) {
		name = dwfl_name(ps, addr, &soff, &have_elf);
		if (name)
			return sym_set_result(s, out, name, "[vdso]", addr - m->start, soff, true);
		return set_unknown(s, out, "[vdso]", "[vdso]", addr - m->start);
	}
	if (!m || m->kind == PROC_MAP_ANON) {
		if (!ps->pm_tried)
			sym_load_perfmap(ps);
		name = ps->pm ? perfmap_lookup(ps->pm, addr, &soff) : NULL;
		if (name)
			return sym_set_result(s, out, name, "[perf-map]", addr - (m ? m->start : 0),
					      soff, true);
		*retry = true;
	}
	if (!m) {
		snprintf(buf, sizeof(buf), "[unknown] 0x%" PRIx64, addr);
		return sym_set_result(s, out, buf, NULL, addr, 0, false);
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

/* addr is in a mapping code can run from, as ps's maps say. */
static bool in_code(const struct pid_state *ps, uint64_t addr)
{
	const struct proc_map *m = proc_maps_find(&ps->maps, addr);

	return m && m->perms[2] == 'x';
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
	ps = sym_get_pid(s, pid);
	if (!ps)
		return -ENOMEM;
	e = sym_cache_slot(&ps->cache, addr);
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
			sym_exe_identity(s, pid, &dev, &ino);
			if ((dev || ino) && (dev != ps->exe_dev || ino != ps->exe_ino)) {
				symbolizer_forget_pid(s, pid);
				s->st.reloads++;
				s->st.lookups--; /* counted again below */
				return symbolizer_user(s, pid, addr, out);
			}
		}
		if (may_reload(ps, now) || (maps_stale(ps) && !in_code(ps, addr))) {
			const struct proc_map *m = proc_maps_find(&ps->maps, addr);

			ps->last_reload_ns = now;
			/* Not in any known mapping, or in one no code runs from:
			 * maybe dlopen'ed or mmap'ed since. */
			if (!m || m->perms[2] != 'x') {
				s->st.reloads++;
				sym_load_maps(ps);
			}
			sym_load_perfmap(ps);
			err = resolve_user(ps, addr, out, &retry);
			if (err)
				return err;
		}
	}
	sym_cache_put(&ps->cache, addr, out, retry);
	if (!out->resolved)
		s->st.unresolved++;
	return 0;
}

struct Dwfl *symbolizer_dwfl(struct symbolizer *s, uint32_t pid)
{
	struct pid_state *ps = sym_get_pid(s, pid);

	return ps ? ps->dwfl : NULL;
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
	    sym_cache_init(&s->kcache, KCACHE_INIT_CAP, KCACHE_MAX_CAP) < 0) {
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
	sym_get_pid(s, pid);
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
	sym_exe_identity(s, pid, &dev, &ino);
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
			sym_pid_state_free(ps);
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

			sym_pid_state_free(s->pids[i]);
			s->pids[i] = n;
		}
	}
	if (s->ks_loading) {
		pthread_join(s->ks_thread, NULL);
		kallsyms_free(s->ks_pending);
	}
	kallsyms_free(s->ks);
	kallsyms_free(s->ks_rest);
	bpf_ksyms_free(s->bpfks);
	free(s->kcache.e);
	sym_bid_tables_free(&s->bt);
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
