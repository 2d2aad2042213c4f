"""The table plane: a homography from image pixels to table millimetres, saved as JSON.

Table coordinates: origin at the top-left corner of the play area as the
player at the bottom (seat 0) sees it, x to the right, y towards that player,
in millimetres.  The calibration is four image points for the four corners,
found from the ArUco markers (``from_markers``) or given by hand
(``from_corners``); the homography is computed from them, so the JSON file
stays small and readable and can be edited by hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.calibration.files import read_json, write_json
from tabletop.calibration.intrinsics import CameraIntrinsics
from tabletop.calibration.markers import CORNER_IDS, CORNER_NAMES, DICTIONARY_NAME, find_markers

FORMAT_VERSION = 1
Points = npt.NDArray[np.float64]


class CalibrationError(ValueError):
    """A calibration that cannot be made or read; the message says what is missing."""


def _corner_points(points: Any, what: str) -> tuple[tuple[float, float], ...]:
    try:
        array = np.asarray(points, np.float64).reshape(4, 2)
    except (TypeError, ValueError):
        raise CalibrationError(f"{what} must be four (x, y) points, not {points!r}") from None
    if not np.all(np.isfinite(array)):
        raise CalibrationError(f"{what} must be finite numbers, not {points!r}")
    quad = array.astype(np.float32)
    if not cv2.isContourConvex(quad) or abs(cv2.contourArea(quad)) < 1.0:
        raise CalibrationError(
            f"{what} {array.tolist()} are not the corners of a convex quadrilateral "
            "in the order top left, top right, bottom right, bottom left")
    return tuple((float(x), float(y)) for x, y in array)


@dataclass(frozen=True)
class TableCalibration:
    """Image corners of the play area and its size; everything else follows from them."""

    image_corners: tuple[tuple[float, float], ...]
    table_mm: tuple[float, float]
    image_size: tuple[int, int] | None = None
    source: str = "manual"  # "markers" or "manual"
    intrinsics: CameraIntrinsics | None = None
    homography: Points = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        corners = _corner_points(self.image_corners, "image corners")
        width, height = (float(v) for v in self.table_mm)
        if not (width > 0 and height > 0):
            raise CalibrationError(
                f"table size must be positive millimetres, not {self.table_mm!r}")
        object.__setattr__(self, "image_corners", corners)
        object.__setattr__(self, "table_mm", (width, height))
        src = np.array(self._undistorted(np.array(corners)), np.float64)
        dst = np.array([[0, 0], [width, 0], [width, height], [0, height]], np.float64)
        object.__setattr__(self, "homography", cv2.getPerspectiveTransform(
            src.astype(np.float32), dst.astype(np.float32)).astype(np.float64))

    # --- making -------------------------------------------------------------
    @classmethod
    def from_corners(cls, corners: Sequence[Sequence[float]], table_mm: tuple[float, float],
                     image_size: tuple[int, int] | None = None,
                     intrinsics: CameraIntrinsics | None = None) -> TableCalibration:
        return cls(tuple(tuple(map(float, c)) for c in corners), table_mm, image_size,
                   "manual", intrinsics)

    @classmethod
    def from_markers(cls, image: npt.NDArray[np.uint8], table_mm: tuple[float, float],
                     intrinsics: CameraIntrinsics | None = None) -> TableCalibration:
        """Find the four corner markers (ids 0..3 of DICT_4X4_50) in ``image``."""
        found = find_markers(image)
        missing = [f"id {i} ({name})" for i, name in zip(CORNER_IDS, CORNER_NAMES, strict=True)
                   if i not in found]
        if missing:
            raise CalibrationError(
                f"corner markers not found: {', '.join(missing)}; seen ids "
                f"{sorted(found) or 'none'} of {DICTIONARY_NAME}")
        corners = tuple(found[i].centre for i in CORNER_IDS)
        h, w = image.shape[:2]
        return cls(corners, table_mm, (w, h), "markers", intrinsics)

    # --- mapping -------------------------------------------------------------
    def _undistorted(self, points: Points) -> Points:
        if self.intrinsics is None:
            return np.asarray(points, np.float64).reshape(-1, 2)
        return self.intrinsics.undistort_points(points)

    def to_table(self, points: Any) -> Points:
        """Image pixels (N x 2) to table millimetres (N x 2)."""
        p = self._undistorted(np.asarray(points, np.float64).reshape(-1, 2))
        if len(p) == 0:
            return p
        return cv2.perspectiveTransform(p.reshape(-1, 1, 2), self.homography).reshape(-1, 2)

    def to_image(self, points: Any) -> Points:
        """Table millimetres to image pixels (without lens distortion)."""
        p = np.asarray(points, np.float64).reshape(-1, 1, 2)
        if len(p) == 0:
            return p.reshape(-1, 2)
        inverse = np.linalg.inv(self.homography)
        return cv2.perspectiveTransform(p, inverse).reshape(-1, 2)

    def table_polygon_in_image(self) -> Points:
        w, h = self.table_mm
        return self.to_image([[0, 0], [w, 0], [w, h], [0, h]])

    # --- JSON ----------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_VERSION,
            "source": self.source,
            "table_mm": list(self.table_mm),
            "image_size": list(self.image_size) if self.image_size else None,
            "image_corners": [[round(x, 3), round(y, 3)] for x, y in self.image_corners],
            "corner_order": list(CORNER_NAMES),
            "markers": {"dictionary": DICTIONARY_NAME, "ids": list(CORNER_IDS)},
            "intrinsics": self.intrinsics.to_json() if self.intrinsics else None,
        }

    @classmethod
    def from_json(cls, obj: Any) -> TableCalibration:
        if not isinstance(obj, dict):
            raise CalibrationError(f"a calibration must be a JSON object, not {obj!r:.80}")
        for key in ("table_mm", "image_corners"):
            if key not in obj:
                raise CalibrationError(f"calibration lacks {key!r}")
        size = obj.get("image_size")
        intrinsics = obj.get("intrinsics")
        table = obj["table_mm"]
        if not (isinstance(table, list) and len(table) == 2):
            raise CalibrationError(f"table_mm must be [width, height], not {table!r}")
        return cls(
            tuple(tuple(c) for c in obj["image_corners"]),
            (float(table[0]), float(table[1])),
            (int(size[0]), int(size[1])) if size else None,
            str(obj.get("source", "manual")),
            CameraIntrinsics.from_json(intrinsics) if intrinsics else None,
        )

    def save(self, path: str | Path) -> Path:
        return write_json(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> TableCalibration:
        return cls.from_json(read_json(path, CalibrationError, "calibration"))
