"""``tabletop calibration``: the table plane and zones of a setup.

    tabletop calibration markers --out sheet.png [--pdf] [--side-mm 60]
    tabletop calibration charuco --out board.png [--pdf] [--squares 5x7] [--square-mm 30]
    tabletop calibration intrinsics --images VIEW... [--board charuco|chessboard] --out lens.json
    tabletop calibration table --image FRAME --table-mm 900x600 --out setup.json
    tabletop calibration table --corners x,y;x,y;x,y;x,y --table-mm 900x600 --out setup.json
    tabletop calibration table ... --intrinsics lens.json   (undistort before the table plane)
    tabletop calibration zones --variant ID --players N --table-mm 900x600 --out zones.json

Imports OpenCV only when run.
"""

from __future__ import annotations

import argparse
import json
from typing import Any


def _size(text: str) -> tuple[float, float]:
    try:
        w, h = (float(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"size must be WIDTHxHEIGHT in mm, e.g. 900x600, not {text!r}") from None
    if w <= 0 or h <= 0:
        raise ValueError(f"size must be positive, not {text!r}")
    return w, h


def _corners(text: str) -> list[list[float]]:
    try:
        points = [[float(v) for v in part.split(",")] for part in text.split(";")]
    except ValueError:
        points = []
    if len(points) != 4 or any(len(p) != 2 for p in points):
        raise ValueError(
            f"corners must be 'x,y;x,y;x,y;x,y' (top left first, clockwise), not {text!r}"
        )
    return points


def _squares(text: str) -> tuple[int, int]:
    try:
        cols, rows = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"squares must be COLUMNSxROWS, e.g. 5x7, not {text!r}") from None
    if cols < 2 or rows < 2:
        raise ValueError(f"a board needs 2 or more columns and rows of squares, not {text!r}")
    return cols, rows


CHARUCO_DEFAULT_SQUARES = "5x7"
CHESSBOARD_DEFAULT_SQUARES = "10x7"  # OpenCV's sample board: 9 x 6 inner corners


def cmd_charuco(args: argparse.Namespace) -> int:
    from tabletop.calibration.intrinsics import write_charuco_board

    out = write_charuco_board(args.out, _squares(args.squares), args.square_mm, args.marker_mm,
                              args.dictionary, dpi=args.dpi, pdf=args.pdf)
    print(json.dumps({"board": str(out), "squares": args.squares, "square_mm": args.square_mm,
                      "marker_mm": args.marker_mm, "dictionary": args.dictionary})
          if args.json else out)
    return 0


def cmd_intrinsics(args: argparse.Namespace) -> int:
    import cv2

    from tabletop.calibration.files import write_json
    from tabletop.calibration.intrinsics import charuco_intrinsics, chessboard_intrinsics

    images = []
    for path in args.images:
        image = cv2.imread(path)
        if image is None:
            raise ValueError(f"cannot read the image {path!r}")
        images.append(image)
    if args.board == "charuco":
        squares = _squares(args.squares or CHARUCO_DEFAULT_SQUARES)
        intrinsics = charuco_intrinsics(images, squares, args.square_mm, args.marker_mm,
                                        args.dictionary)
    else:
        cols, rows = _squares(args.squares or CHESSBOARD_DEFAULT_SQUARES)
        intrinsics = chessboard_intrinsics(images, (cols - 1, rows - 1), args.square_mm)
    write_json(args.out, intrinsics.to_json())
    print(json.dumps(intrinsics.to_json()) if args.json
          else f"intrinsics written to {args.out} (reprojection error {intrinsics.rms_px:.3f} px)")
    return 0


def _intrinsics(path: str | None) -> Any:
    """The ``CameraIntrinsics`` in ``path`` (written by ``calibration intrinsics``), or None."""
    if path is None:
        return None
    from tabletop.calibration.files import read_json
    from tabletop.calibration.intrinsics import CameraIntrinsics, IntrinsicsError

    return CameraIntrinsics.from_json(read_json(path, IntrinsicsError, "intrinsics"))


def cmd_markers(args: argparse.Namespace) -> int:
    from tabletop.calibration.markers import write_marker_sheet

    out = write_marker_sheet(args.out, side_mm=args.side_mm, dpi=args.dpi, pdf=args.pdf)
    print(json.dumps({"sheet": str(out), "side_mm": args.side_mm}) if args.json else out)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from tabletop.calibration.table import TableCalibration

    size = _size(args.table_mm)
    intrinsics = _intrinsics(args.intrinsics)
    if args.corners:
        calibration = TableCalibration.from_corners(_corners(args.corners), size,
                                                    intrinsics=intrinsics)
    elif args.image:
        import cv2

        image = cv2.imread(args.image)
        if image is None:
            raise ValueError(f"cannot read the image {args.image!r}")
        calibration = TableCalibration.from_markers(image, size, intrinsics)
    else:
        raise ValueError("give --image (a frame showing the four markers) or --corners")
    calibration.save(args.out)
    print(json.dumps(calibration.to_json()) if args.json else f"calibration written to {args.out}")
    return 0


def cmd_zones(args: argparse.Namespace) -> int:
    from tabletop.calibration.zones import default_layout
    from tabletop.engine.variants import find_variant

    variant = find_variant(args.variant)
    layout = default_layout(variant.id, args.players, _size(args.table_mm))
    layout.save(args.out)
    print(json.dumps(layout.to_json()) if args.json else f"zones written to {args.out}")
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    calibration = commands.add_parser("calibration", help="calibrate the camera and the table")
    sub = calibration.add_subparsers(
        dest="calibration_command", required=True, parser_class=parser_class
    )
    markers = sub.add_parser("markers", help="write the printable corner-marker sheet")
    markers.add_argument("--out", required=True, help="PNG (or PDF) file")
    markers.add_argument("--pdf", action="store_true", help="write a PDF that prints to scale")
    markers.add_argument("--side-mm", type=float, default=60.0, help="printed marker side")
    markers.add_argument("--dpi", type=int, default=200)
    markers.add_argument("--json", action="store_true")
    markers.set_defaults(handler=cmd_markers)
    charuco = sub.add_parser("charuco", help="write the printable ChArUco board for intrinsics")
    charuco.add_argument("--out", required=True, help="PNG (or PDF) file")
    charuco.add_argument("--pdf", action="store_true", help="write a PDF that prints to scale")
    charuco.add_argument("--squares", default=CHARUCO_DEFAULT_SQUARES, help="COLUMNSxROWS")
    charuco.add_argument("--square-mm", type=float, default=30.0, help="printed square side")
    charuco.add_argument("--marker-mm", type=float, default=22.0, help="printed marker side")
    charuco.add_argument("--dictionary", default="DICT_5X5_100", help="OpenCV ArUco dictionary")
    charuco.add_argument("--dpi", type=int, default=200)
    charuco.add_argument("--json", action="store_true")
    charuco.set_defaults(handler=cmd_charuco)
    intrinsics = sub.add_parser(
        "intrinsics", help="the camera's lens from views of a printed ChArUco board or chessboard")
    intrinsics.add_argument("--images", nargs="+", required=True,
                            help="3 or more views of the board, at varied tilts")
    intrinsics.add_argument("--board", choices=("charuco", "chessboard"), default="charuco")
    intrinsics.add_argument("--squares", help="COLUMNSxROWS of squares (charuco: 5x7, "
                                              "chessboard: 10x7)")
    intrinsics.add_argument("--square-mm", type=float, default=30.0, help="printed square side")
    intrinsics.add_argument("--marker-mm", type=float, default=22.0,
                            help="printed marker side (charuco)")
    intrinsics.add_argument("--dictionary", default="DICT_5X5_100",
                            help="OpenCV ArUco dictionary (charuco)")
    intrinsics.add_argument("--out", required=True, help="intrinsics JSON file")
    intrinsics.add_argument("--json", action="store_true")
    intrinsics.set_defaults(handler=cmd_intrinsics)
    table = sub.add_parser("table", help="the table plane from the markers or four corners")
    table.add_argument("--image", help="a frame showing the four corner markers")
    table.add_argument("--corners", help="'x,y;x,y;x,y;x,y' image corners, top left first")
    table.add_argument("--table-mm", required=True, help="WIDTHxHEIGHT between the corners")
    table.add_argument("--intrinsics", help="lens JSON from 'calibration intrinsics' (optional)")
    table.add_argument("--out", required=True, help="calibration JSON file")
    table.add_argument("--json", action="store_true")
    table.set_defaults(handler=cmd_table)
    zones = sub.add_parser("zones", help="write the default zone layout to edit")
    zones.add_argument("--variant", required=True)
    zones.add_argument("--players", type=int, required=True)
    zones.add_argument("--table-mm", default="900x600")
    zones.add_argument("--out", required=True)
    zones.add_argument("--json", action="store_true")
    zones.set_defaults(handler=cmd_zones)
