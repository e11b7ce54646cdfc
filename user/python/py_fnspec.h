/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A Python function as people write it (docs/cycles.md, "py:NAME"): the
 * names Python prints. `func` (any function of that name), `Class.method`
 * (the qualified name, or its end: `Outer.Class.method`,
 * `f.<locals>.inner`), `module.func` and `module:Class.method` (the module
 * is the file the code comes from: `pkg.mod` is .../pkg/mod.py or
 * .../pkg/mod/__init__.py). Pure parsing and matching.
 */
#ifndef EP_PY_FNSPEC_H
#define EP_PY_FNSPEC_H

#include <stdbool.h>
#include <stddef.h>

#define PY_FNSPEC_MAX 256 /* longest NAME, NUL included */

struct py_fnspec {
	char text[PY_FNSPEC_MAX];   /* as given */
	char module[PY_FNSPEC_MAX]; /* "" or the module of module:QUAL */
	char qual[PY_FNSPEC_MAX];   /* QUAL, or the whole dotted name */
	char last[PY_FNSPEC_MAX];   /* the function's own name: qual's last part */
	bool dotted;		    /* qual has a '.' and no module was given */
};

/* Parses NAME (without "py:"). 0, or -EINVAL with the reason in err. */
int py_fnspec_parse(const char *s, struct py_fnspec *out, char *err, size_t errlen);

/* Does a code object match? qual: its qualified name (co_qualname, or
 * what its place among its module's constants says before 3.11), NULL
 * when unknown; name: its co_name; filename: its co_filename. */
bool py_fnspec_match(const struct py_fnspec *sp, const char *qual, const char *name,
		     const char *filename);

/* Is file the module mod ("pkg.mod": .../pkg/mod.py, .../pkg/mod/__init__.py,
 * and without ".py" for frozen or odd loaders' names)? */
bool py_module_is(const char *filename, const char *mod, size_t modlen);

#endif
