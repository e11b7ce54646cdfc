// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CFI unwinder over a copied stack window: see unwind.h and docs/unwinding.md.
 *
 * libdwfl unwinds a "process" attached to a Dwfl through callbacks: we attach
 * each per-pid Dwfl of the symbolizer once (dwfl_pid() < 0 says it is not
 * attached yet) with callbacks that serve the one sample being unwound, which
 * the unwinder points to for the duration of the call. Memory reads are
 * answered from the copied window only: nothing is read from the live
 * process, so a sample is unwound as it was, even after the process moved on
 * or exited.
 */
#include "unwind/unwind.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "symbolize/symbolize.h"

/* x86_64 DWARF register numbers (System V psABI, figure 3.36). */
#define DWARF_X86_64_RBP 6
#define DWARF_X86_64_RSP 7

struct unwinder {
	struct symbolizer *sym;
	/* A bare ELF header naming our machine: dwfl_attach_state takes the
	 * architecture from it instead of opening one of the target's files
	 * just to learn it. Kept for the life of every attached Dwfl. */
	Elf64_Ehdr ehdr_img;
	Elf *ehdr_elf;
	Dwfl_Thread_Callbacks cb; /* libdwfl keeps a pointer to it */
	/* The sample being unwound, and what the walk found out. */
	const struct unwind_input *cur;
	bool read_past_window;
	uint64_t *addrs;
	uint32_t max, n;
	bool depth_cut, bad_pc, ended;
};

static pid_t cb_next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)dwfl_arg;
	(void)thread_argp;
	/* Threads are named by the sample (dwfl_getthread_frames), never listed. */
	return 0;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwinder *u = dwfl_arg;
	const struct unwind_input *in = u->cur;

	(void)dwfl;
	if (!in || in->stack_len < sizeof(*result))
		goto out;
	/* Written to avoid overflow for any addr and sp: addr - sp wraps to a
	 * huge value when addr < sp. */
	if (addr >= in->sp && addr - in->sp <= in->stack_len - sizeof(*result)) {
		memcpy(result, (const char *)in->stack + (addr - in->sp), sizeof(*result));
		return true;
	}
out:
	/* Above the window but within what a thread stack can span (8 MiB, the
	 * usual RLIMIT_STACK): the stack goes on beyond what was copied.
	 * Farther is garbage, not truncation. */
	if (in && addr >= in->sp && addr - in->sp < (8u << 20))
		u->read_past_window = true;
	return false;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwinder *u = thread_arg;
	Dwarf_Word regs[2] = { u->cur->fp, u->cur->sp };

	/* Only what was captured: the other registers stay undefined, so a CFI
	 * rule that needs one ends the walk instead of using a made-up value. */
	if (!dwfl_thread_state_registers(thread, DWARF_X86_64_RBP, 2, regs))
		return false;
	dwfl_thread_state_register_pc(thread, u->cur->ip);
	return true;
}

static void cb_detach(Dwfl *dwfl, void *dwfl_arg)
{
	(void)dwfl;
	(void)dwfl_arg;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation)) {
		u->bad_pc = true;
		return DWARF_CB_ABORT;
	}
	/* A zero return address is how frame-pointer chains and some CFI
	 * (thread start routines) mark the outermost frame. */
	if (pc == 0) {
		u->ended = true;
		return DWARF_CB_ABORT;
	}
	if (u->n >= u->max) {
		u->depth_cut = true;
		return DWARF_CB_ABORT;
	}
	/* A return address points after the call; the call is what ran. The
	 * first frame and the frame a signal interrupted are exact pcs. */
	u->addrs[u->n++] = activation ? pc : pc - 1;
	return DWARF_CB_OK;
}

int unwinder_new(struct unwinder **out, struct symbolizer *sym)
{
	struct unwinder *u;

	*out = NULL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->sym = sym;
	elf_version(EV_CURRENT);
	memcpy(u->ehdr_img.e_ident, ELFMAG, SELFMAG);
	u->ehdr_img.e_ident[EI_CLASS] = ELFCLASS64;
	u->ehdr_img.e_ident[EI_DATA] = ELFDATA2LSB;
	u->ehdr_img.e_ident[EI_VERSION] = EV_CURRENT;
	u->ehdr_img.e_type = ET_EXEC;
	u->ehdr_img.e_machine = EM_X86_64;
	u->ehdr_img.e_version = EV_CURRENT;
	u->ehdr_img.e_ehsize = sizeof(Elf64_Ehdr);
	u->ehdr_elf = elf_memory((char *)&u->ehdr_img, sizeof(u->ehdr_img));
	if (!u->ehdr_elf) {
		free(u);
		return -ENOMEM;
	}
	u->cb.next_thread = cb_next_thread;
	u->cb.get_thread = cb_get_thread;
	u->cb.memory_read = cb_memory_read;
	u->cb.set_initial_registers = cb_set_initial_registers;
	u->cb.detach = cb_detach;
	*out = u;
	return 0;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	elf_end(u->ehdr_elf);
	free(u);
}

int unwinder_unwind(struct unwinder *u, const struct unwind_input *in, uint64_t *addrs,
		    uint32_t max, struct unwind_result *res)
{
	struct sym_result sr;
	Dwfl *dwfl;
	int rc, err;

	res->n = 0;
	res->status = UNWIND_ERROR;
	if (!max)
		return -EINVAL;
	dwfl = (Dwfl *)symbolizer_dwfl(u->sym, in->pid);
	if (!dwfl)
		return -ENOMEM;
	/* A pc in no known module may be in a library dlopen'ed since the
	 * maps were read: resolving it makes the symbolizer re-read them
	 * (rate-limited there; the answer is cached for the caller's own
	 * lookup). Only then: a symbol lookup costs far more than the walk. */
	if (!dwfl_addrmodule(dwfl, in->ip)) {
		err = symbolizer_user(u->sym, in->pid, in->ip, &sr);
		if (err)
			return err;
		dwfl = (Dwfl *)symbolizer_dwfl(u->sym, in->pid);
		if (!dwfl)
			return -ENOMEM;
	}
	if (dwfl_pid(dwfl) < 0 &&
	    !dwfl_attach_state(dwfl, u->ehdr_elf, (pid_t)in->pid, &u->cb, u)) {
		log_debug("unwind: pid %u: dwfl_attach_state: %s", in->pid, dwfl_errmsg(-1));
		return 0;
	}
	u->cur = in;
	u->read_past_window = false;
	u->addrs = addrs;
	u->max = max;
	u->n = 0;
	u->depth_cut = false;
	u->bad_pc = false;
	u->ended = false;
	/* The tid only has to be non-zero: get_thread serves u->cur whatever
	 * it is, and the pid keeps per-thread state out of libdwfl. */
	rc = dwfl_getthread_frames(dwfl, (pid_t)(in->pid ? in->pid : 1), frame_cb, u);
	u->cur = NULL;
	res->n = u->n;
	/* A register rule whose memory read fails leaves the return address
	 * undefined, which libdwfl takes for the outermost frame (rc 0): the
	 * failed read above the window is what tells truncation apart. */
	if (u->depth_cut)
		res->status = UNWIND_DEPTH;
	else if (u->read_past_window)
		res->status = UNWIND_TRUNCATED;
	else if (rc == 0 || u->ended)
		res->status = UNWIND_COMPLETE;
	else
		res->status = UNWIND_ERROR;
	/* Not even the pc: nothing was unwound, whatever libdwfl said. */
	if (!res->n && res->status != UNWIND_TRUNCATED)
		res->status = UNWIND_ERROR;
	return 0;
}

const char *unwind_status_name(enum unwind_status st)
{
	switch (st) {
	case UNWIND_COMPLETE:
		return "complete";
	case UNWIND_TRUNCATED:
		return "truncated";
	case UNWIND_DEPTH:
		return "depth";
	case UNWIND_ERROR:
		return "error";
	}
	return "unknown";
}
