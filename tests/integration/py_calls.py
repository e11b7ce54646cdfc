"""A call-heavy Python loop for test_overhead.sh: each cycle is one call of
generate(), which makes 2 x CALLS Python function calls (step and tok),
after one call of libc's getppid() (a native function to define cycles
by, at no cost to the loop: --cycle-every getppid).

usage: python3 py_calls.py CYCLES CALLS

Prints "ready PID", waits for SIGUSR1, runs, then prints
    cycles N returns R cpu_ns C
(R: Python function returns it made while running; C: its CPU time in
the loop, time.thread_time_ns, which a busy machine does not inflate) and
"done". gc is off: no collection (and no gc probe) in the loop.
"""
import gc
import os
import signal
import sys
import time


def tok(i):
    return (i * 31) % 97


def step(x):
    return tok(x) + 1


def generate(n):
    s = 0
    for i in range(n):
        s += step(i)
    return s


def main():
    cycles, calls = int(sys.argv[1]), int(sys.argv[2])
    gc.disable()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigwait({signal.SIGUSR1})
    t0 = time.thread_time_ns()
    for _ in range(cycles):
        os.getppid()
        generate(calls)
    cpu = time.thread_time_ns() - t0
    # step and tok per call, generate once per cycle.
    print("cycles %d returns %d cpu_ns %d" % (cycles, cycles * (2 * calls + 1), cpu), flush=True)
    print("done", flush=True)


main()
