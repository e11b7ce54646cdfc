// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * py:NAME as people write it (python/py_fnspec.h): parsing, bad input, and
 * which code objects each form matches, with a qualified name (3.11+, or
 * known from the class body before) and without (a code object met alone
 * before 3.11).
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "python/py_fnspec.h"

static bool m(const char *spec, const char *qual, const char *name, const char *file)
{
	struct py_fnspec sp;
	char err[256];

	if (py_fnspec_parse(spec, &sp, err, sizeof(err)))
		return false;
	return py_fnspec_match(&sp, qual, name, file);
}

static void test_parse(void)
{
	struct py_fnspec sp;
	char err[256], longname[300];
	static const char *const bad[] = {
		"",	 "1abc",    "a-b",    "a b",	    "Cls.",	".run",		"a..b",
		":run",	 "mod:",    "a:b:c",  "f.<locals>", "<locals>", "m.<locals>:f", "\xff\xfe",
		"run()", "a/b.run", "mod:1x",
	};

	CHECK_INT_EQ(py_fnspec_parse("run", &sp, err, sizeof(err)), 0);
	CHECK(!sp.dotted && !sp.module[0]);
	CHECK_STR_EQ(sp.last, "run");
	CHECK_INT_EQ(py_fnspec_parse("StandIn.run", &sp, err, sizeof(err)), 0);
	CHECK(sp.dotted);
	CHECK_STR_EQ(sp.last, "run");
	CHECK_INT_EQ(py_fnspec_parse("pkg.mod:Outer.Inner.go", &sp, err, sizeof(err)), 0);
	CHECK(!sp.dotted);
	CHECK_STR_EQ(sp.module, "pkg.mod");
	CHECK_STR_EQ(sp.qual, "Outer.Inner.go");
	CHECK_STR_EQ(sp.last, "go");
	CHECK_INT_EQ(py_fnspec_parse("main.<locals>.step", &sp, err, sizeof(err)), 0);
	CHECK_STR_EQ(sp.last, "step");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		CHECK_INT_EQ(py_fnspec_parse(bad[i], &sp, err, sizeof(err)), -EINVAL);
		CHECK(err[0] != '\0');
	}
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK_INT_EQ(py_fnspec_parse(longname, &sp, err, sizeof(err)), -EINVAL);
	CHECK(strstr(err, "longer") != NULL);
}

static void test_match(void)
{
	const char *f = "/home/u/exp/experiment.py";

	/* A bare name: any class, any module. */
	CHECK(m("run", "StandIn.run", "run", f));
	CHECK(m("run", "DB.run", "run", f));
	CHECK(m("run", NULL, "run", f));
	CHECK(!m("run", "StandIn.runner", "runner", f));
	CHECK(!m("run", "rerun", "rerun", f));
	/* Class.method: that class only; its end in a longer name. */
	CHECK(m("StandIn.run", "StandIn.run", "run", f));
	CHECK(!m("StandIn.run", "DB.run", "run", f));
	CHECK(!m("StandIn.run", "XStandIn.run", "run", f));
	CHECK(m("StandIn.run", "main.<locals>.StandIn.run", "run", f));
	CHECK(m("Inner.go", "Outer.Inner.go", "go", f));
	/* Unknown qualified name (before 3.11, met alone): not this class. */
	CHECK(!m("StandIn.run", NULL, "run", f));
	/* module.func and module.Class.method. */
	CHECK(m("experiment.main", "main", "main", f));
	CHECK(m("experiment.main", NULL, "main", f));
	CHECK(m("experiment.StandIn.run", "StandIn.run", "run", f));
	CHECK(!m("experiment.StandIn.run", "DB.run", "run", f));
	CHECK(!m("other.main", "main", "main", f));
	CHECK(m("exp.experiment.main", "main", "main", f));
	CHECK(!m("xp.experiment.main", "main", "main", f));
	/* module:Class.method: exact qualified name in that module. */
	CHECK(m("experiment:StandIn.run", "StandIn.run", "run", f));
	CHECK(!m("experiment:run", "StandIn.run", "run", f));
	CHECK(!m("experiment:StandIn.run", NULL, "run", f));
	CHECK(m("experiment:main", NULL, "main", f));
	CHECK(!m("other:StandIn.run", "StandIn.run", "run", f));
	CHECK(m("pkg.db:DB.run", "DB.run", "run", "/x/pkg/db.py"));
	CHECK(m("pkg:init_fn", "init_fn", "init_fn", "/x/pkg/__init__.py"));
	CHECK(!m("kg.db:DB.run", "DB.run", "run", "/x/pkg/db.py"));
	CHECK(m("experiment:main", "main", "main", "experiment.py"));
	CHECK(!m("experiment:main", "main", "main", ""));
	CHECK(!m("experiment:main", "main", "main", NULL));
}

static void test_module(void)
{
	CHECK(py_module_is("/a/b/mod.py", "mod", 3));
	CHECK(py_module_is("/a/b/mod.py", "b.mod", 5));
	CHECK(!py_module_is("/a/b/mod.py", "od", 2));
	CHECK(py_module_is("<frozen runpy>", "<frozen runpy>", 14));
	CHECK(!py_module_is("/a/b/mod.py", "", 0));
	CHECK(py_module_is("/a/pkg/__init__.py", "pkg", 3));
	CHECK(!py_module_is("/a/pkg/__init__.py", "__init__", 8));
}

int main(void)
{
	test_parse();
	test_match();
	test_module();
	return check_report("test_py_fnspec");
}
