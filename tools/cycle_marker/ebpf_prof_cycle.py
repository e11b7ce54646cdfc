"""Cycle marker for ebpf-prof, for Python experiments (ctypes wrapper).

    from ebpf_prof_cycle import cycle
    for i in range(n):
        with cycle(i):
            run_one_experiment_step()

Needs libebpf_prof_cycle.so (build it from ebpf_prof_cycle.c, see
ebpf_prof_cycle.h) next to this file, on the loader path, or named by
$EBPF_PROF_CYCLE_LIB. Without the library the markers do nothing (and say
so once on stderr), so the experiment still runs.
"""
import contextlib
import ctypes
import os
import sys

__all__ = ["begin", "end", "cycle", "traced"]


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.environ.get("EBPF_PROF_CYCLE_LIB"),
                 os.path.join(here, "libebpf_prof_cycle.so"),
                 "libebpf_prof_cycle.so"):
        if not cand:
            continue
        try:
            lib = ctypes.CDLL(cand)
        except OSError:
            continue
        for name in ("ebpf_prof_cycle_begin", "ebpf_prof_cycle_end"):
            fn = getattr(lib, name)
            fn.argtypes = [ctypes.c_uint64]
            fn.restype = None
        lib.ebpf_prof_cycle_traced.argtypes = []
        lib.ebpf_prof_cycle_traced.restype = ctypes.c_int
        return lib
    print("ebpf_prof_cycle: libebpf_prof_cycle.so not found; cycle markers disabled",
          file=sys.stderr)
    return None


_lib = _load()


def begin(cycle_id=0):
    if _lib is not None:
        _lib.ebpf_prof_cycle_begin(cycle_id & 0xFFFFFFFFFFFFFFFF)


def end(cycle_id=0):
    if _lib is not None:
        _lib.ebpf_prof_cycle_end(cycle_id & 0xFFFFFFFFFFFFFFFF)


def traced():
    return bool(_lib is not None and _lib.ebpf_prof_cycle_traced())


@contextlib.contextmanager
def cycle(cycle_id=0):
    """One cycle: begin on entry, end on exit (also when the body raises)."""
    begin(cycle_id)
    try:
        yield
    finally:
        end(cycle_id)
