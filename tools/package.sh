#!/usr/bin/env bash
# Builds the .deb package of ebpf-prof for amd64 (native) or arm64 (cross,
# tools/cross-build.sh's toolchain), with libbpf linked statically:
#   tools/package.sh amd64|arm64 [OUTDIR]      (default dist/)
# Install with `sudo dpkg -i ebpf-prof_VERSION_ARCH.deb` (or `apt install
# ./ebpf-prof_...deb` to pull the dependencies) on Debian 12 or Ubuntu
# 22.04 (JetPack 6).
set -euo pipefail
cd "$(dirname "$0")/.."
arch=${1:?usage: tools/package.sh amd64|arm64 [OUTDIR]}
out=${2:-dist}
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DEBPF_PROF_TESTS=OFF -DEBPF_PROF_STATIC_LIBBPF=ON)
case "$arch" in
amd64) dir=build-pkg-amd64 ;;
arm64)
	dir=build-pkg-arm64
	args+=(-DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchain-arm64.cmake")
	;;
*)
	echo "package.sh: unknown architecture '$arch' (amd64 or arm64)" >&2
	exit 2
	;;
esac
cmake -S . -B "$dir" "${args[@]}" >/dev/null
cmake --build "$dir" -j"$(nproc)" --target ebpf-prof
mkdir -p "$out"
(cd "$dir" && cpack -G DEB >/dev/null)
deb=$(ls "$dir"/ebpf-prof_*_"$arch".deb | head -n 1)
cp "$deb" "$out/"
echo "package.sh: $out/$(basename "$deb")"
