"""Cross-validated adapting (``studio.adapt``): adapt on some real photos, measure on
the others, against the shipped model on the same held-out photos.

    python -m bench.adapt_cv [--realdata DIR] [--folds 3] [--epochs N] [--seed 0]
                             [--only tiles|cards] [--json OUT.json] [--dev] [--work DIR]
    python -m bench.adapt_cv --ablation WORK.json     (after a run with --work and --json)

Tiles (``<realdata>/rummikub-tiles``, 34 photos).  A seeded permutation sets
:data:`DEV_PHOTOS` photos apart as the *development* photos: the only ones any
setting was ever looked at on (``--dev`` adapts on three of them and measures on the
rest), never measured in the report.  The other photos are the *report* photos:

* k = 1 and k = 3: ``--folds`` folds, each adapting on k report photos drawn with the
  fold's seed and measuring on every other report photo;
* all: the report photos split in ``--folds`` parts; each fold adapts on every photo
  (development ones included) but its part, and measures on its part, so each report
  photo is measured once; the folds' counts are also pooled.

Cards (``<realdata>/bridge-cards``, 2 photos): adapt on one, measure on the other,
both ways, and pooled.

``--ablation`` takes a finished run's JSON (its ``--work`` folder must hold the fold
models) and measures, on each fold's held-out photos, the adapted model's parts
alone: ``boxes`` (the adapted finders, the base readers) and ``readers`` (the base
finders, the adapted readers).

Per row: the held-out photos and items; found, identity and precision with their
Wilson 95 % intervals (``studio.evaluate``, as ``tabletop eval`` computes them),
adapted and shipped (the baseline, ``models/tabletop.onnx`` with default options);
the adapt run's wall and processor seconds.  Photos of one table share their light,
so the intervals are narrower than the truth; and rows of one k share photos.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tabletop.studio.adapt import adapt, image_names, iter_chunks, subset_jsonl
from tabletop.studio.evaluate import Evaluation, evaluate, labelled_images
from tabletop.vision.detections import Detections

DEV_PHOTOS = 8
SPLIT_SEED = 2024
"""The permutation of the tile photos that sets the development photos apart."""


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


class Photos:
    """A labelled set's photos, read once, with the shipped model's detections cached."""

    def __init__(self, annotations: Path) -> None:
        from tabletop.vision.detector import Detector

        self.annotations = annotations
        self.names = image_names(annotations)
        loaded = list(labelled_images(annotations))
        self.images = {name: image for name, (image, _) in zip(self.names, loaded, strict=True)}
        self.truth = {name: truth for name, (_, truth) in zip(self.names, loaded, strict=True)}
        shipped = Detector()
        self.baseline = {name: shipped(self.images[name]) for name in self.names}

    def score(self, predicted: dict[str, Detections], names: Sequence[str],
              label: str) -> Evaluation:
        return evaluate([(self.truth[name], predicted[name]) for name in names], label)

    def run(self, model: Path, names: Sequence[str]) -> dict[str, Detections]:
        from tabletop.vision.detector import Detector

        detector = Detector(model)
        return {name: detector(self.images[name]) for name in names}


def _figures(evaluation: Evaluation) -> dict[str, Any]:
    intervals = evaluation.intervals()
    return {"photos": evaluation.images, "items": evaluation.labelled,
            "predicted": evaluation.predicted,
            **{key: [round(getattr(evaluation, key), 4),
                     round(intervals[key][0], 4), round(intervals[key][1], 4)]
               for key in ("found", "identity", "precision")}}


def _fold(photos: Photos, adapt_on: Sequence[str], measure_on: Sequence[str], work: Path,
          name: str, epochs: int | None, seed: int) -> dict[str, Any]:
    annotations = subset_jsonl(photos.annotations, adapt_on, work / name / "adapt.jsonl")
    kwargs: dict[str, Any] = {} if epochs is None else {"epochs": epochs}
    result = adapt([annotations], work / name / "model", seed=seed, **kwargs)
    adapted = photos.run(result.out / "tabletop.onnx", measure_on)
    row = {"fold": name, "adapt_photos": len(adapt_on), "adapt_on": list(adapt_on),
           "adapted": _figures(photos.score(adapted, measure_on, name)),
           "baseline": _figures(photos.score(photos.baseline, measure_on, name)),
           "seconds": round(result.seconds, 1), "cpu_seconds": round(result.cpu_seconds, 1),
           "crops": result.crops, "tuned_shares": result.tuned_shares}
    _log(_line(row))
    row["_pairs"] = (adapted, measure_on)
    return row


def _pooled(photos: Photos, rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    adapted: dict[str, Detections] = {}
    names: list[str] = []
    for row in rows:
        predicted, measured = row["_pairs"]
        adapted.update(predicted)
        names.extend(measured)
    return {"fold": name, "adapt_photos": None,
            "adapted": _figures(photos.score(adapted, names, name)),
            "baseline": _figures(photos.score(photos.baseline, names, name)),
            "seconds": None, "cpu_seconds": None}


def _cell(values: list[float]) -> str:
    share, low, high = values
    return f"{share:.3f} ({low:.3f}-{high:.3f})"


def _line(row: dict[str, Any]) -> str:
    a, b = row["adapted"], row["baseline"]
    timing = (f"{row['seconds']:.0f}s/{row['cpu_seconds']:.0f}s" if row.get("seconds")
              is not None else "")
    return (f"{row['fold']:<14}{a['photos']:>4}{a['items']:>6}  "
            + "  ".join(f"{_cell(a[key])} [{b[key][0]:.3f}]"
                        for key in ("found", "identity", "precision")) + f"  {timing}")


HEADER = (f"{'fold':<14}{'ph':>4}{'items':>6}  "
          + "  ".join(f"{key + ' adapted (95%) [shipped]':<29}"
                      for key in ("found", "identity", "precision")) + "  wall/cpu")


def _mean(rows: list[dict[str, Any]], name: str) -> dict[str, Any]:
    def average(side: str, key: str) -> float:
        return float(np.mean([row[side][key][0] for row in rows]))

    return {"fold": name, **{side: {key: round(average(side, key), 4)
                                    for key in ("found", "identity", "precision")}
                             for side in ("adapted", "baseline")}}


def tiles(realdata: Path, work: Path, folds: int, epochs: int | None, seed: int,
          dev: bool) -> dict[str, Any]:
    photos = Photos(realdata / "rummikub-tiles" / "annotations.jsonl")
    order = [photos.names[i] for i in
             np.random.default_rng(SPLIT_SEED).permutation(len(photos.names))]
    development, report = order[:DEV_PHOTOS], order[DEV_PHOTOS:]
    out: dict[str, Any] = {"development": development, "report": report, "rows": {}}
    if dev:
        rows = [_fold(photos, development[:3], development[3:], work, "dev-k3", epochs, seed)]
        out["rows"]["dev"] = rows
        return out
    _log(HEADER)
    for k in (1, 3):
        rows = []
        for fold in range(folds):
            rng = np.random.default_rng(seed * 1000 + k * 100 + fold)
            chosen = [report[i] for i in rng.choice(len(report), k, replace=False)]
            held = [name for name in report if name not in chosen]
            rows.append(_fold(photos, chosen, held, work, f"k{k}-fold{fold + 1}", epochs,
                              seed + fold))
        out["rows"][f"k{k}"] = rows
        out.setdefault("means", {})[f"k{k}"] = _mean(rows, f"k{k} mean")
    rows = []
    for fold, part in enumerate(iter_chunks(report, folds)):
        chosen = [name for name in photos.names if name not in part]
        rows.append(_fold(photos, chosen, part, work, f"all-fold{fold + 1}", epochs,
                          seed + fold))
    out["rows"]["all"] = rows
    out["pooled_all"] = _pooled(photos, rows, "all pooled")
    _log(_line(out["pooled_all"]))
    return out


def cards(realdata: Path, work: Path, epochs: int | None, seed: int) -> dict[str, Any]:
    photos = Photos(realdata / "bridge-cards" / "annotations.jsonl")
    _log(HEADER)
    rows = []
    for index, name in enumerate(photos.names):
        others = [other for other in photos.names if other != name]
        rows.append(_fold(photos, [name], others, work, f"cards-{Path(name).stem}", epochs,
                          seed + index))
    pooled = _pooled(photos, rows, "cards pooled")
    _log(_line(pooled))
    return {"rows": {"k1": rows}, "pooled": pooled}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def ablation(report_file: Path, realdata: Path, work: Path | None = None) -> dict[str, Any]:
    """Each fold of a finished run (``--work`` kept), its adapted model's parts alone."""
    import shutil

    report = json.loads(report_file.read_text(encoding="utf-8"))
    work = work or Path(report["work"])
    out: dict[str, Any] = {}
    sets = {"tiles": "rummikub-tiles", "cards": "bridge-cards"}
    for key, folder in sets.items():
        if key not in report:
            continue
        photos = Photos(realdata / folder / "annotations.jsonl")
        _log(f"{key}: fold, then per variant found / identity / precision")
        for rows in report[key]["rows"].values():
            for row in rows:
                model = work / row["fold"] / "model"
                held = [name for name in photos.names if name not in row["adapt_on"]]
                if key == "tiles":
                    held = [name for name in held if name in report["tiles"]["report"]]
                figures = {}
                for variant, keep in (("boxes", ("tabletop.onnx", "tabletop.cards.onnx")),
                                      ("readers", ("tabletop.reader.onnx",
                                                   "tabletop.cards.reader.onnx"))):
                    mixed = work / row["fold"] / f"ablation-{variant}"
                    shutil.rmtree(mixed, ignore_errors=True)
                    shutil.copytree(REPO_MODELS, mixed, ignore=shutil.ignore_patterns("*.pt",
                                                                                      "*.md"))
                    for name in keep:
                        shutil.copy2(model / name, mixed / name)
                    predicted = photos.run(mixed / "tabletop.onnx", held)
                    figures[variant] = _figures(photos.score(predicted, held, row["fold"]))
                out.setdefault(key, {})[row["fold"]] = figures
                _log(f"{row['fold']:<14}" + "  ".join(
                    f"{variant} " + " / ".join(f"{value[key2][0]:.3f}" for key2 in
                                               ("found", "identity", "precision"))
                    for variant, value in figures.items()))
    return out


REPO_MODELS = Path(__file__).resolve().parent.parent / "models"


def main(argv: Sequence[str] | None = None) -> int:
    from tabletop.studio.replay import find_realdata

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--realdata", help="the real-data folder (default: as studio.replay "
                                           "finds it)")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--epochs", type=int, help="adapt's epochs (default: its own)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", choices=("tiles", "cards"))
    parser.add_argument("--dev", action="store_true",
                        help="adapt on three development photos, measure on the other five")
    parser.add_argument("--json", help="write every figure to this file")
    parser.add_argument("--work", help="keep the adapted models here (default: a temporary "
                                       "folder)")
    parser.add_argument("--ablation", help="a finished run's --json file: measure its fold "
                                           "models' parts alone")
    args = parser.parse_args(argv)
    realdata = find_realdata(args.realdata)
    if realdata is None:
        parser.error("no real-data folder (give --realdata)")
    if args.ablation:
        parts = ablation(Path(args.ablation), realdata, Path(args.work) if args.work else None)
        if args.json:
            Path(args.json).write_text(json.dumps(parts, indent=1) + "\n", encoding="utf-8")
        return 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.work) if args.work else Path(scratch)
        report: dict[str, Any] = {"cpu_count": os.cpu_count(), "work": str(work),
                                  "load_average": os.getloadavg()}
        if args.only in (None, "tiles"):
            report["tiles"] = tiles(realdata, work, args.folds, args.epochs, args.seed, args.dev)
        if args.only in (None, "cards") and not args.dev:
            report["cards"] = cards(realdata, work, args.epochs, args.seed)
    report["seconds"] = round(time.monotonic() - started)
    report["load_average_end"] = os.getloadavg()
    report = _strip(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({key: report[key] for key in report if key in ("seconds",)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
