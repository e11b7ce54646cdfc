#!/usr/bin/env bash
# Runs ebpf-prof on an emulated machine booting a Debian kernel and brings
# its results back.
#
# usage: tools/vm.sh [--arch x86_64|arm64] [--kernel SUITE] -o OUTDIR
#                    [EBPF_PROF_OPTIONS] -- PROGRAM [ARGS...]
#   Boots the linux-image-ARCH of Debian suite SUITE (bullseye: 5.10,
#   bookworm: 6.1, the default, trixie: 6.12, sid: the newest), or with
#   SUITE jammy Ubuntu 22.04's generic kernel (5.15, JetPack 6's series: the
#   newest of jammy-updates; every one has BTF built in, checked in its
#   config) under qemu-system-x86_64 or qemu-system-aarch64 (software
#   emulation: this machine has no KVM; --arch defaults to the host's) with
#   a root filesystem in RAM built here from busybox-static, ebpf-prof and
#   the libraries it links, runs
#     ebpf-prof -o /result EBPF_PROF_OPTIONS -- PROGRAM ARGS
#   as root, and copies /result to OUTDIR, with ebpf-prof's stderr (and the
#   program's) in OUTDIR/stderr.txt. PROGRAM is a binary of ARCH (static,
#   or linked only with libraries the image holds: libc, libm, libpthread,
#   libdl, libsqlite3). Exit status: ebpf-prof's; 125 when the VM could not
#   run it.
# The kernel and busybox come from the suite's Packages index on Debian's
# mirror (the archive's once a suite has moved there; EP_VM_MIRROR=URL for
# another), jammy's from Ubuntu's (archive.ubuntu.com for x86_64,
# ports.ubuntu.com for arm64; EP_VM_UBUNTU_MIRROR=URL for another: the
# image from linux-image-unsigned-ABI, its config from linux-modules-ABI),
# checked against the index's SHA256 and cached: no apt source or foreign
# dpkg architecture is needed, and a second run downloads nothing. A
# kernel that cannot be fetched, or whose config lacks BTF or what the VM
# needs built in (it loads no module), is an error (exit 2) naming what
# failed.
# Environment:
#   EP_VM_BIN       the ebpf-prof to run (default build/ebpf-prof for x86_64,
#                   build-arm64/ebpf-prof for arm64: tools/cross-build.sh
#                   arm64 makes it; EP_ARM64_BIN is read too for arm64)
#   EP_VM_KERNEL    the suite when --kernel is not given
#   EP_VM_MIRROR, EP_VM_UBUNTU_MIRROR   Debian's, Ubuntu's mirror (above)
#   EP_VM_CACHE     where kernels and busybox are kept, in ARCH-vm/ under it
#                   (default ${XDG_CACHE_HOME:-~/.cache}/ebpf-prof): for each
#                   suite vmlinuz-SUITE, its .config and .version beside it
#   EP_VM_TIMEOUT   seconds before the VM is killed (default 600)
#   EP_VM_FILES     extra files to copy into the VM's / (space-separated)
#                   (not under /tmp: a tmpfs in the VM)
#   EP_VM_FETCH_ONLY  1: download the kernel and busybox into the cache, print
#                   the kernel image's path, no boot
#   EP_VM_LOG       where to keep the console log (default OUTDIR/console.log)
#   EP_VM_PRE       a shell script run in the VM before ebpf-prof (debugging;
#                   PROGRAM is /opt/ep/NAME, its output goes to the console)
#   EP_VM_PROGS     more programs to copy to /opt/ep/ (space-separated)
#   EP_VM_RUNS      a file of more runs in the same boot, after the first:
#                   one a line, "NAME EBPF_PROF_ARGS..." (shell words; programs
#                   as /opt/ep/NAME); results in OUTDIR/runs/NAME (its stderr
#                   in stderr.txt there), exit status in OUTDIR/runs/NAME.rc.
#                   A line "! COMMAND" runs a shell command there instead
#                   (e.g. to hide a file from the runs after it);
#                   /result/out/runs is OUTDIR/runs.
# OUTDIR/vm.env gets the run's facts as shell assignments: arch, suite,
# release (uname -r in the VM), boot_s (to the init script), total_s, rc.
# The console carries the results: /result as a base64 tar between marker
# lines, so no virtio-9p or disk driver (modules) is needed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
me=vm.sh
usage() { sed -n '5,/^[^#]/{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "$me: $*" >&2; exit 2; }

arch=$(uname -m)
suite=${EP_VM_KERNEL:-bookworm}
out=""
opts=()
while [ $# -gt 0 ]; do
	case "$1" in
	--arch | --kernel | -o)
		[ $# -ge 2 ] || usage
		case "$1" in
		--arch) arch=$2 ;;
		--kernel) suite=$2 ;;
		-o) out=$2 ;;
		esac
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
case "$suite" in *[!a-z-]* | "") die "--kernel $suite: not a Debian suite name (nor jammy)" ;; esac
case "$arch" in
x86_64 | amd64)
	arch=x86_64
	debarch=amd64
	qemu=qemu-system-x86_64
	qpkg=qemu-system-x86
	magic="x86-64"
	console=ttyS0
	serial=SERIAL_8250_CONSOLE
	ubuntu_mirror=http://archive.ubuntu.com/ubuntu
	# One host thread runs both vCPUs: with qemu 7.2's multi-threaded TCG
	# a guest's live code patching (text_poke_bp: int3, sync, patch) raced
	# the other vCPU, which still ran the int3 ("Oops: int3" in
	# finish_task_switch, 6.12 and 7.2, while ebpf-prof check attached
	# and detached its programs).
	machine=(-M pc -cpu max -accel tcg,thread=single)
	bin=${EP_VM_BIN:-$src/build/ebpf-prof}
	;;
arm64 | aarch64)
	arch=arm64
	debarch=arm64
	qemu=qemu-system-aarch64
	qpkg=qemu-system-arm
	magic="ARM aarch64"
	console=ttyAMA0
	serial=SERIAL_AMBA_PL011_CONSOLE
	ubuntu_mirror=http://ports.ubuntu.com/ubuntu-ports
	machine=(-M virt -cpu max)
	bin=${EP_VM_BIN:-${EP_ARM64_BIN:-$src/build-arm64/ebpf-prof}}
	;;
*) die "--arch $arch: x86_64 or arm64" ;;
esac
me="vm.sh[$arch/$suite]"
prog=$1
shift
[ -f "$prog" ] || die "no such program: $prog"
file -L "$prog" | grep -q "$magic" || die "$prog is not an $arch binary"
[ -x "$bin" ] || die "no $arch ebpf-prof at $bin (EP_VM_BIN; arm64: tools/cross-build.sh arm64)"
command -v "$qemu" >/dev/null || die "$qemu missing: apt-get install $qpkg"
command -v cpio >/dev/null || die "cpio missing: apt-get install cpio"
command -v curl >/dev/null || die "curl missing: apt-get install curl"

cache=${EP_VM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ebpf-prof}/$arch-vm
mkdir -p "$cache"
kernel=$cache/vmlinuz-$suite
dl=""
cleanup_dl() { [ -z "$dl" ] || rm -rf "$dl"; }
trap cleanup_dl EXIT
fail_dl() { echo "$me: cannot fetch $*" >&2; exit 2; }
# The Packages index of a suite, once per run. Old suites leave the main
# mirror for the archive, same layout: both are tried.
suite_index() {
	local s=$1 m tried=""
	[ -f "$dl/Packages-$s" ] && return 0
	local mirrors=${EP_VM_MIRROR:-http://deb.debian.org/debian http://archive.debian.org/debian} what="Debian $s"
	case "$s" in
	jammy*)
		mirrors=${EP_VM_UBUNTU_MIRROR:-$ubuntu_mirror}
		what="Ubuntu $s"
		;;
	esac
	for m in $mirrors; do
		tried="$tried $m/dists/$s/main/binary-$debarch/Packages.xz"
		if curl -fsS --retry 3 --connect-timeout 20 -o "$dl/Packages-$s.xz" "$m/dists/$s/main/binary-$debarch/Packages.xz" 2>/dev/null; then
			echo "$m" >"$dl/mirror-$s"
			xz -dc "$dl/Packages-$s.xz" >"$dl/Packages-$s" || fail_dl "$s's index: $m's Packages.xz is not xz"
			return 0
		fi
	done
	fail_dl "$what's $debarch index: none of$tried downloadable (mirror down or no network?)"
}
# A field of a package's stanza in a suite's index.
field() { awk -v p="$2" -v f="$3:" '$1 == "Package:" {in_p = ($2 == p)} in_p && $1 == f {sub(/^[^ ]+ /, ""); print; exit}' "$dl/Packages-$1"; }
# Downloads package $2 of suite $1, checks it against the index's SHA256
# and unpacks it into $dl/x-$2.
fetch_deb() {
	local s=$1 p=$2 file sum m
	suite_index "$s"
	file=$(field "$s" "$p" Filename)
	sum=$(field "$s" "$p" SHA256)
	[ -n "$file" ] && [ -n "$sum" ] || fail_dl "$p: no Filename/SHA256 in $s's $debarch index"
	m=$(cat "$dl/mirror-$s")
	curl -fsS --retry 3 --connect-timeout 20 -o "$dl/$p.deb" "$m/$file" || fail_dl "$p: $m/$file not downloadable"
	echo "$sum  $dl/$p.deb" | sha256sum -c --quiet - >/dev/null 2>&1 || fail_dl "$p: $file's SHA256 differs from the index"
	dpkg-deb -x "$dl/$p.deb" "$dl/x-$p" || fail_dl "$p: $file is not a .deb"
	echo "$p $(field "$s" "$p" Version)" >"$dl/version-$p"
}
# What the VM needs built into a kernel (it loads no module) and what
# ebpf-prof needs (BTF), from the kernel's config.
kernel_checks() {
	local c=$1 what=$2 o missing=""
	for o in DEBUG_INFO_BTF BPF_SYSCALL BLK_DEV_INITRD RD_GZIP DEVTMPFS $serial; do
		grep -q "^CONFIG_$o=y" "$c" || missing="$missing CONFIG_$o"
	done
	[ -z "$missing" ] || fail_dl "$what: not built in:$missing"
}
if [ ! -f "$kernel" ] && [ "$suite" = jammy ]; then
	# Ubuntu 22.04's kernel, 5.15 (JetPack 6's series): the newest of
	# jammy-updates. linux-image-generic names the ABI; the image comes
	# from linux-image-unsigned-ABI (the signed one differs only in its
	# EFI signature), its config from linux-modules-ABI. The VM loads no
	# module: console, initramfs and devtmpfs are built in (checked below).
	dl=$(mktemp -d /tmp/vm-dl.XXXXXX)
	suite_index jammy-updates
	pkg=$(field jammy-updates linux-image-generic Depends | tr ',|' '\n\n' |
		sed -n 's/^ *\(linux-image-[0-9][^ ]*-generic\)\( .*\)\{0,1\}$/\1/p' | head -n 1)
	[ -n "$pkg" ] || fail_dl "Ubuntu jammy's kernel: no linux-image-generic in jammy-updates' $debarch index"
	abi=${pkg#linux-image-}
	fetch_deb jammy-updates "linux-image-unsigned-$abi"
	fetch_deb jammy-updates "linux-modules-$abi"
	img=$(ls "$dl/x-linux-image-unsigned-$abi"/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
	cfg=$(ls "$dl/x-linux-modules-$abi"/boot/config-* 2>/dev/null | head -n 1 || true)
	[ -n "$img" ] || fail_dl "Ubuntu jammy's kernel: no vmlinuz in linux-image-unsigned-$abi"
	[ -n "$cfg" ] || fail_dl "Ubuntu jammy's kernel: no config in linux-modules-$abi"
	kernel_checks "$cfg" "Ubuntu jammy's $abi"
	cp "$cfg" "$kernel.config"
	cp "$dl/version-linux-image-unsigned-$abi" "$kernel.version"
	cp "$img" "$kernel.tmp" && mv "$kernel.tmp" "$kernel"
fi
if [ ! -f "$kernel" ]; then
	dl=$(mktemp -d /tmp/vm-dl.XXXXXX)
	suite_index "$suite"
	# The metapackage names this release's image; a point release replaces
	# it, so a pinned name would disappear from the mirror.
	pkg=$(field "$suite" "linux-image-$debarch" Depends | tr ',|' '\n\n' |
		sed -n "s/^ *\(linux-image-[0-9][^ ]*-$debarch\)\( .*\)\{0,1\}$/\1/p" | head -n 1)
	[ -n "$pkg" ] || fail_dl "Debian $suite's kernel: no linux-image-$debarch in its $debarch index"
	fetch_deb "$suite" "$pkg"
	# Up to trixie the image package holds /boot/vmlinuz-ABI and its
	# config; sid splits it into linux-binary-ABI (the image, under
	# /usr/lib/modules/ABI/) and linux-base-ABI (the config there).
	img=$(ls "$dl/x-$pkg"/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
	cfg=$(ls "$dl/x-$pkg"/boot/config-* 2>/dev/null | head -n 1 || true)
	if [ -z "$img" ]; then
		abi=${pkg#linux-image-}
		fetch_deb "$suite" "linux-binary-$abi"
		fetch_deb "$suite" "linux-base-$abi"
		img=$(ls "$dl/x-linux-binary-$abi"/usr/lib/modules/*/vmlinuz 2>/dev/null | head -n 1 || true)
		cfg=$(ls "$dl/x-linux-base-$abi"/usr/lib/modules/*/config 2>/dev/null | head -n 1 || true)
	fi
	[ -n "$img" ] || fail_dl "Debian $suite's kernel: no vmlinuz in $pkg (nor in linux-binary-${pkg#linux-image-})"
	[ -n "$cfg" ] || fail_dl "Debian $suite's kernel: no config beside its vmlinuz"
	kernel_checks "$cfg" "Debian $suite's $pkg"
	cp "$cfg" "$kernel.config"
	cp "$dl/version-$pkg" "$kernel.version"
	cp "$img" "$kernel.tmp" && mv "$kernel.tmp" "$kernel"
fi
# busybox from Debian 12 for every kernel: the init script's shell and
# tools need nothing newer.
if [ ! -f "$cache/busybox" ]; then
	[ -n "$dl" ] || dl=$(mktemp -d /tmp/vm-dl.XXXXXX)
	fetch_deb bookworm busybox-static
	cp "$dl/x-busybox-static/bin/busybox" "$cache/busybox.tmp" && mv "$cache/busybox.tmp" "$cache/busybox"
fi
cleanup_dl
dl=""
if [ -n "${EP_VM_FETCH_ONLY:-}" ]; then
	echo "$kernel"
	exit 0
fi

work=$(mktemp -d /tmp/vm.XXXXXX)
qpid=""
trap '[ -n "$qpid" ] && kill "$qpid" 2>/dev/null; rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,result,lib,usr/lib,opt/ep}
cp "$cache/busybox" "$root/bin/busybox"
for a in sh mount mkdir cat echo tar base64 poweroff sleep ls uname chmod mknod ln rm dmesg gzip cp mv tee true; do
	ln -s busybox "$root/bin/$a"
done
# Every shared library a binary loads, into /lib (LD_LIBRARY_PATH in the
# VM), and its program interpreter at its own path. x86_64: ldd, which
# resolves as the loader does. arm64: ldd cannot run a foreign binary, so
# DT_NEEDED is followed through the multiarch :arm64 packages.
copy_with_libs() {
	local f=$1 lib path i
	if [ "$arch" = x86_64 ]; then
		# A static binary: ldd says so and exits 1.
		for path in $(ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
			case "$path" in
			*/ld-linux*) mkdir -p "$root/$(dirname "$path")" && cp -L "$path" "$root/$path" ;;
			*) [ -e "$root/lib/$(basename "$path")" ] || cp -L "$path" "$root/lib/" ;;
			esac
		done
		return 0
	fi
	for lib in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		[ -e "$root/lib/$lib" ] && continue
		path=""
		for d in /usr/lib/aarch64-linux-gnu /lib/aarch64-linux-gnu /usr/aarch64-linux-gnu/lib; do
			[ -e "$d/$lib" ] && { path=$d/$lib; break; }
		done
		[ -n "$path" ] || die "$(basename "$f") needs $lib, not installed for arm64"
		cp -L "$path" "$root/lib/$lib"
		copy_with_libs "$path"
	done
	for i in $(readelf -l "$f" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p'); do
		mkdir -p "$root/$(dirname "$i")"
		cp -L "$i" "$root/$i"
	done
}
cp "$bin" "$root/opt/ep/ebpf-prof"
copy_with_libs "$bin"
pname=$(basename "$prog")
cp "$prog" "$root/opt/ep/$pname"
copy_with_libs "$prog"
for p in ${EP_VM_PROGS:-}; do
	cp "$p" "$root/opt/ep/$(basename "$p")"
	copy_with_libs "$p"
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
# A line of its own: the firmware leaves escape sequences unterminated.
echo
echo "EP-VM: kernel $(uname -r) $(uname -m)"
[ -x /opt/ep/pre.sh ] && /opt/ep/pre.sh
# One recording: its stderr both on the console (where the tests have read
# it since before stderr.txt) and in DIR/stderr.txt; its stdout (the
# program's) on the console only.
exec 3>&1
record() {
	d=$1
	shift
	{ /opt/ep/ebpf-prof -o "$d" "$@" 2>&1 1>&3 3>&-; echo $? >/tmp/ep.rc; } | tee /tmp/ep.err
	mkdir -p "$d"
	mv /tmp/ep.err "$d/stderr.txt"
	return "$(cat /tmp/ep.rc)"
}
. /opt/ep/args
rc=0
record /result/out "$@" || rc=$?
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
		r=0
		record "/result/out/runs/$name" "$@" || r=$?
		echo $r >"/result/out/runs/$name.rc"
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
# Created before qemu starts: the wait loop below reads it at once.
: >"$log"
"$qemu" "${machine[@]}" -smp 2 -m 2048 -nographic -no-reboot -nic none \
	-kernel "$kernel" -initrd "$work/initrd.gz" \
	-append "console=$console rdinit=/init panic=-1 quiet loglevel=3" >"$log" 2>&1 &
qpid=$!
deadline=$((start + ${EP_VM_TIMEOUT:-600}))
booted=""
while kill -0 "$qpid" 2>/dev/null; do
	# Boot time (to the init script, 1 s resolution) apart from the runs.
	[ -n "$booted" ] || ! grep -q "EP-VM: kernel" "$log" || booted=$(($(date +%s) - start))
	if [ "$(date +%s)" -ge "$deadline" ]; then
		kill "$qpid" 2>/dev/null
		echo "$me: the VM did not finish in ${EP_VM_TIMEOUT:-600} s (console: $log)" >&2
		exit 125
	fi
	sleep 1
done
qpid=""
total=$(($(date +%s) - start))
release=$(tr -d '\r' <"$log" | sed -n 's/^.*EP-VM: kernel \([^ ]*\) .*/\1/p' | head -n 1)
rc=$(tr -d '\r' <"$log" | sed -n 's/^EP-VM-RC: \([0-9]*\).*$/\1/p' | tail -n 1)
printf 'arch=%s\nsuite=%s\nrelease=%s\nboot_s=%s\ntotal_s=%s\nrc=%s\n' \
	"$arch" "$suite" "${release:-}" "${booted:-}" "$total" "${rc:-}" >"$out/vm.env"
[ -n "$rc" ] || { echo "$me: ebpf-prof did not run in the VM (console: $log)" >&2; exit 125; }
tr -d '\r' <"$log" | sed -n '/^EP-VM-TAR-BEGIN$/,/^EP-VM-TAR-END$/p' | sed '1d;$d' | base64 -d | gunzip |
	tar xf - -C "$out" --strip-components=1 ||
	{ echo "$me: the results did not come back whole (console: $log)" >&2; exit 125; }
echo "$me: kernel ${release:-?}, rc $rc in $total s (booted in ${booted:-?} s); results in $out" >&2
exit "$rc"
