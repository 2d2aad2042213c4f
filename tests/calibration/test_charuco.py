"""Camera intrinsics from a printed ChArUco board, with real OpenCV.

The printable board image is "photographed" by a known camera: every pixel of
a view is traced back through the lens (distortion included) and the board's
pose onto the board plane, and the print is sampled there.  Calibrating from
those views must give the camera back.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt
import pytest

from tabletop.calibration import (
    CameraIntrinsics,
    IntrinsicsError,
    TableCalibration,
    charuco_board,
    charuco_board_image,
    charuco_intrinsics,
)
from tests.calibration.printed import printed_pdf, printed_png

SQUARES = (5, 7)
SQUARE_MM, MARKER_MM = 30.0, 22.0
PRINT_DPI = 150
MARGIN_MM = 12.0  # charuco_board_image's default
VIEW_SIZE = (960, 720)


def camera(fx: float = 900.0, fy: float = 905.0, cx: float = 492.0, cy: float = 350.0
           ) -> npt.NDArray[np.float64]:
    return np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]], np.float64)


def photograph(board: npt.NDArray[np.uint8], matrix: npt.NDArray[np.float64],
               distortion: npt.NDArray[np.float64], rotation_deg: tuple[float, float, float],
               centre_px: tuple[float, float], distance_mm: float,
               size: tuple[int, int] = VIEW_SIZE) -> npt.NDArray[np.uint8]:
    """The printed ``board`` lying at ``distance_mm``, tilted by ``rotation_deg`` (about the
    camera's x, y, z axes), its centre seen at ``centre_px``, on a grey table."""
    rotation = cv2.Rodrigues(np.radians(np.array(rotation_deg, np.float64)))[0]
    board_centre = np.array([SQUARES[0] * SQUARE_MM / 2, SQUARES[1] * SQUARE_MM / 2, 0.0])
    ray = np.linalg.inv(matrix) @ np.array([*centre_px, 1.0])
    translation = ray / ray[2] * distance_mm - rotation @ board_centre
    # every view pixel -> ideal (undistorted) normalised ray -> the board plane z = 0
    w, h = size
    grid = np.stack(np.meshgrid(np.arange(w), np.arange(h)), -1).reshape(-1, 1, 2)
    rays = cv2.undistortPoints(grid.astype(np.float64), matrix, distortion, None, None, None,
                                   (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-9))
    rays = np.concatenate([rays.reshape(-1, 2), np.ones((w * h, 1))], axis=1)
    plane = np.column_stack([rotation[:, 0], rotation[:, 1], translation])
    on_board = (np.linalg.inv(plane) @ rays.T).T
    xy_mm = on_board[:, :2] / on_board[:, 2:3]
    px_per_mm = PRINT_DPI / 25.4
    source = xy_mm * px_per_mm + MARGIN_MM * px_per_mm - 0.5  # pixel centres
    maps = source.reshape(h, w, 2).astype(np.float32)
    # blur the print a little first: the view samples it coarser than it was drawn
    soft = cv2.GaussianBlur(board, (0, 0), 0.8)
    view = cv2.remap(soft, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=110)
    return np.asarray(view, np.uint8)


POSES = [  # (rotation about x, y, z in degrees), where the centre lands, distance
    ((0, 0, 0), (480, 360), 520),
    ((25, 0, 5), (430, 330), 500),
    ((-25, 10, -8), (520, 390), 540),
    ((0, 30, 90), (470, 350), 560),
    ((10, -30, 0), (500, 370), 500),
    # off to each corner, so the lens is seen where it bends most
    ((-20, -20, 15), (230, 200), 520),
    ((20, 20, -15), (730, 520), 520),
    ((15, -20, 95), (720, 190), 540),
    ((-15, 20, 85), (240, 530), 540),
]


@pytest.fixture(scope="module")
def board_print() -> npt.NDArray[np.uint8]:
    return charuco_board_image(SQUARES, SQUARE_MM, MARKER_MM, dpi=PRINT_DPI)


@pytest.mark.parametrize("fx, fy, cx, cy, distortion", [
    (900.0, 905.0, 492.0, 350.0, (-0.12, 0.08, 0.0, 0.0, 0.0)),  # a webcam's barrel
    (700.0, 700.0, 470.0, 372.0, (0.0, 0.0, 0.0, 0.0, 0.0)),  # wide and clean
])
def test_the_camera_comes_back_from_synthetic_views(board_print: npt.NDArray[np.uint8],
                                                    fx: float, fy: float, cx: float, cy: float,
                                                    distortion: tuple[float, ...]) -> None:
    matrix, lens = camera(fx, fy, cx, cy), np.array(distortion, np.float64)
    views = [photograph(board_print, matrix, lens, *pose) for pose in POSES]
    found = charuco_intrinsics(views, SQUARES, SQUARE_MM, MARKER_MM)
    assert isinstance(found, CameraIntrinsics) and found.image_size == VIEW_SIZE
    k = np.array(found.matrix)
    assert k[0, 0] == pytest.approx(fx, rel=0.03) and k[1, 1] == pytest.approx(fy, rel=0.03)
    assert k[0, 2] == pytest.approx(cx, rel=0.03) and k[1, 2] == pytest.approx(cy, rel=0.03)
    assert found.rms_px < 1.0
    # the lens itself: a point near the view's corner undistorts where the truth puts it
    corner = np.array([[90.0, 70.0]])
    truth = cv2.undistortPoints(corner.reshape(-1, 1, 2), matrix, lens, P=matrix).reshape(-1, 2)
    assert np.linalg.norm(found.undistort_points(corner) - truth) < 3.0


def test_detected_corners_sit_where_the_camera_projects_them(
        board_print: npt.NDArray[np.uint8]) -> None:
    # checks the renderer above as much as the detector: a wrong test camera proves nothing
    matrix, lens = camera(), np.array([-0.12, 0.08, 0, 0, 0], np.float64)
    rotation_deg, centre, distance = POSES[1]
    view = photograph(board_print, matrix, lens, rotation_deg, centre, distance)
    board = charuco_board(SQUARES, SQUARE_MM, MARKER_MM)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(view)
    assert ids is not None and len(ids) == (SQUARES[0] - 1) * (SQUARES[1] - 1)
    rotation = cv2.Rodrigues(np.radians(np.array(rotation_deg, np.float64)))[0]
    ray = np.linalg.inv(matrix) @ np.array([*centre, 1.0])
    board_centre = np.array([SQUARES[0] * SQUARE_MM / 2, SQUARES[1] * SQUARE_MM / 2, 0.0])
    translation = ray / ray[2] * distance - rotation @ board_centre
    object_points = np.asarray(board.getChessboardCorners(), np.float64)[ids.ravel()]
    expected, _ = cv2.projectPoints(object_points, cv2.Rodrigues(rotation)[0], translation,
                                    matrix, lens)
    assert np.abs(expected.reshape(-1, 2) - corners.reshape(-1, 2)).max() < 1.0


def test_views_without_the_board_say_how_many_showed_it(
        board_print: npt.NDArray[np.uint8]) -> None:
    rng = np.random.default_rng(3)
    empty = [rng.integers(90, 140, (*VIEW_SIZE[::-1], 3), dtype=np.uint8) for _ in range(4)]
    with pytest.raises(IntrinsicsError, match=r"found in 0 of 4 images"):
        charuco_intrinsics(empty, SQUARES, SQUARE_MM, MARKER_MM)
    # two good views are not enough either; the message says how many were found
    two = [photograph(board_print, camera(), np.zeros(5), *pose) for pose in POSES[:2]]
    with pytest.raises(IntrinsicsError, match=r"found in 2 of 6 images; at least 3"):
        charuco_intrinsics(two + empty, SQUARES, SQUARE_MM, MARKER_MM)
    # a board of another dictionary is not this board
    with pytest.raises(IntrinsicsError, match=r"found in 0 of 2"):
        charuco_intrinsics(two, SQUARES, SQUARE_MM, MARKER_MM, dictionary="DICT_6X6_250")


@pytest.mark.parametrize("squares, square_mm, marker_mm, dictionary, message", [
    ((1, 7), 30.0, 22.0, "DICT_5X5_100", r"columns and rows .*\(1, 7\)"),
    ((5, 7), 30.0, 30.0, "DICT_5X5_100", r"smaller than the squares: marker_mm 30.0"),
    ((5, 7), 30.0, 22.0, "DICT_NOPE", r"unknown ArUco dictionary 'DICT_NOPE'"),
    ((12, 12), 20.0, 15.0, "DICT_4X4_50", r"needs 72 markers, 'DICT_4X4_50' has only 50"),
])
def test_impossible_boards_are_refused(squares: tuple[int, int], square_mm: float,
                                       marker_mm: float, dictionary: str, message: str) -> None:
    with pytest.raises(IntrinsicsError, match=message):
        charuco_board_image(squares, square_mm, marker_mm, dictionary)


@pytest.mark.parametrize("dpi", [100, 200, 300])
def test_the_board_image_prints_to_scale_and_reads_back(dpi: int) -> None:
    image = charuco_board_image(SQUARES, SQUARE_MM, MARKER_MM, dpi=dpi)
    px_per_mm = dpi / 25.4
    expected = [round(n * SQUARE_MM * px_per_mm) + 2 * round(MARGIN_MM * px_per_mm)
                for n in SQUARES]
    assert (image.shape[1], image.shape[0]) == tuple(expected)
    board = charuco_board(SQUARES, SQUARE_MM, MARKER_MM)
    corners, ids, _, _ = cv2.aruco.CharucoDetector(board).detectBoard(image)
    assert ids is not None and len(ids) == (SQUARES[0] - 1) * (SQUARES[1] - 1)
    # one square is square_mm wide on paper
    first = dict(zip(ids.ravel().tolist(), corners.reshape(-1, 2), strict=True))
    assert np.linalg.norm(first[1] - first[0]) == pytest.approx(SQUARE_MM * px_per_mm, abs=1.0)


def test_commands_write_the_board_calibrate_and_feed_the_table(
        board_print: npt.NDArray[np.uint8], tmp_path: Path) -> None:
    from tabletop.cli import main

    png = tmp_path / "board.png"
    assert main(["calibration", "charuco", "--out", str(png), "--dpi", str(PRINT_DPI)]) == 0
    read = cv2.imread(str(png), cv2.IMREAD_GRAYSCALE)
    assert read is not None
    printed = np.asarray(read, np.uint8)
    assert np.array_equal(printed, board_print)
    assert main(["calibration", "charuco", "--out", str(tmp_path / "board.pdf")]) == 0
    # printed at 100 %, the 5x7 board of 30 mm squares in its 12 mm margin is to scale
    _, _, page_mm = printed_pdf(tmp_path / "board.pdf")
    assert page_mm == pytest.approx((5 * 30 + 24, 7 * 30 + 24), abs=0.5)
    _, png_mm_per_px = printed_png(png)
    assert printed.shape[1] * png_mm_per_px == pytest.approx(5 * 30 + 24, abs=0.5)
    paths = []
    for number, pose in enumerate(POSES[:5]):
        paths.append(str(tmp_path / f"view{number}.png"))
        cv2.imwrite(paths[-1], photograph(printed, camera(), np.zeros(5), *pose))
    out = tmp_path / "intrinsics.json"
    assert main(["calibration", "intrinsics", "--board", "charuco", "--images", *paths,
                 "--out", str(out)]) == 0
    found = CameraIntrinsics.from_json(json.loads(out.read_text()))
    assert found.matrix[0][0] == pytest.approx(900.0, rel=0.03)
    setup = tmp_path / "setup.json"
    assert main(["calibration", "table", "--corners", "100,100;860,100;860,620;100,620",
                 "--table-mm", "900x600", "--intrinsics", str(out), "--out", str(setup)]) == 0
    assert TableCalibration.load(setup).intrinsics == found
    # the views are not a chessboard: exit 2 with the reason, nothing written
    assert main(["calibration", "intrinsics", "--board", "chessboard", "--images", *paths,
                 "--out", str(tmp_path / "none.json")]) == 2
    assert not (tmp_path / "none.json").exists()
