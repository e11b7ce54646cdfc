/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Facts about a process read from /proc: name, command line, liveness. The
 * traced process controls these files' contents, so every reader bounds its
 * input and accepts garbage without crashing.
 */
#ifndef EBPF_PROF_PROC_INFO_H
#define EBPF_PROF_PROC_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest command line we keep; longer ones are cut with "...". */
#define PROC_CMDLINE_MAX 4096

enum proc_state { PROC_ALIVE, PROC_ZOMBIE, PROC_GONE };

/* proc_root is "/proc" except in tests. */
int proc_read_comm(const char *proc_root, uint32_t pid, char *buf, size_t len);
/* *out is malloc'ed: arguments joined by spaces, non-printable bytes as '?'. */
int proc_read_cmdline(const char *proc_root, uint32_t pid, char **out);
/* Parses the state letter of /proc/PID/stat (the comm field may contain
 * spaces and parentheses, so the state follows the LAST ')'). */
enum proc_state proc_get_state(const char *proc_root, uint32_t pid);
/* Pure parser behind proc_get_state, for tests: returns the state letter or
 * 0 when the line is malformed. */
char proc_parse_stat_state(const char *stat_line, size_t len);

/* The process (thread group) of a thread id: /proc/TID/status "Tgid:".
 * Returns 0 or -errno (-ENOENT gone, -EINVAL no Tgid line). */
int proc_read_tgid(const char *proc_root, uint32_t tid, uint32_t *tgid);
/* Pure parser behind it, for tests and fuzzing: buf need not end in NUL. */
int proc_parse_status_tgid(const char *buf, size_t len, uint32_t *tgid);
/* Field n (1-based, as in proc(5): 26 = startcode) of a /proc/PID/stat
 * line, a number after the LAST ')'. Returns 0, or -EINVAL when the line
 * is malformed or the field is missing or not a number. */
int proc_parse_stat_field(const char *stat_line, size_t len, unsigned n, uint64_t *out);
/* Field n of /proc/PID/stat: 0 or a negative errno (-ENOENT: gone). */
int proc_read_stat_field(const char *proc_root, uint32_t pid, unsigned n, uint64_t *out);

/* The run time of a thread (ns, the first number of /proc/PID/task/TID/
 * schedstat: its se.sum_exec_runtime). Pure parser: buf need not end in
 * NUL; 0 or -EINVAL. A kernel without CONFIG_SCHED_INFO prints zeros. */
int proc_parse_schedstat_runtime(const char *buf, size_t len, uint64_t *ns);
/* Reads it for tid of pid: 0 or a negative errno (-ENOENT: gone). */
int proc_read_thread_runtime(const char *proc_root, uint32_t pid, uint32_t tid, uint64_t *ns);

/* 1 when PID is a kernel thread (PF_KTHREAD in field 9 of /proc/PID/stat),
 * 0 when it is not, -errno when stat cannot be read or parsed. */
int proc_is_kernel_thread(const char *proc_root, uint32_t pid);

/* Strict pid list parser for "--pid 12,34": decimal, 1..INT32_MAX, no
 * duplicates, at most max entries. Returns count or -EINVAL. */
int proc_parse_pid_list(const char *s, uint32_t *pids, size_t max);

#endif
