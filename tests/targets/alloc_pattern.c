// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocates and frees known amounts so the memory monitor's peak can be
 * checked: usage: alloc_pattern PEAK_MIB SECOND_MIB [HOLD_MS]
 *   1. prints "ready <pid>" and its baseline RSS ("baseline_kb N")
 *   2. maps PEAK_MIB, touches every page, holds HOLD_MS (default 0), unmaps
 *   3. maps SECOND_MIB (smaller), touches, unmaps, prints "done", exits.
 * With HOLD_MS = 0 the peak lasts only as long as touching takes: a monitor
 * that samples /proc every 100 ms may miss it; one on rss_stat cannot.
 * mmap/munmap (not malloc) so the memory really leaves the process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static long rss_kb(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size = 0, res = 0;

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &res) != 2)
		res = -1;
	fclose(f);
	return res < 0 ? -1 : res * (sysconf(_SC_PAGESIZE) / 1024);
}

__attribute__((noinline)) static int touch_block(size_t mib, long hold_ms)
{
	size_t len = mib << 20;
	long page = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	/* No transparent huge pages: page-by-page faults are what we measure. */
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < len; off += (size_t)page)
		p[off] = (char)off | 1;
	printf("touched_mib %zu rss_kb %ld\n", mib, rss_kb());
	fflush(stdout);
	if (hold_ms > 0) {
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	munmap(p, len);
	return 0;
}

int main(int argc, char **argv)
{
	size_t peak, second;
	long hold = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PEAK_MIB SECOND_MIB [HOLD_MS]\n", argv[0]);
		return 2;
	}
	peak = strtoul(argv[1], NULL, 10);
	second = strtoul(argv[2], NULL, 10);
	if (argc > 3)
		hold = strtol(argv[3], NULL, 10);
	printf("ready %d\n", (int)getpid());
	printf("baseline_kb %ld\n", rss_kb());
	fflush(stdout);
	if (touch_block(peak, hold) || touch_block(second, hold))
		return 1;
	printf("after_kb %ld\ndone\n", rss_kb());
	return 0;
}
