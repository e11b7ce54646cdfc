#!/bin/bash
# Unwind-table compile and cache-load times on real objects (not a test):
# builds tools/bench/cfi_table_bench.c against the core library of a build
# directory and runs it on libc, libsqlite3, the llama.cpp libraries of
# node-llama-cpp (tests/integration/llama_lib.sh fetches them), a 30 MB
# library (libclang-14) and node. No root needed; the cache is a temporary
# directory. Figures: docs/unwinding.md.
#   tools/bench/cfi_table_bench.sh            # uses ./build
#   BUILD_DIR=/tmp/b ROUNDS=9 tools/bench/cfi_table_bench.sh [FILE...]
set -eu -o pipefail
SRC_DIR=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$SRC_DIR/build}
CC=${CC:-cc}
W=$(mktemp -d /tmp/ep-cfi-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
[ -f "$BUILD_DIR/libebpfprof_core.a" ] || { echo "no $BUILD_DIR/libebpfprof_core.a (build first)" >&2; exit 1; }
# shellcheck disable=SC2046 # pkg-config output is a list of flags
"$CC" -O2 -g -D_GNU_SOURCE -I "$SRC_DIR/user" -I "$SRC_DIR/bpf" -o "$W/bench" \
	"$SRC_DIR/tools/bench/cfi_table_bench.c" "$BUILD_DIR/libebpfprof_core.a" \
	$(pkg-config --libs libdw libelf libbpf libcjson zlib ncursesw) -lpthread -lm
if [ $# -eq 0 ]; then
	LLAMA=${EP_LLAMA_LIB_DIR:-$BUILD_DIR/llama-npm/package/bins/linux-x64}
	set -- /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libsqlite3.so.0
	for f in libllama.v0.5.0.so libllama-common.so libggml-base.so libggml-cpu-haswell.so; do
		[ -f "$LLAMA/$f" ] && set -- "$@" "$LLAMA/$f"
	done
	for f in /usr/lib/x86_64-linux-gnu/libclang-14.so.1 /usr/bin/node; do
		[ -f "$f" ] && set -- "$@" "$f"
	done
fi
"$W/bench" "$W/cache" "${ROUNDS:-5}" "$@"
