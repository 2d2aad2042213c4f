"""Rummy tiles drawn upright: styles of real sets, numerals, jokers, up/down marks.

A tile is drawn face up with its numeral upright; the scene rotates it.  Each
style has a small mark under the numeral (a maker's logo, a bar, a dot...),
as real tiles do, so a 6 upside down is not a 9: the mark is then above.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.vision.synth.shapes import (
    FONTS,
    SANS_FONTS,
    STROKE_FONTS,
    Mask,
    Points,
    arc_mask,
    ellipse_mask,
    fill_mask,
    paint,
    rounded_rect,
    text_aspect,
    text_mask,
)

Colour = tuple[float, float, float]
Image = npt.NDArray[np.float32]

MARKS = ("logo", "bar", "dot", "ring", "arc", "triangle")
JOKERS = ("face", "smiley", "star", "jester", "letter")


@dataclass(frozen=True)
class TileStyle:
    """One set's look.  Colours are BGR 0..255."""

    family: str
    face: Colour
    side: Colour
    inks: tuple[tuple[str, Colour], ...]
    font: str
    weight: int
    aspect: float  # tile width / height
    corner: float  # corner radius / width
    digit_height: float  # numeral height / tile height
    digit_stretch: float  # numeral width multiplier (condensed < 1 < wide)
    digit_y: float  # numeral centre / tile height
    digit_gap: float | None  # space between two digits / numeral height; None: the face's own
    pair_squeeze: float  # two-digit numerals' width multiplier (makers condense them to fit)
    mark: str
    mark_colour: Colour
    mark_y: float  # mark centre / tile height
    joker: str
    joker_inks: tuple[str, str, str]  # ink keys of the joker's outline, features and fill
    hollow: bool  # a lighter round hollow behind the numeral (classic sets)

    def ink(self, colour: str) -> Colour:
        return dict(self.inks)[colour]


TILE_FONTS: tuple[str, ...] = FONTS + tuple(STROKE_FONTS)
"""Tile numerals are drawn in any face, or in strokes (digits only, so not on cards)."""


def _jitter(rng: np.random.Generator, colour: Colour, amount: float) -> Colour:
    c = np.clip(np.asarray(colour) + rng.normal(0, amount, 3), 0, 255)
    return (float(c[0]), float(c[1]), float(c[2]))


def random_style(rng: np.random.Generator) -> TileStyle:
    """A tile set: classic Rummikub, Romanian Remi, or another make."""
    family = str(rng.choice(["classic", "remi", "other"], p=[0.45, 0.3, 0.25]))
    cream = _jitter(rng, (208.0, 228.0, 238.0), 6)
    if family == "classic":
        inks = {"K": (28.0, 28.0, 30.0), "B": (185.0, 95.0, 25.0), "O": (25.0, 135.0, 240.0),
                "R": (45.0, 35.0, 205.0)}
        font = str(rng.choice(("sans", *SANS_FONTS, *STROKE_FONTS)))
        weight = int(rng.integers(750, 1000))
        mark, joker, hollow = "logo", "face", bool(rng.random() < 0.8)
        face = cream
    elif family == "remi":
        inks = {"K": (30.0, 30.0, 30.0), "B": (170.0, 80.0, 20.0), "O": (10.0, 195.0, 235.0),
                "R": (35.0, 35.0, 200.0)}
        font, weight = str(rng.choice(TILE_FONTS)), int(rng.integers(650, 1000))
        mark = str(rng.choice(["bar", "dot", "logo", "triangle"]))
        joker = str(rng.choice(["smiley", "jester", "letter"], p=[0.6, 0.25, 0.15]))
        hollow = bool(rng.random() < 0.3)
        face = _jitter(rng, (225.0, 238.0, 242.0), 6) if rng.random() < 0.6 else cream
    else:
        inks = {"K": (40.0, 35.0, 30.0), "B": (200.0, 120.0, 30.0), "O": (30.0, 150.0, 245.0),
                "R": (40.0, 40.0, 215.0)}
        if rng.random() < 0.3:
            inks["B"] = (150.0, 110.0, 20.0)  # teal-ish blue of some makes
        font, weight = str(rng.choice(TILE_FONTS)), int(rng.integers(550, 1000))
        mark, joker = str(rng.choice(MARKS)), str(rng.choice(JOKERS))
        hollow = bool(rng.random() < 0.4)
        face = _jitter(rng, (225.0, 235.0, 238.0), 14)
    inks = {key: _jitter(rng, value, 10) for key, value in inks.items()}
    side = tuple(float(v) * rng.uniform(0.68, 0.85) for v in face)
    mark_colour = (
        tuple(float(v) * rng.uniform(0.8, 0.9) for v in face)
        if mark == "logo"
        else _jitter(rng, inks[str(rng.choice(["K", "R", "B"]))], 20)
    )
    digit_height = rng.uniform(0.36, 0.48)
    digit_y = rng.uniform(0.36, 0.44)
    # Classic jokers are red and black; other sets use any of their four inks.
    joker_inks = (("R", "K", "O") if rng.random() < 0.5 else
                  tuple(str(k) for k in rng.choice(["K", "B", "O", "R"], 3, replace=False)))
    return TileStyle(
        family=family,
        face=face,
        side=side,  # type: ignore[arg-type]
        inks=tuple(sorted(inks.items())),
        font=font,
        weight=weight,
        aspect=rng.uniform(0.68, 0.8),
        corner=rng.uniform(0.08, 0.2),
        digit_height=digit_height,
        digit_stretch=rng.uniform(0.85, 1.2),
        digit_y=digit_y,
        digit_gap=None if rng.random() < 0.4 else rng.uniform(-0.02, 0.16),
        pair_squeeze=1.0 if rng.random() < 0.4 else rng.uniform(0.62, 1.0),
        mark=mark,
        mark_colour=mark_colour,  # type: ignore[arg-type]
        mark_y=min(0.88, digit_y + digit_height / 2 + rng.uniform(0.14, 0.24)),
        joker=joker,
        joker_inks=joker_inks,  # type: ignore[arg-type]
        hollow=hollow,
    )


@dataclass(frozen=True)
class TileRender:
    """An upright tile: colour, coverage, outline and where its parts are."""

    image: Image  # h x w x 3, BGR float 0..255
    alpha: Mask  # h x w, 1 on the tile
    outline: Points  # the face's outline in pixels of ``image``
    numeral_box: tuple[float, float, float, float]  # x1 y1 x2 y2 of the numeral or joker
    mark_box: tuple[float, float, float, float] | None  # the up/down mark; None for jokers


def _draw_joker(img: Image, kind: str, style: TileStyle, box: tuple[int, int, int, int]) -> None:
    x1, y1, x2, y2 = box
    h, w = y2 - y1, x2 - x1
    shape = img.shape[:2]
    cx, cy, r = x1 + w / 2, y1 + h / 2, min(w, h) / 2
    red, black, fill = (style.ink(key) for key in style.joker_inks)
    if kind == "face":
        # Classic: a round face drawn in black with a red or black outline.
        paint(img, ellipse_mask(shape, (cx, cy), (r, r), thickness=max(1, round(r * 0.12))), red)
        for dx in (-0.35, 0.35):
            paint(img, ellipse_mask(shape, (cx + dx * r, cy - 0.2 * r), (r * 0.12, r * 0.16)),
                  black)
        paint(img, arc_mask(shape, (cx, cy + 0.05 * r), (r * 0.5, r * 0.4), 20, 160,
                            max(1.0, r * 0.1)), black)
        paint(img, arc_mask(shape, (cx, cy - 0.45 * r), (r * 0.5, r * 0.3), 200, 340,
                            max(1.0, r * 0.08)), black)
    elif kind == "smiley":
        paint(img, ellipse_mask(shape, (cx, cy), (r, r)), fill)
        paint(img, ellipse_mask(shape, (cx, cy), (r, r), thickness=max(1, round(r * 0.1))), red)
        for dx in (-0.35, 0.35):
            paint(img, ellipse_mask(shape, (cx + dx * r, cy - 0.25 * r), (r * 0.11, r * 0.17)),
                  black)
        paint(img, arc_mask(shape, (cx, cy + 0.05 * r), (r * 0.55, r * 0.45), 15, 165,
                            max(1.0, r * 0.12)), red)
    elif kind == "jester":
        # A jester's face under a three-pointed cap with a bell on each point.
        face_r = r * 0.55
        fy = cy + r * 0.3
        paint(img, ellipse_mask(shape, (cx, fy), (face_r, face_r),
                                thickness=max(1, round(r * 0.1))), black)
        brim = fy - face_r * 0.75
        cap = np.array([(cx - face_r * 1.1, brim), (cx - r * 0.95, cy - r * 0.75),
                        (cx - face_r * 0.35, brim - face_r * 0.5), (cx, cy - r),
                        (cx + face_r * 0.35, brim - face_r * 0.5),
                        (cx + r * 0.95, cy - r * 0.75), (cx + face_r * 1.1, brim)])
        paint(img, fill_mask(shape, [cap]), red)
        bells = ((cx - r * 0.95, cy - r * 0.75), (cx, cy - r), (cx + r * 0.95, cy - r * 0.75))
        for bx, by in bells:
            paint(img, ellipse_mask(shape, (bx, by), (r * 0.1, r * 0.1)), fill)
        for dx in (-0.35, 0.35):
            paint(img, ellipse_mask(shape, (cx + dx * face_r, fy - 0.1 * face_r),
                                    (face_r * 0.12, face_r * 0.16)), black)
        paint(img, arc_mask(shape, (cx, fy + 0.1 * face_r), (face_r * 0.5, face_r * 0.4), 20, 160,
                            max(1.0, r * 0.08)), red)
    elif kind == "letter":
        # A large J, and a small star beside it.
        paint(img, text_mask("J", style.font, style.weight, round(h * 0.8), round(w * 0.45)),
              red, round(cx - w * 0.3), round(cy - h * 0.4))
        t = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
        radii = np.where(np.arange(10) % 2 == 0, r * 0.35, r * 0.15)
        star = np.stack([cx + r * 0.55 + radii * np.cos(t), cy + r * 0.55 + radii * np.sin(t)],
                        axis=1)
        paint(img, fill_mask(shape, [star]), black)
    else:
        t = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
        radii = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
        star = np.stack([cx + radii * np.cos(t), cy + radii * np.sin(t)], axis=1)
        paint(img, fill_mask(shape, [star]), red)
        paint(img, text_mask("J", "sans", 900, round(h * 0.35), round(h * 0.25)), black,
              round(cx - h * 0.125), round(cy - h * 0.15))


def _draw_mark(img: Image, style: TileStyle, w: int, h: int) -> tuple[float, float, float, float]:
    cy = style.mark_y * h
    shape = img.shape[:2]
    colour = style.mark_colour
    if style.mark == "logo":
        mw, mh = w * 0.62, h * 0.085
        mask = text_mask("Rummikub", "italic", 700, max(1, round(mh)), max(1, round(mw)))
        paint(img, mask, colour, round(w / 2 - mw / 2), round(cy - mh / 2))
    elif style.mark == "bar":
        mw, mh = w * 0.34, h * 0.035
        paint(img, fill_mask(shape, [np.array([(w / 2 - mw / 2, cy - mh / 2),
                                               (w / 2 + mw / 2, cy - mh / 2),
                                               (w / 2 + mw / 2, cy + mh / 2),
                                               (w / 2 - mw / 2, cy + mh / 2)])]), colour)
    elif style.mark == "dot":
        mw = mh = w * 0.1
        paint(img, ellipse_mask(shape, (w / 2, cy), (mw / 2, mh / 2)), colour)
    elif style.mark == "ring":
        mw = mh = w * 0.14
        paint(img, ellipse_mask(shape, (w / 2, cy), (mw / 2, mh / 2),
                                thickness=max(1, round(w * 0.025))), colour)
    elif style.mark == "arc":
        mw, mh = w * 0.36, h * 0.06
        paint(img, arc_mask(shape, (w / 2, cy - mh / 2), (mw / 2, mh), 20, 160,
                            max(1.0, w * 0.03)), colour)
    else:  # a small triangle pointing down
        mw, mh = w * 0.16, h * 0.05
        paint(img, fill_mask(shape, [np.array([(w / 2 - mw / 2, cy - mh / 2),
                                               (w / 2 + mw / 2, cy - mh / 2),
                                               (w / 2, cy + mh / 2)])]), colour)
    return (w / 2 - mw / 2, cy - mh / 2, w / 2 + mw / 2, cy + mh / 2)


def numeral_mask(number: str, style: TileStyle, height: float, max_width: float) -> Mask:
    """The ink of a tile's numeral, ``height`` px tall and at most ``max_width`` wide.

    Two digits are set one by one with the style's gap (tight or even
    touching, as on many sets) unless the style keeps the face's own spacing."""
    stretch = style.digit_stretch * (style.pair_squeeze if len(number) > 1 else 1.0)
    dh = max(1, round(height))
    if len(number) == 1 or style.digit_gap is None:
        dw = min(max_width, height * text_aspect(number, style.font, style.weight) * stretch)
        return text_mask(number, style.font, style.weight, dh, max(1, round(dw)))
    widths = [height * text_aspect(d, style.font, style.weight) * stretch for d in number]
    gap = style.digit_gap * height
    fit = min(1.0, max_width / (sum(widths) + gap * (len(number) - 1)))
    widths, gap = [v * fit for v in widths], gap * fit
    out = np.zeros((dh, max(1, round(sum(widths) + gap * (len(number) - 1)))), np.float32)
    x = 0.0
    for digit, width in zip(number, widths, strict=True):
        piece = text_mask(digit, style.font, style.weight, dh, max(1, round(width)))
        left = min(max(0, round(x)), out.shape[1] - piece.shape[1])
        region = out[:, left : left + piece.shape[1]]
        np.maximum(region, piece[:, : region.shape[1]], out=region)
        x += width + gap
    return out


@lru_cache(maxsize=256)
def render_tile(label: str, style: TileStyle, height: int) -> TileRender:
    """The face of tile ``label`` (K1..R13 or JK; "" for a tile face down), ``height`` px tall."""
    h = max(12, int(height))
    w = max(8, round(h * style.aspect))
    outline = rounded_rect(w, h, style.corner * w)
    alpha = fill_mask((h, w), [outline])
    img = np.empty((h, w, 3), np.float32)
    img[:] = style.face
    # A soft bevel: the rim is a little darker than the middle of the face.
    inner = cv2.GaussianBlur(alpha, (0, 0), max(1.0, w * 0.06))
    img *= (0.88 + 0.12 * inner)[..., None]
    if style.hollow and label:
        r = w * 0.36
        paint(img, ellipse_mask((h, w), (w / 2, style.digit_y * h), (r, r)),
              tuple(min(255.0, v * 1.04) for v in style.face), opacity=0.9)  # type: ignore[arg-type]
        paint(img, ellipse_mask((h, w), (w / 2, style.digit_y * h), (r, r),
                                thickness=max(1, round(w * 0.02))),
              tuple(v * 0.9 for v in style.face), opacity=0.6)  # type: ignore[arg-type]
    dh = style.digit_height * h
    cy = style.digit_y * h
    if label == "":
        # A tile lying face down: plain plastic, nothing printed.
        numeral_box = (w / 2, h / 2, w / 2 + 1, h / 2 + 1)
        mark_box = None
    elif label == "JK":
        side = min(w * 0.8, dh * 1.5)
        box = (round(w / 2 - side / 2), round(cy - side / 2), round(w / 2 + side / 2),
               round(cy + side / 2))
        _draw_joker(img, style.joker, style, box)
        numeral_box = tuple(float(v) for v in box)
        mark_box = None
    else:
        colour, number = label[0], label[1:]
        mask = numeral_mask(number, style, dh, w * 0.86)
        x, y = round(w / 2 - mask.shape[1] / 2), round(cy - dh / 2)
        paint(img, mask, style.ink(colour), x, y)
        numeral_box = (float(x), float(y), float(x + mask.shape[1]), float(y + mask.shape[0]))
        mark_box = _draw_mark(img, style, w, h)
    img *= alpha[..., None]
    return TileRender(img, alpha, outline, numeral_box, mark_box)  # type: ignore[arg-type]
