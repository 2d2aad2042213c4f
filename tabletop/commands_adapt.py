"""``tabletop adapt``: the model adapted to the players' own tile set or deck.

    tabletop adapt ANNOTATIONS.jsonl [ANNOTATIONS.jsonl ...] [--out DIR] [--epochs N]
                   [--seed N] [--base MODEL] [--light] [--json]
    tabletop adapt --layout PHOTO [--layout PHOTO ...] [--order tiles|cards] [--out DIR]
    tabletop adapt --corrections [...]

ANNOTATIONS are labelled photos in the contract's detect JSONL form (image paths
relative to each file's folder); ``--layout`` photos show the set laid out in a
known order (``--order tiles``: rows K1..K13, B1..B13, O1..O13, R1..R13, then the
jokers; ``--order cards``: rows of A..K by suit S, H, D, C, then the jokers) and are
labelled from it; ``--corrections`` adds every correction made on the panel during
play (``tabletop run`` keeps each corrected item's box, frame and label in the data
folder's ``corrections/``).  The readers are fine-tuned on the photos' items (and the finders'
boxes moved to sit as the labels draw them, where that helps).  The adapted model is
written to DIR (default: the active set's
folder in the user data folder, ``<data>/models/default``), a complete model folder:
``tabletop detect --model DIR/tabletop.onnx`` reads with it.  Fine-tuning runs on the
CPU and needs the ``train`` extra (torch); ``--light``, the way without it, keeps the
base's files and learns in seconds, with ONNX Runtime and NumPy, the set's four inks
from its labelled tiles and a light head: the readers' last layer corrected on the
features of many re-cut crops of the labelled items (from a layout photo of the whole
set, or photos showing 40 or more labels of a kind).  See :mod:`tabletop.studio.adapt`
and :mod:`tabletop.vision.reader_head`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def cmd_adapt(args: argparse.Namespace) -> int:
    if args.light and args.epochs is not None:
        raise ValueError("--epochs is for the fine-tune; --light learns the set's inks and "
                         "a light head without epochs")
    # asking for epochs asks for the fine-tune: without torch, cli.main names the extra
    light = args.light or (args.epochs is None and not _has_torch())
    if not light:
        import torch  # noqa: F401  (the train extra: cli.main names it when torch is missing)
    elif not args.light and not args.json:
        print("tabletop: PyTorch is not installed (the train extra): learning the set's "
              "inks and a light head only (--light)", file=sys.stderr)

    # through importlib, so that type-checking the command line does not follow torch
    adapting = importlib.import_module("tabletop.studio.adapt")

    if not args.annotations and not args.layout and not args.corrections:
        raise ValueError("give one or more ANNOTATIONS.jsonl files, --layout photos or "
                         "--corrections")
    out = Path(args.out) if args.out else adapting.default_adapted_dir()
    epochs = adapting.DEFAULT_EPOCHS if args.epochs is None else args.epochs

    def log(text: str) -> None:
        if not args.json:
            print(text, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory() as scratch:
        files = [Path(file) for file in args.annotations]
        if args.corrections:
            from tabletop.paths import corrections_file

            kept = corrections_file()
            if not kept.is_file() or not kept.read_text(encoding="utf-8").strip():
                raise ValueError(f"no corrections kept yet in {str(kept)!r}: correct a "
                                 "misread item on the panel during a game first")
            files.append(kept)
            log(f"with the corrections kept in {kept}")
        layout = None
        if args.layout:
            detector = importlib.import_module("tabletop.vision.detector").Detector(
                adapting.base_finder(args.base))
            layout = adapting.layout_to_jsonl(
                args.layout, Path(scratch) / "layout.jsonl", args.order, detector)
            files.append(layout)
            log(f"labelled {len(args.layout)} layout photo(s) in the {args.order} order")
        if light:
            result = adapting.adapt_light(files, out, base_model=args.base, log=log)
        else:
            result = adapting.adapt(files, out, base_model=args.base, epochs=epochs,
                                    seed=args.seed, log=log)
        if layout is not None:
            # kept with the model: how the layout photos were labelled
            lines = []
            for line in layout.read_text(encoding="utf-8").splitlines():
                value = json.loads(line)
                value["image"] = str((layout.parent / value["image"]).resolve())
                lines.append(json.dumps(value))
            (result.out / "layout.jsonl").write_text("".join(f"{x}\n" for x in lines),
                                                     encoding="utf-8")
    print(json.dumps(result.to_json()) if args.json else result.to_text())
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    adapt = commands.add_parser(
        "adapt", help="adapt the model to the players' own tile set or deck",
        description="Fine-tune the readers on labelled photos of the players' set and fit "
                    "the finders' boxes to how the labels draw them (CPU, minutes; the train "
                    "extra), or with --light (or without PyTorch) learn in seconds the set's "
                    "four inks and a light head correcting the readers' last layer (from a "
                    "layout photo of the whole set); write a model folder that detect, eval "
                    "and run can use.")
    adapt.add_argument("annotations", nargs="*", metavar="ANNOTATIONS.jsonl",
                       help="labelled photos in the detect JSONL form, image paths relative "
                            "to the file's folder")
    adapt.add_argument("--out", help="the adapted model's folder (default: the active set's, "
                                     "<data folder>/models/default)")
    adapt.add_argument("--epochs", type=int, default=None,
                       help="passes over the crops (default 6; each at least 25 batches)")
    adapt.add_argument("--seed", type=int, default=0)
    adapt.add_argument("--base", help="the model to start from (a two-stage .onnx finder, or "
                                      "an adapted folder; default: the shipped model)")
    adapt.add_argument("--layout", action="append", default=[], metavar="PHOTO",
                       help="a photo of the set laid out in the --order (repeat for up to "
                            "three photos)")
    adapt.add_argument("--order", choices=("tiles", "cards"), default="tiles",
                       help="the layout's order: tiles (rows K, B, O, R of 1..13, then the "
                            "jokers) or cards (rows S, H, D, C of A..K, then the jokers)")
    adapt.add_argument("--corrections", action="store_true",
                       help="also learn from every correction made on the panel during "
                            "play (kept in <data folder>/corrections/)")
    adapt.add_argument("--light", action="store_true",
                       help="without PyTorch, in seconds: learn the set's tile inks "
                            "(orange against the set's own red) and a light head, the "
                            "readers' last layer corrected on re-cut crops of the labelled "
                            "items (the default without the train extra)")
    adapt.add_argument("--json", action="store_true", help="print what was done as JSON")
    adapt.set_defaults(handler=cmd_adapt)
