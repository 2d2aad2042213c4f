"""Training the reader (vision/reader.py) on crops of rendered images.

1. :func:`extract` cuts a wide context crop (:data:`STORED_CONTEXT` x the box's
   longer side, :data:`STORED_SIZE` pixels) around every labelled box of a
   ``tabletop synth`` folder, plus ``none`` crops of bare table, and saves
   them in one ``.npz``.
2. :func:`train_reader` trains :class:`ReaderNet` on them; every batch is
   re-cut from the stored crops with a random affine (zoom, shift, a small
   turn: the finder's boxes are never exact) and photometric jitter, and with
   ``defocus`` half of them blurred (:func:`defocused`), so each epoch sees new
   crops.  Resumable from ``OUT/last.pt``.
3. The best epoch (by held-out accuracy) is exported to ONNX for
   :class:`tabletop.vision.reader.Reader`.

Mirroring is never used: a mirrored numeral is not a numeral.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tabletop.vision.crops import CONTEXT, CROP_SIZE, crop
from tabletop.vision.detections import Detections, iou_matrix, overlap_of_smaller, read_jsonl
from tabletop.vision.labels import class_id
from tabletop.vision.reader import FEATURES_OUTPUT, NONE_INDEX, READER_CLASSES

STORED_SIZE = 96
STORED_CONTEXT = 1.8
NEGATIVES_PER_ITEM = 0.3


def _extract_image(job: tuple[str, str, int, list[list[float]], list[int], int]
                   ) -> tuple[npt.NDArray[np.uint8], list[int]]:
    import cv2

    cv2.setNumThreads(1)
    folder, image_name, seed, boxes, classes, _ = job
    image = cv2.imread(str(Path(folder) / image_name), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"cannot read {image_name!r} in {folder!r}")
    return stored_crops(image, boxes, classes, seed)


def stored_crops(image: npt.NDArray[np.uint8], boxes: Sequence[Sequence[float]],
                 classes: Sequence[int], seed: int
                 ) -> tuple[npt.NDArray[np.uint8], list[int]]:
    """Stored crops of every box of one image (``classes`` their reader classes) and
    of some bare table (``none``, :data:`NEGATIVES_PER_ITEM` per box, seeded): what
    :func:`extract` keeps of each image."""
    rng = np.random.default_rng(seed)
    out = [crop(image, box, STORED_SIZE, STORED_CONTEXT) for box in boxes]
    labels = list(classes)
    if boxes:
        items = np.asarray(boxes, np.float64)
        sizes = np.maximum(items[:, 2] - items[:, 0], items[:, 3] - items[:, 1])
        h, w = image.shape[:2]
        wanted = int(rng.binomial(len(boxes), NEGATIVES_PER_ITEM)) + 1
        for _ in range(wanted * 10):
            if wanted == 0:
                break
            side = float(rng.choice(sizes)) * rng.uniform(0.7, 1.3)
            aspect = rng.uniform(0.6, 1.6)
            bw, bh = side * min(1.0, aspect), side * min(1.0, 1 / aspect)
            x1, y1 = rng.uniform(0, max(1.0, w - bw)), rng.uniform(0, max(1.0, h - bh))
            candidate = np.array([[x1, y1, x1 + bw, y1 + bh]])
            if iou_matrix(candidate, items).max() < 0.1:
                out.append(crop(image, candidate[0], STORED_SIZE, STORED_CONTEXT))
                labels.append(NONE_INDEX)
                wanted -= 1
    return np.stack(out) if out else np.zeros((0, STORED_SIZE, STORED_SIZE, 3), np.uint8), labels


def extract(data: str | Path, out: str | Path, seed: int = 0, workers: int | None = None,
            limit: int | None = None) -> Path:
    """Crops of every labelled box (and some bare table) of a rendered set."""
    data = Path(data)
    records = read_jsonl(data / "annotations.jsonl")[:limit]
    jobs = []
    for index, record in enumerate(records):
        det = record.detections
        classes = [class_id(label, kind) for label, kind in zip(det.labels, det.kinds,
                                                                strict=True)]
        jobs.append((str(data), record.image, seed * 1_000_003 + index,
                     det.boxes.tolist(), classes, index))
    workers = max(1, workers or os.cpu_count() or 1)
    if workers == 1:
        parts = list(map(_extract_image, jobs))
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            parts = pool.map(_extract_image, jobs, chunksize=8)
    images = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, STORED_SIZE,
                                                                          STORED_SIZE, 3))
    labels = np.asarray([c for p in parts for c in p[1]], np.int16)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, images=images.astype(np.uint8), labels=labels)
    return out


FOUND_LABEL_IOU = 0.5
"""A found box overlapping a labelled item of its kind by this IoU is that item."""
FOUND_NONE_IOU = (0.3, 0.1)
"""A found box is a false alarm (``none``) when its IoU is under the first figure with
every labelled item of its kind and under the second with every item of the other kind:
boxes between the lines are neither the item nor clear of it, and are left out."""


FOUND_NONE_CLEAR = 0.15
"""With ``clear``: the share of a labelled item a false alarm may cover (or be covered by)
and still be ``none`` (a box on the rank of an index alone, or round two indices, is
neither the item nor bare table, so it is left out)."""


def label_found(found: Detections, truth: Detections, clear: float | None = None
                ) -> list[int | None]:
    """Per found box: the reader class it should be read as, by its overlap with the
    labelled ``truth`` (:data:`FOUND_LABEL_IOU`, :data:`FOUND_NONE_IOU`), or None when
    it is neither an item nor clear of every item.  ``clear`` (e.g.
    :data:`FOUND_NONE_CLEAR`): a false alarm is ``none`` only when it also covers less
    than that share of every labelled item, of any kind, and they of it."""
    if len(found) == 0:
        return []
    kinds = np.asarray(found.kinds)
    truth_kinds = np.asarray(truth.kinds)
    overlaps = (iou_matrix(found.boxes, truth.boxes) if len(truth)
                else np.zeros((len(found), 0)))
    # the share of the smaller box is the larger of the two boxes' shares
    covered = (overlap_of_smaller(found.boxes, truth.boxes).max(axis=1, initial=0.0)
               if clear is not None else None)
    out: list[int | None] = []
    for i, kind in enumerate(kinds):
        same = truth_kinds == kind
        row = overlaps[i]
        best_same = float(row[same].max()) if same.any() else 0.0
        best_other = float(row[~same].max()) if (~same).any() else 0.0
        if best_same >= FOUND_LABEL_IOU:
            index = int(np.flatnonzero(same)[row[same].argmax()])
            out.append(class_id(truth.labels[index], truth.kinds[index]))
        elif (best_same < FOUND_NONE_IOU[0] and best_other < FOUND_NONE_IOU[1]
              and (covered is None or clear is None or covered[i] < clear)):
            out.append(NONE_INDEX)
        else:
            out.append(None)
    return out


def extract_found(data: str | Path, out: str | Path,
                  find: Callable[[npt.NDArray[np.uint8]], Detections],
                  kinds: Sequence[str] = ("card",), limit: int | None = None,
                  clear: float | None = None) -> Path:
    """Crops of the boxes ``find`` (a finder, e.g.
    ``Detector(settings=DetectorSettings(confidence=0.1)).find``)
    gives on a rendered set, labelled by :func:`label_found`: the boxes a reader will
    be given, with the finder's own false alarms as ``none``.  Only boxes of ``kinds``
    are kept.  Runs in this process: the finder uses the cores itself."""
    from tabletop.studio.evaluate import labelled_images

    images: list[npt.NDArray[np.uint8]] = []
    labels: list[int] = []
    for image, truth in labelled_images(data, limit):
        found = find(image)
        for box, kind, label in zip(found.boxes, found.kinds, label_found(found, truth, clear),
                                    strict=True):
            if label is not None and kind in kinds:
                images.append(crop(image, box, STORED_SIZE, STORED_CONTEXT))
                labels.append(label)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stacked = (np.stack(images) if images
               else np.zeros((0, STORED_SIZE, STORED_SIZE, 3), np.uint8))
    np.savez(out, images=stacked, labels=np.asarray(labels, np.int16))
    return out


def save_index_crops(count: int, seed: int, out: str | Path) -> Path:
    """``count`` stored crops of card indices rendered at a table's distance
    (:func:`tabletop.studio.synth.index_crops.index_crops`), saved as :func:`extract`
    saves its crops."""
    from tabletop.studio.synth.index_crops import index_crops

    images, labels = index_crops(count, seed, STORED_SIZE, STORED_CONTEXT)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, images=images, labels=labels)
    return out


def _torch() -> Any:
    import torch

    return torch


READER_WIDTHS = (16, 32, 48, 48, 96, 96, 128)
"""Output channels of the reader's seven conv blocks (0.29 M parameters)."""
WIDE_READER_WIDTHS = (16, 32, 48, 48, 144, 192, 256)
"""The same layout with the three 8x8 blocks wider (0.82 M parameters, about 62 M
multiply-adds per crop): the narrow net had levelled off below its training data."""
_STRIDES = (2, 1, 2, 1, 2, 1, 1)


def build_net(classes: int = len(READER_CLASSES), widths: Sequence[int] = READER_WIDTHS) -> Any:
    """A plain conv net of seven conv-batchnorm-ReLU blocks (strides 2, 1, 2, 1, 2, 1, 1),
    global average pooling and one linear layer; ``widths`` gives each block's channels."""
    nn = _torch().nn
    widths = _checked(widths)
    layers: list[Any] = []
    channels = 3
    for width, stride in zip(widths, _STRIDES, strict=True):
        layers += [nn.Conv2d(channels, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width),
                   nn.ReLU(inplace=True)]
        channels = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(channels, classes))


def _checked(widths: Sequence[int]) -> tuple[int, ...]:
    checked = tuple(int(width) for width in widths)
    if len(checked) != len(_STRIDES) or min(checked) < 1:
        raise ValueError(f"reader widths must be {len(_STRIDES)} positive channel counts, "
                         f"not {tuple(widths)!r}")
    return checked


def net_widths(state: dict[str, Any]) -> tuple[int, ...]:
    """The block widths of a :func:`build_net` state dict (a ``best.pt``)."""
    return tuple(int(value.shape[0]) for key, value in state.items()
                 if key.endswith(".weight") and value.dim() == 4)


def net_from_onnx(path: str | Path, calibration: npt.NDArray[np.uint8]) -> Any:
    """A trainable :func:`build_net` that reads as the exported reader at ``path`` does.

    The export folds each batchnorm into its conv, so the file holds a conv
    weight and bias per block.  Each block's batchnorm is rebuilt around the
    statistics of its conv's output on ``calibration`` (stored crops, as
    :func:`extract` saves them): its running mean and variance are those
    statistics and its scale and shift undo them again.  In evaluation the net
    then computes exactly what the file does; in training, where a batch's own
    statistics replace the running ones, it computes nearly that, so
    fine-tuning starts from the shipped reader rather than from a net whose
    normalisation is unlike anything it was trained with."""
    import onnx
    from onnx import numpy_helper

    torch = _torch()
    model = onnx.load(str(path))
    weights = {item.name: numpy_helper.to_array(item) for item in model.graph.initializer}
    convs = [node for node in model.graph.node if node.op_type == "Conv"]
    gemms = [node for node in model.graph.node if node.op_type == "Gemm"]
    if len(convs) != len(_STRIDES) or len(gemms) != 1 or any(len(n.input) != 3 for n in convs):
        raise ValueError(f"{path}: not an exported reader (expected {len(_STRIDES)} convs "
                         "with folded batchnorm and one linear layer)")
    conv_weights = [weights[node.input[1]] for node in convs]
    conv_biases = [weights[node.input[2]] for node in convs]
    linear_weight, linear_bias = weights[gemms[0].input[1]], weights[gemms[0].input[2]]
    net = build_net(int(linear_bias.shape[0]), [w.shape[0] for w in conv_weights])
    conv_layers = [m for m in net if isinstance(m, torch.nn.Conv2d)]
    norm_layers = [m for m in net if isinstance(m, torch.nn.BatchNorm2d)]
    # per conv: output values seen per channel, their sum and their sum of squares
    moments = [[0, torch.zeros(len(w), dtype=torch.float64),
                torch.zeros(len(w), dtype=torch.float64)] for w in conv_weights]

    def record(k: int, out: Any) -> None:
        values = out.detach().transpose(0, 1).flatten(1).double()
        moments[k][0] += values.shape[1]
        moments[k][1] += values.sum(1)
        moments[k][2] += (values * values).sum(1)

    hooks = [conv.register_forward_hook(lambda _m, _i, out, k=k: record(k, out))
             for k, conv in enumerate(conv_layers)]
    with torch.no_grad():
        for conv, norm, weight, bias in zip(conv_layers, norm_layers, conv_weights,
                                            conv_biases, strict=True):
            conv.weight.copy_(torch.from_numpy(weight.copy()))
            norm.running_mean.zero_()
            norm.running_var.fill_(1.0 - norm.eps)
            norm.weight.fill_(1.0)
            norm.bias.copy_(torch.from_numpy(bias.copy()))
        net[-1].weight.copy_(torch.from_numpy(linear_weight.copy()))
        net[-1].bias.copy_(torch.from_numpy(linear_bias.copy()))
        net.eval()
        for start in range(0, len(calibration), 512):
            net(_augment(_as_tensor(calibration[start : start + 512]), None, train=False))
        for hook in hooks:
            hook.remove()
        for norm, (count, total, squares), bias in zip(norm_layers, moments, conv_biases,
                                                       strict=True):
            mean = total / max(count, 1)
            var = (squares / max(count, 1) - mean * mean).clamp(min=0.0)
            mean, var = mean.float(), var.float()
            norm.running_mean.copy_(mean)
            norm.running_var.copy_(var)
            norm.weight.copy_(torch.sqrt(var + norm.eps))
            norm.bias.copy_(torch.from_numpy(bias.copy()) + mean)
    return net


DEFOCUS_SHARE = 0.5
"""With a ``defocus`` above 0: the share of training crops blurred by a Gaussian."""
DEFOCUS_STEP = 0.5
"""A defocused crop's sigma is drawn in steps of this many crop pixels (one blur a step)."""


def _gaussian_kernel(sigma: float, torch: Any, on: Any) -> Any:
    radius = max(1, math.ceil(3 * sigma))
    x = torch.arange(-radius, radius + 1, dtype=torch.float32, device=on)
    kernel = torch.exp(-(x * x) / (2 * sigma * sigma))
    return kernel / kernel.sum()


def defocused(out: Any, defocus: float, generator: Any) -> Any:
    """(N, 3, H, W) crops, :data:`DEFOCUS_SHARE` of them blurred by a Gaussian of a sigma
    drawn evenly in (0, ``defocus``] crop pixels, in :data:`DEFOCUS_STEP` steps.

    A phone's far row of tiles, out of focus, blurs a 64-pixel crop by a sigma of 2-3
    pixels (a tile's face is about 51 of them), beyond what the renderer's focus blur
    gives a crop."""
    torch = _torch()
    functional = torch.nn.functional
    n, channels = out.shape[0], out.shape[1]
    on = out.device
    steps = max(1, round(defocus / DEFOCUS_STEP))
    chosen = torch.rand(n, generator=generator, device=on) < DEFOCUS_SHARE
    level = torch.randint(1, steps + 1, (n,), generator=generator, device=on)
    out = out.clone()
    for step in range(1, steps + 1):
        pick = torch.nonzero(chosen & (level == step)).flatten()
        if not len(pick):
            continue
        kernel = _gaussian_kernel(defocus * step / steps, torch, on)
        radius = (len(kernel) - 1) // 2
        # every channel as an image of its own: a grouped conv is several times slower
        part = out[pick].reshape(-1, 1, *out.shape[2:])
        part = functional.pad(part, (radius, radius, radius, radius), mode="replicate")
        part = functional.conv2d(part, kernel.view(1, 1, 1, -1))
        part = functional.conv2d(part, kernel.view(1, 1, -1, 1))
        out[pick] = part.reshape(len(pick), channels, *out.shape[2:])
    return out


def _augment(stored: Any, generator: Any, train: bool, defocus: float = 0.0) -> Any:
    """(N, 3, S, S) float stored crops -> (N, 3, 64, 64) reader crops; ``defocus``: in
    training, blur some crops up to this sigma (:func:`defocused`)."""
    torch = _torch()
    functional = torch.nn.functional
    n = stored.shape[0]
    on = stored.device
    nominal = CONTEXT / STORED_CONTEXT
    if train:
        def uniform(low: float, high: float) -> Any:
            return torch.rand(n, generator=generator, device=on) * (high - low) + low

        scale = nominal * uniform(0.85, 1.2)
        turn = uniform(-12, 12) * math.pi / 180
        shift_x = uniform(-0.1, 0.1) * 2 / STORED_CONTEXT
        shift_y = uniform(-0.1, 0.1) * 2 / STORED_CONTEXT
        squeeze = uniform(0.9, 1.1)
    else:
        scale = torch.full((n,), nominal, device=on)
        turn = torch.zeros(n, device=on)
        shift_x = shift_y = torch.zeros(n, device=on)
        squeeze = torch.ones(n, device=on)
    cos, sin = torch.cos(turn), torch.sin(turn)
    theta = torch.stack([
        torch.stack([cos * scale * squeeze, -sin * scale, shift_x], 1),
        torch.stack([sin * scale * squeeze, cos * scale / squeeze, shift_y], 1)], 1)
    grid = functional.affine_grid(theta, [n, 3, CROP_SIZE, CROP_SIZE], align_corners=False)
    pad = 114 / 255
    out = functional.grid_sample(stored - pad, grid, mode="bilinear", padding_mode="zeros",
                                 align_corners=False) + pad
    if train:
        contrast = uniform(0.7, 1.3).view(n, 1, 1, 1)
        brightness = uniform(-0.15, 0.15).view(n, 1, 1, 1)
        cast = (1 + (torch.rand(n, 3, 1, 1, generator=generator, device=on) - 0.5) * 0.1)
        mean = out.mean(dim=(1, 2, 3), keepdim=True)
        out = (out - mean) * contrast + mean + brightness
        out = out * cast
        blurred = functional.avg_pool2d(out, 3, 1, 1, count_include_pad=False)
        blur = (torch.rand(n, 1, 1, 1, generator=generator, device=on) < 0.3).float()
        out = blur * blurred + (1 - blur) * out
        if defocus > 0:
            out = defocused(out, defocus, generator)
        out = out + torch.randn(out.shape, generator=generator, device=on) * uniform(
            0, 0.04).view(n, 1, 1, 1)
    return out.clamp(0, 1)


def _as_tensor(images: npt.NDArray[np.uint8]) -> Any:
    torch = _torch()
    return torch.from_numpy(np.ascontiguousarray(images[..., ::-1].transpose(0, 3, 1, 2))
                            ).float() / 255.0


def accuracy(net: Any, images: npt.NDArray[np.uint8], labels: npt.NDArray[np.int16],
             batch: int = 512) -> float:
    torch = _torch()
    net.eval()
    on = next(net.parameters()).device
    right = 0
    with torch.no_grad():
        for start in range(0, len(images), batch):
            x = _augment(_as_tensor(images[start : start + batch]).to(on), None, train=False)
            right += int((net(x).argmax(1).cpu().numpy() == labels[start : start + batch]
                          ).sum())
    return right / max(len(images), 1)


def export_onnx(net: Any, path: str | Path, size: tuple[int, int] = (CROP_SIZE, CROP_SIZE),
                input_name: str = "crops") -> Path:
    """A :func:`build_net` net written as a reader file: input ``input_name`` of crops
    ``size`` (height, width), outputs ``logits`` and the features, the classes named."""
    torch = _torch()
    net.eval()
    path = Path(path)
    dummy = torch.zeros(1, 3, *size)
    torch.onnx.export(net, (dummy,), str(path), input_names=[input_name],
                      output_names=["logits"],
                      dynamic_axes={input_name: {0: "n"}, "logits": {0: "n"}}, opset_version=17,
                      dynamo=False)
    import onnx

    model = with_features_output(onnx.load(str(path)))
    entry = model.metadata_props.add()
    entry.key, entry.value = "classes", json.dumps(list(READER_CLASSES))
    onnx.save(model, str(path))
    return path


def with_features_output(model: Any) -> Any:
    """The exported reader ``model`` (an ``onnx.ModelProto``, changed in place) with a
    second output :data:`vision.reader.FEATURES_OUTPUT`: the input of its last linear
    layer, the pooled features a light head (:mod:`tabletop.vision.reader_head`) is
    fitted on.  The default install has ONNX Runtime but not ``onnx``, so the output is
    added when the file is written, never when a head is fitted.  ``logits`` stays the
    first output and is computed as before; a model that has the output already is
    returned as it is."""
    from onnx import TensorProto, helper

    graph = model.graph
    if any(output.name == FEATURES_OUTPUT for output in graph.output):
        return model
    gemms = [node for node in graph.node if node.op_type == "Gemm"]
    if len(gemms) != 1 or [output.name for output in graph.output] != ["logits"]:
        raise ValueError("not an exported reader (expected one linear layer and the one "
                         "output 'logits')")
    weights = {item.name: item for item in graph.initializer}
    transposed = any(a.name == "transB" and a.i for a in gemms[0].attribute)
    width = int(weights[gemms[0].input[1]].dims[1 if transposed else 0])
    graph.node.append(helper.make_node("Identity", [gemms[0].input[0]], [FEATURES_OUTPUT],
                                       name="features_out"))
    batch = graph.output[0].type.tensor_type.shape.dim[0]
    graph.output.append(helper.make_tensor_value_info(
        FEATURES_OUTPUT, TensorProto.FLOAT, [batch.dim_param or batch.dim_value, width]))
    return model


def train_reader(crops_file: str | Path | Sequence[str | Path], held_file: str | Path | None,
                 out: str | Path,
                 epochs: int = 10, batch: int = 256, lr: float = 3e-3, seed: int = 0,
                 threads: int | None = None, init: str | Path | None = None,
                 widths: Sequence[int] | None = None, device: str | None = None,
                 seconds: float | None = None, defocus: float = 0.0,
                 log: Callable[[str], None] = lambda s: print(s, file=sys.stderr, flush=True)
                 ) -> Path:
    """Train (resuming from OUT/last.pt if there) and export OUT/reader.onnx.

    ``crops_file``: one :func:`extract` file or several, trained on together.
    ``init``: weights (a ``best.pt`` of an earlier run, or an exported
    ``reader.onnx`` such as the shipped one, see :func:`net_from_onnx`) to
    start from, with a fresh schedule: a second, longer run goes on from the
    first's result.
    ``widths``: the blocks' channels of a net started afresh (default
    :data:`READER_WIDTHS`); a run from ``init`` keeps ``init``'s, and other
    ``widths`` are refused (ValueError).
    ``device``: where to train (default CUDA when there, else the CPU); the
    stored crops are moved there once and re-cut there.
    ``seconds``: a budget for the training steps of a run started afresh: the
    pace of a few timed steps decides how many of the ``epochs`` fit, so the
    one-cycle schedule runs whole within it.
    ``defocus``: blur half the training crops by a Gaussian of up to this sigma, in
    pixels of the 64-pixel crop (:func:`defocused`; 0 for none)."""
    if defocus < 0:
        raise ValueError(f"defocus must be 0 or more, not {defocus!r}")
    torch = _torch()
    if threads:
        torch.set_num_threads(threads)
    on = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [crops_file] if isinstance(crops_file, (str, Path)) else list(crops_file)
    if not files:
        raise ValueError("train_reader needs at least one crops file")
    parts = [np.load(file) for file in files]
    images = np.concatenate([part["images"] for part in parts])
    labels = np.concatenate([part["labels"] for part in parts]).astype(np.int64)
    log(f"{len(images)} training crops from {len(files)} file(s)")
    log(f"training on {on}")
    held = np.load(held_file) if held_file else None
    torch.manual_seed(seed)
    last = out / "last.pt"
    resumed = torch.load(last, weights_only=False, map_location="cpu") if last.is_file() else None
    if resumed is not None:
        net = build_net(widths=net_widths(resumed["net"]))
    elif init is not None:
        if Path(init).suffix == ".onnx":
            net = net_from_onnx(init, images[:: max(1, len(images) // 4096)])
        else:
            start = torch.load(init, map_location="cpu")
            net = build_net(widths=net_widths(start))
            net.load_state_dict(start)
        start_widths = net_widths(net.state_dict())
        if widths is not None and tuple(widths) != start_widths:
            raise ValueError(f"{str(init)!r} has widths {start_widths}, not "
                             f"{tuple(widths)}")
    else:
        net = build_net(widths=widths if widths is not None else READER_WIDTHS)
    net.to(on)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    generator = torch.Generator(device=on).manual_seed(seed)
    stored = torch.from_numpy(np.ascontiguousarray(images[..., ::-1].transpose(0, 3, 1, 2))
                              ).to(on)
    target = torch.from_numpy(labels).to(on)
    steps_per_epoch = math.ceil(len(images) / batch)

    def step(pick: Any, optimiser: Any) -> Any:
        x = _augment(stored[pick].float() / 255.0, generator, train=True, defocus=defocus)
        loss = loss_fn(net(x), target[pick])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss

    if seconds is not None and resumed is None:
        # the pace of a few steps on a copy, so the real run starts untouched
        saved = {key: value.clone() for key, value in net.state_dict().items()}
        probe = torch.optim.AdamW(net.parameters(), lr=0.0)
        net.train()
        probes = min(steps_per_epoch, 12)
        for k in range(probes + 2):
            if k == 2:
                if on.type == "cuda":
                    torch.cuda.synchronize()
                begun = time.monotonic()
            step(torch.randint(len(images), (min(batch, len(images)),), device=on,
                               generator=generator), probe)
        if on.type == "cuda":
            torch.cuda.synchronize()
        pace = (time.monotonic() - begun) / probes
        net.load_state_dict(saved)
        fitting = max(1, int(seconds / (pace * steps_per_epoch * 1.08)))
        log(f"{pace * 1000:.1f} ms a step: {min(epochs, fitting)} of {epochs} epochs fit "
            f"in {seconds:.0f} s")
        epochs = min(epochs, fitting)
    optimiser = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, lr, total_steps=epochs
                                                   * steps_per_epoch, pct_start=0.15)
    start_epoch, best = 0, -1.0
    if resumed is not None:
        net.load_state_dict(resumed["net"])
        optimiser.load_state_dict(resumed["optimiser"])
        schedule.load_state_dict(resumed["schedule"])
        start_epoch, best = resumed["epoch"] + 1, resumed["best"]
        log(f"resuming after epoch {start_epoch}")

    def on_cpu(state: dict[str, Any]) -> dict[str, Any]:
        return {key: value.detach().cpu() for key, value in state.items()}

    for epoch in range(start_epoch, epochs):
        net.train()
        order = torch.randperm(len(images), generator=generator, device=on)
        started, total = time.monotonic(), torch.zeros((), device=on)
        for k in range(steps_per_epoch):
            total += step(order[k * batch : (k + 1) * batch], optimiser).detach()
            schedule.step()
        score = accuracy(net, held["images"], held["labels"]) if held is not None else 0.0
        log(f"epoch {epoch + 1}/{epochs} loss {float(total) / steps_per_epoch:.4f} "
            f"held-out accuracy {score:.4f} ({time.monotonic() - started:.0f} s)")
        if score >= best:
            best = score
            torch.save(on_cpu(net.state_dict()), out / "best.pt")
        torch.save({"net": on_cpu(net.state_dict()), "optimiser": optimiser.state_dict(),
                    "schedule": schedule.state_dict(), "epoch": epoch, "best": best}, last)
    net.cpu()
    net.load_state_dict(torch.load(out / "best.pt", map_location="cpu"))
    return export_onnx(net, out / "reader.onnx")
