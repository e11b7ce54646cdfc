#!/usr/bin/env bash
# Installs everything ebpf-prof needs to build, run and test on Debian 12.
# Idempotent; run as root (or via sudo).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (sudo $0)" >&2
  exit 1
fi
pkgs=(
  build-essential g++ cmake pkg-config git xz-utils
  clang clang-format llvm lld bpftool libbpf-dev
  libclang-rt-14-dev # libFuzzer for tests/fuzz (tools/fuzz.sh)
  libelf-dev libdw-dev elfutils zlib1g-dev libcjson-dev libncurses-dev
  libprotobuf-c-dev protobuf-c-compiler libmicrohttpd-dev
  golang-go prometheus curl # tests: go tool pprof, promtool and a scraping prometheus
  python3 libsqlite3-dev sqlite3 tmux procps
  python3-dev # tests: a C program embedding libpython (test_python_embed)
  systemtap-sdt-dev
  chromium
  libjemalloc2 libtcmalloc-minimal4 # tests: --alloc where another allocator replaces malloc
)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# node and npm: the llama tests fetch llama.cpp's prebuilt libraries with npm,
# the Node tests run node. An image may already carry NodeSource's nodejs
# (npm bundled), which Debian's npm package would conflict with.
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm
fi
# tracefs is needed for tracepoint attachment; some boots leave it unmounted.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
echo "install-deps.sh: dependencies present"
