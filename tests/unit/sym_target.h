/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Driving the symbolizer test targets of tests/elf (symtarget, symexec):
 * they print "name 0xADDR [0xB]" lines and "ok", then answer commands read
 * from stdin, each reply ending with "ok". Shared by test_symbolize*.c. */
#ifndef EP_SYM_TARGET_H
#define EP_SYM_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "symbolize/symbolize.h"

#define MAX_VALS 16

struct target {
	pid_t pid;
	FILE *in, *out;
	char names[MAX_VALS][64];
	uint64_t vals[MAX_VALS][2];
	int n;
};

static inline const char *elf_dir(char *buf, size_t cap)
{
	const char *b = getenv("EP_BUILD_DIR");

	snprintf(buf, cap, "%s/tests/elf", b ? b : ".");
	return buf;
}

/* Reads reply lines "word 0xA [0xB]" until "ok". Returns 0 or -1. */
static inline int read_reply(struct target *t)
{
	char line[512];

	t->n = 0;
	while (fgets(line, sizeof(line), t->out)) {
		char w[64];
		unsigned long long a = 0, b = 0;
		int k;

		if (strcmp(line, "ok\n") == 0)
			return 0;
		k = sscanf(line, "%63s %llx %llx", w, &a, &b);
		if (k < 1 || t->n >= MAX_VALS) {
			fprintf(stderr, "target: %s", line);
			continue;
		}
		if (strcmp(w, "err") == 0)
			fprintf(stderr, "target: %s", line);
		snprintf(t->names[t->n], sizeof(t->names[0]), "%s", w);
		t->vals[t->n][0] = a;
		t->vals[t->n][1] = b;
		t->n++;
	}
	return -1;
}

static inline uint64_t val(const struct target *t, const char *name, int idx)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->names[i], name) == 0)
			return t->vals[i][idx];
	fprintf(stderr, "no value %s from target\n", name);
	return 0;
}

static inline int start_target(struct target *t, const char *exe)
{
	int to[2], from[2];

	memset(t, 0, sizeof(*t));
	if (pipe(to) < 0 || pipe(from) < 0)
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[0]);
		close(to[1]);
		close(from[0]);
		close(from[1]);
		execl(exe, exe, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	t->in = fdopen(to[1], "w");
	t->out = fdopen(from[0], "r");
	if (!t->in || !t->out)
		return -1;
	setvbuf(t->in, NULL, _IOLBF, 0);
	return read_reply(t);
}

static inline int command(struct target *t, const char *fmt, const char *arg)
{
	fprintf(t->in, fmt, arg);
	fputc('\n', t->in);
	fflush(t->in);
	return read_reply(t);
}

static inline void stop_target(struct target *t)
{
	int st;

	if (t->in) {
		fprintf(t->in, "quit\n");
		fclose(t->in);
	}
	if (t->out)
		fclose(t->out);
	if (t->pid > 0 && waitpid(t->pid, &st, 0) < 0)
		kill(t->pid, SIGKILL);
	/* Safe to call again. */
	t->in = t->out = NULL;
	t->pid = 0;
}

static inline int run(const char *cmd)
{
	int r = system(cmd);

	if (r != 0)
		fprintf(stderr, "command failed (%d): %s\n", r, cmd);
	return r;
}

/* Build-id of an ELF file via readelf -n, as lowercase hex. */
static inline int build_id(const char *path, char *out, size_t cap)
{
	char cmd[2048], line[512];
	FILE *p;
	int found = -1;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", path);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *s = strstr(line, "Build ID: ");

		if (s && sscanf(s + 10, "%127s", out) == 1 && strlen(out) < cap && strlen(out) > 2)
			found = 0;
	}
	pclose(p);
	return found;
}

static inline void sym(struct symbolizer *s, pid_t pid, uint64_t addr, struct sym_result *r)
{
	memset(r, 0, sizeof(*r));
	CHECK_INT_EQ(symbolizer_user(s, (uint32_t)pid, addr, r), 0);
	if (!r->name)
		r->name = "(null)";
}

static inline void check_name(struct symbolizer *s, pid_t pid, uint64_t addr, const char *want)
{
	struct sym_result r;

	sym(s, pid, addr, &r);
	CHECK_STR_EQ(r.name, want);
	CHECK(r.resolved);
}

static inline bool starts_with(const char *s, const char *p)
{
	return s && strncmp(s, p, strlen(p)) == 0;
}

/* File offset of addr in pid, from a plain reading of /proc/PID/maps (kept
 * independent from the parser under test). */
static inline uint64_t file_offset(pid_t pid, uint64_t addr)
{
	char path[64], line[1024];
	FILE *f;
	uint64_t r = UINT64_MAX;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return r;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;

		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 && addr >= lo &&
		    addr < hi)
			r = addr - lo + off;
	}
	fclose(f);
	return r;
}

#endif
