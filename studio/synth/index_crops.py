"""Reader crops of card indices as a camera sees them at a table's distance.

A card scene (:mod:`.scene`) draws its indices 15 to 80 pixels long and mostly in
heavy faces; a real deck on a table seen whole shows indices 12 to 30 pixels long,
often printed in a light face with a small suit.  This renders the reader's training
crops of that regime straight away, a meld at a time, about thirty times faster
than whole scenes: 1 to 5 overlapping cards of one deck (half of the decks printed
light, see :func:`index_design`) on a table, turned as melds lie, shrunk so that
the index's longer side is 12 to 48 pixels, lit, blurred, noised and JPEG-compressed
at that size, and cut as :func:`tabletop.studio.reader_training.stored_crops` cuts
a labelled box: every index in full view, and some bare places (``none``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.synth.cards import DeckDesign, random_design, render_card
from tabletop.studio.synth.scene import random_card_label, square_to_a_side
from tabletop.studio.synth.textures import table_surface
from tabletop.vision.crops import crop
from tabletop.vision.detections import iou_matrix
from tabletop.vision.labels import class_id
from tabletop.vision.reader import NONE_INDEX

LIGHT_SHARE = 0.5
"""Decks printed with a light index face and a small suit (as many real decks are)."""
INDEX_SIDES = (12.0, 48.0)
"""The index's longer side in the camera's pixels, drawn log-uniform."""
RENDER_HEIGHT = 360
"""Cards are drawn this tall and shrunk to the camera's scale."""
NONE_PER_MELD = 0.5


def index_design(rng: np.random.Generator) -> DeckDesign:
    """A deck: :func:`.cards.random_design`'s, or with chance :data:`LIGHT_SHARE` one
    printed light (weight 200-420, worn thin, see ``shapes.THIN_BELOW``) with a suit
    0.45-0.75 of the rank's height and a smaller index."""
    design = random_design(rng, beside=True)
    if rng.random() < LIGHT_SHARE:
        design = replace(design, weight=int(rng.integers(200, 420)),
                         suit_scale=float(rng.uniform(0.45, 0.75)),
                         index_height=float(rng.uniform(0.06, 0.11)))
    return design


def _bounds(points: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return np.array([*points.min(axis=0), *points.max(axis=0)], np.float64)


def render_meld(rng: np.random.Generator
                ) -> tuple[npt.NDArray[np.uint8], list[npt.NDArray[np.float64]], list[str]]:
    """One meld photographed: the image (BGR), and the box and label of every index
    in full view."""
    design = index_design(rng)
    count = int(rng.integers(1, 6))
    labels = [random_card_label(rng) for _ in range(count)]
    cards = [render_card(label, design, RENDER_HEIGHT) for label in labels]
    ch, cw = cards[0].alpha.shape
    shift = rng.uniform(0.17, 0.5) * cw
    margin = round(0.45 * ch)
    height = ch + 2 * margin
    width = round(cw + (count - 1) * shift) + 2 * margin
    canvas = table_surface(rng, height, width).astype(np.float32)
    placed: list[tuple[npt.NDArray[np.float64], str, int]] = []
    lefts = [margin + round(i * shift) for i in range(count)]
    for i, card in enumerate(cards):
        x, y = lefts[i], margin + round(rng.normal(0, 0.01) * ch)
        region = canvas[y : y + ch, x : x + cw]
        shade = cv2.GaussianBlur(card.alpha, (0, 0), 0.02 * ch)
        region *= 1 - rng.uniform(0.15, 0.35) * shade[..., None]
        region *= 1 - card.alpha[..., None]
        region += card.image
        offset = np.array([x, y], np.float64)
        placed += [(card.indices[0] + offset, labels[i], i)]
        if i == count - 1:
            placed += [(index + offset, labels[i], i) for index in card.indices[1:2]]
    # an index is in full view where no later card covers its box
    visible = []
    for corners, label, i in placed:
        box = _bounds(corners)
        if i + 1 < count and lefts[i + 1] < box[2] + 0.01 * ch:
            continue
        visible.append((corners, label))
    longest = max(float(np.ptp(c, axis=0).max()) for c, _, _ in placed)
    side = math.exp(rng.uniform(*np.log(INDEX_SIDES)))
    scale = side / longest
    small = cv2.resize(canvas, (max(8, round(width * scale)), max(8, round(height * scale))),
                       interpolation=cv2.INTER_AREA)
    sy, sx = small.shape[0] / height, small.shape[1] / width
    angle = square_to_a_side(rng, 6, any_turn=0.25)
    h, w = small.shape[:2]
    turn = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    cos, sin = abs(turn[0, 0]), abs(turn[0, 1])
    out_w, out_h = int(h * sin + w * cos) + 2, int(h * cos + w * sin) + 2
    turn[:, 2] += (out_w / 2 - w / 2, out_h / 2 - h / 2)
    backdrop = table_surface(rng, out_h, out_w).astype(np.float32)
    mask = cv2.warpAffine(np.ones((h, w), np.float32), turn, (out_w, out_h),
                          flags=cv2.INTER_LINEAR)
    image = cv2.warpAffine(small, turn, (out_w, out_h), flags=cv2.INTER_LINEAR)
    image = image + backdrop * (1 - mask[..., None])
    image = _camera(image, rng)
    boxes, names = [], []
    for corners, label in visible:
        points = corners * (sx, sy)
        points = points @ turn[:, :2].T + turn[:, 2]
        boxes.append(_bounds(points))
        names.append(label)
    return image, boxes, names


def _camera(image: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.uint8]:
    """Light, a colour cast, focus, sensor noise and JPEG, at the camera's scale."""
    h, w = image.shape[:2]
    theta = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = 1 + rng.uniform(0, 0.3) * ((xx / w - 0.5) * np.cos(theta)
                                       + (yy / h - 0.5) * np.sin(theta))
    light *= rng.uniform(0.6, 1.1)
    warmth = rng.normal(0, 0.07)
    cast = np.array([1 - warmth, 1 + rng.normal(0, 0.02), 1 + warmth], np.float32)
    image = image * light[..., None] * cast
    if rng.random() < 0.5:
        image = cv2.GaussianBlur(image, (0, 0), rng.uniform(0.3, 0.9))
    if rng.random() < 0.8:
        image = image + rng.standard_normal((h, w, 1)).astype(np.float32) * rng.uniform(1, 6)
    out = np.clip(image, 0, 255).astype(np.uint8)
    if rng.random() < 0.8:
        ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 93))])
        if ok:
            out = cv2.imdecode(data, cv2.IMREAD_COLOR)
    return np.asarray(out, np.uint8)


def index_crops(count: int, seed: int, size: int = 96, context: float = 1.8
                ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16]]:
    """At least ``count`` stored crops (``size`` pixels, ``context`` x the box's longer
    side) of indices and of bare places, with their reader classes."""
    rng = np.random.default_rng(seed)
    images: list[npt.NDArray[np.uint8]] = []
    classes: list[int] = []
    while len(images) < count:
        image, boxes, labels = render_meld(rng)
        for box, label in zip(boxes, labels, strict=True):
            images.append(crop(image, box, size, context))
            classes.append(class_id(label, "card"))
        if boxes and rng.random() < NONE_PER_MELD:
            items = np.asarray(boxes)
            side = float(np.ptp(items[:, [0, 2]], axis=1).max()) * rng.uniform(0.7, 1.3)
            h, w = image.shape[:2]
            x, y = rng.uniform(0, max(1.0, w - side)), rng.uniform(0, max(1.0, h - side))
            candidate = np.array([[x, y, x + side, y + side]])
            if iou_matrix(candidate, items).max() < 0.1:
                images.append(crop(image, candidate[0], size, context))
                classes.append(NONE_INDEX)
    return np.stack(images), np.asarray(classes, np.int16)
