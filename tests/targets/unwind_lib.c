// ep-target-libs: -shared -fPIC -Wl,-soname,unwind_lib
// ep-target-cflags: -O2 -fomit-frame-pointer -momit-leaf-frame-pointer
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The shared library unwind_frameless calls through, built like the
 * distribution libraries users profile: -O2, no frame pointers. lib_relay
 * keeps locals on the stack so its frame has a CFA offset of its own, then
 * calls back into the program: the unwinder must cross the library's frame
 * (by its .eh_frame) to get from the callback back to main.
 */
#include <stdint.h>

typedef uint64_t (*unwind_cb)(uint64_t n);

__attribute__((noinline)) uint64_t lib_relay(unwind_cb cb, uint64_t n)
{
	volatile uint64_t pad[6] = { n, n + 1, n + 2, n + 3, n + 4, n + 5 };
	uint64_t r = cb(pad[0]);

	return r + pad[5];
}
