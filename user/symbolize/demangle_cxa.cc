// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one C++ file: abi::__cxa_demangle, libstdc++'s C++ demangler (the
 * same code as binutils' c++filt and libiberty's cplus_demangle, with its
 * recursion limit against hostile names), behind a C entry point. A shim
 * rather than libiberty: libstdc++ is on every machine that has g++, while
 * libiberty-dev would be one more build dependency for the same code.
 */
#include <cxxabi.h>
#include <stdlib.h>

extern "C" char *ep_cxa_demangle(const char *mangled) noexcept;

extern "C" char *ep_cxa_demangle(const char *mangled) noexcept
{
	int status = 0;

	try {
		char *r = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);

		if (status != 0) {
			free(r);
			return nullptr;
		}
		return r;
	} catch (...) {
		return nullptr;
	}
}
