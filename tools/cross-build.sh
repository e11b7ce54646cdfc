#!/usr/bin/env bash
# Cross-builds ebpf-prof for arm64 on a Debian 12 amd64 machine:
#   sudo tools/cross-build.sh arm64 [BUILD_DIR] [--test]   (default build-arm64)
# Installs Debian's cross compiler and the :arm64 libraries it links with
# (multiarch) when missing, then builds BUILD_DIR/ebpf-prof (an aarch64 ELF;
# its BPF objects are compiled with __TARGET_ARCH_arm64 against
# vmlinux/arm64/vmlinux.h). A native build on a board needs none of this:
# the same CMakeLists.txt, `cmake -S . -B build && cmake --build build`.
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:-arm64}
[ "$arch" = arm64 ] || { echo "cross-build.sh: only arm64 is supported" >&2; exit 2; }
dir=build-arm64
run_tests=0
for a in "${@:2}"; do
	case "$a" in
	--test) run_tests=1 ;;
	*) dir=$a ;;
	esac
done
pkgs=(crossbuild-essential-arm64 libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64
	zlib1g-dev:arm64 libcjson-dev:arm64 libncurses-dev:arm64 systemtap-sdt-dev:arm64 libsqlite3-dev:arm64
	libprotobuf-c-dev:arm64 libmicrohttpd-dev:arm64
	qemu-user qemu-system-arm cpio file)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	[ "$(id -u)" -eq 0 ] || { echo "cross-build.sh: missing ${missing[*]}: run as root to install them" >&2; exit 1; }
	dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
cmake -S . -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-arm64.cmake" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo -DEBPF_PROF_TESTS=ON >/dev/null
cmake --build "$dir" -j"$(nproc)"
file "$dir/ebpf-prof" | grep -q "ARM aarch64" || { echo "cross-build.sh: $dir/ebpf-prof is not an aarch64 binary" >&2; exit 1; }
echo "cross-build.sh: $dir/ebpf-prof"
# --test: the unit tests and the Jetson CLI test under qemu-user, and the
# BPF test in the emulated arm64 machine (tests/arm64/test_vm.sh).
if [ "$run_tests" = 1 ]; then
	(cd "$dir" && ctest --output-on-failure)
fi
