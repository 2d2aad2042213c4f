"""The two-stage model's parts: crop geometry, the reader's decision, and the
finder + reader pair trained end to end on a tiny rendered set (offline)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.vision.crops import CONTEXT, CROP_SIZE, crop, crop_matrix, crops
from tabletop.vision.detector import SHIPPED_MODELS
from tabletop.vision.labels import CLASS_NAMES, TILE_LABELS, class_id
from tabletop.vision.reader import (
    NONE_INDEX,
    READER_CLASSES,
    TOP_ALTERNATIVES,
    alternatives,
    decide,
    softmax,
)
from tests.shared import need, need_module, needs


@pytest.mark.parametrize(("box", "centre", "longer"), [
    ([10, 20, 50, 100], (30, 60), 80),     # upright tile: height is the longer side
    ([0, 0, 120, 30], (60, 15), 120),      # a card index lying sideways
    ([5.5, 7.25, 6.5, 8.25], (6.0, 7.75), 1.0),
])
def test_crop_matrix_centres_the_box_and_fits_its_longer_side(box: list[float],
                                                              centre: tuple[float, float],
                                                              longer: float) -> None:
    matrix = crop_matrix(box)
    x, y = matrix @ np.array([*centre, 1.0])
    assert (x, y) == pytest.approx((CROP_SIZE / 2, CROP_SIZE / 2))
    assert matrix[0, 0] == pytest.approx(CROP_SIZE / (longer * CONTEXT))


def test_crop_shows_the_box_and_pads_outside_the_image() -> None:
    image = np.zeros((100, 200, 3), np.uint8)
    image[40:60, 90:110] = 255  # a white square, box exactly on it
    inside = crop(image, [90, 40, 110, 60])
    middle = slice(CROP_SIZE // 2 - 4, CROP_SIZE // 2 + 4)
    centre = inside[middle, middle]
    assert centre.min() > 200
    assert inside[1, 1].tolist() == [0, 0, 0]  # the context around the box is the image
    corner = crop(image, [-40, -40, 0, 0])
    assert corner[1, 1].tolist() == [114, 114, 114]  # outside the image: letterbox grey
    assert crops(image, np.zeros((0, 4))).shape == (0, CROP_SIZE, CROP_SIZE, 3)


def test_shrinking_a_large_box_keeps_the_geometry() -> None:
    """Boxes far larger than the crop are pre-shrunk (no aliasing); the box must
    still land in the same place as with a direct warp."""
    image = np.zeros((1000, 1000, 3), np.uint8)
    image[300:700, 300:700] = 255
    small = crop(image, [300, 300, 700, 700])
    white = small.mean(axis=2) > 128
    rows, cols = np.nonzero(white)
    span = CROP_SIZE / CONTEXT
    assert rows.min() == pytest.approx((CROP_SIZE - span) / 2, abs=1.5)
    assert cols.max() == pytest.approx((CROP_SIZE + span) / 2, abs=1.5)


def _logits(best: str, kind: str, runner_up: str | None = None) -> np.ndarray:
    row = np.zeros(len(READER_CLASSES), np.float32)
    row[class_id(best, kind) if best != "none" else NONE_INDEX] = 9.0
    if runner_up:
        row[class_id(runner_up, "tile")] = 5.0
    return row


@pytest.mark.parametrize(("row_best", "row_kind", "runner_up", "asked_kind", "expected"), [
    ("R7", "tile", None, "tile", "R7"),
    ("JK", "tile", None, "tile", "JK"),
    ("JK", "card", None, "card", "JK"),
    ("none", "tile", None, "tile", None),         # a false alarm of the finder
    ("7H", "card", "R7", "tile", "R7"),           # the finder said tile: cards are ruled out
])
def test_reader_decides_within_the_finders_kind(row_best: str, row_kind: str,
                                                runner_up: str | None, asked_kind: str,
                                                expected: str | None) -> None:
    labels, scores = decide(softmax(_logits(row_best, row_kind, runner_up)[None]),
                            [asked_kind])
    assert labels == [expected]
    assert 0.5 < scores[0] <= 1.0


def test_reader_classes_are_the_labels_plus_none() -> None:
    assert READER_CLASSES[:-1] == CLASS_NAMES
    assert READER_CLASSES[NONE_INDEX] == "none"
    assert len(TILE_LABELS) == 53


def _striped_set(folder: Path, width: int, height: int,
                 boxes: list[list[float]]) -> Path:
    """One image whose every column's grey level is its x / 2, with card boxes."""
    (folder / "images").mkdir(parents=True)
    column = (np.arange(width) // 2).astype(np.uint8)
    cv2.imwrite(str(folder / "images" / "a.png"),
                np.repeat(np.tile(column, (height, 1))[..., None], 3, axis=2))
    items = [{"label": "AS", "kind": "card", "box": box} for box in boxes]
    (folder / "annotations.jsonl").write_text(json.dumps(
        {"image": "images/a.png", "width": width, "height": height, "detections": items}) + "\n")
    return folder


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_finder_crops_keep_the_scale_and_the_items_mostly_inside(tmp_path: Path,
                                                                 seed: int) -> None:
    from tabletop.studio.training import MIN_CROPPED_SHARE, kind_dataset

    # 40-pixel boxes every 30 pixels along a 400x100 image; scale 0.5, crop 50
    boxes = [[x, 20.0, x + 40.0, 80.0] for x in range(0, 361, 30)]
    data = _striped_set(tmp_path / "set", 400, 100, boxes)
    target = kind_dataset(data, tmp_path / "out", scale=0.5, crop=50, seed=seed)
    window = cv2.imread(str(target / "images" / "a.jpg"))
    assert window.shape == (50, 50, 3)
    # the window's left edge, read back from the grey levels: x / 2 before
    # scaling is x after it
    x0 = round(float(window[:, 0, 0].mean()))
    lines = (target / "labels" / "a.txt").read_text().split()
    written = np.array(lines, float).reshape(-1, 5)
    assert set(written[:, 0]) <= {1.0}  # cards are the finder's class 1
    centres = written[:, 1] * 50 + x0
    widths = written[:, 3] * 50
    expected = []
    for x1, _, x2, _ in boxes:
        left, right = max(x1 * 0.5, x0), min(x2 * 0.5, x0 + 50)
        if right - left >= MIN_CROPPED_SHARE * (x2 - x1) * 0.5:
            expected.append(((left + right) / 2, right - left))
    assert len(expected) >= 2
    got = np.array(sorted(zip(centres, widths, strict=True))).ravel()
    assert got == pytest.approx(np.array(sorted(expected)).ravel(), abs=1.5)
    # y: 10..40 of the 50 rows, never cut
    assert (written[:, 2], written[:, 4]) == (pytest.approx(0.5), pytest.approx(0.6))


@pytest.mark.parametrize("count", [1, 2, 3])
def test_training_yaml_lists_every_training_folder(tmp_path: Path, count: int) -> None:
    from tabletop.studio.training import training_yaml
    from tabletop.vision.detector import FINDER_NAMES

    folders = [_striped_set(tmp_path / f"set{i}", 40, 40, [[0, 0, 9, 9]]) for i in range(count)]
    text = training_yaml(folders, tmp_path / "run", None, FINDER_NAMES).read_text()
    train_line = next(line for line in text.splitlines() if line.startswith("train:"))
    listed = json.loads(train_line.removeprefix("train:").strip())
    assert (listed if count > 1 else [listed]) == [str(f / "images") for f in folders]
    assert f'val: "{folders[0] / "images"}"' in text  # no --val: the first folder


@pytest.mark.parametrize(("folders", "message"), [
    (lambda tmp: [], "no training folder"),
    (lambda tmp: [tmp / "set0", tmp / "missing"], "has no images/ folder"),
])
def test_training_yaml_refuses_missing_folders(tmp_path: Path, folders: object,
                                               message: str) -> None:
    from tabletop.studio.training import training_yaml

    _striped_set(tmp_path / "set0", 40, 40, [[0, 0, 9, 9]])
    with pytest.raises(ValueError, match=message):
        training_yaml(folders(tmp_path), tmp_path / "run", None)  # type: ignore[operator]


def test_scaled_finder_refuses_folders_of_different_frame_sizes(tmp_path: Path) -> None:
    need("ultralytics")
    from tabletop.studio.training import train

    small = _striped_set(tmp_path / "small", 400, 100, [[0, 20, 40, 80]])
    large = _striped_set(tmp_path / "large", 800, 200, [[0, 20, 40, 80]])
    with pytest.raises(ValueError, match=r"different sizes \[\(400, 100\), \(800, 200\)\]"):
        train([small, large], tmp_path / "run", epochs=1, imgsz=64, finder=True, scale=0.5)
    assert not (tmp_path / "run" / "train").exists()  # refused before any training


def test_reader_trains_on_several_crop_files_together(tmp_path: Path) -> None:
    need("torch")
    need("onnx")
    from tabletop.studio.reader_training import extract, train_reader
    from tabletop.studio.synth import generate_dataset

    parts = []
    for seed in (1, 2):
        data = generate_dataset(tmp_path / f"data{seed}", 2, seed=seed, kind="tiles",
                                size=(320, 192), workers=1)
        parts.append(extract(data, tmp_path / f"crops{seed}.npz", seed=seed, workers=1))
    sizes = [len(np.load(part)["labels"]) for part in parts]
    said: list[str] = []
    train_reader(parts, None, tmp_path / "run", epochs=1, batch=64, log=said.append)
    assert f"{sum(sizes)} training crops from 2 file(s)" in said
    with pytest.raises(ValueError, match="at least one crops file"):
        train_reader([], None, tmp_path / "run2", epochs=1)


def _with_random_batchnorm(net: Any) -> Any:
    """``net`` with batchnorm statistics and affines unlike the identity, so a
    check that a transformed net reads the same cannot pass by accident."""
    import torch

    with torch.no_grad():
        for module in net:
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)
    return net


@pytest.mark.parametrize("widths", [(16, 32, 48), (16, 32, 48, 48, 96, 96, 0)])
def test_a_reader_net_refuses_malformed_widths(widths: tuple[int, ...]) -> None:
    need("torch")
    from tabletop.studio.reader_training import build_net

    with pytest.raises(ValueError, match="must be 7 positive channel counts"):
        build_net(widths=widths)


def test_reader_training_keeps_its_starts_widths_and_resumes_at_them(tmp_path: Path) -> None:
    torch = need_module("torch")
    need("onnx")
    import onnxruntime

    from tabletop.studio.reader_training import extract, net_widths, train_reader
    from tabletop.studio.synth import generate_dataset

    data = generate_dataset(tmp_path / "data", 2, seed=5, kind="tiles", size=(320, 192),
                            workers=1)
    crops_file = extract(data, tmp_path / "crops.npz", seed=5, workers=1)
    small = (8, 8, 16, 16, 16, 16, 24)
    train_reader(crops_file, None, tmp_path / "small", epochs=1, batch=64, widths=small,
                 log=lambda _: None)
    assert net_widths(torch.load(tmp_path / "small" / "best.pt")) == small
    with pytest.raises(ValueError, match="has widths"):
        train_reader(crops_file, None, tmp_path / "other", epochs=1, batch=64,
                     init=tmp_path / "small" / "best.pt", widths=(16, 32, 48, 48, 96, 96, 128),
                     log=lambda _: None)
    onnx_file = train_reader(crops_file, None, tmp_path / "again", epochs=1, batch=64,
                             init=tmp_path / "small" / "best.pt", log=lambda _: None)
    assert net_widths(torch.load(tmp_path / "again" / "best.pt")) == small
    session = onnxruntime.InferenceSession(str(onnx_file))
    logits = session.run(None, {"crops": np.zeros((2, 3, CROP_SIZE, CROP_SIZE), np.float32)})
    assert logits[0].shape == (2, len(READER_CLASSES))
    # a finished run folder resumes at its own width, whatever is asked
    said: list[str] = []
    train_reader(crops_file, None, tmp_path / "again", epochs=1, batch=64,
                 widths=(16, 32, 48, 48, 96, 96, 128), log=said.append)
    assert "resuming after epoch 1" in said
    assert net_widths(torch.load(tmp_path / "again" / "best.pt")) == small


@pytest.mark.parametrize(("option", "text", "message"), [
    ("--widths", "16,32,48", "seven positive channel counts, not '16,32,48'"),
    ("--widths", "16,32,48,48,96,96,0", "seven positive channel counts"),
    ("--widths", "16,32,wide,48,96,96,128", "not comma-separated channel counts: '16,32,wide"),
    ("--index-crops", "-5", "0 or more, not '-5'"),
    ("--index-crops", "many", "not a whole number: 'many'"),
    ("--defocus", "-1", "a sigma of 0 to 8 crop pixels, not '-1'"),
    ("--defocus", "9", "a sigma of 0 to 8 crop pixels, not '9'"),
    ("--defocus", "soft", "not a number: 'soft'"),
])
def test_train_refuses_a_malformed_reader_option(tmp_path: Path, option: str, text: str,
                                                 message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import EXIT_BAD_INPUT, main

    assert main(["train", "--stage", "reader", "--data", str(tmp_path), "--out",
                 str(tmp_path / "run"), option, text]) == EXIT_BAD_INPUT
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


SHIPPED_READER = SHIPPED_MODELS / "tabletop.reader.onnx"


@pytest.mark.parametrize("views", [2, 3, 5])
def test_reading_from_several_views_averages_the_nudged_crops(views: int) -> None:
    from tabletop.studio.synth.scene import render_scene
    from tabletop.vision.reader import VIEW_SHIFTS, Reader

    reader = Reader(SHIPPED_READER)
    scene = render_scene(21, kind="mixed")
    boxes, kinds = scene.detections.boxes, list(scene.detections.kinds)
    assert len(boxes) >= 5
    expected = np.mean([softmax(reader.logits(np.stack(
        [crop(scene.image, box, reader.size, shift=shift) for box in boxes])))
        for shift in VIEW_SHIFTS[:views]], axis=0)
    labels, probabilities = reader(scene.image, boxes, kinds, views)
    expected_labels, expected_probabilities = decide(expected, kinds)
    assert labels == expected_labels
    assert np.allclose(probabilities, expected_probabilities)
    # one view is the plain reading of the box's own crop
    single, _ = reader(scene.image, boxes, kinds)
    assert single == decide(softmax(reader.logits(crops(scene.image, boxes, reader.size))),
                           kinds)[0]
    none_labels, none_probabilities = reader(scene.image, np.zeros((0, 4)), [], views)
    assert none_labels == [] and none_probabilities.shape == (0,)


@pytest.mark.parametrize("views", [0, 6, -1])
def test_views_out_of_range_are_refused(views: int) -> None:
    from tabletop.vision.detector import DetectorSettings
    from tabletop.vision.reader import Reader

    with pytest.raises(ValueError, match=f"views must be 1..5, not {views}"):
        Reader(SHIPPED_READER)(np.zeros((64, 64, 3), np.uint8), [[0, 0, 9, 9]], ["tile"], views)
    with pytest.raises(ValueError, match="views must be"):
        DetectorSettings(views=views)


@pytest.mark.parametrize("seed", range(4))
def test_alternatives_hold_the_label_and_sum_to_at_most_one(seed: int) -> None:
    from tabletop.vision.labels import LABELS_BY_KIND

    rng = np.random.default_rng(seed)
    kinds = ["tile", "card", "card", "tile", "tile", "card"] * 5
    # sharp and flat readings alike
    logits = (rng.normal(0, 1, (len(kinds), len(READER_CLASSES)))
              * rng.choice([0.3, 3.0, 12.0], (len(kinds), 1))).astype(np.float32)
    probabilities = softmax(logits)
    labels, scores = decide(probabilities, kinds)
    for label, score, kind, listed in zip(labels, scores, kinds,
                                          alternatives(probabilities, kinds), strict=True):
        assert sum(listed.values()) <= 1 + 1e-9
        assert len(listed) == TOP_ALTERNATIVES + 1 and "none" in listed
        assert set(listed) - {"none"} <= LABELS_BY_KIND[kind]  # type: ignore[index]
        assert list(listed.values()) == sorted(listed.values(), reverse=True)
        if label is not None:
            assert listed[label] == pytest.approx(score)
            assert listed[label] == max(listed.values())


def test_detect_json_lists_each_items_alternatives(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import main
    from tabletop.studio.synth.scene import render_scene

    path = tmp_path / "scene.png"
    cv2.imwrite(str(path), render_scene(21, kind="mixed").image)
    assert main(["detect", str(path), "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert len(line["detections"]) >= 5
    for item in line["detections"]:
        # the contract's fields, then the reader's alternatives
        assert list(item) == ["label", "kind", "box", "confidence", "alternatives"]
        listed = {entry["label"]: entry["p"] for entry in item["alternatives"]}
        assert len(listed) == TOP_ALTERNATIVES + 1 and "none" in listed
        assert max(p for label, p in listed.items() if label != "none") == listed[item["label"]]
        assert sum(listed.values()) <= 1.001
        # the confidence is the finder's times the reader's, so at most the reader's
        assert item["confidence"] <= listed[item["label"]] + 1e-4


@needs("ultralytics", "onnx")
def test_two_stage_model_trains_exports_and_detects(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import main
    from tabletop.studio.synth import generate_dataset
    from tabletop.vision.detector import Detector, DetectorSettings, ModelError, reader_path
    from tabletop.vision.reader import Reader

    data = generate_dataset(tmp_path / "data", 6, seed=3, kind="mixed", size=(320, 192),
                            workers=1)
    assert main(["train", "--stage", "reader", "--data", str(data), "--val", str(data),
                 "--out", str(tmp_path / "reader"), "--epochs", "1", "--batch", "64",
                 "--workers", "1", "--index-crops", "40", "--defocus", "3", "--json"]) == 0
    reader_onnx = Path(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["weights"])
    assert Reader(reader_onnx).size == CROP_SIZE
    rendered = np.load(tmp_path / "reader" / "crops-index.npz")
    assert len(rendered["images"]) == len(rendered["labels"]) >= 40

    # 128-pixel crops of the 320x192 frames at half size: run at 160 afterwards
    assert main(["train", "--stage", "finder", "--data", str(data), "--out",
                 str(tmp_path / "finder"), "--epochs", "1", "--imgsz", "128", "--scale", "0.5",
                 "--batch", "4", "--workers", "0", "--device", "cpu", "--export",
                 "--warmup", "0.5", "--json"]) == 0
    finder = Path(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["weights"])
    assert finder.suffix == ".onnx"
    # the warm-up asked for reached ultralytics (its default is 3 epochs)
    run_args = (tmp_path / "finder" / "train" / "args.yaml").read_text()
    assert "warmup_epochs: 0.5\n" in run_args
    with pytest.raises(ModelError, match="reader"):
        Detector(finder)  # a finder without its reader is refused, not run half-blind
    reader_path(finder).write_bytes(reader_onnx.read_bytes())
    image = cv2.imread(str(sorted((data / "images").glob("*.jpg"))[0]))
    for model in (finder, finder.with_suffix(".pt")):
        reader_path(model).write_bytes(reader_onnx.read_bytes())
        counts = []
        for threshold in (0.001, 0.02, 0.3):
            detector = Detector(model, DetectorSettings(confidence=threshold))
            assert detector.reader is not None
            assert detector.imgsz == 160  # the stamped frame size, not the crop's
            found = detector(image)
            for label, kind in zip(found.labels, found.kinds, strict=True):
                assert class_id(label, kind) >= 0  # named within the finder's kind
            # the final confidence (finder x reader) passes the threshold too
            assert np.all((found.confidences >= threshold) & (found.confidences <= 1))
            counts.append(len(found))
        assert counts == sorted(counts, reverse=True)


@pytest.mark.parametrize("widths", [
    (16, 32, 48, 48, 96, 96, 128),   # the narrow reader
    (3, 5, 2, 2, 6, 2, 4),           # any widths the file holds
])
def test_reader_rebuilt_from_its_export_reads_as_the_file_does(tmp_path: Path,
                                                               widths: tuple[int, ...]) -> None:
    torch = need_module("torch")
    need("onnx")
    import onnxruntime

    from tabletop.studio.reader_training import (
        STORED_SIZE,
        _as_tensor,
        _augment,
        build_net,
        export_onnx,
        net_from_onnx,
        net_widths,
    )

    torch.manual_seed(5)
    net = _with_random_batchnorm(build_net(widths=widths))
    onnx_file = export_onnx(net, tmp_path / "reader.onnx")
    stored = np.random.default_rng(6).integers(0, 256, (40, STORED_SIZE, STORED_SIZE, 3),
                                               dtype=np.uint8)
    rebuilt = net_from_onnx(onnx_file, stored)
    assert net_widths(rebuilt.state_dict()) == widths
    crops_in = _augment(_as_tensor(stored[:8]), None, train=False)
    session = onnxruntime.InferenceSession(str(onnx_file))
    expected = session.run(None, {"crops": crops_in.numpy()})[0]
    with torch.no_grad():
        rebuilt.eval()
        got = rebuilt(crops_in).numpy()
        # in training mode a batch's own statistics stand in for the running
        # ones; on the calibration crops themselves they are the same
        rebuilt.train()
        rebuilt[-2].p = 0.0  # dropout off, to compare
        got_training = rebuilt(_augment(_as_tensor(stored), None, train=False))[:8].numpy()
    scale = float(np.abs(expected).max())
    assert np.allclose(got, expected, atol=1e-4 * scale)
    assert np.allclose(got_training, expected, atol=1e-3 * scale)
    # and the net it rebuilt is not just any net: a fresh one reads otherwise
    with torch.no_grad():
        fresh = build_net(widths=widths).eval()(crops_in).numpy()
    assert not np.allclose(fresh, expected, atol=1e-2 * scale)


def test_rebuilding_refuses_an_onnx_file_that_is_not_a_reader(tmp_path: Path) -> None:
    torch = need_module("torch")
    need("onnx")
    from tabletop.studio.reader_training import net_from_onnx

    path = tmp_path / "other.onnx"
    torch.onnx.export(torch.nn.Linear(4, 2), (torch.zeros(1, 4),), str(path), dynamo=False)
    with pytest.raises(ValueError, match="not an exported reader"):
        net_from_onnx(path, np.zeros((1, 96, 96, 3), np.uint8))


def test_reader_training_goes_on_from_an_exported_reader(tmp_path: Path) -> None:
    torch = need_module("torch")
    need("onnx")
    from tabletop.studio.reader_training import extract, net_widths, train_reader
    from tabletop.studio.synth import generate_dataset

    data = generate_dataset(tmp_path / "data", 2, seed=8, kind="tiles", size=(320, 192),
                            workers=1)
    crops_file = extract(data, tmp_path / "crops.npz", seed=8, workers=1)
    widths = (4, 6, 8, 8, 10, 12, 14)
    first = train_reader(crops_file, None, tmp_path / "first", epochs=1, batch=64,
                         widths=widths, log=lambda _: None)
    train_reader(crops_file, None, tmp_path / "second", epochs=1, batch=64, init=first,
                 log=lambda _: None)
    assert net_widths(torch.load(tmp_path / "second" / "best.pt")) == widths


# --- the features output ---------------------------------------------------------------------
SHIPPED_READERS = ("tabletop.reader.onnx", "tabletop.cards.reader.onnx")


def _without_features(source: Path, out: Path) -> Path:
    """A copy of the reader file ``source`` as it was before it had its features output."""
    onnx = need_module("onnx")
    model = onnx.load(str(source))
    graph = model.graph
    kept = [node for node in graph.node if "features" not in node.output]
    del graph.node[:]
    graph.node.extend(kept)
    outputs = [output for output in graph.output if output.name != "features"]
    del graph.output[:]
    graph.output.extend(outputs)
    onnx.save(model, str(out))
    return out


def _mixed_crops() -> np.ndarray:
    from tabletop.studio.synth.scene import render_scene

    scene = render_scene(21, 960, 540, "mixed")
    return crops(scene.image, scene.detections.boxes)


@pytest.mark.parametrize("name", SHIPPED_READERS)
def test_a_shipped_reader_outputs_its_features_and_the_same_logits(name: str,
                                                                   tmp_path: Path) -> None:
    from onnx import numpy_helper

    from tabletop.vision.reader import FEATURES_OUTPUT, Reader

    onnx = need_module("onnx")
    path = SHIPPED_MODELS / name
    model = onnx.load(str(path))
    assert [output.name for output in model.graph.output] == ["logits", FEATURES_OUTPUT]
    batch = _mixed_crops()
    reader = Reader(path)
    logits, features = reader.read(batch)
    # the file as it was before: its logits, bit for bit
    before = Reader(_without_features(path, tmp_path / name)).logits(batch)
    assert before.dtype == logits.dtype and np.array_equal(before, logits)
    assert np.array_equal(reader.logits(batch), logits)
    # the features are what the last layer reads
    weights = {item.name: numpy_helper.to_array(item) for item in model.graph.initializer}
    (gemm,) = (node for node in model.graph.node if node.op_type == "Gemm")
    weight, bias = weights[gemm.input[1]], weights[gemm.input[2]]
    assert features.shape == (len(batch), weight.shape[1])
    assert np.allclose(features @ weight.T + bias, logits, atol=1e-4)


def test_a_reader_file_without_features_reads_as_before_but_takes_no_head(
        tmp_path: Path) -> None:
    """A folder adapted before the readers had their features output: it reads as the
    shipped model does, and no head can be put on its reader."""
    from tabletop.studio.synth.scene import render_scene
    from tabletop.vision.detector import Detector
    from tabletop.vision.reader import Reader
    from tabletop.vision.reader_head import HeadPart

    path = _without_features(SHIPPED_MODELS / "tabletop.reader.onnx",
                             tmp_path / "tabletop.reader.onnx")
    (tmp_path / "tabletop.onnx").write_bytes((SHIPPED_MODELS / "tabletop.onnx").read_bytes())
    scene = render_scene(22, 960, 540, "tiles")
    found = Detector(tmp_path / "tabletop.onnx")(scene.image)
    assert len(found) and found.labels == Detector()(scene.image).labels
    older = Reader(path)
    batch = _mixed_crops()
    assert not older.has_features
    assert np.array_equal(older.logits(batch),
                          Reader(SHIPPED_MODELS / "tabletop.reader.onnx").logits(batch))
    with pytest.raises(ValueError, match="no 'features' output"):
        older.read(batch)
    head = HeadPart(("tile",), np.zeros((len(READER_CLASSES), 256), np.float32),
                    np.zeros(len(READER_CLASSES), np.float32), "x")
    with pytest.raises(ValueError, match="no 'features' output for a head"):
        Reader(path, head)


def test_an_exported_reader_outputs_its_features(tmp_path: Path) -> None:
    torch = need_module("torch")
    need("onnx")
    import onnxruntime

    from tabletop.studio.reader_training import build_net, export_onnx

    torch.manual_seed(8)
    net = build_net(widths=(8, 8, 16, 16, 16, 16, 24))
    path = export_onnx(net, tmp_path / "reader.onnx")
    session = onnxruntime.InferenceSession(str(path))
    assert [output.name for output in session.get_outputs()] == ["logits", "features"]
    x = np.random.default_rng(8).random((4, 3, CROP_SIZE, CROP_SIZE), dtype=np.float32)
    logits, features = session.run(None, {"crops": x})
    with torch.no_grad():
        expected = net.eval()(torch.from_numpy(x)).numpy()
        linear = net[-1]
        recomputed = features @ linear.weight.numpy().T + linear.bias.numpy()
    assert features.shape == (4, 24)
    assert np.allclose(logits, expected, atol=1e-4)
    assert np.allclose(recomputed, logits, atol=1e-5)


def test_reader_training_fits_its_epochs_into_a_time_budget(tmp_path: Path) -> None:
    need("torch")
    need("onnx")
    from tabletop.studio.reader_training import extract, train_reader
    from tabletop.studio.synth import generate_dataset

    data = generate_dataset(tmp_path / "data", 2, seed=3, kind="tiles", size=(320, 192),
                            workers=1)
    crops_file = extract(data, tmp_path / "crops.npz", seed=3, workers=1)
    said: list[str] = []
    train_reader(crops_file, None, tmp_path / "tight", epochs=50, batch=32, seconds=0.01,
                 log=said.append)
    assert any("1 of 50 epochs fit in 0 s" in line for line in said), said
    assert sum(line.startswith("epoch ") for line in said) == 1
    roomy: list[str] = []
    train_reader(crops_file, None, tmp_path / "roomy", epochs=2, batch=32, seconds=3600,
                 log=roomy.append)
    assert any("2 of 2 epochs fit" in line for line in roomy), roomy
    assert sum(line.startswith("epoch ") for line in roomy) == 2


@pytest.mark.parametrize("defocus", [0.5, 1.5, 3.0])
def test_defocus_blurs_about_half_the_crops_by_up_to_its_sigma_and_keeps_their_light(
        defocus: float) -> None:
    torch = need_module("torch")
    from tabletop.studio.reader_training import DEFOCUS_SHARE, defocused

    points = torch.zeros(400, 3, 64, 64)
    points[:, :, 32, 32] = 1.0
    out = defocused(points, defocus, torch.Generator().manual_seed(3))
    blurred = out[:, 0, 32, 32] < 1.0
    assert abs(float(blurred.float().mean()) - DEFOCUS_SHARE) < 0.08
    assert torch.equal(out[~blurred], points[~blurred])
    assert torch.allclose(out.sum(dim=(2, 3)), torch.ones(400, 3), atol=1e-4)
    # a point's spread is its blur's sigma: none beyond ``defocus``, and some near it
    offsets = (torch.arange(64) - 32.0) ** 2
    spread = (out[blurred, 0] * offsets.view(1, 1, 64)).sum(dim=(1, 2)).sqrt()
    # (a narrow Gaussian sampled on whole pixels spreads a little less)
    assert float(spread.max()) == pytest.approx(defocus, abs=0.06)
    assert float(spread.min()) < defocus * 0.8 or defocus == 0.5
    assert torch.equal(out[:, 0], out[:, 2])


def test_a_negative_defocus_is_refused(tmp_path: Path) -> None:
    need("torch")
    from tabletop.studio.reader_training import train_reader

    crops_file = tmp_path / "crops.npz"
    np.savez(crops_file, images=np.zeros((4, 96, 96, 3), np.uint8),
             labels=np.zeros(4, np.int16))
    with pytest.raises(ValueError, match=r"defocus must be 0 or more, not -1\.0"):
        train_reader(crops_file, None, tmp_path / "run", epochs=1, defocus=-1.0)
