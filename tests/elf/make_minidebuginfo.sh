#!/bin/sh
# Turns an ELF file, in place, into what Fedora's find-debuginfo ships:
# stripped, with the symbols of functions not in .dynsym kept in an
# xz-compressed ELF in the .gnu_debugdata section ("minidebuginfo").
# usage: [NM=.. OBJCOPY=.. STRIP=..] make_minidebuginfo.sh FILE
set -eu
f=$1
NM=${NM:-nm}
OBJCOPY=${OBJCOPY:-objcopy}
STRIP=${STRIP:-strip}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
"$NM" -D "$f" --format=posix --defined-only | awk '{print $1}' | sort -u >"$t/dynsyms"
"$NM" "$f" --format=posix --defined-only | awk '$2 ~ /^[TtWw]$/ {print $1}' | sort -u >"$t/funcsyms"
comm -13 "$t/dynsyms" "$t/funcsyms" >"$t/keep"
"$OBJCOPY" --only-keep-debug "$f" "$t/debug"
"$OBJCOPY" -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$t/keep" \
	"$t/debug" "$t/mini"
xz -f "$t/mini"
"$STRIP" --strip-all "$f"
"$OBJCOPY" --add-section .gnu_debugdata="$t/mini.xz" "$f"
