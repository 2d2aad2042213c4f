"""Adapting the model to the players' own set (``studio.adapt``, ``tabletop adapt``):
reading labelled photos, the crops taught, layout photos labelled by their order,
corrections from play read back, and a short real adapt run whose folder the detector
loads."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.studio.adapt import (
    ADAPTED_INFO,
    CARD_ORDER,
    TILE_ORDER,
    AdaptError,
    LayoutError,
    adapted_model,
    image_names,
    label_layout,
    layout_rows,
    photo_crops,
    read_labelled,
    subset_jsonl,
    tuned_share,
)
from tabletop.studio.evaluate import evaluate, labelled_images
from tabletop.vision.detections import Detections, iou_matrix
from tabletop.vision.detector import (
    DEFAULT_MODELS,
    Detector,
    DetectorSettings,
    load_set_inks,
    set_inks_path,
)
from tabletop.vision.labels import class_id
from tabletop.vision.reader import NONE_INDEX
from tests.shared import REALDATA, need, scaled

SHIPPED = DEFAULT_MODELS[0]
needs_realdata = pytest.mark.skipif(REALDATA is None, reason="the real photos are missing")


def _photo(path: Path, size: tuple[int, int] = (200, 100)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = np.full((size[1], size[0], 3), 90, np.uint8)
    cv2.rectangle(image, (20, 20), (60, 80), (240, 240, 240), -1)
    cv2.imwrite(str(path), image)
    return path


def _line(image: str, detections: list[dict[str, object]], width: int = 200,
          height: int = 100, **extra: object) -> str:
    return json.dumps({"image": image, "width": width, "height": height,
                       "detections": detections, **extra}) + "\n"


R5: dict[str, object] = {"label": "R5", "kind": "tile", "box": [20, 20, 60, 80]}


# --- reading labelled photos --------------------------------------------------------------
def test_image_paths_are_relative_to_each_annotation_files_folder(tmp_path: Path) -> None:
    _photo(tmp_path / "setA" / "images" / "a.jpg")
    _photo(tmp_path / "photos" / "b.png", size=(400, 200))
    first = tmp_path / "setA" / "annotations.jsonl"
    first.write_text(_line("images/a.jpg", [R5]))
    second = tmp_path / "labels" / "more.jsonl"
    second.parent.mkdir()
    # labelled at 200 x 100, the file is 400 x 200: boxes scale to the file's pixels
    second.write_text("\n" + _line("../photos/b.png", [R5, {**R5, "label": "K1"}]))
    photos = read_labelled([first, second])
    assert [p.path for p in photos] == [tmp_path / "setA" / "images" / "a.jpg",
                                        tmp_path / "photos" / "b.png"]
    assert [p.line for p in photos] == [1, 2]
    image, truth = photos[1].read()
    assert image.shape == (200, 400, 3)
    assert truth.labels == ("R5", "K1")
    assert truth.boxes[0].tolist() == [40, 40, 120, 160]


def test_a_partial_line_is_a_correction(tmp_path: Path) -> None:
    _photo(tmp_path / "f.jpg")
    file = tmp_path / "c.jsonl"
    file.write_text(_line("f.jpg", [R5], partial=True) + _line("f.jpg", [R5]))
    assert [p.partial for p in read_labelled([file])] == [True, False]


@pytest.mark.parametrize(("content", "expected"), [
    (_line("images/gone.jpg", [R5]), "c.jsonl:1: the image 'images/gone.jpg' is not at"),
    (_line("f.jpg", [{**R5, "label": "R14"}]), "'R14' is not a tile token"),
    (_line("f.jpg", [{"label": "5X", "box": [0, 0, 1, 1]}]), "'5X' is not a tile or card"),
    (_line("f.jpg", []) + _line("f.jpg", []), "no labelled item in the 2 photo(s)"),
    ("", "no labelled photo in"),
    ("{not json\n", "c.jsonl:1:"),
])
def test_bad_annotations_are_refused_in_one_line(tmp_path: Path, content: str,
                                                 expected: str) -> None:
    _photo(tmp_path / "f.jpg")
    file = tmp_path / "c.jsonl"
    file.write_text(content)
    with pytest.raises(ValueError, match=None) as caught:
        read_labelled([file])
    assert expected in str(caught.value)
    assert "\n" not in str(caught.value)


def test_no_annotations_and_a_missing_file_are_refused(tmp_path: Path) -> None:
    with pytest.raises(AdaptError, match="no annotations given"):
        read_labelled([])
    with pytest.raises(AdaptError, match=r"no annotations file .*nope\.jsonl"):
        read_labelled([tmp_path / "nope.jsonl"])


def test_subset_keeps_the_chosen_lines_with_paths_from_the_new_folder(tmp_path: Path) -> None:
    _photo(tmp_path / "set" / "images" / "a.jpg")
    _photo(tmp_path / "set" / "images" / "b.jpg")
    source = tmp_path / "set" / "annotations.jsonl"
    source.write_text(_line("images/a.jpg", [R5]) + _line("images/b.jpg", [R5]))
    out = subset_jsonl(source, ["images/b.jpg"], tmp_path / "work" / "fold" / "adapt.jsonl")
    assert [p.path.name for p in read_labelled([out])] == ["b.jpg"]
    with pytest.raises(AdaptError, match=r"no line for 'images/c\.jpg'"):
        subset_jsonl(source, ["images/c.jpg"], out)


# --- the crops taught ------------------------------------------------------------------------
def _boxes(*rows: list[float]) -> Detections:
    return Detections(np.array(rows, float), tuple("JK" for _ in rows),
                      tuple("tile" for _ in rows), np.full(len(rows), 0.5))


def test_a_photo_teaches_its_items_the_finders_boxes_and_bare_table() -> None:
    image = np.full((300, 400, 3), 90, np.uint8)
    truth = Detections(np.array([[20, 20, 60, 80], [200, 20, 240, 70]], float),
                       ("R5", "7H"), ("tile", "card"), np.ones(2))
    found = _boxes([22, 21, 61, 82], [300, 200, 340, 260])  # R5 shifted; a false alarm
    crops = photo_crops(image, truth, found, seed=1)
    tiles, cards = crops["tile"], crops["card"]
    red5 = class_id("R5", "tile")
    assert tiles.labels[:1] == [red5] and cards.labels[:1] == [class_id("7H", "card")]
    assert tiles.labels[-2:] == [red5, NONE_INDEX]  # the finder's boxes
    bare = tiles.labels[1:-2]
    assert bare and set(bare) == {NONE_INDEX} and cards.labels[1:] == bare
    images, labels = tiles.arrays()
    assert images.shape == (len(tiles), 96, 96, 3) and labels.dtype == np.int64


def test_a_partial_photo_teaches_its_labelled_items_alone() -> None:
    image = np.full((300, 400, 3), 90, np.uint8)
    truth = Detections(np.array([[20, 20, 60, 80]], float), ("R5",), ("tile",), np.ones(1))
    found = _boxes([22, 21, 61, 82], [300, 200, 340, 260], [100, 20, 140, 80])
    crops = photo_crops(image, truth, found, seed=1, partial=True)
    assert crops["tile"].labels == [class_id("R5", "tile")] * 2
    assert crops["card"].labels == []


# --- the finder's boxes as the labels draw them ---------------------------------------------
def _pairs(count: int, rng: Any) -> list[tuple[list[float], list[float]]]:
    pairs = []
    for _ in range(count):
        x, y = rng.uniform(0, 500, 2)
        w, h = rng.uniform(30, 60), rng.uniform(40, 80)
        found = [x, y, x + w, y + h]
        # taller and lower, as the real tile photos' labels (the tile's side in sight):
        # IoU 0.48 as found
        cx, cy = x + w / 2 + 0.05 * w, y + h / 2 + 0.4 * h
        lw, lh = w * 1.1 * rng.uniform(0.98, 1.02), h * 1.6
        pairs.append((found, [cx - lw / 2, cy - lh / 2, cx + lw / 2, cy + lh / 2]))
    return pairs


def test_box_fit_finds_how_the_labels_sit_on_the_finders_boxes() -> None:
    from tabletop.studio.adapt import BOX_FIT_MIN_PAIRS, BoxFit, fit_boxes, fitted_boxes

    pairs = _pairs(40, np.random.default_rng(1))
    fit = fitted_boxes(pairs)
    assert fit.pairs == 40
    assert fit.width == pytest.approx(1.1, abs=0.01) and fit.height == pytest.approx(1.6)
    assert fit.dx == pytest.approx(0.05) and fit.dy == pytest.approx(0.4)
    moved = fit.apply(np.array([pairs[0][0]]))
    assert moved[0] == pytest.approx(np.array(pairs[0][1]), abs=1.0)
    assert fit_boxes(pairs[: BOX_FIT_MIN_PAIRS - 1]).is_identity
    exact = [(box, box) for box, _ in pairs]
    assert fitted_boxes(exact).is_identity  # nothing to gain: left alone
    assert BoxFit().apply(np.array([[1.0, 2, 3, 4]])).tolist() == [[1, 2, 3, 4]]


def test_box_pairs_pair_each_labelled_item_with_the_finders_box_on_it() -> None:
    from tabletop.studio.adapt import box_pairs

    truth = Detections(np.array([[0, 0, 40, 60], [100, 0, 140, 60]], float), ("R1", "7H"),
                       ("tile", "card"), np.ones(2))
    found = Detections(np.array([[2, 5, 40, 62], [300, 0, 340, 60], [100, 0, 140, 60]],
                                float), ("JK", "JK", "JK"), ("tile", "tile", "tile"),
                       np.ones(3))
    (pair,) = box_pairs(found, truth, "tile")
    assert pair[0].tolist() == [2, 5, 40, 62] and pair[1].tolist() == [0, 0, 40, 60]
    assert box_pairs(found, truth, "card") == []


def test_a_fitted_finder_moves_its_boxes_inside_the_graph(tmp_path: Path) -> None:
    need("onnx")
    import onnxruntime as ort

    from tabletop.studio.adapt import BoxFit, fitted_finder

    fits = {"tile": BoxFit(1.1, 1.2, 0.03, 0.1, 20), "card": BoxFit(0.9, 1.0, -0.05, 0.0, 9)}
    moved = fitted_finder(SHIPPED, tmp_path / "moved.onnx", fits)
    blob = np.random.default_rng(0).random((1, 3, 256, 320), np.float32)
    before = ort.InferenceSession(str(SHIPPED)).run(None, {"images": blob})[0][0]
    after = ort.InferenceSession(str(moved)).run(None, {"images": blob})[0][0]
    assert after.shape == before.shape and np.array_equal(after[4:], before[4:])
    tile = before[4] >= before[5]
    for chosen, fit in ((tile, fits["tile"]), (~tile, fits["card"])):
        x, y, w, h = before[:4, chosen]
        expected = np.stack([x + fit.dx * w, y + fit.dy * h, w * fit.width, h * fit.height])
        assert np.allclose(after[:4, chosen], expected, rtol=1e-5, atol=1e-3)
    import shutil

    shutil.copy(SHIPPED.parent / "tabletop.reader.onnx", tmp_path / "moved.reader.onnx")
    # loads as a finder, metadata kept
    detector = Detector(moved, DetectorSettings(card_finder="off"))
    assert detector.imgsz == Detector(SHIPPED).imgsz


# --- (a) layout photos ------------------------------------------------------------------------
def _grid(counts: list[int], tilt: float = 0.0, width: float = 40, height: float = 56,
          kind: str = "tile", missing: Iterable[tuple[int, int]] = (),
          shift: dict[tuple[int, int], float] | None = None) -> Detections:
    boxes = []
    for row, count in enumerate(counts):
        for column in range(count):
            if (row, column) in set(missing):
                continue
            x = 10 + column * (width + 8) + (shift or {}).get((row, column), 0.0)
            y = 10 + row * (height + 20) + tilt * x
            boxes.append([x, y, x + width, y + height])
    order = np.random.default_rng(3).permutation(len(boxes))  # the finder's order is any
    return Detections(np.array(boxes, float)[order], tuple("JK" for _ in boxes),
                      tuple(kind for _ in boxes), np.full(len(boxes), 0.9))  # type: ignore[misc]


def test_a_laid_out_set_is_labelled_row_by_row() -> None:
    labelled = label_layout(_grid([13, 13, 13, 13, 2], tilt=0.02))
    assert labelled.labels == tuple(label for row in TILE_ORDER for label in row)
    centres = (labelled.boxes[:, 0] + labelled.boxes[:, 2]) / 2
    assert np.all(np.diff(centres[:13]) > 0)


def test_the_jokers_row_may_be_short_or_missing() -> None:
    assert label_layout(_grid([13, 13, 13, 13, 1])).labels[-2:] == ("R13", "JK")
    assert label_layout(_grid([13, 13, 13, 13])).labels[-1] == "R13"


def test_a_jokers_row_holding_more_boxes_keeps_the_surest() -> None:
    grid = _grid([13, 13, 13, 13, 3])
    last_row = np.flatnonzero(grid.boxes[:, 1] == grid.boxes[:, 1].max())
    middle = last_row[np.argsort(grid.boxes[last_row, 0])][1]
    confidences = grid.confidences.copy()
    confidences[middle] = 0.3  # a third box in the jokers' row, less sure than theirs
    grid = Detections(grid.boxes, grid.labels, grid.kinds, confidences)
    labelled = label_layout(grid, "tiles")
    assert labelled.labels[-3:] == ("R13", "JK", "JK") and len(labelled) == 54
    assert not (labelled.boxes == grid.boxes[middle]).all(axis=1).any()
    with pytest.raises(LayoutError, match="row 5 from the top has 3"):
        label_layout(grid, "tiles", short_rows=False)


@pytest.mark.parametrize(("missing", "kind", "counts"), [
    ({(2, 12)}, "tile", [13, 13, 13, 13, 2]),  # the row's last tile
    ({(0, 0), (0, 5), (0, 6)}, "tile", [13, 13, 13, 13]),  # three, the first among them
    ({(1, 4), (6, 12)}, "card", [13] * 8),  # a top index and a bottom one
])
def test_a_row_short_of_a_few_items_takes_the_labels_of_its_columns(
        missing: set[tuple[int, int]], kind: str, counts: list[int]) -> None:
    order = "tiles" if kind == "tile" else "cards"
    full = label_layout(_grid(counts, tilt=0.02, kind=kind), order)
    short = label_layout(_grid(counts, tilt=0.02, kind=kind, missing=missing), order)
    assert len(short) == len(full) - len(missing)
    by_box = {tuple(box): label for box, label in zip(full.boxes.tolist(), full.labels,
                                                      strict=True)}
    assert [by_box[tuple(box)] for box in short.boxes.tolist()] == list(short.labels)


@pytest.mark.parametrize(("missing", "shift", "counts", "order"), [
    # four missing: too many for the complete rows' columns, not for the layout's grid
    ({(2, 1), (2, 2), (2, 3), (2, 4)}, {}, [13, 13, 13, 13, 2], "tiles"),
    # a box between two columns (a pip or a rim) is left out, with one missing
    ({(2, 12)}, {(2, 5): 24.0}, [13, 13, 13, 13, 2], "tiles"),
    # no complete row: every row short, the columns fitted to all of them
    ({(0, 3), (1, 0), (2, 12), (2, 6), (3, 1), (3, 2)}, {}, [13, 13, 13, 13], "tiles"),
    # a deck's top indices short and long in every row (pips boxed between columns)
    ({(0, 0), (0, 1), (2, 5), (4, 7), (4, 8), (6, 12)}, {(4, 3): 20.0}, [13] * 8, "cards"),
])
def test_a_row_far_off_takes_its_labels_from_the_layout_s_grid(
        missing: set[tuple[int, int]], shift: dict[tuple[int, int], float],
        counts: list[int], order: str) -> None:
    kind = "tile" if order == "tiles" else "card"
    full = label_layout(_grid(counts, tilt=0.01, kind=kind), order)
    by_box = {tuple(box): label for box, label in zip(full.boxes.tolist(), full.labels,
                                                      strict=True)}
    grid = _grid(counts, tilt=0.01, kind=kind, missing=missing, shift=shift)
    labelled = label_layout(grid, order)
    assert [by_box[tuple(box)] for box in labelled.boxes.tolist()] == list(labelled.labels)
    assert len(labelled) == len(full) - len(missing) - len(shift)


@pytest.mark.parametrize(("grid", "message"), [
    # more than half a row missing: too few to place even on the layout's grid
    (_grid([13, 13, 13, 13, 2], missing={(2, c) for c in range(7)}),
     r"row 3 from the top has 6 tile box\(es\), the order wants 13 \(O1..O13\)"),
    (_grid([13, 13, 13]), "found 3 row"),
])
def test_a_row_that_does_not_fit_is_named(grid: Detections, message: str) -> None:
    with pytest.raises(LayoutError, match=message):
        label_layout(grid, "tiles")


def test_a_deck_may_show_both_corner_indices_of_each_card() -> None:
    once = label_layout(_grid([13] * 4, kind="card"), "cards")
    assert once.labels[:2] == ("AS", "2S") and once.labels[-1] == "KC"
    twice = label_layout(_grid([13] * 8 + [2], kind="card"), "cards")
    assert twice.labels[13:15] == ("AS", "2S") and twice.labels[26] == "AH"
    assert twice.labels[-2:] == ("JK", "JK") and set(twice.kinds) == {"card"}
    assert len(CARD_ORDER) == 5


def test_a_four_index_deck_shows_two_indices_a_card_in_each_row() -> None:
    # each card's top two indices side by side, then its bottom two: 26 boxes a row
    labelled = label_layout(_grid([26] * 8 + [4], width=20, kind="card"), "cards")
    assert labelled.labels[:4] == ("AS", "AS", "2S", "2S")
    assert labelled.labels[26:28] == ("AS", "AS") and labelled.labels[52] == "AH"
    assert labelled.labels[-4:] == ("JK",) * 4 and len(labelled) == 8 * 26 + 4


def test_a_row_holding_a_few_boxes_too_many_leaves_out_the_ones_off_its_columns() -> None:
    grid = _grid([13] * 8, kind="card")
    full = label_layout(grid, "cards")
    # a pip boxed between two indices of row 3, less sure than the indices
    pip = Detections(np.array([[10 + 5.5 * 48, 10 + 2 * 76, 50 + 5.5 * 48, 66 + 2 * 76]]),
                     ("JK",), ("card",), np.array([0.4]))
    labelled = label_layout(Detections.concatenate([grid, pip]), "cards")
    assert labelled.labels == full.labels
    assert np.array_equal(labelled.boxes, full.boxes)
    # a second box on one index: the surer one keeps the label
    twin = Detections(full.boxes[[30]] + 1.0, ("JK",), ("card",), np.array([0.3]))
    again = label_layout(Detections.concatenate([grid, twin]), "cards")
    assert again.labels == full.labels and np.array_equal(again.boxes, full.boxes)


def test_a_custom_order_and_other_kinds_boxes() -> None:
    mixed = Detections.concatenate([_grid([2, 1]), _grid([3], kind="card")])
    labelled = label_layout(mixed, [["R1", "R2"], ["K5"]])
    assert labelled.labels == ("R1", "R2", "K5")
    with pytest.raises(ValueError, match="'AS' is not a tile token"):
        label_layout(mixed, [["R1", "AS"]], kind="tile")
    with pytest.raises(LayoutError, match="order must be one of tiles, cards"):
        label_layout(mixed, "dominoes")
    assert layout_rows(np.zeros((0, 4))) == []


@pytest.fixture(scope="module")
def layout_photo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple[str,
                                                                                  list[int]]]]:
    """The set laid out in the tile order: real tile crops (``CropBank``) pasted in rows
    on a plain table, and where each was pasted."""
    from tabletop.studio.replay import CropBank

    bank = CropBank.load(REALDATA, max_aspect=0.95)
    rng = np.random.default_rng(0)
    height, gap = 90, 40
    image = np.full((5 * (height + gap) + 40, 14 * 80 + 40, 3), (70, 110, 150), np.uint8)
    image = np.clip(image + rng.normal(0, 6, image.shape), 0, 255).astype(np.uint8)
    truth = []
    y = 30
    for row in TILE_ORDER:
        x = 30
        for label in row:
            crops = bank.of(label)
            piece = crops[int(rng.integers(len(crops)))].image
            width = round(piece.shape[1] * height / piece.shape[0])
            image[y : y + height, x : x + width] = cv2.resize(piece, (width, height),
                                                              interpolation=cv2.INTER_AREA)
            truth.append((label, [x, y, x + width, y + height]))
            x += width + 14
        y += height + gap
    path = tmp_path_factory.mktemp("layout") / "layout.jpg"
    cv2.imwrite(str(path), image)
    return path, truth


@needs_realdata
def test_a_layout_photo_is_labelled_by_the_real_detector(
        layout_photo: tuple[Path, list[tuple[str, list[int]]]], tmp_path: Path) -> None:
    from tabletop.studio.adapt import layout_to_jsonl

    path, truth = layout_photo
    out = layout_to_jsonl([path], tmp_path / "labels" / "layout.jsonl", "tiles")
    line = json.loads(out.read_text())
    assert line["image"] == "../layout.jpg" or Path(line["image"]).name == "layout.jpg"
    (photo,) = read_labelled([out])
    _, labelled = photo.read()
    assert len(labelled) == 54
    overlaps = iou_matrix(labelled.boxes, np.array([box for _, box in truth], float))
    right = [labelled.labels[i] == truth[int(overlaps[i].argmax())][0]
             and overlaps[i].max() >= 0.5 for i in range(len(labelled))]
    assert all(right)


@needs_realdata
def test_a_tile_the_reader_drops_is_still_labelled_from_the_finder_s_boxes(
        layout_photo: tuple[Path, list[tuple[str, list[int]]]]) -> None:
    from tabletop.studio.adapt import layout_record

    class ReaderDropsOne(Detector):
        """The shipped model, its reader calling the first tile of the photo nothing."""

        def __call__(self, image: np.ndarray) -> Detections:
            read = super().__call__(image)
            return read[np.arange(len(read)) != int(np.argmin(read.boxes[:, 0]
                                                               + read.boxes[:, 1]))]

    path, _ = layout_photo
    record = layout_record(path, "tiles", ReaderDropsOne())
    assert len(record.detections) == 54
    assert record.detections.labels[:2] == ("K1", "K2")


def test_a_layout_photo_that_does_not_fit_says_so(tmp_path: Path) -> None:
    from tabletop.studio.adapt import layout_record

    blank = _photo(tmp_path / "blank.jpg", size=(640, 480))
    with pytest.raises(LayoutError, match=r"layout photo .*blank.jpg.*found 0 row"):
        layout_record(blank, "tiles")


# --- a real adapt run, through the CLI -----------------------------------------------------------
TWO_PHOTOS = 2


@pytest.fixture(scope="module")
def adapted(tmp_path_factory: pytest.TempPathFactory,
            layout_photo: tuple[Path, list[tuple[str, list[int]]]]
            ) -> Iterator[tuple[Path, Path, dict[str, object]]]:
    """``tabletop adapt`` on two real tile photos and the layout photo, one short epoch:
    the annotations, the model folder and what ``--json`` printed."""
    need("torch")
    if not SHIPPED.is_file() or REALDATA is None:
        pytest.skip("needs the shipped model and the real photos")
    import contextlib
    import io

    from tabletop import cli
    from tabletop.studio.adapt import image_names

    work = tmp_path_factory.mktemp("adapt")
    source = REALDATA / "rummikub-tiles" / "annotations.jsonl"
    names = image_names(source)
    annotations = subset_jsonl(source, names[:TWO_PHOTOS], work / "labels" / "two.jsonl")
    subset_jsonl(source, [names[TWO_PHOTOS]], work / "labels" / "held.jsonl")
    out = work / "model"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        status = cli.main(["adapt", str(annotations), "--out", str(out), "--epochs", "1",
                           "--seed", "3", "--layout", str(layout_photo[0]), "--json"])
    assert status == 0
    yield annotations, out, json.loads(printed.getvalue())


@needs_realdata
def test_the_cli_writes_a_model_folder_and_its_record(
        adapted: tuple[Path, Path, dict[str, object]]) -> None:
    _, out, printed = adapted
    names = {path.name for path in out.iterdir()}
    assert {"tabletop.onnx", "tabletop.reader.onnx", "tabletop.cards.onnx",
            "tabletop.cards.reader.onnx", ADAPTED_INFO} <= names
    info = json.loads((out / ADAPTED_INFO).read_text())
    assert info["base"] == str(SHIPPED) and len(info["photos"]) == TWO_PHOTOS + 1
    assert info["items"]["tile"] > 54 and info["items"]["card"] == 0
    assert info["labels"]["R13"] >= 1 and info["labels"]["JK"] >= 2
    (layout,) = (json.loads(line) for line in (out / "layout.jsonl").read_text().splitlines())
    assert Path(layout["image"]).name == "layout.jpg" and len(layout["detections"]) == 54
    assert info["adapted"][0] == "reader" and "card_reader" not in info["adapted"]
    assert info["epochs"] == 1 and info["date"] and set(info["boxes"]) == {"tile", "card"}
    # a few photos: the reader is part fine-tuned, part the base, by their item count
    assert info["tuned_shares"] == {"reader": round(tuned_share(info["items"]["tile"]), 3)}
    assert 0.0 < info["tuned_shares"]["reader"] < 1.0
    assert info["boxes"]["card"]["pairs"] == 0 and info["boxes"]["card"]["height"] == 1
    assert printed["model"] == str(out / "tabletop.onnx")
    # the card reader (no card in the photos) is the base's; the finders are the base's
    # unless the tiles' boxes were moved
    assert (out / "tabletop.cards.reader.onnx").read_bytes() == (
        SHIPPED.parent / "tabletop.cards.reader.onnx").read_bytes()
    moved = "finder" in info["adapted"]
    assert moved == (info["boxes"]["tile"] != {"width": 1.0, "height": 1.0, "dx": 0.0,
                                               "dy": 0.0, "pairs": info["boxes"]["tile"]["pairs"]})
    for name in ("tabletop.onnx", "tabletop.cards.onnx"):
        assert ((out / name).read_bytes() == (SHIPPED.parent / name).read_bytes()) != moved
    assert (out / "tabletop.reader.onnx").read_bytes() != (
        SHIPPED.parent / "tabletop.reader.onnx").read_bytes()
    assert adapted_model(out) == out / "tabletop.onnx"


@needs_realdata
def test_the_adapted_model_reads_photos(adapted: tuple[Path, Path, dict[str, object]]) -> None:
    annotations, out, _ = adapted
    detector = Detector(adapted_model(out))
    assert detector.reader is not None and detector.card_reader is not None
    held = list(labelled_images(annotations.parent / "held.jsonl"))
    (image, truth), = held
    found = detector(image)
    assert isinstance(found, Detections) and len(found) > 0
    assert evaluate([(truth, found)]).found > 0.5
    # on the photos it was adapted on, identity rises or stays (one item of slack)
    pairs = list(labelled_images(annotations))
    shipped = Detector()
    before = evaluate([(t, shipped(i)) for i, t in pairs])
    after = evaluate([(t, detector(i)) for i, t in pairs])
    assert after.identity >= before.identity - 1 / before.labelled


def _tabletop(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tabletop", *args], capture_output=True,
                          text=True, timeout=scaled(300), check=False,
                          env={**os.environ, "TABLETOP_DATA_DIR": str(data)})


def _held_photo(annotations: Path) -> str:
    """The photo the adapted fixture did not adapt on."""
    return str(annotations.parent / image_names(annotations.parent / "held.jsonl")[0])


@needs_realdata
def test_detect_reads_with_an_adapted_folder_in_the_contracts_form(
        adapted: tuple[Path, Path, dict[str, object]], tmp_path: Path) -> None:
    annotations, out, _ = adapted
    photo = _held_photo(annotations)
    shipped = _tabletop("detect", photo, "--json", data=tmp_path)
    mine = _tabletop("detect", "--adapted", str(out), photo, "--json", data=tmp_path)
    assert shipped.returncode == mine.returncode == 0, mine.stderr
    first, second = json.loads(shipped.stdout), json.loads(mine.stdout)
    assert set(first) == set(second) and second["image"] == first["image"]
    assert set(second["detections"][0]) == set(first["detections"][0])
    assert "adapted model" not in shipped.stderr + mine.stderr


@needs_realdata
def test_the_active_sets_adapted_model_is_used_unless_another_is_named(
        adapted: tuple[Path, Path, dict[str, object]], tmp_path: Path) -> None:
    annotations, out, _ = adapted
    photo = _held_photo(annotations)
    shutil.copytree(out, tmp_path / "models" / "default")
    active = _tabletop("detect", photo, "--json", data=tmp_path)
    assert active.returncode == 0, active.stderr
    assert "reading with the set's adapted model in" in active.stderr
    assert active.stdout == _tabletop("detect", "--adapted", str(out), photo, "--json",
                                      data=tmp_path).stdout
    named = _tabletop("detect", "--model", str(SHIPPED), photo, "--json", data=tmp_path)
    assert named.returncode == 0 and "adapted model" not in named.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--adapted", "{tmp}"], "is not an adapted model folder"),
    (["--adapted", "{tmp}", "--model", "x.onnx"], "give --model or --adapted, not both"),
])
def test_a_bad_adapted_option_is_one_line(args: list[str], message: str,
                                          tmp_path: Path) -> None:
    result = _tabletop("detect", *(a.format(tmp=tmp_path) for a in args), "x.jpg",
                       data=tmp_path / "data")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert message in result.stderr


@needs_realdata
def test_adapting_again_replaces_an_adapted_folder_but_no_other(
        adapted: tuple[Path, Path, dict[str, object]], tmp_path: Path) -> None:
    from tabletop.studio.adapt import adapt

    annotations, out, _ = adapted
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    with pytest.raises(AdaptError, match="holds other files"):
        adapt([annotations], other, epochs=1)
    with pytest.raises(AdaptError, match="epochs must be 1 or more"):
        adapt([annotations], out, epochs=0)
    with pytest.raises(AdaptError, match="is not an adapted model folder"):
        adapt([annotations], tmp_path / "new", base_model=other)
    assert (other / "notes.txt").read_text() == "keep"


def test_the_cli_needs_annotations_or_a_layout(capsys: pytest.CaptureFixture[str]) -> None:
    need("torch")
    from tabletop import cli

    assert cli.main(["adapt"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tabletop: error: give one or more ANNOTATIONS.jsonl files, --layout photos or "
        "--corrections")


@needs_realdata
@pytest.mark.parametrize("torch_installed", [True, False], ids=["--light", "without torch"])
def test_one_layout_photo_teaches_the_set_s_inks_without_torch(
        layout_photo: tuple[Path, list[tuple[str, list[int]]]], tmp_path: Path,
        capsys: pytest.CaptureFixture[str], torch_installed: bool) -> None:
    from tabletop import cli
    from tabletop.studio.replay import CropBank
    from tabletop.vision.palette import SET_MISREAD_SHARE, TablePalette
    from tabletop.vision.reader import READER_CLASSES

    path, _ = layout_photo
    out = tmp_path / "mine"
    with pytest.MonkeyPatch.context() as patch:
        if not torch_installed:
            patch.setitem(sys.modules, "torch", None)
        args = ["adapt", "--layout", str(path), "--out", str(out), "--json"]
        assert cli.main(args + (["--light"] if torch_installed else [])) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["epochs"] == 0 and done["adapted"] == ["inks", "head"]
    assert {colour: row["tiles"] for colour, row in done["set_inks"].items()} == {
        "K": 13, "B": 13, "O": 13, "R": 13}
    assert done["head"]["reader"]["labels"] == {"tile": 53}
    assert {p.name for p in out.iterdir()} >= {"tabletop.onnx", "tabletop.reader.onnx",
                                                "tabletop.palette.json", "tabletop.head.npz",
                                                ADAPTED_INFO}
    detector = Detector(adapted_model(out))
    inks = load_set_inks(set_inks_path(adapted_model(out)))
    assert inks is not None
    # three real tiles of the set on a table too small for the table's own palette, the
    # orange read as red: the set's inks make it orange again
    bank = CropBank.load(REALDATA, max_aspect=0.95)
    labels = ["O7", "R9", "K3"]
    pieces = [cv2.resize(bank.of(label)[1].image, (64, 90)) for label in labels]
    table = np.full((130, 3 * 100 + 20, 3), (70, 110, 150), np.uint8)
    boxes = []
    for i, piece in enumerate(pieces):
        table[20:110, 20 + 100 * i: 84 + 100 * i] = piece
        boxes.append([20 + 100 * i, 20, 84 + 100 * i, 110])
    read = np.zeros((3, len(READER_CLASSES)))
    for row, label in zip(read, ["R7", "R9", "K3"], strict=True):
        for colour in "KBOR":
            row[READER_CLASSES.index(colour + label[1:])] = 0.04
        row[READER_CLASSES.index(label)] = 0.85
        row[-1] = 1.0 - row.sum()
    # the shipped reader reads this set's inks itself, so its inks judge no colour, and
    # the detector does not measure inks for them ...
    assert inks.misread is not None and not inks.judged.any()
    assert detector.palette is None
    assert all(row["misread"] < SET_MISREAD_SHARE for row in done["set_inks"].values())
    assert np.array_equal(TablePalette(set_inks=inks).update(table, np.array(boxes, float),
                                                             read), read)
    # ... but where it had named the layout's oranges red, the orange is orange again
    misread = dataclasses.replace(inks, misread=(0.0, 0.0, 1.0, 0.0))
    changed = TablePalette(set_inks=misread).update(table, np.array(boxes, float), read)
    assert [READER_CLASSES[i] for i in changed.argmax(axis=1)] == labels
    assert np.array_equal(TablePalette().update(table, np.array(boxes, float), read), read)


def test_a_light_adapt_needs_tiles_of_two_colours_or_a_whole_set(tmp_path: Path) -> None:
    from tabletop.studio.adapt import adapt_light

    _photo(tmp_path / "a.jpg")
    annotations = tmp_path / "a.jsonl"
    annotations.write_text(_line("a.jpg", [R5]))
    with pytest.raises(AdaptError, match="fewer than two colours and fewer than 40 labels"):
        adapt_light([annotations], tmp_path / "m")
    assert not (tmp_path / "m").exists()


def _tabletop_without(blocked: tuple[str, ...], *args: str,
                      data: Path) -> subprocess.CompletedProcess[str]:
    """``tabletop ARGS`` in a fresh interpreter where importing any of ``blocked`` fails as
    for a module that is not installed (the default install)."""
    code = (f"import sys; sys.modules.update(dict.fromkeys({list(blocked)!r})); "
            f"from tabletop.cli import main; sys.exit(main({list(args)!r}))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=scaled(300), check=False,
                          env={**os.environ, "TABLETOP_DATA_DIR": str(data)})


def _right(printed: str, truth: Detections) -> int:
    """Of ``truth``'s items, how many ``detect --json`` printed with their label."""
    found = json.loads(printed)["detections"]
    if not found:
        return 0
    overlaps = iou_matrix(truth.boxes, np.array([item["box"] for item in found], float))
    return sum(overlaps[i].max() >= 0.5 and found[int(overlaps[i].argmax())]["label"] == label
               for i, label in enumerate(truth.labels))


def test_a_layout_photo_adapts_the_reader_without_torch_or_onnx(tmp_path: Path) -> None:
    """``tabletop adapt --layout --light`` where neither torch nor onnx imports: a head and
    the inks beside the base's files, which ``detect`` then reads a table of the set with;
    the same folder without its head still reads."""
    from tabletop.studio.synth.scene import RenderOptions, render_layout, render_scene
    from tests.vision.test_reader_head import MISREAD_INKS, SET_SEED, set_style

    style = set_style(MISREAD_INKS["green for orange"])
    (tmp_path / "layout.jpg").write_bytes(render_layout(style, SET_SEED).encoded)
    table = render_scene(SET_SEED + 1, 1280, 720, "tiles", RenderOptions(tile_style=style))
    (tmp_path / "table.jpg").write_bytes(table.encoded)
    out = tmp_path / "mine"
    blocked = ("torch", "onnx")
    adapting = _tabletop_without(blocked, "adapt", "--layout", str(tmp_path / "layout.jpg"),
                                 "--light", "--out", str(out), data=tmp_path / "data")
    assert adapting.returncode == 0, adapting.stderr
    assert "reader head: 53 tile labels from 1 photo(s)" in adapting.stderr
    assert "learnt the set's inks and a reader head from 1 photo(s)" in adapting.stdout
    assert (out / "tabletop.head.npz").is_file() and (out / "tabletop.palette.json").is_file()
    photo = str(tmp_path / "table.jpg")
    shipped = _tabletop_without(blocked, "detect", "--model", str(SHIPPED), photo, "--json",
                                data=tmp_path / "data")
    mine = _tabletop_without(blocked, "detect", "--adapted", str(out), photo, "--json",
                             data=tmp_path / "data")
    assert shipped.returncode == mine.returncode == 0, mine.stderr
    before, after = _right(shipped.stdout, table.detections), _right(mine.stdout,
                                                                     table.detections)
    assert after >= before + 3, (before, after, len(table.detections))
    (out / "tabletop.head.npz").unlink()
    headless = _tabletop_without(blocked, "detect", "--adapted", str(out), photo, "--json",
                                 data=tmp_path / "data")
    assert headless.returncode == 0, headless.stderr
    # the inks alone: still a reading, and another one than with the head
    assert _right(headless.stdout, table.detections) >= before - 2
    assert ([item["confidence"] for item in json.loads(headless.stdout)["detections"]]
            != [item["confidence"] for item in json.loads(mine.stdout)["detections"]])


def test_without_torch_the_cli_names_the_extra(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    from tabletop import cli

    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "torch", None)  # import torch raises ModuleNotFoundError
        status = cli.main(["adapt", str(tmp_path / "a.jsonl"), "--epochs", "2",
                           "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err.strip()
    assert status == 2
    assert err.splitlines() == [err]
    assert "needs the 'train' extra" in err and "tabletop[train]" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(("items", "low", "high"), [
    (0, 0.0, 0.0), (15, 0.1, 0.3), (135, 0.6, 0.8), (10_000, 0.99, 1.0)])
def test_the_more_items_the_more_the_fine_tuned_reader_is_trusted(
        items: int, low: float, high: float) -> None:
    assert low <= tuned_share(items) <= high
    assert tuned_share(items) <= tuned_share(items + 1)


@pytest.mark.parametrize("share", [0.0, 1.0])
def test_the_exported_reader_mixes_the_fine_tuned_and_the_base_weights(
        share: float, tmp_path: Path) -> None:
    need("torch")
    from tabletop.studio.adapt import fine_tune
    from tabletop.vision.reader import Reader

    base = SHIPPED.with_name("tabletop.reader.onnx")
    generator = np.random.default_rng(4)
    images = generator.integers(0, 255, (40, 96, 96, 3), dtype=np.uint8)
    labels = np.full(40, class_id("R5", "tile"), np.int64)  # every crop an R5: a big pull
    out, steps = fine_tune(base, images, labels, tmp_path / "r.onnx", epochs=1,
                           tuned_share=share)
    assert steps >= 25
    crops = np.ascontiguousarray(images[:8, 16:80, 16:80])  # the reader's 64-pixel input
    before = Reader(base).logits(crops)
    after = Reader(out).logits(crops)
    if share == 0.0:
        assert np.allclose(before, after, atol=1e-3)  # the base reader, exactly
    else:
        assert not np.allclose(before, after, atol=1e-3)
