// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per-process state: the pid's maps read and (re)reported to its libdwfl
 * session as modules, its identity (root, executable), and its JIT perf
 * map. Apart from symbolize.c because it builds what resolution reads:
 * /proc/PID/maps, status and exe are read here.
 */
#include "symbolize/symbolize_internal.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "symbolize/symidx.h"
#include "util/clock.h"
#include "util/log.h"

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

int sym_load_maps(struct pid_state *ps)
{
	struct proc_maps nm;
	char *path, *buf;
	size_t len, i;
	int err;

	path = sym_xasprintf("%s/%u/maps", ps->s->proc_root, ps->pid);
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
		sym_cache_clear(&ps->cache);
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

void sym_pid_state_free(struct pid_state *ps)
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
void sym_exe_identity(const struct symbolizer *s, uint32_t pid, dev_t *dev, ino_t *ino)
{
	char *path = sym_xasprintf("%s/%u/exe", s->proc_root, pid);
	struct stat st;

	*dev = 0;
	*ino = 0;
	if (path && stat(path, &st) == 0) {
		*dev = st.st_dev;
		*ino = st.st_ino;
	}
	free(path);
}

struct pid_state *sym_get_pid(struct symbolizer *s, uint32_t pid)
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
	if (sym_cache_init(&ps->cache, CACHE_INIT_CAP, CACHE_MAX_CAP) < 0 || !ps->dwfl) {
		sym_pid_state_free(ps);
		return NULL;
	}
	/* Gone already: its files stay unreadable (credentials unknown). */
	target_ref_init(&ps->who, s->proc_root, pid);
	ps->same_root = ps->who.same_root;
	sym_exe_identity(s, pid, &ps->exe_dev, &ps->exe_ino);
	/* A process that cannot be read yields unresolved frames, not an error. */
	sym_load_maps(ps);
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
	char *path = sym_xasprintf("%s/%u/status", proc_root, pid), *buf = NULL, *l;
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

void sym_load_perfmap(struct pid_state *ps)
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
	path = sym_xasprintf("%s/perf-%u.map", s->perfmap_dir, nspid);
	pdir = sym_xasprintf("%s/%u", s->proc_root, ps->pid);
	if (!path || !pdir)
		goto out;
	rel = path;
	if (nspid != ps->pid) {
		root = sym_xasprintf("%s/%u/root", s->proc_root, ps->pid);
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
	 * [unknown]. Said once per process, and counted: a silent cut left
	 * those frames unexplained. */
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
