// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer: see symbolize.h and docs/symbolization.md.
 *
 * Per pid we keep the parsed /proc/PID/maps, one libdwfl session (Dwfl) to
 * which every file-backed mapping group is reported with dwfl_report_module,
 * the JIT perf map, and a cache addr -> result. Names handed out are interned
 * in a symbolizer-wide string table, so they outlive the per-pid state.
 */
#include "symbolize.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kallsyms.h"
#include "log.h"
#include "perfmap.h"
#include "proc_maps.h"

#define MAPS_MAX_BYTES (64u << 20)
#define MAPS_MAX_ENTRIES (1u << 20)
#define CACHE_INIT_CAP 1024u
#define CACHE_MAX_CAP (1u << 18)
#define PID_BUCKETS 256u
#define DEFAULT_RELOAD_MS 250
#define VDSO_MAX_SIZE (1u << 20)

/* ---- string interning ---- */

struct strtab {
	char **slots;
	uint64_t *hashes;
	size_t cap, n;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int strtab_grow(struct strtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	char **ns = calloc(ncap, sizeof(*ns));
	uint64_t *nh = calloc(ncap, sizeof(*nh));

	if (!ns || !nh) {
		free(ns);
		free(nh);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = t->hashes[i] & (ncap - 1); ns[j]; j = (j + 1) & (ncap - 1))
			;
		ns[j] = t->slots[i];
		nh[j] = t->hashes[i];
	}
	free(t->slots);
	free(t->hashes);
	t->slots = ns;
	t->hashes = nh;
	t->cap = ncap;
	return 0;
}

static const char *strtab_intern(struct strtab *t, const char *s)
{
	uint64_t h = str_hash(s);
	size_t j;

	if ((t->n + 1) * 4 > t->cap * 3 && strtab_grow(t) < 0)
		return NULL;
	for (j = h & (t->cap - 1); t->slots[j]; j = (j + 1) & (t->cap - 1))
		if (t->hashes[j] == h && strcmp(t->slots[j], s) == 0)
			return t->slots[j];
	t->slots[j] = strdup(s);
	if (!t->slots[j])
		return NULL;
	t->hashes[j] = h;
	t->n++;
	return t->slots[j];
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i]);
	free(t->slots);
	free(t->hashes);
}

/* ---- per-pid state ---- */

struct cache_ent {
	uint64_t addr;
	struct sym_result res;
	bool used;
	bool retry; /* unresolved for a reason a reload might fix */
};

struct pid_state;

/* Userdata of one reported Dwfl module: which mapping backs it. */
struct mod_ctx {
	struct pid_state *ps;
	uint64_t start, end; /* the first VMA of the group, names map_files/<start>-<end> */
	uint64_t inode;
	bool deleted, vdso;
	char *path;
	struct mod_ctx *next;
};

struct pid_state {
	uint32_t pid;
	struct symbolizer *s;
	Dwfl *dwfl;
	struct proc_maps maps;
	struct mod_ctx *mods;
	struct cache_ent *cache;
	size_t cache_cap, cache_n;
	uint64_t last_reload_ns;
	bool same_root; /* /proc/PID/root is our own root: plain paths work */
	struct perfmap *pm;
	bool pm_tried;
	struct timespec pm_mtime;
	off_t pm_size;
	struct pid_state *next;
};

struct symbolizer {
	char *proc_root, *kallsyms_path, *perfmap_dir, *debuginfo_path;
	int64_t reload_ns;
	Dwfl_Callbacks cb; /* libdwfl keeps a pointer to it: must not move */
	struct pid_state *pids[PID_BUCKETS];
	struct strtab strs;
	struct kallsyms *ks;
	bool ks_tried;
	unsigned char *vdso_img; /* copy of our own vDSO: the kernel's image is the same */
	size_t vdso_img_size, vdso_map_size;
	bool vdso_tried;
	struct symbolizer_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

static int open_regular(const char *path, uint64_t want_inode)
{
	struct stat st;
	int fd;

	/* stat first: opening a device node that a target mapped could block or
	 * have side effects. */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (want_inode && (uint64_t)st.st_ino != want_inode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			char **file_name, Elf **elfp)
{
	struct mod_ctx *mc = *userdata;
	struct pid_state *ps;
	char *mf, *rp;
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
	/* map_files names exactly the mapped file, even if deleted or replaced
	 * on disk since, and in any mount namespace; it needs CAP_SYS_ADMIN. */
	mf = xasprintf("%s/%u/map_files/%" PRIx64 "-%" PRIx64, ps->s->proc_root, ps->pid,
		       mc->start, mc->end);
	fd = mf ? open_regular(mf, 0) : -1;
	free(mf);
	if (fd < 0 && !mc->deleted) {
		/* The inode check rejects a file replaced on disk since it was mapped:
		 * its symbols would give wrong names. */
		char *p = xasprintf("%s/%u/root%s", ps->s->proc_root, ps->pid, mc->path);

		fd = p ? open_regular(p, mc->inode) : -1;
		free(p);
	}
	if (fd < 0) {
		log_debug("symbolize: pid %u: cannot open %s%s (no map_files access?)", ps->pid,
			  mc->path, mc->deleted ? " (deleted)" : "");
		free(rp);
		return -1;
	}
	/* The name is where libdwfl looks for .gnu_debuglink siblings. */
	*file_name = rp;
	return fd;
}

/* ---- maps (re)loading ---- */

static void cache_clear(struct pid_state *ps)
{
	if (ps->cache)
		memset(ps->cache, 0, ps->cache_cap * sizeof(*ps->cache));
	ps->cache_n = 0;
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
	free(path);

	if (!file_maps_unchanged(&ps->maps, &nm))
		cache_clear(ps);
	proc_maps_free(&ps->maps);
	ps->maps = nm;

	dwfl_report_begin(ps->dwfl);
	for (i = 0; i < nm.n;) {
		const struct proc_map *first = &nm.maps[i];
		uint64_t end = first->end;
		size_t j = i + 1;

		if (first->kind == PROC_MAP_VDSO) {
			report_group(ps, first, end);
			i++;
			continue;
		}
		if (first->kind != PROC_MAP_FILE) {
			i++;
			continue;
		}
		while (j < nm.n && nm.maps[j].kind == PROC_MAP_FILE &&
		       nm.maps[j].inode == first->inode && nm.maps[j].start == nm.maps[j - 1].end &&
		       strcmp(nm.maps[j].path, first->path) == 0) {
			end = nm.maps[j].end;
			j++;
		}
		/* libdwfl derives the load bias from the module start, which must
		 * be where the file's first page (ELF header, first PT_LOAD) is. */
		if (first->pgoff == 0)
			report_group(ps, first, end);
		i = j;
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
		free(ps->mods);
		ps->mods = n;
	}
	proc_maps_free(&ps->maps);
	perfmap_free(ps->pm);
	free(ps->cache);
	free(ps);
}

static bool same_root(const char *proc_root, uint32_t pid)
{
	struct stat a, b;
	char *p = xasprintf("%s/%u/root", proc_root, pid);
	bool r;

	r = p && stat(p, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino;
	free(p);
	return r;
}

static struct pid_state *get_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state **bucket = &s->pids[pid % PID_BUCKETS], *ps;

	for (ps = *bucket; ps; ps = ps->next)
		if (ps->pid == pid)
			return ps;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->pid = pid;
	ps->s = s;
	ps->cache_cap = CACHE_INIT_CAP;
	ps->cache = calloc(ps->cache_cap, sizeof(*ps->cache));
	ps->dwfl = dwfl_begin(&s->cb);
	if (!ps->cache || !ps->dwfl) {
		pid_state_free(ps);
		return NULL;
	}
	ps->same_root = same_root(s->proc_root, pid);
	/* A process that cannot be read yields unresolved frames, not an error. */
	load_maps(ps);
	ps->last_reload_ns = now_ns();
	ps->next = *bucket;
	*bucket = ps;
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
	char *path, *pdir;
	uid_t owner = (uid_t)-1;
	int err;

	/* In another PID namespace the JIT wrote the file under its own pid and
	 * its own /tmp. */
	if (nspid != ps->pid)
		path = xasprintf("%s/%u/root%s/perf-%u.map", s->proc_root, ps->pid, s->perfmap_dir,
				 nspid);
	else
		path = xasprintf("%s/perf-%u.map", s->perfmap_dir, ps->pid);
	pdir = xasprintf("%s/%u", s->proc_root, ps->pid);
	if (!path || !pdir)
		goto out;
	if (stat(pdir, &pst) == 0)
		owner = pst.st_uid;
	if (stat(path, &st) < 0)
		goto out;
	if (ps->pm_tried && st.st_size == ps->pm_size &&
	    st.st_mtim.tv_sec == ps->pm_mtime.tv_sec && st.st_mtim.tv_nsec == ps->pm_mtime.tv_nsec)
		goto out;
	ps->pm_size = st.st_size;
	ps->pm_mtime = st.st_mtim;
	err = perfmap_load(path, owner, &pm);
	if (err < 0) {
		log_debug("symbolize: cannot load %s: %s", path, strerror(-err));
		goto out;
	}
	if (perfmap_bad_lines(pm) || perfmap_truncated(pm))
		log_debug("symbolize: %s: %zu bad lines%s", path, perfmap_bad_lines(pm),
			  perfmap_truncated(pm) ? ", truncated" : "");
	perfmap_free(ps->pm);
	ps->pm = pm;
out:
	ps->pm_tried = true;
	free(path);
	free(pdir);
}

/* ---- resolution ---- */

static int set_result(struct symbolizer *s, struct sym_result *out, const char *name,
		      const char *module, uint64_t offset, uint64_t sym_off, bool resolved)
{
	out->name = strtab_intern(&s->strs, name);
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

/* Name of the symbol containing addr, or NULL; never the symbol before a gap. */
static const char *dwfl_name(struct pid_state *ps, uint64_t addr, uint64_t *sym_off)
{
	Dwfl_Module *mod = dwfl_addrmodule(ps->dwfl, addr);
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name;

	if (!mod)
		return NULL;
	name = dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);
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
	char buf[64];

	*retry = false;
	if (m && m->kind == PROC_MAP_FILE) {
		uint64_t foff = addr - m->start + m->pgoff;

		name = dwfl_name(ps, addr, &soff);
		if (name)
			return set_result(s, out, name, m->path, foff, soff, true);
		return set_unknown(s, out, proc_maps_basename(m->path), m->path, foff);
	}
	if (m && m->kind == PROC_MAP_VDSO) {
		name = dwfl_name(ps, addr, &soff);
		if (name)
			return set_result(s, out, name, "[vdso]", addr - m->start, soff, true);
		return set_unknown(s, out, "[vdso]", "[vdso]", addr - m->start);
	}
	if (!m || m->kind == PROC_MAP_ANON) {
		if (!ps->pm_tried)
			load_perfmap(ps);
		name = ps->pm ? perfmap_lookup(ps->pm, addr, &soff) : NULL;
		if (name)
			return set_result(s, out, name, "[perf-map]", addr - (m ? m->start : 0), soff,
					  true);
		*retry = true;
	}
	if (!m) {
		snprintf(buf, sizeof(buf), "[unknown] 0x%" PRIx64, addr);
		return set_result(s, out, buf, NULL, addr, 0, false);
	}
	/* [heap], [stack], [anon:name] say more than a generic [anon]. */
	return set_unknown(s, out, m->path[0] == '[' ? m->path : "[anon]", NULL, addr - m->start);
}

static struct cache_ent *cache_slot(struct pid_state *ps, uint64_t addr)
{
	size_t mask = ps->cache_cap - 1;
	size_t j = (size_t)((addr * 0x9e3779b97f4a7c15ull) >> 20) & mask;

	while (ps->cache[j].used && ps->cache[j].addr != addr)
		j = (j + 1) & mask;
	return &ps->cache[j];
}

static void cache_put(struct pid_state *ps, uint64_t addr, const struct sym_result *r, bool retry)
{
	struct cache_ent *e;

	if ((ps->cache_n + 1) * 4 > ps->cache_cap * 3) {
		size_t ncap = ps->cache_cap * 2;
		struct cache_ent *nc = ncap <= CACHE_MAX_CAP ? calloc(ncap, sizeof(*nc)) : NULL;

		if (nc) {
			struct cache_ent *old = ps->cache;
			size_t ocap = ps->cache_cap;

			ps->cache = nc;
			ps->cache_cap = ncap;
			for (size_t i = 0; i < ocap; i++)
				if (old[i].used)
					*cache_slot(ps, old[i].addr) = old[i];
			free(old);
		} else {
			/* At the size limit (or out of memory) start over rather than grow. */
			cache_clear(ps);
		}
	}
	e = cache_slot(ps, addr);
	if (!e->used)
		ps->cache_n++;
	e->used = true;
	e->addr = addr;
	e->res = *r;
	e->retry = retry;
}

static bool may_reload(const struct pid_state *ps, uint64_t now)
{
	return ps->s->reload_ns < 0 || now - ps->last_reload_ns >= (uint64_t)ps->s->reload_ns;
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
	e = cache_slot(ps, addr);
	if (e->used && (!e->retry || !may_reload(ps, now_ns()))) {
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
		uint64_t now = now_ns();

		if (may_reload(ps, now)) {
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
	cache_put(ps, addr, out, retry);
	if (!out->resolved)
		s->st.unresolved++;
	return 0;
}

int symbolizer_kernel(struct symbolizer *s, uint64_t addr, struct sym_result *out)
{
	const char *name;
	uint64_t off = 0;
	char buf[64];

	s->st.lookups++;
	if (!s->ks_tried) {
		int err = kallsyms_load(s->kallsyms_path, &s->ks);

		s->ks_tried = true;
		if (err < 0)
			log_warn("cannot read %s: %s; kernel frames will show as [unknown] [kernel]",
				 s->kallsyms_path, strerror(-err));
		else if (kallsyms_restricted(s->ks))
			log_warn("%s shows only zero addresses (kernel.kptr_restrict); kernel frames "
				 "will show as [unknown] [kernel]",
				 s->kallsyms_path);
	}
	if (!s->ks || kallsyms_restricted(s->ks)) {
		s->st.unresolved++;
		return set_result(s, out, "[unknown] [kernel]", "[kernel.kallsyms]", addr, 0, false);
	}
	name = kallsyms_lookup(s->ks, addr, &off);
	if (name)
		return set_result(s, out, name, "[kernel.kallsyms]", addr, off, true);
	s->st.unresolved++;
	snprintf(buf, sizeof(buf), "[unknown] [kernel]+0x%" PRIx64, addr);
	return set_result(s, out, buf, "[kernel.kallsyms]", addr, 0, false);
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
	s->perfmap_dir = dup_or(opts->perfmap_dir, "/tmp");
	if (opts->debuginfo_path)
		s->debuginfo_path = strdup(opts->debuginfo_path);
	if (!s->proc_root || !s->kallsyms_path || !s->perfmap_dir ||
	    (opts->debuginfo_path && !s->debuginfo_path)) {
		symbolizer_free(s);
		return -ENOMEM;
	}
	if (opts->reload_min_interval_ms < 0)
		s->reload_ns = -1;
	else
		s->reload_ns = (int64_t)(opts->reload_min_interval_ms ? opts->reload_min_interval_ms
								      : DEFAULT_RELOAD_MS) *
			       1000000;
	s->cb.find_elf = sym_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.debuginfo_path = s->debuginfo_path ? &s->debuginfo_path : NULL;
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

void symbolizer_forget_pid(struct symbolizer *s, uint32_t pid)
{
	struct pid_state **pp = &s->pids[pid % PID_BUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct pid_state *ps = *pp;

			*pp = ps->next;
			pid_state_free(ps);
			return;
		}
	}
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
	kallsyms_free(s->ks);
	strtab_free(&s->strs);
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
