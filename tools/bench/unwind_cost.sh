#!/bin/bash
# Collector-side CPU cost of one CFI unwind at a few stack depths (not a
# test): builds tools/bench/unwind_cost.c against the core library of a build
# directory and runs it. No root needed.
#   tools/bench/unwind_cost.sh            # uses ./build
#   BUILD_DIR=/tmp/b tools/bench/unwind_cost.sh
set -eu -o pipefail
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$SRC_DIR/build}
CC=${CC:-cc}
W=$(mktemp -d /tmp/ep-unwind-cost.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -f "$BUILD_DIR/libebpfprof_core.a" ] || { echo "no $BUILD_DIR/libebpfprof_core.a (build first)" >&2; exit 1; }
# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$CC" -O2 -g -I "$SRC_DIR/user" -I "$SRC_DIR/bpf" -o "$W/unwind_cost" "$SRC_DIR/tools/bench/unwind_cost.c" \
	"$BUILD_DIR/libebpfprof_core.a" $(pkg-config --libs libdw libelf libbpf libcjson zlib) -lm
for d in 1 10 40; do
	"$W/unwind_cost" "$d" "${N:-20000}"
done
