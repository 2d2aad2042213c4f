"""What a printed sheet measures: a PNG's pixels and its recorded resolution, a PDF's
image and the size it is placed at on its page, read from the files as a printer would."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest


def printed_png(path: Path) -> tuple[np.ndarray, float]:
    """The PNG's pixels and the millimetres one of them prints as (its pHYs chunk)."""
    data = path.read_bytes()
    at, mm_per_px = 8, None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"pHYs":
            per_metre_x, per_metre_y, unit = struct.unpack(">IIB", data[at + 8:at + 17])
            assert unit == 1 and per_metre_x == per_metre_y  # metres, square pixels
            mm_per_px = 1000 / per_metre_x
        at += 12 + length
    assert mm_per_px is not None, "the PNG says nothing of its resolution"
    return cv2.imread(str(path), cv2.IMREAD_GRAYSCALE), mm_per_px


def printed_pdf(path: Path) -> tuple[np.ndarray, float, tuple[float, float]]:
    """The PDF's one image, the millimetres one of its pixels prints as at 100 % (the
    image's placing matrix over its pixel size), and the page's size in mm."""
    data = path.read_bytes()
    box = re.search(rb"/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]", data)
    image = re.search(rb"/Width (\d+) /Height (\d+) /ColorSpace /DeviceGray "
                      rb"/BitsPerComponent 8 /Filter /FlateDecode /Length (\d+) >>\nstream\n",
                      data)
    placing = re.search(rb"([\d.]+) 0 0 ([\d.]+) 0 0 cm /(\w+) Do", data)
    assert box and image and placing
    width, height, length = (int(v) for v in image.groups())
    pixels = np.frombuffer(zlib.decompress(data[image.end():image.end() + length]), np.uint8)
    mm_per_point = 25.4 / 72
    # the image fills the page: drawn as large as the page, at the page's origin
    assert (float(placing[1]), float(placing[2])) == (float(box[1]), float(box[2]))
    mm_per_px = float(placing[1]) / width * mm_per_point
    assert float(placing[2]) / height * mm_per_point == pytest.approx(mm_per_px)
    page_mm = (float(box[1]) * mm_per_point, float(box[2]) * mm_per_point)
    return pixels.reshape(height, width), mm_per_px, page_mm
