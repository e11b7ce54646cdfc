#!/usr/bin/env bash
# Wall time of `ebpf-prof -d SECONDS --pid P` on the Python + llama.cpp +
# SQLite experiment (py_llama_experiment.py with the npm libllama), and the
# -v breakdown of its stop ("stop took": sampler drain, modules, outputs;
# with -vv each module's share). `-d 10` once took 13.5 s; the goal
# is <= 10.5 s. Builds given as arguments are run interleaved, RUNS times.
#
# usage: sudo tools/bench/duration.sh [SECONDS] EP_BINARY [EP_BINARY...]
#   RUNS (default 3), LLAMA_DIR (default BUILD/llama-npm/...: see
#   stack_quality.sh for the fetch)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
secs=${1:-10}
shift
[ $# -ge 1 ] || { echo "usage: $0 [SECONDS] EP_BINARY..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
llama_dir=${LLAMA_DIR:-$src/build/llama-npm/package/bins/linux-x64}
[ -f "$llama_dir/libllama.v0.5.0.so" ] || { echo "no libllama in $llama_dir (run stack_quality.sh once)" >&2; exit 1; }
work=$(mktemp -d /tmp/ep_duration.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
python3 "$src/tests/integration/tiny_llama_gguf.py" "$work/tiny.gguf"
py=$(python3 -c 'import sys; print(sys.executable)')
"$py" "$here/py_llama_experiment.py" "$llama_dir" "$work/tiny.gguf" "$work/db.sqlite" \
	$((secs * (${RUNS:-3} * $# + 1) + 60)) >"$work/exp.out" 2>/dev/null &
for _ in $(seq 100); do grep -q ready "$work/exp.out" && break; sleep 0.1; done
pid=$(awk '/ready/{print $2}' "$work/exp.out")
[ -n "$pid" ] || { echo "the experiment did not start" >&2; exit 1; }
for run in $(seq "${RUNS:-3}"); do
	for ep in "$@"; do
		rm -rf "$work/out"
		t0=$(date +%s.%N)
		"$ep" -v -d "$secs" --pid "$pid" -o "$work/out" >/dev/null 2>"$work/err"
		t1=$(date +%s.%N)
		printf '%s run %d: wall %.2f s, recorded %s s; %s\n' "$ep" "$run" \
			"$(echo "$t1 - $t0" | bc)" \
			"$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"]["duration_ns"] / 1e9)' "$work/out/report.json")" \
			"$(grep -o 'stop took.*' "$work/err")"
	done
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
