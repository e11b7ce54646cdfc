#!/usr/bin/env bash
# Fresh-machine demo: installs dependencies, builds, and profiles the bundled
# demo experiment (tests/targets/demo_experiment.c) for a few seconds.
# Result: ./ebpf-prof-demo/ (open profile.speedscope.json in speedscope).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "demo.sh: needs root for apt-get and BPF: sudo $0" >&2
  exit 1
fi
tools/install-deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)"
build/ebpf-prof -F 199 -o ebpf-prof-demo -- build/tests/targets/demo_experiment "${DEMO_SECONDS:-8}"
