// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recording run (record.h) as a sequence of phases: record_main reads
 * top to bottom as a run goes. Each phase returns 0 or fails after logging
 * why; what it holds is in the recorder (record/recorder.h) and released
 * once, by close_run, whichever phase failed. The parts with a life of
 * their own are elsewhere: the preflight (kernel/preflight.c), the CPU
 * samples' path (profile/cpu_samples.c), the targets (record/targets.c),
 * the modules (record/modules.c), the launched command (record/launch.c),
 * the stop and summary (record/finish.c), the result bundle (export/bundle.c).
 */
#include "record.h"

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "export/bundle.h"
#include "export/metrics.h"
#include "export/pprof_elf.h"
#include "export/rotate.h"
#include "kernel/check_cmd.h"
#include "kernel/preflight.h"
#include "overload/links.h"
#include "proc/proc_info.h"
#include "python/pyframes.h"
#include "record/finish.h"
#include "record/modules.h"
#include "record/recorder.h"
#include "record/targets.h"
#include "symbolize/symbolize.h"
#include "unwind/ktables.h"
#include "unwind/unwind.h"
#include "util/log.h"

/* How often the loop wakes to drain the ring buffer when no watermark
 * wakeup came: bounds both latency and the ring's fill between drains. */
#define DRAIN_PERIOD_MS 10
/* Free space the output filesystem must have before a run starts: the
 * outputs of a minute at 999 Hz are ~2-5 MB. */
#define OUTPUT_MIN_FREE (4ull << 20)
/* How often the live view's drop counts are refreshed: the alert on drops
 * reacts within a quarter second for a few map reads. */
#define LIVE_DROPS_PERIOD_NS (250 * 1000000ull)
/* Freed heap pages go back to the system this often: malloc keeps them
 * otherwise, in the helper threads' arenas too, and a long run's RSS would
 * show its high-water mark. Well under a millisecond for ~30 MB of heap. */
#define TRIM_PERIOD_NS (20 * 1000000000ull)
/* --rotate with no sample past an interval's end: how long after it the
 * interval is closed anyway (samples reach us within a drain or two). */
#define ROTATE_LAG_NS (100 * 1000000ull)

/* The CPU profile's timeline bound (profile.h, max_runs): the default, or
 * EBPF_PROF_TIMELINE_RUNS (64..2^30), which lets a short test reach it. */
static size_t timeline_runs(void)
{
	const char *e = getenv("EBPF_PROF_TIMELINE_RUNS");
	char *end;
	unsigned long long v;

	if (!e || !*e)
		return 0;
	errno = 0;
	v = strtoull(e, &end, 10);
	if (errno || *end || v < 64 || v > (1ull << 30)) {
		log_warn("EBPF_PROF_TIMELINE_RUNS=%s: expected 64..%llu, using the default", e,
			 1ull << 30);
		return 0;
	}
	return (size_t)v;
}

static const char *unwind_mode_name(enum cli_unwind m)
{
	switch (m) {
	case CLI_UNWIND_FP:
		return "fp";
	case CLI_UNWIND_DWARF:
		return "dwarf";
	case CLI_UNWIND_KERNEL:
		return "cfi-kernel";
	case CLI_UNWIND_AUTO:
		break;
	}
	return "auto";
}

/* --rotate: the interval's profile goes to its files and a fresh profile
 * starts; drops stay running totals (the intervals' files show their part),
 * metrics keep counting across the reset. Returns 0 or -ENOMEM. */
static int rotate(struct recorder *r)
{
	uint64_t drops[PROF_DROP__COUNT];

	rotator_write(r->rot, &r->prof, &r->ri);
	metrics_server_fold(r->metrics, &r->prof);
	/* The summary counts the whole run's samples, as it does the
	 * unwinder's stacks and the losses. */
	r->ri.rotated_samples += r->prof.total_samples;
	r->ri.rotated_user += r->prof.user_samples;
	r->ri.rotated_kernel += r->prof.kernel_samples;
	r->ri.rotations++;
	memcpy(drops, r->prof.drops, sizeof(drops));
	profile_free(&r->prof);
	if (profile_init(&r->prof, r->tick.tick_hz)) {
		log_error("rotate: out of memory for a new profile");
		r->stop_requested = true;
		return -ENOMEM;
	}
	r->prof.run_gap_ns = 2 * r->prof.period_ns;
	r->prof.max_runs = timeline_runs();
	memcpy(r->prof.drops, drops, sizeof(drops));
	cpu_samples_profile_replaced(&r->cs);
	if (r->py)
		pyframes_profile_replaced(r->py, &r->prof);
	/* The freed profile's heap back to the system: flat RSS over hours. */
	malloc_trim(0);
	return 0;
}

/* cpu_samples_ops.before_sample: the run's figures that follow the
 * samples. */
static int before_sample(void *owner, uint32_t pid, uint32_t tid, uint64_t ts_ns, const char *comm)
{
	struct recorder *r = owner;

	if (!r->ri.first_sample_ns)
		r->ri.first_sample_ns = ts_ns;
	/* --rotate: intervals end in sample time (rotate.h). A bounded
	 * number per sample: a bogus timestamp cannot spin here. */
	for (int k = 0; k < 16 && rotator_due(r->rot, ts_ns); k++)
		if (rotate(r))
			return -ENOMEM;
	if (pid == tid)
		targets_refresh_after_exec(r, pid, comm, false);
	return 0;
}

static const struct cpu_samples_ops sample_ops = {
	.before_sample = before_sample,
	.task_event = targets_on_task_event,
};

/* The sampler's losses so far (kernel counters + collector) for the live
 * view and --alert drops>0; the final figures are summed at stop. */
static void update_live_drops(struct recorder *r, uint64_t now)
{
	uint64_t sum;

	if (!cli_live_wanted(r->opts) || now < r->next_live_drops_ns)
		return;
	r->next_live_drops_ns = now + LIVE_DROPS_PERIOD_NS;
	if (!cpu_samples_drops_so_far(&r->cs, r->sampler, &sum))
		r->live.drops[LIVE_SRC_SAMPLER] = (int64_t)sum;
}

/* Before anything is held: the checks and the kernel's features
 * (preflight.h), the run's settings, the --pid targets. Returns 0, or the
 * exit code of a refused run: 1, or 2 for a usage error. */
static int prepare(struct recorder *r, struct cli_opts *eff)
{
	const struct cli_opts *o = eff;
	int err;

	*r = (struct recorder){
		.opts = o, .child = -1, .l = LAUNCH_INIT, .sfd = -1, .od = { .dirfd = -1 }
	};
	preflight_libbpf_log();
	/* First: until then a target with hundreds of busy threads leaves us
	 * one share in hundreds, and the feature probes below load ~340 BPF
	 * programs (~50 ms of CPU, seconds at that share). Before any thread
	 * or child is started: they inherit it. */
	collector_priority_raise(&r->prio);
	if (preflight(eff, &r->kf))
		return 1;
	tick_guard_init(&r->tick, o->freq_hz);
	if (tick_guard_limited(&r->tick))
		log_warn("-F %u: sampling at %u Hz per CPU, the overload guard's limit (each tick "
			 "is a timer interrupt on every CPU, whatever runs there); the ticks not "
			 "taken on the targets are counted as lost (rate_limited)",
			 r->tick.requested_hz, r->tick.tick_hz);
	r->so = (struct sampler_opts){
		.freq_hz = r->tick.tick_hz,
		.kernel_stacks = o->kernel_stacks,
		.stack_bytes = o->unwind == CLI_UNWIND_FP || o->unwind == CLI_UNWIND_KERNEL
				       ? 0
				       : o->stack_bytes,
		.kwalk = o->unwind == CLI_UNWIND_KERNEL,
		.python = o->python != CLI_PYTHON_NATIVE,
		.btf_path = o->btf_path,
		.kf = &r->kf,
		.vs = &r->vs,
	};
	/* Tests: EBPF_PROF_FAULT_BPF=profile:PROGRAM refuses a sampler program
	 * (the modules' parts take the rest of the variable, bpf_parts.h). */
	if (getenv("EBPF_PROF_FAULT_BPF") && !strncmp(getenv("EBPF_PROF_FAULT_BPF"), "profile:", 8))
		r->so.fault_prog = getenv("EBPF_PROF_FAULT_BPF") + 8;
	r->ri.exit_status = -1;
	r->ri.freq_hz = r->tick.tick_hz;
	r->ri.requested_hz = o->freq_hz;
	r->ri.kernel_frames = o->kernel_stacks;
	r->ri.unwind.mode = unwind_mode_name(o->unwind);
	r->ri.kernel_btf = r->kf.btf;
	r->ri.btf_file = o->btf_path;
	r->ri.tracepoint_programs = kfeat_prog_kind(&r->kf);
	r->ri.vstat = &r->vs;
	r->ri.unwind.stack_bytes = r->so.stack_bytes;
	err = targets_resolve_pids(o, r->pids, &r->npids);
	if (err)
		return err == -EINVAL ? 2 : 1; /* a kernel thread: a usage error */
	return 0;
}

/* The collector's own set-up, ending with the signals, which come
 * through a descriptor polled by the loop: no handler, no global flag, and
 * every thread started later inherits the mask. From here close_run
 * restores the mask. */
static int start_collector(struct recorder *r)
{
	const struct collector_prio *prio = &r->prio;
	sigset_t mask;
	int err;

	if (pprof_elf_cache_new(&r->ri.elf_cache))
		r->ri.elf_cache = NULL; /* each pprof file reads the DWARF itself */
	preflight_tracefs();
	r->mctx.child_nice = prio->old_nice;
	if (prio->nice_err || prio->rt_err)
		log_info("collector priority not raised (%s): a target with more busy threads "
			 "than CPUs can starve it (slow start, samples lost)",
			 strerror(prio->rt_err ? prio->rt_err : prio->nice_err));
	else
		log_info("collector at nice %d, recorder thread SCHED_FIFO %d, so that busy "
			 "targets cannot starve it; the command and --alert-exec run at nice %d",
			 COLLECTOR_NICE, COLLECTOR_RT_PRIO, prio->old_nice);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &r->orig_mask);
	r->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (r->sfd < 0) {
		err = -errno;
		log_error("cannot create signalfd: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* The CPU sampler loaded (not attached), with what its samples go
 * through: the profile, the symbolizer, the unwinder or the in-kernel
 * walker's tables, Python frames. */
static int open_sampler(struct recorder *r)
{
	const struct cli_opts *o = r->opts;
	struct symbolizer_opts symo = {
		.proc_root = o->proc_root,
		.kallsyms_path = "/proc/kallsyms",
		.perfmap_dir = "/tmp",
		.no_demangle = o->no_demangle,
	};
	int err;

	/* A sample weighs the period it was taken at. */
	if (profile_init(&r->prof, r->tick.tick_hz)) {
		log_error("out of memory");
		return -ENOMEM;
	}
	r->prof.run_gap_ns = 2 * r->prof.period_ns; /* see profile.h */
	r->prof.max_runs = timeline_runs();
	err = symbolizer_new(&r->sym, &symo);
	if (err) {
		log_error("cannot set up the symbolizer: %s", strerror(-err));
		return err;
	}
	/* The pprof files read module files as the process that mapped them. */
	pprof_elf_cache_set_locate(r->ri.elf_cache, symbolizer_module_file, r->sym);
	if (o->unwind == CLI_UNWIND_AUTO || o->unwind == CLI_UNWIND_DWARF) {
		err = unwinder_new(&r->uw, r->sym);
		if (err) {
			log_error("cannot set up the stack unwinder: %s", strerror(-err));
			return err;
		}
	}
	err = sampler_open(&r->sampler, &r->so, cpu_samples_on_record, &r->cs);
	if (err)
		return err;
	symbolizer_set_mmap_gen(r->sym, sampler_mmap_gen(r->sampler));
	if (sampler_kwalk(r->sampler)) {
		struct sampler_uw_fds fds;
		struct ktables_opts ko = { .proc_root = o->proc_root,
					   .fault_unmapped = getenv("EBPF_PROF_FAULT_NO_TABLE") };

		sampler_get_uw_fds(r->sampler, &fds);
		ko.objs_fd = fds.objs;
		ko.blk_pc_fd = fds.blk_pc;
		ko.procs_fd = fds.procs;
		err = ktables_new(&r->kt, &ko);
		if (err) {
			log_error("cannot set up the unwind tables: %s", strerror(-err));
			return err;
		}
		r->ri.unwind.kernel_walk = true;
		pprof_elf_cache_set_dir(r->ri.elf_cache, ktables_cache_dirfd(r->kt));
	}
	if (sampler_py_procs_fd(r->sampler) >= 0) {
		struct pyframes_opts pyo = {
			.mode = o->python == CLI_PYTHON_ONLY ? PY_MODE_ONLY : PY_MODE_MIXED,
			.proc_root = o->proc_root,
			.procs_fd = sampler_py_procs_fd(r->sampler),
			.stats_fd = sampler_py_stats_fd(r->sampler),
			.prof = &r->prof,
		};

		err = pyframes_new(&r->py, &pyo);
		if (err) {
			log_error("cannot set up Python frames: %s", strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The root targets, in the sampler's filter: the launched command
 * (forked, held until everything is attached) or the --pid processes. */
static int add_targets(struct recorder *r)
{
	const struct cli_opts *o = r->opts;
	int err = 0;

	if (o->ncommand) {
		r->ri.launched = true;
		r->ri.command = launch_join_argv(o->command, o->ncommand);
		r->child = launch_child(o->command, &r->orig_mask, r->mctx.child_nice, &r->l);
		if (r->child < 0) {
			log_error("cannot start %s: %s", o->command[0], strerror(-r->child));
			return r->child;
		}
		err = sampler_add_target(r->sampler, (uint32_t)r->child);
		return err ? err : targets_add(r, (uint32_t)r->child, 0, NULL);
	}
	for (int i = 0; i < r->npids && !err; i++) {
		err = sampler_add_target(r->sampler, r->pids[i]);
		if (!err)
			err = targets_add(r, r->pids[i], 0, NULL);
		if (!err)
			symbolizer_prepare_pid(r->sym, r->pids[i]);
	}
	return err;
}

/* The output directory, opened and checked before attaching: a
 * read-only or full output filesystem found only after the run lost the
 * recording. */
static int open_output(struct recorder *r)
{
	const struct cli_opts *o = r->opts;
	int err;

	r->outdir = o->output_dir ? strdup(o->output_dir)
				  : bundle_default_dir(r->ri.targets[0].pid);
	if (!r->outdir)
		return -ENOMEM;
	/* Never a directory that someone else could fill first or edit after:
	 * new (a fresh name for the default one), or empty, or --force. */
	err = output_dir_open_run(&r->od, r->outdir,
				  (o->force ? OUTPUT_DIR_FORCE : 0) |
					  (o->output_dir ? 0 : OUTPUT_DIR_NEW_NAME));
	if (!err)
		err = output_dir_check(&r->od, OUTPUT_MIN_FREE);
	if (err)
		return err;
	err = output_dir_guard(&r->od);
	if (err)
		log_warn("cannot start the helper that removes %s if this run is killed before "
			 "writing: %s",
			 r->od.path, strerror(-err));
	r->ri.output_dir = r->od.path;
	return 0;
}

/* CPU sampling starts before the other modules load (each load
 * parses the kernel's BTF): an attached process is sampled ~25 ms after
 * start instead of ~110 ms. Samples wait in the ring meanwhile; a launched
 * command is still held until everything is attached. */
static int start_sampling(struct recorder *r)
{
	int err;

	/* Tables before the first sample: a running process's objects are
	 * all mapped already (a launched command is scanned at its exec). */
	for (size_t t = 0; r->kt && t < r->ri.ntargets; t++) {
		err = ktables_scan(r->kt, r->ri.targets[t].pid, mono_ns());
		if (err && err != -ESRCH)
			log_warn("unwind tables of %u: %s", r->ri.targets[t].pid, strerror(-err));
	}
	clock_gettime(CLOCK_REALTIME, &r->ri.start_wall);
	r->ri.start_mono_ns = mono_ns();
	return sampler_attach(r->sampler);
}

/* After modules_start (modules.h): what runs beside the recording:
 * --rotate, the kernel symbols' preload, the -d deadline (--metrics
 * started before anything loaded). */
static int start_extras(struct recorder *r)
{
	const struct cli_opts *o = r->opts;

	if (o->rotate_s > 0 &&
	    rotator_new(&r->rot, &r->od, o->rotate_s, o->keep, r->ri.start_mono_ns)) {
		log_error("out of memory");
		return -ENOMEM;
	}
	/* Parsing kallsyms takes 64 ms quiet, 300-600 ms on a loaded VM; done
	 * at the first kernel frame it stalls the loop that long. On a thread
	 * it overlaps the start of the run instead. Not earlier: its ~5 MB on
	 * top of a BPF load's BTF parse (~11 MB, freed after each load above)
	 * would raise the peak RSS by as much (docs/performance.md). */
	if (o->kernel_stacks)
		symbolizer_preload_kernel(r->sym);
	if (o->duration_s > 0)
		r->deadline = r->ri.start_mono_ns + (uint64_t)(o->duration_s * 1e9);
	return 0;
}

/* Launch mode's command released to exec, everything attached,
 * then read at once (its maps, its name and command line after the exec). */
static int release_command(struct recorder *r)
{
	const struct cli_opts *o = r->opts;
	struct report_target *t;
	char *cmdline = NULL;
	int err;

	if (r->child <= 0)
		return 0;
	err = launch_release(&r->l);
	if (err) {
		log_error("cannot run '%s': %s", o->command[0], strerror(-err));
		waitpid(r->child, NULL, 0);
		r->child_reaped = true;
		return err;
	}
	t = targets_find(r, (uint32_t)r->child);
	/* Exec'ed: the executable and ld.so are mapped. */
	if (r->kt)
		ktables_scan(r->kt, (uint32_t)r->child, mono_ns());
	/* Read its maps as soon as its image is loaded: a short command
	 * can exit before its first samples are drained (a recorder
	 * stalled at start-up, a slow board), and its maps with it. */
	launch_wait_exec_loaded(o->proc_root, r->child);
	symbolizer_prepare_pid(r->sym, (uint32_t)r->child);

	proc_read_comm(o->proc_root, t->pid, t->comm, sizeof(t->comm));
	if (proc_read_cmdline(o->proc_root, t->pid, &cmdline) == 0) {
		free(t->cmdline);
		t->cmdline = cmdline;
	}
	return 0;
}

/* Drains the sampler's ring, polls the modules and watches the
 * targets until a signal, q in the live view, the deadline or the targets'
 * exit; ri.stop_reason says which. Returns 0, or -errno of the ring. */
static int record_loop(struct recorder *r)
{
	const struct timespec rt_yield = { 0, COLLECTOR_RT_YIELD_MS * 1000000l };
	int err;

	/* The samples' path, complete now (the per-cycle table came last). */
	cpu_samples_init(&r->cs, &(struct cpu_samples_opts){ .prof = &r->prof,
							     .sym = r->sym,
							     .uw = r->uw,
							     .kt = r->kt,
							     .py = r->py,
							     .unwind = r->opts->unwind,
							     .st = &r->ri.unwind,
							     .tick = &r->tick,
							     .cycles = r->mctx.cycles,
							     .ops = &sample_ops,
							     .owner = r });
	if (log_get_level() >= LOG_INFO)
		log_info("sampling %zu process(es) at %u Hz%s; Ctrl-C to stop", r->ri.ntargets,
			 r->tick.tick_hz, r->deadline ? "" : " until they exit");
	r->ri.stop_reason = "targets-exited";
	for (;;) {
		struct signalfd_siginfo si;
		bool signalled = false;
		uint64_t now;

		err = sampler_poll(r->sampler, DRAIN_PERIOD_MS);
		if (err < 0) {
			log_error("ring buffer: %s", strerror(-err));
			return err;
		}
		/* Real-time and behind: leave the CPU to the rest for a while
		 * (overload/priority.h); the BPF side counts what is lost. */
		if (r->prio.realtime && sampler_behind(r->sampler))
			nanosleep(&rt_yield, NULL);
		while (read(r->sfd, &si, sizeof(si)) == sizeof(si))
			if (si.ssi_signo != SIGCHLD)
				signalled = true;
		now = mono_ns();
		/* Before the modules' polls: the live view (last) shows it. */
		update_live_drops(r, now);
		if (now >= r->next_trim_ns) {
			if (r->next_trim_ns)
				malloc_trim(0);
			r->next_trim_ns = now + TRIM_PERIOD_NS;
		}
		for_each_module(r, i)
			if (rec_modules[i]->poll && rec_modules[i]->poll(r->mstate[i], now) < 0)
				r->prof.drops[PROF_DROP_COLLECTOR]++;
		metrics_server_update(r->metrics, &r->live, &r->prof, &r->ri, now);
		/* No sample past the interval's end (an idle target): rotate once
		 * the ring has had ROTATE_LAG_NS to deliver the last ones. */
		for (int k = 0; k < 16 && rotator_due(r->rot, now - ROTATE_LAG_NS); k++)
			if (rotate(r))
				break;
		targets_check_liveness(r, now);
		if (signalled) {
			r->ri.stop_reason = "signal";
			break;
		}
		if (r->stop_requested) {
			r->ri.stop_reason = "user";
			break;
		}
		if (r->deadline && now >= r->deadline) {
			r->ri.stop_reason = "duration";
			break;
		}
		if (!r->nalive)
			break;
	}
	return 0;
}

/* The single cleanup, after any phase from start_collector on: each part
 * is released after what points into it. */
static void close_run(struct recorder *r)
{
	double reap_ms;
	int reap_pid;

	launch_close(&r->l, r->child, r->child_reaped);
	/* Before any close: the links point at programs and rings. */
	links_reaper_join(r->reaper, &reap_ms, &reap_pid);
	if (r->reaper)
		log_debug("stop: BPF links dropped in %.0f ms%s", reap_ms,
			  reap_pid ? ", released by a child process" : " (beside the outputs)");
	sampler_close(r->sampler);
	/* Before the modules' close: its thread reads only its snapshot, but
	 * a scrape during teardown has no run left to describe. */
	metrics_server_stop(r->metrics);
	rotator_free(r->rot);
	pyframes_free(r->py);
	modules_close(r);
	if (r->ri.output_files != (const char *const *)r->od.written)
		free((void *)r->ri.output_files);
	/* After the symbolizer: its Dwfl sessions were attached with the
	 * unwinder's callbacks and ELF header. */
	symbolizer_free(r->sym);
	/* After the symbolizer: its kallsyms thread may read the iterator. */
	ksym_part_free(&r->ksym);
	unwinder_free(r->uw);
	ktables_free(r->kt);
	profile_free(&r->prof);
	output_dir_remove_if_unused(&r->od);
	output_dir_close(&r->od);
	targets_free(r);
	pprof_elf_cache_free(r->ri.elf_cache);
	vstat_free(&r->vs);
	free(r->ri.command);
	free(r->outdir);
	if (r->sfd >= 0) {
		run_ignore_late_signals(r->sfd);
		close(r->sfd);
	}
	sigprocmask(SIG_SETMASK, &r->orig_mask, NULL);
}

int record_main(const struct cli_opts *cli)
{
	struct cli_opts eff = *cli;
	struct recorder r;
	int rc;

	rc = prepare(&r, &eff);
	if (rc)
		return rc; /* refused before anything was held */
	rc = 1;
	/* The metrics server forks while the recorder is small (nothing
	 * loaded yet), and a port in use is reported before the run. */
	if (eff.metrics_addr && !eff.check && metrics_server_start(&r.metrics, eff.metrics_addr))
		goto out;
	if (start_collector(&r) || open_sampler(&r) || add_targets(&r) || open_output(&r) ||
	    start_sampling(&r) || modules_start(&r))
		goto out;
	/* `ebpf-prof check`: everything loaded and attached; the held command
	 * never runs (closing its pipe in close_run ends it). */
	if (eff.check) {
		check_result_fill(eff.check, &r.kf, &r.vs);
		rc = 0;
		goto out;
	}
	if (start_extras(&r) || release_command(&r) || record_loop(&r))
		goto out;
	run_stop_sampler(&r);
	run_stop_modules(&r);
	rc = run_write_results(&r);
out:
	close_run(&r);
	return rc;
}
