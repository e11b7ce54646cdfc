#!/bin/bash
# run_fuzz.sh HARNESS SEED_DIR LIBFUZZER_ARGS...: runs a libFuzzer harness
# on a scratch copy of its seed corpus (the tree's corpus is not grown by
# test runs), inputs capped at 64 KiB. A crash exits non-zero and leaves
# the crashing input in the scratch dir, which is then kept and named.
set -u
bin=$1 seeds=$2
shift 2
work=$(mktemp -d "${TMPDIR:-/tmp}/ep-fuzz.XXXXXX") || exit 1
mkdir -p "$work/corpus"
[ -d "$seeds" ] && cp "$seeds"/* "$work/corpus/" 2>/dev/null
cd "$work" || exit 1
rc=0
"$bin" -max_len=65536 -timeout=10 -rss_limit_mb=1024 -print_final_stats=1 "$@" corpus \
	>"$work/log" 2>&1 || rc=$?
tail -n 12 "$work/log"
if [ "$rc" -ne 0 ]; then
	echo "fuzz run failed (rc $rc); inputs and log kept in $work" >&2
	exit "$rc"
fi
rm -rf "$work"
