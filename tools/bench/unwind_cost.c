// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Collector-side cost of one CFI unwind (user/unwind/unwind.c), without BPF and
 * without scheduling noise: a sample is captured in-process at the bottom of
 * DEPTH frameless recursive calls (registers + 8 KiB of stack, as the BPF
 * program copies them), then unwound N times through one symbolizer session.
 * Prints frames per stack and CPU ns per unwind and per frame.
 * Built and run by tools/bench/unwind_cost.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

#define WINDOW 8192

struct capture {
	uint64_t ip, sp, fp;
	size_t len;
	unsigned char stack[WINDOW];
};

static uint64_t stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = 0;

	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && sp >= a && sp < b)
			end = b;
	}
	if (f)
		fclose(f);
	return end;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) static void
capture_here(struct capture *c)
{
	uint64_t ip, sp, fp, end;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(fp));
	c->ip = ip;
	c->sp = sp;
	c->fp = fp;
	end = stack_end(sp);
	c->len = end > sp ? (end - sp < WINDOW ? end - sp : WINDOW) : 0;
	for (size_t i = 0; i < c->len; i++)
		((volatile unsigned char *)c->stack)[i] = ((const unsigned char *)(uintptr_t)sp)[i];
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void rec(int d, struct capture *c)
{
	if (d <= 1)
		capture_here(c);
	else
		rec(d - 1, c);
	__asm__ volatile("" ::: "memory");
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 10, n = argc > 2 ? atoi(argv[2]) : 20000;
	struct capture *c = calloc(1, sizeof(*c));
	struct symbolizer *s;
	struct unwinder *u;
	uint64_t addrs[127];
	struct unwind_result res = { 0 };
	struct unwind_input in;
	double t0, t1;

	if (!c || symbolizer_new(&s, NULL) || unwinder_new(&u, s))
		return 1;
	rec(depth, c);
	in = (struct unwind_input){ .pid = (uint32_t)getpid(),
				    .ip = c->ip,
				    .sp = c->sp,
				    .fp = c->fp,
				    .stack = c->stack,
				    .stack_len = c->len };
	/* First unwind loads the ELF files and their CFI: reported apart. */
	t0 = cpu_ns();
	unwinder_unwind(u, &in, addrs, 127, &res);
	t1 = cpu_ns();
	printf("first unwind (loads ELF + CFI): %.0f us, %u frames, %s\n", (t1 - t0) / 1e3, res.n,
	       unwind_status_name(res.status));
	t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		unwinder_unwind(u, &in, addrs, 127, &res);
	t1 = cpu_ns();
	printf("depth %d: %u frames, %.0f ns per unwind, %.0f ns per frame (%d unwinds, CPU "
	       "time)\n",
	       depth, res.n, (t1 - t0) / n, (t1 - t0) / n / (res.n ? res.n : 1), n);
	symbolizer_free(s);
	unwinder_free(u);
	free(c);
	return 0;
}
