"""One bounded run that renders a training set and trains the finder and both readers
on it: made for a lent accelerator, where a session has minutes, not hours.

    python -m tabletop.studio.campaign --out DIR --seconds 480 [--tiles N --cards N ...]

1. Renders tile, card and mixed scenes (:mod:`tabletop.studio.synth`) on every core,
   and a small mixed set held out for choosing epochs.
2. Cuts the readers' crops from them (:func:`reader_training.extract`), plus the
   real crops of ``--real`` (an ``.npz`` of :func:`labelled_crops`), repeated.
3. Starts the finder's fine-tune from ``--models``' finder in a second process,
   bounded by ultralytics' own clock, on full frames at 960 pixels.
4. Meanwhile fine-tunes the tile reader and then the card reader (card and
   ``none`` crops alone) on the GPU, each within its share of the time.
5. Leaves in ``--out`` (flat, so that a lent machine hands it back): ``finder.pt``,
   ``reader.pt`` and ``cards.reader.pt`` (state dicts; ``export DIR --out MODEL``
   makes a model folder of them where ultralytics and onnx are), the finder's
   ``results.csv``, the readers' epochs in ``readers.log`` and ``campaign.json``
   with every stage's count and time.

Every stage has a deadline inside ``--seconds``; whatever finished is in ``--out``
when the budget runs out.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.detector import SHIPPED_MODELS
from tabletop.vision.labels import TILE_LABELS, class_id
from tabletop.vision.reader import READER_CLASSES

MODELS = SHIPPED_MODELS


@dataclass(frozen=True)
class Plan:
    """How many scenes of each kind to render, and the run's clock."""

    tiles: int = 3000
    cards: int = 1500
    mixed: int = 1500
    held: int = 120
    seconds: float = 480.0
    render_seconds: float = 150.0
    seed: int = 91001
    finder_batch: int = 64
    finder_imgsz: int = 960
    real_repeats: int = 20
    reader_defocus: float = 3.0

    def scenes(self) -> dict[str, int]:
        return {"tiles": self.tiles, "cards": self.cards, "mixed": self.mixed}


def labelled_crops(annotations: str | Path, photos: Sequence[str] | None, out: str | Path,
                   seed: int = 0) -> Path:
    """The readers' stored crops (:func:`reader_training.stored_crops`, no ``none``) of
    every labelled item in the photos of one annotations file whose short names
    (:func:`studio.replay.photo_name`) are in ``photos`` (None: all), as one ``.npz``."""
    from tabletop.studio.adapt import read_labelled
    from tabletop.studio.reader_training import STORED_CONTEXT, STORED_SIZE
    from tabletop.studio.replay import photo_name
    from tabletop.vision.crops import crop

    images, labels = [], []
    for photo in read_labelled([annotations]):
        if photos is not None and photo_name(photo.record.image) not in photos:
            continue
        image, truth = photo.read()
        for box, label, kind in zip(truth.boxes, truth.labels, truth.kinds, strict=True):
            images.append(crop(image, box, STORED_SIZE, STORED_CONTEXT))
            labels.append(class_id(label, kind))
    if not images:
        raise ValueError(f"no labelled item in the chosen photos of {str(annotations)!r}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, images=np.stack(images), labels=np.asarray(labels, np.int16))
    return out


def _card_classes() -> npt.NDArray[np.int64]:
    """The reader classes of card indices, and ``none``."""
    return np.arange(len(TILE_LABELS), len(READER_CLASSES), dtype=np.int64)


def finder_tail(seconds: float) -> float:
    """What a run of ``seconds`` keeps back after the finder's own clock: ultralytics
    starts that clock after loading its data, and validates and saves after it (about
    40 s on the accelerator)."""
    return min(70.0, 0.35 * seconds)


MIN_SCENES = 16
"""A kind is rendered at least this often, however late (or its whole count, if less)."""


def fitted_count(count: int, pace: float, rest: int, left: float) -> int:
    """How many of ``count`` scenes to render when ``rest`` scenes (these among them)
    are still wanted, one takes ``pace`` seconds and ``left`` seconds remain: all of
    them where they fit, else the kinds share the time in proportion."""
    if rest <= 0 or pace <= 0:
        return count
    share = min(1.0, max(0.0, left) / (pace * rest))
    return max(min(count, MIN_SCENES), int(count * share))


class Clock:
    """Seconds left of the run, and a log of what each stage took."""

    def __init__(self, seconds: float, out: Path) -> None:
        self.start = time.monotonic()
        self.seconds = seconds
        self.out = out
        self.stages: dict[str, Any] = {}

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.start)

    def note(self, stage: str, **facts: Any) -> None:
        self.stages[stage] = {"at_s": round(time.monotonic() - self.start, 1), **facts}
        print(f"[{self.stages[stage]['at_s']:7.1f} s] {stage}: {facts}", flush=True)
        (self.out / "campaign.json").write_text(json.dumps(self.stages, indent=1))


def run(plan: Plan, out: Path, work: Path, models: Path = MODELS,
        real: Path | None = None, workers: int | None = None) -> dict[str, Any]:
    from tabletop.studio.reader_training import extract, train_reader
    from tabletop.studio.synth.dataset import generate_dataset

    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    clock = Clock(plan.seconds, out)
    clock.note("plan", **asdict(plan))
    cores = workers or os.cpu_count() or 1
    folders: dict[str, Path] = {}
    wanted = {kind: count for kind, count in plan.scenes().items() if count}
    began = time.monotonic()
    held = generate_dataset(work / "render" / "held", plan.held, plan.seed + 100, "mixed",
                            workers=cores)
    clock.note("rendered held", scenes=plan.held)
    rendered = plan.held
    for kind, count in wanted.items():
        if rendered:
            count = fitted_count(count, (time.monotonic() - began) / rendered,
                                 sum(n for k, n in wanted.items() if k not in folders),
                                 plan.render_seconds - (time.monotonic() - began))
        folders[kind] = generate_dataset(work / "render" / kind, count,
                                         plan.seed + len(folders), kind, workers=cores)
        rendered += count
        clock.note(f"rendered {kind}", scenes=count, of=wanted[kind])

    finder = _start_finder(plan, list(folders.values()), held, work / "finder", models,
                           clock)
    crops = [extract(folder, work / "crops" / f"{kind}.npz", seed=plan.seed, workers=cores)
             for kind, folder in folders.items()]
    held_crops = extract(held, work / "crops" / "held.npz", seed=plan.seed + 1,
                         workers=cores)
    if real is not None:
        stored = np.load(real)
        repeated = work / "crops" / "real.npz"
        np.savez(repeated, images=np.repeat(stored["images"], plan.real_repeats, axis=0),
                 labels=np.repeat(stored["labels"], plan.real_repeats))
        crops.append(repeated)
    counts = {str(path.stem): len(np.load(path)["labels"]) for path in crops}
    clock.note("cut crops", **counts)

    # the tile reader gets two thirds of what is left, the card reader the rest,
    # each ending before the finder's clock does
    tail = finder_tail(plan.seconds)
    budget = max(10.0, clock.left() - tail)
    said = open(out / "readers.log", "a")  # noqa: SIM115 - closed below

    def log(line: str) -> None:
        print(line, file=said, flush=True)

    reader = train_reader(crops, held_crops, work / "reader", epochs=24, batch=512, lr=1.5e-3,
                          seed=plan.seed, init=models / "tabletop.reader.onnx",
                          seconds=budget * 0.62, defocus=plan.reader_defocus, log=log)
    shutil.copy2(reader.with_name("best.pt"), out / "reader.pt")
    clock.note("tile reader", log=str(work / "reader"))

    card_crops = _only(crops, _card_classes(), work / "crops" / "cards-only.npz")
    card_held = _only([held_crops], _card_classes(), work / "crops" / "cards-held.npz")
    cards = train_reader([card_crops], card_held, work / "cards-reader", epochs=16,
                         batch=512, lr=1e-3, seed=plan.seed + 1,
                         init=models / "tabletop.cards.reader.onnx",
                         seconds=max(5.0, clock.left() - tail), log=log)
    said.close()
    shutil.copy2(cards.with_name("best.pt"), out / "cards.reader.pt")
    clock.note("card reader")

    try:
        code: int | str = finder.wait(timeout=max(5.0, clock.left() - 5.0))
    except subprocess.TimeoutExpired:
        finder.terminate()
        finder.wait(timeout=30)
        code = "stopped at the budget"
    weights = work / "finder" / "train" / "weights"
    for name, target in (("last.pt", "finder.last.pt"), ("last.pt", "finder.pt"),
                         ("best.pt", "finder.pt")):
        if (weights / name).is_file():
            shutil.copy2(weights / name, out / target)
    if (work / "finder" / "train" / "results.csv").is_file():
        shutil.copy2(work / "finder" / "train" / "results.csv", out / "results.csv")
    clock.note("finder", exit=code)
    return clock.stages


def _only(files: Sequence[Path], classes: npt.NDArray[np.int64], out: Path) -> Path:
    parts = [np.load(file) for file in files]
    images = np.concatenate([part["images"] for part in parts])
    labels = np.concatenate([part["labels"] for part in parts])
    keep = np.isin(labels, classes)
    np.savez(out, images=images[keep], labels=labels[keep])
    return out


def _start_finder(plan: Plan, folders: list[Path], held: Path, out: Path, models: Path,
                  clock: Clock) -> subprocess.Popen[bytes]:
    hours = max(10.0, clock.left() - finder_tail(plan.seconds)) / 3600
    command = [sys.executable, "-m", "tabletop.studio.campaign", "finder", "--out", str(out),
               "--held", str(held), "--hours", f"{hours:.5f}", "--init",
               str(models / "tabletop.pt"), "--batch", str(plan.finder_batch),
               "--seed", str(plan.seed), "--imgsz", str(plan.finder_imgsz),
               *[str(folder) for folder in folders]]
    log = open(out.parent / "finder.log", "wb")  # noqa: SIM115 - the child owns it
    clock.note("finder started", hours=round(hours, 4))
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _train_finder(folders: list[str], held: str, out: str, hours: float, init: str,
                  batch: int, seed: int, imgsz: int) -> None:
    from tabletop.studio.training import train

    try:
        # ultralytics reads its results.csv back with polars to save a checkpoint's
        # history; a machine without polars trains on without that history
        import polars  # noqa: F401
    except ImportError:
        from ultralytics.engine.trainer import BaseTrainer

        BaseTrainer.read_results_csv = lambda self: {}  # type: ignore[method-assign]
    train(folders, out, epochs=60, imgsz=imgsz, model=init, val=held, batch=batch,
          workers=min(12, max(1, (os.cpu_count() or 2) - 4)), seed=seed, patience=100,
          finder=True, cache=True, warmup_epochs=0.5, hours=hours, amp=False)


def export(folder: Path, out: Path, models: Path = MODELS) -> list[Path]:
    """A model folder ``out`` (``tabletop.onnx`` and its siblings, as ``tabletop eval
    --model`` and :class:`tabletop.vision.detector.Detector` read one) of a campaign's
    weights in ``folder``; the parts it did not train (the card finder, or any that
    did not finish) are copied from ``models``.  Needs ultralytics and onnx."""
    import torch

    from tabletop.studio.reader_training import build_net, export_onnx, net_widths
    from tabletop.studio.training import export_onnx as export_finder

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in ("tabletop.onnx", "tabletop.pt", "tabletop.reader.onnx", "tabletop.cards.onnx",
                 "tabletop.cards.pt", "tabletop.cards.reader.onnx", "tabletop.faces.onnx"):
        if (models / name).is_file():
            shutil.copy2(models / name, out / name)
    if (folder / "finder.pt").is_file():
        shutil.copy2(folder / "finder.pt", out / "tabletop.pt")
        written.append(export_finder(out / "tabletop.pt"))
    for name in ("reader", "cards.reader"):
        weights = folder / f"{name}.pt"
        if weights.is_file():
            state = torch.load(weights, map_location="cpu")
            net = build_net(widths=net_widths(state))
            net.load_state_dict(state)
            written.append(export_onnx(net, out / f"tabletop.{name}.onnx"))
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tabletop.studio.campaign")
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("run", help="render and train within --seconds")
    go.add_argument("--out", type=Path, required=True)
    go.add_argument("--work", type=Path, default=None)
    go.add_argument("--models", type=Path, default=MODELS)
    go.add_argument("--real", type=Path, default=None)
    go.add_argument("--workers", type=int, default=None)
    for field, default in asdict(Plan()).items():
        go.add_argument(f"--{field.replace('_', '-')}", type=type(default), default=default)
    crops = sub.add_parser("real", help="stored crops of labelled photos (.npz)")
    crops.add_argument("annotations", type=Path)
    crops.add_argument("--out", type=Path, required=True)
    crops.add_argument("--photos", default="adapt",
                       help="adapt, measure or all (studio.replay.photo_split)")
    finder = sub.add_parser("finder")
    finder.add_argument("folders", nargs="+")
    finder.add_argument("--out", required=True)
    finder.add_argument("--held", required=True)
    finder.add_argument("--hours", type=float, required=True)
    finder.add_argument("--init", required=True)
    finder.add_argument("--batch", type=int, default=64)
    finder.add_argument("--seed", type=int, default=0)
    finder.add_argument("--imgsz", type=int, default=960)
    made = sub.add_parser("export", help="a model folder of a campaign's weights")
    made.add_argument("folder", type=Path)
    made.add_argument("--out", type=Path, required=True)
    made.add_argument("--models", type=Path, default=MODELS)
    args = parser.parse_args(argv)
    if args.command == "run":
        plan = Plan(**{field: getattr(args, field) for field in asdict(Plan())})
        run(plan, args.out, args.work or args.out.parent / "campaign-work", args.models,
            args.real, args.workers)
    elif args.command == "real":
        from tabletop.studio.replay import photo_split

        split = photo_split(args.annotations.parent.parent)
        print(labelled_crops(args.annotations, split.of(args.photos), args.out))
    elif args.command == "finder":
        _train_finder(args.folders, args.held, args.out, args.hours, args.init, args.batch,
                      args.seed, args.imgsz)
    else:
        for path in export(args.folder, args.out, args.models):
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
