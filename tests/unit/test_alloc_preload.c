// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Launch mode's preloaded allocation sampler, the collector's side
 * (alloc/alloc_preload.h): the environment given to the command (our
 * library first in LD_PRELOAD, the user's after it, the rate replaced, a
 * path LD_PRELOAD cannot carry refused), the commands it cannot reach
 * (setuid, static), and bad input: files that are not ELF, truncated or
 * with a program header table past their end are not refused (each
 * process is then seen as it runs). */
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc/alloc_preload.h"
#include "check.h"

static const char *find(char **env, const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], key, n) && env[i][n] == '=')
			return env[i] + n + 1;
	return NULL;
}

static size_t count(char **env)
{
	size_t n = 0;

	while (env[n])
		n++;
	return n;
}

static void test_env(void)
{
	char *in1[] = { "PATH=/bin", "HOME=/root", NULL };
	char *in2[] = { "LD_PRELOAD=/usr/lib/libjemalloc.so.2", "EBPF_PROF_ALLOC_RATE=1", "X=1",
			NULL };
	char **e;

	e = alloc_preload_env(in1, "/opt/ep/lib/libebpf-prof-alloc.so", 524288);
	CHECK(e != NULL);
	if (e) {
		CHECK_STR_EQ(find(e, "LD_PRELOAD"), "/opt/ep/lib/libebpf-prof-alloc.so");
		CHECK_STR_EQ(find(e, "EBPF_PROF_ALLOC_RATE"), "524288");
		CHECK_STR_EQ(find(e, "PATH"), "/bin");
		CHECK_INT_EQ(count(e), 4);
		alloc_preload_env_free(e);
	}
	/* The user's preload after ours; an inherited rate replaced. */
	e = alloc_preload_env(in2, "/l/libebpf-prof-alloc.so", 65536);
	CHECK(e != NULL);
	if (e) {
		CHECK_STR_EQ(find(e, "LD_PRELOAD"),
			     "/l/libebpf-prof-alloc.so /usr/lib/libjemalloc.so.2");
		CHECK_STR_EQ(find(e, "EBPF_PROF_ALLOC_RATE"), "65536");
		CHECK_INT_EQ(count(e), 3);
		alloc_preload_env_free(e);
	}
	/* LD_PRELOAD separates by spaces and colons. */
	CHECK(alloc_preload_env(in1, "/my dir/libebpf-prof-alloc.so", 1) == NULL);
	CHECK(alloc_preload_env(in1, "/a:b/libebpf-prof-alloc.so", 1) == NULL);
	/* An empty environment. */
	e = alloc_preload_env(NULL, "/l/libebpf-prof-alloc.so", 7);
	CHECK(e != NULL && count(e) == 2);
	alloc_preload_env_free(e);
}

static void write_file(const char *path, const void *data, size_t n, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0700);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, data, n) == (ssize_t)n);
	close(fd);
	CHECK(chmod(path, mode) == 0);
}

/* A minimal ELF64 executable image: a header and nph program headers of
 * the given types, or a table said to be past the end. */
static size_t make_elf(unsigned char *buf, const uint32_t *types, unsigned nph, bool past_end)
{
	Elf64_Ehdr eh = { 0 };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_EXEC;
	eh.e_phoff = past_end ? 1u << 20 : sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = (Elf64_Half)nph;
	memcpy(buf, &eh, sizeof(eh));
	for (unsigned i = 0; i < nph; i++) {
		Elf64_Phdr ph = { .p_type = types[i] };

		memcpy(buf + sizeof(eh) + i * sizeof(ph), &ph, sizeof(ph));
	}
	return sizeof(eh) + nph * sizeof(Elf64_Phdr);
}

static void test_refused(void)
{
	char dir[] = "/tmp/ep-unit-preload.XXXXXX", p[256];
	unsigned char buf[1024];
	const uint32_t dyn[] = { PT_PHDR, PT_INTERP, PT_LOAD }, stat_[] = { PT_LOAD, PT_NOTE };
	size_t n;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/dyn", dir);
	n = make_elf(buf, dyn, 3, false);
	write_file(p, buf, n, 0755);
	CHECK(alloc_preload_refused(p) == NULL);
	write_file(p, buf, n, 04755);
	CHECK_STR_EQ(alloc_preload_refused(p), "setuid");
	write_file(p, buf, n, 02755);
	CHECK_STR_EQ(alloc_preload_refused(p), "setuid");
	snprintf(p, sizeof(p), "%s/static", dir);
	n = make_elf(buf, stat_, 2, false);
	write_file(p, buf, n, 0755);
	CHECK_STR_EQ(alloc_preload_refused(p), "static");
	/* Bad input: not refused (seen as it runs). */
	snprintf(p, sizeof(p), "%s/script", dir);
	write_file(p, "#!/bin/sh\necho hi\n", 18, 0755);
	CHECK(alloc_preload_refused(p) == NULL);
	snprintf(p, sizeof(p), "%s/trunc", dir);
	n = make_elf(buf, dyn, 3, false);
	write_file(p, buf, sizeof(Elf64_Ehdr) + 10, 0755);
	CHECK(alloc_preload_refused(p) == NULL);
	snprintf(p, sizeof(p), "%s/past", dir);
	n = make_elf(buf, dyn, 3, true);
	write_file(p, buf, n, 0755);
	CHECK(alloc_preload_refused(p) == NULL);
	snprintf(p, sizeof(p), "%s/empty", dir);
	write_file(p, "", 0, 0755);
	CHECK(alloc_preload_refused(p) == NULL);
	CHECK(alloc_preload_refused("/nonexistent/ep-no-such-command") == NULL);
	CHECK(alloc_preload_refused("ep-no-such-command-in-path") == NULL);
	/* A real dynamic program, found in PATH as execvp does. */
	CHECK(alloc_preload_refused("sh") == NULL);
	{
		const char *names[] = { "dyn", "static", "script", "trunc", "past", "empty" };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			unlink(p);
		}
	}
	rmdir(dir);
}

static void test_find(void)
{
	char out[4096];

	setenv("EBPF_PROF_ALLOC_LIB", "/nonexistent/libebpf-prof-alloc.so", 1);
	CHECK(alloc_preload_find("/proc/self/exe", out, sizeof(out)) < 0);
	setenv("EBPF_PROF_ALLOC_LIB", "relative/libebpf-prof-alloc.so", 1);
	CHECK(alloc_preload_find("/proc/self/exe", out, sizeof(out)) < 0);
	setenv("EBPF_PROF_ALLOC_LIB", "/bin/sh", 1);
	CHECK(alloc_preload_find("/proc/self/exe", out, sizeof(out)) == 0 &&
	      !strcmp(out, "/bin/sh"));
	CHECK(alloc_preload_find("/proc/self/exe", out, 4) < 0);
	unsetenv("EBPF_PROF_ALLOC_LIB");
	/* Beside an executable that has none. */
	CHECK(alloc_preload_find("/nonexistent/bin/ebpf-prof", out, sizeof(out)) < 0);
}

int main(void)
{
	test_env();
	test_refused();
	test_find();
	return check_report("test_alloc_preload");
}
