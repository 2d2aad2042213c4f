"""INT8 copies of a two-stage model (ONNX Runtime static quantisation), calibrated on real photos.

    python -m vision.quantize --out runs/int8 [--model models/tabletop.onnx]
        [--photos adapt] [--exclude-head]

Every ONNX part of the model (finder, reader, card finder, card reader) is
quantised to QDQ INT8 (weights per channel, activations per tensor) with its
activation ranges measured on what that part sees in use: the finders on the
frames of the calibration photos letterboxed at both pass sizes, the readers on
the crops around the photos' labelled items.  The calibration photos are the
``adapt`` part of ``vision.replay.photo_split`` by default, so the ``measure``
photos stay unseen for the comparison (``tabletop eval`` of both models on
them, and ``bench.live_fps --model``).  ``--exclude-head`` keeps the finders'
detection heads (the nodes after the last convolutions) in float.

The copy is a model folder like ``models/``: ``tabletop.onnx`` and the files
beside it, usable with ``--model DIR/tabletop.onnx``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from vision.detections import Detections

Image = npt.NDArray[np.uint8]


def letterboxed(image: Image, size: int) -> npt.NDArray[np.float32]:
    """The finder's input for ``image`` at pass size ``size`` (as
    :class:`vision.detector.OnnxFinder` makes it, dynamic input)."""
    import cv2

    h, w = image.shape[:2]
    scale = min(size / w, size / h)
    nw, nh = round(w * scale), round(h * scale)
    cw, ch = -(-nw // 32) * 32, -(-nh // 32) * 32
    px, py = (cw - nw) // 2, (ch - nh) // 2
    canvas = np.full((ch, cw, 3), 114, np.uint8)
    canvas[py:py + nh, px:px + nw] = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_LINEAR)
    return canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0


class _Feeds:
    """An ONNX Runtime calibration data reader over prepared inputs."""

    def __init__(self, name: str, inputs: Sequence[npt.NDArray[np.float32]]) -> None:
        self.name = name
        self._inputs: Iterator[npt.NDArray[np.float32]] = iter(inputs)

    def get_next(self) -> dict[str, npt.NDArray[np.float32]] | None:
        value = next(self._inputs, None)
        return None if value is None else {self.name: value}


def _input_name(path: Path) -> str:
    import onnxruntime as ort

    return str(ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
               .get_inputs()[0].name)


def head_nodes(path: Path) -> list[str]:
    """The finder's detection head: every node after its last convolution (the box
    decoding, the class sigmoid and their concatenations), which INT8 would coarsen."""
    import onnx

    graph = onnx.load(str(path)).graph
    last_conv = max(i for i, node in enumerate(graph.node) if node.op_type == "Conv")
    return [node.name for node in graph.node[last_conv + 1:]]


def quantize_part(source: Path, target: Path, inputs: Sequence[npt.NDArray[np.float32]],
                  exclude: Sequence[str] = ()) -> Path:
    from onnxruntime.quantization import (CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process

    with tempfile.TemporaryDirectory() as scratch:
        prepared = Path(scratch) / "prepared.onnx"
        quant_pre_process(str(source), str(prepared), skip_symbolic_shape=True)
        quantize_static(str(prepared), str(target), _Feeds(_input_name(source), inputs),
                        quant_format=QuantFormat.QDQ, per_channel=True,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                        calibrate_method=CalibrationMethod.MinMax,
                        nodes_to_exclude=list(exclude))
    return target


def calibration_photos(realdata: str | Path | None, part: str
                       ) -> list[tuple[Image, Detections]]:
    from vision.evaluate import labelled_images
    from vision.replay import TILES_FOLDER, photo_name, photo_split, require_realdata

    root = require_realdata(realdata)
    chosen = photo_split(realdata).of(part)
    annotations = root / TILES_FOLDER / "annotations.jsonl"
    names = [photo_name(json.loads(line)["image"])
             for line in annotations.read_text(encoding="utf-8").splitlines() if line.strip()]
    photos = [pair for pair, name in zip(labelled_images(annotations), names, strict=True)
              if chosen is None or name in chosen]
    cards = root / "bridge-cards" / "annotations.jsonl"
    if cards.is_file():
        photos += list(labelled_images(cards))[:1]  # card indices for the card parts
    return photos


def quantize_model(model: Path, out: Path, photos: Sequence[tuple[Image, Detections]],
                   exclude_head: bool = False) -> Path:
    """INT8 copies of ``model``'s ONNX parts in ``out`` (the other files copied); the
    copy's finder path."""
    from vision.crops import crops
    from vision.detector import Detector, card_finder_path, card_reader_path, reader_path

    detector = Detector(model)
    out.mkdir(parents=True, exist_ok=True)
    for part in sorted(model.parent.glob(f"{model.stem}.*")):
        if part.suffix in (".onnx", ".json"):
            shutil.copy2(part, out / part.name)
    sizes = [detector.imgsz] + ([detector.zoom_imgsz] if detector.zoom_imgsz else [])
    frames = [letterboxed(image, size) for image, _ in photos for size in sizes]
    for finder in (model, card_finder_path(model)):
        if finder.is_file():
            exclude = head_nodes(finder) if exclude_head else []
            quantize_part(finder, out / finder.name, frames, exclude)
    batches = []
    for image, truth in photos:
        if len(truth):
            batch = crops(image, truth.boxes, detector.reader.size)
            batches.append(np.ascontiguousarray(batch[..., ::-1].transpose(0, 3, 1, 2),
                                                np.float32) / 255.0)
    for reader in (reader_path(model), card_reader_path(model)):
        if reader.is_file():
            quantize_part(reader, out / reader.name, batches)
    return out / model.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--model", default=None)
    parser.add_argument("--realdata", default=None)
    parser.add_argument("--photos", default="adapt", help="adapt, measure or all")
    parser.add_argument("--exclude-head", dest="exclude_head", action="store_true")
    args = parser.parse_args(argv)
    from vision.detector import default_model

    model = Path(args.model) if args.model else default_model()
    written = quantize_model(model, Path(args.out),
                             calibration_photos(args.realdata, args.photos),
                             exclude_head=args.exclude_head)
    print(written)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__: list[Any] = ["letterboxed", "quantize_model", "quantize_part"]
