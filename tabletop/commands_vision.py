"""Camera commands: synth, eval, detect, train (issue 3, CONTRACT.md for detect).

Registered by tabletop.cli; numpy, OpenCV and ultralytics are imported in the
handlers only, so the rules commands start fast.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any


def _vision(module: str) -> Any:
    """A vision module, imported when a command runs.  Through importlib, so that
    type-checking the command line does not need numpy, OpenCV or torch."""
    return importlib.import_module(f"vision.{module}")


def cmd_synth(args: argparse.Namespace) -> int:
    dataset = _vision("synth.dataset")
    size = dataset.parse_size(args.size)

    def progress(done: int, total: int, seconds: float) -> None:
        if done == total or done % 50 == 0:
            print(
                f"rendered {done}/{total} ({done / max(seconds, 1e-9):.1f} images/s)",
                file=sys.stderr,
            )

    out = dataset.generate_dataset(
        args.out, args.images, args.seed, args.kind, size, args.workers, progress
    )
    print(
        json.dumps(
            {
                "out": str(out),
                "images": args.images,
                "seed": args.seed,
                "kind": args.kind,
                "size": list(size),
            }
        )
        if args.json
        else f"wrote {args.images} images to {out}"
    )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    detector = _vision("detector").Detector(args.model, imgsz=args.imgsz, confidence=args.conf)
    evaluate_predictor = _vision("evaluate").evaluate_predictor
    results = [evaluate_predictor(detector, data, limit=args.limit) for data in args.data]
    if args.json:
        for result in results:
            print(json.dumps({"model": str(detector.path), **result.to_json()}))
    else:
        for result in results:
            print(result.to_text())
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    cv2 = importlib.import_module("cv2")
    image_detections = _vision("detections").ImageDetections
    detector = _vision("detector").Detector(args.model, imgsz=args.imgsz, confidence=args.conf)
    for path in args.images:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"cannot read image {path!r}")
        record = image_detections(path, image.shape[1], image.shape[0], detector(image))
        if args.json:
            print(json.dumps(record.to_json()), flush=True)
        else:
            found = " ".join(record.detections.labels) or "(nothing)"
            print(f"{path}: {found}", flush=True)
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    train = _vision("detector").train
    best = train(
        args.data,
        args.out,
        epochs=args.epochs,
        imgsz=args.imgsz,
        model=args.model,
        resume=args.resume,
        val=args.val,
        batch=args.batch,
        workers=args.workers,
        device=args.device,
        seed=args.seed,
    )
    print(json.dumps({"weights": str(best)}) if args.json else f"weights: {best}")
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    synth = commands.add_parser("synth", help="render a synthetic labelled table data set")
    synth.add_argument("--out", required=True, help="output folder")
    synth.add_argument("--images", type=int, required=True, help="how many images")
    synth.add_argument("--seed", type=int, required=True, help="master seed")
    synth.add_argument("--kind", choices=("tiles", "cards", "mixed"), default="mixed")
    synth.add_argument("--size", default="1280x720", help="WIDTHxHEIGHT")
    synth.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    synth.add_argument("--json", action="store_true")
    synth.set_defaults(handler=cmd_synth)

    def model_args(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--model", default=None, help="a .pt or .onnx file (default: models/)")
        sub.add_argument("--imgsz", type=int, default=None, help="inference size")
        sub.add_argument("--conf", type=float, default=0.25, help="confidence threshold")
        sub.add_argument("--json", action="store_true")

    evaluate = commands.add_parser("eval", help="score a model on labelled JSONL sets")
    model_args(evaluate)
    evaluate.add_argument(
        "--data",
        action="append",
        required=True,
        help="annotations.jsonl or its folder (repeatable)",
    )
    evaluate.add_argument("--limit", type=int, default=None, help="first N images only")
    evaluate.set_defaults(handler=cmd_eval)

    detect = commands.add_parser("detect", help="find tiles and cards in images")
    model_args(detect)
    detect.add_argument("images", nargs="+", metavar="IMAGE")
    detect.set_defaults(handler=cmd_detect)

    train = commands.add_parser("train", help="train the detector on rendered data")
    train.add_argument("--data", required=True, help="a folder made by 'tabletop synth'")
    train.add_argument("--val", default=None, help="a held-out rendered folder for validation")
    train.add_argument("--out", required=True, help="run folder (weights in OUT/train/weights)")
    train.add_argument("--epochs", type=int, default=100)
    train.add_argument("--imgsz", type=int, default=960)
    train.add_argument("--batch", type=int, default=16)
    train.add_argument("--workers", type=int, default=None)
    train.add_argument("--device", default=None, help="cpu, 0, ... (default: cuda if present)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--model", default="yolov8n.yaml", help="architecture yaml")
    train.add_argument("--resume", action="store_true", help="go on from OUT/train/weights/last.pt")
    train.add_argument("--json", action="store_true")
    train.set_defaults(handler=cmd_train)
