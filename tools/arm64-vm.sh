#!/usr/bin/env bash
# Runs ebpf-prof on an emulated arm64 machine and brings its results back.
#
# usage: tools/arm64-vm.sh -o OUTDIR [EBPF_PROF_OPTIONS] -- PROGRAM [ARGS...]
#   Boots Debian 12's arm64 kernel (with BTF) under qemu-system-aarch64
#   (software emulation: this machine has no KVM) with a root filesystem in
#   RAM built here from Debian packages (busybox-static:arm64, the
#   cross-built ebpf-prof and the :arm64 libraries it links), runs
#     ebpf-prof -o /result EBPF_PROF_OPTIONS -- PROGRAM ARGS
#   as root, and copies /result to OUTDIR. PROGRAM is an arm64 binary
#   (static, or linked only with libraries the image holds: libc, libm,
#   libpthread, libdl, libsqlite3). Exit status: ebpf-prof's; 125 when the
#   VM could not run it.
# Environment:
#   EP_ARM64_BIN    the arm64 ebpf-prof (default build-arm64/ebpf-prof;
#                   tools/cross-build.sh arm64 makes it)
#   EP_VM_CACHE     where the kernel and busybox packages are kept
#                   (default ${XDG_CACHE_HOME:-~/.cache}/ebpf-prof/arm64-vm)
#   EP_VM_TIMEOUT   seconds before the VM is killed (default 600)
#   EP_VM_FILES     extra files to copy into the VM's / (space-separated)
#                   (not under /tmp: a tmpfs in the VM)
#   EP_VM_KERNEL    which kernel to boot: unset, the default, is Debian 12's
#                   (6.1, from apt); a Debian suite name (bullseye: 5.10, the
#                   JetPack 5 stand-in) boots that suite's linux-image-arm64,
#                   resolved from deb.debian.org's Packages index for it
#                   (archive.debian.org's once the suite has moved there;
#                   EP_VM_MIRROR=URL for another) and checked against the
#                   index's SHA256, cached as EP_VM_CACHE/vmlinuz-SUITE (its
#                   config beside it)
#   EP_VM_FETCH_ONLY  1: download the kernel and busybox into the cache, no boot
#   EP_VM_LOG       where to keep the console log (default OUTDIR/console.log)
#   EP_VM_PRE       a shell script run in the VM before ebpf-prof (debugging;
#                   PROGRAM is /opt/ep/NAME, its output goes to the console)
#   EP_VM_PROGS     more arm64 programs to copy to /opt/ep/ (space-separated)
#   EP_VM_RUNS      a file of more runs in the same boot, after the first:
#                   one a line, "NAME EBPF_PROF_ARGS..." (shell words; programs
#                   as /opt/ep/NAME); results in OUTDIR/runs/NAME, exit status
#                   in OUTDIR/runs/NAME.rc. A line "! COMMAND" runs a shell
#                   command there instead (e.g. to hide a file from the
#                   runs after it); /result/out/runs is OUTDIR/runs.
# The console carries the results: /result as a base64 tar between marker
# lines, so no virtio-9p or disk driver (modules) is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
usage() { sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

out=""
opts=()
while [ $# -gt 0 ]; do
	case "$1" in
	-o)
		[ $# -ge 2 ] || usage
		out=$2
		shift 2
		;;
	--)
		shift
		break
		;;
	-h | --help) usage ;;
	*)
		opts+=("$1")
		shift
		;;
	esac
done
[ -n "$out" ] && [ $# -ge 1 ] || usage
prog=$1
shift
[ -f "$prog" ] || { echo "arm64-vm.sh: no such program: $prog" >&2; exit 2; }
file -L "$prog" | grep -q "ARM aarch64" || { echo "arm64-vm.sh: $prog is not an arm64 binary" >&2; exit 2; }
bin=${EP_ARM64_BIN:-$src/build-arm64/ebpf-prof}
[ -x "$bin" ] || { echo "arm64-vm.sh: no arm64 ebpf-prof at $bin: run tools/cross-build.sh arm64" >&2; exit 2; }
command -v qemu-system-aarch64 >/dev/null || { echo "arm64-vm.sh: qemu-system-aarch64 missing: apt-get install qemu-system-arm" >&2; exit 2; }
command -v cpio >/dev/null || { echo "arm64-vm.sh: cpio missing: apt-get install cpio" >&2; exit 2; }

cache=${EP_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ebpf-prof/arm64-vm}
mkdir -p "$cache"
# The kernel and busybox, downloaded once (Debian's arm64 packages; needs
# `dpkg --add-architecture arm64`, which tools/cross-build.sh does).
if [ ! -f "$cache/vmlinuz" ] || [ ! -f "$cache/busybox" ]; then
	pkg=$(apt-cache depends linux-image-arm64:arm64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-arm64\).*/\1/p' | head -n 1)
	[ -n "$pkg" ] || { echo "arm64-vm.sh: apt does not know Debian's arm64 kernel: run tools/cross-build.sh arm64 first" >&2; exit 2; }
	dl=$(mktemp -d /tmp/arm64-vm-dl.XXXXXX)
	(cd "$dl" && apt-get download "$pkg:arm64" busybox-static:arm64 >/dev/null 2>&1) ||
		{ rm -rf "$dl"; echo "arm64-vm.sh: cannot download $pkg and busybox-static (arm64)" >&2; exit 2; }
	for d in "$dl"/*.deb; do dpkg-deb -x "$d" "$dl/x"; done
	cp "$dl"/x/boot/vmlinuz-* "$cache/vmlinuz.tmp" && mv "$cache/vmlinuz.tmp" "$cache/vmlinuz"
	cp "$dl/x/bin/busybox" "$cache/busybox.tmp" && mv "$cache/busybox.tmp" "$cache/busybox"
	rm -rf "$dl"
fi
# Another suite's kernel: one Debian URL pattern, the version read from the
# suite's Packages index (a point release replaces it; a pinned name would
# disappear from the archive).
kernel=$cache/vmlinuz
if [ -n "${EP_VM_KERNEL:-}" ]; then
	suite=$EP_VM_KERNEL
	case "$suite" in *[!a-z-]* | "") echo "arm64-vm.sh: EP_VM_KERNEL=$suite: not a Debian suite name" >&2; exit 2 ;; esac
	kernel=$cache/vmlinuz-$suite
	if [ ! -f "$kernel" ]; then
		dl=$(mktemp -d /tmp/arm64-vm-dl.XXXXXX)
		fail_dl() { rm -rf "$dl"; echo "arm64-vm.sh: cannot fetch $suite's arm64 kernel: $*" >&2; exit 2; }
		# Old suites leave deb.debian.org for archive.debian.org, same layout.
		tried=""
		for mirror in ${EP_VM_MIRROR:-http://deb.debian.org/debian http://archive.debian.org/debian}; do
			tried="$tried $mirror/dists/$suite/main/binary-arm64/Packages.xz"
			curl -fsS --retry 3 -o "$dl/Packages.xz" "$mirror/dists/$suite/main/binary-arm64/Packages.xz" 2>/dev/null && break
			rm -f "$dl/Packages.xz"
		done
		[ -f "$dl/Packages.xz" ] || fail_dl "none of$tried downloadable"
		xz -dc "$dl/Packages.xz" >"$dl/Packages" || fail_dl "Packages.xz is not xz"
		# The stanza of a package: its Depends, Filename, SHA256.
		field() { awk -v p="$1" -v f="$2:" '$1 == "Package:" {in_p = ($2 == p)} in_p && $1 == f {sub(/^[^ ]+ /, ""); print; exit}' "$dl/Packages"; }
		pkg=$(field linux-image-arm64 Depends | sed -n 's/^\(linux-image-[0-9][^ ,]*-arm64\).*/\1/p')
		[ -n "$pkg" ] || fail_dl "no linux-image-arm64 in the index"
		file=$(field "$pkg" Filename)
		sum=$(field "$pkg" SHA256)
		[ -n "$file" ] && [ -n "$sum" ] || fail_dl "no Filename/SHA256 for $pkg in the index"
		curl -fsS --retry 3 -o "$dl/k.deb" "$mirror/$file" || fail_dl "$mirror/$file not downloadable"
		echo "$sum  $dl/k.deb" | sha256sum -c --quiet - >/dev/null 2>&1 || fail_dl "$file: SHA256 differs from the index"
		dpkg-deb -x "$dl/k.deb" "$dl/x" || fail_dl "$file is not a .deb"
		cp "$dl"/x/boot/config-* "$kernel.config"
		cp "$dl"/x/boot/vmlinuz-* "$kernel.tmp" && mv "$kernel.tmp" "$kernel"
		rm -rf "$dl"
	fi
fi
# EP_VM_FETCH_ONLY=1: only fill the cache (a test cuts the BTF out of the
# kernel image before booting it).
[ -z "${EP_VM_FETCH_ONLY:-}" ] || exit 0

work=$(mktemp -d /tmp/arm64-vm.XXXXXX)
qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,result,lib,usr/lib,opt/ep}
cp "$cache/busybox" "$root/bin/busybox"
for a in sh mount mkdir cat echo tar base64 poweroff sleep ls uname chmod mknod ln rm dmesg gzip cp; do
	ln -s busybox "$root/bin/$a"
done
# ebpf-prof and PROGRAM with every shared library they load, from the
# multiarch :arm64 packages (ldd cannot run an arm64 binary: read DT_NEEDED).
copy_with_libs() {
	local f=$1 lib path
	for lib in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$root/lib/$lib" ] && continue
		path=""
		for d in /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib; do
			[ -e "$d/$lib" ] && { path=$d/$lib; break; }
		done
		[ -n "$path" ] || { echo "arm64-vm.sh: $(basename "$f") needs $lib, not installed for arm64" >&2; exit 2; }
		cp -L "$path" "$root/lib/$lib"
		copy_with_libs "$path"
	done
}
cp "$bin" "$root/opt/ep/ebpf-prof"
copy_with_libs "$bin"
pname=$(basename "$prog")
cp "$prog" "$root/opt/ep/$pname"
copy_with_libs "$prog"
interp=$(readelf -l "$prog" "$bin" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p' | sort -u)
for i in $interp; do
	mkdir -p "$root/$(dirname "$i")"
	cp -L "$i" "$root/$i"
done
for p in ${EP_VM_PROGS:-}; do
	cp "$p" "$root/opt/ep/$(basename "$p")"
	copy_with_libs "$p"
	interp=$(readelf -l "$p" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
	for i in $interp; do
		mkdir -p "$root/$(dirname "$i")"
		cp -L "$i" "$root/$i"
	done
done
[ -z "${EP_VM_RUNS:-}" ] || cp "$EP_VM_RUNS" "$root/opt/ep/runs"
if [ -n "${EP_VM_PRE:-}" ]; then
	cp "$EP_VM_PRE" "$root/opt/ep/pre.sh"
	chmod +x "$root/opt/ep/pre.sh"
fi
for f in ${EP_VM_FILES:-}; do
	mkdir -p "$root/$(dirname "$f")"
	cp -a "$f" "$root/$f"
done
# The command line, one shell-quoted word each.
{
	printf 'set --'
	printf ' %q' "${opts[@]+"${opts[@]}"}" -- "/opt/ep/$pname" "$@"
	printf '\n'
} >"$root/opt/ep/args"
cat >"$root/init" <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin:/opt/ep LD_LIBRARY_PATH=/lib
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
mount -t debugfs nodev /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
echo "EP-VM: kernel $(uname -r) $(uname -m)"
[ -x /opt/ep/pre.sh ] && /opt/ep/pre.sh
. /opt/ep/args
/opt/ep/ebpf-prof -o /result/out "$@"
rc=$?
if [ -f /opt/ep/runs ]; then
	mkdir -p /result/out/runs
	while read -r name line; do
		[ -n "$name" ] || continue
		if [ "$name" = "!" ]; then
			echo "EP-VM-CMD: $line"
			eval "$line"
			continue
		fi
		eval "set -- $line"
		echo "EP-VM-RUN: $name $(cat /proc/uptime)"
		/opt/ep/ebpf-prof -o "/result/out/runs/$name" "$@"
		echo $? >"/result/out/runs/$name.rc"
	done </opt/ep/runs
fi
echo "EP-VM-RC: $rc $(cat /proc/uptime)"
echo "EP-VM-TAR-BEGIN"
cd /result && tar cf - out 2>/dev/null | gzip | base64
echo "EP-VM-TAR-END"
poweroff -f
EOF
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$work/initrd.gz"

log=${EP_VM_LOG:-}
mkdir -p "$out"
[ -n "$log" ] || log=$out/console.log
start=$(date +%s)
qemu-system-aarch64 -M virt -cpu max -smp 2 -m 2048 -nographic -no-reboot -nic none \
	-kernel "$kernel" -initrd "$work/initrd.gz" \
	-append "console=ttyAMA0 rdinit=/init panic=-1 quiet loglevel=3" >"$log" 2>&1 &
qpid=$!
deadline=$((start + ${EP_VM_TIMEOUT:-600}))
booted=""
while kill -0 "$qpid" 2>/dev/null; do
	# Boot time (to the init script, 1 s resolution) apart from the runs.
	[ -n "$booted" ] || ! grep -q "^EP-VM: kernel" "$log" || booted=$(($(date +%s) - start))
	if [ "$(date +%s)" -ge "$deadline" ]; then
		kill "$qpid" 2>/dev/null
		echo "arm64-vm.sh: the VM did not finish in ${EP_VM_TIMEOUT:-600} s (console: $log)" >&2
		exit 125
	fi
	sleep 1
done
qpid=""
rc=$(tr -d '\r' <"$log" | sed -n 's/^EP-VM-RC: \([0-9]*\).*$/\1/p' | tail -n 1)
[ -n "$rc" ] || { echo "arm64-vm.sh: ebpf-prof did not run in the VM (console: $log)" >&2; exit 125; }
tr -d '\r' <"$log" | sed -n '/^EP-VM-TAR-BEGIN$/,/^EP-VM-TAR-END$/p' | sed '1d;$d' | base64 -d | gunzip |
	tar xf - -C "$out" --strip-components=1 ||
	{ echo "arm64-vm.sh: the results did not come back whole (console: $log)" >&2; exit 125; }
echo "arm64-vm.sh: rc $rc in $(($(date +%s) - start)) s (booted in ${booted:-?} s); results in $out" >&2
exit "$rc"
