// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PIE target for the symbolizer test. Prints "name 0xADDR" lines for its own
 * and libsymtest.so functions, then serves commands from stdin, one per line:
 *   dlopen PATH  -> "dl 0xFUNC 0xHIDDEN" (symdl_func, symdl_hidden) or "err ..."
 *   anon         -> "anon 0xADDR" (a fresh anonymous mapping, 64 KiB)
 *   quit
 * Every reply ends with a line "ok" so the test knows it is complete.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int symtest_lib_alpha(int x);
int symtest_lib_beta(int x);
uintptr_t symtest_static_helper_addr(void);
void symtest_padded(void);

__attribute__((noinline)) int symtarget_func_one(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 11;
}

static __attribute__((noinline)) int symtarget_static_two(int x)
{
	__asm__ volatile("" ::: "memory");
	return symtarget_func_one(x) * 2;
}

int main(void)
{
	char line[4096];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("symtarget_func_one %p\n", (void *)&symtarget_func_one);
	printf("symtarget_static_two %p\n", (void *)&symtarget_static_two);
	printf("main %p\n", (void *)&main);
	printf("symtest_lib_alpha %p\n", (void *)&symtest_lib_alpha);
	printf("symtest_lib_beta %p\n", (void *)&symtest_lib_beta);
	printf("symtest_static_helper %p\n", (void *)symtest_static_helper_addr());
	printf("symtest_padded %p\n", (void *)&symtest_padded);
	printf("ok\n");
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "dlopen ", 7) == 0) {
			void *h = dlopen(line + 7, RTLD_NOW | RTLD_LOCAL);
			void *f = h ? dlsym(h, "symdl_func") : NULL;
			uintptr_t (*hid)(void) = h ? (uintptr_t(*)(void))dlsym(h, "symdl_hidden_addr")
						   : NULL;

			if (f && hid)
				printf("dl %p %p\n", f, (void *)hid());
			else
				printf("err %s\n", dlerror());
		} else if (strcmp(line, "anon") == 0) {
			void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				       -1, 0);

			if (p == MAP_FAILED)
				printf("err mmap\n");
			else
				printf("anon %p\n", p);
		} else if (strcmp(line, "quit") == 0) {
			break;
		}
		printf("ok\n");
	}
	return symtarget_static_two(1) == 0;
}
