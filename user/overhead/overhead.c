// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "overhead.h"

#include "profile/profile.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

double overhead_probe_ns(const struct overhead *o, uint64_t *hits)
{
	uint64_t runs = 0;
	double ns = 0;

	uint64_t wruns = 0;

	for (size_t i = 0; o && i < o->n; i++) {
		if (o->progs[i].kind == OVH_PROBE)
			runs += o->progs[i].runs;
		else if (o->progs[i].kind == OVH_WATCH)
			wruns += o->progs[i].runs;
		else
			continue;
		ns += (double)o->progs[i].run_ns;
	}
	if (o && o->trap_ns > 0)
		ns += (double)runs * o->trap_ns;
	if (o && o->watch_ns > 0)
		ns += (double)wruns * o->watch_ns;
	if (hits)
		*hits = runs + wruns;
	return ns;
}

double overhead_sample_ns(const struct overhead *o, uint64_t *runs)
{
	uint64_t r = 0;
	double ns = 0;

	for (size_t i = 0; o && i < o->n; i++)
		if (o->progs[i].kind == OVH_SAMPLE) {
			r += o->progs[i].runs;
			ns += (double)o->progs[i].run_ns;
		}
	if (runs)
		*runs = r;
	return ns;
}

/* ---- seen by the sampler ---- */

static bool uprobe_frame(const struct prof_frame *f)
{
	/* uprobe_notify_resume, uprobe_dispatcher, handle_uretprobe_chain,
	 * handle_swbp, the [uprobes] trampoline page... and the breakpoint
	 * trap itself, exc_int3 or its entry stub asm_exc_int3 (6.18 samples
	 * a third of a probe's cost in asm_exc_int3 -> irqentry_exit_to_user_mode,
	 * on the way back, with no uprobe function on the stack). */
	return f->kernel && f->name &&
	       (strstr(f->name, "uprobe") || strstr(f->name, "swbp") ||
		strstr(f->name, "exc_int3") ||
		/* watchpoints (py: cycles): exc_debug_user, hw_breakpoint_handler,
		 * perf_bp_event; arm64's watchpoint_handler */
		strstr(f->name, "exc_debug") || strstr(f->name, "breakpoint") ||
		strstr(f->name, "perf_bp_event") || strstr(f->name, "watchpoint"));
}

void overhead_count_samples(struct overhead *o, const struct profile *p)
{
	int8_t *hit;

	o->samples_in_probes = o->samples_total = 0;
	if (!p || !p->nstacks)
		return;
	hit = calloc(p->nstacks, sizeof(*hit));
	if (!hit)
		return;
	for (size_t s = 0; s < p->nstacks; s++) {
		const struct prof_stack *st = &p->stacks[s];

		for (uint32_t k = 0; k < st->depth && !hit[s]; k++)
			if (st->frames[k] < p->nframes && uprobe_frame(&p->frames[st->frames[k]]))
				hit[s] = 1;
		o->samples_total += st->count;
		if (hit[s])
			o->samples_in_probes += st->count;
	}
	free(hit);
}

double overhead_probe_share(const struct overhead *o)
{
	double ns;

	if (o->samples_total >= 200)
		return (double)o->samples_in_probes / (double)o->samples_total;
	ns = overhead_probe_ns(o, NULL);
	if (!o->target_cpu_ns || (!ns && o->trap_ns < 0))
		return -1;
	ns /= (double)o->target_cpu_ns;
	return ns > 1 ? 1 : ns;
}

/* ---- calibration ---- */

/* The probed function: a nop first, as at a USDT point (the kernel
 * emulates it; an instruction it must single-step out of line costs a
 * second trap, which a compiled "lea" first would add). */
#if defined(__x86_64__)
__asm__(".text\n.globl ep_overhead_calib\n.type ep_overhead_calib,@function\n"
	"ep_overhead_calib:\n\tnop\n\tleal 1(%rdi), %eax\n\tret\n"
	".size ep_overhead_calib, .-ep_overhead_calib\n");
#define HAVE_CALIB 1
#elif defined(__aarch64__)
__asm__(".text\n.globl ep_overhead_calib\n.type ep_overhead_calib,%function\n"
	"ep_overhead_calib:\n\tnop\n\tadd w0, w0, #1\n\tret\n"
	".size ep_overhead_calib, .-ep_overhead_calib\n");
#define HAVE_CALIB 1
#endif
#ifdef HAVE_CALIB
int ep_overhead_calib(int x);
#define overhead_calib_target ep_overhead_calib
#else
static int overhead_calib_target(int x)
{
	return x + 1;
}
#endif

/* CPU time of this thread, not CLOCK_MONOTONIC: on a busy machine the
 * wall time of a loop counts the waits for a CPU, which are no trap cost. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1000 calls take >= 0.4 ms with a trap in each, far above the clock's
 * resolution; best of 4 rounds drops a disturbed one. 4000 x 5 cost
 * ~10% of the collector's CPU on a short run (~50 ms), this ~10 ms. */
#define CALIB_CALLS  1000
#define CALIB_ROUNDS 4

/* Best (least disturbed) time of CALIB_CALLS calls, per call. */
static double per_call(void)
{
	static int (*volatile fn)(int) = overhead_calib_target;
	double best = 1e18;

	for (int r = 0; r < CALIB_ROUNDS; r++) {
		uint64_t t0 = now_ns();
		int acc = 0;

		for (int i = 0; i < CALIB_CALLS; i++)
			acc = fn(acc);
		double d = (double)(now_ns() - t0) / CALIB_CALLS;

		if (acc == CALIB_CALLS && d < best)
			best = d;
	}
	return best;
}

static int read_int_file(const char *path, int *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* File and offset of our own function, from /proc/self/maps. */
static int self_location(char *path, size_t len, uint64_t *off)
{
	uintptr_t a = (uintptr_t)overhead_calib_target;
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, fo;
		char perms[8], p[4096];

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perms, &fo, p) != 5)
			continue;
		if (a < lo || a >= hi || perms[2] != 'x' || p[0] != '/')
			continue;
		if (strlen(p) >= len) {
			err = -ENAMETOOLONG;
			break;
		}
		strcpy(path, p);
		*off = a - lo + fo;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* "return 0": our programs' shortest path. With a program attached that
 * returns 0 the kernel skips the perf event's own work, as for our
 * probes, so the trap is measured the way our probes take it. */
static int empty_prog_of(enum bpf_prog_type type)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(type, "ep_calib", "Dual BSD/GPL", insns, 2, NULL);
}

static int empty_prog(void)
{
	return empty_prog_of(BPF_PROG_TYPE_KPROBE);
}

/* A debug exception per write: ~1 us on hardware, ~10 us in a VM whose
 * hypervisor takes them; 64 writes are well above the clock's
 * resolution and cost < 1 ms. */
#define CALIB_WRITES 64
static volatile uint64_t calib_var;

static double per_write(void)
{
	double best = 1e18;

	for (int r = 0; r < CALIB_ROUNDS; r++) {
		uint64_t t0 = now_ns();

		for (int i = 0; i < CALIB_WRITES; i++)
			calib_var = calib_var + 1;
		double d = (double)(now_ns() - t0) / CALIB_WRITES;

		if (d < best)
			best = d;
	}
	return best;
}

int overhead_calibrate_watch(double *ns)
{
	struct perf_event_attr a;
	double base, with = 0;
	int prog, fd, err = 0;

	prog = empty_prog_of(BPF_PROG_TYPE_PERF_EVENT);
	if (prog < 0)
		return prog;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&calib_var;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	base = per_write();
	/* This thread only, as the collector watches each target thread. */
	fd = (int)syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		close(prog);
		return err;
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog))
		err = -errno;
	else
		with = per_write();
	close(fd);
	close(prog);
	if (!err)
		*ns = with > base ? with - base : 0;
	return err;
}

static int open_uprobe(int type, int ret_bit, bool ret, const char *path, uint64_t off, int prog)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = (uint32_t)type;
	a.config = ret ? 1ull << ret_bit : 0;
	a.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	a.config2 = off;		       /* probe_offset */
	fd = syscall(__NR_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (prog >= 0 && ioctl((int)fd, PERF_EVENT_IOC_SET_BPF, prog)) {
		int err = -errno;

		close((int)fd);
		return err;
	}
	return (int)fd;
}

int overhead_calibrate(double *entry_ns, double *ret_ns)
{
#ifndef HAVE_CALIB
	(void)entry_ns;
	(void)ret_ns;
	return -ENOTSUP;
#endif
	char path[4096], fmt[64];
	uint64_t off = 0;
	int type, ret_bit = 0, fe, fr, err, prog;
	double base, with_entry, with_both;
	FILE *f;

	err = read_int_file("/sys/bus/event_source/devices/uprobe/type", &type);
	if (err)
		return err;
	f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "re");
	if (f) {
		if (!fgets(fmt, sizeof(fmt), f) || sscanf(fmt, "config:%d", &ret_bit) != 1)
			ret_bit = 0;
		fclose(f);
	}
	err = self_location(path, sizeof(path), &off);
	if (err)
		return err;
	prog = empty_prog();
	if (prog < 0)
		return prog;
	base = per_call();
	fe = open_uprobe(type, ret_bit, false, path, off, prog);
	if (fe < 0) {
		close(prog);
		return fe;
	}
	with_entry = per_call();
	fr = open_uprobe(type, ret_bit, true, path, off, prog);
	if (fr < 0) {
		close(fe);
		close(prog);
		return fr;
	}
	with_both = per_call();
	close(fr);
	close(fe);
	close(prog);
	*entry_ns = with_entry > base ? with_entry - base : 0;
	*ret_ns = with_both > with_entry ? with_both - with_entry : 0;
	return 0;
}

/* ---- outputs ---- */

static const char *kind_name(enum overhead_kind k)
{
	return k == OVH_PROBE	 ? "probe"
	       : k == OVH_WATCH	 ? "watchpoint"
	       : k == OVH_SAMPLE ? "sample"
				 : "other";
}

int overhead_report_json(const struct overhead *o, cJSON *root)
{
	cJSON *ov = cJSON_AddObjectToObject(root, "overhead"), *arr;
	uint64_t hits, runs;
	double pns = overhead_probe_ns(o, &hits), sns = overhead_sample_ns(o, &runs);

	if (!ov || !cJSON_AddBoolToObject(ov, "bpf_stats", o->stats) ||
	    !(o->trap_ns >= 0 ? cJSON_AddNumberToObject(ov, "trap_ns", o->trap_ns)
			      : cJSON_AddNullToObject(ov, "trap_ns")) ||
	    !(o->watch_ns >= 0 ? cJSON_AddNumberToObject(ov, "watch_trap_ns", o->watch_ns)
			       : cJSON_AddNullToObject(ov, "watch_trap_ns")) ||
	    !cJSON_AddNumberToObject(ov, "probe_hits", (double)hits) ||
	    !cJSON_AddNumberToObject(ov, "probe_ns", pns) ||
	    !cJSON_AddNumberToObject(ov, "samples", (double)runs) ||
	    !cJSON_AddNumberToObject(ov, "sample_ns", sns) ||
	    !cJSON_AddNumberToObject(ov, "per_sample_ns", runs ? sns / (double)runs : 0) ||
	    !cJSON_AddNumberToObject(ov, "target_cpu_ns", (double)o->target_cpu_ns) ||
	    !cJSON_AddNumberToObject(ov, "samples_in_probes", (double)o->samples_in_probes) ||
	    !cJSON_AddNumberToObject(ov, "samples_total", (double)o->samples_total) ||
	    !(overhead_probe_share(o) >= 0
		      ? cJSON_AddNumberToObject(ov, "probe_share", overhead_probe_share(o))
		      : cJSON_AddNullToObject(ov, "probe_share")) ||
	    !(arr = cJSON_AddArrayToObject(ov, "programs")))
		return -ENOMEM;
	for (size_t i = 0; i < o->n; i++) {
		const struct overhead_prog *p = &o->progs[i];
		cJSON *e = cJSON_CreateObject();

		if (!e || !cJSON_AddItemToArray(arr, e) ||
		    !cJSON_AddStringToObject(e, "name", p->name) ||
		    !cJSON_AddStringToObject(e, "kind", kind_name(p->kind)) ||
		    !cJSON_AddNumberToObject(e, "runs", (double)p->runs) ||
		    !cJSON_AddNumberToObject(e, "run_ns", (double)p->run_ns))
			return -ENOMEM;
	}
	return 0;
}

void overhead_summary(const struct overhead *o, FILE *out)
{
	uint64_t hits, runs;
	double pns = overhead_probe_ns(o, &hits), sns = overhead_sample_ns(o, &runs);

	if (!hits && !runs)
		return;
	fprintf(out, "Overhead (our cost inside the target):");
	if (hits) {
		uint64_t w = 0;

		for (size_t i = 0; i < o->n; i++)
			if (o->progs[i].kind == OVH_WATCH)
				w += o->progs[i].runs;
		fprintf(out, " probes %.1f ms (%" PRIu64 " hits", pns / 1e6, hits - w);
		if (o->trap_ns >= 0)
			fprintf(out, " x %.0f ns trap", o->trap_ns);
		if (w) {
			fprintf(out, ", %" PRIu64 " watchpoint hits", w);
			if (o->watch_ns >= 0)
				fprintf(out, " x %.0f ns", o->watch_ns);
		}
		if (o->stats)
			fprintf(out, " + BPF");
		fprintf(out, ")");
	}
	if (runs && o->stats)
		fprintf(out, "%s samples %.1f ms (%" PRIu64 " x %.1f us)", hits ? ";" : "",
			sns / 1e6, runs, sns / 1e3 / (double)runs);
	if (o->target_cpu_ns)
		fprintf(out, "; the targets ran %.1f ms on CPU", (double)o->target_cpu_ns / 1e6);
	fprintf(out, "\n");
	if (o->samples_total)
		fprintf(out,
			"  samples in the kernel's uprobe code (our probes): %" PRIu64
			" of %" PRIu64 " (%.1f%%)\n",
			o->samples_in_probes, o->samples_total,
			100.0 * (double)o->samples_in_probes / (double)o->samples_total);
}

void overhead_free(struct overhead *o)
{
	free(o->progs);
	o->progs = NULL;
	o->n = 0;
}
