// ep-target-libs: -shared -fPIC
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The library hostile_files loads with dlopen (built as a shared object):
 * a function named like llama.cpp's model loader, which the llama probes
 * read the path argument of, and a loop to be sampled in. */
#include <stdint.h>

struct hostile_params {
	unsigned char b[1024];
};

void *llama_model_load_from_file(const char *path, struct hostile_params params);
uint64_t hostile_spin(uint64_t n);

__attribute__((noinline)) void *llama_model_load_from_file(const char *path,
							   struct hostile_params params)
{
	__asm__ volatile("" : : "r"(path), "m"(params) : "memory");
	return 0;
}

__attribute__((noinline)) uint64_t hostile_spin(uint64_t n)
{
	volatile uint64_t s = 0;

	for (uint64_t i = 0; i < n; i++)
		s += i ^ (s >> 3);
	return s;
}
