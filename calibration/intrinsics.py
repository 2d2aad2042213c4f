"""Optional camera intrinsics from a printed chessboard or ChArUco board.

Most table cameras (webcams, phones) have little distortion at the distances
involved, so this is optional: when given, image points are undistorted
before the table homography is applied.

A ChArUco board (a chessboard with an ArUco marker in each white square) is
the easier of the two to use: every corner is identified by the markers
round it, so a view showing only part of the board, or the board at a steep
angle, still counts, where ``cv2.findChessboardCorners`` needs the whole
board in sight.

    >>> write_charuco_board("board.png")          # print at 100 %, lay it flat
    >>> charuco_intrinsics([cv2.imread(p) for p in views])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Points = npt.NDArray[np.float64]
Image = npt.NDArray[np.uint8]

CHARUCO_DICTIONARY = "DICT_5X5_100"
"""The ChArUco board's markers: not the corner markers' ``DICT_4X4_50``, so a board lying on
the table is never taken for a corner marker, nor a corner marker for part of the board."""
CHARUCO_SQUARES = (5, 7)
"""Columns and rows of squares of the default board: 150 x 210 mm, fits A4 portrait."""
MIN_VIEWS = 3
"""Views of the board that a calibration needs at the least (more, at varied tilts, is better)."""
MIN_CHARUCO_CORNERS = 6
"""ChArUco corners a view needs to count (fewer say little about the lens)."""


class IntrinsicsError(ValueError):
    """A board that cannot be made, or too few views showing it; the message quotes which."""


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
            raise IntrinsicsError(
                f"intrinsics must have matrix, distortion, image_size: {obj!r:.120}") from None


def chessboard_intrinsics(images: Sequence[Image],
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
    if len(image_points) < MIN_VIEWS or size is None:
        raise IntrinsicsError(f"the chessboard {cols}x{rows} was found in {len(image_points)} of "
                              f"{len(images)} images; at least {MIN_VIEWS} views are needed")
    return _calibrate(object_points, image_points, size)


def _calibrate(object_points: Sequence[Any], image_points: Sequence[Any],
               size: tuple[int, int]) -> CameraIntrinsics:
    # k3 stays 0: a webcam's lens is well described by k1 and k2, and k3 fitted to a board that
    # seldom reaches the image corners bends them wildly (OpenCV's docs advise the same)
    rms, matrix, distortion, _, _ = cv2.calibrateCamera(
        [np.asarray(p, np.float32).reshape(-1, 1, 3) for p in object_points],
        [np.asarray(p, np.float32).reshape(-1, 1, 2) for p in image_points], size, None, None,
        flags=cv2.CALIB_FIX_K3)
    return CameraIntrinsics(tuple(tuple(float(v) for v in row) for row in matrix),
                            tuple(float(v) for v in np.ravel(distortion)), size, float(rms))


# --- ChArUco --------------------------------------------------------------------------


def charuco_board(squares: tuple[int, int] = CHARUCO_SQUARES, square_mm: float = 30.0,
                  marker_mm: float = 22.0,
                  dictionary: str = CHARUCO_DICTIONARY) -> cv2.aruco.CharucoBoard:
    """The board as OpenCV describes it: ``squares`` (columns, rows), sizes in millimetres."""
    cols, rows = squares
    if not (isinstance(cols, int) and isinstance(rows, int) and cols >= 2 and rows >= 2
            and cols * rows >= 6):
        raise IntrinsicsError(f"a ChArUco board needs 2 or more columns and rows of squares, "
                              f"not {squares!r}")
    if not 0 < marker_mm < square_mm:
        raise IntrinsicsError(f"the markers must be smaller than the squares: marker_mm "
                              f"{marker_mm!r}, square_mm {square_mm!r}")
    ids = getattr(cv2.aruco, dictionary, None) if dictionary.startswith("DICT_") else None
    if not isinstance(ids, int):
        raise IntrinsicsError(f"unknown ArUco dictionary {dictionary!r}; use one of OpenCV's "
                              f"DICT_... names, e.g. {CHARUCO_DICTIONARY}")
    chosen = cv2.aruco.getPredefinedDictionary(ids)
    markers = cols * rows // 2  # one in each white square
    if markers > len(chosen.bytesList):
        raise IntrinsicsError(f"a {cols}x{rows} board needs {markers} markers, {dictionary!r} "
                              f"has only {len(chosen.bytesList)}")
    return cv2.aruco.CharucoBoard((cols, rows), float(square_mm), float(marker_mm), chosen)


def charuco_board_image(squares: tuple[int, int] = CHARUCO_SQUARES, square_mm: float = 30.0,
                        marker_mm: float = 22.0, dictionary: str = CHARUCO_DICTIONARY, *,
                        dpi: int = 200, margin_mm: float = 12.0) -> Image:
    """The board, black on white, ``dpi`` pixels per inch so it prints to scale, with a white
    margin (the markers need a quiet zone) and its sizes written in the bottom margin, so
    the numbers to give ``charuco_intrinsics`` travel with the print."""
    board = charuco_board(squares, square_mm, marker_mm, dictionary)
    if dpi < 50 or margin_mm < 5:
        raise IntrinsicsError(f"dpi must be 50 or more and margin_mm 5 or more, not dpi {dpi!r}, "
                              f"margin_mm {margin_mm!r}")
    px_per_mm = dpi / 25.4
    cols, rows = squares
    square_px = square_mm * px_per_mm
    margin = round(margin_mm * px_per_mm)
    width, height = round(cols * square_px) + 2 * margin, round(rows * square_px) + 2 * margin
    image: Image = board.generateImage((width, height), marginSize=margin)
    caption = (f"ChArUco {cols}x{rows}, squares {square_mm:g} mm, markers {marker_mm:g} mm, "
               f"{dictionary}. Print at 100 %.")
    scale = 0.35 * dpi / 100
    (text_w, text_h), _ = cv2.getTextSize(caption, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    if text_w <= width - margin and text_h < margin // 2:  # only where it fits the margin
        cv2.putText(image, caption, (margin // 2, height - margin // 3),
                    cv2.FONT_HERSHEY_SIMPLEX, scale, 0, 1, cv2.LINE_AA)
    return image


def write_charuco_board(path: str | Path, squares: tuple[int, int] = CHARUCO_SQUARES,
                        square_mm: float = 30.0, marker_mm: float = 22.0,
                        dictionary: str = CHARUCO_DICTIONARY, *, dpi: int = 200,
                        pdf: bool = False) -> Path:
    """Write the board as PNG (its resolution recorded) or PDF (its page the board): either
    prints to scale at 100 %."""
    from tabletop.calibration.printing import write_page

    image = charuco_board_image(squares, square_mm, marker_mm, dictionary, dpi=dpi)
    try:
        return write_page(path, image, dpi, pdf=pdf)
    except ValueError as error:
        raise IntrinsicsError(str(error)) from None


def charuco_intrinsics(images: Sequence[Image], squares: tuple[int, int] = CHARUCO_SQUARES,
                       square_mm: float = 30.0, marker_mm: float = 22.0,
                       dictionary: str = CHARUCO_DICTIONARY) -> CameraIntrinsics:
    """Calibrate from several views (BGR or grey, one size) of the ChArUco board printed by
    ``charuco_board_image`` with the same ``squares``, sizes and ``dictionary``.

    A view counts when it shows ``MIN_CHARUCO_CORNERS`` corners not all on one line; part
    of the board is enough.  Fewer than ``MIN_VIEWS`` such views raise ``IntrinsicsError``.
    """
    board = charuco_board(squares, square_mm, marker_mm, dictionary)
    detector = cv2.aruco.CharucoDetector(board)
    object_points: list[Points] = []
    image_points: list[Points] = []
    sizes: set[tuple[int, int]] = set()
    for image in images:
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        sizes.add((grey.shape[1], grey.shape[0]))
        corners, ids, _, _ = detector.detectBoard(grey)
        if ids is None or len(ids) < MIN_CHARUCO_CORNERS:
            continue
        if board.checkCharucoCornersCollinear(ids):  # one line says nothing of the plane
            continue
        found_object, found_image = board.matchImagePoints(corners, ids)
        object_points.append(np.asarray(found_object, np.float64))
        image_points.append(np.asarray(found_image, np.float64))
    if len(sizes) > 1:
        raise IntrinsicsError(f"the views must all have one size, not {sorted(sizes)!r}")
    if len(image_points) < MIN_VIEWS:
        cols, rows = squares
        raise IntrinsicsError(
            f"the ChArUco board {cols}x{rows} ({dictionary}) was found in {len(image_points)} "
            f"of {len(images)} images; at least {MIN_VIEWS} views showing "
            f"{MIN_CHARUCO_CORNERS} or more of its corners are needed")
    return _calibrate(object_points, image_points, sizes.pop())
