// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * C++ target for the demangling test (tests/integration/test_demangle.sh):
 * a hot loop in a class template's member and a namespaced class, whose
 * mangled names (_ZN6epdemo5AccumIdE4spinEd, _ZN6epdemo6Worker6crunchEi)
 * must print as epdemo::Accum<double>::spin(double) and
 * epdemo::Worker::crunch(int). Prints "ready PID", runs until killed.
 */
#include <stdio.h>
#include <unistd.h>

namespace epdemo {

template <typename T> struct Accum {
	__attribute__((noinline)) static T spin(T n)
	{
		volatile T acc = 0;

		for (int i = 0; i < 200000; i++)
			acc = acc + n * (T)(i & 7);
		return acc;
	}
};

class Worker {
public:
	__attribute__((noinline)) double crunch(int rounds)
	{
		double t = 0;

		for (int r = 0; r < rounds; r++)
			t += Accum<double>::spin((double)r);
		return t;
	}
};

} // namespace epdemo

int main()
{
	epdemo::Worker w;
	volatile double sink = 0;

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		sink = sink + w.crunch(10);
	return 0;
}
