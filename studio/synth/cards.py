"""French playing cards drawn upright: deck designs, corner indices, pips, court cards.

Each card reports where its corner indices are (rank over suit, top left, and
the same turned round at the bottom right; four-index decks, common for Rommé
and canasta, print them in the other two corners too): those are the boxes a
detector learns (CONTRACT.md: a card's box covers its printed corner index).
German and Austrian decks letter their court cards B, D, K (Bube, Dame,
König); the label stays the contract's J, Q, K.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.synth.shapes import (
    FONTS,
    Mask,
    Points,
    ellipse_mask,
    fill_mask,
    paint,
    rounded_rect,
    suit_mask,
    text_aspect,
    text_mask,
)

Colour = tuple[float, float, float]
Image = npt.NDArray[np.float32]

# Pip centres (x, y in 0..1 of the pip area) of the number cards.
_PIPS: dict[str, list[tuple[float, float]]] = {
    "2": [(0.5, 0.0), (0.5, 1.0)],
    "3": [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    "4": [(0, 0), (1, 0), (0, 1), (1, 1)],
    "5": [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    "6": [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    "7": [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    "8": [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    "9": [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1),
          (1, 1)],
    "10": [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3),
           (0.5, 5 / 6), (0, 1), (1, 1)],
}


@dataclass(frozen=True)
class DeckDesign:
    """One deck's look.  Colours are BGR 0..255."""

    aspect: float  # card width / height (poker 0.714, bridge 0.64)
    corner: float  # corner radius / width
    paper: Colour
    black: Colour
    red: Colour
    font: str
    weight: int
    index_height: float  # rank height / card height
    index_stretch: float
    index_x: float  # left margin of the index / card width
    index_y: float  # top margin of the index / card height
    suit_scale: float  # index suit height / rank height
    pip_scale: float  # pip height / card height
    border: bool
    court_colours: tuple[Colour, Colour, Colour]
    suit_variant: int
    back: Colour
    suit_gap: float = 0.12  # space between rank and suit / rank height
    suit_centred: bool = True  # the suit centred under the rank, or flush with its left edge
    four_indices: bool = False  # indices in all four corners
    court_letters: str = "JQK"  # the printed letters of J, Q, K ("BDK" in German decks)
    suit_beside: bool = False  # the index's suit to the right of its rank, not under it


SUIT_BESIDE_SHARE = 0.25
"""The share of decks :func:`random_design` draws with the suit beside the rank when
asked for them (``beside=True``): many bridge and four-index decks print a wide
index, rank and suit in a row."""


def random_design(rng: np.random.Generator, beside: bool = False) -> DeckDesign:
    """A deck design; with ``beside``, a share :data:`SUIT_BESIDE_SHARE` of them
    print the suit beside the rank."""
    def jitter(colour: Colour, amount: float) -> Colour:
        c = np.clip(np.asarray(colour) + rng.normal(0, amount, 3), 0, 255)
        return (float(c[0]), float(c[1]), float(c[2]))

    # Drawn from a spawned stream, which leaves ``rng``'s draws as they were, so a
    # scene seeded before wide indices existed is drawn the same unless its deck is wide.
    suit_beside = beside and bool(rng.spawn(1)[0].random() < SUIT_BESIDE_SHARE)
    return DeckDesign(
        aspect=float(rng.choice([0.714, 0.64, 0.69])),
        corner=rng.uniform(0.04, 0.1),
        paper=jitter((246.0, 248.0, 248.0), 5),
        black=jitter((30.0, 28.0, 28.0), 8),
        red=jitter((40.0, 30.0, 200.0), 12),
        font=str(rng.choice(FONTS)),
        weight=int(rng.integers(450, 900)),
        index_height=rng.uniform(0.06, 0.13),  # bridge decks ~0.07, jumbo index ~0.13
        index_stretch=rng.uniform(0.6, 1.15),  # condensed index fonts too
        index_x=rng.uniform(0.025, 0.08),
        index_y=rng.uniform(0.02, 0.06),
        suit_scale=rng.uniform(0.6, 0.9),
        pip_scale=rng.uniform(0.12, 0.17),
        border=bool(rng.random() < 0.3),
        court_colours=(jitter((40.0, 180.0, 230.0), 20), jitter((40.0, 40.0, 190.0), 20),
                       jitter((150.0, 80.0, 30.0), 20)),
        suit_variant=int(rng.integers(0, 3)),
        back=jitter(tuple(float(v) for v in rng.choice([(140, 40, 30), (40, 40, 160),
                                                         (60, 90, 40)])), 15),  # type: ignore[arg-type]
        suit_gap=rng.uniform(0.03, 0.4),
        suit_centred=bool(rng.random() < 0.6),
        four_indices=bool(rng.random() < 0.3),
        court_letters="BDK" if rng.random() < 0.15 else "JQK",
        suit_beside=suit_beside,
    )


@dataclass(frozen=True)
class CardRender:
    image: Image
    alpha: Mask
    outline: Points
    indices: tuple[Points, ...]  # each index's 4 corners, in pixels of ``image``


def _suit_colour(design: DeckDesign, suit: str) -> Colour:
    return design.red if suit in "HD" else design.black


def _draw_index(layer: Image, cover: Mask, design: DeckDesign, rank: str, suit: str,
                w: int, h: int) -> Points:
    """Rank over suit (or beside it) at the top left; returns the index's corners."""
    colour = _suit_colour(design, suit)
    rh = design.index_height * h
    x0, y0 = design.index_x * w, design.index_y * h
    if rank == "JK":
        # A joker's index: the letters J O K E R down the corner.
        lh = rh * 0.62
        lw = lh * 0.8 * design.index_stretch
        y = y0
        for letter in "JOKER":
            m = text_mask(letter, design.font, design.weight, round(lh), max(1, round(lw)))
            paint(layer, m, colour, round(x0), round(y))
            window = cover[round(y) : round(y) + m.shape[0], round(x0) : round(x0) + m.shape[1]]
            window[:] = np.maximum(window, m[: window.shape[0], : window.shape[1]])
            y += lh * 1.12
        x1, y1 = x0 + lw, y - lh * 0.12
    else:
        printed = design.court_letters["JQK".index(rank)] if rank in "JQK" else rank
        rw = rh * text_aspect(printed, design.font, design.weight) * design.index_stretch
        rank_mask = text_mask(printed, design.font, design.weight, round(rh), max(1, round(rw)))
        paint(layer, rank_mask, colour, round(x0), round(y0))
        sh = rh * design.suit_scale
        sw = sh * 0.85
        if design.suit_beside:
            # in a row: the suit after the rank, level with its middle or its foot
            sx = x0 + rank_mask.shape[1] + rh * design.suit_gap * 0.6
            sy = y0 + (rank_mask.shape[0] - sh) * (0.5 if design.suit_centred else 1.0)
        else:
            sx = x0 + (rank_mask.shape[1] / 2 - sw / 2 if design.suit_centred else 0.0)
            sy = y0 + rank_mask.shape[0] + rh * design.suit_gap
        paint(layer, suit_mask(suit, max(2, round(sh)), max(2, round(sw)), design.suit_variant),
              colour, round(sx), round(sy))
        x1 = max(x0 + rank_mask.shape[1], round(sx) + round(sw))
        x0 = min(x0, round(sx))
        y1 = max(y0 + rank_mask.shape[0], round(sy) + round(sh))
    pad = 0.006 * h
    return np.array([(x0 - pad, y0 - pad), (x1 + pad, y0 - pad), (x1 + pad, y1 + pad),
                     (x0 - pad, y1 + pad)])


def _draw_court(img: Image, design: DeckDesign, rank: str, suit: str, box: tuple[float, ...]
                ) -> None:
    """A stylised court figure, mirrored top and bottom as on real cards."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    shape = img.shape[:2]
    gold, red, blue = design.court_colours
    colour = _suit_colour(design, suit)
    frame = np.array([(x1, y1), (x2, y1), (x2, y2), (x1, y2)])
    paint(img, fill_mask(shape, [frame]), (235.0, 240.0, 240.0))
    half = img[round(y1) : round(y1 + h / 2), round(x1) : round(x2)]
    hs = half.shape[:2]
    hw, hh = hs[1], hs[0]
    # robe, collar, head, crown or hair, and the rank letter on the robe
    paint(half, fill_mask(hs, [np.array([(0.1 * hw, hh), (0.9 * hw, hh), (0.75 * hw, 0.45 * hh),
                                         (0.25 * hw, 0.45 * hh)])]), blue if rank != "Q" else red)
    paint(half, fill_mask(hs, [np.array([(0.25 * hw, 0.45 * hh), (0.75 * hw, 0.45 * hh),
                                         (0.6 * hw, 0.6 * hh), (0.4 * hw, 0.6 * hh)])]), gold)
    paint(half, ellipse_mask(hs, (0.5 * hw, 0.3 * hh), (0.16 * hw, 0.16 * hh)),
          (150.0, 190.0, 235.0))
    if rank == "K" or rank == "Q":
        crown = np.array([(0.32 * hw, 0.16 * hh), (0.36 * hw, 0.02 * hh), (0.44 * hw, 0.1 * hh),
                          (0.5 * hw, 0.0), (0.56 * hw, 0.1 * hh), (0.64 * hw, 0.02 * hh),
                          (0.68 * hw, 0.16 * hh)])
        paint(half, fill_mask(hs, [crown]), gold)
    else:
        paint(half, ellipse_mask(hs, (0.5 * hw, 0.16 * hh), (0.2 * hw, 0.08 * hh)), red)
    sm = suit_mask(suit, max(2, round(0.18 * hh)), max(2, round(0.15 * hw)), design.suit_variant)
    paint(half, sm, colour, round(0.12 * hw), round(0.5 * hh))
    img[round(y1 + h / 2) : round(y1 + h / 2) + hh, round(x1) : round(x1) + hw] = half[::-1, ::-1]
    paint(img, ellipse_mask(shape, ((x1 + x2) / 2, (y1 + y2) / 2), (w / 2, h / 2),
                            thickness=1), colour, opacity=0.0)
    inset = np.array([[1.5, 1.5], [-1.5, 1.5], [-1.5, -1.5], [1.5, -1.5]])
    edge = fill_mask(shape, [frame]) - fill_mask(shape, [frame + inset])
    paint(img, edge.clip(0, 1), colour)


@lru_cache(maxsize=256)
def render_card(label: str, design: DeckDesign, height: int) -> CardRender:
    """The face of card ``label`` (AS..KC, 10H, JK), ``height`` pixels tall."""
    h = max(24, int(height))
    w = round(h * design.aspect)
    outline = rounded_rect(w, h, design.corner * w)
    alpha = fill_mask((h, w), [outline])
    img = np.empty((h, w, 3), np.float32)
    img[:] = design.paper
    if design.border:
        inset = rounded_rect(w * 0.9, h * 0.93, design.corner * w) + np.array([w * 0.05, h * 0.035])
        ring = fill_mask((h, w), [inset]) - fill_mask(
            (h, w), [rounded_rect(w * 0.9 - 3, h * 0.93 - 3, design.corner * w)
                     + np.array([w * 0.05 + 1.5, h * 0.035 + 1.5])])
        paint(img, ring.clip(0, 1), design.black, opacity=0.5)
    rank, suit = ("JK", "S") if label == "JK" else (label[:-1], label[-1])
    # The middle: pips, one big ace, a court figure, or the joker's jester star.
    # four-index decks keep their pips off the two extra indices
    left, right = (w * 0.34, w * 0.66) if design.four_indices else (w * 0.26, w * 0.74)
    top, bottom = h * 0.17, h * 0.83
    colour = _suit_colour(design, suit)
    if rank in _PIPS:
        ph = design.pip_scale * h * (0.8 if design.four_indices else 1.0)
        pw = ph * 0.85
        for px, py in _PIPS[rank]:
            cx, cy = left + px * (right - left), top + ph / 2 + py * (bottom - top - ph)
            m = suit_mask(suit, round(ph), round(pw), design.suit_variant)
            if py > 0.5:
                m = m[::-1, ::-1]
            paint(img, m, colour, round(cx - pw / 2), round(cy - ph / 2))
    elif rank == "A":
        ph = h * (0.22 if suit != "S" else 0.3)
        m = suit_mask(suit, round(ph), round(ph * 0.85), design.suit_variant)
        paint(img, m, colour, round(w / 2 - ph * 0.425), round(h / 2 - ph / 2))
    elif rank == "JK":
        t = np.linspace(-np.pi / 2, 1.5 * np.pi, 11)[:-1]
        r = w * 0.3
        radii = np.where(np.arange(10) % 2 == 0, r, r * 0.45)
        star = np.stack([w / 2 + radii * np.cos(t), h / 2 + radii * np.sin(t)], axis=1)
        paint(img, fill_mask((h, w), [star]), design.red)
    else:
        _draw_court(img, design, rank, suit, (w * 0.2, h * 0.15, w * 0.8, h * 0.85))
    # The index, once at the top left and turned round at the bottom right.
    layer = np.zeros((h, w, 3), np.float32)
    cover = np.zeros((h, w), np.float32)
    corners = _draw_index(layer, cover, design, rank, suit, w, h)
    if rank != "JK":
        cover = np.zeros((h, w), np.float32)
        x0, y0, x1, y1 = (int(v) for v in (*corners.min(axis=0), *corners.max(axis=0)))
        cover[max(0, y0) : y1 + 1, max(0, x0) : x1 + 1] = 1.0
        layer_grey = layer.max(axis=2)
        cover *= (layer_grey > 0).astype(np.float32)
    both_cover = np.maximum(cover, cover[::-1, ::-1])
    both_layer = layer + layer[::-1, ::-1]
    upright = [corners]  # the indices printed upright; each has a half-turned twin
    if design.four_indices:
        # the top-right index is the top-left one moved, not mirrored: glyphs read upright
        moved = np.zeros_like(cover)
        moved_layer = np.zeros_like(layer)
        x0, y0, x1, y1 = (int(v) for v in (*corners.min(axis=0), *corners.max(axis=0)))
        x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w - 1, x1), min(h - 1, y1)
        dx = w - x1 - 1 - x0
        moved[y0 : y1 + 1, x0 + dx : x1 + 1 + dx] = cover[y0 : y1 + 1, x0 : x1 + 1]
        moved_layer[y0 : y1 + 1, x0 + dx : x1 + 1 + dx] = layer[y0 : y1 + 1, x0 : x1 + 1]
        both_cover = np.maximum(both_cover, np.maximum(moved, moved[::-1, ::-1]))
        both_layer = both_layer + moved_layer + moved_layer[::-1, ::-1]
        upright.append(corners + np.array([(dx, 0.0)]))
    colour_layer = np.where(both_cover[..., None] > 0, both_layer / np.maximum(
        both_cover[..., None], 1e-3), 0.0)
    img = img * (1 - both_cover[..., None]) + colour_layer * both_cover[..., None]
    img *= alpha[..., None]
    indices = tuple(box for points in upright
                    for box in (points, (np.array([(w, h)]) - points)[[2, 3, 0, 1]]))
    return CardRender(img.astype(np.float32), alpha, outline, indices)


@lru_cache(maxsize=16)
def render_back(design: DeckDesign, height: int) -> CardRender:
    """A card face down: the deck's back pattern, no index."""
    h = max(24, int(height))
    w = round(h * design.aspect)
    outline = rounded_rect(w, h, design.corner * w)
    alpha = fill_mask((h, w), [outline])
    img = np.empty((h, w, 3), np.float32)
    img[:] = design.paper
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    pattern = (np.sin((xx + yy) * 0.5) * np.sin((xx - yy) * 0.5) > 0).astype(np.float32)
    inner = np.zeros((h, w), np.float32)
    cv2.rectangle(inner, (round(w * 0.06), round(h * 0.045)), (round(w * 0.94), round(h * 0.955)),
                  1.0, -1)
    m = inner * (0.55 + 0.45 * pattern)
    paint(img, m, design.back)
    img *= alpha[..., None]
    return CardRender(img, alpha, outline, ())
