#!/usr/bin/env bash
# Builds ebpf-prof and runs the whole test suite (unit + BPF integration).
# BPF tests need root; without root they are skipped (and fail under CI=true).
#   BUILD_DIR=build      build directory
#   SANITIZE=1           build with ASan+UBSan (uses build-asan by default)
#   CTEST_ARGS="-R unit" extra ctest arguments
set -euo pipefail
cd "$(dirname "$0")/.."
san=OFF
default_dir=build
if [ "${SANITIZE:-0}" = 1 ]; then
  san=ON
  default_dir=build-asan
  # Leaks are errors; keep going past the first UB report only in no case.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
dir=${BUILD_DIR:-$default_dir}
cmake -S . -B "$dir" -DEBPF_PROF_SANITIZE=$san >/dev/null
cmake --build "$dir" -j"$(nproc)"
cd "$dir"
# shellcheck disable=SC2086
ctest --output-on-failure ${CTEST_ARGS:-}
