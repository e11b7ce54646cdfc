// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc readers on a fake proc tree and on hostile contents. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "proc/proc_info.h"

static void put(const char *root, const char *rel, const void *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fwrite(data, 1, len, f);
	fclose(f);
}

int main(void)
{
	char root[] = "/tmp/ep-proc-XXXXXX";
	char comm[16], path[512];
	char *cmd = NULL;
	uint32_t pids[4];

	if (!mkdtemp(root))
		return 2;
	snprintf(path, sizeof(path), "%s/42", root);
	mkdir(path, 0755);

	/* comm with a newline, cmdline with NULs and a control byte. */
	put(root, "42/comm", "llama-server\n", 13);
	CHECK_INT_EQ(proc_read_comm(root, 42, comm, sizeof(comm)), 0);
	CHECK_STR_EQ(comm, "llama-server");
	put(root, "42/cmdline", "python3\0-m\0x\x01y\0", 15);
	CHECK_INT_EQ(proc_read_cmdline(root, 42, &cmd), 0);
	CHECK_STR_EQ(cmd, "python3 -m x?y");
	free(cmd);

	/* Huge cmdline is cut, not read whole. */
	{
		size_t n = PROC_CMDLINE_MAX * 4;
		char *big = malloc(n);

		memset(big, 'a', n);
		put(root, "42/cmdline", big, n);
		free(big);
		CHECK_INT_EQ(proc_read_cmdline(root, 42, &cmd), 0);
		CHECK_INT_EQ(strlen(cmd), PROC_CMDLINE_MAX + 3);
		CHECK(!strcmp(cmd + PROC_CMDLINE_MAX, "..."));
		free(cmd);
	}
	/* Empty cmdline (kernel threads, zombies). */
	put(root, "42/cmdline", "", 0);
	CHECK_INT_EQ(proc_read_cmdline(root, 42, &cmd), 0);
	CHECK_STR_EQ(cmd, "");
	free(cmd);

	/* Missing process. */
	CHECK_INT_EQ(proc_read_comm(root, 43, comm, sizeof(comm)), -ENOENT);
	CHECK_INT_EQ(proc_get_state(root, 43), PROC_GONE);

	/* stat: comm may hold ") Z (" to fool a naive parser. */
	put(root, "42/stat", "42 (a) Z (b) R 1 2 3", 20);
	CHECK_INT_EQ(proc_get_state(root, 42), PROC_ALIVE);
	put(root, "42/stat", "42 (x) Z 1 2 3", 14);
	CHECK_INT_EQ(proc_get_state(root, 42), PROC_ZOMBIE);
	CHECK_INT_EQ(proc_parse_stat_state("42 (x) S 1", 10), 'S');
	CHECK_INT_EQ(proc_parse_stat_state("42 (x)", 6), 0);
	CHECK_INT_EQ(proc_parse_stat_state("42 (x)S", 7), 0);

	/* Numeric fields after the last ')': a comm with ") " in it, the
	 * field numbers of proc(5), malformed and hostile lines. */
	{
		const char *l = "7 (a) b) R 1 7 7 0 -1 4194560 90 0 0 0 1 2 0 0 20 0 1 0 55 "
				"1000 100 18446744073709551615 4194304 4198400 0\n";
		uint64_t v = 0;

		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 4, &v), 0);
		CHECK_INT_EQ((long long)v, 1);
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 26, &v), 0);
		CHECK_INT_EQ((long long)v, 4194304);
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 28, &v), 0);
		CHECK_INT_EQ((long long)v, 0);
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 25, &v), 0);
		CHECK(v == UINT64_MAX);
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 3, &v), -EINVAL);  /* "R" */
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 8, &v), -EINVAL);  /* "-1" */
		CHECK_INT_EQ(proc_parse_stat_field(l, strlen(l), 29, &v), -EINVAL); /* missing */
		CHECK_INT_EQ(proc_parse_stat_field(l, 40, 26, &v), -EINVAL);	    /* cut short */
		CHECK_INT_EQ(proc_parse_stat_field("7 (x", 4, 4, &v), -EINVAL);
		CHECK_INT_EQ(proc_parse_stat_field("", 0, 4, &v), -EINVAL);
		CHECK_INT_EQ(proc_parse_stat_field("1 (x) R 99999999999999999999999", 31, 4, &v),
			     -EINVAL);
		CHECK_INT_EQ(proc_parse_stat_field("1 (x) R 12ab 3", 14, 4, &v), -EINVAL);
		put(root, "42/stat", l, strlen(l));
		CHECK_INT_EQ(proc_read_stat_field(root, 42, 26, &v), 0);
		CHECK_INT_EQ((long long)v, 4194304);
		CHECK(proc_read_stat_field(root, 43, 26, &v) < 0);
	}
	CHECK_INT_EQ(proc_parse_stat_state("garbage", 7), 0);
	CHECK_INT_EQ(proc_parse_stat_state("", 0), 0);
	CHECK_INT_EQ(proc_parse_stat_state("1 (x) \x01", 7), 0);
	/* Garbage stat is not taken as an exit. */
	put(root, "42/stat", "\xff\xfe", 2);
	CHECK_INT_EQ(proc_get_state(root, 42), PROC_ALIVE);

	/* schedstat: run time (ns), run-queue wait, timeslices. */
	{
		uint64_t rt = 0;
		const char ss[] = "2997591834 1640272 215\n";

		CHECK_INT_EQ(proc_parse_schedstat_runtime(ss, sizeof(ss) - 1, &rt), 0);
		CHECK_INT_EQ((long long)rt, 2997591834LL);
		/* Cut after the number, no separator: still the number. */
		CHECK_INT_EQ(proc_parse_schedstat_runtime(ss, 4, &rt), 0);
		CHECK_INT_EQ((long long)rt, 2997);
		CHECK_INT_EQ(proc_parse_schedstat_runtime("", 0, &rt), -EINVAL);
		CHECK_INT_EQ(proc_parse_schedstat_runtime(" 1 2 3", 6, &rt), -EINVAL);
		CHECK_INT_EQ(proc_parse_schedstat_runtime("-1 2 3", 6, &rt), -EINVAL);
		CHECK_INT_EQ(proc_parse_schedstat_runtime("12x 2 3", 7, &rt), -EINVAL);
		CHECK_INT_EQ(proc_parse_schedstat_runtime("99999999999999999999 0 0", 24, &rt),
			     -EINVAL);
		snprintf(path, sizeof(path), "%s/42/task", root);
		mkdir(path, 0755);
		snprintf(path, sizeof(path), "%s/42/task/43", root);
		mkdir(path, 0755);
		put(root, "42/task/43/schedstat", ss, sizeof(ss) - 1);
		CHECK_INT_EQ(proc_read_thread_runtime(root, 42, 43, &rt), 0);
		CHECK_INT_EQ((long long)rt, 2997591834LL);
		CHECK_INT_EQ(proc_read_thread_runtime(root, 42, 44, &rt), -ENOENT);
		put(root, "42/task/43/schedstat", "garbage", 7);
		CHECK_INT_EQ(proc_read_thread_runtime(root, 42, 43, &rt), -EINVAL);
		/* Ours grows as we run. */
		uint64_t a = 0, b = 0;
		CHECK_INT_EQ(proc_read_thread_runtime("/proc", (uint32_t)getpid(),
						      (uint32_t)getpid(), &a),
			     0);
		for (volatile unsigned i = 0; i < 20000000; i++)
			;
		CHECK_INT_EQ(proc_read_thread_runtime("/proc", (uint32_t)getpid(),
						      (uint32_t)getpid(), &b),
			     0);
		CHECK(b > a);
	}

	/* The real /proc: ourselves. */
	CHECK_INT_EQ(proc_get_state("/proc", (uint32_t)getpid()), PROC_ALIVE);
	CHECK_INT_EQ(proc_read_comm("/proc", (uint32_t)getpid(), comm, sizeof(comm)), 0);
	CHECK_STR_EQ(comm, "test_proc_info");

	/* Tgid of a thread (--pid TID); Name: is the comm, which a
	 * thread can set to "Tgid: 1". */
	uint32_t tgid = 0;
	const char st1[] = "Name:\tTgid: 1\nUmask:\t0022\nState:\tR\nTgid:\t4242\nPid:\t4243\n";
	CHECK_INT_EQ(proc_parse_status_tgid(st1, sizeof(st1) - 1, &tgid), 0);
	CHECK_INT_EQ(tgid, 4242);
	/* Cut inside the number: a NUL-less buffer is read up to len only. */
	CHECK_INT_EQ(proc_parse_status_tgid(st1, strstr(st1, "4242") + 2 - st1, &tgid), 0);
	CHECK_INT_EQ(tgid, 42);
	CHECK_INT_EQ(proc_parse_status_tgid("Name:\tx\nTgid:\t\n", 16, &tgid), -EINVAL);
	CHECK_INT_EQ(proc_parse_status_tgid("Name:\tx\nTgid:\t0\n", 17, &tgid), -EINVAL);
	CHECK_INT_EQ(proc_parse_status_tgid("Name:\tx\nTgid:\t99999999999\n", 27, &tgid), -EINVAL);
	CHECK_INT_EQ(proc_parse_status_tgid("Name:\tx\nTgid:\t12x\n", 19, &tgid), -EINVAL);
	CHECK_INT_EQ(proc_parse_status_tgid("Tgid:\t5\n", 8, &tgid), -EINVAL); /* no Name: first */
	CHECK_INT_EQ(proc_parse_status_tgid("", 0, &tgid), -EINVAL);
	put(root, "42/status", st1, sizeof(st1) - 1);
	CHECK_INT_EQ(proc_read_tgid(root, 42, &tgid), 0);
	CHECK_INT_EQ(tgid, 4242);
	CHECK_INT_EQ(proc_read_tgid(root, 43, &tgid), -ENOENT);
	CHECK_INT_EQ(proc_read_tgid("/proc", (uint32_t)getpid(), &tgid), 0);
	CHECK_INT_EQ(tgid, (uint32_t)getpid());

	/* Kernel threads (--pid 2): PF_KTHREAD in the flags field. */
	{
		const char kt[] = "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 3\n";
		const char ut[] = "7 (a b) S 1 7 7 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 3\n";

		put(root, "42/stat", kt, sizeof(kt) - 1);
		CHECK_INT_EQ(proc_is_kernel_thread(root, 42), 1);
		put(root, "42/stat", ut, sizeof(ut) - 1);
		CHECK_INT_EQ(proc_is_kernel_thread(root, 42), 0);
		put(root, "42/stat", "42 (x) S 1", 10);
		CHECK_INT_EQ(proc_is_kernel_thread(root, 42), -EINVAL);
		CHECK_INT_EQ(proc_is_kernel_thread(root, 43), -ENOENT);
		CHECK_INT_EQ(proc_is_kernel_thread("/proc", (uint32_t)getpid()), 0);
	}

	/* pid lists */
	CHECK_INT_EQ(proc_parse_pid_list("1,22,333", pids, 4), 3);
	CHECK_INT_EQ(pids[1], 22);
	CHECK_INT_EQ(proc_parse_pid_list("2147483647", pids, 4), 1);
	CHECK_INT_EQ(proc_parse_pid_list("2147483648", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list("1,2,3,4,5", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list(" 1", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list("1 ", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list("+1", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list("", pids, 4), -EINVAL);
	CHECK_INT_EQ(proc_parse_pid_list(NULL, pids, 4), -EINVAL);

	snprintf(path, sizeof(path), "rm -rf '%s'", root);
	if (system(path))
		return 2;
	return check_report("test_proc_info");
}
