#!/usr/bin/env bash
# Generates vmlinux/ARCH/vmlinux.h, the kernel types the BPF programs are
# compiled against (CO-RE relocates them to the running kernel's layout).
#
# usage: tools/gen-vmlinux.sh x86|arm64 [SOURCE]
#   SOURCE: a BTF file (/sys/kernel/btf/vmlinux on a kernel of that
#   architecture), an ELF vmlinux with a .BTF section, or a kernel image
#   (vmlinuz/Image, compressed or not: its BTF blob is found in it).
#   Default for x86: this machine's /sys/kernel/btf/vmlinux (if x86_64).
#   Default for arm64: Debian 12's arm64 kernel package (apt-get download;
#   needs `dpkg --add-architecture arm64` and `apt-get update`), whose
#   image carries its BTF.
# The BTF of any kernel >= 5.8 of the architecture serves: the programs only
# read fields CO-RE checks at load time (bpf_core_field_exists).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src_root=$(cd "$here/.." && pwd)
arch=${1:?usage: tools/gen-vmlinux.sh x86|arm64 [SOURCE]}
case "$arch" in
x86 | arm64) ;;
*)
	echo "gen-vmlinux.sh: unknown architecture '$arch' (x86 or arm64)" >&2
	exit 2
	;;
esac
command -v bpftool >/dev/null || { echo "gen-vmlinux.sh: bpftool not found: apt-get install bpftool" >&2; exit 1; }
work=$(mktemp -d /tmp/gen-vmlinux.XXXXXX)
trap 'rm -rf "$work"' EXIT
source=${2:-}
if [ -z "$source" ]; then
	if [ "$arch" = x86 ]; then
		[ "$(uname -m)" = x86_64 ] || { echo "gen-vmlinux.sh: not an x86_64 machine: give SOURCE" >&2; exit 1; }
		source=/sys/kernel/btf/vmlinux
	else
		pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-arm64\).*/\1/p' | head -n 1)
		[ -n "$pkg" ] || {
			echo "gen-vmlinux.sh: Debian's arm64 kernel package is unknown to apt: run" \
				"'dpkg --add-architecture arm64 && apt-get update' first, or give SOURCE" >&2
			exit 1
		}
		(cd "$work" && apt-get download "$pkg:arm64" >/dev/null)
		dpkg-deb -x "$work"/*.deb "$work/pkg"
		source=$(ls "$work"/pkg/boot/vmlinuz-* | head -n 1)
		echo "gen-vmlinux.sh: using $pkg ($source)" >&2
	fi
fi
[ -r "$source" ] || { echo "gen-vmlinux.sh: cannot read $source" >&2; exit 1; }
btf=$source
# Not a BTF file nor an ELF: a kernel image; decompress and cut the blob.
magic=$(head -c 4 "$source" | od -An -tx1 | tr -d ' \n')
if [ "${magic:0:4}" != 9feb ] && [ "$magic" != 7f454c46 ]; then
	python3 "$here/btf-from-image.py" "$source" "$work/vmlinux.btf"
	btf=$work/vmlinux.btf
fi
mkdir -p "$src_root/vmlinux/$arch"
bpftool btf dump file "$btf" format c >"$work/vmlinux.h"
mv "$work/vmlinux.h" "$src_root/vmlinux/$arch/vmlinux.h"
echo "gen-vmlinux.sh: wrote vmlinux/$arch/vmlinux.h ($(wc -l <"$src_root/vmlinux/$arch/vmlinux.h") lines)" >&2
