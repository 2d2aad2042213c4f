"""The table found by itself: the printed corner markers, looked for while the game runs.

``TableFinder.update(t, frame)`` looks for the four corner markers at most
every ``every_s`` seconds (an ArUco search costs a few milliseconds at 720p,
too much for every frame of a slow machine but nothing once a second).  It
answers with a new :class:`TableCalibration` when the table is first found
and again when the camera has moved (the marker centres stand more than
``moved_px`` from where they were, in ``patience`` looks in a row: a hand
over one marker moves nothing), and None otherwise.

The table's size comes from the markers themselves when none is given: each
marker is a square of the printed side (60 mm on the sheet
``tabletop calibration markers`` writes), so its edges, mapped into the unit
square spanned by the four centres, say how many millimetres the unit square
is wide and high (:func:`table_size_from_markers`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tabletop.calibration.markers import CORNER_IDS, FoundMarker, find_markers
from tabletop.calibration.table import CalibrationError, TableCalibration

Image = npt.NDArray[np.uint8]
DEFAULT_MARKER_MM = 60.0
"""The marker side of the sheet ``tabletop calibration markers`` prints by default."""


def table_size_from_markers(found: Mapping[int, FoundMarker],
                            marker_mm: float) -> tuple[float, float]:
    """Width and height (mm) between the four corner markers' centres, from their printed
    side: every marker edge, seen through the homography that maps the centres to the unit
    square, is ``marker_mm`` long, which fixes the square's two scales (least squares over
    the sixteen edges, so a marker at any rotation counts)."""
    import cv2

    centres = np.array([found[i].centre for i in CORNER_IDS], np.float32)
    unit = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    homography = cv2.getPerspectiveTransform(centres, unit)
    rows = []
    for i in CORNER_IDS:
        quad = cv2.perspectiveTransform(
            np.asarray(found[i].corners, np.float64).reshape(-1, 1, 2), homography
        ).reshape(4, 2)
        for k in range(4):
            dx, dy = quad[(k + 1) % 4] - quad[k]
            rows.append((dx * dx, dy * dy))
    # |(dx W, dy H)| = side for every edge: linear in W^2 and H^2
    a = np.array(rows, np.float64)
    b = np.full(len(rows), marker_mm * marker_mm)
    (w2, h2), *_ = np.linalg.lstsq(a, b, rcond=None)
    if not (w2 > 0 and h2 > 0):
        raise CalibrationError("the corner markers do not span a table (are they in order?)")
    return float(np.sqrt(w2)), float(np.sqrt(h2))


@dataclass(frozen=True)
class Found:
    calibration: TableCalibration
    moved: bool
    """True when this replaces an earlier calibration (the camera moved)."""


class TableFinder:
    """Finds the table from its corner markers now and then; see the module's docstring."""

    def __init__(self, *, table_mm: tuple[float, float] | None = None,
                 marker_mm: float = DEFAULT_MARKER_MM, every_s: float = 1.0,
                 moved_px: float = 8.0, patience: int = 2) -> None:
        if marker_mm <= 0:
            raise CalibrationError(f"the marker side must be positive mm, not {marker_mm!r}")
        self.table_mm = table_mm
        self.marker_mm = marker_mm
        self.every_s = every_s
        self.moved_px = moved_px
        self.patience = patience
        self.calibration: TableCalibration | None = None
        self.looks = 0
        self._last_look = float("-inf")
        self._off = 0

    def update(self, t: float, frame: Image) -> Found | None:
        if t - self._last_look < self.every_s:
            return None
        self._last_look = t
        self.looks += 1
        found = find_markers(frame)
        if any(i not in found for i in CORNER_IDS):
            return None
        centres = np.array([found[i].centre for i in CORNER_IDS])
        if self.calibration is not None:
            drift = float(np.median(np.linalg.norm(
                centres - np.array(self.calibration.image_corners), axis=1)))
            self._off = self._off + 1 if drift > self.moved_px else 0
            if self._off < self.patience:
                return None
        try:
            size = self.table_mm or table_size_from_markers(found, self.marker_mm)
            height, width = frame.shape[:2]
            calibration = TableCalibration(
                tuple((float(x), float(y)) for x, y in centres), size, (width, height), "markers")
        except CalibrationError:
            return None
        moved = self.calibration is not None
        self.calibration, self._off = calibration, 0
        return Found(calibration, moved)
