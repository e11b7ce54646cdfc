// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "proc/proc_info.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Any positive pid_t parses: a number beyond the kernel's pid_max is a
 * process that does not exist, which the caller reports as such. */
#define EP_PID_MAX 2147483647ul

static ssize_t read_proc_file(const char *proc_root, uint32_t pid, const char *name, char *buf,
			      size_t len)
{
	char path[256];
	ssize_t n, total = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len) {
		n = read(fd, buf + total, len - total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return n;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	return total;
}

int proc_read_comm(const char *proc_root, uint32_t pid, char *buf, size_t len)
{
	char tmp[64];
	ssize_t n;

	if (!len)
		return -EINVAL;
	n = read_proc_file(proc_root, pid, "comm", tmp, sizeof(tmp) - 1);
	if (n < 0)
		return (int)n;
	tmp[n] = '\0';
	tmp[strcspn(tmp, "\n")] = '\0';
	snprintf(buf, len, "%s", tmp);
	return 0;
}

int proc_read_cmdline(const char *proc_root, uint32_t pid, char **out)
{
	char *buf = malloc(PROC_CMDLINE_MAX + 4);
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	n = read_proc_file(proc_root, pid, "cmdline", buf, PROC_CMDLINE_MAX);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	while (n > 0 && buf[n - 1] == '\0')
		n--;
	for (ssize_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];

		if (c == '\0')
			buf[i] = ' ';
		else if (c < 0x20 || c == 0x7f)
			buf[i] = '?';
	}
	if (n == PROC_CMDLINE_MAX) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	*out = buf;
	return 0;
}

int proc_parse_status_tgid(const char *buf, size_t len, uint32_t *tgid)
{
	static const char key[] = "\nTgid:";
	size_t klen = sizeof(key) - 1;

	/* Looked up as "\nTgid:" so a field whose value contains the word (the
	 * Name: line is the thread's comm) cannot match; Name: is first. */
	for (size_t i = 0; i + klen <= len; i++) {
		uint64_t v = 0;
		size_t j = i + klen;
		bool digits = false;

		if (memcmp(buf + i, key, klen))
			continue;
		while (j < len && (buf[j] == '\t' || buf[j] == ' '))
			j++;
		for (; j < len && buf[j] >= '0' && buf[j] <= '9'; j++) {
			v = v * 10 + (uint64_t)(buf[j] - '0');
			if (v > EP_PID_MAX)
				return -EINVAL;
			digits = true;
		}
		if (!digits || !v || (j < len && buf[j] != '\n'))
			return -EINVAL;
		*tgid = (uint32_t)v;
		return 0;
	}
	return -EINVAL;
}

int proc_read_tgid(const char *proc_root, uint32_t tid, uint32_t *tgid)
{
	char buf[4096];
	ssize_t n = read_proc_file(proc_root, tid, "status", buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return proc_parse_status_tgid(buf, (size_t)n, tgid);
}

char proc_parse_stat_state(const char *line, size_t len)
{
	const char *rp = NULL;

	for (size_t i = 0; i < len; i++)
		if (line[i] == ')')
			rp = line + i;
	if (!rp || (size_t)(rp - line) + 2 >= len || rp[1] != ' ')
		return 0;
	char c = rp[2];

	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ? c : 0;
}

/* A decimal number at p ending at end, a space or a newline. */
static int parse_u64_token(const char *p, const char *end, uint64_t *out)
{
	uint64_t v = 0;

	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	if (p < end && *p != ' ' && *p != '\n')
		return -EINVAL;
	*out = v;
	return 0;
}

int proc_parse_stat_field(const char *line, size_t len, unsigned n, uint64_t *out)
{
	const char *rp = NULL, *p, *end = line + len;
	unsigned field = 3; /* the state, first field after the comm */

	for (size_t i = 0; i < len; i++)
		if (line[i] == ')')
			rp = line + i;
	if (!rp || n < 3 || rp + 2 >= end || rp[1] != ' ')
		return -EINVAL;
	p = rp + 2;
	while (field < n) {
		while (p < end && *p != ' ' && *p != '\n')
			p++;
		if (p >= end || *p != ' ')
			return -EINVAL;
		p++;
		field++;
	}
	return parse_u64_token(p, end, out);
}

int proc_read_stat_field(const char *proc_root, uint32_t pid, unsigned n, uint64_t *out)
{
	char buf[1024];
	ssize_t len = read_proc_file(proc_root, pid, "stat", buf, sizeof(buf));

	if (len < 0)
		return (int)len;
	return proc_parse_stat_field(buf, (size_t)len, n, out);
}

int proc_parse_schedstat_runtime(const char *buf, size_t len, uint64_t *ns)
{
	return parse_u64_token(buf, buf + len, ns);
}

int proc_read_thread_runtime(const char *proc_root, uint32_t pid, uint32_t tid, uint64_t *ns)
{
	char name[48], buf[96];
	ssize_t len;

	snprintf(name, sizeof(name), "task/%u/schedstat", tid);
	len = read_proc_file(proc_root, pid, name, buf, sizeof(buf));
	if (len < 0)
		return (int)len;
	return proc_parse_schedstat_runtime(buf, (size_t)len, ns);
}

/* include/linux/sched.h; part of the ABI since /proc/PID/stat shows it. */
#define EP_PF_KTHREAD 0x00200000u

int proc_is_kernel_thread(const char *proc_root, uint32_t pid)
{
	uint64_t flags;
	int err = proc_read_stat_field(proc_root, pid, 9, &flags);

	if (err)
		return err;
	return (flags & EP_PF_KTHREAD) != 0;
}

enum proc_state proc_get_state(const char *proc_root, uint32_t pid)
{
	char buf[1024];
	ssize_t n = read_proc_file(proc_root, pid, "stat", buf, sizeof(buf));
	char st;

	if (n < 0)
		return n == -ENOENT || n == -ESRCH ? PROC_GONE : PROC_ALIVE;
	st = proc_parse_stat_state(buf, (size_t)n);
	if (st == 'Z' || st == 'X' || st == 'x')
		return PROC_ZOMBIE;
	return PROC_ALIVE;
}

int proc_parse_pid_list(const char *s, uint32_t *pids, size_t max)
{
	size_t n = 0;

	if (!s || !*s)
		return -EINVAL;
	while (*s) {
		unsigned long v = 0;
		const char *start = s;

		while (*s >= '0' && *s <= '9') {
			v = v * 10 + (unsigned long)(*s - '0');
			if (v > EP_PID_MAX)
				return -EINVAL;
			s++;
		}
		if (s == start || v == 0)
			return -EINVAL;
		if (*s == ',') {
			s++;
			if (!*s)
				return -EINVAL;
		} else if (*s) {
			return -EINVAL;
		}
		for (size_t i = 0; i < n; i++)
			if (pids[i] == v)
				return -EINVAL;
		if (n == max)
			return -EINVAL;
		pids[n++] = (uint32_t)v;
	}
	return (int)n;
}
