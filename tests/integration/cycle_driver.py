# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Python experiment loop with a known cycle structure (test_cycles_record.sh).

usage: python3 cycle_driver.py CYCLES SLOW plain|marker [MARKER_DIR]

Each cycle is one call of run_cycle(): ~30 ms of pure-Python compute, 20
INSERTs through the sqlite3 module (Debian's libsqlite3), a gc.collect() of
cyclic garbage (automatic collection is off, so these are the only GC
passes), and a 20 ms sleep. Cycle SLOW also runs a heavy query for ~300 ms:
its extra time is SQL. With "marker" the cycles are also bracketed by the
cycle marker (tools/cycle_marker/ebpf_prof_cycle.py).

Prints "ready PID", waits for SIGUSR1, then per cycle its own measurements
(CLOCK_MONOTONIC ns, the profiler's clock):
    cycle I start_ns end_ns infer_ns sql_ns sql_calls sleep_ns gc_ns sql_cpu_ns gc_cpu_ns sql_off3_ns
(sql_cpu_ns, gc_cpu_ns: the thread's CPU time, CLOCK_THREAD_CPUTIME_ID,
across the execute() calls and gc.collect(), read just outside their
wall-clock reads; sql_off3_ns: the three largest of the execute() calls'
wall time the thread did not run, wall minus CPU time, summed) and "done".
"""
import gc
import os
import signal
import sqlite3
import sys
import time

now = time.monotonic_ns
cpu = time.thread_time_ns


class Own:
    __slots__ = ("infer", "sql", "calls", "sleep", "gc", "sql_cpu", "gc_cpu", "off")

    def __init__(self):
        self.infer = self.sql = self.calls = self.sleep = self.gc = self.sql_cpu = self.gc_cpu = 0
        self.off = []

    def add_call(self, wall, cpu_ns):
        self.sql += wall
        self.sql_cpu += cpu_ns
        self.calls += 1
        self.off = sorted(self.off + [max(0, wall - cpu_ns)], reverse=True)[:3]


class Node:
    __slots__ = ("ref", "pad")


def infer():
    end = now() + 30_000_000
    x = 1
    while now() < end:
        for _ in range(200):
            x = (x * 1103515245 + 12345) & 0xFFFFFFFF
    return x


def garbage(n):
    # Reference cycles only the collector can free.
    for _ in range(n):
        a, b = Node(), Node()
        a.ref, b.ref = b, a


def run_cycle(db, i, slow, own):
    t0 = now()
    infer()
    own.infer = now() - t0
    for k in range(20):
        c0 = cpu()
        t0 = now()
        db.execute("INSERT INTO t VALUES(?, ?)", (i * 1000 + k, "row"))
        t1 = now()
        own.add_call(t1 - t0, cpu() - c0)
    if slow:
        until = now() + 300_000_000
        while now() < until:
            c0 = cpu()
            t0 = now()
            db.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                       "LIMIT 20000) SELECT sum(x) FROM c").fetchall()
            t1 = now()
            own.add_call(t1 - t0, cpu() - c0)
    garbage(20000)
    c0 = cpu()
    t0 = now()
    gc.collect()
    own.gc = now() - t0
    own.gc_cpu = cpu() - c0
    t0 = now()
    time.sleep(0.02)
    own.sleep = now() - t0


def main():
    n, slow, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    marker = None
    if mode == "marker":
        sys.path.insert(0, sys.argv[4])
        import ebpf_prof_cycle as marker
    gc.disable()
    db = sqlite3.connect(":memory:", isolation_level=None)
    db.execute("CREATE TABLE t(a INTEGER, b TEXT)")
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    print("ready %d" % os.getpid(), flush=True)
    signal.sigwait({signal.SIGUSR1})
    own = [Own() for _ in range(n)]
    start, end = [0] * n, [0] * n
    for i in range(n):
        if marker:
            marker.begin(i)
        start[i] = now()
        run_cycle(db, i, i == slow, own[i])
        end[i] = now()
        if marker:
            marker.end(i)
    for i, o in enumerate(own):
        print("cycle %d %d %d %d %d %d %d %d %d %d %d" % (i, start[i], end[i], o.infer, o.sql, o.calls,
                                                          o.sleep, o.gc, o.sql_cpu, o.gc_cpu, sum(o.off)))
    print("done", flush=True)


main()
