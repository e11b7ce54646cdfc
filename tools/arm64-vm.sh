#!/usr/bin/env bash
# tools/vm.sh --arch arm64: kept for the callers that predate the x86_64
# machine and the --kernel option (EP_VM_KERNEL picks the suite, bookworm's
# 6.1 by default; EP_ARM64_BIN the binary). tools/vm.sh --help has the rest.
exec "$(dirname "$0")/vm.sh" --arch arm64 "$@"
