/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Readable names for mangled symbols: C++ (Itanium ABI, "_Z...") through
 * libstdc++'s abi::__cxa_demangle (demangle_cxa.cc), and Rust's legacy
 * scheme (also "_ZN...E", plus a "::h<16 hex>" hash and "$LT$"-style
 * escapes, tidied here). Rust v0 ("_R...") names are left as they are.
 * Symbol names come from the profiled program's files: every entry point
 * takes hostile input.
 */
#ifndef EBPF_PROF_DEMANGLE_H
#define EBPF_PROF_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest name handed to the demangler; longer ones stay mangled (real
 * names are at most a few KiB; the demangler's time grows with the input). */
#define DEMANGLE_MAX_IN 8192

/* True if name looks mangled (worth a demangle call). */
bool demangle_candidate(const char *name);

/* The demangled form of name (malloc'ed, caller frees), or NULL if name is
 * not mangled, invalid, longer than DEMANGLE_MAX_IN, or memory ran out.
 * A symbol version suffix ("@@GLIBCXX_3.4", "@plt") is kept after the
 * demangled name. */
char *demangle(const char *name);

/* For screens, never files: name with template argument lists collapsed to
 * "<...>" (outermost first) until it fits max_len characters, written to
 * buf (cap bytes, NUL-terminated). Names that fit are copied unchanged;
 * what still does not fit is cut with "..." at the end. Returns buf. */
const char *demangle_shorten(const char *name, size_t max_len, char *buf, size_t cap);

#endif
