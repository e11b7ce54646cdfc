"""Target of test_cycle_py_names.sh (py:NAME with qualified names).

usage: py_samename.py N OUT [SPIN]

Two classes with a method of the same name, as in an experiment with a
database and a stand-in model: DB.run (3 calls per iteration) and
StandIn.run (1 call per iteration), neither calling the other. Prints
"ready PID" and waits for SIGUSR1, blocked (the profiler finds both code
objects among the module's constants before the first call). Then N
iterations. Writes to OUT how many times each ran ("DB.run K",
"StandIn.run K", counted by the methods themselves), then "done". SPIN
(default 2000): iterations of StandIn.run's loop, two lines of CPU work
(test_pprof.sh makes it the hot function: its lines in profile.pb.gz).
"""
import os
import signal
import sys
import time

CALLS = {"DB.run": 0, "StandIn.run": 0}


class DB:
    def run(self, sql):
        CALLS["DB.run"] += 1
        s = 0
        for k in range(500):
            s += k
        time.sleep(0.001)
        return s + len(sql)


class StandIn:
    def run(self, prompt, spin):
        CALLS["StandIn.run"] += 1
        s = 0
        for k in range(spin):
            s += k
            s ^= k >> 3
        time.sleep(0.003)
        return s + len(prompt)


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    spin = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigwait({signal.SIGUSR1})
    db, model = DB(), StandIn()
    for i in range(n):
        db.run("SELECT 1")
        model.run("prompt %d" % i, spin)
        db.run("INSERT 2")
        db.run("SELECT 3")
    with open(out, "w") as f:
        for k, v in CALLS.items():
            f.write("%s %d\n" % (k, v))
        f.write("done\n")


main()
