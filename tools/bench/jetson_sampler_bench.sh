#!/bin/sh
# Builds and runs the Jetson per-sample cost benchmark on the fixture trees.
# usage: tools/bench/jetson_sampler_bench.sh [SHARED_DIR] [ITERATIONS]
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
shared=${1:-$src/../shared}
iters=${2:-2000}
out=${TMPDIR:-/tmp}/jetson_sampler_bench.$$
trap 'rm -f "$out"' EXIT
cc -std=gnu17 -O2 -D_GNU_SOURCE -I"$src/user" -o "$out" \
	"$src/tools/bench/jetson_sampler_bench.c" "$src"/user/jetson/jetson*.c "$src/user/util/log.c" \
	-lcjson -lm -lpthread
"$out" "$shared/fixtures/jetson" "$iters"
