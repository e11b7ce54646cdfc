// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocation sampling inside the process (launch mode of --alloc,
 * docs/alloc.md "Two mechanisms"): preloaded ahead of the allocator, it
 * wraps malloc and its relatives, forwards every call to the next
 * definition (glibc's, or jemalloc's or tcmalloc's when those are
 * preloaded after it) and counts the bytes asked for on each thread. A
 * thread samples as the BPF uprobes do: it counts down a distance drawn
 * from an exponential distribution of mean EBPF_PROF_ALLOC_RATE bytes, and
 * only the call that reaches it calls ebpf_prof_alloc_event, where the
 * profiler's uprobe takes the stack. Sampled blocks go into a small
 * lock-free set so that a free can tell them from the others without
 * leaving the process; only the free of a sampled block calls the probed
 * function. Everything else costs a few nanoseconds and no trap.
 *
 * Plain C, libc and libdl only; no allocation of its own (the set is a
 * static table).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "events/alloc_preload.h"
#include "events/alloc.h"

#define EXPORT	  __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)

/* The next definitions, found at the first call. */
struct next_fns {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
};

static struct next_fns next;
/* 0: not resolved, 1: being resolved, 2: resolved. */
static int resolve_state;
static uint64_t rate, seed;

/* dlsym may allocate (its error buffer with calloc) while the next
 * definitions are looked up: those calls are served from here and never
 * freed. */
static _Alignas(16) unsigned char boot_buf[16384];
static size_t boot_used;

/* The sampled blocks' addresses: 8 slots (one cache line) per bucket;
 * insert takes an empty slot of the address's bucket, remove empties its
 * own. A bucket with 8 live sampled blocks turns the next one away
 * (counted untracked by the profiler). 2 MiB of .bss, touched only where
 * used. */
#define SET_BUCKETS (1u << 15)
#define SET_WAYS    8u
static _Alignas(64) uintptr_t sampled_set[SET_BUCKETS * SET_WAYS];
/* In front of it, small enough to stay in the cache: per hash, how many
 * sampled blocks are live. Most frees find 0 here and look no further
 * (the set's 2 MiB would cost each a cache and TLB miss). */
#define FILTER_SIZE (1u << 13)
static _Alignas(64) uint16_t sampled_filter[FILTER_SIZE];

struct thread_state {
	int64_t countdown;
	uint64_t rng;
	uint32_t in_alloc; /* read by the profiler's mmap tracepoint */
	uint32_t ready;
	uint32_t resolving;
	uint32_t _pad;
	struct ep_preload_call call;
};

/* Initial-exec: the library is loaded at start-up, so its thread block is
 * at the same offset from the thread pointer in every thread. */
static __thread struct thread_state ts __attribute__((tls_model("initial-exec")));

/* The probed function: the profiler's uprobe reads *c and, for a sample,
 * walks the stack from here. Written out so that its first instruction is
 * a push the kernel emulates (a compiled empty function is a bare ret,
 * which the uprobe would single-step), with its unwind information. */
EXPORT void ebpf_prof_alloc_event(const struct ep_preload_call *c);
#if defined(__x86_64__)
__asm__(".text\n"
	".globl ebpf_prof_alloc_event\n"
	".type ebpf_prof_alloc_event, @function\n"
	".p2align 4\n"
	"ebpf_prof_alloc_event:\n"
	".cfi_startproc\n"
	"push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"ret\n"
	".cfi_endproc\n"
	".size ebpf_prof_alloc_event, .-ebpf_prof_alloc_event\n");
#else
EXPORT __attribute__((noinline)) void ebpf_prof_alloc_event(const struct ep_preload_call *c)
{
	__asm__ volatile("" : : "r"(c) : "memory");
}
#endif

static uintptr_t thread_pointer(void)
{
	uintptr_t tp;

#if defined(__x86_64__)
	__asm__("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
	__asm__("mrs %0, tpidr_el0" : "=r"(tp));
#else
	tp = 0;
#endif
	return tp;
}

static void emit(uint32_t op, uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags)
{
	struct ep_preload_call *c = &ts.call;
	uintptr_t tp = thread_pointer();

	c->op = op;
	c->addr = addr;
	c->size = size;
	c->kind = kind;
	c->flags = flags;
	c->tls_off = tp ? (int64_t)((uintptr_t)&ts.in_alloc - tp) : 0;
	ebpf_prof_alloc_event(c);
	c->calls = c->frees = c->bytes = 0;
}

/* Set once the library's constructor has told the profiler its flag's
 * offset. Until then (the constructors of the libraries initialised
 * before it: libstdc++ under jemalloc, ...) each call says it first, so
 * that an allocator initialising itself in that call (jemalloc maps its
 * arenas) is known to be inside the allocator. */
static int announced;

static inline __attribute__((always_inline)) void enter(void)
{
	ts.in_alloc++;
	if (__builtin_expect(!__atomic_load_n(&announced, __ATOMIC_RELAXED), 0) && rate)
		emit(EP_PL_COUNTS, 0, 0, 0, 0);
}

static inline __attribute__((always_inline)) void leave(void)
{
	ts.in_alloc--;
}

static uint64_t rng_next(void)
{
	/* xorshift64* */
	uint64_t x = ts.rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ts.rng = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* ln(x) for x > 0, without libm: x = m * 2^e, m in [1, 2), and
 * ln(m) = 2 atanh((m - 1) / (m + 1)) by its series (|s| <= 1/3: 12
 * terms are below 1e-12). */
static double ln(double x)
{
	union {
		double d;
		uint64_t u;
	} v = { .d = x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	double m, s, s2, t, sum = 0;

	v.u = (v.u & ~(0x7ffull << 52)) | (1023ull << 52);
	m = v.d;
	s = (m - 1) / (m + 1);
	s2 = s * s;
	t = s;
	for (int k = 1; k < 26; k += 2) {
		sum += t / k;
		t *= s2;
	}
	return 2 * sum + e * 0.69314718055994530942;
}

/* A distance from Exp(rate), at least 1 byte. */
static int64_t draw(void)
{
	/* 53 random bits, in (0, 1]. */
	double u = (double)((rng_next() >> 11) + 1) / 9007199254740992.0;
	double d = -ln(u) * (double)rate;

	return d < 1 ? 1 : d > 9.0e18 ? INT64_MAX : (int64_t)d;
}

static void thread_init(void)
{
	static unsigned long nthreads;
	unsigned long n = __atomic_add_fetch(&nthreads, 1, __ATOMIC_RELAXED);

	ts.rng = seed ? seed * 0x9E3779B97F4A7C15ull + n
		      : ((uint64_t)syscall(SYS_gettid) << 32) ^ (uint64_t)(uintptr_t)&ts ^
				 (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull;
	if (!ts.rng)
		ts.rng = 0x853c49e6748fea9bull;
	ts.countdown = draw();
	ts.ready = 1;
}

static uint64_t parse_u64(const char *s)
{
	uint64_t v = 0;

	if (!s)
		return 0;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return *s ? 0 : v;
}

static void resolve(void)
{
	int expect = 0;

	if (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) == 2)
		return;
	if (!__atomic_compare_exchange_n(&resolve_state, &expect, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Another thread resolves: wait for it (start-up only). */
		while (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) != 2)
			;
		return;
	}
	ts.resolving = 1;
	next.malloc = dlsym(RTLD_NEXT, "malloc");
	next.calloc = dlsym(RTLD_NEXT, "calloc");
	next.realloc = dlsym(RTLD_NEXT, "realloc");
	next.free = dlsym(RTLD_NEXT, "free");
	next.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	next.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	next.memalign = dlsym(RTLD_NEXT, "memalign");
	next.valloc = dlsym(RTLD_NEXT, "valloc");
	next.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	rate = parse_u64(getenv(EP_PRELOAD_ENV_RATE));
	seed = parse_u64(getenv(EP_PRELOAD_ENV_SEED));
	ts.resolving = 0;
	__atomic_store_n(&resolve_state, 2, __ATOMIC_RELEASE);
}

static void *boot_alloc(size_t n)
{
	size_t at = (boot_used + 15) & ~(size_t)15;

	if (n > sizeof(boot_buf) || at > sizeof(boot_buf) - n)
		return NULL;
	boot_used = at + n;
	return boot_buf + at;
}

static int from_boot(const void *p)
{
	return (const unsigned char *)p >= boot_buf &&
	       (const unsigned char *)p < boot_buf + sizeof(boot_buf);
}

/* Whether the call must be served before the next definitions are known:
 * a call from dlsym while they are looked up. */
static inline __attribute__((always_inline)) int booting(void)
{
	if (LIKELY(__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) == 2))
		return 0;
	if (ts.resolving)
		return 1;
	resolve();
	return 0;
}

static size_t bucket_of(uintptr_t p)
{
	return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 40) & (SET_BUCKETS - 1);
}

static size_t filter_of(uintptr_t p)
{
	return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 51) & (FILTER_SIZE - 1);
}

static int set_insert(uintptr_t p)
{
	uintptr_t *b = &sampled_set[bucket_of(p) * SET_WAYS];
	uint16_t *f = &sampled_filter[filter_of(p)];

	/* Counted first: p is not the program's yet, no free can race. */
	__atomic_add_fetch(f, 1, __ATOMIC_ACQ_REL);
	for (unsigned i = 0; i < SET_WAYS; i++) {
		uintptr_t empty = 0;

		if (!__atomic_load_n(&b[i], __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&b[i], &empty, p, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return 1;
	}
	__atomic_sub_fetch(f, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Removes p if it is a sampled block; whether it was. */
static __attribute__((noinline)) int set_remove_slow(uintptr_t p, uint16_t *f)
{
	uintptr_t *b = &sampled_set[bucket_of(p) * SET_WAYS];

	for (unsigned i = 0; i < SET_WAYS; i++) {
		uintptr_t want = p;

		if (__atomic_load_n(&b[i], __ATOMIC_RELAXED) == p &&
		    __atomic_compare_exchange_n(&b[i], &want, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_sub_fetch(f, 1, __ATOMIC_RELEASE);
			return 1;
		}
	}
	return 0;
}

static inline __attribute__((always_inline)) int set_remove(uintptr_t p)
{
	uint16_t *f = &sampled_filter[filter_of(p)];

	if (LIKELY(!__atomic_load_n(f, __ATOMIC_ACQUIRE)))
		return 0;
	return set_remove_slow(p, f);
}

static __attribute__((noinline)) void sample(void *p, size_t size, uint32_t kind)
{
	if (!ts.ready) {
		/* The thread's first call: no countdown yet. */
		thread_init();
		if ((int64_t)size < ts.countdown) {
			ts.countdown -= (int64_t)size;
			return;
		}
	}
	ts.countdown = draw();
	if (!p)
		return;
	emit(EP_PL_SAMPLE, (uintptr_t)p, size, kind,
	     set_insert((uintptr_t)p) ? 0 : EP_PL_F_UNTRACKED);
}

/* A successful allocation of size bytes at p: counted, and sampled when
 * it reaches the thread's countdown (0 until the thread is set up: its
 * first call goes the slow way). */
static inline __attribute__((always_inline)) void on_alloc(void *p, size_t size, uint32_t kind)
{
	if (!rate)
		return;
	ts.call.calls++;
	ts.call.bytes += size;
	if (LIKELY((int64_t)size < ts.countdown || !size)) {
		ts.countdown -= (int64_t)size;
		return;
	}
	sample(p, size, kind);
}

/* p is about to be freed (or moved by realloc). */
static inline __attribute__((always_inline)) void on_free(void *p)
{
	if (!rate)
		return;
	ts.call.frees++;
	if (p && set_remove((uintptr_t)p))
		emit(EP_PL_FREE, (uintptr_t)p, 0, 0, 0);
}

EXPORT void *malloc(size_t n)
{
	void *p;

	if (booting())
		return boot_alloc(n);
	enter();
	p = next.malloc(n);
	leave();
	on_alloc(p, n, EP_AK_MALLOC);
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (booting())
		return __builtin_mul_overflow(n, size, &total) ? NULL : boot_alloc(total);
	enter();
	p = next.calloc(n, size);
	leave();
	/* An overflowing request counts as huge, as the uprobes see it. */
	on_alloc(p, __builtin_mul_overflow(n, size, &total) ? SIZE_MAX : total, EP_AK_CALLOC);
	return p;
}

EXPORT void free(void *p)
{
	if (!p || from_boot(p))
		return;
	if (booting())
		return;
	on_free(p);
	/* Not flagged: freeing maps nothing (the flag is for mmap). */
	next.free(p);
}

EXPORT void *realloc(void *old, size_t n)
{
	void *p;

	if (booting())
		return boot_alloc(n);
	if (old && from_boot(old)) {
		/* Its size is unknown: at most what is left of the buffer. */
		size_t have = (size_t)(boot_buf + sizeof(boot_buf) - (unsigned char *)old);

		p = malloc(n);
		if (p)
			memcpy(p, old, n < have ? n : have);
		return p;
	}
	/* A sampled block ends here (moved, or freed by a size of 0):
	 * reported before the real call, since once it returns another thread
	 * may be given the same address. A realloc that then fails leaves it
	 * live but no longer tracked. */
	if (old && rate && set_remove((uintptr_t)old))
		emit(EP_PL_FREE, (uintptr_t)old, 0, 0, 0);
	enter();
	p = next.realloc(old, n);
	leave();
	on_alloc(p, n, EP_AK_REALLOC);
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int err;

	if (booting()) {
		*out = align <= 16 ? boot_alloc(n) : NULL;
		return *out ? 0 : ENOMEM;
	}
	enter();
	err = next.posix_memalign(out, align, n);
	leave();
	on_alloc(err ? NULL : *out, n, EP_AK_POSIX_MEMALIGN);
	return err;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	void *p;

	if (booting())
		return align <= 16 ? boot_alloc(n) : NULL;
	enter();
	p = next.aligned_alloc(align, n);
	leave();
	on_alloc(p, n, EP_AK_MEMALIGN);
	return p;
}

EXPORT void *memalign(size_t align, size_t n)
{
	void *p;

	if (booting())
		return align <= 16 ? boot_alloc(n) : NULL;
	enter();
	p = next.memalign(align, n);
	leave();
	on_alloc(p, n, EP_AK_MEMALIGN);
	return p;
}

EXPORT void *valloc(size_t n)
{
	void *p;

	if (booting())
		return NULL;
	enter();
	p = next.valloc(n);
	leave();
	on_alloc(p, n, EP_AK_VALLOC);
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	void *p;

	if (booting())
		return NULL;
	enter();
	p = next.pvalloc(n);
	leave();
	on_alloc(p, n, EP_AK_VALLOC);
	return p;
}

/* The counts of the thread's calls since its last event, and the offset
 * of the in-allocator flag for a process the profiler has not heard from
 * yet: at start-up (after the profiler attached: constructors run after
 * ld.so's start-up notification), in a forked child, and at exit. */
static void say_counts(void)
{
	if (__atomic_load_n(&resolve_state, __ATOMIC_ACQUIRE) != 2)
		resolve();
	if (rate)
		emit(EP_PL_COUNTS, 0, 0, 0, 0);
}

__attribute__((constructor)) static void start(void)
{
	pthread_atfork(NULL, NULL, say_counts);
	say_counts();
	__atomic_store_n(&announced, 1, __ATOMIC_RELAXED);
}

__attribute__((destructor)) static void stop(void)
{
	say_counts();
}
