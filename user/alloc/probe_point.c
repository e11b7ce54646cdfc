// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/probe_point.h"

#include <stdbool.h>

/* Length of a flags-only instruction at c, 0 if it is not one. */
static size_t flags_only_len(const uint8_t *c, size_t n)
{
	size_t rex = n > 0 && (c[0] & 0xf0) == 0x40 ? 1 : 0;

	if (n < rex + 2)
		return 0;
	/* test r, r (85) / cmp r, r (39, 3b), register operands only. */
	if ((c[rex] == 0x85 || c[rex] == 0x39 || c[rex] == 0x3b) && (c[rex + 1] & 0xc0) == 0xc0)
		return rex + 2;
	/* cmpb/cmpl $imm8, disp32(%rip): 80 /7 or 83 /7 with modrm 0x3d. */
	if ((c[rex] == 0x80 || c[rex] == 0x83) && c[rex + 1] == 0x3d && n >= rex + 7)
		return rex + 7;
	return 0;
}

/* Does the kernel emulate the instruction at c (x86 uprobes)? */
static bool emulated(const uint8_t *c, size_t n)
{
	if (n >= 1 && c[0] >= 0x70 && c[0] <= 0x7f) /* jcc rel8 */
		return true;
	if (n >= 2 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f) /* jcc rel32 */
		return true;
	if (n >= 1 && c[0] >= 0x50 && c[0] <= 0x57) /* push r */
		return true;
	if (n >= 2 && c[0] == 0x41 && c[1] >= 0x50 && c[1] <= 0x57) /* push r8-r15 */
		return true;
	return false;
}

size_t alloc_probe_skip_x86(const uint8_t *code, size_t n)
{
	size_t len;

	if (emulated(code, n))
		return 0;
	len = flags_only_len(code, n);
	if (!len || len >= n || !emulated(code + len, n - len))
		return 0;
	return len;
}
