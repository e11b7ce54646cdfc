# A Python program with a known call tree, for test_python_frames.sh.
# Usage: py_tree.py SECONDS tree|ctypes LIB|threads|gen|sleep
# tree: for SECONDS of CPU time, leaf_hot (under outer -> middle), side
# and tail do the same loop
# 5:3:2 times per round, so they hold about 50/30/20% of the Python work;
# the CPU time each took is written to $PY_TREE_OUT.
# ctypes: outer_c -> via_ctypes -> the C library's c_burn -> c_inner.
# threads: two ThreadPoolExecutor workers in pool_leaf, the main thread
# waiting for them.
# gen: a generator (consume -> sum -> gen_body) and a coroutine
# (asyncio.run -> ... -> coro_outer -> coro_leaf).
# sleep: nap_long (30 ms) and nap_short (10 ms) call time.sleep from the
# same line of nap, alternately: the same native wait site under two
# Python callers, 3:1 of the off-CPU time; burn between them (~5 ms of
# CPU each) is the CPU part. The time each slept is written to $PY_TREE_OUT.
import os
import sys
import time


def leaf_hot(n):
    s = 0
    for i in range(n):
        s += i & 7
    return s


def middle(n):
    return leaf_hot(n)


def outer(n):
    return middle(n)


def side(n):
    s = 0
    for i in range(n):
        s += i & 7
    return s


def tail(n):
    s = 0
    for i in range(n):
        s += i & 7
    return s


def via_ctypes(lib, n):
    return lib.c_burn(n)


def outer_c(lib, n):
    return via_ctypes(lib, n)


def pool_leaf(n):
    s = 0
    for i in range(n):
        s += i & 7
    return s


def gen_body(n):
    for j in range(n):
        s = 0
        for i in range(2000):
            s += i & 7
        yield s


def consume(n):
    return sum(gen_body(n))


def nap(secs):
    t0 = time.monotonic()
    time.sleep(secs)
    return time.monotonic() - t0


def nap_long():
    return nap(0.030)


def nap_short():
    return nap(0.010)


def burn(n):
    # Most of it in the interpreter's C code (int to str), under burn.
    s = 0
    for i in range(n):
        s += len(str(i))
    return s


async def coro_leaf(n):
    s = 0
    for i in range(n):
        s += i & 7
    return s


async def coro_outer(n):
    return await coro_leaf(n)


def main():
    secs, mode = float(sys.argv[1]), sys.argv[2]
    end = time.monotonic() + secs
    print("ready %d" % os.getpid(), flush=True)
    if mode == "tree":
        # The program's own CPU time per branch is the truth the profile is
        # compared with (PY_TREE_OUT): on a shared CPU the 5:3:2 iteration
        # counts need not give exactly 50/30/20% of the time.
        # SECONDS of the program's own CPU time here, not wall time: the
        # samples it gets then do not depend on how busy the host is.
        k = 4000
        spent = [0.0, 0.0, 0.0]
        clock = time.thread_time
        cend = clock() + secs
        while clock() < cend:
            t0 = clock()
            outer(5 * k)
            t1 = clock()
            side(3 * k)
            t2 = clock()
            tail(2 * k)
            t3 = clock()
            spent[0] += t1 - t0
            spent[1] += t2 - t1
            spent[2] += t3 - t2
        if os.environ.get("PY_TREE_OUT"):
            with open(os.environ["PY_TREE_OUT"], "w") as f:
                f.write("%f %f %f\n" % tuple(spent))
    elif mode == "ctypes":
        import ctypes
        lib = ctypes.CDLL(sys.argv[3])
        lib.c_burn.argtypes = [ctypes.c_long]
        lib.c_burn.restype = ctypes.c_long
        while time.monotonic() < end:
            outer_c(lib, 2000000)
    elif mode == "gen":
        import asyncio
        while time.monotonic() < end:
            consume(50)
            asyncio.run(coro_outer(100000))
    elif mode == "sleep":
        slept = [0.0, 0.0]
        while time.monotonic() < end:
            slept[0] += nap_long()
            burn(150000)
            slept[1] += nap_short()
            burn(150000)
        if os.environ.get("PY_TREE_OUT"):
            with open(os.environ["PY_TREE_OUT"], "w") as f:
                f.write("%f %f\n" % tuple(slept))
    elif mode == "threads":
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as ex:
            while time.monotonic() < end:
                list(ex.map(pool_leaf, [20000] * 8))


main()
