// ep-target-libs: -shared -fPIC -Wl,-soname,libep-absent-for-test.so.0
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Only linked against: dlopen_missing_dep_lib records its SONAME, which no
 * library search path holds, so dlopen of that library fails after ld.so
 * mapped it (as an optional native module with a missing dependency). */
int absent_work(int x);

int absent_work(int x)
{
	return x + 1;
}
