// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* kernel/vstat: the verifier's statistics log (a real refusal from Linux
 * 6.18.44, a real pass, bad input) and the combined-stack count of a call
 * graph. The graph below is sched_switch's as 6.18.44 refused it: 528
 * bytes with its bpf_loop callbacks counted (older kernels did not count
 * them, and let it pass). Loading the real programs is
 * bpf.test_verifier_margins. */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>

#include "check.h"
#include "kernel/vstat.h"

static const char refused[] =
	"Func#7 ('py_walk_into') is safe for any args that match its prototype\n"
	"combined stack size of 5 calls is 528. Too large\n"
	"verification time 28096 usec\n"
	"stack depth 184+168+0+144+0+8+0+120+32+0+8+40\n"
	"processed 12861 insns (limit 1000000) max_states_per_insn 8 total_states 920 "
	"peak_states 820 mark_read 0\n";

static const char passed[] = "verification time 7628 usec\n"
			     "stack depth 144+128+40\n"
			     "processed 5189 insns (limit 1000000) max_states_per_insn 7 "
			     "total_states 357 peak_states 244 mark_read 0\n";

/* sched_switch's subprograms, 10 instructions each. */
#define NSUB   12
#define SUBLEN 10
static const uint16_t depth528[NSUB] = { 184, 168, 0, 144, 0, 8, 0, 120, 32, 0, 8, 40 };

struct edge {
	int from, to;
	bool callback;
};

static const struct edge edges528[] = {
	{ 0, 1, false }, { 0, 11, false }, { 0, 10, true }, { 1, 7, false },
	{ 1, 2, true },	 { 2, 3, false },  { 3, 4, true },  { 3, 5, true },
	{ 3, 6, true },	 { 7, 8, true },   { 7, 10, true }, { 8, 9, false },
};

/* jit: calls as a loaded JIT'ed program shows them (offset in off, index
 * in imm); else as before JIT (offset in imm). */
static size_t build(struct bpf_insn *ins, uint32_t *starts, const struct edge *e, size_t ne,
		    bool jit)
{
	int used[NSUB] = { 0 };

	memset(ins, 0, sizeof(struct bpf_insn) * NSUB * SUBLEN);
	for (int s = 0; s < NSUB; s++)
		starts[s] = (uint32_t)(s * SUBLEN);
	for (size_t k = 0; k < ne; k++) {
		int at = e[k].from * SUBLEN + used[e[k].from];
		int rel = e[k].to * SUBLEN - at - 1;

		if (e[k].callback) {
			ins[at].code = BPF_LD | BPF_IMM | BPF_DW;
			ins[at].src_reg = BPF_PSEUDO_FUNC;
			ins[at].imm = rel;
			used[e[k].from] += 2;
		} else {
			ins[at].code = BPF_JMP | BPF_CALL;
			ins[at].src_reg = BPF_PSEUDO_CALL;
			if (jit) {
				ins[at].off = (int16_t)rel;
				ins[at].imm = e[k].to;
			} else {
				ins[at].imm = rel;
			}
			used[e[k].from] += 1;
		}
	}
	return NSUB * SUBLEN;
}

static void test_parse(void)
{
	struct vstat_prog p;

	CHECK_INT_EQ(vstat_parse_log(refused, &p), 0);
	CHECK_INT_EQ(p.insns, 12861);
	CHECK_INT_EQ(p.insns_limit, 1000000);
	CHECK_INT_EQ(p.total_states, 920);
	CHECK_INT_EQ(p.peak_states, 820);
	CHECK_INT_EQ(p.verify_us, 28096);
	CHECK(p.have_depth);
	CHECK_INT_EQ(p.nsub, 12);
	CHECK_INT_EQ(p.depth[0], 184);
	CHECK_INT_EQ(p.depth[11], 40);
	CHECK_STR_EQ(p.reason, "combined stack size of 5 calls is 528. Too large");

	CHECK_INT_EQ(vstat_parse_log(passed, &p), 0);
	CHECK_INT_EQ(p.insns, 5189);
	CHECK_INT_EQ(p.nsub, 3);
	CHECK_STR_EQ(p.reason, "");
}

static void test_parse_bad(void)
{
	static const char *const bad[] = {
		"",
		"\n\n\n",
		"garbage without figures",
		"stack depth \n",
		"stack depth +\n",
		"stack depth 1++2\n",
		"stack depth 99999999999999999999\n",
		"stack depth 8+x\n",
		"processed insns\n",
		"processed -1\n",
	};
	struct vstat_prog p;
	char big[16384];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&p, 0x5a, sizeof(p));
		CHECK_INT_EQ(vstat_parse_log(bad[i], &p), -EINVAL);
		CHECK(!p.have_depth);
		CHECK(memchr(p.reason, 0, sizeof(p.reason)) != NULL);
	}
	/* More subprograms than BPF allows: refused, nothing written past. */
	strcpy(big, "stack depth 8");
	for (int i = 0; i < 80; i++)
		strcat(big, "+8");
	strcat(big, "\n");
	CHECK_INT_EQ(vstat_parse_log(big, &p), -EINVAL);
	CHECK(!p.have_depth);
	/* A reason line longer than the field: cut, terminated. */
	memset(big, 'r', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	CHECK_INT_EQ(vstat_parse_log(big, &p), -EINVAL);
	CHECK_INT_EQ(strlen(p.reason), VSTAT_REASON_LEN - 1);
}

static void test_chains(void)
{
	struct bpf_insn ins[NSUB * SUBLEN];
	uint32_t starts[NSUB];
	int a, b;
	size_t n;

	for (int jit = 0; jit < 2; jit++) {
		n = build(ins, starts, edges528, sizeof(edges528) / sizeof(edges528[0]), jit);
		CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), 0);
		/* 192+176+0+144+16 through the native walk's callbacks. */
		CHECK_INT_EQ(a, 528);
		/* The same chain in 32-byte frames: 192+192+32+160+32. */
		CHECK_INT_EQ(b, 608);
	}
	{
		struct vstat_prog p = { .loaded = true,
					.insns = 12861,
					.insns_limit = 1000000,
					.stack_jit = a,
					.stack_interp = b };

		CHECK_INT_EQ(vstat_stack(&p), 528);
		CHECK(!vstat_within_margins(&p));
		p.stack_jit = 384;
		p.stack_interp = 480;
		CHECK(vstat_within_margins(&p));
		p.stack_jit = VSTAT_STACK_LIMIT - VSTAT_STACK_MARGIN + 16;
		CHECK(!vstat_within_margins(&p));
		p.stack_jit = 384;
		p.stack_interp = VSTAT_STACK_LIMIT + 32; /* fits only with JIT */
		CHECK(!vstat_within_margins(&p));
		p.stack_interp = 480;
		p.stack_jit = 100;
		p.insns = 250000; /* over a fifth of the limit */
		CHECK(!vstat_within_margins(&p));
		p.insns = -1; /* unknown: an old kernel's log */
		p.stack_jit = p.stack_interp = -1;
		CHECK(vstat_within_margins(&p));
		p.loaded = false;
		CHECK(!vstat_within_margins(&p));
	}
	/* One subprogram, no calls: its own depth, rounded each way. */
	{
		uint32_t s0 = 0;
		uint16_t d0 = 0, d1 = 40;

		memset(ins, 0, sizeof(ins));
		CHECK_INT_EQ(vstat_stack_chains(ins, 4, &s0, &d0, 1, &a, &b), 0);
		CHECK_INT_EQ(a, 0);
		CHECK_INT_EQ(b, 32);
		CHECK_INT_EQ(vstat_stack_chains(ins, 4, &s0, &d1, 1, &a, &b), 0);
		CHECK_INT_EQ(a, 48);
		CHECK_INT_EQ(b, 64);
	}
}

static void test_chains_bad(void)
{
	struct bpf_insn ins[NSUB * SUBLEN];
	uint32_t starts[NSUB];
	int a, b;
	size_t n = build(ins, starts, edges528, sizeof(edges528) / sizeof(edges528[0]), false);

	/* A call into the middle of a subprogram. */
	ins[0].imm += 3;
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), -EINVAL);
	CHECK_INT_EQ(a, -1);
	/* A callback outside the program. */
	n = build(ins, starts, edges528, sizeof(edges528) / sizeof(edges528[0]), false);
	ins[2].imm = 100000;
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), -EINVAL);
	/* Starts out of order, not at 0, past the end; no subprogram. */
	n = build(ins, starts, edges528, sizeof(edges528) / sizeof(edges528[0]), false);
	starts[3] = starts[2];
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), -EINVAL);
	starts[3] = 30;
	starts[0] = 1;
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), -EINVAL);
	starts[0] = 0;
	starts[11] = (uint32_t)n;
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), -EINVAL);
	CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, 0, &a, &b), -EINVAL);
	/* A cycle (bad input: BPF has no recursion): bounded, no hang. */
	{
		static const struct edge loop[] = { { 0, 1, false }, { 1, 0, false } };

		n = build(ins, starts, loop, 2, false);
		CHECK_INT_EQ(vstat_stack_chains(ins, n, starts, depth528, NSUB, &a, &b), 0);
		CHECK(a > 0 && b > 0);
	}
}

/* A program its module does without on purpose (no uprobe sessions before
 * 6.13) is skipped, not refused: it no longer counts against the margins,
 * and says why. */
static void test_skip(void)
{
	struct vstat vs = { 0 };
	struct vstat_prog p = { .name = "alloc_session",
				.object = "alloc",
				.err = -EINVAL,
				.refused = true,
				.stack_jit = -1,
				.stack_interp = -1,
				.insns = -1 };
	cJSON *j;

	vs.v = &p;
	vs.n = vs.cap = 1;
	CHECK(!vstat_within_margins(&p));
	CHECK(vstat_refused(&vs, "alloc") == &p);
	vstat_skip(&vs, "alloc", "other_prog", "x"); /* no such program: nothing */
	CHECK(!p.skipped);
	vstat_skip(&vs, "alloc", "alloc_session", "entry and return probes instead");
	CHECK(p.skipped && !p.refused && !p.loaded);
	CHECK(vstat_within_margins(&p));
	CHECK(vstat_refused(&vs, "alloc") == NULL);
	CHECK_STR_EQ(p.reason, "entry and return probes instead");
	j = vstat_json(&vs);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "skipped")));
	cJSON_Delete(j);
}

int main(void)
{
	test_skip();
	test_parse();
	test_parse_bad();
	test_chains();
	test_chains_bad();
	return check_report("vstat");
}
