/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Launch mode's in-process allocation sampling (docs/alloc.md, "Two
 * mechanisms"): whether the command can run with the preloaded library
 * (preload/ep_alloc_preload.c), where that library is, and the environment
 * that loads and configures it.
 */
#ifndef EP_ALLOC_PRELOAD_USER_H
#define EP_ALLOC_PRELOAD_USER_H

#include <stddef.h>
#include <stdint.h>

/* Looks for the library: $EBPF_PROF_ALLOC_LIB, else beside the executable
 * (the build directory), else ../lib/ebpf-prof/ from it (installed). Its
 * absolute path into out. 0, or -ENOENT. */
int alloc_preload_find(const char *self_exe, char *out, size_t len);

/* Why the command cmd (argv[0], looked up in PATH as execvp does) cannot
 * have the library loaded: "setuid", "static" (no program interpreter),
 * or NULL when it can (or cannot be read: then each process is seen as it
 * runs). */
const char *alloc_preload_refused(const char *cmd);

/* The environment for the command: env (NULL-terminated) with lib put
 * first in LD_PRELOAD and the sampling rate set. A new array whose strings
 * it owns (alloc_preload_env_free); NULL: out of memory or a path that
 * LD_PRELOAD cannot carry (a space or a colon). */
char **alloc_preload_env(char *const *env, const char *lib, uint32_t rate);
void alloc_preload_env_free(char **env);

#endif
