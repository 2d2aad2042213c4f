"""Camera calibration: the table plane in millimetres, optional lens intrinsics, drift.

    >>> cal = TableCalibration.from_markers(frame, table_mm=(900, 600))
    >>> cal.to_table([[640, 360]])          # image pixels -> table mm
    >>> cal.save("kitchen.calibration.json")

Imports OpenCV; the rules engine never imports this package.
"""

from tabletop.calibration.drift import CameraDriftMonitor, DriftReading
from tabletop.calibration.intrinsics import (
    CHARUCO_DICTIONARY,
    CameraIntrinsics,
    IntrinsicsError,
    charuco_board,
    charuco_board_image,
    charuco_intrinsics,
    chessboard_intrinsics,
    write_charuco_board,
)
from tabletop.calibration.markers import (
    CORNER_IDS,
    DICTIONARY_NAME,
    find_markers,
    marker_image,
    marker_sheet,
    write_marker_sheet,
)
from tabletop.calibration.table import CalibrationError, TableCalibration

__all__ = [
    "CHARUCO_DICTIONARY",
    "CORNER_IDS",
    "DICTIONARY_NAME",
    "CalibrationError",
    "CameraDriftMonitor",
    "CameraIntrinsics",
    "DriftReading",
    "IntrinsicsError",
    "TableCalibration",
    "charuco_board",
    "charuco_board_image",
    "charuco_intrinsics",
    "chessboard_intrinsics",
    "find_markers",
    "marker_image",
    "marker_sheet",
    "write_charuco_board",
    "write_marker_sheet",
]
