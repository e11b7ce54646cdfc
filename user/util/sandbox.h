/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Dropping root in a helper process that handles outside input (the
 * metrics endpoint's HTTP parser): another user id, no capabilities, no
 * way to gain privileges again, and a system call allowlist.
 *
 * Capabilities are per thread in Linux, but the set*id calls of glibc
 * change every thread of a process, and a thread that dropped its
 * capabilities still shares the address space of one that did not: only a
 * separate process is a boundary. These calls are meant for a process
 * forked for that purpose, before it reads any outside byte.
 */
#ifndef EP_UTIL_SANDBOX_H
#define EP_UTIL_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The unprivileged ids for a helper: SUDO_UID/SUDO_GID when they name a
 * user other than root (the person who ran sudo), else "nobody" (65534
 * when the name is not found). Called before forking: NSS lookups are not
 * for a forked child of a threaded process. */
void sandbox_pick_ids(uid_t *uid, gid_t *gid);

/* Moves the fds in keep[] (n of them) to 3, 4, ... in that order (keep[]
 * is updated), points 0 and 1 at /dev/null, leaves 2 as it is and closes
 * every other descriptor. Returns 0 or -errno. */
int sandbox_close_fds(int *keep, size_t n);

/* Becomes uid/gid with no supplementary groups when running as root, then
 * drops every capability (effective, permitted, inheritable, ambient and,
 * while allowed, the bounding set), sets no_new_privs and makes the
 * process non-dumpable (not ptrace-able by processes of that uid).
 * Verifies the result. Returns 0 or -errno with the step in why. */
int sandbox_drop_privileges(uid_t uid, gid_t gid, char *why, size_t whylen);

/* Installs a seccomp filter allowing the system calls in allowed[] (n
 * numbers, of this architecture) and refusing any other with SIGSYS, whose
 * handler writes the number to stderr and ends the process with status
 * 159 (128 + SIGSYS). Needs no_new_privs. Returns 0, -ENOSYS when the
 * kernel has no seccomp filters (the caller goes on without), or -errno. */
int sandbox_seccomp(const int *allowed, size_t n);

#endif
