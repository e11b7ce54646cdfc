#!/usr/bin/env bash
# Stack quality on the workload our users run, beside perf in the same
# script: a Python experiment loop driving the real llama.cpp libraries
# through ctypes and logging to SQLite (py_llama_experiment.py), and a Node
# loop (a JS hot loop plus fs and zlib work in libuv/native code).
#
# For each profiler run it prints, over all samples of the target:
#   rooted     share of samples whose stack reaches the thread's root
#              (_start, start_thread/clone3 for other threads)
#   truncated  share with a [truncated] root (ebpf-prof) or no root
#   bare       share with a frame that is a bare address ([unknown] 0x...,
#              i.e. outside every mapping: e.g. the uretprobe trampoline)
#   mangled    share with a frame still in mangled C++ form (_Z...)
#   unknown    share with any [unknown] frame
# plus the collector's CPU time (user+sys) and its output size.
#
# usage: sudo tools/bench/stack_quality.sh [BUILD_DIR] [SECONDS] [FREQ]
#   CONFIGS (default "ep ep-noprobes perf-dwarf perf-fp"): ep = ebpf-prof with
#   default options (cfi-kernel unwinding); ep-noprobes = --probes none; ep-auto,
#   ep-auto-noprobes = the same with --unwind auto (copied stack window); perf-dwarf = perf record
#   --call-graph dwarf; perf-fp = perf record -g. EP_ARGS adds options to ep runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
secs=${2:-4}
freq=${3:-999}
configs=${CONFIGS:-"ep ep-noprobes perf-dwarf perf-fp"}
EP=$build/ebpf-prof
work=$(mktemp -d /tmp/stack_quality.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

llama_dir=${EP_LLAMA_LIB_DIR:-$build/llama-npm/package/bins/linux-x64}
if [ ! -f "$llama_dir/libllama.v0.5.0.so" ]; then
	mkdir -p "$build/llama-npm"
	(cd "$build/llama-npm" && npm pack --silent @node-llama-cpp/linux-x64@3.22.1 >/dev/null &&
		tar xzf node-llama-cpp-linux-x64-3.22.1.tgz)
fi
python3 "$src/tests/integration/tiny_llama_gguf.py" "$work/tiny.gguf"

cat >"$work/node_loop.js" <<'EOF'
const fs = require('fs'), zlib = require('zlib');
function hotInner(n) { let s = 0; for (let i = 0; i < n; i++) s += Math.sqrt(i) * (i & 7); return s; }
function hotOuter() { let t = 0; for (let k = 0; k < 40; k++) t += hotInner(20000); return t; }
const end = Date.now() + Number(process.argv[2]) * 1000;
console.log('ready ' + process.pid);
const buf = Buffer.alloc(1 << 16, 'x');
while (Date.now() < end) {
	hotOuter();
	zlib.deflateSync(buf);
	fs.writeFileSync('/tmp/stack_quality_node.' + process.pid, buf);
}
fs.unlinkSync('/tmp/stack_quality_node.' + process.pid);
EOF

# Prints the quality figures of a folded file (ebpf-prof: comm;root;...;leaf N,
# perf script output collapsed the same way below).
analyze() {
	python3 - "$1" <<'EOF'
import re, sys
tot = rooted = trunc = bare = mangled = unknown = 0
roots = ("_start", "start_thread", "clone3", "__clone3", "clone", "__clone")
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\n")
    if not line:
        continue
    stack, _, n = line.rpartition(" ")
    n = int(n)
    fr = [f for f in stack.split(";")[1:] if not f.endswith("_[k]")]
    tot += n
    if not fr:
        continue
    root = fr[0]
    if root == "[truncated]":
        trunc += n
    elif root in roots or root.startswith("start_thread"):
        rooted += n
    if any(re.match(r"\[unknown\] 0x[0-9a-f]+$", f) or re.match(r"^0x[0-9a-f]+$", f) or
           f.startswith("[unknown] [uprobes]") for f in fr):
        bare += n
    if any(re.match(r"_Z[NLS0-9]", f) for f in fr):
        mangled += n
    if any("[unknown]" in f for f in fr):
        unknown += n
pct = lambda x: 100.0 * x / tot if tot else 0.0
print("samples %d rooted %.1f%% truncated %.1f%% bare %.1f%% mangled %.1f%% unknown %.1f%%" %
      (tot, pct(rooted), pct(trunc), pct(bare), pct(mangled), pct(unknown)))
EOF
}

# perf script -> folded (comm;root;...;leaf 1), the way stackcollapse-perf does.
perf_fold() {
	perf script -i "$1" -F comm,ip,sym 2>/dev/null | python3 -c '
import sys, collections
c = collections.Counter(); comm = None; fr = []
def flush():
    global comm, fr
    if comm is not None:
        c[";".join([comm] + fr[::-1])] += 1
    comm, fr = None, []
for line in sys.stdin:
    if not line.strip():
        flush(); continue
    if not line.startswith((" ", "\t")):
        flush(); comm = line.split()[0]; continue
    parts = line.split(None, 1)
    sym = parts[1].strip() if len(parts) > 1 else ""
    if sym.startswith("[unknown]") or not sym:
        sym = "[unknown] 0x" + parts[0]
    fr.append(sym.split("+0x")[0])
flush()
for k, v in c.items():
    print(k, v)
'
}

cpu_of() { awk '{print ($14 + $15 + $16 + $17) / '"$(getconf CLK_TCK)"'}' "/proc/$1/stat" 2>/dev/null || echo 0; }

run_one() { # workload config
	local wl=$1 cfg=$2 out=$work/$1-$2 pid prof rc=0
	mkdir -p "$out"
	if [ "$wl" = py ]; then
		python3 "$here/py_llama_experiment.py" "$llama_dir" "$work/tiny.gguf" "$work/x.db" $((secs + 8)) \
			>"$out/target.out" 2>/dev/null &
	else
		node "$work/node_loop.js" $((secs + 8)) >"$out/target.out" 2>/dev/null &
	fi
	pid=$!
	for _ in $(seq 100); do grep -q '^ready' "$out/target.out" 2>/dev/null && break; sleep 0.1; done
	sleep 1
	local t0 t1
	case $cfg in
	ep | ep-noprobes | ep-auto | ep-auto-noprobes)
		local extra=()
		[ "$cfg" = ep-noprobes ] && extra=(--probes none)
		[ "$cfg" = ep-auto ] && extra=(--unwind auto)
		[ "$cfg" = ep-auto-noprobes ] && extra=(--unwind auto --probes none)
		t0=$(date +%s%N)
		/usr/bin/time -f "%U %S %M" -o "$out/time" "$EP" --pid "$pid" -F "$freq" -d "$secs" \
			--no-gpu -o "$out/r" "${extra[@]}" ${EP_ARGS:-} >"$out/log" 2>&1 || rc=$?
		cp "$out/r/stacks.folded" "$out/folded" 2>/dev/null || : >"$out/folded"
		;;
	perf-dwarf | perf-fp)
		local cg=(-g)
		[ "$cfg" = perf-dwarf ] && cg=(--call-graph dwarf)
		/usr/bin/time -f "%U %S %M" -o "$out/time" perf record -q -F "$freq" "${cg[@]}" -p "$pid" \
			-o "$out/perf.data" -- sleep "$secs" >"$out/log" 2>&1 || rc=$?
		perf_fold "$out/perf.data" >"$out/folded"
		;;
	esac
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	local q size
	q=$(analyze "$out/folded")
	size=$(du -sk "$out" | cut -f1)
	printf '%-5s %-12s rc=%d %s cpu(u+s)=%ss rss=%sKB out=%sKB\n' "$wl" "$cfg" "$rc" "$q" \
		"$(awk '{print $1+$2}' "$out/time")" "$(awk '{print $3}' "$out/time")" "$size"
}

echo "# stack_quality $(date -u +%FT%TZ) freq=$freq secs=$secs load=$(cut -d' ' -f1-3 /proc/loadavg)"
for wl in ${WORKLOADS:-py node}; do
	for cfg in $configs; do
		run_one "$wl" "$cfg"
	done
done
