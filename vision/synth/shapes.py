"""Procedural glyphs and shapes: masks in [0, 1], drawn supersampled.

Everything here is drawn with OpenCV's built-in Hershey fonts and polygons,
so nothing is downloaded and rendering is byte-for-byte reproducible.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

Mask = npt.NDArray[np.float32]
Points = npt.NDArray[np.float64]

BUILTIN_FONTS: tuple[str, ...] = ("sans", "italic", "uni")
"""OpenCV 5's built-in faces: a variable-weight sans, its italic, and a plain
face; with weights, stretching and hand-drawn zeros they give many looks."""

_TRUETYPE_DIRS = (Path("/usr/share/fonts/truetype"), Path("/usr/share/fonts/opentype"))
TRUETYPE_FONTS: dict[str, tuple[str, str]] = {
    # name: (regular file, bold file), under a folder of _TRUETYPE_DIRS; Debian's
    # fonts-liberation and fonts-dejavu-core.  Serif faces are what most card
    # decks print; the narrow and condensed ones are the tall thin indices.
    "serif": ("liberation/LiberationSerif-Regular.ttf", "liberation/LiberationSerif-Bold.ttf"),
    "serif-italic": ("liberation/LiberationSerif-Italic.ttf",
                     "liberation/LiberationSerif-BoldItalic.ttf"),
    "dejavu-serif": ("dejavu/DejaVuSerifCondensed.ttf", "dejavu/DejaVuSerif-Bold.ttf"),
    "sans-narrow": ("liberation/LiberationSansNarrow-Regular.ttf",
                    "liberation/LiberationSansNarrow-Bold.ttf"),
    "liberation-sans": ("liberation/LiberationSans-Regular.ttf",
                        "liberation/LiberationSans-Bold.ttf"),
    "dejavu-sans": ("dejavu/DejaVuSansCondensed.ttf", "dejavu/DejaVuSans-Bold.ttf"),
    "mono": ("liberation/LiberationMono-Regular.ttf", "liberation/LiberationMono-Bold.ttf"),
    # Rounded, geometric and condensed sans faces, as tile makers print their
    # numerals (Debian's fonts-dosis, -quicksand, -comfortaa, -league-spartan,
    # -lato, -open-sans): rounded stroke ends, tight two-digit numerals.
    "rounded-narrow": ("dosis/Dosis-SemiBold.otf", "dosis/Dosis-ExtraBold.otf"),
    "rounded": ("quicksand/Quicksand-Medium.ttf", "quicksand/Quicksand-Bold.ttf"),
    "rounded-wide": ("comfortaa/Comfortaa-Regular.ttf", "comfortaa/Comfortaa-Bold.ttf"),
    "geometric": ("league-spartan/LeagueSpartan-SemiBold.otf",
                  "league-spartan/LeagueSpartan-Black.otf"),
    "humanist": ("lato/Lato-Bold.ttf", "lato/Lato-Black.ttf"),
    "humanist-narrow": ("open-sans/OpenSans-Semibold.ttf", "open-sans/OpenSans-CondBold.ttf"),
}
BOLD_FROM = 650
"""A TrueType face's bold file is used from this weight up."""


def _truetype_file(font: str, weight: int) -> Path | None:
    files = TRUETYPE_FONTS.get(font)
    if files is None:
        return None
    name = files[1] if weight >= BOLD_FROM else files[0]
    for folder in _TRUETYPE_DIRS:
        if (folder / name).is_file():
            return folder / name
    return None


FONTS: tuple[str, ...] = BUILTIN_FONTS + tuple(
    name for name in TRUETYPE_FONTS
    if _truetype_file(name, 400) is not None and _truetype_file(name, 900) is not None)
"""Every face the renderer draws with: the built-in ones and the TrueType
faces installed here (a seed gives the same images where the same are)."""

SANS_FONTS: tuple[str, ...] = tuple(
    name for name in ("sans", "uni", "liberation-sans", "sans-narrow", "dejavu-sans",
                      "rounded-narrow", "rounded", "rounded-wide", "geometric", "humanist",
                      "humanist-narrow")
    if name in FONTS)
"""The plain upright sans faces (tile makers' numerals)."""

SUPERSAMPLE = 4
_DRAW_SIZE = 160


@lru_cache(maxsize=32)
def _face(name: str) -> cv2.FontFace:
    return cv2.FontFace(name)


@lru_cache(maxsize=2048)
def _glyph_ink(text: str, font: str, weight: int) -> npt.NDArray[np.uint8]:
    """``text`` drawn large, cropped to its ink."""
    size = _DRAW_SIZE
    canvas = np.zeros((size * 2, size * (len(text) + 1)), np.uint8)
    truetype = _truetype_file(font, weight)
    if font in TRUETYPE_FONTS and truetype is None:
        raise ValueError(f"font {font!r} is not installed (its file {TRUETYPE_FONTS[font]!r} "
                         "comes with a Debian fonts-* package that .ci/run installs)")
    face = _face(str(truetype) if truetype is not None else font)
    cv2.putText(canvas, text, (size // 4, int(size * 1.4)), 255, face, size,
                400 if truetype is not None else weight)
    if font == "uni" and weight > 450:
        # The plain face has one weight: embolden it by growing the strokes.
        grow = max(1, round((weight - 400) / 600 * size * 0.09))
        canvas = cv2.dilate(canvas, cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                                              (2 * grow + 1, 2 * grow + 1)))
    ys, xs = np.nonzero(canvas > 40)
    if len(xs) == 0:
        raise ValueError(f"font {font!r} draws no ink for {text!r}")
    return canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]


@lru_cache(maxsize=512)
def _ink(text: str, font: str, weight: int) -> npt.NDArray[np.uint8]:
    """The ink of ``text``; a zero is drawn by hand as an oval ring, because the
    built-in sans slashes its zeros and no tile or card prints them that way."""
    if "0" not in text or font not in ("sans", "italic"):
        return _glyph_ink(text, font, weight)
    # The ring is sized from the other digits, or from a 1 when there are none.
    one = _glyph_ink(text.replace("0", "")[:1] or "1", font, weight)
    height = one.shape[0]
    stem = int(np.count_nonzero(one[height // 2] > 128)) or max(2, height // 8)
    zero_w = int(max(height * 0.6, 2.0 * stem + height * 0.2))
    ring = np.zeros((height, zero_w), np.uint8)
    cv2.ellipse(ring, (zero_w // 2, height // 2), (zero_w // 2 - stem // 2 - 1,
                height // 2 - stem // 2 - 1), 0, 0, 360, 255, stem, cv2.LINE_AA)
    pieces = [ring if ch == "0" else _glyph_ink(ch, font, weight) for ch in text]
    gap = max(2, height // 16)
    width = sum(p.shape[1] for p in pieces) + gap * (len(pieces) - 1)
    out = np.zeros((height, width), np.uint8)
    x = 0
    for piece in pieces:
        ph, pw = piece.shape
        out[height - ph : height, x : x + pw] = np.maximum(out[height - ph :, x : x + pw], piece)
        x += pw + gap
    return out


@lru_cache(maxsize=4096)
def text_mask(text: str, font: str, weight: int, height: int, width: int) -> Mask:
    """``text`` filling exactly ``height`` x ``width`` pixels (ink = 1).

    The glyphs are drawn large and squeezed into the box, so the box is the
    ink's bounding box, and condensed or wide faces come free.
    """
    ink = _ink(text, font, weight)
    out = cv2.resize(ink, (max(1, width), max(1, height)), interpolation=cv2.INTER_AREA)
    return (out.astype(np.float32) / 255.0).clip(0, 1)


def text_aspect(text: str, font: str, weight: int) -> float:
    """Width / height of the ink of ``text`` (for sizing its box)."""
    ink = _ink(text, font, weight)
    return float(ink.shape[1]) / float(ink.shape[0])


def rounded_rect(width: float, height: float, radius: float, per_corner: int = 6) -> Points:
    """The outline of a rounded rectangle with its top-left at (0, 0), clockwise."""
    r = min(radius, width / 2, height / 2)
    corners = [
        (width - r, r, -90.0),
        (width - r, height - r, 0.0),
        (r, height - r, 90.0),
        (r, r, 180.0),
    ]
    points = []
    for cx, cy, start in corners:
        for step in range(per_corner + 1):
            angle = np.deg2rad(start + 90.0 * step / per_corner)
            points.append((cx + r * np.cos(angle), cy + r * np.sin(angle)))
    return np.array(points, dtype=np.float64)


def fill_mask(shape: tuple[int, int], polygons: list[Points]) -> Mask:
    """Antialiased filled polygons (coordinates in pixels of ``shape``)."""
    h, w = shape
    big = np.zeros((h * SUPERSAMPLE, w * SUPERSAMPLE), np.uint8)
    for polygon in polygons:
        pts = np.round(polygon * SUPERSAMPLE).astype(np.int32)
        cv2.fillPoly(big, [pts], 255, cv2.LINE_8)
    small = cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 255.0


def _heart(n: int = 40) -> Points:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    pts = np.stack([x, y], axis=1)
    pts -= pts.min(axis=0)
    return pts / pts.max(axis=0)  # unit box


def _circle(cx: float, cy: float, r: float, n: int = 24) -> Points:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], axis=1)


@lru_cache(maxsize=512)
def suit_mask(suit: str, height: int, width: int, variant: int = 0) -> Mask:
    """A suit symbol filling ``height`` x ``width`` (S, H, D, C); ``variant`` changes its cut."""
    w, h = float(width), float(height)
    polys: list[Points] = []
    if suit == "H":
        polys.append(_heart() * [w, h])
    elif suit == "D":
        pinch = 0.5 + 0.08 * (variant % 3 - 1)
        polys.append(np.array([(0.5, 0), (1, pinch), (0.5, 1), (0, pinch)]) * [w, h])
    elif suit == "S":
        heart = _heart()
        heart[:, 1] = 1 - heart[:, 1]
        polys.append(heart * [w, h * 0.78])
        stem = 0.12 + 0.04 * (variant % 3)
        polys.append(np.array([(0.5, 0.55), (0.5 + stem * 1.6, 1), (0.5 - stem * 1.6, 1)]) * [w, h])
    elif suit == "C":
        r = 0.24 + 0.02 * (variant % 3)
        polys.append(_circle(0.5 * w, r * h, r * min(w, h) * 1.02))
        polys.append(_circle(r * w, 0.55 * h, r * min(w, h) * 1.02))
        polys.append(_circle((1 - r) * w, 0.55 * h, r * min(w, h) * 1.02))
        polys.append(np.array([(0.5, 0.4), (0.62, 1), (0.38, 1)]) * [w, h])
        polys.append(np.array([(0.5, 0.3), (0.7, 0.55), (0.5, 0.75), (0.3, 0.55)]) * [w, h])
    else:
        raise ValueError(f"unknown suit {suit!r}")
    return fill_mask((height, width), polys)


def ellipse_mask(shape: tuple[int, int], center: tuple[float, float], axes: tuple[float, float],
                 angle: float = 0.0, thickness: int = -1) -> Mask:
    """An antialiased ellipse (filled, or a ring of ``thickness`` px)."""
    h, w = shape
    s = SUPERSAMPLE
    big = np.zeros((h * s, w * s), np.uint8)
    cv2.ellipse(big, (round(center[0] * s), round(center[1] * s)),
                (max(1, round(axes[0] * s)), max(1, round(axes[1] * s))), angle, 0, 360, 255,
                -1 if thickness < 0 else max(1, thickness * s), cv2.LINE_8)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def arc_mask(shape: tuple[int, int], center: tuple[float, float], axes: tuple[float, float],
             start: float, end: float, thickness: float) -> Mask:
    h, w = shape
    s = SUPERSAMPLE
    big = np.zeros((h * s, w * s), np.uint8)
    cv2.ellipse(big, (round(center[0] * s), round(center[1] * s)),
                (max(1, round(axes[0] * s)), max(1, round(axes[1] * s))), 0, start, end, 255,
                max(1, round(thickness * s)), cv2.LINE_8)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def paint(image: npt.NDArray[np.float32], mask: Mask, colour: tuple[float, float, float],
          x: int = 0, y: int = 0, opacity: float = 1.0) -> None:
    """Blend ``colour`` into ``image`` (float BGR) through ``mask`` placed at (x, y), clipped."""
    h, w = mask.shape
    H, W = image.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
    if x0 >= x1 or y0 >= y1:
        return
    m = mask[y0 - y : y1 - y, x0 - x : x1 - x, None] * opacity
    roi = image[y0:y1, x0:x1]
    roi *= 1 - m
    roi += m * np.asarray(colour, np.float32)
