#!/usr/bin/env python3
"""Cuts the kernel's BTF blob out of a kernel image (vmlinuz / arm64 Image).

usage: btf-from-image.py IMAGE OUT

A kernel built with CONFIG_DEBUG_INFO_BTF carries its BTF in the image
(what /sys/kernel/btf/vmlinux exposes at run time). Distribution images are
compressed (arm64 Debian: gzip; x86 bzImage: a compressed payload after the
setup code): try the payload as is, then every gzip/xz/zstd stream found in
it. The blob starts with the BTF header (magic 0xeB9F, version 1, flags 0,
hdr_len 24) whose section lengths give its size; the largest valid one is
vmlinux's (modules' BTF are not in the image).
"""
import lzma
import struct
import sys
import zlib


def candidates(data):
    yield data
    # gzip streams: 1f 8b 08
    i = data.find(b"\x1f\x8b\x08")
    while i >= 0:
        try:
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            yield d.decompress(data[i:], 1 << 31)
        except zlib.error:
            pass
        i = data.find(b"\x1f\x8b\x08", i + 1)
    i = data.find(b"\xfd7zXZ\x00")
    if i >= 0:
        try:
            yield lzma.LZMADecompressor().decompress(data[i:])
        except lzma.LZMAError:
            pass


def find_btf(blob):
    best = None
    i = blob.find(b"\x9f\xeb\x01\x00")
    while i >= 0:
        if i + 24 <= len(blob):
            hdr_len, type_off, type_len, str_off, str_len = struct.unpack_from("<5I", blob, i + 4)
            end = i + hdr_len + max(type_off + type_len, str_off + str_len)
            if hdr_len == 24 and type_off == 0 and str_off == type_len and end <= len(blob) and type_len > 0:
                if best is None or end - i > best[1] - best[0]:
                    best = (i, end)
        i = blob.find(b"\x9f\xeb\x01\x00", i + 1)
    return best


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    for blob in candidates(data):
        found = find_btf(blob)
        if found and found[1] - found[0] > (1 << 20):
            with open(sys.argv[2], "wb") as out:
                out.write(blob[found[0] : found[1]])
            print("btf-from-image: %d bytes of BTF" % (found[1] - found[0]), file=sys.stderr)
            return 0
    print("btf-from-image: no BTF blob in %s (kernel built without CONFIG_DEBUG_INFO_BTF?)" % sys.argv[1],
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
