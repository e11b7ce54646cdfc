// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where llama_decode(ctx, batch) finds its by-value batch, on the
 * architecture this test is built for (natively on x86_64, under qemu-user
 * in the arm64 cross build): the compiler passes a llama_batch to a
 * function of llama_decode's signature, written in assembly, which copies
 * the EP_LLAMA_BATCH_READ bytes from where bpf/probes.bpf.c reads them at
 * entry (x86_64: sp + 8; arm64: the address in x1). The copy must hold the
 * batch's n_tokens and pos as ep_llama_batch_fields decodes them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "events/probes.h"

/* llama.h's, as the probe expects it. */
struct llama_batch {
	int32_t n_tokens;
	int32_t *token;
	float *embd;
	int32_t *pos;
	int32_t *n_seq_id;
	int32_t **seq_id;
	int8_t *logits;
};

/* int32_t llama_decode(struct llama_context *ctx, struct llama_batch batch),
 * with the context's place taken by the buffer the entry's view goes to. */
int32_t ep_abi_batch_at_entry(uint8_t *out, struct llama_batch batch);

#if defined(__x86_64__)
__asm__(".text\n"
	".globl ep_abi_batch_at_entry\n"
	".type ep_abi_batch_at_entry, @function\n"
	"ep_abi_batch_at_entry:\n"
	"	movq 8(%rsp), %rax\n"
	"	movq %rax, (%rdi)\n"
	"	movq 16(%rsp), %rax\n"
	"	movq %rax, 8(%rdi)\n"
	"	movq 24(%rsp), %rax\n"
	"	movq %rax, 16(%rdi)\n"
	"	movq 32(%rsp), %rax\n"
	"	movq %rax, 24(%rdi)\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	".size ep_abi_batch_at_entry, .-ep_abi_batch_at_entry\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".globl ep_abi_batch_at_entry\n"
	".type ep_abi_batch_at_entry, %function\n"
	"ep_abi_batch_at_entry:\n"
	"	ldp x2, x3, [x1]\n"
	"	stp x2, x3, [x0]\n"
	"	ldp x2, x3, [x1, #16]\n"
	"	stp x2, x3, [x0, #16]\n"
	"	mov w0, #0\n"
	"	ret\n"
	".size ep_abi_batch_at_entry, .-ep_abi_batch_at_entry\n");
#else
#error "the probe reads llama_decode's batch on x86_64 and arm64 only"
#endif

_Static_assert(EP_LLAMA_BATCH_READ == 32, "four fields read");

static void test_layout(void)
{
	CHECK_INT_EQ(sizeof(struct llama_batch), 56);
	CHECK_INT_EQ(offsetof(struct llama_batch, n_tokens), EP_LLAMA_BATCH_N_TOKENS);
	CHECK_INT_EQ(offsetof(struct llama_batch, pos), EP_LLAMA_BATCH_POS);
	CHECK(offsetof(struct llama_batch, pos) + sizeof(int32_t *) <= EP_LLAMA_BATCH_READ);
}

static void check_batch(int32_t n, int32_t *pos)
{
	int32_t tok[4] = { 1, 2, 3, 4 }, nseq[4] = { 1, 1, 1, 1 };
	int8_t logits[4] = { 0, 0, 0, 1 };
	struct llama_batch b = { n, tok, NULL, pos, nseq, NULL, logits };
	uint8_t seen[EP_LLAMA_BATCH_READ];
	__s32 got_n = -1;
	__u64 got_pos = 1;

	memset(seen, 0xa5, sizeof(seen));
	CHECK_INT_EQ(ep_abi_batch_at_entry(seen, b), 0);
	ep_llama_batch_fields(seen, &got_n, &got_pos);
	CHECK_INT_EQ(got_n, n);
	CHECK(got_pos == (uintptr_t)pos);
	/* token and embd sit between them, read as they were passed. */
	CHECK(memcmp(seen + 8, &b.token, sizeof(b.token)) == 0);
	CHECK(memcmp(seen + 16, &b.embd, sizeof(b.embd)) == 0);
}

int main(void)
{
	int32_t pos[4] = { 7, 8, 9, 10 };

	test_layout();
	/* llama_batch_get_one: no positions; llama_batch_init: positions. */
	check_batch(4, NULL);
	check_batch(4, pos);
	check_batch(1, pos + 3);
	check_batch(-5, pos);
	return check_report("llama_batch_abi");
}
