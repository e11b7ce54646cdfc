"""Target of test_cycle_py_watch.sh: the cycle function is defined after
the profiler attached. Its code object already exists (a constant of this
module's code, on the main thread's stack) but has no function object
yet, whose reference, taken when the def runs, is not a call.

usage: py_watch_late_def.py N OUT

Prints "ready PID", waits for SIGUSR1, runs the def, prints "defined",
waits for SIGUSR1 again, makes N calls of late_fn and writes "calls N" and
"done" to OUT.
"""
import os
import signal
import sys
import time

signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
print("ready %d" % os.getpid(), flush=True)
signal.sigwait({signal.SIGUSR1})


def late_fn(i):
    s = 0
    for k in range(3000):
        s += k
    time.sleep(0.002)
    return s


print("defined", flush=True)
signal.sigwait({signal.SIGUSR1})
n = int(sys.argv[1])
for i in range(n):
    late_fn(i)
with open(sys.argv[2], "w") as f:
    f.write("calls %d\ndone\n" % n)
