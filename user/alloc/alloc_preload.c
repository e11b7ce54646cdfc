// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "alloc/alloc_preload.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "events/alloc_preload.h"

static int usable(const char *path)
{
	return path[0] == '/' && !strpbrk(path, " :") && !access(path, R_OK);
}

int alloc_preload_find(const char *self_exe, char *out, size_t len)
{
	const char *env = getenv("EBPF_PROF_ALLOC_LIB");
	char dir[PATH_MAX], cand[PATH_MAX + 64];
	const char *slash;

	if (env && *env) {
		if (!usable(env) || strlen(env) >= len)
			return -ENOENT;
		snprintf(out, len, "%s", env);
		return 0;
	}
	if (!realpath(self_exe, dir))
		return -ENOENT;
	slash = strrchr(dir, '/');
	if (!slash)
		return -ENOENT;
	dir[slash - dir] = '\0';
	snprintf(cand, sizeof(cand), "%s/%s", dir, EP_PRELOAD_LIB);
	if (!usable(cand)) {
		snprintf(cand, sizeof(cand), "%s/../lib/ebpf-prof/%s", dir, EP_PRELOAD_LIB);
		if (!usable(cand) || !realpath(cand, dir))
			return -ENOENT;
		snprintf(cand, sizeof(cand), "%s", dir);
	}
	if (strlen(cand) >= len || strpbrk(cand, " :"))
		return -ENOENT;
	snprintf(out, len, "%s", cand);
	return 0;
}

/* cmd as execvp finds it: a path when it has a slash, else the first
 * executable file of that name in PATH. */
static int resolve_cmd(const char *cmd, char *out, size_t len)
{
	const char *path = getenv("PATH"), *p, *e;

	if (strchr(cmd, '/')) {
		snprintf(out, len, "%s", cmd);
		return 0;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ':');
		if (snprintf(out, len, "%.*s/%s", (int)(e - p), p, cmd) < (int)len &&
		    !access(out, X_OK))
			return 0;
	}
	return -ENOENT;
}

/* Whether the ELF file at fd has a program interpreter (is dynamic);
 * 1, 0, or -1 when it is not an ELF file this can read. */
static int has_interp(int fd)
{
	Elf64_Ehdr eh;
	Elf32_Ehdr eh32;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		return -1;
	if (eh.e_ident[EI_CLASS] == ELFCLASS64) {
		for (unsigned i = 0; i < eh.e_phnum && i < 256; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph),
				  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
			    (ssize_t)sizeof(ph))
				return -1;
			if (ph.p_type == PT_INTERP)
				return 1;
		}
		return 0;
	}
	memcpy(&eh32, &eh, sizeof(eh32));
	for (unsigned i = 0; i < eh32.e_phnum && i < 256; i++) {
		Elf32_Phdr ph;

		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh32.e_phoff + (uint64_t)i * eh32.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			return -1;
		if (ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}

const char *alloc_preload_refused(const char *cmd)
{
	char path[PATH_MAX];
	struct stat st;
	int fd, dyn;

	if (resolve_cmd(cmd, path, sizeof(path)) || stat(path, &st))
		return NULL;
	if (st.st_mode & (S_ISUID | S_ISGID))
		return "setuid";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	dyn = has_interp(fd);
	close(fd);
	return dyn == 0 ? "static" : NULL;
}

void alloc_preload_env_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

char **alloc_preload_env(char *const *env, const char *lib, uint32_t rate)
{
	static const char pre[] = "LD_PRELOAD=", rk[] = EP_PRELOAD_ENV_RATE "=";
	const char *old = NULL;
	size_t n = 0, k = 0;
	char **out;
	int len;

	if (strpbrk(lib, " :"))
		return NULL;
	while (env && env[n])
		n++;
	out = calloc(n + 3, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(env[i], pre, sizeof(pre) - 1)) {
			old = env[i] + sizeof(pre) - 1;
			continue;
		}
		if (!strncmp(env[i], rk, sizeof(rk) - 1))
			continue;
		out[k] = strdup(env[i]);
		if (!out[k++])
			goto fail;
	}
	/* First, so that its malloc is the one the program's calls find; the
	 * allocator preloaded by the user (jemalloc, tcmalloc) comes next and
	 * is the one it forwards to. */
	len = asprintf(&out[k], "%s%s%s%s", pre, lib, old && *old ? " " : "", old ? old : "");
	if (len < 0) {
		out[k] = NULL;
		goto fail;
	}
	k++;
	if (asprintf(&out[k], "%s%u", rk, rate) < 0) {
		out[k] = NULL;
		goto fail;
	}
	return out;
fail:
	alloc_preload_env_free(out);
	return NULL;
}
