"""Pages that print to scale: a PNG that records its resolution, and a one-page PDF sized
so the image prints at that resolution at 100 %.

Both are written here with zlib alone (no imaging library): a sheet's millimetres only
survive printing if the file says how many pixels make an inch, which OpenCV's PNG writer
does not and a PDF does through its page size.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import numpy.typing as npt

MM_PER_INCH = 25.4
POINTS_PER_INCH = 72.0

Page = npt.NDArray[np.uint8]


def _rows(image: Page) -> tuple[bytes, int, int, int]:
    """The image's rows as 8-bit samples (RGB from OpenCV's BGR), its width, height and
    samples per pixel."""
    if image.dtype != np.uint8 or image.ndim not in (2, 3) or (
            image.ndim == 3 and image.shape[2] != 3):
        raise ValueError(f"a page is 8-bit grey or BGR, not {image.dtype} {image.shape}")
    samples = np.ascontiguousarray(image if image.ndim == 2 else image[:, :, ::-1])
    height, width = samples.shape[:2]
    return samples.tobytes(), width, height, 1 if image.ndim == 2 else 3


def png_bytes(image: Page, dpi: float) -> bytes:
    """``image`` as PNG with a pHYs chunk of ``dpi`` (as pixels per metre, PNG's unit)."""
    data, width, height, channels = _rows(image)
    stride = width * channels
    # each row is prefixed with filter type 0 (none)
    raw = b"".join(b"\x00" + data[row * stride:(row + 1) * stride] for row in range(height))
    per_metre = round(dpi * 1000 / MM_PER_INCH)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    colour_type = 0 if channels == 1 else 2
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))
            + chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1))
            + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def pdf_bytes(image: Page, dpi: float) -> bytes:
    """``image`` as a one-page PDF whose page is the image at ``dpi``: printed at 100 %,
    ``dpi`` pixels make an inch."""
    data, width, height, channels = _rows(image)
    page_w, page_h = (f"{v * POINTS_PER_INCH / dpi:.4f}" for v in (width, height))
    stream = zlib.compress(data, 9)
    content = f"q {page_w} 0 0 {page_h} 0 0 cm /Sheet Do Q".encode()
    colour = "/DeviceGray" if channels == 1 else "/DeviceRGB"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {page_w} {page_h}] "
         f"/Resources << /XObject << /Sheet 4 0 R >> >> /Contents 5 0 R >>").encode(),
        (f"<< /Type /XObject /Subtype /Image /Width {width} /Height {height} "
         f"/ColorSpace {colour} /BitsPerComponent 8 /Filter /FlateDecode "
         f"/Length {len(stream)} >>\nstream\n").encode() + stream + b"\nendstream",
        f"<< /Length {len(content)} >>\nstream\n".encode() + content + b"\nendstream",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    return bytes(out)


def write_page(path: str | Path, image: Page, dpi: float, *, pdf: bool = False) -> Path:
    """Write ``image`` to ``path`` as PNG, or as PDF where ``pdf`` is set or the name ends
    in .pdf (the name then gets that suffix); either prints at ``dpi`` at 100 %."""
    out = Path(path)
    as_pdf = pdf or out.suffix.lower() == ".pdf"
    if as_pdf:
        out = out.with_suffix(".pdf")
    try:
        out.write_bytes(pdf_bytes(image, dpi) if as_pdf else png_bytes(image, dpi))
    except OSError as error:
        raise ValueError(f"cannot write {str(out)!r}: {error.strerror}") from None
    return out
