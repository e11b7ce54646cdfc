// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A C program embedding CPython (test_python_embed.sh): links libpython,
 * starts the interpreter and runs a Python file with the given arguments
 * from its own main(), as an application that embeds Python would.
 *
 * usage: py_embed FILE.py [ARGS...]   (sys.argv = [FILE.py, ARGS...])
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>

/* Not inlined into main: its frame sits between main and the
 * interpreter's in every sample. */
__attribute__((noinline)) static int run_file(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f) {
		perror(path);
		return 1;
	}
	/* Closes f. */
	return PyRun_SimpleFileExFlags(f, path, 1, NULL) ? 1 : 0;
}

int main(int argc, char **argv)
{
	PyConfig config;
	PyStatus st;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: py_embed FILE.py [ARGS...]\n");
		return 2;
	}
	PyConfig_InitPythonConfig(&config);
	/* sys.argv as for `python FILE.py ARGS...`, not parsed as the
	 * interpreter's own options. */
	config.parse_argv = 0;
	st = PyConfig_SetBytesArgv(&config, argc - 1, argv + 1);
	if (!PyStatus_Exception(st))
		st = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(st))
		Py_ExitStatusException(st);
	rc = run_file(argv[1]);
	if (Py_FinalizeEx() < 0)
		rc = 120;
	return rc;
}
