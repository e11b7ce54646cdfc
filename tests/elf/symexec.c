// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Non-PIE (ET_EXEC) target for the layout test, linked at 0x800000 with one
 * function in a segment placed at 0x2600000 in memory but right after the
 * others in the file, so its p_offset differs from p_vaddr - base by ~30 MiB
 * (the layout of Debian's /usr/bin/node, whose .lpstub segment is 2 MiB
 * aligned in memory only). Links libsymprelink.so and libsymmini.so.
 * Prints "name 0xADDR" lines, then "ok", then waits for "quit" on stdin.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int symprelink_exported(int x);
uintptr_t symprelink_exported_addr(void);
uintptr_t symprelink_static_addr(void);
int symmini_exported(int x);
uintptr_t symmini_exported_addr(void);
uintptr_t symmini_static_addr(void);

__attribute__((noinline)) int symexec_near(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 5;
}

static __attribute__((noinline)) int symexec_static(int x)
{
	__asm__ volatile("" ::: "memory");
	return symexec_near(x) * 3;
}

__attribute__((noinline, section(".lpstub"))) int symexec_far(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 9;
}

/* A C++ name given from C: the symbolizer must demangle it (or not, with
 * no_demangle). */
int symexec_cxx(int x) __asm__("_ZN6epdemo4funcEi");
__attribute__((noinline)) int symexec_cxx(int x)
{
	__asm__ volatile("" ::: "memory");
	return x - 1;
}

/* Maps the page of the executable holding f once more, elsewhere (as V8
 * does with node's embedded builtins); returns f's address in that copy,
 * or 0. */
static uintptr_t map_alias(uintptr_t f)
{
	unsigned long long lo, hi, off, foff = 0;
	char line[512];
	FILE *maps = fopen("/proc/self/maps", "r");
	void *p;
	int fd;

	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 && f >= lo && f < hi)
			foff = f - lo + off;
	if (maps)
		fclose(maps);
	fd = open("/proc/self/exe", O_RDONLY);
	if (!foff || fd < 0)
		return 0;
	p = mmap(NULL, 0x2000, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, (off_t)(foff & ~0xfffull));
	close(fd);
	return p == MAP_FAILED ? 0 : (uintptr_t)p + (foff & 0xfff);
}

int main(void)
{
	char line[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("symexec_near %p\n", (void *)&symexec_near);
	printf("symexec_static %p\n", (void *)&symexec_static);
	printf("symexec_far %p\n", (void *)&symexec_far);
	printf("symprelink_exported %p\n", (void *)symprelink_exported_addr());
	printf("symprelink_static %p\n", (void *)symprelink_static_addr());
	printf("symmini_exported %p\n", (void *)symmini_exported_addr());
	printf("symmini_static %p\n", (void *)symmini_static_addr());
	printf("symexec_cxx %p\n", (void *)&symexec_cxx);
	printf("symexec_alias %p\n", (void *)map_alias((uintptr_t)&symexec_near));
	printf("ok\n");
	while (fgets(line, sizeof(line), stdin) && strcmp(line, "quit\n") != 0)
		printf("ok\n");
	return symexec_static(1) + symexec_far(2) + symexec_cxx(0) + symprelink_exported(3) +
		       symmini_exported(4) ==
	       0;
}
