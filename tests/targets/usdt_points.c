// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * USDT points for the probes test (sys/sdt.h from systemtap-sdt-dev).
 * usdt_points LIB: loads LIB (usdt_points_lib: points without semaphores),
 * prints "ready <pid>"; on SIGUSR1:
 *   ep_lib:tick       N_TICK times, argument i (0..N_TICK-1), in LIB;
 *   ep_lib:pair       N_TICK/4 times, arguments (i, -i), in LIB;
 *   ep_tgt:guarded    N_GUARD times when its semaphore is set, i.e. only
 *                     while a tracer is attached to it;
 *   ep_tgt:unwatched  N_UNWATCHED times when its semaphore is set (the test
 *                     does not probe it, so never).
 * Prints how often the guarded points actually fired: 0 unless the tracer
 * raised the semaphore, which is what is being tested.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#define N_TICK	    1000
#define N_GUARD	    500
#define N_UNWATCHED 77

/* The kernel increments these (uprobe reference counters) while a probe
 * is attached; the names are the ones sys/sdt.h's notes refer to. */
__extension__ unsigned short ep_tgt_guarded_semaphore __attribute__((unused))
__attribute__((section(".probes")));
__extension__ unsigned short ep_tgt_unwatched_semaphore __attribute__((unused))
__attribute__((section(".probes")));

static int enabled(unsigned short *sem)
{
	return *(volatile unsigned short *)sem != 0;
}

__attribute__((noinline)) static void fire(void (*lib_fire)(long))
{
	int guarded = 0, unwatched = 0;

	lib_fire(N_TICK);
	for (long i = 0; i < N_GUARD; i++) {
		if (enabled(&ep_tgt_guarded_semaphore)) {
			STAP_PROBE1(ep_tgt, guarded, i);
			guarded++;
		}
	}
	for (long i = 0; i < N_UNWATCHED; i++) {
		if (enabled(&ep_tgt_unwatched_semaphore)) {
			STAP_PROBE1(ep_tgt, unwatched, i);
			unwatched++;
		}
	}
	printf("guarded_fired %d\nunwatched_fired %d\n", guarded, unwatched);
}

int main(int argc, char **argv)
{
	sigset_t set;
	int sig;
	void *h;
	void (*lib_fire)(long);

	if (argc < 2) {
		fprintf(stderr, "usage: usdt_points LIB\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	lib_fire = h ? (void (*)(long))dlsym(h, "usdt_lib_fire") : NULL;
	if (!lib_fire) {
		fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (sigwait(&set, &sig))
		return 1;
	fire(lib_fire);
	printf("done\n");
	fflush(stdout);
	return 0;
}
