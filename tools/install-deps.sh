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
# pyenv's CPython builds 3.8-3.13, each with a shared libpython, for the
# Python tests (test_python_frames, _deep, _offcpu, _embed,
# test_cycle_py_watch, test_cycle_py_nousdt: frame layouts Debian 12's 3.11
# does not have, and interpreters without USDT probes). They are no Debian
# package, and pyenv builds them from python.org's sources, which these
# machines cannot fetch: the machine image carries them under /root/.pyenv.
# Said here when one is missing; those tests then fail under CI=true.
pyroot=${PYENV_ROOT:-/root/.pyenv}
nopy=()
for v in 3.8 3.9 3.10 3.11 3.12 3.13; do
  compgen -G "$pyroot/versions/$v.*/lib/libpython$v.so" >/dev/null || nopy+=("$v")
done
if [ ${#nopy[@]} -gt 0 ]; then
  echo "install-deps.sh: no pyenv CPython ${nopy[*]} with a shared libpython under $pyroot/versions:" \
    "the Python tests that need them fail under CI=true" \
    "(with network: PYTHON_CONFIGURE_OPTS=--enable-shared pyenv install 3.N)" >&2
fi
# tracefs is needed for tracepoint attachment; some boots leave it unmounted.
if [ ! -d /sys/kernel/tracing/events ] && [ -d /sys/kernel/tracing ]; then
  mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
echo "install-deps.sh: dependencies present"
