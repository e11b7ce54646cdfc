/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding a module's separate debuginfo for libdwfl, as the profiled
 * program that mapped the module: every candidate is opened through
 * target_open.h with its credentials (a debug file beside its binary is in
 * a directory it may control), and a candidate must carry the module's
 * build-id (or, without one, the CRC its .gnu_debuglink names).
 *
 * A dwz alternate file (.gnu_debugaltlink: a path and a build-id written
 * in the debug file) is not left to libdw, which would open that path
 * itself as root with a plain open(): a caller about to read DIEs sets it
 * with debuginfo_set_alt, and reads none when that fails. libdwfl's own
 * lookup of it through the callback finds nothing (the candidates carry
 * another build-id than the module's).
 *
 * Without libdebuginfod: dwfl_standard_find_debuginfo's last resort, for a
 * module with a build-id and no local debuginfo, loads libdebuginfod in
 * libdw 0.188 (with curl, gnutls, libcrypto: ~7 MB of resident memory and
 * ~5 ms of CPU, measured) even when DEBUGINFOD_URLS is unset, only to find
 * that no server is configured. With DEBUGINFOD_URLS set, a module with a
 * build-id not found locally is asked for by build-id alone.
 */
#ifndef EBPF_PROF_DEBUGINFO_H
#define EBPF_PROF_DEBUGINFO_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>

#include "proc/target_open.h"

/* Where and on whose behalf debug files of one module are looked for. */
struct debuginfo_ctx {
	const char *path;	      /* debuginfo path, ':'-separated (NULL: /usr/lib/debug) */
	const struct target_ref *who; /* whose permissions; NULL: ours */
	const char *module;	      /* the module's path as the program sees it; NULL:
				       * the file name libdwfl gives, in our root */
	/* Set by the lookups: */
	char *found; /* the debug file found, and how to resolve beside it */
	unsigned found_flags;
	Dwarf *alt; /* debuginfo_set_alt's */
	int alt_fd;
};

/* Zeroes the results (alt_fd -1). */
void debuginfo_ctx_init(struct debuginfo_ctx *c, const char *path, const struct target_ref *who,
			const char *module);
/* Frees them: after the Dwfl whose module used them is ended. */
void debuginfo_ctx_clear(struct debuginfo_ctx *c);

/* The find_debuginfo callback's work (libdwfl's arguments), for c. */
int debuginfo_find(struct debuginfo_ctx *c, Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		   GElf_Word debuglink_crc, char **debuginfo_file_name);

/* For dw (the module's DWARF, from the debug file c found or from the
 * module itself): when it names an alternate file, finds it (by its
 * build-id under the debuginfo path, then by its name, beside the file
 * that names it) and sets it. 0: dw names none or it is set; -ENOENT
 * (not found) or -errno: libdw would look for it itself, so dw's DIEs
 * must not be read. */
int debuginfo_set_alt(struct debuginfo_ctx *c, Dwarf *dw);

#endif
