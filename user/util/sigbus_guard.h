/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A profiled program can truncate a file it mapped while libdwfl (which
 * maps the files it reads, and has no read-only mode we could choose for
 * debug files) holds a mapping of it: touching a page past the new end
 * raises SIGBUS, which would end the root profiler and lose the run. The
 * guard turns such a fault into a page of zeros, which the ELF and DWARF
 * readers take as a corrupt file: the frames of that object stay
 * unnamed, nothing else is lost.
 */
#ifndef EBPF_PROF_UTIL_SIGBUS_GUARD_H
#define EBPF_PROF_UTIL_SIGBUS_GUARD_H

/* Installs the process-wide SIGBUS handler (once, from the CLI entry
 * point). Only a fault on a mapping past its file's end (BUS_ADRERR) is
 * repaired; any other SIGBUS keeps its default action. 0 or -errno. */
int sigbus_guard_install(void);

#endif
