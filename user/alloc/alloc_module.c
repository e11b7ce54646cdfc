// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runs bpf/alloc.bpf.c as a recording module (--alloc, docs/alloc.md). */
#include "alloc/alloc_module.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc/alloc_model.h"
#include "alloc/alloc_report.h"
#include "alloc/probe_point.h"
#include "events.h" /* types the skeleton names */
#include "alloc.skel.h"
#include "export/pprof.h"
#include "report.h"
#include "cycle_sink.h"
#include "log.h"
#include "proc/proc_maps.h"
#include "symbolize/symbolize.h"
#include "top_live.h"
#include "uprobe_discovery.h"

/* Libraries mapped later (dlopen of an allocator) are looked for this often. */
#define RESCAN_PERIOD_NS (500 * 1000000ull)
#define MAX_MAPS_BYTES	 (16u << 20)
#define MAX_EXEC_FILES	 1024
/* Samples kept by the collector (~100 bytes each); at the default rate a
 * run allocating 100 GB stays below it. Beyond: counted, not kept. */
#define MAX_SAMPLES (1u << 20)

/* The entry points probed in each file that defines them. A file that
 * defines malloc gets the standard names only: its prefixed ones (tcmalloc's
 * tc_malloc is the same function; mimalloc's malloc calls mi_malloc) would
 * count a call twice. */
struct alloc_sym {
	const char *name;
	enum ep_alloc_kind kind; /* EP_AK_NONE: a free */
	bool prefixed;
};
static const struct alloc_sym syms[] = {
	{ "malloc", EP_AK_MALLOC, false },
	{ "calloc", EP_AK_CALLOC, false },
	{ "realloc", EP_AK_REALLOC, false },
	{ "memalign", EP_AK_MEMALIGN, false },
	{ "aligned_alloc", EP_AK_MEMALIGN, false },
	{ "posix_memalign", EP_AK_POSIX_MEMALIGN, false },
	{ "valloc", EP_AK_VALLOC, false },
	{ "pvalloc", EP_AK_VALLOC, false },
	{ "free", EP_AK_NONE, false },
	/* jemalloc built with a prefix, mimalloc's API, tcmalloc's. */
	{ "je_malloc", EP_AK_MALLOC, true },
	{ "je_calloc", EP_AK_CALLOC, true },
	{ "je_realloc", EP_AK_REALLOC, true },
	{ "je_aligned_alloc", EP_AK_MEMALIGN, true },
	{ "je_posix_memalign", EP_AK_POSIX_MEMALIGN, true },
	{ "je_free", EP_AK_NONE, true },
	{ "mi_malloc", EP_AK_MALLOC, true },
	{ "mi_calloc", EP_AK_CALLOC, true },
	{ "mi_realloc", EP_AK_REALLOC, true },
	{ "mi_free", EP_AK_NONE, true },
	{ "tc_malloc", EP_AK_MALLOC, true },
	{ "tc_calloc", EP_AK_CALLOC, true },
	{ "tc_realloc", EP_AK_REALLOC, true },
	{ "tc_memalign", EP_AK_MEMALIGN, true },
	{ "tc_posix_memalign", EP_AK_POSIX_MEMALIGN, true },
	{ "tc_free", EP_AK_NONE, true },
};
#define NSYMS (sizeof(syms) / sizeof(syms[0]))

struct atarget {
	uint32_t pid;
	bool exited;
	char comm[17];
	struct bpf_link **links;
	size_t nlinks, caplinks;
	int *sess_fds; /* uprobe session links (raw fds: libbpf 1.1 has no API) */
	size_t nsess, capsess;
	uint64_t (*seen)[2];
	size_t nseen, capseen;
};

struct alloc_mod {
	const struct rec_ctx *ctx;
	struct alloc_bpf *skel;
	struct ring_buffer *rb;
	struct alloc_model model;
	struct atarget *tg;
	size_t ntg, captg;
	bool attached, stopped;
	bool session; /* alloc_session loaded: one program, return on demand */
	uint64_t next_rescan_ns;
	/* Live view: the last update's time and totals, for rates. */
	uint64_t live_ns;
	double live_alloc, live_inuse;
	uint64_t stats[EP_AST__COUNT];
	uint64_t bad_events;	  /* records of the wrong size or type */
	uint64_t collector_drops; /* could not be processed (ENOMEM) */
	char probed[8][128];	  /* files probed (the first few), for the report */
	size_t nprobed;
	uint64_t nlinks;
	int64_t unavailable_frame;
	uint32_t frames[EP_ALLOC_MAX_FRAMES + 1];
	struct alloc_results res;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int push(void **arr, size_t *n, size_t *cap, size_t elem, const void *v)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		void *p = realloc(*arr, nc * elem);

		if (!p)
			return -ENOMEM;
		*arr = p;
		*cap = nc;
	}
	memcpy((char *)*arr + *n * elem, v, elem);
	(*n)++;
	return 0;
}

static struct atarget *find_target(struct alloc_mod *m, uint32_t pid)
{
	for (size_t i = 0; i < m->ntg; i++)
		if (m->tg[i].pid == pid)
			return &m->tg[i];
	return NULL;
}

static void read_comm(struct alloc_mod *m, struct atarget *t)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/comm", m->ctx->opts->proc_root, t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	n = read(fd, t->comm, sizeof(t->comm) - 1);
	close(fd);
	if (n <= 0)
		return;
	t->comm[n] = '\0';
	t->comm[strcspn(t->comm, "\n")] = '\0';
}

/* ---- events ---- */

static int64_t intern(struct alloc_mod *m, const char *name, const char *module)
{
	return profile_intern_frame(&m->model.names, name, module, false);
}

static int handle_alloc(struct alloc_mod *m, const struct ep_alloc_event *e, size_t size)
{
	int n = e->ustack_sz > 0 ? e->ustack_sz / 8 : 0;
	bool kw = e->flags & EP_ALLOC_F_KWALK;
	struct atarget *t = find_target(m, e->hdr.pid);
	struct sym_result res;
	uint32_t depth = 0;
	int64_t fi, st;

	if (n > EP_ALLOC_MAX_FRAMES)
		n = EP_ALLOC_MAX_FRAMES;
	if (offsetof(struct ep_alloc_event, ips) + (size_t)n * 8 > size)
		return -EINVAL;
	/* Leaf first from the kernel; root first in the model. Every frame
	 * is a return address (the leaf too: the registers are the caller's
	 * after the call), looked up at address - 1 unless the walker did. */
	for (int i = n - 1; i >= 0; i--) {
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
	} else if (h->type == EP_EV_FREE && size >= sizeof(struct ep_alloc_free)) {
		const struct ep_alloc_free *f = data;

		alloc_model_free_block(&m->model, h->pid, f->addr, f->alloc_ts_ns, h->ts_ns);
	} else {
		m->bad_events++;
	}
	return 0;
}

/* ---- attaching ---- */

/* BPF_LINK_CREATE for a uprobe session, in the layout of the kernel's
 * union bpf_attr (link_create.uprobe_multi), which Debian 12's headers and
 * libbpf 1.1 predate. */
#define EP_BPF_TRACE_UPROBE_SESSION 57
#define EP_BPF_LINK_CREATE	    28
struct ep_link_create_uprobe_multi {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, mflags, pid;
	uint8_t zero[128 - 52]; /* the rest of union bpf_attr: zero */
};

static int attach_session(int prog_fd, uint32_t pid, const char *path, uint64_t off,
			  uint64_t cookie)
{
	struct ep_link_create_uprobe_multi a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = EP_BPF_TRACE_UPROBE_SESSION;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)&off;
	a.cookies = (uint64_t)(uintptr_t)&cookie;
	a.cnt = 1;
	a.pid = pid;
	fd = syscall(__NR_bpf, EP_BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

static int attach_one(struct alloc_mod *m, struct atarget *t, const char *path, uint64_t off,
		      enum ep_alloc_kind kind)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .bpf_cookie = kind);
	struct bpf_link *l;

	if (kind == EP_AK_NONE) {
		l = bpf_program__attach_uprobe_opts(m->skel->progs.alloc_free, (pid_t)t->pid, path,
						    off, &o);
		if (!l)
			return -errno;
		if (push((void **)&t->links, &t->nlinks, &t->caplinks, sizeof(l), &l)) {
			bpf_link__destroy(l);
			return -ENOMEM;
		}
		m->nlinks++;
		return 0;
	}
	if (m->session) {
		int fd = attach_session(bpf_program__fd(m->skel->progs.alloc_session), t->pid, path,
					off, kind);

		if (fd < 0)
			return fd;
		if (push((void **)&t->sess_fds, &t->nsess, &t->capsess, sizeof(fd), &fd)) {
			close(fd);
			return -ENOMEM;
		}
		m->nlinks++;
		return 0;
	}
	l = bpf_program__attach_uprobe_opts(m->skel->progs.alloc_entry, (pid_t)t->pid, path, off,
					    &o);
	if (!l)
		return -errno;
	if (push((void **)&t->links, &t->nlinks, &t->caplinks, sizeof(l), &l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	o.retprobe = true;
	o.bpf_cookie = 0;
	l = bpf_program__attach_uprobe_opts(m->skel->progs.alloc_ret, (pid_t)t->pid, path, off, &o);
	if (!l)
		return -errno;
	if (push((void **)&t->links, &t->nlinks, &t->caplinks, sizeof(l), &l)) {
		bpf_link__destroy(l);
		return -ENOMEM;
	}
	m->nlinks += 2;
	return 0;
}

/* Bytes to move a probe at file offset off so that the kernel emulates the
 * probed instruction (probe_point.h); 0 where it cannot be read. */
static uint64_t emulated_skip(int fd, uint64_t off)
{
#if defined(__x86_64__)
	uint8_t code[16];
	ssize_t n = pread(fd, code, sizeof(code), (off_t)off);

	return n > 0 ? alloc_probe_skip_x86(code, (size_t)n) : 0;
#else
	(void)fd;
	(void)off;
	return 0;
#endif
}

static void scan_file(struct alloc_mod *m, struct atarget *t, const struct ud_file *f)
{
	const char *names[NSYMS];
	uint64_t off[NSYMS] = { 0 };
	char path[512];
	bool standard;
	int fd, n, attached = 0;

	/* ld.so's own minimal allocator serves only the loader. */
	if (!strncmp(proc_maps_basename(f->path), "ld-", 3))
		return;
	for (size_t i = 0; i < NSYMS; i++)
		names[i] = syms[i].name;
	fd = ud_open_mapped(m->ctx->opts->proc_root, t->pid, f, path, sizeof(path));
	if (fd < 0)
		return;
	n = ud_find_functions(fd, names, NSYMS, off);
	if (n <= 0) {
		close(fd);
		return;
	}
	standard = off[0] != 0;
	for (size_t i = 0; i < NSYMS; i++) {
		bool dup = false;
		int err;

		if (!off[i] || syms[i].prefixed == standard)
			continue;
		/* Aliases (memalign = aligned_alloc in some builds): once. */
		for (size_t j = 0; j < i; j++)
			dup = dup || (off[j] == off[i] && syms[j].prefixed == syms[i].prefixed);
		if (dup)
			continue;
		err = attach_one(m, t, path, off[i] + emulated_skip(fd, off[i]), syms[i].kind);
		if (err)
			log_warn("alloc: pid %u: cannot probe %s in %s: %s", t->pid, syms[i].name,
				 f->path, strerror(-err));
		else
			attached++;
	}
	close(fd);
	if (attached) {
		log_info("alloc: pid %u: %d allocator functions probed in %s", t->pid, attached,
			 f->path);
		bool known = false;

		for (size_t i = 0; i < m->nprobed; i++)
			known = known || !strcmp(m->probed[i], f->path);
		if (!known && m->nprobed < sizeof(m->probed) / sizeof(m->probed[0]))
			snprintf(m->probed[m->nprobed++], sizeof(m->probed[0]), "%s", f->path);
	}
}

static bool seen_file(struct atarget *t, const struct ud_file *f)
{
	uint64_t k[2] = { f->dev, f->inode };

	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i][0] == f->dev && t->seen[i][1] == f->inode)
			return true;
	push((void **)&t->seen, &t->nseen, &t->capseen, sizeof(k), k);
	return false;
}

static void scan_target(struct alloc_mod *m, struct atarget *t)
{
	struct proc_maps pm = { 0 };
	struct ud_file *files;
	char path[128], *buf = NULL;
	size_t len, n;

	snprintf(path, sizeof(path), "%s/%u/maps", m->ctx->opts->proc_root, t->pid);
	if (proc_maps_read_file(path, MAX_MAPS_BYTES, &buf, &len))
		return; /* gone: on_exit follows */
	if (proc_maps_parse_buf(buf, len, 1u << 20, &pm)) {
		free(buf);
		return;
	}
	free(buf);
	read_comm(m, t);
	files = calloc(MAX_EXEC_FILES, sizeof(*files));
	if (files) {
		n = ud_exec_files(&pm, files, MAX_EXEC_FILES);
		for (size_t i = 0; i < n; i++)
			if (!seen_file(t, &files[i]))
				scan_file(m, t, &files[i]);
		free(files);
	}
	proc_maps_free(&pm);
}

/* ---- hooks ---- */

static int am_open(void **state, const struct rec_ctx *ctx)
{
	struct alloc_mod *m;
	int err;

	if (!ctx->opts->alloc)
		return -ENODEV;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ctx = ctx;
	m->unavailable_frame = -1;
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
	struct atarget t = { .pid = pid };

	if (find_target(m, pid))
		return 0;
	/* Scanned at attach, or at the next rescan when forked later. */
	return push((void **)&m->tg, &m->ntg, &m->captg, sizeof(t), &t);
}

static int load_bpf(struct alloc_mod *m, bool session)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = m->ctx->opts->btf_path);
	const struct cli_opts *o = m->ctx->opts;
	uint64_t *draws;
	int err;

	m->skel = alloc_bpf__open_opts(&oo);
	if (!m->skel)
		return errno ? -errno : -ENOMEM;
	draws = malloc(EP_ALLOC_DRAWS * sizeof(*draws));
	if (!draws)
		return -ENOMEM;
	alloc_draw_table(o->alloc_rate, draws, EP_ALLOC_DRAWS);
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
	if (err)
		return err;
	if (session)
		err = bpf_program__set_expected_attach_type(m->skel->progs.alloc_session,
							    EP_BPF_TRACE_UPROBE_SESSION);
	else
		err = bpf_program__set_autoload(m->skel->progs.alloc_session, false);
	if (err)
		return err;
	err = alloc_bpf__load(m->skel);
	if (err)
		return err;
	m->rb = ring_buffer__new(bpf_map__fd(m->skel->maps.alloc_events), on_event, m, NULL);
	if (!m->rb)
		return errno ? -errno : -ENOMEM;
	return 0;
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
	} else {
		m->session = true;
	}
	if (err) {
		log_error("--alloc: cannot load the allocation probes: %s (-v for the verifier "
			  "log)",
			  strerror(-err));
		return err;
	}
	for (size_t i = 0; i < m->ntg; i++)
		scan_target(m, &m->tg[i]);
	if (!m->nlinks)
		log_warn("--alloc: no allocator found in the target's maps yet (malloc, free, "
			 "...); looked for again as libraries are loaded");
	m->attached = true;
	m->next_rescan_ns = mono_ns() + RESCAN_PERIOD_NS;
	return 0;
}

static void am_on_held(void *state, uint32_t pid)
{
	struct alloc_mod *m = state;
	struct atarget *t = find_target(m, pid);

	if (t && m->attached)
		scan_target(m, t);
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
		for (size_t i = 0; i < m->ntg; i++)
			if (!m->tg[i].exited)
				scan_target(m, &m->tg[i]);
	}
	return n < 0 ? n : 0;
}

static void destroy_links(struct atarget *t)
{
	for (size_t i = 0; i < t->nlinks; i++)
		bpf_link__destroy(t->links[i]);
	t->nlinks = 0;
	for (size_t i = 0; i < t->nsess; i++)
		close(t->sess_fds[i]);
	t->nsess = 0;
}

static void am_on_exit(void *state, uint32_t pid, uint64_t ts)
{
	struct alloc_mod *m = state;
	struct atarget *t = find_target(m, pid);

	(void)ts;
	if (!t || !m->attached)
		return;
	/* Its samples are in the ring: symbolize them while its maps can
	 * still be read from the symbolizer's cache. */
	ring_buffer__consume(m->rb);
	t->exited = true;
	destroy_links(t);
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

static void am_stop(void *state)
{
	struct alloc_mod *m = state;

	if (!m->attached || m->stopped)
		return;
	for (size_t i = 0; i < m->ntg; i++)
		destroy_links(&m->tg[i]);
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
		.cycles = m->ctx->cycles ? cycle_sink_table(m->ctx->cycles) : NULL,
		.nlinks = m->nlinks,
	};

	if (!m->attached)
		return 0;
	for (size_t i = 0; i < m->nprobed; i++)
		run.probed[i] = m->probed[i];
	run.nprobed = m->nprobed;
	return alloc_report_json(&run, root, &m->res);
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
	for (size_t i = 0; i < m->ntg; i++) {
		destroy_links(&m->tg[i]);
		free(m->tg[i].links);
		free(m->tg[i].sess_fds);
		free(m->tg[i].seen);
	}
	free(m->tg);
	ring_buffer__free(m->rb);
	alloc_bpf__destroy(m->skel);
	alloc_model_free(&m->model);
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
	.stop = am_stop,
	.report_json = am_report,
	.write_files = am_write_files,
	.summary = am_summary,
	.close = am_close,
};
