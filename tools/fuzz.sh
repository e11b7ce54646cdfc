#!/usr/bin/env bash
# Builds the libFuzzer harnesses (tests/fuzz) and runs each for SECONDS,
# starting from its seed corpus tests/fuzz/corpus/NAME.
#   tools/fuzz.sh [SECONDS] [NAME...]    default 60 s, every harness
#   BUILD_DIR=build                      build directory
#   KEEP_CORPUS=1                        merge inputs that add coverage back
#                                        into tests/fuzz/corpus/NAME (commit them)
# A crash stops the script with the input and log kept (path printed): turn
# the input into a unit test next to the parser's others, then fix.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
[ $# -gt 0 ] && shift
dir=${BUILD_DIR:-build}
cmake -S . -B "$dir" -DEBPF_PROF_FUZZ=ON >/dev/null
cmake --build "$dir" -j"$(nproc)" --target fuzz_harnesses
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do
    n=${f##*/fuzz_}
    names+=("${n%.c}")
  done
fi
for n in "${names[@]}"; do
  bin="$dir/tests/fuzz/fuzz_$n"
  [ -x "$bin" ] || { echo "no harness $bin" >&2; exit 1; }
  echo "=== fuzz $n for ${secs}s"
  work=$(mktemp -d "${TMPDIR:-/tmp}/ep-fuzz-$n.XXXXXX")
  bash tests/fuzz/run_fuzz.sh "$(realpath "$bin")" "tests/fuzz/corpus/$n" -max_total_time="$secs" \
    -artifact_prefix="$work/"
  if [ "${KEEP_CORPUS:-0}" = 1 ]; then
    mkdir -p "$work/new"
    "$bin" -max_len=65536 -timeout=10 -max_total_time="$secs" "$work/new" "tests/fuzz/corpus/$n" \
      >/dev/null 2>&1 || true
    "$bin" -merge=1 "tests/fuzz/corpus/$n" "$work/new" >/dev/null 2>&1
  fi
  rm -rf "$work"
done
