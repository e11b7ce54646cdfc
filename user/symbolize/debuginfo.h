/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding a module's separate debuginfo for libdwfl without libdebuginfod.
 * dwfl_standard_find_debuginfo's last resort, for a module with a build-id
 * and no local debuginfo, loads libdebuginfod in libdw 0.188 (with curl,
 * gnutls, libcrypto: ~7 MB of resident memory and ~5 ms of CPU, measured)
 * even when DEBUGINFOD_URLS is unset, only to find that no server is
 * configured. Without DEBUGINFOD_URLS, debuginfo_find looks where the
 * standard search looks locally; with it, it is the standard search.
 */
#ifndef EBPF_PROF_DEBUGINFO_H
#define EBPF_PROF_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/* The find_debuginfo callback's work, with path the debuginfo path
 * (':'-separated as libdwfl's; NULL: /usr/lib/debug). */
int debuginfo_find(const char *path, Dwfl_Module *mod, void **userdata, const char *modname,
		   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
		   GElf_Word debuglink_crc, char **debuginfo_file_name);

/* A Dwfl_Callbacks.find_debuginfo: debuginfo_find with the default path. */
int debuginfo_find_default(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			   const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
