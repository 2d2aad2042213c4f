"""Cards read from their whole face: found as bright quadrilaterals, read by a face reader.

A card index 12 to 20 pixels long is where the card reader errs most (a spade read as
a club, an unknown deck's index not boxed at all), yet a card lying in full view shows
far more: the count and shape of its pips, its court figure, both corners.  This stage
finds card faces without a model (:func:`find_faces`: edges, contours, four corners, a
card's proportions, paper brighter than its surroundings), cuts each face to an
upright :data:`FACE_WIDTH` x :data:`FACE_HEIGHT` crop (:func:`face_crop`) and reads it
with a small net trained on rendered faces of many deck designs
(:class:`FaceReader`, the same classes as the readers: 52 cards, the joker, ``none``).

:func:`join_faces` then puts the two readings together, as one stage of the detector:

* a card index whose centre lies in a corner of a face read as a card has its card
  probabilities multiplied by the face's (and renormalised to its card mass, so whether
  the index is kept does not change); a face with an index elsewhere on it is several
  cards taken for one, and is left alone;
* a face read as a card with no box of the finder on it becomes a card index of its
  own, boxed at the face's top left corner, where an index is printed.

Overlapping cards in a meld show no whole face: there the index alone reads, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.vision.detections import Detections
from tabletop.vision.labels import Kind
from tabletop.vision.reader import (
    NONE_INDEX,
    READER_CLASSES,
    cpu_session,
    kind_mask,
    preprocess,
    softmax,
)

FACE_WIDTH = 64
FACE_HEIGHT = 96
"""A face crop's size in pixels (portrait: the card's long side vertical)."""
FACE_ASPECT = (0.5, 0.86)
"""Short side / long side of a quadrilateral taken for a card (poker 0.71, bridge 0.64;
a camera at an angle shortens or lengthens either)."""
SMALLEST_FACE = 48.0
"""A face's long side must be at least this many pixels of the frame."""
LARGEST_FACE = 0.9
"""... and at most this share of the frame's shorter side (the table's edge is no card)."""
WORKING_SIDE = 960
"""Faces are looked for on the frame shrunk to this longer side (edges of a card 48
pixels long are still plain); with the reading, the stage adds about 30 ms to a
1280x720 card frame on two cores."""
PAPER_CONTRAST = 12.0
"""A face's inner rim (its median grey) must be this much brighter than the ring just
outside it (its :data:`RING_PERCENTILE` percentile)."""
SLANT = 1.6
"""Opposite sides of a card seen at an angle differ by this factor at most."""
PAPER_GREY = 90.0
"""A face's inner rim is at least this grey (0-255): paper, however dim the light."""
RING_PERCENTILE = 30.0
"""The ring outside a face need be darker in part only: a card lying on another shows
paper beside it."""
NESTED_SHARE = 0.8
"""A quadrilateral inside a face and smaller than this share of it is part of the face."""
INDEX_CORNER = (0.26, 0.3)
"""The part of a face (of its width, of its height) from a corner where its index is
printed: the box given to a face that the finder boxed nothing on."""
CORNER_REACH = 0.35
"""A card index on a face lies within this share of its width and of its height from one
of its corners; a face with an index box elsewhere is several cards taken for one."""
FACE_FLOOR = 0.02
"""What the face reading keeps of a label it gives no chance: a product of the two
readings must not let one reader's certainty silence the other completely."""
FACE_TRUSTED = 0.5
"""A face is joined with the indices on it only where its reader gives the cards at
least this much (else it is no face, or one it cannot read)."""
FACE_ALONE = 0.6
"""A face with no box on it is named where its reader's best card has this much."""


def order_corners(quad: Any) -> npt.NDArray[np.float64]:
    """The four corners of ``quad`` (any order, shape (4, 2)) clockwise in the image,
    starting so that the first side is a short one: the face upright or upside down."""
    points = np.asarray(quad, np.float64).reshape(4, 2)
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    points = points[np.argsort(angles)]  # clockwise on screen (y grows downwards)
    sides = np.linalg.norm(points - np.roll(points, -1, axis=0), axis=1)
    if sides[0] + sides[2] > sides[1] + sides[3]:
        points = np.roll(points, -1, axis=0)
    # of the two ways up, the one whose first corner is nearer the image's top left
    if points[2].sum() < points[0].sum():
        points = np.roll(points, 2, axis=0)
    return points


# the crop's outer corners, pixel centres at whole numbers: a face cut and turned round is
# the face turned round and cut
_FACE_CORNERS = np.array([[-0.5, -0.5], [FACE_WIDTH - 0.5, -0.5],
                          [FACE_WIDTH - 0.5, FACE_HEIGHT - 0.5], [-0.5, FACE_HEIGHT - 0.5]],
                         np.float32)


def face_matrix(quad: Any) -> npt.NDArray[np.float64]:
    """The 3x3 perspective matrix taking image pixels to face-crop pixels."""
    source = order_corners(quad).astype(np.float32)
    return cv2.getPerspectiveTransform(source, _FACE_CORNERS).astype(np.float64)


def face_crop(image: npt.NDArray[np.uint8], quad: Any) -> npt.NDArray[np.uint8]:
    """The face inside ``quad`` (4 corners, image pixels) warped upright to
    :data:`FACE_HEIGHT` x :data:`FACE_WIDTH` (BGR)."""
    points = order_corners(quad)
    long_side = float(max(np.linalg.norm(points[1] - points[2]),
                          np.linalg.norm(points[3] - points[0])))
    source: npt.NDArray[Any] = image
    factor = int(long_side / (2 * FACE_HEIGHT))
    if factor >= 2:
        # shrinking more than twice with bilinear sampling aliases thin strokes
        source = cv2.resize(image, (max(1, image.shape[1] // factor),
                                    max(1, image.shape[0] // factor)),
                            interpolation=cv2.INTER_AREA)
        points = points * np.array([source.shape[1] / image.shape[1],
                                    source.shape[0] / image.shape[0]])
    matrix = cv2.getPerspectiveTransform(points.astype(np.float32), _FACE_CORNERS)
    return np.asarray(cv2.warpPerspective(source, matrix, (FACE_WIDTH, FACE_HEIGHT),
                                          flags=cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_REPLICATE), np.uint8)


def _percentile_in(grey: npt.NDArray[Any], mask: npt.NDArray[np.uint8],
                   percent: float) -> float:
    values = grey[mask > 0]
    return float(np.percentile(values, percent)) if values.size else 0.0


def _quad_iou(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a.astype(np.float32)) + cv2.contourArea(b.astype(np.float32)) - inter
    return float(inter / union) if union > 0 else 0.0


def _candidates(grey: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float64]]:
    """Convex quadrilaterals among the contours of two edge maps and one bright mask."""
    blurred = cv2.GaussianBlur(grey, (5, 5), 0)
    median = float(np.median(blurred))
    maps = []
    for low, high in ((0.5 * median, 1.2 * median), (30.0, 90.0), (8.0, 30.0)):
        edges = cv2.Canny(blurred, max(10.0, low), max(30.0, high))
        maps.append(cv2.dilate(edges, np.ones((3, 3), np.uint8)))
    _, bright = cv2.threshold(blurred, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    maps.append(cv2.morphologyEx(bright, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    quads = []
    for binary in maps:
        contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            if len(contour) < 4:
                continue
            hull = cv2.convexHull(contour)
            perimeter = cv2.arcLength(hull, True)
            if perimeter < 4 * SMALLEST_FACE * 0.5:
                continue
            approx = cv2.approxPolyDP(hull, 0.04 * perimeter, True)
            if len(approx) == 4 and cv2.isContourConvex(approx):
                quads.append(approx.reshape(4, 2).astype(np.float64))
    return quads


def find_faces(image: npt.NDArray[np.uint8]) -> list[npt.NDArray[np.float64]]:
    """The card faces in full view in a BGR frame: each a (4, 2) array of corners in
    the frame's pixels (:func:`order_corners`' order), largest first.  No model: a
    quadrilateral of a card's proportions (:data:`FACE_ASPECT`, :data:`SMALLEST_FACE`,
    :data:`LARGEST_FACE`) whose inside rim is paper, brighter than what lies just
    outside (:data:`PAPER_CONTRAST`); of two that overlap, the larger, and none inside
    another (:data:`NESTED_SHARE`)."""
    h, w = image.shape[:2]
    scale = min(1.0, WORKING_SIDE / max(h, w))
    small = cv2.resize(image, (round(w * scale), round(h * scale)),
                       interpolation=cv2.INTER_AREA) if scale < 1.0 else image
    grey = np.asarray(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), np.uint8)
    sh, sw = grey.shape
    kept: list[tuple[float, npt.NDArray[np.float64]]] = []
    for quad in _candidates(grey):
        points = order_corners(quad)
        sides = np.linalg.norm(points - np.roll(points, -1, axis=0), axis=1)
        short, long_ = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
        if long_ < SMALLEST_FACE * scale or long_ > LARGEST_FACE * min(sh, sw):
            continue
        if not FACE_ASPECT[0] <= short / long_ <= FACE_ASPECT[1]:
            continue
        if max(sides[0], sides[2]) > SLANT * min(sides[0], sides[2]) or max(
                sides[1], sides[3]) > SLANT * min(sides[1], sides[3]):
            continue
        area = cv2.contourArea(points.astype(np.float32))
        if area < 0.6 * short * long_:  # a thin wedge, not four corners of a card
            continue
        centre = points.mean(axis=0)
        band = max(2.0, 0.06 * short)
        outer = centre + (points - centre) * (1 + band / short)
        inner = centre + (points - centre) * (1 - band / short)
        innermost = centre + (points - centre) * (1 - 2 * band / short)
        # masks over the shape's bounding box only: a frame has hundreds of candidates
        x0, y0 = np.floor(outer.min(axis=0)).astype(int).clip(0)
        x1, y1 = np.ceil(outer.max(axis=0)).astype(int) + 1
        x1, y1 = min(x1, sw), min(y1, sh)
        if x1 - x0 < 4 or y1 - y0 < 4:
            continue
        window = grey[y0:y1, x0:x1]
        offset = np.array([x0, y0], np.float64)
        mask_in = np.zeros(window.shape, np.uint8)
        cv2.fillConvexPoly(mask_in, np.round(inner - offset).astype(np.int32), 1)
        cv2.fillConvexPoly(mask_in, np.round(innermost - offset).astype(np.int32), 0)
        mask_out = np.zeros(window.shape, np.uint8)
        cv2.fillConvexPoly(mask_out, np.round(outer - offset).astype(np.int32), 1)
        cv2.fillConvexPoly(mask_out, np.round(points - offset).astype(np.int32), 0)
        # the rim is paper all round; the ring outside need be darker only in part
        # (a card lying on another shows paper beside it)
        rim = _percentile_in(window, mask_in, 50)
        ring = _percentile_in(window, mask_out, RING_PERCENTILE)
        if rim < PAPER_GREY or rim < ring + PAPER_CONTRAST:
            continue
        kept.append((area, points))
    kept.sort(key=lambda item: -item[0])
    faces: list[npt.NDArray[np.float64]] = []
    for area, points in kept:
        # a court figure's frame or a printed border inside a face is no face of its own
        if all(_quad_iou(points, other) < 0.5 and not (
                inside(other, points.mean(axis=0))
                and area < NESTED_SHARE * cv2.contourArea(other.astype(np.float32)))
               for other in faces):
            faces.append(points)
    return [order_corners(face / scale) for face in faces]


def index_box(quad: Any) -> npt.NDArray[np.float64]:
    """The frame box [x1, y1, x2, y2] of the index corner of a face (its first corner,
    :data:`INDEX_CORNER` of the face)."""
    inverse = np.linalg.inv(face_matrix(quad))
    cw, ch = INDEX_CORNER[0] * FACE_WIDTH - 0.5, INDEX_CORNER[1] * FACE_HEIGHT - 0.5
    corners = np.array([[-0.5, -0.5, 1], [cw, -0.5, 1], [cw, ch, 1], [-0.5, ch, 1]],
                       np.float64)
    mapped = corners @ inverse.T
    mapped = mapped[:, :2] / mapped[:, 2:3]
    return np.array([*mapped.min(axis=0), *mapped.max(axis=0)], np.float64)


def inside(quad: Any, point: Any) -> bool:
    """Whether ``point`` (x, y) lies within ``quad``."""
    contour = np.asarray(quad, np.float32).reshape(-1, 1, 2)
    return bool(cv2.pointPolygonTest(contour, (float(point[0]), float(point[1])), False) >= 0)


class FaceReader:
    """A loaded face reader: ``reader.probabilities(image, quads)`` gives each face's
    probabilities over :data:`vision.reader.READER_CLASSES` (only the cards' and
    ``none`` are trained), read upright and upside down and averaged."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(f"face reader {str(self.path)!r} does not exist")
        self._session = cpu_session(self.path)
        outputs = self._session.get_outputs()
        if outputs[0].shape[-1] != len(READER_CLASSES):
            raise ValueError(f"face reader {str(self.path)!r} has {outputs[0].shape[-1]} "
                             f"classes, not {len(READER_CLASSES)}")
        self._input = self._session.get_inputs()[0].name
        self._output = outputs[0].name

    def read_crops(self, crops: npt.NDArray[np.uint8]) -> npt.NDArray[np.float64]:
        """(N, classes) probabilities of (N, FACE_HEIGHT, FACE_WIDTH, 3) BGR face crops,
        each read as it is and turned round, limited to the cards and ``none``."""
        if len(crops) == 0:
            return np.zeros((0, len(READER_CLASSES)), np.float64)
        both = np.concatenate([crops, crops[:, ::-1, ::-1]])
        logits = self._session.run([self._output], {self._input: preprocess(both)})[0]
        allowed = kind_mask("card")
        logits = np.where(allowed[None, :], logits, -np.inf)
        probabilities = softmax(logits.astype(np.float32)).reshape(2, len(crops), -1)
        return probabilities.mean(axis=0)  # type: ignore[no-any-return]

    def probabilities(self, image: npt.NDArray[np.uint8], quads: list[Any]
                      ) -> npt.NDArray[np.float64]:
        if not quads:
            return np.zeros((0, len(READER_CLASSES)), np.float64)
        return self.read_crops(np.stack([face_crop(image, quad) for quad in quads]))


def _at_corners(face: npt.NDArray[np.float64], points: npt.NDArray[np.float64]) -> bool:
    """Whether every point (frame pixels) lies in a corner of ``face``, where a card
    prints its indices (:data:`CORNER_REACH`), and there are no more than four."""
    if len(points) > 4:
        return False
    if not len(points):
        return True
    matrix = face_matrix(face)
    mapped = np.c_[points, np.ones(len(points))] @ matrix.T
    u = mapped[:, 0] / mapped[:, 2] / FACE_WIDTH
    v = mapped[:, 1] / mapped[:, 2] / FACE_HEIGHT
    return bool(np.all((np.minimum(u, 1 - u) < CORNER_REACH)
                       & (np.minimum(v, 1 - v) < CORNER_REACH)))


def join_faces(found: Detections, probabilities: npt.NDArray[np.float64],
               faces: list[npt.NDArray[np.float64]],
               face_probabilities: npt.NDArray[np.float64]
               ) -> tuple[Detections, npt.NDArray[np.float64]]:
    """The detector's ``found`` boxes and their reader ``probabilities`` with the faces'
    readings joined in (module docstring): indices on a trusted face reweighed, and a
    box for each face named alone, appended with its probabilities (its confidence is
    1: the face was found whole, and the detector multiplies in the reading's best)."""
    probabilities = np.array(probabilities, np.float64, copy=True)
    if not faces:
        return found, probabilities
    card_columns = kind_mask("card").copy()
    card_columns[NONE_INDEX] = False
    centres = (found.boxes[:, :2] + found.boxes[:, 2:]) / 2 if len(found) else np.zeros((0, 2))
    added_boxes: list[npt.NDArray[np.float64]] = []
    added_rows: list[npt.NDArray[np.float64]] = []
    for face, reading in zip(faces, face_probabilities, strict=True):
        card_mass = float(reading[card_columns].sum())
        if card_mass < FACE_TRUSTED:
            continue
        on_face = [i for i in range(len(found)) if inside(face, centres[i])]
        cards_on_face = [i for i in on_face if found.kinds[i] == "card"]
        if not _at_corners(face, centres[cards_on_face]):
            # indices inside the face, not at its corners: several cards taken for one
            continue
        for i in cards_on_face:
            row = probabilities[i]
            mass = float(row[card_columns].sum())
            if mass <= 0:
                continue
            product = row[card_columns] * (reading[card_columns] / card_mass + FACE_FLOOR)
            row[card_columns] = product / product.sum() * mass
        if on_face:
            continue
        best = float(reading[card_columns].max())
        if best < FACE_ALONE:
            continue
        row = np.zeros(len(READER_CLASSES))
        row[card_columns] = reading[card_columns] / card_mass
        added_boxes.append(index_box(face))
        added_rows.append(row)
    if not added_boxes:
        return found, probabilities
    rows = np.stack(added_rows)
    # a finder's box carries its kind only (the placeholder label JK); the reading names it
    card: Kind = "card"
    kinds = (card,) * len(rows)
    added = Detections(np.stack(added_boxes), ("JK",) * len(rows), kinds, np.ones(len(rows)))
    return Detections.concatenate([found, added]), np.concatenate([probabilities, rows])
