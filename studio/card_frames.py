"""Finder training frames whose card indices are real: cards drawn round the labelled
indices of the deck's *adapt* photo, laid in overlapping melds on a table.

    bank = load_card_bank(use_images=CARD_SPLIT["adapt"])          # deal1's cards only
    image, boxes = compose_card_frame(bank, np.random.default_rng(5))
    write_card_frames("data/real-indices", 400, seed=44001)     # a finder data set

The finders were trained on rendered scenes only, and a real index photographed small
looks unlike a rendered one: they leave many of them unboxed (issue 44).  These frames
show the finder real indices at a table's distance and closer:

* **Cards** are :mod:`tabletop.studio.card_replay`'s: blank cards carrying one real
  labelled index of the deck, top left and, turned half round, bottom right.  Only
  the *adapt* part of :data:`card_replay.CARD_SPLIT` (deal1) is used by default;
  :func:`write_card_frames` refuses a bank cut from a *measure* photo, which a model is
  only ever measured on.
* **Melds** of 1-6 cards, each ``CARD_PITCH`` of a card's width after the one before
  (as the game composer lays them): every card's top left index shows, only a meld's
  last card shows its bottom right one.  A frame has one card height, drawn from
  ``card_heights`` (70-160 pixels at 720: tables 70 cm to 1.6 m across), each meld
  turned by a few degrees or, a third of them, by any angle (cards lie every way round
  a table).  Melds never overlap each other.
* **The table**: half the frames on sabra-dev's real table (the game composer's), half
  on the renderer's wood, felt or marble; a light gain and colour cast, a little blur,
  sensor noise and a JPEG round trip.
* **Labels**: each index whose cut shows whole, boxed along the index's outline as
  drawn (its axis-aligned bounds, as the renderer boxes a turned index), class ``card``
  of :data:`vision.detector.FINDER_NAMES`.  An index under another card is not
  labelled and is not drawn visible either: a covered index is fully covered.

The folder :func:`write_card_frames` writes is both a finder data set for ultralytics
(``images/``, ``labels/`` with the finder's class ids, ``data.yaml``) and a
``tabletop synth`` folder (``annotations.jsonl``), so ``tabletop train --stage finder
--data`` takes it beside rendered folders.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.studio.card_replay import (
    CARD_ASPECT,
    CARD_PITCH,
    CARD_SPLIT,
    index_aspect,
    index_boxes,
    load_card_bank,
)
from tabletop.studio.replay import Box, CropBank, Image, ReplayError, _paste, load_background
from tabletop.vision.detections import Detections, ImageDetections
from tabletop.vision.detector import FINDER_NAMES

CARD_HEIGHTS = (70.0, 160.0)
"""Card heights drawn from, in pixels of a 720-pixel-high frame: the game composer's
90 and 125 pixels and the distances around them."""
MELDS = (3, 9)
"""How many melds a frame tries to lay (fewer where the table is full)."""
MELD_CARDS = (1, 6)
ANY_ANGLE_SHARE = 1 / 3
"""The share of melds turned by any angle; the others lie within ``SMALL_TURN_DEG`` of
upright, as melds laid facing the camera do."""
SMALL_TURN_DEG = 8.0
REAL_TABLE_SHARE = 0.5
"""The share of frames on sabra-dev's real table; the rest on rendered surfaces."""
PLACE_TRIES = 40
"""Places tried for a meld before it is left out (the table is full)."""


def _turned(points: npt.NDArray[np.float64], angle: float) -> npt.NDArray[np.float64]:
    c, s = math.cos(angle), math.sin(angle)
    return points @ np.array([[c, s], [-s, c]])


def _meld_quads(cards: int, width: float, height: float, origin: tuple[float, float],
                angle: float) -> list[npt.NDArray[np.float64]]:
    """The image corners (top left, top right, bottom right, bottom left) of each card of
    a meld laid from ``origin`` (its first card's top left corner) along ``angle``."""
    corners = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64)
    quads = []
    for k in range(cards):
        laid = corners + np.array([k * CARD_PITCH * width, 0.0])
        quads.append(_turned(laid, angle) + origin)
    return quads


def _index_quad(face_box: Box, face_size: tuple[int, int],
                quad: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """An index box of a card face (face pixels) as drawn on the image quad ``quad``."""
    fw, fh = face_size
    x1, y1, x2, y2 = face_box
    scale = np.array([(quad[1] - quad[0]) / fw, (quad[3] - quad[0]) / fh])
    points = np.array([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], np.float64)
    return np.asarray(quad[0] + points @ scale, np.float64)


def _background(rng: np.random.Generator, size: tuple[int, int],
                background: Image | None, realdata: str | Path | None
                ) -> npt.NDArray[np.float32]:
    from tabletop.studio.synth.textures import table_surface

    width, height = size
    if background is not None:
        table = cv2.resize(background, size, interpolation=cv2.INTER_AREA)
    elif rng.random() < REAL_TABLE_SHARE:
        table = load_background(realdata, size)
    else:
        # drawn at half size and enlarged, as the renderer does: a table is out of focus
        surface = table_surface(rng, height // 2, width // 2)
        table = cv2.resize(surface, size, interpolation=cv2.INTER_LINEAR)
    return np.asarray(table, np.float32)


def compose_card_frame(bank: CropBank, rng: np.random.Generator,
                       size: tuple[int, int] = (1280, 720), *,
                       card_heights: tuple[float, float] = CARD_HEIGHTS,
                       background: Image | None = None,
                       realdata: str | Path | None = None) -> tuple[Image, Detections]:
    """One frame of melds of ``bank``'s cards and its visible card indices (see the
    module's docstring).  ``background``: the table (default: drawn per frame);
    ``card_heights``: in pixels of a 720-pixel-high frame, scaled to ``size``.
    Geometry and labels depend on ``rng`` alone, never on the pictures drawn."""
    width, height = size
    labels = sorted(label for label, n in bank.labels().items() if n)
    if not labels:
        raise ReplayError("the card bank has no cards")
    canvas = _background(rng, size, background, realdata)
    card_h = float(rng.uniform(*card_heights)) * height / 720
    card_w = card_h * CARD_ASPECT
    occupied = np.zeros((height, width), bool)
    boxes: list[Box] = []
    names: list[str] = []
    for _ in range(int(rng.integers(MELDS[0], MELDS[1] + 1))):
        cards = int(rng.integers(MELD_CARDS[0], MELD_CARDS[1] + 1))
        angle = (rng.uniform(0, 2 * math.pi) if rng.random() < ANY_ANGLE_SHARE
                 else math.radians(rng.uniform(-SMALL_TURN_DEG, SMALL_TURN_DEG)))
        chosen = [labels[int(rng.integers(len(labels)))] for _ in range(cards)]
        crops = [bank.of(label)[int(rng.integers(len(bank.of(label))))] for label in chosen]
        placed = None
        for _ in range(PLACE_TRIES):
            origin = (float(rng.uniform(0, width)), float(rng.uniform(0, height)))
            quads = _meld_quads(cards, card_w, card_h, origin, angle)
            outline = np.concatenate(quads)
            if (outline.min() < 2 or outline[:, 0].max() > width - 2
                    or outline[:, 1].max() > height - 2):
                continue
            mask = np.zeros((height, width), np.uint8)
            hull = cv2.convexHull(np.round(outline).astype(np.int32))
            cv2.fillConvexPoly(mask, hull, 1)
            # a few pixels apart, so that no meld's shadow falls on another's index
            if not occupied[cv2.dilate(mask, np.ones((7, 7), np.uint8)) > 0].any():
                placed = quads
                occupied |= mask > 0
                break
        if placed is None:
            continue
        for k, (label, crop, quad) in enumerate(zip(chosen, crops, placed, strict=True)):
            _paste(canvas, crop.image, quad, (card_w, card_h))
            face_size = (crop.image.shape[1], crop.image.shape[0])
            corners = index_boxes((0.0, 0.0, float(face_size[0]), float(face_size[1])),
                                  index_aspect(crop))
            # the next card of the meld covers this one's bottom right index
            shown = corners if k == cards - 1 else corners[:1]
            for face_box in shown:
                drawn = _index_quad(face_box, face_size, quad)
                x1, y1 = drawn.min(axis=0)
                x2, y2 = drawn.max(axis=0)
                boxes.append((round(float(x1), 2), round(float(y1), 2),
                              round(float(x2), 2), round(float(y2), 2)))
                names.append(label)
    # the camera: light, colour cast, focus, sensor noise and compression
    canvas *= rng.uniform(0.7, 1.25) * rng.uniform(0.92, 1.08, 3).astype(np.float32)
    sigma = float(rng.uniform(0.0, 1.1))
    if sigma > 0.3:
        canvas = cv2.GaussianBlur(canvas, (0, 0), sigma)
    canvas += rng.standard_normal((*canvas.shape[:2], 1), dtype=np.float32) * rng.uniform(1, 5)
    image = np.clip(canvas + 0.5, 0, 255).astype(np.uint8)
    quality = int(rng.integers(55, 93))
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ReplayError("OpenCV could not encode a composed frame")
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    found = (Detections(np.array(boxes, np.float64), tuple(names),
                        tuple("card" for _ in names), np.ones(len(names)))  # type: ignore[arg-type]
             if boxes else Detections.empty())
    return decoded, found


def finder_yolo_lines(found: Detections, width: int, height: int) -> list[str]:
    """YOLO label lines with the finders' class ids (``FINDER_NAMES``: 0 tile, 1 card)."""
    from tabletop.studio.synth.dataset import yolo_lines

    return yolo_lines(found, width, height, lambda _label, kind: FINDER_NAMES.index(kind))


def finder_data_yaml() -> str:
    """ultralytics' data file for a finder folder, resolved beside it."""
    names = "\n".join(f"  {i}: {json.dumps(name)}" for i, name in enumerate(FINDER_NAMES))
    return f"train: images\nval: images\nnc: {len(FINDER_NAMES)}\nnames:\n{names}\n"


def write_card_frames(out: str | Path, frames: int, seed: int, *,
                      bank: CropBank | None = None, realdata: str | Path | None = None,
                      size: tuple[int, int] = (1280, 720),
                      card_heights: tuple[float, float] = CARD_HEIGHTS) -> Path:
    """``frames`` frames of :func:`compose_card_frame` into ``out`` (see the module's
    docstring); frame ``i`` is drawn from the generator seeded ``[seed, i]``.  ``bank``:
    default the cards of the *adapt* photos; one cut from a *measure* photo is refused."""
    if frames < 1:
        raise ReplayError(f"frames must be 1 or more, not {frames}")
    if bank is None:
        bank = load_card_bank(realdata, use_images=CARD_SPLIT["adapt"])
    measured = sorted(set(bank.used) & set(CARD_SPLIT["measure"]))
    if measured:
        raise ReplayError(f"the bank holds cards of {', '.join(measured)}, a photo models "
                          "are only measured on: train on the adapt photos' cards")
    out = Path(out)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    records: list[str] = []
    for index in range(frames):
        image, found = compose_card_frame(bank, np.random.default_rng([seed, index]), size,
                                          card_heights=card_heights, realdata=realdata)
        stem = f"{index:06d}"
        cv2.imwrite(str(out / "images" / f"{stem}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 95])
        lines = finder_yolo_lines(found, size[0], size[1])
        (out / "labels" / f"{stem}.txt").write_text("".join(f"{x}\n" for x in lines))
        record = ImageDetections(f"images/{stem}.jpg", size[0], size[1], found)
        records.append(json.dumps(record.to_json(with_confidence=False)))
    (out / "annotations.jsonl").write_text("".join(f"{r}\n" for r in records))
    (out / "data.yaml").write_text(finder_data_yaml())
    return out


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tabletop.studio.card_frames",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--seed", type=int, default=44001)
    parser.add_argument("--realdata", default=None)
    args = parser.parse_args(argv)
    out = write_card_frames(args.out, args.frames, args.seed, realdata=args.realdata)
    summary: dict[str, Any] = {"out": str(out), "frames": args.frames, "seed": args.seed,
                               "photos": list(CARD_SPLIT["adapt"])}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
