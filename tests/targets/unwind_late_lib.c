// ep-target-libs: -shared -fPIC
// ep-target-cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A frameless library unwind_misc dlopen()s only after the profiler is
 * attached: its CFI must be found from maps re-read during the run.
 */
#include <stdint.h>

typedef uint64_t (*late_cb)(uint64_t n);

__attribute__((noinline)) uint64_t late_relay(late_cb cb, uint64_t n)
{
	volatile uint64_t pad[3] = { n, 7, 9 };
	uint64_t r = cb(pad[0]);

	return r + pad[2];
}
