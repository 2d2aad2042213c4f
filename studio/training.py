"""Training and exporting the detection model's YOLO parts with ultralytics.

:func:`train` trains a one-stage detector (every label of :mod:`tabletop.vision.labels`) or
the two-stage model's finder (the classes :data:`vision.detector.FINDER_NAMES`)
on folders rendered by ``tabletop synth``; :func:`export_onnx` writes the ONNX
copy :class:`tabletop.vision.detector.Detector` runs.  The finder's reader is trained by
:mod:`tabletop.studio.reader_training`.  Nothing is downloaded: training starts from a
yaml architecture and ``YOLO_OFFLINE=1`` is set before ultralytics is imported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tabletop.vision.detections import Detections
from tabletop.vision.detector import (
    DEFAULT_IMGSZ,
    FINDER_NAMES,
    INFERENCE_KEY,
    ModelError,
    inference_imgsz,
    offline_ultralytics,
)
from tabletop.vision.labels import CLASS_NAMES

FINDER_YAML = Path(__file__).resolve().parent / "models" / "finder.yaml"


MIN_CROPPED_SHARE = 0.6
"""An item cut by a finder crop stays labelled when this much of its box is inside."""


def kind_dataset(data: Path, out: Path, scale: float = 1.0, crop: int | None = None,
                 seed: int = 0) -> Path:
    """A copy of a rendered set for the finder, labels reduced to the kind (0 tile,
    1 card).  Returns the new folder.

    With ``scale`` and ``crop`` every image is resized by ``scale`` and one
    ``crop``-pixel window of it (at a seeded random place) is kept: ultralytics
    fits each training image into ``imgsz``, so a crop of that size trains the
    finder at ``scale`` of the rendered resolution for the price of ``imgsz``.
    Small card indices stay large enough to find.  Items cut by the window keep
    their label when ``MIN_CROPPED_SHARE`` of their box is inside it.
    """
    import shutil

    from tabletop.studio.synth.dataset import yolo_lines
    from tabletop.vision.detections import read_jsonl

    def class_of(_label: str, kind: str) -> int:
        return FINDER_NAMES.index(kind)

    target = out / data.name
    (target / "labels").mkdir(parents=True, exist_ok=True)
    (target / "images").mkdir(parents=True, exist_ok=True)
    records = read_jsonl(data / "annotations.jsonl")
    if crop is None:
        # Hard links, not a linked folder: ultralytics resolves links and would
        # find the item labels beside the real images.
        for image in (data / "images").iterdir():
            copy = target / "images" / image.name
            if not copy.exists():
                try:
                    copy.hardlink_to(image)
                except OSError:
                    shutil.copy2(image, copy)
        for record in records:
            lines = yolo_lines(record.detections, record.width, record.height, class_of)
            stem = Path(record.image).stem
            (target / "labels" / f"{stem}.txt").write_text("".join(f"{x}\n" for x in lines))
        return target
    import cv2

    rng = np.random.default_rng(seed)
    for record in records:
        picture = cv2.imread(str(data / record.image), cv2.IMREAD_COLOR)
        if picture is None:
            raise ValueError(f"cannot read {str(data / record.image)!r}")
        if scale != 1.0:
            picture = cv2.resize(picture, (round(picture.shape[1] * scale),
                                           round(picture.shape[0] * scale)),
                                 interpolation=cv2.INTER_AREA)
        h, w = picture.shape[:2]
        cw, ch = min(crop, w), min(crop, h)
        x0 = int(rng.integers(0, w - cw + 1))
        y0 = int(rng.integers(0, h - ch + 1))
        window = picture[y0 : y0 + ch, x0 : x0 + cw]
        found = record.detections
        shifted = found.boxes * scale - [x0, y0, x0, y0]
        clipped = shifted.copy()
        clipped[:, [0, 2]] = clipped[:, [0, 2]].clip(0, cw)
        clipped[:, [1, 3]] = clipped[:, [1, 3]].clip(0, ch)
        inside = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
        keep = inside >= MIN_CROPPED_SHARE * np.maximum(found.areas * scale * scale, 1e-9)
        chosen = found.filter(keep)
        kept = Detections(clipped[keep], chosen.labels, chosen.kinds, chosen.confidences)
        stem = Path(record.image).stem
        cv2.imwrite(str(target / "images" / f"{stem}.jpg"), window,
                    [cv2.IMWRITE_JPEG_QUALITY, 95])
        lines = yolo_lines(kept, cw, ch, class_of)
        (target / "labels" / f"{stem}.txt").write_text("".join(f"{x}\n" for x in lines))
    return target


def training_yaml(data: Path | Sequence[Path], out: Path, val: Path | None,
                  names: Sequence[str] = CLASS_NAMES) -> Path:
    """A data.yaml with absolute paths (ultralytics resolves relative ones elsewhere);
    several training folders are listed together."""
    import json

    folders = [data] if isinstance(data, Path) else list(data)
    if not folders:
        raise ValueError("no training folder given")
    for folder in (*folders, *( [val] if val else [])):
        if not (folder / "images").is_dir():
            raise ValueError(f"{str(folder)!r} has no images/ folder (make one with "
                             "'tabletop synth')")
    listed = "\n".join(f"  {i}: {json.dumps(name)}" for i, name in enumerate(names))
    train_images = [str(folder / "images") for folder in folders]
    text = (f"train: {json.dumps(train_images[0] if len(folders) == 1 else train_images)}\n"
            f"val: {json.dumps(str((val or folders[0]) / 'images'))}\n"
            f"nc: {len(names)}\nnames:\n{listed}\n")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "data.yaml"
    path.write_text(text)
    return path


def train(data: str | Path | Sequence[str | Path], out: str | Path, epochs: int = 100,
          imgsz: int = 960, model: str | None = None, resume: bool = False,
          val: str | Path | None = None, batch: int = 16, workers: int | None = None,
          device: str | None = None, seed: int = 0, patience: int = 50, finder: bool = False,
          cache: bool = False, scale: float = 1.0, warmup_epochs: float | None = None,
          hours: float | None = None, amp: bool | None = None) -> Path:
    """Train (or resume) a detector; returns the best weights' path.

    ``finder`` trains the two-class finder of the two-stage model (its reader is
    trained by :mod:`tabletop.studio.reader_training`); otherwise one detector with every
    label.  Starts from an architecture yaml, so no weights are downloaded.
    Flips are off: a mirrored numeral is not a numeral.  Runs on CUDA when it is
    there.  ``data`` may be several rendered folders, trained on together.

    A finder with ``scale`` below 1 trains on ``imgsz`` crops of its images
    resized by ``scale`` (see :func:`kind_dataset`); the frame size it should
    then be run at (the rendered frame's long side times ``scale``) is stamped
    into the weights and read by :class:`tabletop.vision.detector.Detector` and
    :func:`export_onnx`.

    ``warmup_epochs`` overrides ultralytics' three epochs of warm-up, whose
    bias learning rate starts at 0.1: right for a net that starts from
    nothing, but in a short fine-tune of trained weights it unsettles their
    confidences (0 or a fraction of an epoch there).

    ``hours`` bounds the training's time: ultralytics times the first epoch and
    fits the number of epochs (and the mosaic-free last ones) into it.

    ``amp``: mixed precision (default: on any device but the CPU).  Its check
    in ultralytics downloads a model, so a machine that cannot reach the
    network trains in full precision (False).
    """
    import json

    offline_ultralytics()
    try:
        import torch
        from ultralytics import YOLO
    except ImportError:
        raise ModelError(
            "training needs the 'train' extra: pip install 'tabletop[train]'") from None
    if device == "cpu" or (device is None and not torch.cuda.is_available()):
        # ultralytics keeps one core free for its data loader (cpu_count - 1
        # threads), but loads on the main thread on CPU: a 2-core machine at half.
        torch.set_num_threads(os.cpu_count() or 1)
    out = Path(out).resolve()
    run_dir = out / "train"
    last = run_dir / "weights" / "last.pt"
    if resume:
        if not last.is_file():
            raise ModelError(f"nothing to resume: {str(last)!r} does not exist")
        YOLO(str(last)).train(resume=True)
    else:
        data_dirs = [Path(folder).resolve() for folder in
                     ([data] if isinstance(data, (str, Path)) else data)]
        if not data_dirs:
            raise ValueError("no training folder given")
        val_dir = Path(val).resolve() if val is not None else None
        names: Sequence[str] = CLASS_NAMES
        if finder:
            names = FINDER_NAMES
            crop = imgsz if scale != 1.0 else None
            if crop is not None:
                from tabletop.vision.detections import read_jsonl

                sizes = {(first.width, first.height) for first in
                         (read_jsonl(folder / "annotations.jsonl")[0] for folder in data_dirs)}
                if len(sizes) > 1:
                    raise ValueError(f"the training folders have frames of different sizes "
                                     f"{sorted(sizes)}: a scaled finder runs at one size")
                frame = max(next(iter(sizes))) * scale
                (out / "inference.json").parent.mkdir(parents=True, exist_ok=True)
                (out / "inference.json").write_text(
                    json.dumps({"imgsz": int(round(frame / 32) * 32)}))
            # folder i is cropped with seed + 2i (the validation folder has seed + 1);
            # each gets its own place, as two may share a name
            data_dirs = [kind_dataset(folder, out / "finder-data" / (str(i) if i else ""),
                                      scale, crop, seed + 2 * i)
                         for i, folder in enumerate(data_dirs)]
            val_dir = (kind_dataset(val_dir, out / "finder-data", scale, crop, seed + 1)
                       if val_dir else None)
        data_path = training_yaml(data_dirs, out, val_dir, names)
        device = device or ("0" if torch.cuda.is_available() else "cpu")
        YOLO(model or str(FINDER_YAML if finder else "yolov8n.yaml")).train(
            data=str(data_path), epochs=epochs, imgsz=imgsz, batch=batch, device=device,
            project=str(out), name="train", exist_ok=True, plots=False, seed=seed,
            deterministic=True, fliplr=0.0, flipud=0.0, cache="ram" if cache else False,
            workers=workers if workers is not None else min(8, os.cpu_count() or 1),
            patience=patience, amp=device != "cpu" if amp is None else amp, verbose=True,
            # the last third without mosaic, as the camera sees whole frames
            close_mosaic=min(10, max(1, epochs // 3)),
            **({} if warmup_epochs is None else {"warmup_epochs": warmup_epochs}),
            **({} if hours is None else {"time": hours}),
        )
    best = run_dir / "weights" / "best.pt"
    stamp = out / "inference.json"
    if stamp.is_file():
        for weights in (best, last):
            if weights.is_file():
                stamp_inference(weights, int(json.loads(stamp.read_text())["imgsz"]))
    return best if best.is_file() else last


def stamp_inference(weights: str | Path, imgsz: int) -> None:
    """Record in a checkpoint the frame size its finder is to be run at."""
    import torch

    checkpoint = torch.load(weights, map_location="cpu", weights_only=False)
    checkpoint[INFERENCE_KEY] = {"imgsz": int(imgsz)}
    torch.save(checkpoint, weights)


def export_onnx(weights: str | Path, imgsz: int | None = None) -> Path:
    """An ONNX copy of trained weights beside them (same stem), for ONNX Runtime.
    A finder's reader is looked up beside the ``.onnx`` as beside the ``.pt``."""
    offline_ultralytics()
    from ultralytics import YOLO

    weights = Path(weights)
    model = YOLO(str(weights))
    trained = getattr(model.model, "args", {}) or {}
    size = int(imgsz or inference_imgsz(model) or trained.get("imgsz") or DEFAULT_IMGSZ)
    written = Path(model.export(format="onnx", imgsz=size, dynamic=True, simplify=True,
                                opset=17, device="cpu", verbose=False))
    return written
