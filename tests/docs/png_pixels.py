#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The size of a PNG and the colours of some of its pixels.

usage: png_pixels.py FILE [X,Y ...]

Prints "WIDTH HEIGHT", then one "#rrggbb" line per X,Y. Reads the 8-bit,
non-interlaced RGB and RGBA images Chromium writes (standard library
only). Exit 0, 1 on a file it cannot read, 2 on a usage error.
"""
import struct
import sys
import zlib


def chunks(data):
    """The (type, body) of each chunk after the PNG signature."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        yield kind, data[pos + 8:pos + 8 + length]
        pos += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    """The image's rows of bytes, each row's filter undone."""
    stride = width * bpp
    rows, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            add = (0, left, up, (left + up) // 2, paeth(left, up, corner))[kind]
            line[i] = (line[i] + add) & 0xFF
        rows.append(line)
        prev = line
    return rows


def read_png(path):
    """(width, height, bytes per pixel, rows)."""
    with open(path, "rb") as f:
        data = f.read()
    header, idat = None, b""
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    if header is None:
        raise ValueError("no IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("not 8-bit non-interlaced RGB(A)")
    bpp = 3 if colour == 2 else 4
    return width, height, bpp, unfilter(zlib.decompress(idat), width,
                                        height, bpp)


def main(argv):
    if not argv:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        width, height, bpp, rows = read_png(argv[0])
    except (OSError, ValueError, zlib.error) as e:
        print("png_pixels.py: %s: %s" % (argv[0], e), file=sys.stderr)
        return 1
    print(width, height)
    for point in argv[1:]:
        x, y = (int(v) for v in point.split(","))
        if not (0 <= x < width and 0 <= y < height):
            print("outside")
            continue
        pixel = rows[y][x * bpp:x * bpp + 3]
        print("#%02x%02x%02x" % tuple(pixel))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
