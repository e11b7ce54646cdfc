// ep-target-libs: -shared -fPIC
/* A C library that tests/integration/py_tree.py and py_alloc.py call
 * through ctypes: its frames must sit under the Python function that
 * called it, its CPU samples and its allocations alike. */
#include <stdlib.h>
#include <string.h>

long c_inner(long n);
long c_burn(long n);
long c_alloc_churn(long n, long size);
void *c_alloc_keep(long size);
void c_alloc_release(void *p);

long c_inner(long n)
{
	volatile long s = 0;

	for (long i = 0; i < n; i++)
		s += i & 7;
	return s;
}

long c_burn(long n)
{
	return c_inner(n) + 1;
}

/* n blocks of size bytes, each touched and freed: allocated bytes whose
 * only caller is c_alloc_churn (not inlined: its frame names them). */
__attribute__((noinline)) long c_alloc_churn(long n, long size)
{
	long s = 0;

	for (long i = 0; i < n; i++) {
		volatile char *p = malloc((size_t)size);

		if (!p)
			return -1;
		p[0] = (char)i;
		s += p[0];
		free((void *)p);
	}
	return s;
}

/* One block the caller keeps (in use until c_alloc_release). */
__attribute__((noinline)) void *c_alloc_keep(long size)
{
	void *p = malloc((size_t)size);

	if (p)
		memset(p, 1, (size_t)size);
	return p;
}

void c_alloc_release(void *p)
{
	free(p);
}
