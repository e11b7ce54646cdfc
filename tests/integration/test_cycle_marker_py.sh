#!/usr/bin/env bash
# The Python cycle marker (tools/cycle_marker/ebpf_prof_cycle.py) loads the
# C library built as its header says, its context manager calls begin/end
# (also when the body raises), and without the library it degrades to a
# no-op with one message instead of breaking the experiment. No root needed.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
ep_init
# Do not leave __pycache__ in the source tree.
export PYTHONDONTWRITEBYTECODE=1
src="${EP_SOURCE_DIR:-$(dirname "$0")/../..}/tools/cycle_marker"
cc=$(command -v cc || command -v gcc || command -v clang) || ep_fail "no C compiler"
"$cc" -O2 -fPIC -shared -o "$EP_WORK/libebpf_prof_cycle.so" "$src/ebpf_prof_cycle.c" ||
	ep_fail "building libebpf_prof_cycle.so as documented failed"
readelf -n "$EP_WORK/libebpf_prof_cycle.so" | grep -q "Name: cycle_begin" ||
	ep_fail "no cycle_begin USDT note in the library"

EBPF_PROF_CYCLE_LIB="$EP_WORK/libebpf_prof_cycle.so" python3 - "$src" <<'PY' || ep_fail "wrapper with library"
import sys
sys.path.insert(0, sys.argv[1])
import ebpf_prof_cycle as m
assert m._lib is not None, "library not loaded"
calls = []
orig_b, orig_e = m._lib.ebpf_prof_cycle_begin, m._lib.ebpf_prof_cycle_end
class Spy:
    def __init__(self, f, tag): self.f, self.tag = f, tag
    def __call__(self, x): calls.append((self.tag, x)); self.f(x)
m._lib.ebpf_prof_cycle_begin = Spy(orig_b, "b")
m._lib.ebpf_prof_cycle_end = Spy(orig_e, "e")
for i in range(3):
    with m.cycle(i):
        pass
try:
    with m.cycle(7):
        raise ValueError("step failed")
except ValueError:
    pass
m.begin(-1)
assert calls == [("b", 0), ("e", 0), ("b", 1), ("e", 1), ("b", 2), ("e", 2), ("b", 7), ("e", 7),
                 ("b", 2**64 - 1)], calls
assert m.traced() is False
PY

err=$(cd "$EP_WORK" && EBPF_PROF_CYCLE_LIB=/nonexistent.so python3 -c "
import sys; sys.path.insert(0, '$src')
import ebpf_prof_cycle as m
with m.cycle(1):
    pass
print('ran')" 2>&1) || ep_fail "wrapper without library broke the program: $err"
grep -q "^ran$" <<<"$err" || ep_fail "body did not run: $err"
grep -q "markers disabled" <<<"$err" || ep_fail "no message about the missing library: $err"
ep_log "python marker: begin/end pairs (also on exceptions), no-op without the library"
exit 0
