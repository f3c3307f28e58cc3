#!/usr/bin/env python3
"""png-ink.py FILE.png: prints "WIDTHxHEIGHT INK COLOURED" for an 8-bit RGB(A)
PNG: INK the pixels darker than near-white (any channel < 200), COLOURED
those of them whose channels differ by more than 60 (chart bars, not grey
text). The standard library only (zlib): the tests install no Python
packages."""
import struct
import sys
import zlib


def rows(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour, _, _, interlace = hdr
    if depth != 8 or colour not in (2, 6) or interlace:
        sys.exit(f"{path}: not 8-bit RGB(A), non-interlaced")
    bpp = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev = bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pred) & 255
        yield width, height, bpp, line
        prev = line


def main():
    ink = coloured = 0
    for width, height, bpp, line in rows(sys.argv[1]):
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            if min(r, g, b) < 200:
                ink += 1
                if max(r, g, b) - min(r, g, b) > 60:
                    coloured += 1
    print(f"{width}x{height} {ink} {coloured}")


main()
