# Allocations through a C library, from known Python functions and lines
# (tests/integration/test_alloc_python.sh). Usage: py_alloc.py LIB ROUNDS OUT
#   churn_hot  -> c_alloc_churn: 2,000 blocks of 16 KiB malloc'd and freed
#                 per round (32 MiB a round);
#   keep_some  -> c_alloc_keep: one 256 KiB block a round, kept until exit
#                 (in use at the end: 256 KiB x ROUNDS).
# OUT gets the bytes each asked for ("churn N", "keep N") and the lines of
# the two calls ("churn_line L", "keep_line L").
import ctypes
import inspect
import os
import sys

CHURN_N, CHURN_SIZE, KEEP_SIZE = 2000, 16384, 262144


def churn_hot(lib):
    return lib.c_alloc_churn(CHURN_N, CHURN_SIZE)  # churn call


def keep_some(lib, kept):
    kept.append(lib.c_alloc_keep(KEEP_SIZE))  # keep call


def line_of(fn, marker):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(src) if marker in l)


def main():
    lib = ctypes.CDLL(sys.argv[1])
    rounds, out = int(sys.argv[2]), sys.argv[3]
    lib.c_alloc_churn.argtypes = [ctypes.c_long, ctypes.c_long]
    lib.c_alloc_churn.restype = ctypes.c_long
    lib.c_alloc_keep.argtypes = [ctypes.c_long]
    lib.c_alloc_keep.restype = ctypes.c_void_p
    kept = []
    for _ in range(rounds):
        if churn_hot(lib) < 0:
            sys.exit("c_alloc_churn: out of memory")
        keep_some(lib, kept)
    with open(out, "w") as f:
        f.write("churn %d\nkeep %d\n" % (rounds * CHURN_N * CHURN_SIZE, rounds * KEEP_SIZE))
        f.write("churn_line %d\nkeep_line %d\n" % (line_of(churn_hot, "# churn call"),
                                                  line_of(keep_some, "# keep call")))
    print("done %d" % os.getpid(), flush=True)


main()
