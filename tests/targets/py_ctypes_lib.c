// ep-target-libs: -shared -fPIC
/* A C library that tests/integration/py_tree.py calls through ctypes: its
 * frames must sit under the Python function that called it. */
long c_inner(long n);
long c_burn(long n);

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
