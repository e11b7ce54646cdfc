// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CFI unwinder without BPF: a sample is captured in-process (registers
 * and the top of this thread's stack, taken four frameless calls deep, as the
 * BPF program does for a target), unwound live, saved to a fixture file with
 * the maps, and unwound again from the fixture through a fake proc root by a
 * fresh symbolizer. Then hostile input: garbage stack bytes, bogus registers,
 * sp outside the window, a frame chain that points to itself. None may crash,
 * loop, or return more frames than asked for.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

#define WINDOW	 16384
#define MAXF	 127
#define FAKE_PID 4343u

struct capture {
	uint64_t ip, sp, fp;
	size_t len;
	unsigned char stack[WINDOW];
};

/* Upper end of this thread's [stack] mapping: the window must not cross it. */
static uint64_t stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t end = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "%llx-%llx", &a, &b) == 2 && sp >= a && sp < b)
			end = b;
	}
	fclose(f);
	return end;
}

/* A byte loop ASan does not check: the stack above sp holds redzones it
 * would (rightly, for normal code) report. */
__attribute__((no_sanitize_address, noinline)) static void
copy_raw(unsigned char *dst, const unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)dst)[i] = src[i];
}

/* The registers at the asm, then the stack from that sp upward: what the BPF
 * program copies for a sample that interrupted user code here. */
__attribute__((noinline, optimize("omit-frame-pointer"))) void capture_here(struct capture *c)
{
	uint64_t ip, sp, fp, end;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(fp));
	c->ip = ip;
	c->sp = sp;
	c->fp = fp;
	end = stack_end(sp);
	c->len = end > sp ? (end - sp < WINDOW ? end - sp : WINDOW) : 0;
	copy_raw(c->stack, (const unsigned char *)(uintptr_t)sp, c->len);
}

/* Frameless callers with stack frames of different sizes; the asm keeps the
 * calls from becoming tail calls and the locals from being optimized out. */
__attribute__((noinline, optimize("omit-frame-pointer"))) void chain3(struct capture *c)
{
	capture_here(c);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void chain2(struct capture *c)
{
	volatile uint64_t pad[5] = { 1, 2, 3, 4, 5 };

	chain3(c);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void chain1(struct capture *c)
{
	volatile char pad[200];

	pad[0] = 1;
	chain2(c);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static const char *const expect_names[] = {
	"capture_here", "chain3", "chain2", "chain1", "test_live_and_fixture", "main",
};
#define NEXPECT (sizeof(expect_names) / sizeof(expect_names[0]))

static int unwind_names(struct symbolizer *s, struct unwinder *u, uint32_t pid,
			const struct capture *c, const char **names, struct unwind_result *res)
{
	struct unwind_input in = {
		.pid = pid,
		.ip = c->ip,
		.sp = c->sp,
		.fp = c->fp,
		.stack = c->stack,
		.stack_len = c->len,
	};
	uint64_t addrs[MAXF];
	int err = unwinder_unwind(u, &in, addrs, MAXF, res);

	if (err)
		return err;
	for (uint32_t i = 0; i < res->n; i++) {
		struct sym_result r;

		names[i] = symbolizer_user(s, pid, addrs[i], &r) ? "?" : r.name;
	}
	return 0;
}

static void check_chain(const char **names, const struct unwind_result *res, const char *what)
{
	fprintf(stderr, "%s: %u frames, %s:", what, res->n, unwind_status_name(res->status));
	for (uint32_t i = 0; i < res->n; i++)
		fprintf(stderr, " %s", names[i]);
	fputc('\n', stderr);
	CHECK(res->n >= NEXPECT + 1);
	for (size_t i = 0; i < NEXPECT && i < res->n; i++)
		CHECK_STR_EQ(names[i], expect_names[i]);
	/* glibc's _start marks the outermost frame (rip undefined in its CFI). */
	CHECK_INT_EQ(res->status, UNWIND_COMPLETE);
	if (res->n)
		CHECK_STR_EQ(names[res->n - 1], "_start");
}

/* ---- fixture: registers + stack bytes + maps in one text file ---- */

static int save_fixture(const char *path, const struct capture *c)
{
	FILE *f = fopen(path, "w"), *m = fopen("/proc/self/maps", "r");
	char line[4096];

	if (!f || !m) {
		if (f)
			fclose(f);
		if (m)
			fclose(m);
		return -1;
	}
	fprintf(f,
		"ep-unwind-fixture 1\nip %" PRIx64 "\nsp %" PRIx64 "\nfp %" PRIx64 "\nstack %zu\n",
		c->ip, c->sp, c->fp, c->len);
	for (size_t i = 0; i < c->len; i++)
		fprintf(f, "%02x%s", c->stack[i], (i % 32 == 31 || i + 1 == c->len) ? "\n" : "");
	fputs("maps\n", f);
	while (fgets(line, sizeof(line), m))
		fputs(line, f);
	fclose(m);
	return fclose(f) ? -1 : 0;
}

/* Loads the fixture, writing its maps to maps_out. */
static int load_fixture(const char *path, struct capture *c, const char *maps_out)
{
	FILE *f = fopen(path, "r"), *m = NULL;
	char line[4096];
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f) || strcmp(line, "ep-unwind-fixture 1\n") ||
	    fscanf(f, "ip %" SCNx64 "\nsp %" SCNx64 "\nfp %" SCNx64 "\nstack %zu\n", &c->ip, &c->sp,
		   &c->fp, &c->len) != 4 ||
	    c->len > WINDOW)
		goto out;
	for (size_t i = 0; i < c->len; i++) {
		unsigned v;

		if (fscanf(f, "%2x", &v) != 1)
			goto out;
		c->stack[i] = (unsigned char)v;
	}
	if (fscanf(f, "\nmaps\n") != 0 || !(m = fopen(maps_out, "w")))
		goto out;
	while (fgets(line, sizeof(line), f))
		fputs(line, m);
	rc = fclose(m) ? -1 : 0;
out:
	fclose(f);
	return rc;
}

static void test_live_and_fixture(void)
{
	struct capture *c = calloc(1, sizeof(*c)), *c2 = calloc(1, sizeof(*c2));
	struct symbolizer *s = NULL, *s2 = NULL;
	struct unwinder *u = NULL, *u2 = NULL;
	const char *names[MAXF], *names2[MAXF];
	struct unwind_result res, res2;
	char dir[] = "/tmp/ep-unwind-XXXXXX", path[64], sub[64], maps[96], root[96];
	char status[96] = "", cmd[160];

	CHECK(c && c2);
	if (!c || !c2)
		goto out;
	chain1(c);
	CHECK(c->len >= 512);
	CHECK_INT_EQ(symbolizer_new(&s, NULL), 0);
	CHECK_INT_EQ(unwinder_new(&u, s), 0);
	if (!s || !u)
		goto out;
	CHECK_INT_EQ(unwind_names(s, u, (uint32_t)getpid(), c, names, &res), 0);
	check_chain(names, &res, "live");
	/* Twice on one session (the Dwfl is attached once, then reused). */
	CHECK_INT_EQ(unwind_names(s, u, (uint32_t)getpid(), c, names2, &res2), 0);
	CHECK_INT_EQ(res2.n, res.n);

	/* The same sample through a fixture file and a fake proc root, in a
	 * new symbolizer: nothing may come from this process but the files. */
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/sample.fixture", dir);
	snprintf(sub, sizeof(sub), "%s/%u", dir, FAKE_PID);
	snprintf(maps, sizeof(maps), "%s/maps", sub);
	snprintf(root, sizeof(root), "%s/root", sub);
	CHECK_INT_EQ(save_fixture(path, c), 0);
	CHECK_INT_EQ(mkdir(sub, 0700), 0);
	CHECK_INT_EQ(symlink("/", root), 0);
	/* Whose credentials its files are read with: ours, as in /proc. */
	snprintf(status, sizeof(status), "%s/status", sub);
	snprintf(cmd, sizeof(cmd), "cat /proc/self/status > '%s'", status);
	CHECK_INT_EQ(system(cmd), 0);
	CHECK_INT_EQ(load_fixture(path, c2, maps), 0);
	CHECK_INT_EQ(c2->len, c->len);
	CHECK(!memcmp(c2->stack, c->stack, c->len));
	{
		struct symbolizer_opts o = { .proc_root = dir };

		CHECK_INT_EQ(symbolizer_new(&s2, &o), 0);
	}
	CHECK_INT_EQ(unwinder_new(&u2, s2), 0);
	if (s2 && u2) {
		CHECK_INT_EQ(unwind_names(s2, u2, FAKE_PID, c2, names2, &res2), 0);
		check_chain(names2, &res2, "fixture");
		CHECK_INT_EQ(res2.n, res.n);
	}

	/* The window cut short: the walk must stop cleanly and say truncated. */
	if (res.n > 4) {
		struct capture *t = c2;

		*t = *c;
		t->len = 96; /* enough for capture_here's frame, not for main's */
		CHECK_INT_EQ(unwind_names(s, u, (uint32_t)getpid(), t, names2, &res2), 0);
		CHECK(res2.n >= 1 && res2.n < res.n);
		CHECK_INT_EQ(res2.status, UNWIND_TRUNCATED);
		if (res2.n)
			CHECK_STR_EQ(names2[0], "capture_here");
		/* Fewer frames asked for than there are: cut at max, no overrun. */
		uint64_t few[3] = { 0, 0, 0 };
		struct unwind_input in = { .pid = (uint32_t)getpid(),
					   .ip = c->ip,
					   .sp = c->sp,
					   .fp = c->fp,
					   .stack = c->stack,
					   .stack_len = c->len };

		CHECK_INT_EQ(unwinder_unwind(u, &in, few, 2, &res2), 0);
		CHECK_INT_EQ(res2.n, 2);
		CHECK_INT_EQ(res2.status, UNWIND_DEPTH);
		CHECK_INT_EQ(few[2], 0);
	}
out:
	unlink(path);
	unlink(maps);
	unlink(root);
	if (status[0])
		unlink(status);
	rmdir(sub);
	rmdir(dir);
	symbolizer_free(s2);
	unwinder_free(u2);
	symbolizer_free(s);
	unwinder_free(u);
	free(c);
	free(c2);
}

/* ---- hostile input ---- */

static uint64_t xorshift(uint64_t *st)
{
	uint64_t x = *st;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *st = x;
}

static void run_bad(struct unwinder *u, const struct unwind_input *in, uint32_t max)
{
	uint64_t addrs[MAXF + 1];
	struct unwind_result res;

	addrs[max] = 0x5a5a5a5a5a5a5a5aull;
	CHECK_INT_EQ(unwinder_unwind(u, in, addrs, max, &res), 0);
	CHECK(res.n <= max);
	CHECK_INT_EQ(addrs[max], 0x5a5a5a5a5a5a5a5aull);
	if (res.n == 0)
		CHECK(res.status != UNWIND_COMPLETE);
}

static void test_hostile(void)
{
	struct capture *c = calloc(1, sizeof(*c));
	unsigned char *garbage = malloc(WINDOW);
	struct symbolizer *s = NULL;
	struct unwinder *u = NULL;
	uint64_t st = 0x9e3779b97f4a7c15ull;
	uint32_t pid = (uint32_t)getpid();

	CHECK(c && garbage);
	CHECK_INT_EQ(symbolizer_new(&s, NULL), 0);
	CHECK_INT_EQ(unwinder_new(&u, s), 0);
	if (!c || !garbage || !s || !u)
		goto out;
	chain1(c);

	/* Real registers over garbage bytes (random, all ones, all zeros). */
	for (int i = 0; i < 300; i++) {
		struct unwind_input in = { .pid = pid,
					   .ip = c->ip,
					   .sp = c->sp,
					   .fp = c->fp,
					   .stack = garbage,
					   .stack_len = WINDOW };

		for (size_t j = 0; j < WINDOW; j += 8) {
			uint64_t v = xorshift(&st);

			/* Half the words are plausible: addresses near the real
			 * ones, so the walk goes on into nonsense for a while. */
			if (v & 1)
				v = (v & 2 ? c->ip : c->sp) + ((v >> 8) & 0xffff) - 0x8000;
			memcpy(garbage + j, &v, 8);
		}
		if (i == 1)
			memset(garbage, 0xff, WINDOW);
		if (i == 2)
			memset(garbage, 0, WINDOW);
		run_bad(u, &in, MAXF);
	}
	/* Bogus registers with the real window. */
	{
		const uint64_t ips[] = { 0, 1, UINT64_MAX, c->ip, (uint64_t)(uintptr_t)garbage };
		const uint64_t sps[] = { 0, 8, UINT64_MAX - 4, UINT64_MAX, c->sp, c->sp + 3 };

		for (size_t i = 0; i < sizeof(ips) / sizeof(ips[0]); i++) {
			for (size_t j = 0; j < sizeof(sps) / sizeof(sps[0]); j++) {
				struct unwind_input in = { .pid = pid,
							   .ip = ips[i],
							   .sp = sps[j],
							   .fp = xorshift(&st),
							   .stack = c->stack,
							   .stack_len = c->len };

				run_bad(u, &in, MAXF);
				/* sp outside the window: nothing to read at all. */
				in.stack_len = 0;
				run_bad(u, &in, MAXF);
				in.stack_len = 7;
				run_bad(u, &in, MAXF);
			}
		}
	}
	/* A frame chain that points to itself: the pc is in no module (heap),
	 * so libdw walks frame pointers, and saved rbp == rbp forever. */
	{
		uint64_t *w = (uint64_t *)(void *)garbage;
		uint64_t sp = 0x7ffd00001000ull, heap_pc = (uint64_t)(uintptr_t)garbage + 16;
		struct unwind_input in = { .pid = pid,
					   .ip = heap_pc,
					   .sp = sp,
					   .fp = sp,
					   .stack = garbage,
					   .stack_len = 64 };

		w[0] = sp;	/* saved rbp: this frame again */
		w[1] = heap_pc; /* return address */
		run_bad(u, &in, MAXF);
		run_bad(u, &in, 5);
		/* And through a CFI-described frame whose return address is
		 * its own pc and whose CFA does not move. */
		in.ip = c->ip;
		for (int i = 0; i < 8; i++)
			w[i] = i & 1 ? c->ip + 1 : sp;
		run_bad(u, &in, MAXF);
	}
	/* max 1: only the leaf. */
	{
		struct unwind_input in = { .pid = pid,
					   .ip = c->ip,
					   .sp = c->sp,
					   .fp = c->fp,
					   .stack = c->stack,
					   .stack_len = c->len };

		run_bad(u, &in, 1);
	}
	/* A pid that does not exist: no maps, nothing resolves, still clean. */
	{
		struct unwind_input in = { .pid = 0x3ffffffe,
					   .ip = c->ip,
					   .sp = c->sp,
					   .fp = c->fp,
					   .stack = c->stack,
					   .stack_len = c->len };

		run_bad(u, &in, MAXF);
	}
out:
	symbolizer_free(s);
	unwinder_free(u);
	free(c);
	free(garbage);
}

int main(void)
{
	test_live_and_fixture();
	test_hostile();
	return check_report("test_unwind");
}
