// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "python/py_fnspec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* A Python identifier in ASCII (non-ASCII names are rare in experiment
 * loops and not supported), or `<locals>`, the part CPython puts in the
 * qualified names of functions defined inside functions. */
static bool ident(const char *s, size_t n)
{
	if (n == 8 && !memcmp(s, "<locals>", 8))
		return true;
	if (!n || (*s >= '0' && *s <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

/* Dot-separated identifiers. */
static bool dotted_ok(const char *s, bool locals_ok)
{
	const char *p = s;

	for (;;) {
		const char *d = strchr(p, '.');
		size_t n = d ? (size_t)(d - p) : strlen(p);

		if (!ident(p, n) || (!locals_ok && n == 8 && !memcmp(p, "<locals>", 8)))
			return false;
		if (!d)
			return true;
		p = d + 1;
	}
}

int py_fnspec_parse(const char *s, struct py_fnspec *out, char *err, size_t errlen)
{
	const char *colon;
	size_t n = strlen(s);

	memset(out, 0, sizeof(*out));
	if (n >= PY_FNSPEC_MAX) {
		snprintf(err, errlen, "the name is longer than %d characters", PY_FNSPEC_MAX - 1);
		return -EINVAL;
	}
	memcpy(out->text, s, n + 1);
	colon = strchr(s, ':');
	if (colon) {
		size_t m = (size_t)(colon - s);

		memcpy(out->module, s, m);
		out->module[m] = '\0';
		snprintf(out->qual, sizeof(out->qual), "%s", colon + 1);
		if (!m || !dotted_ok(out->module, false) || !out->qual[0] ||
		    !dotted_ok(out->qual, true)) {
			snprintf(err, errlen,
				 "'%s' is not module:Class.method (dotted Python identifiers on "
				 "both sides)",
				 s);
			return -EINVAL;
		}
	} else {
		memcpy(out->qual, s, n + 1);
		if (!dotted_ok(out->qual, true)) {
			snprintf(err, errlen,
				 "'%s' is not a Python function name (func, Class.method, "
				 "module.func or module:Class.method)",
				 s);
			return -EINVAL;
		}
		out->dotted = strchr(s, '.') != NULL;
	}
	colon = strrchr(out->qual, '.');
	snprintf(out->last, sizeof(out->last), "%s", colon ? colon + 1 : out->qual);
	if (!strcmp(out->last, "<locals>")) {
		snprintf(err, errlen, "'%s' ends in <locals>, not in a function's name", s);
		return -EINVAL;
	}
	return 0;
}

static bool ends_with(const char *s, size_t sn, const char *t, size_t tn)
{
	return sn >= tn && !memcmp(s + sn - tn, t, tn);
}

bool py_module_is(const char *filename, const char *mod, size_t modlen)
{
	char path[PY_FNSPEC_MAX + 16];
	size_t fn = strlen(filename), k;

	if (!modlen || modlen >= PY_FNSPEC_MAX)
		return false;
	for (k = 0; k < modlen; k++)
		path[k] = mod[k] == '.' ? '/' : mod[k];
	/* The file without ".py" (or "/__init__.py"), then the module's path
	 * at its end, after a '/' or as the whole name. */
	if (ends_with(filename, fn, "/__init__.py", 12))
		fn -= 12;
	else if (ends_with(filename, fn, ".py", 3))
		fn -= 3;
	if (!ends_with(filename, fn, path, k))
		return false;
	return fn == k || filename[fn - k - 1] == '/';
}

bool py_fnspec_match(const struct py_fnspec *sp, const char *qual, const char *name,
		     const char *filename)
{
	const char *q = qual ? qual : name;
	size_t qn = strlen(q), sn = strlen(sp->qual);

	if (!sp->qual[0] || !q)
		return false;
	/* Before 3.11 a code object seen only in a sample has no qualified
	 * name: its name stands for it (a module-level function), so
	 * module.func and module:func match, Class.method does not. */
	if (sp->module[0]) {
		/* module:QUAL: that module, that qualified name. */
		return !strcmp(q, sp->qual) && filename &&
		       py_module_is(filename, sp->module, strlen(sp->module));
	}
	if (!sp->dotted) {
		/* A bare name: the function's own name, in any class or module. */
		const char *last = strrchr(q, '.');

		return !strcmp(last ? last + 1 : q, sp->qual);
	}
	/* Class.method: the qualified name, or its end after a '.'. */
	if (qual && ends_with(q, qn, sp->qual, sn) && (qn == sn || q[qn - sn - 1] == '.'))
		return true;
	/* module.func, pkg.mod.Class.method: a module part, then the whole
	 * qualified name (a name alone when the qualified one is unknown). */
	if (!filename || sn <= qn + 1 || strcmp(sp->qual + sn - qn, q) ||
	    sp->qual[sn - qn - 1] != '.')
		return false;
	return py_module_is(filename, sp->qual, sn - qn - 1);
}
