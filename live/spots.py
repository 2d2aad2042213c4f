"""Where a meld row suggests an item the detector missed: spots to look at again.

Tiles of a meld lie nearly touching and evenly spaced, cards' indices too.  Two
rows whose facing ends lie in line, two pitches apart, have room for exactly one
item between them: most often one meld whose middle item the frame's pass did not
find (grouping cut it at the gap).  A row of two items is one short of any meld:
its next item may lie just beyond either end, and so may a longer row's last item
when the pass missed it.  :func:`gap_spots` gives those places
as boxes in frame pixels; the watcher has the detector look there again
(``vision.detector.Detector.look_again``) before the meld is judged.

Pure geometry on the tracks' boxes: no frames, no model.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

GAP_PITCHES = (1.6, 2.4)
"""Two row ends this many pitches apart (centre to centre) leave room for one item."""
MIN_ALIGNMENT = 0.95
"""|cos| of the angle between a row's direction and the line to the other row's end."""
SHORT_ROW = 2
"""A row of this many items is one short of a meld: both its ends are looked beyond."""
FREE_OVERLAP = 0.2
"""A spot overlapping a seen item's box by more IoU than this is no gap."""


@dataclass(frozen=True)
class Spot:
    box: tuple[float, float, float, float]
    """Frame pixels (x1, y1, x2, y2)."""
    kind: str

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.box[0] + self.box[2]) / 2, (self.box[1] + self.box[3]) / 2)

    def key(self, grid: float = 8.0) -> tuple[int, int, str]:
        """The spot rounded to ``grid`` pixels: one place across frames."""
        x, y = self.centre
        return (round(x / grid), round(y / grid), self.kind)


def _centre(box: FloatArray) -> FloatArray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])


def _box_at(centre: FloatArray, size: FloatArray) -> tuple[float, float, float, float]:
    half = size / 2
    return (float(centre[0] - half[0]), float(centre[1] - half[1]),
            float(centre[0] + half[0]), float(centre[1] + half[1]))


def iou(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> float:
    """The IoU of two boxes (x1, y1, x2, y2)."""
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _pitch(centres: Sequence[FloatArray]) -> float | None:
    if len(centres) < 2:
        return None
    return float(np.median([np.linalg.norm(b - a) for a, b in itertools.pairwise(centres)]))


def _aligned(direction: FloatArray | None, step: FloatArray) -> bool:
    if direction is None:
        return True
    norm = float(np.linalg.norm(direction) * np.linalg.norm(step))
    return norm > 0 and abs(float(direction @ step)) / norm >= MIN_ALIGNMENT


def gap_spots(boxes: Mapping[int, FloatArray], kinds: Mapping[int, str],
              rows: Sequence[Sequence[int]], frame_size: tuple[int, int] | None = None,
              row_ends: bool = False) -> list[Spot]:
    """Spots (frame pixels) where one item may be missing: between two rows' facing ends
    lying in line two pitches apart, and beyond each end of a row of :data:`SHORT_ROW`
    items (with ``row_ends``, of every row of two or more); ``boxes`` and ``kinds`` by
    track id, ``rows`` the meld rows in reading order (single items as rows of one).  A
    spot on a seen item, or off the frame, is left out."""
    spots: list[Spot] = []
    rows = [list(row) for row in rows if row and all(k in boxes for k in row)]
    centres = [[_centre(boxes[k]) for k in row] for row in rows]
    sizes = [np.mean([boxes[k][2:] - boxes[k][:2] for k in row], axis=0) for row in rows]

    def ends(index: int) -> list[tuple[int, FloatArray | None]]:
        """(track id, outward direction or None) of each end of row ``index``."""
        row, points = rows[index], centres[index]
        if len(row) == 1:
            return [(row[0], None)]
        return [(row[0], points[0] - points[1]), (row[-1], points[-1] - points[-2])]

    for first in range(len(rows)):
        for second in range(first + 1, len(rows)):
            for a, out_a in ends(first):
                for b, out_b in ends(second):
                    if kinds[a] != kinds[b]:
                        continue
                    ca, cb = _centre(boxes[a]), _centre(boxes[b])
                    step = cb - ca
                    pitch = (_pitch(centres[first]) or _pitch(centres[second])
                             or float(max(sizes[first].max(), sizes[second].max())))
                    distance = float(np.linalg.norm(step))
                    if not GAP_PITCHES[0] * pitch <= distance <= GAP_PITCHES[1] * pitch:
                        continue
                    # each row must point at the other: its outward end towards it
                    if out_a is not None and (not _aligned(out_a, step) or out_a @ step <= 0):
                        continue
                    if out_b is not None and (not _aligned(out_b, -step) or out_b @ -step <= 0):
                        continue
                    size = (sizes[first] + sizes[second]) / 2
                    spots.append(Spot(_box_at((ca + cb) / 2, size), kinds[a]))
    for index, row in enumerate(rows):
        if len(row) < SHORT_ROW or (len(row) > SHORT_ROW and not row_ends):
            continue
        for key, outward in ends(index):
            assert outward is not None
            spots.append(Spot(_box_at(_centre(boxes[key]) + outward, sizes[index]), kinds[key]))
    seen = list(boxes.values())
    free: list[Spot] = []
    for spot in spots:
        if frame_size is not None:
            width, height = frame_size
            x1, y1, x2, y2 = spot.box
            if x1 < 0 or y1 < 0 or x2 > width or y2 > height:
                continue
        if any(iou(spot.box, box) > FREE_OVERLAP for box in seen):
            continue
        if any(iou(spot.box, other.box) > 0.5 for other in free):
            continue
        free.append(spot)
    return free

