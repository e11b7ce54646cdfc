"""Target of test_cycle_py_watch.sh (py:FUNCTION cycles by watchpoint).

usage: py_watch_target.py N_MAIN N_THREAD OUT

Prints "ready PID" and waits for SIGUSR1, blocked: the profiler finds
cycle_fn's code object in the frame the main thread waits in (the module's
constants), before its first call. Then N_MAIN calls of cycle_fn on the main
thread and N_THREAD on a thread started after that (its watchpoints are
inherited), each with 5000 calls of helper() in between, which must not
trap. cycle_fn calls itself once (one cycle per outermost call). Writes to
OUT one line per outermost call, "call TID START_NS END_NS" from
time.monotonic_ns() (CLOCK_MONOTONIC, the profiler's clock), then "done".
"""
import os
import signal
import sys
import threading
import time

OWN = []


def helper(x):
    return x + 1


def cycle_fn(i, outer=True):
    t0 = time.monotonic_ns()
    s = 0
    for k in range(3000):
        s += k
    if outer:
        cycle_fn(i, False)
    time.sleep(0.002)
    if outer:
        OWN.append((threading.get_native_id(), t0, time.monotonic_ns()))
    return s


def run(n):
    for i in range(n):
        cycle_fn(i)
        for k in range(5000):
            helper(k)


def main():
    n_main, n_thread, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigwait({signal.SIGUSR1})
    run(n_main)
    if n_thread:
        t = threading.Thread(target=run, args=(n_thread,))
        t.start()
        t.join()
    with open(out, "w") as f:
        for tid, a, b in OWN:
            f.write("call %d %d %d\n" % (tid, a, b))
        f.write("done\n")


main()
