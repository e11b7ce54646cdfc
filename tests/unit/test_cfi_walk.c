// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The unwind tables' rules, evaluated: this process's own stack is walked
 * with uw_table_find rows the way the in-kernel walker does (rip, rsp, rbp
 * and memory reads only), through the C++ fixture's frames (frameless
 * recursion, alloca, a 64 KiB frame, gcc's stack realignment), libc and the
 * executable up to _start, and through a signal frame; the return addresses
 * must equal glibc's backtrace() (libgcc's full DWARF unwinder) one for one.
 * x86_64 only, like the fixture.
 */
#include "check.h"
#include "unwind/cfi_table.h"

#ifdef __x86_64__

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FRAMES 128
#define MAX_OBJS   16

/* x86_64 rt_sigframe, from the sp at __restore_rt: the ucontext's
 * uc_mcontext.gregs (REG_RBP, REG_RSP, REG_RIP) after uc_flags, uc_link and
 * uc_stack (40 bytes). */
#define SIGFRAME_RBP (40 + 8 * 10)
#define SIGFRAME_RSP (40 + 8 * 15)
#define SIGFRAME_RIP (40 + 8 * 16)

struct obj {
	uintptr_t bias;
	char name[256];
	struct uw_table t;
};

struct walk {
	struct obj objs[MAX_OBJS];
	unsigned nobjs;
	uint64_t pcs[MAX_FRAMES];
	unsigned n;
	bool complete; /* reached an END row */
	unsigned rows_by_kind[8];
	void *bt[MAX_FRAMES];
	int nbt;
};

/* Reads that cannot fault: a wrong rule gives an error, not a crash. */
static bool peek(uint64_t addr, uint64_t *v)
{
	struct iovec local = { v, 8 }, remote = { (void *)(uintptr_t)addr, 8 };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 8;
}

static struct obj *obj_of(struct walk *w, uint64_t pc)
{
	Dl_info info;
	struct link_map *lm = NULL;

	if (!dladdr1((void *)(uintptr_t)pc, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	for (unsigned i = 0; i < w->nobjs; i++)
		if (w->objs[i].bias == lm->l_addr)
			return &w->objs[i];
	if (w->nobjs == MAX_OBJS)
		return NULL;
	struct obj *o = &w->objs[w->nobjs];
	snprintf(o->name, sizeof(o->name), "%s", lm->l_name[0] ? lm->l_name : "/proc/self/exe");
	int fd = open(o->name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int rc = uw_table_build(e, &o->t);
	elf_end(e);
	close(fd);
	if (rc)
		return NULL;
	o->bias = lm->l_addr;
	w->nobjs++;
	return o;
}

/* The walker's loop: ip/sp/fp and rows, nothing else. */
static void table_walk(struct walk *w, uint64_t pc, uint64_t sp, uint64_t fp)
{
	bool exact = true; /* pc is not a return address (leaf, signal frame) */

	while (w->n < MAX_FRAMES) {
		struct obj *o = obj_of(w, pc);
		uint64_t cfa, ra, nfp = fp;

		w->pcs[w->n++] = pc;
		if (!o)
			return;
		/* A return address may be the first byte after the function:
		 * look up the call instruction. */
		uint64_t lpc = pc - o->bias - (exact ? 0 : 1);
		const struct ep_uw_row *r = uw_table_find(&o->t, (uint32_t)lpc);
		uint8_t kind = r ? r->cfa : EP_UW_CFA_NONE;
		w->rows_by_kind[kind < 8 ? kind : 7]++;
		switch (kind) {
		case EP_UW_CFA_SP:
			cfa = sp + (uint64_t)(int64_t)r->cfa_off;
			break;
		case EP_UW_CFA_FP:
			cfa = fp + (uint64_t)(int64_t)r->cfa_off;
			break;
		case EP_UW_CFA_PLT:
			cfa = sp + (uint64_t)(int64_t)r->cfa_off +
			      ((pc & 15) >= (uint64_t)r->fp_off8 ? 8 : 0);
			break;
		case EP_UW_CFA_FP_DEREF:
			if (!peek(fp + (uint64_t)(int64_t)r->cfa_off, &cfa))
				return;
			break;
		case EP_UW_CFA_SIGNAL:
			if (!peek(sp + SIGFRAME_RIP, &pc) || !peek(sp + SIGFRAME_RBP, &fp) ||
			    !peek(sp + SIGFRAME_RSP, &sp))
				return;
			exact = true;
			continue;
		case EP_UW_CFA_END:
			w->complete = true;
			return;
		case EP_UW_CFA_NONE:
			/* No CFI: a frame-pointer frame. */
			cfa = fp + 16;
			if (!peek(fp, &nfp))
				return;
			if (!peek(cfa - 8, &ra))
				return;
			goto next;
		default:
			return;
		}
		if (!peek(cfa + 8 * (uint64_t)(int64_t)r->ra_off8, &ra))
			return;
		switch (r->fp) {
		case EP_UW_REG_AT_CFA:
			if (!peek(cfa + 8 * (uint64_t)(int64_t)r->fp_off8, &nfp))
				return;
			break;
		case EP_UW_REG_AT_FP:
			if (!peek(fp + 8 * (uint64_t)(int64_t)r->fp_off8, &nfp))
				return;
			break;
		case EP_UW_REG_UNDEF:
			nfp = 0;
			break;
		default:
			break;
		}
next:
		if (!ra)
			return;
		pc = ra;
		sp = cfa;
		fp = nfp;
		exact = false;
	}
}

/* Captures rip/rsp/rbp at one instruction, walks, and takes backtrace(). */
static __attribute__((noinline)) void capture_and_walk(void *arg)
{
	struct walk *w = arg;
	uint64_t ip, sp, fp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(fp));
	table_walk(w, ip, sp, fp);
	w->nbt = backtrace(w->bt, MAX_FRAMES);
	__asm__ volatile("" ::: "memory");
}

static struct walk *g_sig_walk; /* the handler's only way to its walk */

static void on_signal(int sig)
{
	(void)sig;
	capture_and_walk(g_sig_walk);
}

static void raise_cb(void *arg)
{
	g_sig_walk = arg;
	raise(SIGUSR1);
	__asm__ volatile("" ::: "memory");
}

/* Frame 0 differs (our capture point vs backtrace's return address, both in
 * capture_and_walk; under ASan backtrace has one more frame, its
 * interceptor): every caller must match. */
static void compare(const struct walk *w, const char *what, unsigned min_frames)
{
	unsigned skip = 1, same = 0;

	while (skip < 4 && w->n > 1 && (int)skip < w->nbt &&
	       (uint64_t)(uintptr_t)w->bt[skip] != w->pcs[1])
		skip++;
	unsigned nbt = w->nbt > (int)skip ? (unsigned)w->nbt - (skip - 1) : 0;
	unsigned n = w->n < nbt ? w->n : nbt;
	for (unsigned i = 1; i < n && w->pcs[i] == (uint64_t)(uintptr_t)w->bt[i + skip - 1]; i++)
		same++;
	fprintf(stderr, "%s: table walk %u frames (%s), backtrace %u, %u callers equal\n", what,
		w->n, w->complete ? "complete" : "cut", nbt, same);
	if (same + 1 != n || w->n != nbt) {
		for (unsigned i = 0; i < w->n || i < nbt; i++) {
			Dl_info d = { 0 };
			uint64_t pc = i < w->n ? w->pcs[i] : 0;
			dladdr((void *)(uintptr_t)(pc ? pc - 1 : 0), &d);
			fprintf(stderr, "  #%u table %#llx (%s) backtrace %p\n", i,
				(unsigned long long)pc, d.dli_sname ? d.dli_sname : "?",
				i && i < nbt ? w->bt[i + skip - 1] : NULL);
		}
	}
	CHECK(w->complete);
	CHECK_INT_EQ(w->n, nbt);
	CHECK_INT_EQ(same + 1, n);
	CHECK(n >= min_frames);
}

static void free_walk(struct walk *w)
{
	for (unsigned i = 0; i < w->nobjs; i++)
		uw_table_free(&w->objs[i].t);
	free(w);
}

int main(void)
{
	char lib[1024];
	const char *b = getenv("EP_BUILD_DIR");
	int (*walk_fn)(int, void (*)(void *), void *);
	void *h;

	elf_version(EV_CURRENT);
	snprintf(lib, sizeof(lib), "%s/tests/elf/libcfitest.so", b ? b : ".");
	h = dlopen(lib, RTLD_NOW);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return check_report("test_cfi_walk");
	}
	*(void **)&walk_fn = dlsym(h, "cfitest_walk");
	CHECK(walk_fn != NULL);
	/* backtrace() loads libgcc_s on first use: not inside the handler. */
	void *warm[4];
	backtrace(warm, 4);

	/* Through every fixture frame kind: 30 frameless recursions, alloca
	 * (CFA from rbp), 64 KiB, realignment (CFA = *(rbp - N)). */
	struct walk *w = calloc(1, sizeof(*w));
	walk_fn(30, capture_and_walk, w);
	compare(w, "plain", 36);
	CHECK(w->rows_by_kind[EP_UW_CFA_FP] >= 1);
	CHECK(w->rows_by_kind[EP_UW_CFA_FP_DEREF] >= 1);
	CHECK(w->rows_by_kind[EP_UW_CFA_SP] >= 30);
	free_walk(w);

	/* Through a signal frame: handler -> __restore_rt -> raise in libc. */
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGUSR1, &sa, NULL);
	w = calloc(1, sizeof(*w));
	walk_fn(5, raise_cb, w);
	compare(w, "signal", 14);
	CHECK_INT_EQ(w->rows_by_kind[EP_UW_CFA_SIGNAL], 1);
	free_walk(w);

	dlclose(h);
	return check_report("test_cfi_walk");
}
#else
int main(void)
{
	fprintf(stderr, "test_cfi_walk: x86_64 only (inline asm, x86 fixture)\n");
	return 0;
}
#endif
