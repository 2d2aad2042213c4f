"""Procedural glyphs and shapes: masks in [0, 1], drawn supersampled.

Everything here is drawn with OpenCV's built-in faces, the TrueType and
OpenType faces of Debian's fonts-* packages (installed by ``.ci/run``; a face
that is not installed is left out of :data:`FONTS`), strokes and polygons, so
nothing is downloaded and a seed gives the same images where the same faces are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
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
    # More makers' faces, so a numeral is learnt as a shape and not as one
    # face's: Helvetica and its narrow cut (URW's Nimbus Sans, fonts-urw-base35),
    # Avant Garde (URW Gothic), Roboto and Roboto Condensed, Calibri's metric
    # twin Carlito, the cockpit face B612, Andika (a 1 with a long flag),
    # Oxygen and the squared technical Jura; and for card indices the
    # Century Schoolbook, Palatino and Bookman that many decks print (URW's
    # C059, P052, URW Bookman).
    "helvetica": ("urw-base35/NimbusSans-Regular.otf", "urw-base35/NimbusSans-Bold.otf"),
    "helvetica-narrow": ("urw-base35/NimbusSansNarrow-Regular.otf",
                         "urw-base35/NimbusSansNarrow-Bold.otf"),
    "gothic": ("urw-base35/URWGothic-Book.otf", "urw-base35/URWGothic-Demi.otf"),
    "roboto": ("roboto/unhinted/RobotoTTF/Roboto-Medium.ttf",
               "roboto/unhinted/RobotoTTF/Roboto-Black.ttf"),
    "roboto-condensed": ("roboto/unhinted/RobotoCondensed-Regular.ttf",
                         "roboto/unhinted/RobotoCondensed-Bold.ttf"),
    "carlito": ("crosextra/Carlito-Regular.ttf", "crosextra/Carlito-Bold.ttf"),
    "b612": ("b612/B612-Regular.otf", "b612/B612-Bold.otf"),
    "andika": ("andika/Andika-Regular.ttf", "andika/Andika-Bold.ttf"),
    "oxygen": ("oxygen/Oxygen-Sans.ttf", "oxygen/Oxygen-Sans-Bold.ttf"),
    "technical": ("jura/Jura-Medium.otf", "jura/Jura-Bold.otf"),
    "schoolbook": ("urw-base35/C059-Roman.otf", "urw-base35/C059-Bold.otf"),
    "palatino": ("urw-base35/P052-Roman.otf", "urw-base35/P052-Bold.otf"),
    "bookman": ("urw-base35/URWBookman-Light.otf", "urw-base35/URWBookman-Demi.otf"),
}
BOLD_FROM = 650
"""A TrueType face's bold file is used from this weight up."""


THIN_BELOW = 400
"""A TrueType face's regular file is worn thinner below this weight."""


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
                      "humanist-narrow", "helvetica", "helvetica-narrow", "gothic", "roboto",
                      "roboto-condensed", "carlito", "b612", "andika", "oxygen", "technical")
    if name in FONTS)
"""The plain upright sans faces (tile makers' numerals)."""

SUPERSAMPLE = 4
_DRAW_SIZE = 160


@dataclass(frozen=True)
class StrokeFace:
    """Numerals drawn as strokes with round ends, as many tile makers print them:
    no font file, and the shapes that tell 1 from 7 and 4 from 9 set per face."""

    flag: float  # the 1's flag, as a share of the numeral's height (0: a bare stem)
    base: bool  # the 1 stands on a foot
    seven_bow: float  # how far the 7's stem bows out (0: straight)
    open_four: bool  # the 4's two strokes do not meet at the top
    seven_bar: bool = False  # the 7 is crossed, as handwriting on the Continent does
    seven_foot: float = 0.3  # where the 7's stem ends, as a share of the digit's width


STROKE_FONTS: dict[str, StrokeFace] = {
    "stroke": StrokeFace(flag=0.16, base=False, seven_bow=0.0, open_four=False),
    "stroke-flag": StrokeFace(flag=0.34, base=True, seven_bow=0.14, open_four=True),
    "stroke-long": StrokeFace(flag=0.3, base=False, seven_bow=0.06, open_four=False),
    # The pairs a reader confuses, drawn close: a crossed 7 beside a 1 with a
    # foot, a 1 with no flag at all, and a steep 7 that is little more than
    # a 1 with a long flag, so the top bar's length is what tells them apart.
    "stroke-euro": StrokeFace(flag=0.32, base=True, seven_bow=0.0, open_four=True,
                              seven_bar=True, seven_foot=0.36),
    "stroke-plain": StrokeFace(flag=0.0, base=False, seven_bow=0.0, open_four=False),
    "stroke-steep": StrokeFace(flag=0.24, base=False, seven_bow=-0.03, open_four=False,
                               seven_foot=0.62),
}
"""Tile numeral faces drawn here (other characters fall back to ``sans``)."""

_STROKE_WIDTH = 0.56
"""A stroke digit's width / height, before the tile's own stretch."""


def _arc(cx: float, cy: float, rx: float, ry: float, start: float, stop: float,
         n: int = 28) -> list[tuple[float, float]]:
    """Points along an ellipse, angles in degrees (0 right, 90 down: image axes)."""
    return [(cx + rx * math.cos(math.radians(a)), cy + ry * math.sin(math.radians(a)))
            for a in np.linspace(start, stop, n)]


def _bezier(p0: tuple[float, float], p1: tuple[float, float], p2: tuple[float, float],
            n: int = 16) -> list[tuple[float, float]]:
    return [((1 - t) ** 2 * p0[0] + 2 * (1 - t) * t * p1[0] + t * t * p2[0],
             (1 - t) ** 2 * p0[1] + 2 * (1 - t) * t * p1[1] + t * t * p2[1])
            for t in np.linspace(0, 1, n)]


def _stroke_paths(digit: str, face: StrokeFace) -> list[list[tuple[float, float]]]:
    """The strokes of one digit in a box ``_STROKE_WIDTH`` wide and 1 tall."""
    w = _STROKE_WIDTH
    if digit == "0":
        return [_arc(w / 2, 0.5, w / 2, 0.5, 0, 360, 48)]
    if digit == "1":
        stem = 0.62 * w
        paths = [[(stem, 0.0), (stem, 1.0)]]
        if face.flag > 0:
            paths.append([(stem, 0.0), (stem - face.flag, face.flag * 0.8)])
        return paths + ([[(0.12 * w, 1.0), (w, 1.0)]] if face.base else [])
    if digit == "2":
        return [[*_arc(w / 2, 0.27, 0.46 * w, 0.27, 195, 400), (0.02, 1.0), (w, 1.0)]]
    if digit == "3":
        return [_arc(w / 2, 0.26, 0.44 * w, 0.24, 205, 450),
                _arc(w / 2, 0.73, 0.5 * w, 0.27, 270, 515)]
    if digit == "4":
        stem, bar = 0.76 * w, 0.68
        if face.open_four:
            return [[(stem, 0.3), (stem, 1.0)], [(0.36 * w, 0.0), (0.0, bar), (w, bar)]]
        return [[(stem, 1.0), (stem, 0.0), (0.0, bar), (w, bar)]]
    if digit == "5":
        return [[(0.94 * w, 0.0), (0.14 * w, 0.0), (0.1 * w, 0.44),
                 *_arc(w / 2, 0.68, 0.5 * w, 0.32, 220, 505)]]
    if digit in "69":
        six = [_arc(w / 2, 0.68, 0.48 * w, 0.32, 0, 360, 40),
               _arc(0.92 * w, 0.72, 0.9 * w, 0.7, 262, 180)]
        if digit == "6":
            return six
        return [[(w - x, 1.0 - y) for x, y in path] for path in six]
    if digit == "7":
        top, foot = (w, 0.0), (face.seven_foot * w, 1.0)
        bow = ((top[0] + foot[0]) / 2 + face.seven_bow, 0.5)
        paths = [[(0.0, 0.0), top], _bezier(top, bow, foot)]
        if face.seven_bar:
            # where the stem is at mid-height: a quadratic curve's midpoint
            # lies halfway between its chord's middle and its control point
            middle = (top[0] + foot[0]) / 2 + face.seven_bow / 2
            paths.append([(middle - 0.34 * w, 0.52), (middle + 0.3 * w, 0.52)])
        return paths
    if digit == "8":
        return [_arc(w / 2, 0.25, 0.4 * w, 0.25, 0, 360, 40),
                _arc(w / 2, 0.73, 0.5 * w, 0.27, 0, 360, 40)]
    raise ValueError(f"no stroke digit {digit!r}")


def _side_by_side(pieces: list[npt.NDArray[np.uint8]], gap: int) -> npt.NDArray[np.uint8]:
    """Glyph inks left to right, ``gap`` pixels apart, standing on one baseline."""
    height = max(piece.shape[0] for piece in pieces)
    out = np.zeros((height, sum(p.shape[1] for p in pieces) + gap * (len(pieces) - 1)), np.uint8)
    x = 0
    for piece in pieces:
        ph, pw = piece.shape
        out[height - ph :, x : x + pw] = piece
        x += pw + gap
    return out


@lru_cache(maxsize=256)
def _stroke_ink(text: str, font: str, weight: int) -> npt.NDArray[np.uint8]:
    """Digits drawn as round-ended strokes, 7-13 % of their height thick by weight."""
    face = STROKE_FONTS[font]
    size = _DRAW_SIZE
    thick = max(2, round(size * (0.07 + 0.06 * (min(max(weight, 400), 1000) - 400) / 600)))
    margin = thick
    pieces = []
    for digit in text:
        canvas = np.zeros((size + 2 * margin, round(_STROKE_WIDTH * size) + 2 * margin),
                          np.uint8)
        for path in _stroke_paths(digit, face):
            points = np.array([[(margin + x * size) * 16, (margin + y * size) * 16]
                               for x, y in path], np.int32)
            cv2.polylines(canvas, [points], False, 255, thick, cv2.LINE_AA, shift=4)
        ys, xs = np.nonzero(canvas > 40)
        pieces.append(canvas[:, xs.min() : xs.max() + 1])
    out = _side_by_side(pieces, max(2, size // 10))
    ys, _ = np.nonzero(out > 40)
    return out[ys.min() : ys.max() + 1]


_STAND_INS = {"sans": "liberation-sans", "uni": "dejavu-sans", "italic": "serif-italic"}
"""Where OpenCV is older than 5 (no built-in faces, no FontFace: a training machine
with OpenCV 4), a TrueType face of the same kind stands in for each built-in one."""


def _stand_in(font: str, weight: int) -> Path:
    path = _truetype_file(_STAND_INS[font], weight)
    if path is None:
        raise ValueError(f"OpenCV {cv2.__version__} has no built-in face {font!r} and its "
                         f"stand-in {_STAND_INS[font]!r} is not installed")
    return path


def _pillow_ink(text: str, path: Path, size: int, shape: tuple[int, ...]
                ) -> npt.NDArray[np.uint8]:
    """``text`` drawn with Pillow in the TrueType face at ``path``, its baseline where
    OpenCV's putText puts it, on a canvas of ``shape``."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (shape[1], shape[0]), 0)
    ImageDraw.Draw(image).text((size // 4, int(size * 1.4)), text, fill=255,
                               font=ImageFont.truetype(str(path), size), anchor="ls")
    return np.asarray(image, np.uint8).copy()


@lru_cache(maxsize=32)
def _face(name: str) -> cv2.FontFace:
    return cv2.FontFace(name)


@lru_cache(maxsize=2048)
def _glyph_ink(text: str, font: str, weight: int) -> npt.NDArray[np.uint8]:
    """``text`` drawn large, cropped to its ink."""
    if font in STROKE_FONTS:
        if text.isdigit():
            return _stroke_ink(text, font, weight)
        font = "sans"  # a stroke face has digits only (a letter joker's J)
    size = _DRAW_SIZE
    canvas = np.zeros((size * 2, size * (len(text) + 1)), np.uint8)
    truetype = _truetype_file(font, weight)
    if font in TRUETYPE_FONTS and truetype is None:
        raise ValueError(f"font {font!r} is not installed (its file {TRUETYPE_FONTS[font]!r} "
                         "comes with a Debian fonts-* package that .ci/run installs)")
    if hasattr(cv2, "FontFace"):
        face = _face(str(truetype) if truetype is not None else font)
        cv2.putText(canvas, text, (size // 4, int(size * 1.4)), 255, face, size,
                    400 if truetype is not None else weight)
    else:
        canvas = _pillow_ink(text, truetype or _stand_in(font, weight), size, canvas.shape)
    if truetype is not None and weight < THIN_BELOW:
        # A face file has one regular weight: thin it by wearing its strokes down, as
        # the light indices of many card decks print.
        wear = max(1, round((THIN_BELOW - weight) / THIN_BELOW * size * 0.04))
        canvas = cv2.erode(canvas, cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                                             (2 * wear + 1, 2 * wear + 1)))
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
    return _side_by_side(pieces, max(2, height // 16))


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
