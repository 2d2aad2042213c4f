"""Training crops of whole card faces, as :mod:`tabletop.vision.card_faces` cuts them.

One card of a random deck design (:func:`.index_crops.index_design`: heavy and light
index faces, four-index decks, German court letters) lies on a table, seen by a
camera at any turn and a slant, 50 to 300 pixels long, lit, blurred, noised and
JPEG-compressed at that size; its four corners, moved a little as an edge finder
misplaces them, are cut to an upright face crop.  A share of the crops are of things
an edge finder also takes for a card and the face reader must call ``none``: tiles of
rendered sets, card backs, bare table, two cards half overlapping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.synth.cards import render_back, render_card
from tabletop.studio.synth.index_crops import _camera, index_design
from tabletop.studio.synth.scene import random_card_label
from tabletop.studio.synth.textures import table_surface
from tabletop.studio.synth.tiles import random_style, render_tile
from tabletop.vision.card_faces import face_crop
from tabletop.vision.labels import TILE_LABELS, class_id
from tabletop.vision.reader import NONE_INDEX

RENDER_HEIGHT = 240
"""Cards are drawn this tall and brought to the camera's scale."""
FACE_SIDES = (50.0, 300.0)
"""The face's longer side in the camera's pixels, drawn log-uniform."""
NONE_SHARE = 0.18
"""Crops of things that are not a card face."""
LAID_SIZE = (1280, 720)
LAID_CARD_HEIGHTS = (110.0, 320.0)
"""The tables of :func:`laid_out`: frame size, and the range of its cards' heights."""
CORNER_ERROR = 0.015
"""Each corner of a face is moved by this much of its longer side (sd) before the cut."""


def _outline(width: float, height: float) -> npt.NDArray[np.float64]:
    return np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64)


def _ornate(rng: np.random.Generator, face: npt.NDArray[np.float32],
            colours: tuple[tuple[float, float, float], ...]) -> npt.NDArray[np.float32]:
    """A court figure overdrawn with strokes and dots of its colours: real court art is
    busier than the rendered figure, and the reader must not learn one drawing."""
    face = face.copy()
    h, w = face.shape[:2]
    x1, y1, x2, y2 = 0.22 * w, 0.17 * h, 0.78 * w, 0.83 * h
    ink = [*colours, (30.0, 30.0, 30.0)]
    for _ in range(int(rng.integers(15, 60))):
        colour = ink[int(rng.integers(len(ink)))]
        a = (int(rng.uniform(x1, x2)), int(rng.uniform(y1, y2)))
        if rng.random() < 0.6:
            b = (int(np.clip(a[0] + rng.normal(0, 0.12 * w), x1, x2)),
                 int(np.clip(a[1] + rng.normal(0, 0.08 * h), y1, y2)))
            cv2.line(face, a, b, colour, int(rng.integers(1, 4)))
        else:
            cv2.circle(face, a, int(rng.integers(1, 5)), colour, -1)
    return face


def _photograph(rng: np.random.Generator, face: npt.NDArray[np.float32],
                alpha: npt.NDArray[np.float32], beside: tuple[npt.NDArray[np.float32],
                                                               npt.NDArray[np.float32]] | None
                ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.float64]]:
    """``face`` (with its ``alpha``) on a table, seen by a camera; optionally a second
    face ``beside`` it, overlapping.  Returns the image and the face's four corners."""
    ch, cw = alpha.shape
    margin = round(0.6 * ch)
    height, width = ch + 2 * margin, cw + 2 * margin
    canvas = table_surface(rng, height, width).astype(np.float32)
    x0, y0 = margin, margin
    layers = [(face, alpha, x0, y0)]
    if beside is not None:
        other, other_alpha = beside
        dx = round(rng.uniform(0.25, 0.6) * cw) * (1 if rng.random() < 0.5 else -1)
        dy = round(rng.normal(0, 0.05) * ch)
        layers.append((other, other_alpha, x0 + dx, y0 + dy))
    for image, mask, x, y in layers:
        mh, mw = mask.shape
        x = int(np.clip(x, 0, width - mw))
        y = int(np.clip(y, 0, height - mh))
        region = canvas[y : y + mh, x : x + mw]
        shade = cv2.GaussianBlur(mask, (0, 0), 0.02 * ch)
        region *= 1 - rng.uniform(0.1, 0.35) * shade[..., None]
        region *= 1 - mask[..., None]
        region += image
    if rng.random() < 0.15:
        # a finger or a sleeve over an edge
        cx = x0 + rng.uniform(0, cw)
        cy = y0 + (0 if rng.random() < 0.5 else ch)
        axes = (int(rng.uniform(0.08, 0.2) * cw), int(rng.uniform(0.15, 0.3) * ch))
        skin = rng.uniform([90, 120, 160], [150, 180, 230])
        cv2.ellipse(canvas, (int(cx), int(cy)), axes, float(rng.uniform(0, 180)), 0, 360,
                    skin.tolist(), -1)
    corners = _outline(cw, ch) + np.array([x0, y0], np.float64)
    # the camera: a turn, a slant and the face's size in its pixels
    side = math.exp(rng.uniform(*np.log(FACE_SIDES)))
    zoom = side / ch
    turn = math.radians(rng.uniform(0, 360))
    slant = rng.uniform(-0.12, 0.12, (4, 2)) * ch
    source = _outline(width, height)
    target = source + slant
    centre = np.array([width / 2, height / 2])
    rotation = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    target = (target - centre) @ rotation.T * zoom
    target -= target.min(axis=0)
    size = np.ceil(target.max(axis=0)).astype(int) + 1
    matrix = cv2.getPerspectiveTransform(source.astype(np.float32), target.astype(np.float32))
    shrunk = canvas
    if zoom < 0.5:
        factor = min(int(1 / zoom), 8)
        shrunk = cv2.resize(canvas, (width // factor, height // factor),
                            interpolation=cv2.INTER_AREA)
        matrix = matrix @ np.diag([factor, factor, 1.0])
    picture = cv2.warpPerspective(shrunk, matrix, (int(size[0]), int(size[1])),
                                  flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    full = cv2.getPerspectiveTransform(source.astype(np.float32), target.astype(np.float32))
    placed = cv2.perspectiveTransform(corners.reshape(-1, 1, 2).astype(np.float32), full)
    return _camera(picture, rng), placed.reshape(4, 2).astype(np.float64)


def face_sample(rng: np.random.Generator) -> tuple[npt.NDArray[np.uint8], int]:
    """One face crop and its reader class."""
    design = index_design(rng)
    kind = rng.random()
    beside = None
    if kind >= NONE_SHARE:
        label = random_card_label(rng)
        card = render_card(label, design, RENDER_HEIGHT)
        face, alpha, target = card.image, card.alpha, class_id(label, "card")
        if label[:-1] in ("J", "Q", "K") and rng.random() < 0.6:
            face = _ornate(rng, face, design.court_colours)
    else:
        target = NONE_INDEX
        what = rng.random()
        if what < 0.35:
            tile = render_tile(str(rng.choice(TILE_LABELS)), random_style(rng), RENDER_HEIGHT)
            face, alpha = tile.image, tile.alpha
        elif what < 0.6:
            back = render_back(design, RENDER_HEIGHT)
            face, alpha = back.image, back.alpha
        elif what < 0.8:
            # two cards half over each other: the quad spans parts of both
            first = render_card(random_card_label(rng), design, RENDER_HEIGHT)
            second = render_card(random_card_label(rng), design, RENDER_HEIGHT)
            face, alpha = first.image, first.alpha
            beside = (second.image, second.alpha)
        else:
            # bare table where the edges happened to make a card's shape
            alpha = np.zeros((RENDER_HEIGHT, round(RENDER_HEIGHT * 0.7)), np.float32)
            face = np.zeros((*alpha.shape, 3), np.float32)
    image, corners = _photograph(rng, face, alpha, beside)
    if beside is not None:
        # the quad from the middle of the first card to the middle of the second
        width = corners[1] - corners[0]
        corners = corners + width * rng.uniform(0.3, 0.6)
    longest = float(np.linalg.norm(corners[2] - corners[1]))
    corners = corners + rng.normal(0, CORNER_ERROR * longest, corners.shape)
    return face_crop(image, corners), target


@dataclass(frozen=True)
class LaidCard:
    label: str
    outline: npt.NDArray[np.float64]  # 4 corners in the frame


def laid_out(seed: int) -> tuple[npt.NDArray[np.uint8], list[LaidCard]]:
    """A 1280x720 table with 4 to 9 cards of one design lying apart, none over another,
    at any turn, :data:`LAID_CARD_HEIGHTS` tall, seen by a camera (light, focus, noise,
    JPEG); each card's label and outline."""
    rng = np.random.default_rng(seed)
    design = index_design(rng)
    width, height = LAID_SIZE
    canvas = table_surface(rng, height, width).astype(np.float32)
    card_height = math.exp(rng.uniform(*np.log(LAID_CARD_HEIGHTS)))
    cards: list[LaidCard] = []
    centres: list[tuple[float, float, float]] = []
    for _ in range(int(rng.integers(4, 10))):
        label = random_card_label(rng)
        card = render_card(label, design, round(card_height))
        ch, cw = card.alpha.shape
        radius = math.hypot(ch, cw) / 2
        for _attempt in range(40):
            cx, cy = rng.uniform(radius, width - radius), rng.uniform(radius, height - radius)
            if all(math.hypot(cx - x, cy - y) > radius + r + 4 for x, y, r in centres):
                break
        else:
            continue
        angle = float(rng.uniform(-180, 180))
        matrix = cv2.getRotationMatrix2D((cw / 2, ch / 2), angle, 1.0)
        matrix[:, 2] += (cx - cw / 2, cy - ch / 2)
        face = cv2.warpAffine(card.image, matrix, (width, height), flags=cv2.INTER_LINEAR)
        alpha = cv2.warpAffine(card.alpha, matrix, (width, height), flags=cv2.INTER_LINEAR)
        shade = cv2.GaussianBlur(alpha, (0, 0), 0.02 * ch)
        canvas *= 1 - rng.uniform(0.1, 0.3) * shade[..., None]
        canvas = canvas * (1 - alpha[..., None]) + face
        corners = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float64)
        cards.append(LaidCard(label, corners @ matrix[:, :2].T + matrix[:, 2]))
        centres.append((cx, cy, radius))
    return _camera(canvas, rng), cards


def face_crops(count: int, seed: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int16]]:
    """``count`` face crops (N, FACE_HEIGHT, FACE_WIDTH, 3) and their reader classes."""
    rng = np.random.default_rng(seed)
    images, classes = [], []
    for _ in range(count):
        image, target = face_sample(rng)
        images.append(image)
        classes.append(target)
    return np.stack(images), np.asarray(classes, np.int16)
