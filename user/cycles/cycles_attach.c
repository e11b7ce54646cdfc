// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Attaching the cycle boundaries: which BPF programs the kernel took (and
 * the fallbacks when it refused one), then per target the --cycle probe,
 * py:FUNCTION's USDT points, the marker (USDT or uprobes) and CPython's GC
 * probes, found in the files it maps. Apart from cycles_module.c because
 * it is the only code that looks at a target's files; poll calls
 * cycles_scan_target again for libraries loaded later.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cycles/cycles_internal.h"
#include "kernel/kfeat.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "overload/links.h"
#include "probes/uprobe_discovery.h"
#include "proc/proc_maps.h"
#include "python/pyframes.h"
#include "util/clock.h"
#include "util/log.h"
#include "proc/target_open.h"
#include "util/vec.h"

/* The cookie of a function boundary's entry (its return's is
 * EP_CYC_END | EP_CYC_COOKIE_DEPTH). */
static uint64_t entry_cookie(const struct cycles_state *s)
{
	return s->spec.every ? EP_CYC_ENTRY : (EP_CYC_BEGIN | EP_CYC_COOKIE_DEPTH);
}

/* The cycle marker by uprobes on its functions instead of its USDT points. */
static bool marker_by_uprobes(const struct cycles_state *s)
{
	return s->usdt_refused && (s->spec.src == CYC_SRC_AUTO || s->spec.src == CYC_SRC_MARKER);
}

const char *cm_bpf_refused(void *state, const char *prog)
{
	struct cycles_state *s = state;

	if (!s->cookie_refused && (!strcmp(prog, "cycle_entry") || !strcmp(prog, "cycle_return"))) {
		s->cookie_refused = true;
		if (s->spec.src == CYC_SRC_UPROBE || marker_by_uprobes(s))
			return "its twins without attach cookies loaded instead: the same cycle "
			       "boundaries";
		/* Loaded on every run with cookies, used by function
		 * boundaries only. */
		return "not needed by this run's cycle boundaries (its twin without attach cookies "
		       "would serve them): nothing lost";
	}
	if (!s->usdt_refused && !strcmp(prog, "cycle_usdt")) {
		s->usdt_refused = true;
		switch (s->spec.src) {
		case CYC_SRC_USDT:
			s->refused_need = prog;
			return NULL;
		case CYC_SRC_PY:
			if (!s->py_by_watch) {
				s->refused_need = prog;
				return NULL;
			}
			break;
		case CYC_SRC_AUTO:
		case CYC_SRC_MARKER:
			return "the cycle marker is attached by uprobes on ebpf_prof_cycle_begin/end "
			       "instead of its USDT points (the same cycles; ebpf_prof_cycle_traced() "
			       "stays 0); no CPython GC column";
		case CYC_SRC_UPROBE:
			break;
		}
		return "no CPython GC column (its gc__start/gc__done USDT points); the cycle "
		       "boundaries are not USDT points and stay";
	}
	if (!s->watch_refused && !strcmp(prog, "cycle_watch")) {
		s->watch_refused = true;
		s->py_by_watch = false;
		pyframes_on_code(s->ctx->py, NULL, NULL, NULL);
		if (s->usdt_refused) {
			s->refused_need = prog;
			return NULL;
		}
		return "py: cycles from CPython's USDT points (function__entry/return), not a "
		       "watchpoint on the function's code object: every Python call traps, and a "
		       "CPython without the points gives no cycle";
	}
	return NULL;
}

int cm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct cycles_state *s = state;

	if (!s->ctx->cycles)
		return 0; /* whole run only */
	/* Function boundaries say begin/end in their uprobe's cookie (5.15+);
	 * without cookies the run's one function boundary has its cookies
	 * in .rodata (cycle_entry_nc/cycle_return_nc). USDT ones (the
	 * marker, usdt:, py:) do not need them. */
	s->no_cookie = !s->ctx->kf->have[KFEAT_ATTACH_COOKIE] || s->cookie_refused;
	bpf_program__set_autoload(skel->progs.cycle_entry, !s->no_cookie);
	bpf_program__set_autoload(skel->progs.cycle_return, !s->no_cookie);
	bpf_program__set_autoload(skel->progs.cycle_entry_nc,
				  s->no_cookie &&
					  (s->spec.src == CYC_SRC_UPROBE || marker_by_uprobes(s)));
	bpf_program__set_autoload(skel->progs.cycle_return_nc,
				  s->no_cookie &&
					  ((s->spec.src == CYC_SRC_UPROBE && !s->spec.every) ||
					   marker_by_uprobes(s)));
	if (s->no_cookie && s->spec.src == CYC_SRC_UPROBE) {
		skel->rodata->cycle_entry_cookie = entry_cookie(s);
		skel->rodata->cycle_return_cookie = EP_CYC_END | EP_CYC_COOKIE_DEPTH;
	} else if (s->no_cookie && marker_by_uprobes(s)) {
		/* Both at function entries (attach_marker_point). */
		skel->rodata->cycle_entry_cookie = EP_CYC_BEGIN;
		skel->rodata->cycle_return_cookie = EP_CYC_END;
	}
	bpf_program__set_autoload(skel->progs.cycle_usdt, !s->usdt_refused);
	if (s->spec.src == CYC_SRC_PY) {
		memcpy((char *)skel->rodata->py_name, s->spec.py_name, sizeof(s->spec.py_name));
		skel->rodata->py_name_len = (uint32_t)strlen(s->spec.py_name) + 1;
		/* CPython's USDT points pass the function's own name and
		 * file: a class or module part is not checked there. */
		if (!s->py_by_watch && strcmp(s->spec.py.text, s->spec.py_name))
			log_warn("cycles: --cycle %s by CPython's USDT points: only the "
				 "function's name (%s) is compared, any class or module",
				 s->spec.text, s->spec.py_name);
	}
	skel->rodata->watch_kind = s->spec.every ? EP_CYC_ENTRY : EP_CYC_BEGIN;
	bpf_program__set_autoload(skel->progs.cycle_watch, s->py_by_watch);
	return 1;
}

int cm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct cycles_state *s = state;

	if (!skel) {
		/* Asked-for boundaries that cannot be attached are an error;
		 * without them the run is one cycle as before. */
		if (s->spec.src != CYC_SRC_AUTO && s->refused_need) {
			log_error("cycles: cannot load the BPF programs for --cycle%s %s: this "
				  "kernel refuses %s (the line above says why), without which it "
				  "cannot be served%s",
				  s->spec.every ? "-every" : "", s->spec.text, s->refused_need,
				  s->spec.src == CYC_SRC_MARKER || s->spec.src == CYC_SRC_UPROBE
					  ? ""
					  : "; a function boundary (--cycle LIB:SYMBOL) or the "
					    "cycle marker needs no USDT program");
			return err;
		}
		if (s->spec.src != CYC_SRC_AUTO) {
			log_error("cycles: cannot load the BPF programs for --cycle%s %s: %s (run "
				  "with -vv for the verifier log)",
				  s->spec.every ? "-every" : "", s->spec.text, strerror(-err));
			return err;
		}
		log_info("cycles: no cycle boundaries: cannot load the BPF programs: %s",
			 strerror(-err));
		return 0;
	}
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.cycle_events), cycles_on_event, s, NULL);
	if (!s->rb) {
		err = -errno;
		log_error("cycles: cannot set up the ring buffer: %s", strerror(-err));
		return err;
	}
	s->skel = skel;
	if (s->py_by_watch) {
		struct py_watch_cfg wc = {
			.proc_root = s->ctx->opts->proc_root,
			.prog = skel->progs.cycle_watch,
			.rc_map_fd = bpf_map__fd(skel->maps.cycle_watch_rc),
		};

		/* Its boundaries come with their calls: no chained ends (those
		 * are for CPython 3.11's USDT points, the fallback when the
		 * kernel refuses cycle_watch). */
		cycle_sink_no_chain(s->ctx->cycles);

		err = py_watch_new(&s->pw, &wc);
		if (err) {
			log_error("cycles: cannot set up --cycle %s: %s", s->spec.text,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

static int attach_usdt(struct cycles_state *s, struct ctarget *t, const char *path,
		       const char *prov, const char *name, uint64_t cookie, bool quiet)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = cookie);
	struct bpf_link *l = bpf_program__attach_usdt(s->skel->progs.cycle_usdt, (pid_t)t->pid,
						      path, prov, name, &uo);
	int err = l ? uprobe_target_keep(&t->ut, l) : -errno;

	if (err && !quiet)
		log_warn("cycles: cannot attach usdt %s:%s in %s (pid %u): %s", prov, name, path,
			 t->pid, strerror(-err));
	return err;
}

static int attach_uprobe(struct cycles_state *s, struct ctarget *t, const char *path, uint64_t off,
			 uint64_t cookie, bool ret)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = s->no_cookie ? 0 : cookie, .retprobe = ret);
	const struct bpf_program *p =
		s->no_cookie
			? (ret ? s->skel->progs.cycle_return_nc : s->skel->progs.cycle_entry_nc)
			: (ret ? s->skel->progs.cycle_return : s->skel->progs.cycle_entry);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, (pid_t)t->pid, path, off, &o);

	return l ? uprobe_target_keep(&t->ut, l) : -errno;
}

/* A function of the cycle marker at its entry: with cookies cycle_entry
 * says begin or end in its cookie; without, the begin is cycle_entry_nc's
 * and the end cycle_return_nc's (set in .rodata, attached at the entry
 * too). */
static int attach_marker_point(struct cycles_state *s, struct ctarget *t, const char *path,
			       uint64_t off, bool end)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o,
		    .bpf_cookie = s->no_cookie ? 0
				  : end	       ? EP_CYC_END
					       : EP_CYC_BEGIN);
	const struct bpf_program *p = !s->no_cookie ? s->skel->progs.cycle_entry
				      : end	    ? s->skel->progs.cycle_return_nc
						    : s->skel->progs.cycle_entry_nc;
	struct bpf_link *l = bpf_program__attach_uprobe_opts(p, (pid_t)t->pid, path, off, &o);

	return l ? uprobe_target_keep(&t->ut, l) : -errno;
}

/* The cycle marker by uprobes on ebpf_prof_cycle_begin/end (the kernel
 * refused the USDT program): the functions run whether or not a tracer
 * raised their USDT points' semaphores. quiet: a file that may not have
 * them (the executable). */
static int attach_marker_uprobes(struct cycles_state *s, struct ctarget *t, const struct ud_file *f,
				 bool quiet)
{
	static const char *const names[2] = { "ebpf_prof_cycle_begin", "ebpf_prof_cycle_end" };
	uint64_t off[2] = { 0, 0 };
	size_t before = t->ut.nlinks;
	char path[512];
	int fd, n, err;

	fd = ud_open_mapped(s->ctx->opts->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0)
		return fd;
	n = ud_find_functions(fd, names, 2, off);
	close(fd);
	if (n < 0 || !off[0] || !off[1]) {
		if (!quiet)
			log_warn("cycles: pid %u: %s: no ebpf_prof_cycle_begin/end to attach the "
				 "cycle marker to",
				 t->pid, f->path);
		return n < 0 ? n : -ENOENT;
	}
	/* End first, as a function boundary's return: a cycle in progress
	 * now ends unmatched (counted) instead of never. */
	err = attach_marker_point(s, t, path, off[1], true);
	if (!err)
		err = attach_marker_point(s, t, path, off[0], false);
	if (err) {
		uprobe_target_unwind(&t->ut, before);
		log_warn("cycles: cannot attach the cycle marker in %s (pid %u): %s", f->path,
			 t->pid, strerror(-err));
	}
	return err;
}

static bool is_python(const char *path)
{
	const char *b = proc_maps_basename(path);

	return !strncmp(b, "python3", 7) || !strncmp(b, "libpython3", 10);
}

static void scan_uprobe(struct cycles_state *s, struct ctarget *t, const struct ud_file *f)
{
	const struct probe_def *d = &s->spec.def;
	const char *names[1] = { d->symbol };
	const char *opt = s->spec.every ? "-every" : "";
	uint64_t off = 0, begin;
	char path[512];
	size_t before = t->ut.nlinks;
	/* A bare SYMBOL: wherever it is defined (quietly where it is not). */
	bool anywhere = !d->lib;
	int fd, n, err;

	if (!anywhere && !ud_lib_matches(d->lib, f->path))
		return;
	fd = ud_open_mapped(s->ctx->opts->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0) {
		if (!anywhere)
			log_warn("cycles: --cycle%s %s: cannot open %s: %s", opt, s->spec.text,
				 f->path, target_open_strerror(fd));
		return;
	}
	n = ud_find_functions(fd, names, 1, &off);
	close(fd);
	if (n <= 0 || !off) {
		if (!anywhere)
			log_warn("cycles: --cycle%s %s: symbol %s not found in %s", opt,
				 s->spec.text, d->symbol, f->path);
		return;
	}
	/* Return first: a call entered between the two attaches would
	 * otherwise raise the thread's depth for good (its return unseen),
	 * and no later call would be outermost: one cycle for the whole run
	 * (seen on a running target under emulation). A call in progress
	 * now ends unmatched instead (counted). */
	begin = entry_cookie(s);
	err = s->spec.every
		      ? 0
		      : attach_uprobe(s, t, path, off, EP_CYC_END | EP_CYC_COOKIE_DEPTH, true);
	if (!err)
		err = attach_uprobe(s, t, path, off, begin, false);
	if (err) {
		uprobe_target_unwind(&t->ut, before);
		log_warn("cycles: cannot attach %s in %s (pid %u): %s", s->spec.text, path, t->pid,
			 strerror(-err));
		return;
	}
	s->nboundary_links++;
	log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text, f->path);
	/* Two files of one process define it (a static copy, two versions
	 * of a library): a call through one into the other would begin two
	 * cycles. Said, not guessed. */
	if (t->bound_path)
		log_warn("cycles: --cycle%s %s: pid %u: %s is in %s and in %s, attached in both; "
			 "name the file (LIB:%s) if only one runs the loop",
			 opt, s->spec.text, t->pid, d->symbol, t->bound_path, f->path, d->symbol);
	else
		t->bound_path = strdup(f->path);
}

static void attach_gc(struct cycles_state *s, struct ctarget *t, const char *path);

static void scan_file(struct cycles_state *s, struct ctarget *t, const struct ud_file *f,
		      const char *exe)
{
	const char *base = proc_maps_basename(f->path);

	/* CPython's GC, whatever defines the cycles: its time is a column.
	 * Not before there can be cycles: enabling the probes makes every
	 * collection trap (a marker found later attaches them then). Before
	 * this file's boundary: the line that says the boundary is in comes
	 * with the GC column complete from the first cycle. */
	if (is_python(f->path)) {
		if (s->spec.src == CYC_SRC_AUTO && !s->marker_found) {
			if (!t->py_path)
				t->py_path = strdup(f->path);
		} else {
			attach_gc(s, t, f->path);
		}
	}
	switch (s->spec.src) {
	case CYC_SRC_UPROBE:
		scan_uprobe(s, t, f);
		break;
	case CYC_SRC_USDT:
		if (ud_lib_matches(s->spec.def.lib, f->path) &&
		    !attach_usdt(s, t, f->path, s->spec.def.usdt_provider, s->spec.def.symbol,
				 EP_CYC_ENTRY, false)) {
			s->nboundary_links++;
			log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text,
				 f->path);
		}
		break;
	case CYC_SRC_PY: {
		size_t before = t->ut.nlinks;
		uint64_t entry = s->spec.every ? EP_CYC_ENTRY : EP_CYC_BEGIN | EP_CYC_COOKIE_DEPTH;
		int err;

		if (!is_python(f->path) || s->py_by_watch)
			break;
		/* Quiet: an interpreter built without --with-dtrace (pyenv,
		 * most self-built ones) has no probes; said once at the end. */
		err = attach_usdt(s, t, f->path, "python", "function__entry",
				  entry | EP_CYC_COOKIE_PY, true);
		if (!err && !s->spec.every)
			err = attach_usdt(s, t, f->path, "python", "function__return",
					  EP_CYC_END | EP_CYC_COOKIE_PY | EP_CYC_COOKIE_DEPTH,
					  true);
		if (err) {
			uprobe_target_unwind(&t->ut, before);
			log_info("cycles: pid %u: no CPython USDT probes in %s: %s", t->pid,
				 f->path, strerror(-err));
			snprintf(s->py_missing, sizeof(s->py_missing), "%s", f->path);
			break;
		}
		s->nboundary_links++;
		log_info("cycles: pid %u: cycle boundary %s in %s", t->pid, s->spec.text, f->path);
		break;
	}
	case CYC_SRC_AUTO:
	case CYC_SRC_MARKER:
		/* The marker lives in its library or is linked into the
		 * program: look only there, not in every mapped file. */
		if (!strncmp(base, "libebpf_prof_cycle", 18) || (exe && !strcmp(exe, f->path))) {
			bool quiet = strncmp(base, "libebpf_prof_cycle", 18) != 0;

			if (s->usdt_refused
				    ? !attach_marker_uprobes(s, t, f, quiet)
				    : !attach_usdt(s, t, f->path, "ebpf_prof", "cycle_begin",
						   EP_CYC_BEGIN, quiet) &&
					      !attach_usdt(s, t, f->path, "ebpf_prof", "cycle_end",
							   EP_CYC_END, quiet)) {
				s->nboundary_links++;
				s->marker_found = true;
				/* The GC column from the first cycle on: its probes
				 * before the line that says the marker is in. */
				if (t->py_path) {
					attach_gc(s, t, t->py_path);
					free(t->py_path);
					t->py_path = NULL;
				}
				log_info("cycles: pid %u: cycle marker in %s", t->pid, f->path);
			}
		}
		break;
	}
}

static void attach_gc(struct cycles_state *s, struct ctarget *t, const char *path)
{
	size_t before = t->ut.nlinks;

	if (s->usdt_refused)
		return; /* no USDT program: no GC column (said at load) */
	if (!attach_usdt(s, t, path, "python", "gc__start", EP_CYC_GC_START, true) &&
	    !attach_usdt(s, t, path, "python", "gc__done", EP_CYC_GC_DONE, true)) {
		s->ngc_links++;
		return;
	}
	uprobe_target_unwind(&t->ut, before);
}

/* --cycle py: on an interpreter without the USDT probes (pyenv's and most
 * self-built ones: no --with-dtrace) can give no cycle: said as soon as it
 * is known, naming the interpreter and the marker, so the user does not
 * find out at the end of a long run. Known: the process's libpython has
 * none, or its python executable has none and the start-up libraries are
 * mapped (libc) without a libpython (a static interpreter). */
static void warn_py_missing(struct cycles_state *s, const struct ctarget *t,
			    const struct ud_file *files, size_t n)
{
	const char *lib = NULL;
	bool libc = false;

	for (size_t i = 0; i < n; i++) {
		const char *b = proc_maps_basename(files[i].path);

		if (!strncmp(b, "libpython3", 10))
			lib = files[i].path;
		else if (!strncmp(b, "libc.so", 7) || !strncmp(b, "libc-", 5))
			libc = true;
	}
	if (lib ? strcmp(lib, s->py_missing) != 0 : !libc)
		return;
	s->py_warned = true;
	if (s->watch_refused)
		log_warn("cycles: --cycle%s %s: pid %u runs %s, a CPython without the USDT probes "
			 "(built without --with-dtrace) that py:FUNCTION needs when the kernel "
			 "refuses the watchpoint program (cycle_watch): no cycles from it; bracket "
			 "the loop with the cycle marker instead "
			 "(tools/cycle_marker/ebpf_prof_cycle.py: `with cycle(i): ...`, "
			 "docs/cycles.md)",
			 s->spec.every ? "-every" : "", s->spec.text, t->pid, s->py_missing);
	else
		log_warn("cycles: --cycle%s %s: pid %u runs %s, a CPython without the USDT probes "
			 "(built without --with-dtrace) that py:FUNCTION needs with --python "
			 "native: no cycles from it; without --python native py: cycles watch the "
			 "function's code object instead, or bracket the loop with the cycle "
			 "marker (tools/cycle_marker/ebpf_prof_cycle.py: `with cycle(i): ...`, "
			 "docs/cycles.md)",
			 s->spec.every ? "-every" : "", s->spec.text, t->pid, s->py_missing);
}

void cycles_scan_target(struct cycles_state *s, struct ctarget *t)
{
	struct proc_maps pm;
	struct ud_file *files;
	char path[128], exe[512];
	size_t n, before = s->nboundary_links;
	ssize_t el;

	snprintf(path, sizeof(path), "%s/%u/exe", s->ctx->opts->proc_root, t->pid);
	el = readlink(path, exe, sizeof(exe) - 1);
	exe[el > 0 ? el : 0] = '\0';
	if (uprobe_target_files(s->ctx->opts->proc_root, t->pid, MAX_MAPS_BYTES, MAX_EXEC_FILES,
				&pm, &files, &n))
		return; /* gone: on_exit follows */
	for (size_t i = 0; i < n; i++)
		if (!uprobe_target_seen(&t->ut, &files[i]))
			scan_file(s, t, &files[i], exe[0] ? exe : NULL);
	t->bound = t->bound || s->nboundary_links > before;
	if (s->spec.src == CYC_SRC_PY && !t->bound && s->py_missing[0] && !s->py_warned)
		warn_py_missing(s, t, files, n);
	free(files);
	proc_maps_free(&pm);
	for (size_t i = 0; s->marker_found && i < s->tg.n; i++) {
		struct ctarget *g = uprobe_targets_at(&s->tg, i);

		if (g->py_path && !g->exited) {
			attach_gc(s, g, g->py_path);
			free(g->py_path);
			free(g->bound_path);
			g->py_path = NULL;
			g->bound_path = NULL;
		}
	}
	/* Facts are kept from the first boundary attached: none can come
	 * before it. */
	if (s->nboundary_links)
		cycle_sink_set_active(s->ctx->cycles, true);
}

int cm_add_target(void *state, uint32_t pid)
{
	struct cycles_state *s = state;
	struct ctarget t = { .pid = pid };

	if (!s->tg.n && !s->main_pid) {
		cycle_sink_set_main_pid(s->ctx->cycles, pid);
		s->main_pid = pid;
	}
	if (!s->skel)
		return 0;
	return uprobe_targets_add(&s->tg, &t);
}

int cm_attach(void *state)
{
	struct cycles_state *s = state;

	if (!s->skel)
		return 0;
	for (size_t i = 0; i < s->tg.n; i++)
		cycles_scan_target(s, uprobe_targets_at(&s->tg, i));
	s->next_rescan = 0;
	return 0;
}
