// ep-target-libs: -shared -fPIC @EP_TARGETS_DIR@/dlopen_late_lib
// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A library that brings dlopen_late_lib as its DT_NEEDED, as a Node addon
 * brings libllama: ld.so maps the dependency after the library itself. */
int late_work(int x);
int wrap_work(int x);

int wrap_work(int x)
{
	return late_work(x);
}
