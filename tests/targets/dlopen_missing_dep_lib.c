// ep-target-libs: -shared -fPIC @EP_TARGETS_DIR@/dlopen_absent_lib
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A library whose DT_NEEDED (libep-absent-for-test.so.0) cannot be found:
 * its dlopen fails after mapping it (dlopen_late --first). */
int absent_work(int x);
int missing_dep_work(int x);

int missing_dep_work(int x)
{
	return absent_work(x);
}
