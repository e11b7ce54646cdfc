#!/bin/sh
# Turns an ELF file, in place, into what Fedora's find-debuginfo ships:
# stripped, with the symbols of functions not in .dynsym kept in an
# xz-compressed ELF in the .gnu_debugdata section ("minidebuginfo").
# usage: make_minidebuginfo.sh FILE
set -eu
f=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
nm -D "$f" --format=posix --defined-only | awk '{print $1}' | sort -u >"$t/dynsyms"
nm "$f" --format=posix --defined-only | awk '$2 ~ /^[TtWw]$/ {print $1}' | sort -u >"$t/funcsyms"
comm -13 "$t/dynsyms" "$t/funcsyms" >"$t/keep"
objcopy --only-keep-debug "$f" "$t/debug"
objcopy -S --remove-section .gdb_index --remove-section .comment --keep-symbols="$t/keep" \
	"$t/debug" "$t/mini"
xz -f "$t/mini"
strip --strip-all "$f"
objcopy --add-section .gnu_debugdata="$t/mini.xz" "$f"
