// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs bpf/alloc.bpf.c as a recording module (--alloc, docs/alloc.md). */
#include "util/clock.h"
#include "util/vec.h"
#include "alloc/alloc_module.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc/alloc_attach.h"
#include "alloc/alloc_ctx_obj.h"
#include "overload/links.h"
#include "alloc/alloc_model.h"
#include "alloc/alloc_py.h"
#include "alloc/alloc_report.h"
#include "alloc/alloc_syms.h"
#include "events/alloc.h"
#include "kernel/skel_types.h"
#include "alloc.skel.h"
#include "export/pprof.h"
#include "report/report.h"
#include "cycles/cycle_sink.h"
#include "kernel/kfeat.h"
#include "kernel/vstat.h"
#include "util/log.h"
#include "symbolize/symbolize.h"
#include "top/top_live.h"

/* Libraries mapped later (dlopen of an allocator) are looked for this often. */
#define RESCAN_PERIOD_NS (500 * 1000000ull)
/* Samples kept by the collector (~100 bytes each); at the default rate a
 * run allocating 100 GB stays below it. Beyond: counted, not kept. */
#define MAX_SAMPLES (1u << 20)

struct alloc_mod {
	const struct rec_ctx *ctx;
	struct alloc_bpf *skel;
	struct ring_buffer *rb;
	struct alloc_model model;
	struct uprobe_targets tg; /* of struct alloc_target */
	bool attached, stopped;
	bool session; /* alloc_session loaded: one program, return on demand */
	uint64_t next_rescan_ns;
	/* Live view: the last update's time and totals, for rates. */
	uint64_t live_ns;
	double live_alloc, live_inuse;
	uint64_t stats[EP_AST__COUNT];
	uint64_t bad_events;	  /* records of the wrong size or type */
	uint64_t collector_drops; /* could not be processed (ENOMEM) */
	struct alloc_probes probes;
	struct bpf_link *map_links[3]; /* mmap enter, exit, munmap */
	int64_t unavailable_frame;
	struct alloc_py py; /* Python frames of the samples */
	uint32_t frames[EP_ALLOC_MAX_FRAMES + 1 + EP_PY_MAX_FRAMES];
	struct alloc_results res;
};

/* ---- events ---- */

static int64_t intern(struct alloc_mod *m, const char *name, const char *module)
{
	return profile_intern_frame(&m->model.names, name, module, false);
}

static int handle_alloc(struct alloc_mod *m, const struct ep_alloc_event *e, size_t size)
{
	int n = e->ustack_sz > 0 ? e->ustack_sz / 8 : 0;
	bool kw = e->flags & EP_ALLOC_F_KWALK;
	struct alloc_target *t = uprobe_targets_find(&m->tg, e->hdr.pid);
	struct sym_result res;
	uint32_t depth = 0;
	int64_t fi, st;
	size_t nf;
	int lo = 0;

	if (n > EP_ALLOC_MAX_FRAMES)
		n = EP_ALLOC_MAX_FRAMES;
	if (offsetof(struct ep_alloc_event, ips) + (size_t)n * 8 > size)
		return -EINVAL;
	/* A mapping's walk starts in the syscall's wrapper: the function
	 * that mapped is its caller. */
	if (e->kind == EP_AK_MMAP && n > 1 && e->ips[0] &&
	    !symbolizer_user(m->ctx->sym, e->hdr.pid, e->ips[0] - 1, &res) &&
	    alloc_is_mmap_wrapper(res.name)) {
		lo = 1;
	}
	/* Leaf first from the kernel; root first in the model. Every frame
	 * is a return address (the leaf too: the registers are the caller's
	 * after the call), looked up at address - 1 unless the walker did. */
	for (int i = n - 1; i >= lo; i--) {
		uint64_t a = e->ips[i];

		if (!a)
			continue;
		if (!kw || i == 0)
			a--;
		if (symbolizer_user(m->ctx->sym, e->hdr.pid, a, &res))
			continue;
		fi = intern(m, res.name, res.module);
		if (fi < 0)
			return (int)fi;
		m->frames[depth++] = (uint32_t)fi;
	}
	/* Its Python callers, walked where its stack was taken. */
	nf = depth;
	if (!alloc_py_merge(&m->py, &m->model.names, &e->hdr, m->frames, &nf,
			    sizeof(m->frames) / sizeof(m->frames[0])))
		depth = (uint32_t)nf;
	if (!depth) {
		if (m->unavailable_frame < 0) {
			m->unavailable_frame = intern(m, "[stack unavailable]", NULL);
			if (m->unavailable_frame < 0)
				return (int)m->unavailable_frame;
		}
		m->frames[depth++] = (uint32_t)m->unavailable_frame;
	}
	st = alloc_model_stack(&m->model, m->frames, depth);
	if (st < 0)
		return (int)st;
	return alloc_model_add(&m->model, e->hdr.pid, e->hdr.tid, t && t->comm[0] ? t->comm : NULL,
			       e->hdr.ts_ns, e->addr, e->size, (uint32_t)st,
			       !(e->flags & EP_ALLOC_F_UNTRACKED));
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct alloc_mod *m = ctx;
	const struct ep_event_hdr *h = data;
	int err;

	if (size < sizeof(*h)) {
		m->bad_events++;
		return 0;
	}
	if (h->type == EP_EV_ALLOC && size >= offsetof(struct ep_alloc_event, ips)) {
		err = handle_alloc(m, data, size);
		if (err == -EINVAL)
			m->bad_events++;
		else if (err && err != -ENOSPC)
			m->collector_drops++;
	} else if (h->type == EP_EV_PYSTACK) {
		err = alloc_py_on_record(&m->py, data, size);
		if (err == -EINVAL)
			m->bad_events++;
		else if (err)
			m->collector_drops++;
	} else if (h->type == EP_EV_FREE && size >= sizeof(struct ep_alloc_free)) {
		const struct ep_alloc_free *f = data;

		alloc_model_free_block(&m->model, h->pid, f->addr, f->alloc_ts_ns, h->ts_ns);
	} else {
		m->bad_events++;
	}
	return 0;
}

/* ---- hooks ---- */

#define ALLOC_KFEATS                                                                          \
	(1u << KFEAT_CURRENT_TASK_BTF | 1u << KFEAT_TASK_STORAGE | 1u << KFEAT_TASK_PT_REGS | \
	 1u << KFEAT_ATTACH_COOKIE)

static int am_open(void **state, const struct rec_ctx *ctx)
{
	struct alloc_mod *m;
	char why[160];
	int err;

	if (!ctx->opts->alloc)
		return -ENODEV;
	/* Per-thread state in task storage, the allocator's caller from the
	 * user registers, the probe's identity in its cookie. */
	if (*kfeat_missing(ctx->kf, ALLOC_KFEATS, why, sizeof(why))) {
		log_warn("--alloc: this kernel has no %s: no allocation profile", why);
		return -ENODEV;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	UPROBE_TARGETS_INIT(&m->tg, struct alloc_target, pid, ut);
	m->unavailable_frame = -1;
	alloc_py_init(&m->py, ctx->py);
	err = alloc_model_init(&m->model, ctx->opts->alloc_rate, MAX_SAMPLES);
	if (err) {
		alloc_model_free(&m->model);
		free(m);
		return err;
	}
	*state = m;
	return 0;
}

static int am_add_target(void *state, uint32_t pid)
{
	struct alloc_mod *m = state;
	struct alloc_target t = { .pid = pid };

	/* Scanned at attach, or at the next rescan when forked later. */
	return uprobe_targets_add(&m->tg, &t);
}

/* Whether the kernel's bpf_session_is_return takes the context (Linux 7.2
 * on), from its prototype in the kernel's BTF (or --btf). */
static bool session_kfunc_takes_ctx(const char *btf_path)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	const struct btf_type *t = NULL;
	bool ctx = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "bpf_session_is_return", BTF_KIND_FUNC);
	if (id > 0)
		t = btf__type_by_id(btf, btf__type_by_id(btf, id)->type);
	if (t && btf_is_func_proto(t))
		ctx = btf_vlen(t) == 1;
	btf__free(btf);
	return ctx;
}

/* alloc.skel.h's skeleton over the object built for the kernel's
 * prototype of bpf_session_is_return (bpf/alloc.bpf.c). */
static struct alloc_bpf *open_skel(const struct bpf_object_open_opts *oo, bool ctx_kfunc)
{
	struct alloc_bpf *obj = calloc(1, sizeof(*obj));
	int err;

	if (!obj) {
		errno = ENOMEM;
		return NULL;
	}
	err = alloc_bpf__create_skeleton(obj);
	if (!err && ctx_kfunc)
		obj->skeleton->data = alloc_ctx_elf_bytes(&obj->skeleton->data_sz);
	if (!err)
		err = bpf_object__open_skeleton(obj->skeleton, oo);
	if (err) {
		alloc_bpf__destroy(obj);
		errno = -err;
		return NULL;
	}
	return obj;
}

static int set_loop_programs(struct alloc_bpf *skel, bool loops)
{
	int err = bpf_program__set_autoload(skel->progs.alloc_ret, loops);

	if (!err)
		err = bpf_program__set_autoload(skel->progs.alloc_ret_noloop, !loops);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.alloc_mmap_exit, loops);
	if (!err)
		err = bpf_program__set_autoload(skel->progs.alloc_mmap_exit_noloop, !loops);
	return err;
}

/* The return probe and mmap's exit loaded for this kernel. */
static struct bpf_program *ret_prog(const struct alloc_bpf *skel)
{
	return bpf_program__autoload(skel->progs.alloc_ret) ? skel->progs.alloc_ret
							    : skel->progs.alloc_ret_noloop;
}

static struct bpf_program *mmap_exit_prog(const struct alloc_bpf *skel)
{
	return bpf_program__autoload(skel->progs.alloc_mmap_exit)
		       ? skel->progs.alloc_mmap_exit
		       : skel->progs.alloc_mmap_exit_noloop;
}

static int load_bpf(struct alloc_mod *m, bool session)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = m->ctx->opts->btf_path);
	const struct cli_opts *o = m->ctx->opts;
	uint64_t *draws;
	int err;

	m->skel = open_skel(&oo, session_kfunc_takes_ctx(m->ctx->opts->btf_path));
	if (!m->skel)
		return errno ? -errno : -ENOMEM;
	draws = malloc(EP_ALLOC_DRAWS * sizeof(*draws));
	if (!draws)
		return -ENOMEM;
	alloc_draw_table(o->alloc_rate, draws, EP_ALLOC_DRAWS);
	m->skel->rodata->alloc_every_return = !session;
	memcpy((void *)m->skel->rodata->alloc_draw, draws, EP_ALLOC_DRAWS * sizeof(*draws));
	free(draws);
	err = bpf_map__set_max_entries(m->skel->maps.alloc_live, o->alloc_max_live);
	if (!err && m->ctx->targets_map_fd >= 0)
		err = bpf_map__reuse_fd(m->skel->maps.targets, m->ctx->targets_map_fd);
	/* The in-kernel walker reads the CPU sampler's tables (bpf/uwalk.h). */
	if (!err && m->ctx->uw_procs_fd >= 0) {
		int nc = libbpf_num_possible_cpus();

		m->skel->rodata->alloc_kwalk = true;
		err = bpf_map__reuse_fd(m->skel->maps.uw_objs, m->ctx->uw_objs_fd);
		if (!err)
			err = bpf_map__reuse_fd(m->skel->maps.uw_blk_pc, m->ctx->uw_blk_pc_fd);
		if (!err)
			err = bpf_map__reuse_fd(m->skel->maps.uw_procs, m->ctx->uw_procs_fd);
		if (!err)
			err = bpf_map__set_max_entries(m->skel->maps.uw_rcache,
						       (nc > 0 ? nc : 1) * (1u << 12));
	} else if (!err) {
		bpf_map__set_max_entries(m->skel->maps.uw_objs, 1);
		bpf_map__set_max_entries(m->skel->maps.uw_blk_pc, 1);
		bpf_map__set_max_entries(m->skel->maps.uw_procs, 1);
		bpf_map__set_max_entries(m->skel->maps.uw_rcache, 1);
	}
	/* Python frames with the CPU sampler's process and thread-state maps
	 * (bpf/pyframes.bpf.h); without them the walk is left out at load. */
	if (!err && m->ctx->py && m->ctx->py_procs_fd >= 0 && m->ctx->py_tstates_fd >= 0) {
		m->skel->rodata->py_enabled = true;
		err = bpf_map__reuse_fd(m->skel->maps.py_procs, m->ctx->py_procs_fd);
		if (!err)
			err = bpf_map__reuse_fd(m->skel->maps.py_tstates, m->ctx->py_tstates_fd);
	}
	if (err)
		return err;
	/* Without bpf_loop (5.17+) the twins that hold no stack walk: the
	 * walk's global function would refuse the others (bpf/alloc.bpf.c). */
	err = set_loop_programs(m->skel, m->ctx->kf->have[KFEAT_BPF_LOOP]);
	if (err)
		return err;
	if (session)
		err = bpf_program__set_expected_attach_type(m->skel->progs.alloc_session,
							    EP_BPF_TRACE_UPROBE_SESSION);
	else
		err = bpf_program__set_autoload(m->skel->progs.alloc_session, false);
	if (err)
		return err;
	vstat_prepare(m->ctx->vs, m->skel->obj);
	err = alloc_bpf__load(m->skel);
	vstat_collect(m->ctx->vs, m->skel->obj, "alloc", err);
	if (err)
		return err;
	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.alloc_events), on_event, m, NULL);
	if (!m->rb)
		return errno ? -errno : -ENOMEM;
	return 0;
}

static void detach_mmap(struct alloc_mod *m)
{
	for (size_t i = 0; i < 3; i++) {
		bpf_link__destroy(m->map_links[i]);
		m->map_links[i] = NULL;
	}
}

/* The program's own anonymous mappings; without them --alloc still runs. */
static void attach_mmap(struct alloc_mod *m)
{
	struct bpf_program *p[3] = { m->skel->progs.alloc_mmap_enter, mmap_exit_prog(m->skel),
				     m->skel->progs.alloc_munmap_enter };

	for (size_t i = 0; i < 3; i++) {
		m->map_links[i] = bpf_program__attach(p[i]);
		if (!m->map_links[i]) {
			log_warn("alloc: cannot attach %s (%s): mmap/munmap not seen",
				 bpf_program__name(p[i]), strerror(errno));
			detach_mmap(m);
			return;
		}
	}
}

static int am_attach(void *state)
{
	struct alloc_mod *m = state;
	/* EBPF_PROF_FAULT_BPF=alloc_session: as on a kernel without sessions
	 * (tests of the fallback, as bpf_parts.h's fault injection). */
	const char *fault = getenv("EBPF_PROF_FAULT_BPF");
	int err = fault && !strcmp(fault, "alloc_session") ? -EOPNOTSUPP : load_bpf(m, true);

	/* Kernels before 6.13 have no uprobe sessions: entry + return probes. */
	if (err) {
		log_info("alloc: no uprobe sessions here (%s): every allocation call takes a "
			 "return probe",
			 strerror(-err));
		ring_buffer__free(m->rb);
		m->rb = NULL;
		alloc_bpf__destroy(m->skel);
		m->skel = NULL;
		err = load_bpf(m, false);
		if (!err)
			vstat_skip(
				m->ctx->vs, "alloc", "alloc_session",
				"no uprobe sessions (Linux 6.13+): entry and return probes instead");
	} else {
		m->session = true;
	}
	if (err) {
		/* The verifier's word, when it refused one (the figures keep
		 * its log, not libbpf's output). */
		const struct vstat_prog *bad = vstat_refused(m->ctx->vs, "alloc");

		if (bad)
			log_error("--alloc: cannot load the allocation probes: this kernel refuses "
				  "BPF program %s (%s)",
				  bad->name, bad->reason);
		else
			log_error("--alloc: cannot load the allocation probes: %s (-v for the "
				  "verifier log)",
				  strerror(-err));
		return err;
	}
	m->probes.entry = m->skel->progs.alloc_entry;
	m->probes.ret = ret_prog(m->skel);
	m->probes.free_prog = m->skel->progs.alloc_free;
	m->probes.session_fd = m->session ? bpf_program__fd(m->skel->progs.alloc_session) : -1;
	m->probes.proc_root = m->ctx->opts->proc_root;
	attach_mmap(m);
	for (size_t i = 0; i < m->tg.n; i++)
		alloc_scan_target(&m->probes, uprobe_targets_at(&m->tg, i));
	if (!m->probes.nlinks)
		log_warn("--alloc: no allocator found in the target's maps yet (malloc, free, "
			 "...); looked for again as libraries are loaded");
	m->attached = true;
	m->next_rescan_ns = mono_ns() + RESCAN_PERIOD_NS;
	return 0;
}

static void am_on_held(void *state, uint32_t pid)
{
	struct alloc_mod *m = state;
	struct alloc_target *t = uprobe_targets_find(&m->tg, pid);

	if (t && m->attached)
		alloc_scan_target(&m->probes, t);
}

static int cmp_live(const void *a, const void *b)
{
	const struct alloc_by_stack *x = a, *y = b;

	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes < y->inuse_bytes ? 1 : -1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The live view's memory pane and the alerts' figures, once a second. */
static void update_live(struct alloc_mod *m, uint64_t now)
{
	struct live_metrics *l = m->ctx->live;
	struct alloc_by_stack *v;
	struct alloc_totals t;
	double dt;
	size_t n;

	if (!l || !cli_live_wanted(m->ctx->opts) || now < m->live_ns + 1000000000ull)
		return;
	alloc_model_totals(&m->model, &t);
	dt = m->live_ns ? (double)(now - m->live_ns) / 1e9 : 0;
	l->alloc_on = true;
	l->alloc_rate_bps = dt > 0 ? (t.alloc_bytes - m->live_alloc) / dt : 0;
	l->alloc_growth_bps = dt > 0 ? (t.inuse_bytes - m->live_inuse) / dt : 0;
	l->alloc_live_bytes = t.inuse_bytes;
	m->live_ns = now;
	m->live_alloc = t.alloc_bytes;
	m->live_inuse = t.inuse_bytes;
	if (alloc_model_by_stack(&m->model, &v, &n))
		return;
	qsort(v, n, sizeof(*v), cmp_live);
	l->nalloc = 0;
	for (size_t i = 0; i < n && l->nalloc < LIVE_MAX_ALLOC; i++) {
		struct live_alloc *a = &l->alloc[l->nalloc++];

		snprintf(a->name, sizeof(a->name), "%s", alloc_model_leaf(&m->model, v[i].stack));
		a->live_bytes = v[i].inuse_bytes;
		a->alloc_bytes = v[i].alloc_bytes;
	}
	free(v);
}

static int am_poll(void *state, uint64_t now)
{
	struct alloc_mod *m = state;
	int n;

	if (!m->attached || m->stopped)
		return 0;
	n = ring_buffer__consume(m->rb);
	update_live(m, now);
	if (now >= m->next_rescan_ns) {
		m->next_rescan_ns = now + RESCAN_PERIOD_NS;
		for (size_t i = 0; i < m->tg.n; i++) {
			struct alloc_target *t = uprobe_targets_at(&m->tg, i);

			if (!t->exited)
				alloc_scan_target(&m->probes, t);
		}
	}
	return n < 0 ? n : 0;
}

static void am_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct alloc_mod *m = state;
	struct alloc_target *t = uprobe_targets_find(&m->tg, pid);

	(void)ts;
	if (!t || !m->attached)
		return;
	/* Its samples are in the ring: symbolize them while its maps can
	 * still be read from the symbolizer's cache. */
	ring_buffer__consume(m->rb);
	t->exited = true;
	alloc_target_detach(t);
}

static void read_stats(struct alloc_mod *m)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(m->skel->maps.alloc_stats);
	uint64_t *v;

	if (ncpu <= 0)
		return;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return;
	for (uint32_t k = 0; k < EP_AST__COUNT; k++) {
		if (bpf_map_lookup_elem(fd, &k, v))
			continue;
		m->stats[k] = 0;
		for (int c = 0; c < ncpu; c++)
			m->stats[k] += v[c];
	}
	free(v);
}

/* Released beside the outputs (rec_module.h, take_links); the session
 * links are raw fds, closed by stop. */
static void am_take_links(void *state, struct link_list *out)
{
	struct alloc_mod *m = state;

	uprobe_targets_take_links(&m->tg, out);
	for (size_t i = 0; i < 3; i++) {
		link_list_push(out, m->map_links[i]);
		m->map_links[i] = NULL;
	}
}

static void am_stop(void *state)
{
	struct alloc_mod *m = state;

	if (!m->attached || m->stopped)
		return;
	for (size_t i = 0; i < m->tg.n; i++)
		alloc_target_detach(uprobe_targets_at(&m->tg, i));
	detach_mmap(m);
	ring_buffer__consume(m->rb);
	read_stats(m);
	m->stopped = true;
}

static int am_report(void *state, cJSON *root)
{
	struct alloc_mod *m = state;
	struct alloc_run run = {
		.model = &m->model,
		.rate = m->ctx->opts->alloc_rate,
		.max_live = m->ctx->opts->alloc_max_live,
		.stats = m->stats,
		.bad_events = m->bad_events,
		.collector_drops = m->collector_drops,
		.kwalk = m->skel && m->skel->rodata->alloc_kwalk,
		.session = m->session,
		.attach = m->ctx->opts->npids > 0,
		.cycles = m->ctx->cycles ? cycle_sink_table(m->ctx->cycles) : NULL,
		.nlinks = m->probes.nlinks,
	};
	cJSON *a;
	int err;

	if (!m->attached)
		return 0;
	for (size_t i = 0; i < m->probes.nprobed; i++)
		run.probed[i] = m->probes.probed[i];
	run.nprobed = m->probes.nprobed;
	err = alloc_report_json(&run, root, &m->res);
	if (err)
		return err;
	alloc_log_cost(&m->res);
	a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "memory"),
					     "alloc");
	return a && m->skel && m->skel->rodata->py_enabled ? alloc_py_report(&m->py, a) : 0;
}

static int write_folded(FILE *f, void *ctx)
{
	return export_folded(ctx, f);
}

struct pprof_ctx {
	const struct profile *p;
	enum pprof_kind kind;
	const struct alloc_mod *m;
};

static int write_pprof(FILE *f, void *ctx)
{
	const struct pprof_ctx *c = ctx;

	return export_pprof_run(c->p, c->kind, c->m->ctx->ri,
				c->m->ctx->cycles ? cycle_sink_table(c->m->ctx->cycles) : NULL, f);
}

static int write_speedscope(FILE *f, void *ctx)
{
	const struct profile *const *p = ctx;
	struct speedscope_part parts[2] = { { p[0], "alloc" }, { p[1], "inuse" } };

	return export_speedscope_multi(parts, 2, p[2] ? (const struct run_info *)p[2] : NULL, f);
}

static int am_write_files(void *state, struct output_dir *od)
{
	struct alloc_mod *m = state;
	struct profile a, u;
	int err;

	if (!m->attached)
		return 0;
	err = profile_init(&a, 1000000000u);
	if (err)
		return err;
	err = profile_init(&u, 1000000000u);
	if (err) {
		profile_free(&a);
		return err;
	}
	a.unit = u.unit = "bytes";
	err = alloc_model_profile(&m->model, false, &a);
	if (!err)
		err = alloc_model_profile(&m->model, true, &u);
	if (!err) {
		struct pprof_ctx pa = { &a, PPROF_ALLOC_SPACE, m },
				 pu = { &u, PPROF_INUSE_SPACE, m };
		const void *ss[3] = { &a, &u, m->ctx->ri };

		output_write(od, "alloc.folded", write_folded, &a);
		output_write(od, "inuse.folded", write_folded, &u);
		output_write(od, "alloc.pb.gz", write_pprof, &pa);
		output_write(od, "inuse.pb.gz", write_pprof, &pu);
		output_write(od, "alloc.speedscope.json", write_speedscope, ss);
	}
	profile_free(&a);
	profile_free(&u);
	return err;
}

static void am_summary(void *state, FILE *out)
{
	struct alloc_mod *m = state;

	if (m->attached)
		alloc_print_summary(&m->res, out);
}

static void am_close(void *state)
{
	struct alloc_mod *m = state;

	if (!m)
		return;
	uprobe_targets_free(&m->tg, alloc_target_free);
	detach_mmap(m);
	ring_buffer__free(m->rb);
	alloc_bpf__destroy(m->skel);
	alloc_model_free(&m->model);
	alloc_py_free(&m->py);
	alloc_results_free(&m->res);
	free(m);
}

const struct rec_module alloc_rec_module = {
	.name = "alloc",
	.open = am_open,
	.add_target = am_add_target,
	.attach = am_attach,
	.poll = am_poll,
	.on_exit = am_on_exit,
	.on_held = am_on_held,
	.take_links = am_take_links,
	.stop = am_stop,
	.report_json = am_report,
	.write_files = am_write_files,
	.summary = am_summary,
	.close = am_close,
};
