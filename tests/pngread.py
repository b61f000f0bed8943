"""A small PNG reader for the chart tests: enough of the PNG specification (ISO 15948)
to check that an image is well formed and to look at its pixels."""

from __future__ import annotations

import struct
import zlib
from collections import Counter
from itertools import accumulate

_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> samples per pixel


def _add(a: int, b: int) -> int:
    return (a + b) & 255


def _unfilter(kind: int, line: bytearray, prev: bytearray, bpp: int) -> bytearray:
    """One scanline with its PNG filter (0 None, 1 Sub, 2 Up, 3 Average, 4 Paeth) undone."""
    if kind == 1:  # each byte adds the byte one pixel to its left: a running sum
        for c in range(bpp):
            line[c::bpp] = bytes(accumulate(line[c::bpp], _add))
    elif kind == 2:
        line = bytearray(map(_add, line, prev))
    elif kind in (3, 4):
        for i in range(len(line)):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], (prev[i - bpp] if i >= bpp else 0)
            if kind == 3:
                line[i] = _add(line[i], (left + up) // 2)
                continue
            p = left + up - corner
            near = min((abs(p - left), 0, left), (abs(p - up), 1, up), (abs(p - corner), 2, corner))
            line[i] = _add(line[i], near[2])
    else:
        assert kind == 0, f"filter type {kind}"
    return line


def read_png(png: bytes) -> tuple[int, int, int, bytes]:
    """Width, height, channels and the pixel bytes (filters undone) of an 8-bit,
    non-interlaced PNG; every chunk's CRC checked (PNG specification, ISO 15948)."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    pos, chunks, idat = 8, [], bytearray()
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind, data = png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", png[pos + 8 + length : pos + 12 + length])
        assert zlib.crc32(kind + data) == crc, kind
        chunks.append(kind)
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", data)
        elif kind == b"IDAT":
            idat += data
        pos += 12 + length
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks
    assert depth == 8 and interlace == 0 and colour in _CHANNELS
    bpp = _CHANNELS[colour]
    stride = 1 + width * bpp  # a filter-type byte, then the scanline
    raw = zlib.decompress(bytes(idat))
    assert len(raw) == height * stride
    pixels, prev = bytearray(), bytearray(stride - 1)
    for y in range(height):
        line = _unfilter(
            raw[y * stride], bytearray(raw[y * stride + 1 : (y + 1) * stride]), prev, bpp
        )
        pixels += line
        prev = line
    return width, height, bpp, bytes(pixels)


def drawn_share(png: bytes) -> float:
    """The share of pixels that differ from the most common one (the background)."""
    width, height, channels, pixels = read_png(png)
    assert len(pixels) == width * height * channels
    colours = Counter(pixels[i : i + channels] for i in range(0, len(pixels), channels))
    return 1 - colours.most_common(1)[0][1] / (width * height)
