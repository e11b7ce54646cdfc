// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The run's modules (modules.h): the table and how they start, kept apart
 * from the run's phases since their start is its longest step.
 */
#include "record/modules.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "alloc/alloc_module.h"
#include "cycles/cycle_sink.h"
#include "cycles/cycles_module.h"
#include "jetson/jetson_module.h"
#include "overhead/overhead_module.h"
#include "probes/probes.h"
#include "record/recorder.h"
#include "sched/sched_view.h"
#include "symbolize/ksym_cache.h"
#include "symbolize/symbolize.h"
#include "sysmon/sysmon_module.h"
#include "sysmon/throttle_feed.h"
#include "top/top_module.h"
#include "unwind/ktables.h"
#include "util/log.h"

/* Data sources beside the CPU sampler; see rec_module.h. The order is
 * meaningful, hence one per line. */
// clang-format off
const struct rec_module *const rec_modules[] = {
	&jetson_rec_module,
	&sysmon_rec_module,
	&sched_rec_module,
	&probes_rec_module,
	&overhead_rec_module, /* after the sections it reads, before the findings */
	&alloc_rec_module,    /* after overhead (its cost), before cycles (findings, HTML) */
	&cycles_rec_module, /* after the modules whose report sections it reads */
	&top_rec_module, /* last: shows what the others polled this round */
};
// clang-format on
#define NMODULES (sizeof(rec_modules) / sizeof(rec_modules[0]))
_Static_assert(NMODULES <= REC_MAX_MODULES, "a module more than REC_MAX_MODULES");
const size_t rec_nmodules = NMODULES;

/* rec_ctx.notify_held: every module attaches to the held command first. */
static void notify_held(void *rec, uint32_t pid)
{
	struct recorder *r = rec;

	for_each_module(r, i)
		if (rec_modules[i]->on_held)
			rec_modules[i]->on_held(r->mstate[i], pid);
}

/* A module's bpf_loaded, with -ENODEV turning the module off here. */
struct part_ctx {
	struct recorder *r;
	size_t i;
};

static int part_setup(void *state, struct modules_bpf *skel)
{
	struct part_ctx *pc = state;

	return rec_modules[pc->i]->bpf_setup(pc->r->mstate[pc->i], skel);
}

static int part_loaded(void *state, struct modules_bpf *skel, int err)
{
	struct part_ctx *pc = state;
	size_t i = pc->i;

	err = rec_modules[i]->bpf_loaded(pc->r->mstate[i], skel, err);
	if (err == -ENODEV) {
		rec_modules[i]->close(pc->r->mstate[i]);
		pc->r->mstate[i] = NULL;
		return 0;
	}
	if (err)
		log_error("cannot start %s: %s", rec_modules[i]->name, strerror(-err));
	return err;
}

static const char *part_refused(void *state, const char *prog)
{
	struct part_ctx *pc = state;

	if (!rec_modules[pc->i]->bpf_refused)
		return NULL;
	return rec_modules[pc->i]->bpf_refused(pc->r->mstate[pc->i], prog);
}

static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/* Loads the modules' BPF parts as one object (bpf_parts.h). The
 * environment variable EBPF_PROF_FAULT_BPF=PREFIX makes that part fail
 * to load: the fallback it exercises otherwise runs only on kernels that
 * lack something, and the tests need to reach it here. */
static int load_module_bpf(struct recorder *r)
{
	struct bpf_part parts[NMODULES + 1];
	struct part_ctx pcs[NMODULES];
	size_t n = 0;

	for_each_module(r, i) {
		if (!rec_modules[i]->bpf_part)
			continue;
		pcs[n] = (struct part_ctx){ .r = r, .i = i };
		parts[n] = (struct bpf_part){ .prefix = rec_modules[i]->bpf_part,
					      .setup = part_setup,
					      .loaded = part_loaded,
					      .refused = part_refused,
					      .what = rec_modules[i]->name,
					      .state = &pcs[n] };
		n++;
	}
	if (r->ksym.want)
		parts[n++] = ksym_part_def(&r->ksym);
	if (!n)
		return 0;
	return bpf_parts_load(parts, n, r->mctx.targets_map_fd, r->opts->btf_path,
			      getenv("EBPF_PROF_FAULT_BPF"), &r->bpf_objs, &r->vs);
}

/* What the modules share (rec_module.h): the CPU sampler's maps, the
 * symbolizer, the run's figures, the facts sinks. */
static int fill_context(struct recorder *r)
{
	struct rec_ctx *c = &r->mctx;

	c->opts = r->opts;
	c->kf = &r->kf;
	c->vs = &r->vs;
	c->targets_map_fd = sampler_targets_fd(r->sampler);
	c->events_fd = sampler_events_fd(r->sampler);
	c->uw_objs_fd = c->uw_blk_pc_fd = c->uw_procs_fd = -1;
	if (sampler_kwalk(r->sampler)) {
		struct sampler_uw_fds fds;

		sampler_get_uw_fds(r->sampler, &fds);
		c->uw_objs_fd = fds.objs;
		c->uw_blk_pc_fd = fds.blk_pc;
		c->uw_procs_fd = fds.procs;
	}
	c->py = r->py;
	c->py_procs_fd = r->py ? sampler_py_procs_fd(r->sampler) : -1;
	c->py_tstates_fd = r->py ? sampler_py_tstates_fd(r->sampler) : -1;
	c->sym = r->sym;
	c->mmap_gen = sampler_mmap_gen(r->sampler);
	c->ri = &r->ri;
	c->prof = &r->prof;
	live_metrics_init(&r->live);
	c->live = &r->live;
	c->stop_requested = &r->stop_requested;
	c->notify_held = notify_held;
	c->rec = r;
	c->cycles = cycles_sink_new(r->opts, r->prof.period_ns);
	if (!c->cycles)
		log_warn("cycles: out of memory: no per-cycle table");
	if (throttle_feed_new(&c->throttle) || probe_bus_new(&c->probe_bus)) {
		log_error("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int modules_start(struct recorder *r)
{
	const struct cli_opts *o = r->opts;
	int err;

	err = fill_context(r);
	if (err)
		return err;
	for (size_t i = 0; i < rec_nmodules; i++) {
		err = rec_modules[i]->open(&r->mstate[i], &r->mctx);
		if (err == -ENODEV) {
			r->mstate[i] = NULL;
			continue;
		}
		if (err) {
			r->mstate[i] = NULL;
			log_error("cannot start %s: %s", rec_modules[i]->name, strerror(-err));
			return err;
		}
	}
	/* The iterator is worth its load only when this boot's cache holds
	 * the core kernel's symbols (ksym_cache.h); it needs Linux 6.0. */
	r->ksym.want = o->kernel_stacks && r->kt && kernel_at_least(6, 0) && r->kf.btf &&
		       ksym_cache_present(ktables_cache_dirfd(r->kt));
	err = load_module_bpf(r);
	if (err)
		return err;
	if (o->kernel_stacks && r->kt)
		symbolizer_set_kernel_cache(r->sym, ktables_cache_dirfd(r->kt),
					    ksym_part_link_fd(&r->ksym));
	/* The sampler's load parsed the kernel's BTF (~11 MB) and so did
	 * the modules' one; returning that heap keeps the peak at one parse. */
	malloc_trim(0);
	/* Children that came and went while the sampler started (a fork
	 * storm on a loaded machine) are nothing for the modules to follow. */
	for_each_module(r, i)
		for (size_t t = 0; t < r->ri.ntargets; t++)
			if (rec_modules[i]->add_target && !r->ri.targets[t].exited &&
			    (err = rec_modules[i]->add_target(r->mstate[i], r->ri.targets[t].pid)))
				return err;

	for_each_module(r, i) {
		if (rec_modules[i]->attach && (err = rec_modules[i]->attach(r->mstate[i])))
			return err;
		malloc_trim(0);
	}
	return 0;
}

void modules_close(struct recorder *r)
{
	for_each_module(r, i)
		rec_modules[i]->close(r->mstate[i]);
	/* After the modules' close: their links and rings point into them. */
	bpf_parts_close(&r->bpf_objs);
	throttle_feed_free(r->mctx.throttle);
	/* After the modules' close: the probes module points into it. */
	probe_bus_free(r->mctx.probe_bus);
	cycle_sink_free(r->mctx.cycles);
}
