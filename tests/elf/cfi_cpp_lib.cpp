// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libcfitest.so: C++ code whose CFI exercises every rule the unwind-table
 * compiler knows (tests/unit/test_cfi_table.c compares its table with
 * readelf): frameless functions (-fomit-frame-pointer), an alloca frame
 * (CFA from rbp), a 64 KiB frame, gcc's stack realignment for 32-byte
 * aligned AVX locals (CFA = *(rbp - N)), exceptions (LSDA, personality),
 * templates and virtual calls, PLT calls into libstdc++ and libc. */
#include <alloca.h>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <immintrin.h>

namespace cfitest
{
struct shape {
	virtual ~shape() = default;
	virtual double area(int k) const = 0;
};

struct square : shape {
	double side;
	explicit square(double s) : side(s)
	{
	}
	__attribute__((noinline)) double area(int k) const override
	{
		return side * side * k;
	}
};

template <typename T> __attribute__((noinline)) T accumulate(const std::vector<T> &v, int k)
{
	T sum = T();
	for (const T &x : v)
		sum += x * k;
	return sum;
}

__attribute__((noinline)) int with_alloca(int n)
{
	char *p = static_cast<char *>(alloca(static_cast<size_t>(n) + 16));
	memset(p, n, static_cast<size_t>(n) + 16);
	__asm__ volatile("" ::"r"(p) : "memory");
	return p[n / 2] + static_cast<int>(strlen(p) & 1);
}

__attribute__((noinline)) int big_frame(int n)
{
	volatile char buf[65536];
	buf[n & 0xffff] = static_cast<char>(n);
	return buf[(n * 7) & 0xffff] + with_alloca(n & 63);
}

/* An over-aligned local and alloca: gcc realigns the stack through a DRAP
 * register and describes the CFA as *(rbp - N), as in ggml's kernels. */
__attribute__((noinline, target("avx2"))) float realigned(const float *in, int n)
{
	alignas(32) float tmp[64];
	float *dyn = static_cast<float *>(alloca(static_cast<size_t>(n & 63) * sizeof(float) + 16));
	__m256 acc = _mm256_setzero_ps();
	for (int i = 0; i + 8 <= n && i < 64; i += 8) {
		__m256 v = _mm256_loadu_ps(in + i);
		acc = _mm256_add_ps(acc, v);
		_mm256_store_ps(tmp + i, v);
	}
	_mm256_store_ps(tmp, acc);
	__asm__ volatile("" ::"r"(tmp), "r"(dyn) : "memory");
	return tmp[0] + tmp[7] + dyn[0] + static_cast<float>(big_frame(n));
}

__attribute__((noinline)) int thrower(int n)
{
	if (n > 3)
		throw std::runtime_error("cfitest: " + std::to_string(n));
	return n;
}

/* A chain of every kind of frame above, ending in a callback:
 * test_cfi_walk.c walks it back with the tables and compares with glibc's
 * backtrace(). Each call's result is used after it so none is a tail call. */
typedef void (*walk_cb)(void *);

__attribute__((noinline)) int walk_leafward(int n, walk_cb cb, void *arg)
{
	if (n > 0) {
		int r = walk_leafward(n - 1, cb, arg);
		__asm__ volatile("" : "+r"(r)); /* keeps the recursion a recursion */
		return r + n;
	}
	cb(arg);
	__asm__ volatile("" ::: "memory");
	return 1;
}

__attribute__((noinline)) int walk_alloca(int n, walk_cb cb, void *arg)
{
	char *p = static_cast<char *>(alloca(static_cast<size_t>(n & 63) + 32));
	memset(p, 1, static_cast<size_t>(n & 63) + 32);
	__asm__ volatile("" ::"r"(p) : "memory");
	return walk_leafward(n, cb, arg) + p[3];
}

__attribute__((noinline)) int walk_big(int n, walk_cb cb, void *arg)
{
	volatile char buf[65536];
	buf[n & 0xffff] = 1;
	return walk_alloca(n, cb, arg) + buf[(n * 3) & 0xffff];
}

__attribute__((noinline, target("avx2"))) int walk_realigned(int n, walk_cb cb, void *arg)
{
	alignas(32) float tmp[16];
	float *dyn = static_cast<float *>(alloca(static_cast<size_t>(n & 15) * sizeof(float) + 16));
	_mm256_store_ps(tmp, _mm256_set1_ps(static_cast<float>(n)));
	__asm__ volatile("" ::"r"(tmp), "r"(dyn) : "memory");
	return walk_big(n, cb, arg) + static_cast<int>(tmp[3]) + static_cast<int>(dyn[0] > 0);
}
} // namespace cfitest

extern "C" __attribute__((visibility("default"))) int cfitest_walk(int n, cfitest::walk_cb cb,
								   void *arg)
{
	return cfitest::walk_realigned(n, cb, arg) + 1;
}

extern "C" __attribute__((visibility("default"))) double cfitest_run(int n)
{
	std::vector<double> v(static_cast<size_t>(n) + 1, 1.5);
	cfitest::square sq(n);
	const cfitest::shape &s = sq;
	float in[64] = {};
	double r = cfitest::accumulate(v, n) + s.area(n) + cfitest::realigned(in, n);
	try {
		r += cfitest::thrower(n);
	} catch (const std::exception &e) {
		r += static_cast<double>(strlen(e.what()));
	}
	return r;
}
