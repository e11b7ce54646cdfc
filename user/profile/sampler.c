// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "profile/sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include "kernel/kfeat.h"
#include "kernel/vstat.h"
#include "util/log.h"
#include "overload/links.h"
#include "overload/rb_budget.h"
#include "kernel/skel_types.h"
#include "profile.skel.h"

/* Longest a poll handles records before the loop gets back to its deadline,
 * signal and module checks (rb_budget.h). 25 ms: the loop stays responsive
 * at any event rate, and a drain period (10 ms) of records at the highest
 * rate the collector keeps up with fits in it. */
#define POLL_BUDGET_NS (25 * 1000000ull)

struct sampler {
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	struct rb_budget budget;
	struct bpf_link **links;
	int *pfds;
	int ncpus;
	struct sampler_opts opts;
	struct kfeat kf; /* opts.kf points here: the features this object was built for */
};

static int open_cpu_clock(uint32_t freq, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.freq = 1,
		.sample_freq = freq,
	};

	/* Software cpu-clock, not cycles: the VMs and many boards we run on
	 * expose no hardware PMU, and time is what users ask about. */
	return (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Half a second of samples from every CPU at full rate: the collector drains
 * every 10 ms, so this only matters while it stalls (first load of a large
 * library's symbols). Records carry only the frames they use; 1 KiB is a
 * deep stack (64 user + 64 kernel frames), typical ones are a few hundred
 * bytes. Sized per machine because a fixed ring is either too small for 64
 * CPUs or a waste of resident memory on 2.
 * With a stack window every record carries it in full: a tenth of a second of
 * those instead (ten drain periods), so the ring does not grow to 16 MiB at
 * 999 Hz: its pages are resident in the collector. Drops, if a stall
 * outlasts it, are counted (docs/unwinding.md). */
static size_t ring_bytes(uint32_t freq_hz, uint32_t stack_bytes)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t rate = (uint64_t)(ncpus > 0 ? ncpus : 1) * freq_hz;
	uint64_t want = rate * 1024 / 2;
	uint64_t with_window = rate * (stack_bytes + 1024) / 10;
	size_t sz = 1u << 20;

	if (stack_bytes && with_window > want)
		want = with_window;
	while (sz < want && sz < (64u << 20))
		sz <<= 1;
	return sz;
}

/* One try at opening and loading. -EAGAIN: the kernel refused the sampling
 * program that walks stacks with bpf_loop (CFI tables, Python frames),
 * said and noted in opts->vs; sampler_open tries its twin without. */
static int open_once(struct sampler **out, const struct sampler_opts *opts, sampler_event_fn fn,
		     void *ctx)
{
	struct sampler *s;
	size_t ring;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->opts = *opts;
	s->kf = *opts->kf;
	s->opts.kf = &s->kf;
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = opts->btf_path);
	s->skel = profile_bpf__open_opts(&oo);
	if (!s->skel) {
		err = -errno;
		log_error("cannot open BPF object profile.bpf.o: %s", strerror(-err));
		goto fail;
	}
	s->skel->rodata->capture_kernel = opts->kernel_stacks;
	s->skel->rodata->stack_bytes = opts->stack_bytes > EP_MAX_STACK_BYTES ? EP_MAX_STACK_BYTES
									      : opts->stack_bytes;
	/* The window stops at the end of the stack mapping without faulting
	 * where the kernel can look the mapping up (5.17+). Uretprobe return
	 * addresses are put back in the window with bpf_loop (5.17+); older
	 * kernels keep the trampoline's address there. Kernel-mode samples read
	 * the user registers with bpf_task_pt_regs (5.15+), or from the top of
	 * the task's kernel stack before that. */
	s->skel->rodata->have_find_vma = opts->kf->have[KFEAT_FIND_VMA];
	s->skel->rodata->have_bpf_loop = opts->kf->have[KFEAT_BPF_LOOP];
	s->skel->rodata->have_task_pt_regs = opts->kf->have[KFEAT_TASK_PT_REGS];
	s->skel->rodata->kwalk = opts->kwalk;
	bpf_program__set_autoload(s->skel->progs.on_cpu_sample, opts->kf->have[KFEAT_BPF_LOOP]);
	bpf_program__set_autoload(s->skel->progs.on_cpu_sample_noloop,
				  !opts->kf->have[KFEAT_BPF_LOOP]);
	/* The lifecycle tracepoints as tp_btf programs, or raw_tp ones on a
	 * kernel without BTF (kfeat.h). */
	bpf_program__set_autoload(s->skel->progs.on_fork, opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_exec, opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_exit, opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_fork_raw, !opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_exec_raw, !opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_exit_raw, !opts->kf->btf);
	bpf_program__set_autoload(s->skel->progs.on_mmap_enter, opts->kwalk);
	bpf_program__set_autoload(s->skel->progs.on_mmap_exit, opts->kwalk);
	if (!opts->kwalk)
		bpf_map__set_max_entries(s->skel->maps.mmap_exec_tids, 1);
	if (opts->kwalk && !opts->kf->have[KFEAT_BPF_LOOP]) {
		err = -ENOTSUP;
		log_error("--unwind cfi-kernel needs bpf_loop (Linux 5.17+): use --unwind %s",
#if defined(__x86_64__)
			  "auto"
#else
			  "fp"
#endif
		);
		goto fail;
	}
	/* The walk's registers and task come from BTF-typed helpers
	 * (bpf_task_pt_regs, bpf_get_current_task_btf). */
	if (opts->kwalk && !opts->kf->btf) {
		err = -ENOTSUP;
		log_error("--unwind cfi-kernel needs the kernel's BTF, which this kernel does not "
			  "have: use --unwind %s",
#if defined(__x86_64__)
			  "auto"
#else
			  "fp"
#endif
		);
		goto fail;
	}
	/* The walker's row cache: 80 KiB per CPU. */
	if (opts->kwalk) {
		int nc = libbpf_num_possible_cpus();

		bpf_map__set_max_entries(s->skel->maps.uw_rcache,
					 (nc > 0 ? nc : 1) *
						 bpf_map__max_entries(s->skel->maps.uw_rcache));
	}
	/* The walker's block index is preallocated (256 KiB): only with it. */
	if (!opts->kwalk) {
		bpf_map__set_max_entries(s->skel->maps.uw_blk_pc, 1);
		bpf_map__set_max_entries(s->skel->maps.uw_objs, 1);
		bpf_map__set_max_entries(s->skel->maps.uw_procs, 1);
		bpf_map__set_max_entries(s->skel->maps.uw_rcache, 1);
	}
	if (opts->python) {
		s->skel->rodata->py_enabled = opts->kf->have[KFEAT_BPF_LOOP];
		if (!s->skel->rodata->py_enabled)
			log_warn(
				"this kernel has no bpf_loop (Linux 5.17+): Python frames are not walked");
	}
	if (!s->skel->rodata->py_enabled) {
		bpf_map__set_max_entries(s->skel->maps.py_tstates, 1);
		bpf_map__set_max_entries(s->skel->maps.py_procs, 1);
	}
	/* Without a window the per-thread mapping cache is never used: do not
	 * have the kernel preallocate its 8192 entries. */
	if (!s->skel->rodata->have_find_vma)
		bpf_map__set_max_entries(s->skel->maps.stack_vmas, 1);
	ring = ring_bytes(opts->freq_hz, s->skel->rodata->stack_bytes);
	/* Wake the collector early only when half the ring is used: the timer
	 * drain normally empties it long before. */
	s->skel->rodata->wakeup_watermark = ring / 2;
	err = bpf_map__set_max_entries(s->skel->maps.events, (uint32_t)ring);
	if (err) {
		log_error("cannot size the BPF ring buffer to %zu bytes: %s", ring, strerror(-err));
		goto fail;
	}
	/* Fault injection (tests): "profile:PROGRAM" makes the kernel refuse
	 * that program, as a kernel without something it needs would. */
	if (opts->fault_prog) {
		struct bpf_program *p =
			bpf_object__find_program_by_name(s->skel->obj, opts->fault_prog);

		if (p && bpf_program__autoload(p))
			bpf_program__set_type(p, BPF_PROG_TYPE_UNSPEC);
	}
	vstat_prepare(opts->vs, s->skel->obj);
	err = profile_bpf__load(s->skel);
	vstat_collect(opts->vs, s->skel->obj, "profile", err);
	if (err && opts->kf->have[KFEAT_BPF_LOOP]) {
		const struct vstat_prog *bad = vstat_refused(opts->vs, "profile");

		if (bad && !strcmp(bad->name, "on_cpu_sample")) {
			const char *lost =
				"its twin without bpf_loop loaded instead: CPU user "
				"stacks by frame pointers (no CFI walk, no Python frames)";

			log_warn("CPU sampling: this kernel refuses BPF program %s (%s): %s",
				 bad->name, bad->reason, lost);
			vstat_add_degraded(opts->vs, bad->name, bad->reason, lost);
			err = -EAGAIN;
			goto fail;
		}
	}
	/* libbpf found no BTF for the relocations: not in sysfs, not at its
	 * other places (kernel/preflight.c checked them), and no --btf. */
	if (err == -ESRCH && !opts->btf_path && !opts->kf->btf) {
		log_error("cannot load BPF programs: %s: this kernel has no BTF "
			  "(/sys/kernel/btf/vmlinux); give it with --btf FILE: BTFHub's file for "
			  "this kernel, or `pahole -J` on its vmlinux (docs/jetson.md)",
			  strerror(-err));
		goto fail;
	}
	/* The verifier answers EACCES or EINVAL; EPERM is bpf() itself denied
	 * with the capabilities present: a seccomp profile (containers), an LSM
	 * or kernel lockdown. Its verifier log is empty. */
	if (err == -EPERM) {
		log_error("cannot load BPF programs: permission denied although the capabilities "
			  "are there: bpf() is refused by a seccomp profile (container: "
			  "--privileged or a profile allowing bpf and perf_event_open), an LSM "
			  "(SELinux/AppArmor) or kernel lockdown (/sys/kernel/security/lockdown)");
		goto fail;
	}
	if (err) {
		log_error(
			"cannot load BPF programs%s%s: %s%s", opts->btf_path ? " with --btf " : "",
			opts->btf_path ? opts->btf_path : "", strerror(-err),
			log_get_level() < LOG_DEBUG ? " (rerun with -v for the verifier log)" : "");
		goto fail;
	}
	s->budget.fn = (ring_buffer_sample_fn)fn;
	s->budget.ctx = ctx;
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.events), rb_budget_cb, &s->budget, NULL);
	if (!s->rb) {
		err = -errno;
		log_error("cannot set up the BPF ring buffer: %s", strerror(-err));
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sampler_close(s);
	return err;
}

int sampler_open(struct sampler **out, const struct sampler_opts *opts, sampler_event_fn fn,
		 void *ctx)
{
	struct sampler_opts o = *opts;
	struct kfeat kf = *opts->kf;
	int err = open_once(out, opts, fn, ctx);

	if (err != -EAGAIN)
		return err;
	/* As on a kernel without bpf_loop: the twin, frame-pointer stacks. */
	kf.have[KFEAT_BPF_LOOP] = false;
	o.kf = &kf;
	o.kwalk = false;
	o.python = false;
	o.stack_bytes = 0;
	o.fault_prog = NULL;
	err = open_once(out, &o, fn, ctx);
	return err == -EAGAIN ? -EACCES : err;
}

bool sampler_kwalk(const struct sampler *s)
{
	return s->opts.kwalk;
}

int sampler_add_target(struct sampler *s, uint32_t pid)
{
	uint8_t one = 1;

	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targets), &pid, &one, BPF_ANY)) {
		int err = -errno;

		log_error("cannot add pid %u to the target filter: %s", pid, strerror(-err));
		return err;
	}
	return 0;
}

int sampler_targets_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.targets);
}

int sampler_events_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.events);
}

int sampler_py_procs_fd(const struct sampler *s)
{
	return s->skel->rodata->py_enabled ? bpf_map__fd(s->skel->maps.py_procs) : -1;
}

const volatile uint64_t *sampler_mmap_gen(const struct sampler *s)
{
	return s->skel->rodata->kwalk && s->skel->bss
		       ? (const volatile uint64_t *)&s->skel->bss->mmap_exec_gen
		       : NULL;
}

int sampler_py_tstates_fd(const struct sampler *s)
{
	return s->skel->rodata->py_enabled ? bpf_map__fd(s->skel->maps.py_tstates) : -1;
}

int sampler_py_stats_fd(const struct sampler *s)
{
	return s->skel->rodata->py_enabled ? bpf_map__fd(s->skel->maps.py_stats) : -1;
}

int sampler_attach(struct sampler *s)
{
	int ncpus = libbpf_num_possible_cpus(), attached = 0, err;

	if (ncpus <= 0)
		return ncpus < 0 ? ncpus : -ENODEV;
	s->ncpus = ncpus;
	s->links = calloc(ncpus, sizeof(*s->links));
	s->pfds = malloc(ncpus * sizeof(*s->pfds));
	if (!s->links || !s->pfds)
		return -ENOMEM;
	for (int i = 0; i < ncpus; i++)
		s->pfds[i] = -1;

	/* Lifecycle programs first: a fork between the two steps is then not
	 * missed. */
	err = profile_bpf__attach(s->skel);
	if (err) {
		log_error("cannot attach sched_process_fork/exit tracepoints: %s", strerror(-err));
		return err;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		int fd = open_cpu_clock(s->opts.freq_hz, cpu);

		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			err = -errno;
			log_error("cannot open cpu-clock perf event on CPU %d at %u Hz: %s%s", cpu,
				  s->opts.freq_hz, strerror(-err),
				  err == -EINVAL
					  ? " (frequency above kernel.perf_event_max_sample_rate?)"
					  : "");
			return err;
		}
		s->pfds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(
			s->opts.kf->have[KFEAT_BPF_LOOP] ? s->skel->progs.on_cpu_sample
							 : s->skel->progs.on_cpu_sample_noloop,
			fd);
		if (!s->links[cpu]) {
			err = -errno;
			log_error("cannot attach BPF program to perf event on CPU %d: %s", cpu,
				  strerror(-err));
			return err;
		}
		attached++;
	}
	if (!attached) {
		log_error("no online CPU accepted a perf event");
		return -ENODEV;
	}
	return 0;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	return rb_budget_poll(s->rb, &s->budget, timeout_ms, POLL_BUDGET_NS);
}

int sampler_stop(struct sampler *s, uint64_t budget_ns, uint64_t *unread)
{
	int n;

	struct timespec t[3];

	*unread = 0;
	clock_gettime(CLOCK_MONOTONIC, &t[0]);
	/* No new samples: what is queued is then finite, whatever the rate. */
	for (int i = 0; s->pfds && i < s->ncpus; i++)
		if (s->pfds[i] >= 0)
			ioctl(s->pfds[i], PERF_EVENT_IOC_DISABLE, 0);
	clock_gettime(CLOCK_MONOTONIC, &t[1]);
	n = rb_budget_consume(s->rb, &s->budget, budget_ns);
	if (n >= 0 && s->budget.spent) {
		/* Bounded too: fork/exit records keep coming. */
		int64_t left = rb_budget_discard(s->rb, &s->budget, budget_ns / 4);

		if (left > 0)
			*unread = (uint64_t)left;
	}
	clock_gettime(CLOCK_MONOTONIC, &t[2]);
	log_debug("sampler stop: perf events disabled in %.1f ms, %d records drained in %.1f ms%s",
		  (double)(t[1].tv_sec - t[0].tv_sec) * 1e3 +
			  (double)(t[1].tv_nsec - t[0].tv_nsec) / 1e6,
		  n,
		  (double)(t[2].tv_sec - t[1].tv_sec) * 1e3 +
			  (double)(t[2].tv_nsec - t[1].tv_nsec) / 1e6,
		  s->budget.spent ? " (budget spent)" : "");
	return n;
}

bool sampler_behind(const struct sampler *s)
{
	return s->budget.spent;
}

uint64_t sampler_polls_cut_short(const struct sampler *s)
{
	return s->budget.cut_short;
}

int sampler_read_drops(struct sampler *s, uint64_t out[EP_DROP__COUNT])
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpus <= 0)
		return -ENODEV;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < EP_DROP__COUNT; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.drops), &k, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

int sampler_read_uw_stats(struct sampler *s, uint64_t out[3])
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *vals;

	if (ncpus <= 0)
		return -ENODEV;
	vals = calloc(ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (uint32_t k = 0; k < 3; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.uw_stats), &k, vals))
			continue;
		for (int c = 0; c < ncpus; c++)
			out[k] += vals[c];
	}
	free(vals);
	return 0;
}

void sampler_get_uw_fds(const struct sampler *s, struct sampler_uw_fds *out)
{
	out->objs = bpf_map__fd(s->skel->maps.uw_objs);
	out->blk_pc = bpf_map__fd(s->skel->maps.uw_blk_pc);
	out->procs = bpf_map__fd(s->skel->maps.uw_procs);
}

void sampler_take_links(struct sampler *s, struct link_list *out)
{
	struct bpf_link **skl[] = { &s->skel->links.on_cpu_sample, &s->skel->links.on_fork,
				    &s->skel->links.on_exec,	   &s->skel->links.on_mmap_enter,
				    &s->skel->links.on_mmap_exit,  &s->skel->links.on_exit };

	for (size_t i = 0; i < sizeof(skl) / sizeof(skl[0]); i++) {
		link_list_push(out, *skl[i]);
		*skl[i] = NULL;
	}
	for (int i = 0; s->links && i < s->ncpus; i++) {
		if (!s->links[i])
			continue;
		/* The link closes its perf event: this fd is no longer ours
		 * (closing it too could close a file opened meanwhile). */
		link_list_push(out, s->links[i]);
		s->links[i] = NULL;
		if (s->pfds)
			s->pfds[i] = -1;
	}
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	if (s->links) {
		for (int i = 0; i < s->ncpus; i++) {
			if (!s->links[i])
				continue;
			bpf_link__destroy(s->links[i]); /* closes the perf event */
			if (s->pfds)
				s->pfds[i] = -1;
		}
	}
	if (s->pfds) {
		for (int i = 0; i < s->ncpus; i++)
			if (s->pfds[i] >= 0)
				close(s->pfds[i]);
	}
	free(s->links);
	free(s->pfds);
	ring_buffer__free(s->rb);
	profile_bpf__destroy(s->skel);
	free(s);
}
