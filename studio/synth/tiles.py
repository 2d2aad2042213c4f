"""Rummy tiles drawn upright: styles of real sets, numerals, jokers, up/down marks.

A tile is drawn face up with its numeral upright; the scene rotates it.  Each
style has a small mark under the numeral (a maker's logo, a bar, a dot...),
as real tiles do, so a 6 upside down is not a 9: the mark is then above.

A set's four inks are drawn from a palette family (modern Rummikub, older
sets, Remi, Okey, worn, glossy...) so that a model trained on these tiles
learns the colour roles across makes rather than one maker's exact inks.
"""

from __future__ import annotations

import colorsys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.synth.shapes import (
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
    palette: str = "modern"  # the palette family its inks were drawn from
    mark_in_ink: bool = False  # the mark takes each tile's own ink (Okey), not mark_colour

    def ink(self, colour: str) -> Colour:
        return dict(self.inks)[colour]


TILE_FONTS: tuple[str, ...] = FONTS + tuple(STROKE_FONTS)
"""Tile numerals are drawn in any face, or in strokes (digits only, so not on cards)."""


def _jitter(rng: np.random.Generator, colour: Colour, amount: float) -> Colour:
    c = np.clip(np.asarray(colour) + rng.normal(0, amount, 3), 0, 255)
    return (float(c[0]), float(c[1]), float(c[2]))


Range = tuple[float, float]
HsvRange = tuple[Range, Range, Range]

INK_ROLES = ("K", "B", "O", "R")
"""The colour roles of a tile set: black, blue, orange (or yellow), red."""

PALETTES: dict[str, dict[str, HsvRange]] = {
    # Current Rummikub: the orange is often close to red, told apart by being brighter.
    "modern": {"K": ((0, 180), (0, 60), (18, 60)),
               "B": ((100, 118), (170, 250), (130, 215)),
               "O": ((4, 18), (190, 255), (215, 255)),
               "R": ((-6, 3), (180, 255), (130, 200))},
    # Older sets: turquoise-leaning blue, yellow-orange, brown or grey-green black, crimson.
    "vintage": {"K": ((8, 60), (40, 130), (35, 80)),
                "B": ((94, 106), (150, 235), (110, 190)),
                "O": ((16, 26), (180, 255), (200, 250)),
                "R": ((-12, 0), (150, 235), (130, 200))},
    # Romanian Remi: red, yellow, blue, black.
    "remi": {"K": ((0, 180), (0, 50), (15, 50)),
             "B": ((102, 120), (180, 255), (120, 200)),
             "O": ((21, 30), (190, 255), (200, 255)),
             "R": ((-5, 4), (190, 255), (150, 225))},
    # Turkish Okey: the same four roles, an ochre yellow and often a lighter blue.
    "okey": {"K": ((0, 180), (0, 40), (10, 45)),
             "B": ((98, 116), (170, 255), (140, 220)),
             "O": ((18, 28), (200, 255), (190, 245)),
             "R": ((-4, 5), (200, 255), (165, 230))},
    # Worn sets: the inks have lost saturation and turned lighter.
    "faded": {"K": ((0, 180), (0, 50), (60, 105)),
              "B": ((100, 116), (90, 160), (150, 215)),
              "O": ((10, 22), (110, 180), (215, 250)),
              "R": ((-6, 4), (100, 170), (170, 225))},
    # Dark glossy inks: deep and saturated.
    "dark": {"K": ((0, 180), (0, 40), (5, 30)),
             "B": ((105, 122), (200, 255), (90, 150)),
             "O": ((8, 18), (220, 255), (170, 220)),
             "R": ((-6, 2), (210, 255), (110, 160))},
    # Hues no training family reaches: turquoise, pure yellow, olive, magenta.
    "unusual": {"K": ((28, 45), (70, 150), (40, 85)),
                "B": ((82, 93), (150, 240), (120, 200)),
                "O": ((27, 33), (170, 255), (200, 250)),
                "R": ((155, 167), (140, 230), (140, 210))},
}
"""Per family and role, the (lo, hi) ranges of hue, saturation and value an ink is drawn from.

OpenCV's convention: hue 0..180, saturation and value 0..255.  A hue range
may start below 0 to wrap round red (-6..3 is 174..180 and 0..3)."""

HELD_OUT_PALETTES: tuple[str, ...] = ("unusual",)
"""Families training never draws by default, to validate on inks the model has not seen."""

TRAINING_PALETTES: tuple[str, ...] = tuple(n for n in PALETTES if n not in HELD_OUT_PALETTES)
"""The families ``random_style`` draws from unless told otherwise."""

MIN_INK_DISTANCE = 25.0
"""The least CIE76 Lab distance between two inks of one set: makers keep them apart."""

_MAX_PALETTE_DRAWS = 200


def _hsv_to_bgr(hue: float, saturation: float, value: float) -> Colour:
    r, g, b = colorsys.hsv_to_rgb((hue % 180.0) / 180.0, saturation / 255.0, value / 255.0)
    return (b * 255.0, g * 255.0, r * 255.0)


def ink_lab(inks: Sequence[Colour]) -> npt.NDArray[np.float32]:
    """CIE Lab (L 0..100) of BGR 0..255 colours, one row each, to compare inks as eyes do."""
    bgr = np.asarray(inks, np.float32).reshape(1, -1, 3) / 255.0
    return cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).reshape(-1, 3)


def _distinct(inks: Sequence[Colour]) -> bool:
    lab = ink_lab(inks)
    gaps = np.linalg.norm(lab[:, None] - lab[None], axis=2)
    return bool(gaps[np.triu_indices(len(lab), 1)].min() >= MIN_INK_DISTANCE)


def palette_inks(name: str, rng: np.random.Generator) -> dict[str, Colour]:
    """One set's four BGR inks (K, B, O, R), drawn from the ``PALETTES`` family ``name``.

    Each ink is drawn uniformly in its role's hue, saturation and value ranges;
    that draw is the set's own variation, shared by all its tiles.  A draw with
    two inks closer than ``MIN_INK_DISTANCE`` in Lab is drawn again, since real
    sets are designed so that their colours are told apart.  The result depends
    only on ``name`` and the state of ``rng``."""
    if name not in PALETTES:
        raise ValueError(f"unknown palette family {name!r}; known: {', '.join(PALETTES)}")
    ranges = PALETTES[name]
    for _ in range(_MAX_PALETTE_DRAWS):
        inks = {role: _hsv_to_bgr(*(float(rng.uniform(lo, hi)) for lo, hi in ranges[role]))
                for role in INK_ROLES}
        if _distinct(list(inks.values())):
            return inks
    raise RuntimeError(f"palette family {name!r} rarely gives four distinct inks; widen it")


def random_style(rng: np.random.Generator, palettes: Sequence[str] | None = None) -> TileStyle:
    """A tile set: classic Rummikub, Romanian Remi, or another make, inked from a palette family.

    ``palettes`` names the families the inks may come from (one chosen at
    random); by default ``TRAINING_PALETTES``, so that ``HELD_OUT_PALETTES``
    stay unseen until asked for.  The family of fonts, marks and jokers is
    drawn independently of the palette.

    The palette and its inks come from a stream spawned off ``rng``, which
    leaves ``rng`` where it would be anyway: one seed gives the same set
    design, and the same draws to whatever the caller renders next, whichever
    families are asked for, so held-out validation differs from training in
    the inks alone.  A small per-set jitter from ``rng`` goes on top, unless it
    would bring two inks closer than ``MIN_INK_DISTANCE``."""
    names = tuple(TRAINING_PALETTES if palettes is None else palettes)
    if not names:
        raise ValueError("no palette family to draw from")
    unknown = [n for n in names if n not in PALETTES]
    if unknown:
        raise ValueError(f"unknown palette families {unknown}; known: {', '.join(PALETTES)}")
    family = str(rng.choice(["classic", "remi", "other"], p=[0.45, 0.3, 0.25]))
    cream = _jitter(rng, (208.0, 228.0, 238.0), 6)
    if family == "classic":
        font = str(rng.choice(("sans", *SANS_FONTS, *STROKE_FONTS)))
        weight = int(rng.integers(750, 1000))
        mark, joker, hollow = "logo", "face", bool(rng.random() < 0.8)
        face = cream
    elif family == "remi":
        font, weight = str(rng.choice(TILE_FONTS)), int(rng.integers(650, 1000))
        mark = str(rng.choice(["bar", "dot", "logo", "triangle"]))
        joker = str(rng.choice(["smiley", "jester", "letter"], p=[0.6, 0.25, 0.15]))
        hollow = bool(rng.random() < 0.3)
        face = _jitter(rng, (225.0, 238.0, 242.0), 6) if rng.random() < 0.6 else cream
    else:
        font, weight = str(rng.choice(TILE_FONTS)), int(rng.integers(550, 1000))
        mark, joker = str(rng.choice(MARKS)), str(rng.choice(JOKERS))
        hollow = bool(rng.random() < 0.4)
        face = _jitter(rng, (225.0, 235.0, 238.0), 14)
    ink_rng = rng.spawn(1)[0]
    palette = names[int(ink_rng.integers(len(names)))]
    drawn = palette_inks(palette, ink_rng)
    jittered = {key: _jitter(rng, value, 4) for key, value in drawn.items()}
    inks = jittered if _distinct(list(jittered.values())) else drawn
    # Okey sets print the small shape under the numeral in the tile's own ink.
    mark_in_ink = palette == "okey" and mark != "logo" and bool(ink_rng.random() < 0.7)
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
        palette=palette,
        mark_in_ink=mark_in_ink,
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


def _draw_mark(img: Image, style: TileStyle, w: int, h: int,
               colour: Colour) -> tuple[float, float, float, float]:
    cy = style.mark_y * h
    shape = img.shape[:2]
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
        mark_box = _draw_mark(img, style, w, h,
                              style.ink(colour) if style.mark_in_ink else style.mark_colour)
    img *= alpha[..., None]
    return TileRender(img, alpha, outline, numeral_box, mark_box)  # type: ignore[arg-type]
