// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probes recording module: finds probed functions in what each traced
 * process has mapped, attaches uprobes/uretprobes (one link per process,
 * file and function; the probe id travels in the attach cookie), drains the
 * span ring buffer and aggregates it (probes_stats.c).
 *
 * Attachment is per process, not system-wide: a uprobe on libsqlite3 with
 * pid -1 would trap in every process on the machine that uses SQLite.
 * The one exception is ld.so's hook in launch mode (probes_attach.c
 * ldso_hook_global): two calls per exec and dlopen, and every process of
 * the launched tree needs it. The
 * in-kernel `targets` filter is still checked, so a child forked by a
 * target (which inherits the breakpoints in its copied memory) is covered
 * exactly when the sampler follows it, and re-scanned on add_target.
 *
 * New libraries are found by re-reading /proc/PID/maps when ld.so reports a
 * link-map change (a uprobe on _dl_debug_state, called after every dlopen
 * and at startup; on a kernel that refuses that program, when the sampler
 * sees a target map an executable file) and, as a backstop for loaders
 * that bypass ld.so, every RESCAN_PERIOD_NS.
 *
 * Once a probe is attached, the span ring is drained by a thread of its own,
 * every DRAIN_PERIOD_MS:
 * the recorder thread stalls for hundreds of milliseconds now and then (the
 * first symbolization of a large binary, e.g. 700 ms for python3.11 on this
 * VM), and spans arriving at 200k/s would overflow the ring meanwhile.
 * `lock` guards what the drain thread and the recorder's hooks share: the
 * stats and the targets' rescan flags (and the arrays holding both).
 *
 * This file: open/close, the BPF programs' set-up and fallbacks, targets,
 * poll and stop. Discovery and attach per target are in probes_attach.c,
 * the ring and its thread in probes_drain.c, launch-mode holds in
 * probes_hold.c, the live view and outputs in probes_output.c, the shared
 * state in probes_internal.h.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/vec.h"
#include "overload/links.h"
#include "cycles/cycle_sink.h"
#include "kernel/kfeat.h"
#include "kernel/vstat.h"
#include "util/log.h"
#include "overload/priority.h"
#include "probes/probes.h"
#include "probes/probes_internal.h"
#include "top/top_live.h"
#include "events/probes.h"
#include "kernel/skel_types.h"
#include "modules.skel.h"
#include "llama/llm_track.h"
#include "proc/proc_info.h"
#include "proc/proc_maps.h"
#include "probes/uprobe_discovery.h"
#include "probes/uprobe_target.h"
#include "llama/llama_facts.h"
#include "llama/llama_layout.h"

static void pm_close(void *state);

static int pm_open(void **state, const struct rec_ctx *ctx)
{
	const struct cli_opts *o = ctx->opts;
	struct probes_mod *m;
	uint32_t mask = PROBE_PRESET_ALL;
	char err[256] = "";
	int rc;

	*state = NULL;
	if (o->probe_presets && probe_parse_presets(o->probe_presets, &mask))
		return -EINVAL; /* cli_parse has validated it */
	/* Without a probe bus nobody can ask for probes later. */
	if (!mask && !o->nprobe_specs && !ctx->probe_bus)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	UPROBE_TARGETS_INIT(&m->tg, struct ptarget, pid, ut);
	if (pthread_mutex_init(&m->lock, NULL)) {
		free(m);
		return -ENOMEM;
	}
	m->lock_ok = true;
	rc = probe_specs_build(&m->specs, mask, (const char *const *)o->probe_specs,
			       (size_t)o->nprobe_specs, o->probe_count_only, err, sizeof(err));
	if (rc) {
		log_error("probes: %s", err[0] ? err : strerror(-rc));
		goto fail;
	}
	rc = -ENOMEM;
	m->st = probe_stats_new(o->trace_max_spans, MAX_SQL_STATEMENTS);
	m->llama = llama_facts_new(o->proc_root);
	m->llm = llm_tracker_new();
	if (!m->st || !m->llama || !m->llm)
		goto fail;
	/* The BPF side loads after every module's open hook (bpf_parts.h),
	 * once the other modules have made their requests. */
	*state = m;
	return 0;
fail:
	pm_close(m);
	return rc;
}

/* Adds the other modules' requests to the probe list. Their strings stay
 * owned by the bus. */
static int add_bus_requests(struct probes_mod *m)
{
	size_t nb = probe_bus_count(m->ctx->probe_bus), n = m->specs.n;
	struct probe_def *defs;

	m->def_req = malloc((n + nb + 1) * sizeof(*m->def_req));
	if (!m->def_req)
		return -ENOMEM;
	for (size_t d = 0; d < n; d++)
		m->def_req[d] = -1;
	if (!nb)
		return 0;
	defs = realloc(m->specs.defs, (n + nb) * sizeof(*defs));
	if (!defs)
		return -ENOMEM;
	m->specs.defs = defs;
	for (size_t i = 0; i < nb; i++) {
		defs[n + i] = *probe_bus_def(m->ctx->probe_bus, i);
		defs[n + i].owned = NULL;
		m->def_req[n + i] = (int32_t)i;
	}
	m->specs.n = n + nb;
	return 0;
}

/* Adds the other modules' requests and builds the name tables, once:
 * before the BPF load, which runs only when there is something to probe. */
static int prepare(struct probes_mod *m)
{
	int rc;

	if (m->prepared)
		return 0;
	rc = add_bus_requests(m);
	if (rc)
		return rc;
	m->prepared = true;
	if (!m->specs.n)
		return 0;
	rc = -ENOMEM;
	m->def_name = calloc(m->specs.n + 1, sizeof(*m->def_name));
	m->def_matched = calloc(m->specs.n + 1, sizeof(bool));
	m->def_warned = calloc(m->specs.n + 1, sizeof(bool));
	m->id_req = malloc(EP_PROBE_MAX * sizeof(*m->id_req));
	if (!m->def_name || !m->def_matched || !m->def_warned || !m->id_req)
		return rc;
	for (size_t i = 0; i < EP_PROBE_MAX; i++)
		m->id_req[i] = -1;
	for (size_t d = 0; d < m->specs.n; d++)
		if (!m->specs.defs[d].usdt_provider &&
		    probes_add_name(m, m->specs.defs[d].symbol, &m->def_name[d]))
			return rc;
	if (probes_add_name(m, LDSO_SYMBOL, &m->ldso_name))
		return rc;
	return 0;
}

static int pm_bpf_setup(void *state, struct modules_bpf *skel)
{
	struct probes_mod *m = state;
	int rc = prepare(m);
	bool usdt = false, btf_exit, hold;

	if (rc)
		return rc;
	m->no_cookie = !m->ctx->kf->have[KFEAT_ATTACH_COOKIE] || m->cookie_refused;
	/* One pair of function programs: with cookies, or by address. */
	bpf_program__set_autoload(skel->progs.probe_entry, !m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_return, !m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_entry_nc, m->no_cookie);
	bpf_program__set_autoload(skel->progs.probe_return_nc, m->no_cookie);
	/* --probes none, no --probe, no request: nothing to probe. In launch
	 * mode the holds still load (and only they, with ld.so's hook): the
	 * other modules attach to the held command too (a cycle boundary,
	 * the allocation probes), and without a hold its first calls run
	 * before their first scan (all of them under emulation, where a
	 * scan takes a second). Otherwise stay idle, load nothing. */
	m->holds_only = !m->specs.n && m->ctx->opts->command && !m->ldso_refused &&
			!m->hold_refused;
	if (!m->specs.n && !m->holds_only)
		return 0;
	if (m->holds_only) {
		bpf_program__set_autoload(skel->progs.probe_entry, false);
		bpf_program__set_autoload(skel->progs.probe_return, false);
		bpf_program__set_autoload(skel->progs.probe_entry_nc, false);
		bpf_program__set_autoload(skel->progs.probe_return_nc, false);
	}
	/* The list is final here. Without a USDT point the USDT program is
	 * never attached: verifying it cost ~5 ms of every run's CPU. */
	for (size_t d = 0; d < m->specs.n && !usdt; d++)
		usdt = m->specs.defs[d].usdt_provider != NULL;
	bpf_program__set_autoload(skel->progs.probe_usdt, usdt && !m->usdt_refused);
	bpf_program__set_autoload(skel->progs.probe_ldso, !m->ldso_refused);
	/* The raw_tp twin on a kernel without BTF (kfeat.h), or when this one
	 * refuses the tp_btf program. */
	btf_exit = m->ctx->kf->btf && !m->exit_refused;
	/* No probe, no call-stack slot to free at a thread's exit. */
	bpf_program__set_autoload(skel->progs.probe_thread_exit, btf_exit && !m->holds_only);
	bpf_program__set_autoload(skel->progs.probe_thread_exit_raw,
				  !btf_exit && !m->exit_raw_refused && !m->holds_only);
	/* Launch mode's holds of the launched tree (probes_hold.c): the
	 * exec program as the thread-exit one, the fork ones where the
	 * kernel has syscall tracepoints; none without the ld.so trigger. */
	hold = m->ctx->opts->command && !m->ldso_refused && !m->hold_refused;
	bpf_program__set_autoload(skel->progs.probe_exec, hold && m->ctx->kf->btf);
	bpf_program__set_autoload(skel->progs.probe_exec_raw, hold && !m->ctx->kf->btf);
	bpf_program__set_autoload(skel->progs.probe_fork_clone, hold && !m->fork_hold_refused);
	bpf_program__set_autoload(skel->progs.probe_fork_clone3, hold && !m->fork_hold_refused);
	bpf_program__set_autoload(skel->progs.probe_fork_fork, hold && !m->fork_hold_refused);
	/* Its holds wake the recorder thread up (probes.bpf.c hold_wake). */
	m->hold_wake = hold && m->ctx->events_fd >= 0 &&
		       !bpf_map__reuse_fd(skel->maps.probe_wake, m->ctx->events_fd);
	return 1;
}

/* What a run without a thread-exit program does instead. */
#define NO_THREAD_EXIT                                                                       \
	"thread exits not seen: the call-stack slots of exited threads are freed by a scan " \
	"every 0.5 s instead (a thread-heavy target may fill the 8192 slots in between)"

/* "USDT probes not attached: usdt:..., ...": the run's USDT definitions,
 * as many as fit. */
static const char *usdt_lost(struct probes_mod *m)
{
	size_t len = (size_t)snprintf(m->lost, sizeof(m->lost), "USDT probes not attached:");
	size_t nlisted = 0, nleft = 0;

	for (size_t d = 0; d < m->specs.n; d++) {
		char spec[160];
		int n;

		if (!m->specs.defs[d].usdt_provider)
			continue;
		probes_def_spec(&m->specs.defs[d], spec, sizeof(spec));
		/* Room for this one and for the tail below. */
		if (nleft || len + 2 + strlen(spec) + 40 >= sizeof(m->lost)) {
			nleft++;
			continue;
		}
		n = snprintf(m->lost + len, sizeof(m->lost) - len, "%s %s", nlisted ? "," : "",
			     spec);
		len += n > 0 ? (size_t)n : 0;
		nlisted++;
	}
	if (!nlisted)
		snprintf(m->lost, sizeof(m->lost), "%zu USDT probe(s) not attached", nleft);
	else if (nleft)
		snprintf(m->lost + len, sizeof(m->lost) - len, " and %zu more", nleft);
	len = strlen(m->lost);
	snprintf(m->lost + len, sizeof(m->lost) - len, " (function probes kept)");
	return m->lost;
}

static const char *pm_bpf_refused(void *state, const char *prog)
{
	struct probes_mod *m = state;

	if (!m->cookie_refused && (!strcmp(prog, "probe_entry") || !strcmp(prog, "probe_return"))) {
		m->cookie_refused = true;
		return "its twins without attach cookies loaded instead (calls matched by probed "
		       "address): the same calls timed";
	}
	if (!m->usdt_refused && !strcmp(prog, "probe_usdt")) {
		m->usdt_refused = true;
		return usdt_lost(m);
	}
	if (!m->ldso_refused && !strcmp(prog, "probe_ldso")) {
		m->ldso_refused = true;
		return "no ld.so trigger: a launched command is not held until probed, and "
		       "libraries are probed once the sampler sees them mapped (~20 ms): their "
		       "first calls can go untimed";
	}
	if (!m->fork_hold_refused && !strncmp(prog, "probe_fork", 10)) {
		m->fork_hold_refused = true;
		return "a child the launched tree forks is not held until probed: one that runs on "
		       "without exec is probed at the next poll, its first calls can go untimed";
	}
	if (!m->hold_refused && !strncmp(prog, "probe_exec", 10)) {
		m->hold_refused = true;
		return "the processes a launched command starts are not held until probed: "
		       "their libraries are probed at the next poll (~10-30 ms), their first "
		       "calls can go untimed (the command itself neither)";
	}
	if (!m->exit_refused && !strcmp(prog, "probe_thread_exit")) {
		m->exit_refused = true;
		return m->exit_raw_refused ? NO_THREAD_EXIT
					   : "its raw_tp twin probe_thread_exit_raw sees the same "
					     "thread exits instead";
	}
	if (!m->exit_raw_refused && !strcmp(prog, "probe_thread_exit_raw")) {
		m->exit_raw_refused = true;
		return NO_THREAD_EXIT;
	}
	return NULL;
}

static int pm_bpf_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct probes_mod *m = state;

	/* Probes are an addition to the CPU profile: a kernel that cannot
	 * load them costs the probe data, not the run. */
	if (!skel)
		log_warn("probes disabled: cannot load the BPF programs: %s (run with -vv for the "
			 "verifier log)",
			 strerror(-err));
	m->skel = skel;
	return 0;
}

/* Sets up the loaded BPF side: its ring buffer and the thread-exit hook
 * (a program that loaded but cannot be attached is done without, as one
 * the kernel refused). */
static int setup_bpf(struct probes_mod *m)
{
	struct bpf_program *exit_prog = NULL;
	char why[64];
	int rc;

	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.probe_events), probes_on_event, m, NULL);
	if (!m->rb) {
		rc = -errno;
		log_error("probes: cannot set up the ring buffer: %s", strerror(-rc));
		return rc;
	}
	if (bpf_program__autoload(m->skel->progs.probe_thread_exit)) {
		exit_prog = m->skel->progs.probe_thread_exit;
		m->skel->links.probe_thread_exit = bpf_program__attach(exit_prog);
	} else if (bpf_program__autoload(m->skel->progs.probe_thread_exit_raw)) {
		exit_prog = m->skel->progs.probe_thread_exit_raw;
		m->skel->links.probe_thread_exit_raw = bpf_program__attach(exit_prog);
	}
	m->exit_hooked = m->skel->links.probe_thread_exit || m->skel->links.probe_thread_exit_raw;
	if (exit_prog && !m->exit_hooked) {
		snprintf(why, sizeof(why), "attach: %s", strerror(errno));
		log_warn("probes: cannot attach BPF program %s (%s): %s",
			 bpf_program__name(exit_prog), why, NO_THREAD_EXIT);
		vstat_add_degraded(m->ctx->vs, bpf_program__name(exit_prog), why, NO_THREAD_EXIT);
	}
	return 0;
}

static int pm_add_target(void *state, uint32_t pid)
{
	struct probes_mod *m = state;
	struct ptarget t = { .pid = pid, .rescan = true };
	int err = 0;

	if (m->attached)
		t.scan_after_ns = mono_ns() + PROBES_CHILD_DELAY_NS;
	pthread_mutex_lock(&m->lock);
	err = uprobe_targets_add(&m->tg, &t);
	pthread_mutex_unlock(&m->lock);
	if (err)
		return err;
	/* A forked child is scanned at the next poll, after record.c
	 * registered it; before attach, the first scan happens in attach. */
	return 0;
}

/* Launch mode: the hold programs attached; holding starts if the exec
 * one is (without the fork ones, a forked child is probed at the next
 * poll, as in --pid mode: arm64, where the fork's exit tracepoint does
 * not run in the child, or a kernel without syscall tracepoints). */
static void attach_holds(struct probes_mod *m, const struct ptarget *t0)
{
	struct bpf_program *fork_progs[] = { m->skel->progs.probe_fork_clone,
					     m->skel->progs.probe_fork_clone3,
					     m->skel->progs.probe_fork_fork };
	struct bpf_link **fork_links[] = { &m->skel->links.probe_fork_clone,
					   &m->skel->links.probe_fork_clone3,
					   &m->skel->links.probe_fork_fork };
	size_t nfork = 0;

	if (bpf_program__autoload(m->skel->progs.probe_exec))
		m->skel->links.probe_exec = bpf_program__attach(m->skel->progs.probe_exec);
	else if (bpf_program__autoload(m->skel->progs.probe_exec_raw))
		m->skel->links.probe_exec_raw = bpf_program__attach(m->skel->progs.probe_exec_raw);
	else
		return;
	if (!m->skel->links.probe_exec && !m->skel->links.probe_exec_raw) {
		log_warn("probes: cannot attach the exec hold: %s; the processes the command "
			 "starts are probed at the next poll, their first calls can go untimed",
			 strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof(fork_progs) / sizeof(fork_progs[0]); i++) {
		if (bpf_program__autoload(fork_progs[i]))
			*fork_links[i] = bpf_program__attach(fork_progs[i]);
		nfork += *fork_links[i] != NULL;
	}
	if (!nfork)
		log_info("probes: forked children are not held (no fork exit tracepoint): "
			 "one that runs on without exec is probed at the next poll");
	m->skel->bss->dl_rdebug_delta = (int64_t)t0->rdebug_delta;
	m->skel->bss->hold_wake = m->hold_wake;
	__atomic_store_n(&m->skel->bss->hold_tree, 1, __ATOMIC_RELEASE);
	m->hold_tree = true;
}

static void detach_holds(struct probes_mod *m)
{
	struct bpf_link **l[] = { &m->skel->links.probe_exec, &m->skel->links.probe_exec_raw,
				  &m->skel->links.probe_fork_clone,
				  &m->skel->links.probe_fork_clone3,
				  &m->skel->links.probe_fork_fork };

	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++) {
		bpf_link__destroy(*l[i]);
		*l[i] = NULL;
	}
}

static int pm_attach(void *state)
{
	struct probes_mod *m = state;
	const struct ptarget *t0;
	bool any_preset = false;
	int err;

	err = prepare(m);
	if (err)
		return err;
	if (!m->skel || (!m->specs.n && !m->holds_only))
		return 0; /* nothing to probe, or probes unavailable here: stay idle */
	err = setup_bpf(m);
	if (err)
		return err;

	m->ldso_global = m->ctx->opts->command && bpf_program__autoload(m->skel->progs.probe_exec);
	m->ldso_global = m->ldso_global || (m->ctx->opts->command &&
					    bpf_program__autoload(m->skel->progs.probe_exec_raw));
	for (size_t i = 0; i < m->tg.n; i++)
		probes_scan_target(m, uprobe_targets_at(&m->tg, i));
	/* Launch mode: the command is not running yet (the recorder releases
	 * it after every module attached) and is target 0, its ld.so hooked
	 * (the collector's own, which it shares). From its exec on, it and
	 * every process it starts are held until probed (probes_hold.c). */
	t0 = m->tg.n ? uprobe_targets_at(&m->tg, 0) : NULL;
	if (m->ctx->opts->command && t0 && m->skel->bss)
		attach_holds(m, t0);
	for (size_t d = 0; d < m->specs.n; d++)
		any_preset = any_preset || m->specs.defs[d].group != PG_USER;
	/* Asked for and never attached: in the report with the probes whose
	 * symbol was not found (the degradation line said why). */
	for (size_t d = 0; m->usdt_refused && d < m->specs.n; d++) {
		char probe[512];

		if (!m->specs.defs[d].usdt_provider)
			continue;
		probes_def_spec(&m->specs.defs[d], probe, sizeof(probe));
		probe_stats_add_not_found(
			m->st, probe,
			"this kernel refuses the USDT probes' BPF program probe_usdt "
			"(kernel.bpf_degraded)");
	}
	if (!m->nattached && any_preset)
		log_info("probes: no llama.cpp or SQLite functions mapped yet; they are probed if "
			 "a library that has them is loaded later");
	m->next_rescan_ns = mono_ns() + RESCAN_PERIOD_NS;
	m->attached = true;
	return 0;
}

/* Without a thread-exit program: frees the slots (probe_threads) of
 * threads that are gone with nothing open, as the program would at their
 * exit. A slot whose thread id was reused meanwhile by a thread of a
 * traced process that already entered a probe could go with it (its
 * return then counted unmatched): a tid reused within one period. */
static void reclaim_slots(struct probes_mod *m)
{
	int fd = bpf_map__fd(m->skel->maps.probe_threads);
	uint32_t key, next, *prev = NULL, *gone = NULL;
	size_t ngone = 0, cap = 0, freed = 0;
	struct ep_probe_thread t;
	char path[160];

	/* Deleted after the walk: a key deleted under get_next_key would
	 * restart it from the first key. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &t) || t.depth || t.overflow)
			continue;
		snprintf(path, sizeof(path), "%s/%u/task/%u", m->ctx->opts->proc_root, t.tgid, key);
		if (access(path, F_OK) && errno == ENOENT &&
		    ep_vec_push((void **)&gone, &ngone, &cap, sizeof(key), &key))
			break;
	}
	for (size_t i = 0; i < ngone; i++)
		freed += !bpf_map_delete_elem(fd, &gone[i]);
	free(gone);
	m->slots_freed += freed;
	if (freed)
		log_debug("probes: %zu call-stack slots of exited threads freed (%" PRIu64
			  " in all)",
			  freed, m->slots_freed);
}

static int pm_poll(void *state, uint64_t now)
{
	struct probes_mod *m = state;
	bool timer = now >= m->next_rescan_ns, mapped = false;
	uint64_t t0 = mono_ns(), t1;
	int n;

	if (m->stopped || !m->skel)
		return 0;
	n = m->draining ? 0 : ring_buffer__consume(m->rb);
	if (timer) {
		m->next_rescan_ns = now + RESCAN_PERIOD_NS;
		if (!m->exit_hooked && !m->holds_only)
			reclaim_slots(m);
	}
	/* No ld.so trigger: a new executable mapping is the cue instead. */
	if (m->ldso_refused && m->ctx->mmap_gen && *m->ctx->mmap_gen != m->seen_gen &&
	    now >= m->last_gen_scan + MAPPED_RESCAN_NS) {
		m->seen_gen = *m->ctx->mmap_gen;
		m->last_gen_scan = now;
		mapped = true;
	}
	/* Scans register new probe ids in the stats: the drain thread waits
	 * meanwhile (a first scan of a library is ~20 ms; the ring holds
	 * longer). */
	pthread_mutex_lock(&m->lock);
	/* Held processes first: they wait for it. */
	if (m->hold_tree &&
	    (m->holds_waiting ||
	     __atomic_load_n(&m->skel->bss->hold_gen, __ATOMIC_ACQUIRE) != m->seen_hold_gen))
		probes_release_holds(m, now, false);
	for (size_t i = 0; i < m->tg.n; i++) {
		struct ptarget *t = uprobe_targets_at(&m->tg, i);

		if (!t->exited && now >= t->scan_after_ns && (t->rescan || timer || mapped))
			probes_scan_target(m, t);
	}
	probes_update_live(m, now);
	probes_update_live_drops(m, now);
	pthread_mutex_unlock(&m->lock);
	probes_deliver_bus_spans(m);
	t1 = mono_ns();
	if (t1 - t0 > m->max_poll_ns)
		m->max_poll_ns = t1 - t0;
	return n < 0 ? n : 0;
}

static void pm_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct probes_mod *m = state;
	struct ptarget *t = uprobe_targets_find(&m->tg, pid);

	(void)ts;
	if (!t || !m->skel)
		return;
	/* Its spans are in the ring already; the links only hold a dead
	 * task's perf events from now on. */
	if (!m->draining)
		ring_buffer__consume(m->rb);
	t->exited = true;
	probes_forget_ip_cookies(m, t);
	probes_forget_hold(m, pid);
	/* Each uprobe link's release waited 0.3-0.4 s on the recorder thread
	 * under load, per exiting child of a fork storm that had lived long
	 * enough to be probed: kept, disabled, for the release at
	 * stop (take_links), up to DEAD_LINKS_MAX (two fds each): the task
	 * is gone, its perf events fire no more. */
	for (size_t i = 0; i < t->ut.nlinks; i++) {
		if (m->dead.n < DEAD_LINKS_MAX)
			link_list_push(&m->dead, t->ut.links[i]);
		else
			bpf_link__destroy(t->ut.links[i]);
	}
	t->ut.nlinks = 0;
}

static void read_counters(struct probes_mod *m)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v, drops[EP_PDROP__COUNT] = { 0 };
	int fd;

	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	fd = bpf_map__fd(m->skel->maps.probe_counts);
	for (uint32_t id = 0; id < m->nids; id++) {
		uint64_t sum = 0;

		if (bpf_map_lookup_elem(fd, &id, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
		probe_stats_set_calls(m->st, id, sum);
	}
	fd = bpf_map__fd(m->skel->maps.probe_drops);
	for (uint32_t r = 0; r < EP_PDROP__COUNT; r++) {
		if (bpf_map_lookup_elem(fd, &r, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			drops[r] += v[c];
	}
	probe_stats_set_drops(m->st, drops);
	free(v);
}

static void collect_open_calls(struct probes_mod *m, uint64_t end)
{
	int fd = bpf_map__fd(m->skel->maps.probe_threads);
	uint32_t key, next, *prev = NULL;
	struct ep_probe_thread t;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &t))
			continue;
		for (uint32_t i = 0; i < t.depth && i < EP_PROBE_STACK_DEPTH; i++)
			probe_stats_add_open(m->st, t.tgid, key, t.f[i].probe_id, t.f[i].start_ns,
					     end);
	}
}

/* The probes' links, handed over by pm_stop (their programs are off). */
static void *detach_links(void *arg)
{
	struct probes_mod *m = arg;

	links_destroy_parallel(m->detach, m->ndetach);
	log_debug("probes: %zu links destroyed in %.1f ms (in the background)", m->ndetach,
		  (mono_ns() - m->detach_t0) / 1e6);
	free(m->detach);
	m->detach = NULL;
	return NULL;
}

/* Each uprobe link's release waits for a grace period: one after the other
 * they were most of a stop (3.2 s of the demo's 4.2 s); handed
 * over, they are released together, beside the outputs. */
static void pm_take_links(void *state, struct link_list *out)
{
	struct probes_mod *m = state;

	for (size_t i = 0; i < m->dead.n; i++)
		link_list_push(out, m->dead.v[i]);
	m->dead.n = 0;
	if (m->ldso_link)
		link_list_push(out, m->ldso_link);
	m->ldso_link = NULL;
	uprobe_targets_take_links(&m->tg, out);
}

static void pm_stop(void *state)
{
	struct probes_mod *m = state;
	uint64_t end = mono_ns();

	if (m->stopped)
		return;
	if (!m->skel) {
		m->stopped = true;
		return;
	}
	/* Every program returns at once from here on (probe_off): counts,
	 * open calls and the ring are final now. The links' detach waits for
	 * three grace periods per uprobe, one uprobe at a time in the kernel
	 * (docs/probes.md, "Cost": 3 s for 31 uprobes under load), so it runs
	 * in a thread while the other modules stop and the outputs are
	 * written, and pm_close joins it. Inline if no thread can be had. */
	__atomic_store_n(&m->skel->bss->probe_off, 1, __ATOMIC_RELEASE);
	{
		/* Without memory for the list a link is destroyed at once. */
		struct link_list l = { 0 };

		uprobe_targets_take_links(&m->tg, &l);
		if (m->ldso_link)
			link_list_push(&l, m->ldso_link);
		m->ldso_link = NULL;
		m->detach = l.v;
		m->ndetach = l.n;
		if (m->ndetach) {
			m->detach_t0 = end;
			m->detaching = !pthread_create(&m->detacher, NULL, detach_links, m);
			if (!m->detaching)
				detach_links(m);
		}
	}
	/* No program runs, no stop can come any more: never leave it stopped. */
	probes_release_holds(m, end, true);
	if (m->hold_tree)
		log_info(
			"probes: the launched processes held until probed at %" PRIu64
			" fork(s), %" PRIu64 " exec(s), %" PRIu64 " start-up(s) and %" PRIu64
			" dlopen/dlclose call(s) of ld.so: %.1f ms stopped in all, longest %.1f ms",
			m->holds[EP_HOLD_FORK], m->holds[EP_HOLD_EXEC], m->holds[EP_HOLD_START],
			m->holds[EP_HOLD_LDSO], m->hold_ns / 1e6, m->hold_max_ns / 1e6);
	probes_stop_draining(m);
	log_debug("probes: drain thread stopped at %.1f ms", (mono_ns() - end) / 1e6);
	if (m->nice_err)
		log_info("probes: drain thread ran at nice 0: %s", strerror(m->nice_err));
	ring_buffer__consume(m->rb);
	probes_deliver_bus_spans(m);
	if (m->bus_lost)
		log_warn("probes: %" PRIu64
			 " spans of other modules' probes not delivered (recorder "
			 "thread too far behind)",
			 m->bus_lost);
	probe_stats_set_module_lost(m->st, m->bus_lost);
	read_counters(m);
	collect_open_calls(m, end);
	for (size_t d = 0; d < m->specs.n; d++) {
		const struct probe_def *def = &m->specs.defs[d];
		char probe[512];

		if (def->group != PG_USER || m->def_matched[d] ||
		    (def->usdt_provider && m->usdt_refused))
			continue;
		probes_def_spec(def, probe, sizeof(probe));
		log_warn("probe %s: no traced process mapped a file matching '%s'", probe,
			 def->lib);
		probe_stats_add_not_found(m->st, probe, "library never mapped by a traced process");
	}
	if (!m->exit_hooked && !m->holds_only)
		log_info("probes: no thread-exit program: %" PRIu64
			 " call-stack slots of exited threads freed by the periodic scan",
			 m->slots_freed);
	if (m->nrescans)
		log_info("probes: %" PRIu64 " maps scans, %.1f us each on average", m->nrescans,
			 (double)m->rescan_ns / 1e3 / (double)m->nrescans);
	if (m->last_poll_ns)
		log_info(
			"probes: drain thread: %" PRIu64 " drains, longest gap between drains %.1f "
			"ms, %" PRIu64 " gaps over 50 ms, most spans in one drain %d; longest poll "
			"hook %.1f ms",
			m->ndrains, (double)m->max_poll_gap_ns / 1e6, m->long_poll_gaps,
			m->max_drained, (double)m->max_poll_ns / 1e6);
	m->stopped = true;
}

static void free_ptarget(void *rec)
{
	struct ptarget *t = rec;

	free(t->ips);
}

static void pm_close(void *state)
{
	struct probes_mod *m = state;

	if (!m)
		return;
	if (m->detaching) {
		uint64_t t0 = mono_ns();

		pthread_join(m->detacher, NULL);
		m->detaching = false;
		log_debug("probes: waited %.1f ms at close for the links' detach",
			  (mono_ns() - t0) / 1e6);
	}
	probes_stop_draining(m);
	uprobe_targets_free(&m->tg, free_ptarget);
	/* Not handed over (a run that failed before its stop). */
	links_destroy_parallel(m->dead.v, m->dead.n);
	free(m->dead.v);
	bpf_link__destroy(m->ldso_link);
	ring_buffer__free(m->rb);
	if (m->skel) {
		bpf_link__destroy(m->skel->links.probe_thread_exit);
		m->skel->links.probe_thread_exit = NULL;
		bpf_link__destroy(m->skel->links.probe_thread_exit_raw);
		m->skel->links.probe_thread_exit_raw = NULL;
		/* No program stops a process any more: one that did after
		 * the stop's release is resumed here. */
		detach_holds(m);
		if (m->stopped)
			probes_release_holds(m, mono_ns(), true);
	}
	for (size_t i = 0; i < m->nfc; i++)
		free(m->fc[i].offsets);
	free(m->fc);
	free(m->ids);
	free(m->names);
	free(m->def_name);
	free(m->def_matched);
	free(m->def_warned);
	free(m->def_req);
	free(m->id_req);
	free(m->pending);
	free(m->spare);
	free(m->cyc);
	free(m->cycspare);
	probe_stats_free(m->st);
	llama_facts_free(m->llama);
	llm_tracker_free(m->llm);
	probe_specs_free(&m->specs);
	if (m->lock_ok)
		pthread_mutex_destroy(&m->lock);
	free(m);
}

const struct rec_module probes_rec_module = {
	.name = "probes",
	.open = pm_open,
	.bpf_part = "probe_",
	.bpf_setup = pm_bpf_setup,
	.bpf_loaded = pm_bpf_loaded,
	.bpf_refused = pm_bpf_refused,
	.add_target = pm_add_target,
	.attach = pm_attach,
	.poll = pm_poll,
	.on_exit = pm_on_exit,
	.take_links = pm_take_links,
	.stop = pm_stop,
	.report_json = pm_report,
	.trace_events = pm_trace,
	.has_trace = pm_has_trace,
	.summary = pm_summary,
	.close = pm_close,
};
