// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CPU sampler's records into the profile (cpu_samples.h): the path of
 * every sample, kept apart from the recording run's phases (record.c) so
 * that what a sample costs can be read in one place.
 */
#include "profile/cpu_samples.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "util/clock.h"
#include "cycles/cycle_sink.h"
#include "overload/tick_guard.h"
#include "profile/profile.h"
#include "profile/sampler.h"
#include "python/pyframes.h"
#include "report/report.h"
#include "symbolize/symbolize.h"
#include "unwind/ktables.h"
#include "unwind/unwind.h"
#include "util/log.h"

/* CPU time, not wall time: on a busy machine the collector is preempted
 * mid-unwind and wall time would blame the unwinder for the wait. */
#define UNWIND_TIME_EVERY 16

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void cpu_samples_init(struct cpu_samples *cs, const struct cpu_samples_opts *o)
{
	cs->o = *o;
	cs->unavailable_frame = cs->truncated_frame = -1;
	cs->jit_frame = cs->unknown_map_frame = -1;
}

void cpu_samples_profile_replaced(struct cpu_samples *cs)
{
	/* Every marker's index belongs to the freed profile: one kept would
	 * name a frame of the new profile that means something else. */
	cs->unavailable_frame = cs->truncated_frame = -1;
	cs->jit_frame = cs->unknown_map_frame = -1;
}

static int64_t intern_symbol(struct cpu_samples *cs, const struct sym_result *res, bool kernel)
{
	return profile_intern_frame_stable(cs->o.prof, res->name, res->module, kernel);
}

/* The user stack of a sample, leaf first, into cs->uaddrs as addresses
 * ready to symbolize, per the --unwind mode: the CFI unwinder over the
 * copied window, or the kernel's frame-pointer walk. Returns the frame count
 * and sets *truncated when the stack was cut short of its outermost frame. */
/* A stack walked in the kernel (bpf/uwalk.h): its frames are ready to
 * symbolize; how the walk ended decides the marker at its root. */
static int kwalk_stack(struct cpu_samples *cs, const struct ep_sample *s, const __u64 *ips, int n,
		       bool *truncated, int64_t **marker)
{
	struct run_unwind *st = cs->o.st;
	uint32_t end = EP_SAMPLE_UW_END(s->flags);

	st->kw_end[end < 16 ? end : 0]++;
	if (s->flags & EP_SAMPLE_F_URETPROBE_FIXED)
		st->kw_uretprobe_fixed++;
	switch (end) {
	case EP_UW_END_NO_TABLES:
		/* Walked by frame pointers: the process was not scanned yet
		 * (launch mode, a fork the collector has not seen). */
		st->fp++;
		st->fp_fallback++;
		if (cs->o.kt)
			ktables_miss(cs->o.kt, s->hdr.pid, mono_ns());
		break;
	case EP_UW_END_DEPTH:
		st->cfi++;
		st->truncated++;
		*truncated = true;
		break;
	case EP_UW_END_JIT:
		st->cfi++;
		*marker = &cs->jit_frame;
		break;
	case EP_UW_END_UNKNOWN:
		st->cfi++;
		*marker = &cs->unknown_map_frame;
		if (cs->o.kt)
			ktables_miss(cs->o.kt, s->hdr.pid, mono_ns());
		break;
	case EP_UW_END_ROOT:
	case EP_UW_END_FP_ROOT:
		st->cfi++;
		break;
	default:
		st->cfi++;
		st->errors++;
	}
	for (int i = 0; i < n; i++)
		cs->uaddrs[i] = ips[i];
	return n;
}

static int user_stack(struct cpu_samples *cs, const struct ep_sample *s, const __u64 *fpstack,
		      int nfp, const void *win, size_t winlen, bool *truncated, int64_t **marker)
{
	struct run_unwind *st = cs->o.st;
	bool fallback = false;

	*truncated = false;
	*marker = NULL;
	if (s->flags & EP_SAMPLE_F_KWALK)
		return kwalk_stack(cs, s, fpstack, nfp, truncated, marker);
	if (cs->o.unwind != CLI_UNWIND_FP && cs->o.uw) {
		if ((s->flags & EP_SAMPLE_F_UREGS) && winlen) {
			struct unwind_input in = {
				.pid = s->hdr.pid,
				.ip = s->uregs[EP_UREG_IP],
				.sp = s->uregs[EP_UREG_SP],
				.fp = s->uregs[EP_UREG_FP],
				.stack = win,
				.stack_len = winlen,
			};
			struct unwind_result res;
			/* Reading the thread's CPU clock is a system call (~1 us
			 * here, 3% of the collector at 999 Hz when done for every
			 * stack): time one call in UNWIND_TIME_EVERY. */
			bool timed = st->calls++ % UNWIND_TIME_EVERY == 0;
			uint64_t t0 = timed ? thread_cpu_ns() : 0;
			int err = unwinder_unwind(cs->o.uw, &in, cs->uaddrs, EP_MAX_STACK_DEPTH,
						  &res);

			if (timed) {
				st->unwind_ns += thread_cpu_ns() - t0;
				st->timed++;
			}
			if (err)
				return err;
			/* auto: a walk that failed at once (a pc without CFI
			 * whose frame pointer leads nowhere, e.g. JIT code) is
			 * better served by the kernel's frame-pointer walk. */
			if (cs->o.unwind == CLI_UNWIND_DWARF || res.n > 1 ||
			    (res.n == 1 && res.status != UNWIND_ERROR) || !nfp) {
				st->cfi++;
				if (res.status == UNWIND_TRUNCATED || res.status == UNWIND_DEPTH) {
					st->truncated++;
					*truncated = true;
				} else if (res.status == UNWIND_ERROR) {
					st->errors++;
				}
				return (int)res.n;
			}
			fallback = true;
		} else {
			st->no_window++;
			if (cs->o.unwind == CLI_UNWIND_DWARF) {
				st->cfi++;
				st->errors++;
				return 0;
			}
			fallback = true;
		}
	}
	st->fp++;
	if (fallback)
		st->fp_fallback++;
	/* Every frame but the leaf is a return address: look up address - 1
	 * so a call at the very end of a function is not blamed on the next
	 * one. */
	for (int i = 0; i < nfp; i++)
		cs->uaddrs[i] = i && fpstack[i] ? fpstack[i] - 1 : fpstack[i];
	return nfp;
}

static int handle_sample(struct cpu_samples *cs, const struct ep_sample *s, size_t size)
{
	struct profile *prof = cs->o.prof;
	uint32_t depth = 0, nkernel = 0;
	int nkern = s->kstack_sz > 0 ? s->kstack_sz / 8 : 0;
	int nuser = s->ustack_sz > 0 ? s->ustack_sz / 8 : 0;
	size_t avail = (size - EP_SAMPLE_HDR_SIZE) / 8, winoff, winlen = 0;
	const __u64 *kstack = s->stack, *ustack;
	int maxu = s->flags & EP_SAMPLE_F_KWALK ? EP_UW_MAX_FRAMES : EP_MAX_STACK_DEPTH;
	struct sym_result res;
	int64_t thread, fi, *marker, user_leaf = -1;
	bool truncated;
	int nu, err;

	/* Trust the record's size, not its length fields. */
	if (nkern > EP_MAX_STACK_DEPTH)
		nkern = EP_MAX_STACK_DEPTH;
	if ((size_t)nkern > avail)
		nkern = (int)avail;
	ustack = s->stack + nkern;
	if (nuser > maxu)
		nuser = maxu;
	if ((size_t)nuser > avail - (size_t)nkern)
		nuser = (int)(avail - (size_t)nkern);
	/* The stack window follows the frames (bpf/events/profile.h). */
	winoff = EP_SAMPLE_HDR_SIZE + ((size_t)nkern + (size_t)nuser) * 8;
	if (s->ustack_copy && winoff <= size && s->ustack_copy <= size - winoff &&
	    s->ustack_copy <= EP_MAX_STACK_BYTES)
		winlen = s->ustack_copy;

	char comm[EP_COMM_LEN + 1];

	memcpy(comm, s->comm, EP_COMM_LEN);
	comm[EP_COMM_LEN] = '\0';
	err = cs->o.ops->before_sample(cs->o.owner, s->hdr.pid, s->hdr.tid, s->hdr.ts_ns, comm);
	if (err)
		return err;
	/* After before_sample: --rotate may have replaced the profile. */
	thread = profile_thread(prof, s->hdr.pid, s->hdr.tid, comm);
	if (thread < 0)
		return (int)thread;

	nu = user_stack(cs, s, ustack, nuser, (const char *)s + winoff, winlen, &truncated,
			&marker);
	if (nu < 0)
		return nu;
	/* A walk that ended in JIT code or at an unknown pc says so at its
	 * root, like a cut one. */
	if (marker) {
		if (*marker < 0) {
			*marker = profile_intern_frame(
				prof, marker == &cs->jit_frame ? "[jit]" : "[unknown mapping]",
				NULL, false);
			if (*marker < 0)
				return (int)*marker;
		}
		cs->frames[depth++] = (uint32_t)*marker;
	}
	/* A cut stack hangs under one [truncated] root instead of posing as
	 * a root of its own (perf's convention for the same case is to show
	 * nothing; this keeps the time and says why it floats). */
	if (truncated) {
		if (cs->truncated_frame < 0) {
			cs->truncated_frame =
				profile_intern_frame(prof, "[truncated]", NULL, false);
			if (cs->truncated_frame < 0)
				return (int)cs->truncated_frame;
		}
		cs->frames[depth++] = (uint32_t)cs->truncated_frame;
	}
	/* Stacks arrive leaf first; the profile wants root first. */
	for (int i = nu - 1; i >= 0; i--) {
		uint64_t addr = cs->uaddrs[i];

		if (!addr)
			continue;
		if (symbolizer_user(cs->o.sym, s->hdr.pid, addr, &res))
			continue;
		/* The walk's last pc, outside every mapping it knew: kept when
		 * the maps name its file (a library dlopen'ed before its table
		 * arrived), not as a bare address. */
		if (i == nu - 1 && marker == &cs->unknown_map_frame && !res.module)
			continue;
		fi = intern_symbol(cs, &res, false);
		if (fi < 0)
			return (int)fi;
		cs->frames[depth++] = (uint32_t)fi;
	}
	if (cs->o.py) {
		size_t n = depth, leaf = SIZE_MAX;

		if (!pyframes_merge(cs->o.py, &s->hdr, cs->frames, &n,
				    sizeof(cs->frames) / sizeof(cs->frames[0]) - (size_t)nkern,
				    &leaf)) {
			depth = (uint32_t)n;
			if (leaf < n)
				user_leaf = (int64_t)leaf;
		}
	}
	for (int i = nkern - 1; i >= 0; i--) {
		uint64_t addr = kstack[i];

		if (!addr)
			continue;
		if (symbolizer_kernel(cs->o.sym, i ? addr - 1 : addr, &res))
			continue;
		fi = intern_symbol(cs, &res, true);
		if (fi < 0)
			return (int)fi;
		cs->frames[depth++] = (uint32_t)fi;
		nkernel++;
	}
	if (!depth || (truncated && depth == 1 && !nu)) {
		/* Keep the sample: its time is real even if its stack is not. */
		depth = 0;
		if (cs->unavailable_frame < 0) {
			cs->unavailable_frame =
				profile_intern_frame(prof, "[stack unavailable]", NULL, false);
			if (cs->unavailable_frame < 0)
				return (int)cs->unavailable_frame;
		}
		cs->frames[depth++] = (uint32_t)cs->unavailable_frame;
	}
	err = profile_add_sample(prof, (uint32_t)thread, s->hdr.ts_ns, cs->frames, depth, nkernel,
				 !(s->flags & EP_SAMPLE_F_USER_MODE));

	/* Per-cycle top functions: the innermost user frame (the user's
	 * code; in a Python process the innermost one that is not the
	 * interpreter's C code: the Python function, or the library it
	 * called), the kernel leaf for kernel-only stacks. */
	if (!err && cs->o.cycles) {
		uint32_t leaf = cs->frames[user_leaf >= 0 && (uint32_t)user_leaf < depth
						   ? (uint32_t)user_leaf
					   : depth > nkernel ? depth - nkernel - 1
							     : depth - 1];

		cycle_sink_sample(cs->o.cycles, s->hdr.ts_ns, s->hdr.tid, prof->frames[leaf].name);
	}
	return err;
}

int cpu_samples_on_record(void *ctx, const void *data, size_t size)
{
	struct cpu_samples *cs = ctx;
	struct profile *prof = cs->o.prof;
	const struct ep_event_hdr *h = data;

	if (size < sizeof(*h)) {
		prof->drops[PROF_DROP_COLLECTOR]++;
		return 0;
	}
	switch (h->type) {
	case EP_EV_PYSTACK:
		if (cs->o.py)
			pyframes_on_event(cs->o.py, data, size);
		return 0;
	case EP_EV_SAMPLE:
		/* Here, not at stop: a --rotate interval and the live view get
		 * their share. */
		prof->drops[PROF_DROP_RATE_LIMITED] += tick_guard_skipped(cs->o.tick, 1);
		if (size < EP_SAMPLE_HDR_SIZE) {
			prof->drops[PROF_DROP_COLLECTOR]++;
			return 0;
		}
		/* Counted, not fatal: one sample must not end the run. */
		if (handle_sample(cs, data, size))
			prof->drops[PROF_DROP_COLLECTOR]++;
		return 0;
	default:
		return cs->o.ops->task_event(cs->o.owner, data, size);
	}
}

void cpu_samples_collect_drops(struct cpu_samples *cs, struct sampler *s)
{
	struct profile *prof = cs->o.prof;
	uint64_t d[EP_DROP__COUNT] = {};

	if (sampler_read_drops(s, d))
		return;
	prof->drops[PROF_DROP_RINGBUF_FULL] += d[EP_DROP_RINGBUF_FULL];
	/* Ticks taken on targets whose record never reached the handler (the
	 * ones read stood for their skipped ticks there). unread_at_stop
	 * counts records of any kind, at a limited rate nearly all samples. */
	prof->drops[PROF_DROP_RATE_LIMITED] += tick_guard_skipped(
		cs->o.tick, d[EP_DROP_RINGBUF_FULL] + prof->drops[PROF_DROP_UNREAD]);
	prof->drops[PROF_DROP_USER_STACK] += d[EP_DROP_USER_STACK_ERR];
	prof->drops[PROF_DROP_KERN_STACK] += d[EP_DROP_KERN_STACK_ERR];
	prof->drops[PROF_DROP_TARGET_MAP_FULL] += d[EP_DROP_TARGET_MAP_FULL];
	prof->drops[PROF_DROP_EVENT_LOST] += d[EP_DROP_EVENT_RINGBUF_FULL];
	/* Not lost: the sample is kept, with the frame-pointer stack in auto
	 * mode. Reported with the unwinding figures. */
	cs->o.st->copy_errors += d[EP_DROP_USTACK_COPY_ERR];
	cs->o.st->regs_errors += d[EP_DROP_UREGS_ERR];
}

int cpu_samples_drops_so_far(const struct cpu_samples *cs, struct sampler *s, uint64_t *sum)
{
	uint64_t d[EP_DROP__COUNT] = {};
	int err = sampler_read_drops(s, d);

	if (err)
		return err;
	*sum = 0;
	for (int i = 0; i < EP_DROP__COUNT; i++)
		*sum += d[i];
	for (int i = 0; i < PROF_DROP__COUNT; i++)
		*sum += cs->o.prof->drops[i];
	return 0;
}

void cpu_samples_log_python(struct pyframes *py)
{
	struct pyframes_stats st;

	pyframes_get_stats(py, &st);
	if (!st.samples)
		return;
	log_info("python: %llu of %llu samples of Python processes with Python frames "
		 "(%llu frames; %llu code objects read, %llu unreadable); walk: %llu threads "
		 "without a thread state, %llu idle, %llu read errors, %llu truncated, %llu lost",
		 (unsigned long long)st.with_python, (unsigned long long)st.samples,
		 (unsigned long long)st.frames, (unsigned long long)st.code_reads,
		 (unsigned long long)st.code_errors, (unsigned long long)st.bpf[EP_PY_ST_NO_TSTATE],
		 (unsigned long long)st.bpf[EP_PY_ST_IDLE],
		 (unsigned long long)st.bpf[EP_PY_ST_READ_ERR],
		 (unsigned long long)st.bpf[EP_PY_ST_TRUNCATED],
		 (unsigned long long)st.bpf[EP_PY_ST_RINGBUF_FULL]);
	if (st.offcpu_with_python)
		log_info("python: %llu off-CPU episodes with Python frames (%llu frames)",
			 (unsigned long long)st.offcpu_with_python,
			 (unsigned long long)st.offcpu_frames);
	if (st.bpf[EP_PY_ST_WALKS])
		log_info("python: walk cost %.0f ns per sample, %.1f frames per sample",
			 (double)st.bpf[EP_PY_ST_WALK_NS] / (double)st.bpf[EP_PY_ST_WALKS],
			 (double)st.bpf[EP_PY_ST_FRAMES] / (double)st.bpf[EP_PY_ST_WALKS]);
	log_debug(
		"python: walks %llu, stacks sent %llu, thread-state scans %llu, frames skipped %llu, "
		"stacks without their sample %llu",
		(unsigned long long)st.bpf[EP_PY_ST_WALKS],
		(unsigned long long)st.bpf[EP_PY_ST_STACKS],
		(unsigned long long)st.bpf[EP_PY_ST_SCANS], (unsigned long long)st.frames_skipped,
		(unsigned long long)st.unpaired);
}
