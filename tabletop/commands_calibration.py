"""``tabletop calibration``: the table plane and zones of a setup.

    tabletop calibration markers --out sheet.png [--pdf] [--side-mm 60]
    tabletop calibration table --image FRAME --table-mm 900x600 --out setup.json
    tabletop calibration table --corners x,y;x,y;x,y;x,y --table-mm 900x600 --out setup.json
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


def cmd_markers(args: argparse.Namespace) -> int:
    from calibration.markers import write_marker_sheet

    out = write_marker_sheet(args.out, side_mm=args.side_mm, dpi=args.dpi, pdf=args.pdf)
    print(json.dumps({"sheet": str(out), "side_mm": args.side_mm}) if args.json else out)
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    from calibration.table import TableCalibration

    size = _size(args.table_mm)
    if args.corners:
        calibration = TableCalibration.from_corners(_corners(args.corners), size)
    elif args.image:
        import cv2

        image = cv2.imread(args.image)
        if image is None:
            raise ValueError(f"cannot read the image {args.image!r}")
        calibration = TableCalibration.from_markers(image, size)
    else:
        raise ValueError("give --image (a frame showing the four markers) or --corners")
    calibration.save(args.out)
    print(json.dumps(calibration.to_json()) if args.json else f"calibration written to {args.out}")
    return 0


def cmd_zones(args: argparse.Namespace) -> int:
    from engine.variants import find_variant
    from live.zones import default_layout

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
    table = sub.add_parser("table", help="the table plane from the markers or four corners")
    table.add_argument("--image", help="a frame showing the four corner markers")
    table.add_argument("--corners", help="'x,y;x,y;x,y;x,y' image corners, top left first")
    table.add_argument("--table-mm", required=True, help="WIDTHxHEIGHT between the corners")
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
