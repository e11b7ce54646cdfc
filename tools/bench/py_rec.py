# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A Python thread busy at a known depth (tools/bench/python_walk_cost.sh).

usage: py_rec.py SECONDS DEPTH
rec() recurses DEPTH times, then loops until SECONDS have passed: DEPTH + 2
Python frames per sample (<module>, DEPTH + 1 rec).
"""
import sys
import time


def rec(d, end):
    if d == 0:
        s = 0
        while time.monotonic() < end:
            for i in range(10000):
                s += i & 7
        return s
    return rec(d - 1, end)


rec(int(sys.argv[2]), time.monotonic() + float(sys.argv[1]))
