// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Where the allocator probes go: the first instructions of Debian 12's
 * glibc entry points, and inputs that must keep the probe where it is. */
#include "alloc/probe_point.h"
#include "check.h"

int main(void)
{
	/* free: test %rdi,%rdi; je rel32 -> on the je. */
	static const uint8_t free_[] = { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55 };
	/* malloc: push %r12: emulated where it is. */
	static const uint8_t malloc_[] = { 0x41, 0x54, 0x55, 0x53 };
	/* memalign: cmpb $0,disp32(%rip); je rel8 -> on the je. */
	static const uint8_t memalign_[] = { 0x80, 0x3d, 0x71, 0x0e, 0x14, 0, 0, 0x74, 0x07 };
	/* posix_memalign: the same cmpb, then push %r12. */
	static const uint8_t pm[] = { 0x80, 0x3d, 0x01, 0x02, 0x14, 0, 0, 0x41, 0x54 };
	/* test then a mov (not emulated): stays. */
	static const uint8_t test_mov[] = { 0x48, 0x85, 0xff, 0x48, 0x89, 0xfb };
	/* mov first (changes a register): stays. */
	static const uint8_t mov[] = { 0x48, 0x89, 0xf8, 0x74, 0x07 };
	/* test with a memory operand (mod != 11): stays. */
	static const uint8_t test_mem[] = { 0x48, 0x85, 0x07, 0x74, 0x07 };
	/* Cut short: the jcc is not all there, or nothing after the test. */
	static const uint8_t short1[] = { 0x48, 0x85, 0xff };
	static const uint8_t short2[] = { 0x80, 0x3d, 0x71, 0x0e };

	CHECK_INT_EQ(alloc_probe_skip_x86(free_, sizeof(free_)), 3);
	CHECK_INT_EQ(alloc_probe_skip_x86(malloc_, sizeof(malloc_)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(memalign_, sizeof(memalign_)), 7);
	CHECK_INT_EQ(alloc_probe_skip_x86(pm, sizeof(pm)), 7);
	CHECK_INT_EQ(alloc_probe_skip_x86(test_mov, sizeof(test_mov)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(mov, sizeof(mov)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(test_mem, sizeof(test_mem)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(short1, sizeof(short1)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(short2, sizeof(short2)), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(free_, 0), 0);
	CHECK_INT_EQ(alloc_probe_skip_x86(free_, 4), 0); /* half an opcode: stays */
	CHECK_INT_EQ(alloc_probe_skip_x86(free_, 5), 3); /* the jcc opcode is enough */
	return check_report("test_alloc_probe_point");
}
