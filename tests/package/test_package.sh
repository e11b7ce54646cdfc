#!/usr/bin/env bash
# The .deb packages (tools/package.sh) for amd64 and arm64: each installs
# the binary, docs and cycle marker; no libbpf dependency (linked in:
# Ubuntu 22.04 has only libbpf0); every dependency is satisfied by the
# versions of Debian 12 and of Ubuntu 22.04 (JetPack 6), the two systems
# the README promises. Ubuntu 22.04 (jammy, jammy-updates) versions, from
# packages.ubuntu.com: libc6 2.35, libcjson1 1.7.15, libdw1/libelf1 0.186,
# libgcc-s1 12.3.0, libmicrohttpd12 0.9.75, libncursesw6/libtinfo6 6.3,
# libprotobuf-c1 1.3.3, zlib1g 1:1.2.11.
# The amd64 package's binary runs here (--version); the arm64 one under
# qemu-user. A ctest test of the cross build (pkg.test_package: run by
# tools/cross-build.sh arm64 --test, which installs the arm64 toolchain,
# libraries and qemu-user it needs, as root; CI: .ci/run).
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d /tmp/ep-test_package.XXXXXX)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL[test_package]: $*" >&2; exit 1; }
for arch in amd64 arm64; do
	tools/package.sh "$arch" "$work/dist" >/dev/null
	deb=$(ls "$work"/dist/ebpf-prof_*_"$arch".deb) || fail "no $arch package"
	deps=$(dpkg-deb -f "$deb" Depends)
	echo "[test_package] $arch: $deps"
	case "$deps" in *libbpf*) fail "$arch package depends on libbpf: $deps" ;; esac
	python3 - "$deps" <<'PY' || fail "$arch: a dependency Ubuntu 22.04 or Debian 12 cannot satisfy"
import subprocess, sys
have = {
    "ubuntu-22.04": {"libc6": "2.35", "libcjson1": "1.7.15", "libdw1": "0.186", "libelf1": "0.186",
                     "libgcc-s1": "12.3.0", "libmicrohttpd12": "0.9.75", "libncursesw6": "6.3",
                     "libtinfo6": "6.3", "libprotobuf-c1": "1.3.3", "zlib1g": "1:1.2.11"},
    "debian-12": {"libc6": "2.36", "libcjson1": "1.7.15", "libdw1": "0.188", "libelf1": "0.188",
                  "libgcc-s1": "12.2.0", "libmicrohttpd12": "0.9.75", "libncursesw6": "6.4",
                  "libtinfo6": "6.4", "libprotobuf-c1": "1.4.1", "zlib1g": "1:1.2.13"},
}
bad = []
for dep in sys.argv[1].split(","):
    alts = [a.strip() for a in dep.split("|")]
    for system, vers in have.items():
        ok = False
        for a in alts:
            name = a.split()[0].split(":")[0]
            if name not in vers:
                continue
            if "(" not in a:
                ok = True
                break
            op, ver = a[a.index("(") + 1:a.index(")")].split()
            ok = subprocess.run(["dpkg", "--compare-versions", vers[name], op, ver]).returncode == 0
            if ok:
                break
        if not ok:
            bad.append("%s on %s" % (dep.strip(), system))
for b in bad:
    print("  unsatisfied: " + b)
sys.exit(1 if bad else 0)
PY
	rm -rf "$work/x"
	dpkg-deb -x "$deb" "$work/x"
	for f in usr/bin/ebpf-prof usr/share/doc/ebpf-prof/README.md usr/share/ebpf-prof/cycle_marker/ebpf_prof_cycle.h; do
		[ -e "$work/x/$f" ] || fail "$arch package lacks /$f"
	done
	if [ "$arch" = amd64 ]; then
		"$work/x/usr/bin/ebpf-prof" --version | grep -q "^ebpf-prof " || fail "amd64 binary does not run"
	else
		qemu-aarch64 "$work/x/usr/bin/ebpf-prof" --version | grep -q "^ebpf-prof " || fail "arm64 binary does not run under qemu-user"
	fi
done
echo "PASS: test_package"
