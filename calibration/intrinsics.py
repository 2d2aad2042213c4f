"""Optional camera intrinsics from a printed chessboard (or ChArUco board).

Most table cameras (webcams, phones) have little distortion at the distances
involved, so this is optional: when given, image points are undistorted
before the table homography is applied.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Points = npt.NDArray[np.float64]


@dataclass(frozen=True)
class CameraIntrinsics:
    matrix: tuple[tuple[float, float, float], ...]  # 3 x 3 camera matrix
    distortion: tuple[float, ...]  # OpenCV's k1 k2 p1 p2 [k3 ...]
    image_size: tuple[int, int]
    rms_px: float = 0.0  # reprojection error of the calibration

    def undistort_points(self, points: Any) -> Points:
        p = np.asarray(points, np.float64).reshape(-1, 1, 2)
        if len(p) == 0:
            return p.reshape(-1, 2)
        k = np.array(self.matrix, np.float64)
        return cv2.undistortPoints(p, k, np.array(self.distortion, np.float64), P=k).reshape(-1, 2)

    def to_json(self) -> dict[str, Any]:
        return {"matrix": [list(row) for row in self.matrix], "distortion": list(self.distortion),
                "image_size": list(self.image_size), "rms_px": round(self.rms_px, 4)}

    @classmethod
    def from_json(cls, obj: Any) -> CameraIntrinsics:
        try:
            return cls(tuple(tuple(float(v) for v in row) for row in obj["matrix"]),
                       tuple(float(v) for v in obj["distortion"]),
                       (int(obj["image_size"][0]), int(obj["image_size"][1])),
                       float(obj.get("rms_px", 0.0)))
        except (KeyError, TypeError, ValueError, IndexError):
            raise ValueError(f"intrinsics must have matrix, distortion, image_size: {obj!r:.120}"
                             ) from None


def chessboard_intrinsics(images: Sequence[npt.NDArray[np.uint8]],
                          inner_corners: tuple[int, int] = (9, 6),
                          square_mm: float = 25.0) -> CameraIntrinsics:
    """Calibrate from several views of a chessboard with ``inner_corners`` (columns, rows)."""
    cols, rows = inner_corners
    board = np.zeros((cols * rows, 3), np.float32)
    board[:, :2] = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2) * square_mm
    object_points, image_points = [], []
    size: tuple[int, int] | None = None
    for image in images:
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        size = (grey.shape[1], grey.shape[0])
        ok, corners = cv2.findChessboardCorners(grey, (cols, rows))
        if not ok:
            continue
        corners = cv2.cornerSubPix(grey, corners, (5, 5), (-1, -1),
                                   (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 1e-3))
        object_points.append(board)
        image_points.append(corners)
    if len(image_points) < 3 or size is None:
        raise ValueError(f"the chessboard {cols}x{rows} was found in {len(image_points)} of "
                         f"{len(images)} images; at least 3 views are needed")
    rms, matrix, distortion, _, _ = cv2.calibrateCamera(object_points, image_points, size,
                                                        None, None)
    return CameraIntrinsics(tuple(tuple(float(v) for v in row) for row in matrix),
                            tuple(float(v) for v in np.ravel(distortion)), size, float(rms))
