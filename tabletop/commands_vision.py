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

CARD_FINDER_CHOICES = ("merge", "replace", "off")
"""``vision.detector.CARD_FINDER_WAYS``, kept here so that building the parser
imports no vision code (a test keeps the two equal)."""
CARD_READER_CHOICES = ("on", "off")
"""``vision.detector.CARD_READER_WAYS``, kept here for the same reason."""


def add_card_model_options(parser: argparse.ArgumentParser) -> None:
    """--card-finder and --card-reader, for every command that runs the model."""
    parser.add_argument("--card-finder", dest="card_finder", default=None,
                        choices=CARD_FINDER_CHOICES,
                        help="how the boxes of the model's card finder (NAME.cards.onnx), "
                             "run on frames with card indices, join the finder's (default: "
                             "merge when the file is there, else off; off is about 120 ms a "
                             "frame faster on a card table and reads fewer card indices)")
    parser.add_argument("--card-reader", dest="card_reader", default=None,
                        choices=CARD_READER_CHOICES,
                        help="name card indices with the model's card reader "
                             "(NAME.cards.reader.onnx; default: on when the file is there) "
                             "or with the reader that names tiles (off)")
    parser.add_argument("--suit-colour", dest="suit_colour", default=None,
                        choices=SUIT_COLOUR_CHOICES,
                        help="judge each card index's suit colour, red or black, by its ink "
                             "as well as by the reader (on, the default) or by the reader "
                             "alone (off)")
    parser.add_argument("--faces", dest="faces", default=None, choices=FACE_CHOICES,
                        help="read the cards lying in full view from their whole face too "
                             "(pips, court figure, both corners; on, the default, where the "
                             "model has NAME.faces.onnx) or from their indices alone (off)")
    parser.add_argument("--spade-odds", dest="spade_odds", type=float, default=None,
                        help="what the card reader's odds of a spade against a club are "
                             "multiplied by before an index is named (0.25..8, default 3: "
                             "the reader leans to clubs where a real spade is small; 1 for "
                             "the reader's own)")


SUIT_COLOUR_CHOICES = ("on", "off")
"""``vision.detector.SUIT_COLOUR_WAYS``, kept here for the same reason."""
FACE_CHOICES = ("on", "off")
"""``vision.detector.FACE_WAYS``, kept here for the same reason."""

PALETTE_CHOICES = ("auto", "on", "off")
"""``vision.detector.PALETTE_WAYS``, kept here for the same reason."""


def add_palette_option(parser: argparse.ArgumentParser) -> None:
    """--palette, for every command that runs the model."""
    parser.add_argument("--palette", dest="palette", default=None, choices=PALETTE_CHOICES,
                        help="judge the tiles of the colours the reader misread on the "
                             "set's layout photo against the set's own inks, where 'tabletop "
                             "adapt' wrote them (auto, the default), every tile against the "
                             "inks of the other tiles in the picture too (on), or leave each "
                             "tile's colour to the reader (off)")


def add_adapted_option(parser: argparse.ArgumentParser) -> None:
    """--adapted, for every command that runs the model."""
    parser.add_argument("--adapted", default=None, metavar="DIR",
                        help="a model folder made by 'tabletop adapt' (default: the active "
                             "set's adapted model when there is one, else the shipped model; "
                             "--model models/tabletop.onnx for the shipped one)")


def model_path(model: str | None, adapted: str | None) -> Any:
    """The model file a command runs: ``--model``, the finder of the ``--adapted`` folder,
    or, given neither, the active set's adapted model (said once on stderr) when
    ``tabletop adapt`` has made one, else None (the shipped model)."""
    if model is not None and adapted is not None:
        raise ValueError("give --model or --adapted, not both")
    if model is not None:
        return model
    adapting = _vision("adapt")
    if adapted is not None:
        return adapting.adapted_model(adapted)
    active = adapting.active_adapted_model()
    if active is not None:
        print(f"tabletop: reading with the set's adapted model in {active.parent} "
              "(--model models/tabletop.onnx for the shipped one)", file=sys.stderr)
    return active


def _vision(module: str) -> Any:
    """A module of :mod:`tabletop.vision` (what runs at the table) or, for making and
    measuring models, of :mod:`tabletop.studio`, imported when a command runs.  Through
    importlib, so that type-checking the command line does not need numpy, OpenCV or
    torch."""
    package = "studio" if module.split(".")[0] in _STUDIO else "vision"
    return importlib.import_module(f"tabletop.{package}.{module}")


_STUDIO = ("adapt", "synth", "evaluate", "training", "reader_training")


def cmd_synth(args: argparse.Namespace) -> int:
    dataset = _vision("synth.dataset")
    size = dataset.parse_size(args.size)

    def progress(done: int, total: int, seconds: float) -> None:
        if done == total or done % 50 == 0:
            print(
                f"rendered {done}/{total} ({done / max(seconds, 1e-9):.1f} images/s)",
                file=sys.stderr,
            )

    palettes = tuple(name.strip() for name in args.palettes.split(",")) if args.palettes else None
    out = dataset.generate_dataset(
        args.out, args.images, args.seed, args.kind, size, args.workers, progress, palettes
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


DETECTOR_OPTIONS = ("imgsz", "confidence", "views", "zoom", "zoom_out", "card_turns",
                    "card_finder", "card_reader", "palette", "suit_colour",
                    "spade_odds", "faces")
"""The ``vision.detector.DetectorSettings`` fields that model options set (each option's
``dest`` is its field's name)."""


def detector_settings(args: argparse.Namespace) -> Any:
    """The ``vision.detector.DetectorSettings`` of the model options in ``args`` (those a
    command has and was given; the rest keep the settings' defaults)."""
    given = {name: getattr(args, name) for name in DETECTOR_OPTIONS
             if getattr(args, name, None) is not None}
    return _vision("detector").DetectorSettings(**given)


def _detector(args: argparse.Namespace) -> Any:
    """The model the --model and --adapted options name, run as the other model options
    say (:func:`detector_settings`)."""
    model = model_path(args.model, getattr(args, "adapted", None))
    return _vision("detector").Detector(model, detector_settings(args))


def _run_facts(detector: Any) -> dict[str, Any]:
    return {"model": str(detector.path), "card_finder": detector.card_finder_way,
            "card_reader": detector.card_reader_way}


def cmd_eval(args: argparse.Namespace) -> int:
    detector = _detector(args)
    evaluation = _vision("evaluate")
    if args.against is not None:
        return _eval_against(args, detector, evaluation)
    results = [evaluation.evaluate_predictor(detector, data, limit=args.limit)
               for data in args.data]
    if args.json:
        for result in results:
            print(json.dumps({**_run_facts(detector), **result.to_json()}))
    else:
        for result in results:
            print(result.to_text())
    return 0


def _eval_against(args: argparse.Namespace, detector: Any, evaluation: Any) -> int:
    """``eval --against OTHER``: both models, the same options, item by item."""
    other = _detector(argparse.Namespace(**{**vars(args), "model": args.against,
                                            "adapted": None}))
    names = (str(detector.path), str(other.path))
    for data in args.data:
        first, second, comparison = evaluation.compare_predictors(
            detector, other, data, names, limit=args.limit)
        if args.json:
            print(json.dumps({**_run_facts(detector), **first.to_json(),
                              "against": {**_run_facts(other), **second.to_json()},
                              "comparison": comparison.to_json()}))
        else:
            print(first.to_text())
            print(f"against {other.path}:")
            print(second.to_text())
            print(comparison.to_text())
    return 0


def cmd_detect(args: argparse.Namespace) -> int:
    """Each image's detections; with --json one line per image, CONTRACT.md's fields
    and, for items a reader named, its ``alternatives``: the five most probable labels
    of the item's kind and ``none``, as ``{"label", "p"}`` objects, largest first."""
    cv2 = importlib.import_module("cv2")
    image_detections = _vision("detections").ImageDetections
    detector = _detector(args)
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
    if args.stage == "reader":
        return _train_reader(args)
    training = _vision("training")
    best = training.train(
        args.data,
        args.out,
        epochs=args.epochs,
        imgsz=args.imgsz,
        model=args.model,
        resume=args.resume,
        val=args.val,
        batch=args.batch or 16,
        workers=args.workers,
        device=args.device,
        seed=args.seed,
        finder=args.stage == "finder",
        cache=args.cache,
        scale=args.scale,
        warmup_epochs=args.warmup,
    )
    if args.export:
        best = training.export_onnx(best)
    print(json.dumps({"weights": str(best)}) if args.json else f"weights: {best}")
    return 0


def _train_reader(args: argparse.Namespace) -> int:
    """The reader: crops of the rendered boxes (cached as .npz in OUT), then the
    crop classifier, exported to OUT/reader.onnx."""
    from pathlib import Path

    training = _vision("reader_training")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # one crops file per --data folder (the first keeps its old name, so a
    # run folder made before --data could repeat still resumes)
    crops = []
    for index, data in enumerate(args.data):
        part = out / ("crops-train.npz" if index == 0 else f"crops-train-{index}.npz")
        if not part.is_file():
            training.extract(data, part, seed=args.seed + 2 * index, workers=args.workers)
        crops.append(part)
    if args.index_crops:
        part = out / "crops-index.npz"
        if not part.is_file():
            training.save_index_crops(args.index_crops, args.seed + 3, part)
        crops.append(part)
    held = None
    if args.val:
        held = out / "crops-held.npz"
        if not held.is_file():
            training.extract(args.val, held, seed=args.seed + 1, workers=args.workers)
    onnx = training.train_reader(crops, held, out, epochs=args.epochs,
                                 batch=args.batch or 256, seed=args.seed, lr=args.lr,
                                 init=args.init, widths=args.widths,
                                 defocus=args.defocus)
    print(json.dumps({"weights": str(onnx)}) if args.json else f"weights: {onnx}")
    return 0


def _sigma(text: str) -> float:
    try:
        sigma = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= sigma <= 8:
        raise argparse.ArgumentTypeError(f"a sigma of 0 to 8 crop pixels, not {text!r}")
    return sigma


def _count(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if count < 0:
        raise argparse.ArgumentTypeError(f"0 or more, not {text!r}")
    return count


def _widths(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not comma-separated channel counts: {text!r}") from None
    if len(widths) != 7 or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"seven positive channel counts, not {text!r}")
    return widths


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    synth = commands.add_parser("synth", help="render a synthetic labelled table data set")
    synth.add_argument("--out", required=True, help="output folder")
    synth.add_argument("--images", type=int, required=True, help="how many images")
    synth.add_argument("--seed", type=int, required=True, help="master seed")
    synth.add_argument("--kind", choices=("tiles", "cards", "mixed"), default="mixed")
    synth.add_argument("--size", default="1280x720", help="WIDTHxHEIGHT")
    synth.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    synth.add_argument("--palettes", default=None, metavar="NAME[,NAME...]",
                       help="the tile sets' ink palette families (default: the training "
                            "ones; the held-out family 'unusual' tests colours never trained on)")
    synth.add_argument("--json", action="store_true")
    synth.set_defaults(handler=cmd_synth)

    def model_args(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--model", default=None, help="a .pt or .onnx file (default: models/)")
        sub.add_argument("--imgsz", type=int, default=None, help="inference size")
        sub.add_argument("--conf", dest="confidence", type=float, default=0.25,
                         help="confidence threshold")
        sub.add_argument("--views", type=int, default=1,
                         help="nudged crops the reader averages per box (1..5, default "
                              "1; more costs that many times the reader's time)")
        sub.add_argument("--zoom", type=float, default=None,
                         help="a second finder pass at this many times the input size, "
                              "for small card indices (1..3, default 1.5; 1 for one pass)")
        sub.add_argument("--zoom-out", dest="zoom_out", type=float, default=None,
                         help="where a tile is large or the frame holds few items, "
                              "finder passes at this many times the input size and its "
                              "square and cube, for close-ups of tiles (0.25..1, default "
                              "0.667), and where a card index is large, two at a half "
                              "and a third of the size, for close-ups of cards; 1 for none")
        sub.add_argument("--card-turns", dest="card_turns", type=int, default=None,
                         help="turns of each card index's crop the reader averages (1, 2 "
                              "or 4; default 2: as found and upside down; 4 read 0.004-0.009 "
                              "more rendered card indices at higher precision but one "
                              "fewer real one, and is about 7%% slower)")
        add_card_model_options(sub)
        add_palette_option(sub)
        add_adapted_option(sub)
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
    evaluate.add_argument("--against", default=None, metavar="MODEL",
                          help="a second model run with the same options: both scored, "
                               "and compared item by item (exact McNemar test)")
    evaluate.set_defaults(handler=cmd_eval)

    detect = commands.add_parser("detect", help="find tiles and cards in images")
    model_args(detect)
    detect.add_argument("images", nargs="+", metavar="IMAGE")
    detect.set_defaults(handler=cmd_detect)

    train = commands.add_parser(
        "train", help="train the detector on rendered data",
        description="The shipped model is two-stage: '--stage finder' trains the YOLO "
        "finder (tile, card index) and '--stage reader' the crop classifier that names "
        "each box; '--stage single' trains one YOLO detector with every label.")
    train.add_argument("--data", required=True, action="append",
                       help="a folder made by 'tabletop synth' (repeatable: trained on "
                            "together)")
    train.add_argument("--val", default=None, help="a held-out rendered folder for validation")
    train.add_argument("--out", required=True, help="run folder (weights in OUT/train/weights)")
    train.add_argument("--epochs", type=int, default=100)
    train.add_argument("--imgsz", type=int, default=960)
    train.add_argument("--batch", type=int, default=None,
                       help="images per step (default 16), crops for the reader (256)")
    train.add_argument("--workers", type=int, default=None)
    train.add_argument("--device", default=None, help="cpu, 0, ... (default: cuda if present)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--stage", choices=("single", "finder", "reader"), default="single")
    train.add_argument("--model", default=None,
                       help="architecture yaml (default: yolov8n.yaml, or the finder's)")
    train.add_argument("--cache", action="store_true", help="keep decoded images in memory")
    train.add_argument("--scale", type=float, default=1.0,
                       help="finder: train on --imgsz crops of the images resized by this "
                       "(e.g. 0.75: small card indices stay findable); the model then runs "
                       "at the frame's long side times it")
    train.add_argument("--warmup", type=float, default=None,
                       help="finder: epochs of learning-rate warm-up (ultralytics' default 3; "
                       "a short fine-tune of trained weights wants 0 or a fraction)")
    train.add_argument("--lr", type=float, default=3e-3, help="reader: peak learning rate")
    train.add_argument("--init", default=None,
                       help="reader: weights to start from: an earlier run's best.pt, or an "
                       "exported reader .onnx (models/tabletop.reader.onnx: fine-tune the "
                       "shipped one)")
    train.add_argument("--widths", type=_widths, default=None,
                       help="reader: the seven conv blocks' channels of a reader trained "
                       "afresh, comma-separated (default 16,32,48,48,96,96,128); a run from "
                       "--init keeps --init's")
    train.add_argument("--index-crops", dest="index_crops", type=_count, default=0,
                       metavar="N",
                       help="reader: also N crops of card indices rendered at a table's "
                       "distance, a meld at a time (studio/synth/index_crops.py)")
    train.add_argument("--defocus", type=_sigma, default=0.0, metavar="SIGMA",
                       help="reader: blur half the training crops by a Gaussian of up to "
                       "this sigma, in pixels of the 64-pixel crop (default 0: none; 3 "
                       "covers a phone's out-of-focus far row)")
    train.add_argument("--export", action="store_true", help="also write an ONNX copy")
    train.add_argument("--resume", action="store_true", help="go on from OUT/train/weights/last.pt")
    train.add_argument("--json", action="store_true")
    train.set_defaults(handler=cmd_train)
