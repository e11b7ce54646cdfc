# A Python recursion N deep that spins at its bottom (test_python_deep.sh).
# On CPython <= 3.10 every Python call is its own evaluator call, so the
# native stack is ~2 frames per Python frame.
import sys


def rec(n):
    if n == 0:
        s = 0
        while True:
            for i in range(10000):
                s += i
    return rec(n - 1)


print("ready", flush=True)
rec(int(sys.argv[1]))
