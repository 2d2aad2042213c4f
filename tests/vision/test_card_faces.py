"""Cards read from their whole face (vision.card_faces): the face finder, the cut, and
how a face's reading joins the index's."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.studio.synth.card_faces import laid_out
from tabletop.studio.synth.cards import random_design, render_card
from tabletop.vision.card_faces import (
    FACE_ALONE,
    FACE_HEIGHT,
    FACE_WIDTH,
    face_crop,
    find_faces,
    index_box,
    inside,
    join_faces,
    order_corners,
)
from tabletop.vision.detections import Detections
from tabletop.vision.detector import (
    SHIPPED_MODELS,
    Detector,
    DetectorSettings,
    ModelError,
    card_finder_path,
    card_reader_path,
    face_reader_path,
    reader_path,
)
from tabletop.vision.labels import class_id
from tabletop.vision.reader import NONE_INDEX, READER_CLASSES

RECTANGLE = np.array([[10.0, 20.0], [70.0, 20.0], [70.0, 110.0], [10.0, 110.0]])


def turned(points: np.ndarray, degrees: float) -> np.ndarray:
    angle = np.radians(degrees)
    rotation = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return (points - points.mean(axis=0)) @ rotation.T + 200.0


@pytest.mark.parametrize(("order", "degrees"), [
    ((0, 1, 2, 3), 0.0),
    ((2, 0, 3, 1), 0.0),
    ((3, 2, 1, 0), 30.0),
    ((1, 3, 0, 2), 90.0),
    ((0, 2, 1, 3), 200.0),
])
def test_corners_come_clockwise_with_a_short_side_first(order: tuple[int, ...],
                                                        degrees: float) -> None:
    points = turned(RECTANGLE, degrees)
    ordered = order_corners(points[list(order)])
    sides = np.linalg.norm(ordered - np.roll(ordered, -1, axis=0), axis=1)
    assert sides[0] == pytest.approx(60.0) and sides[1] == pytest.approx(90.0)
    cross = np.cross(ordered[1] - ordered[0], ordered[2] - ordered[1])
    assert cross > 0  # clockwise on screen, where y grows downwards
    assert sorted(map(tuple, ordered.round(6))) == sorted(map(tuple, points.round(6)))


def test_a_face_is_cut_upright_whichever_way_the_card_lies() -> None:
    design = random_design(np.random.default_rng(3))
    card = render_card("7H", design, 180)
    h, w = card.alpha.shape
    canvas = np.full((400, 400, 3), 60, np.uint8)
    canvas[100 : 100 + h, 150 : 150 + w] = (card.image + 60 * (1 - card.alpha[..., None])
                                            ).clip(0, 255).astype(np.uint8)
    # the card's outer edges, pixel centres at whole numbers
    quad = np.array([[150, 100], [150 + w, 100], [150 + w, 100 + h], [150, 100 + h]], float) - 0.5
    for turn in (0, 1, 2, 3):
        picture = np.ascontiguousarray(np.rot90(canvas, turn))
        corners = np.stack([_rot90_point(p, turn, canvas.shape) for p in quad])
        crop = face_crop(picture, corners)
        assert crop.shape == (FACE_HEIGHT, FACE_WIDTH, 3)
        upright = face_crop(canvas, quad)
        # the same face, upright or turned round
        same = min(np.abs(crop.astype(int) - upright).mean(),
                   np.abs(crop[::-1, ::-1].astype(int) - upright).mean())
        assert same < 1.0


def _rot90_point(point: np.ndarray, turn: int, shape: tuple[int, ...]) -> np.ndarray:
    x, y = float(point[0]), float(point[1])
    h, w = shape[:2]
    for _ in range(turn):  # np.rot90 turns counter-clockwise: (x, y) -> (y, w - 1 - x)
        x, y, h, w = y, w - 1 - x, w, h
    return np.array([x, y])


@pytest.mark.parametrize("seed", [930900, 930901, 930902])
def test_the_faces_of_cards_lying_apart_are_found_where_they_lie(seed: int) -> None:
    image, cards = laid_out(seed)
    faces = find_faces(image)
    assert len(faces) == len(cards)
    for card in cards:
        height = float(np.linalg.norm(card.outline[2] - card.outline[1]))
        distances = [np.abs(order_corners(card.outline)[None] - np.roll(face, k, axis=0)[None]
                            ).max() for face in faces for k in (0, 2)]
        assert min(distances) < 0.06 * height


def test_a_bare_table_has_no_faces() -> None:
    rng = np.random.default_rng(5)
    table = (rng.normal(110, 6, (720, 1280, 3))).clip(0, 255).astype(np.uint8)
    table = cv2.GaussianBlur(table, (0, 0), 2)
    assert find_faces(table) == []


def row(pairs: dict[str, float]) -> np.ndarray:
    probabilities = np.zeros(len(READER_CLASSES))
    for label, p in pairs.items():
        probabilities[NONE_INDEX if label == "none" else class_id(label, "card")] = p
    return probabilities


FACE = np.array([[100.0, 100.0], [200.0, 100.0], [200.0, 250.0], [100.0, 250.0]])
INDEX_ON_FACE = [105.0, 105.0, 125.0, 140.0]


@pytest.mark.parametrize(("index", "face", "expected"), [
    # the index torn between the black suits, the face sure of its pips: the face decides
    ({"QS": 0.45, "QC": 0.5, "none": 0.05}, {"QS": 0.9, "KS": 0.1}, "QS"),
    # a face read as no card (a tile, a card back) changes nothing
    ({"QS": 0.45, "QC": 0.5, "none": 0.05}, {"QS": 0.3, "none": 0.7}, "QC"),
    # a sure index is not overturned by a face that gives its label a little
    ({"7H": 0.95, "none": 0.05}, {"8H": 0.8, "7H": 0.2}, "7H"),
])
def test_an_index_on_a_face_is_read_with_the_face(index: dict[str, float],
                                                   face: dict[str, float],
                                                   expected: str) -> None:
    found = Detections(np.array([INDEX_ON_FACE]), ("JK",), ("card",), np.array([0.9]))
    before = row(index)
    joined, probabilities = join_faces(found, before[None], [FACE], row(face)[None])
    assert len(joined) == 1
    best = READER_CLASSES[int(np.argmax(probabilities[0][:NONE_INDEX]))]
    assert best == expected
    # whether the index is kept (its card mass, its none) does not change
    assert probabilities[0][NONE_INDEX] == pytest.approx(before[NONE_INDEX])
    assert probabilities[0].sum() == pytest.approx(before.sum())


@pytest.mark.parametrize(("face", "added"), [
    ({"9D": 0.9, "none": 0.1}, "9D"),
    ({"9D": FACE_ALONE - 0.1, "8D": 0.45}, None),  # not sure enough to stand alone
    ({"none": 0.9, "9D": 0.1}, None),
])
def test_a_face_with_no_box_on_it_is_named_at_its_index_corner(face: dict[str, float],
                                                               added: str | None) -> None:
    elsewhere = Detections(np.array([[500.0, 500.0, 520.0, 530.0]]), ("JK",), ("card",),
                           np.array([0.9]))
    joined, probabilities = join_faces(elsewhere, row({"2C": 0.9})[None], [FACE],
                                       row(face)[None])
    if added is None:
        assert len(joined) == 1
        return
    assert len(joined) == 2 and joined.kinds[1] == "card"
    assert READER_CLASSES[int(np.argmax(probabilities[1]))] == added
    box = joined.boxes[1]
    assert inside(FACE, ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2))
    assert np.allclose(box, index_box(FACE))


def test_a_face_with_indices_away_from_its_corners_is_several_cards_and_left_alone() -> None:
    # two boxes in the middle of the quad: the indices of cards lying across it
    middle = Detections(np.array([[140.0, 150.0, 160.0, 180.0], [140.0, 190.0, 160.0, 220.0]]),
                        ("JK", "JK"), ("card", "card"), np.array([0.9, 0.9]))
    before = np.stack([row({"QS": 0.45, "QC": 0.5}), row({"4H": 0.9})])
    joined, probabilities = join_faces(middle, before, [FACE], row({"QS": 0.95})[None])
    assert len(joined) == 2
    assert np.array_equal(probabilities, before)


def test_a_tile_on_a_face_keeps_its_reading_and_no_card_is_added() -> None:
    tile_row = np.zeros(len(READER_CLASSES))
    tile_row[0] = 0.9
    found = Detections(np.array([[110.0, 110.0, 190.0, 240.0]]), ("JK",), ("tile",),
                       np.array([0.9]))
    joined, probabilities = join_faces(found, tile_row[None], [FACE], row({"5S": 0.9})[None])
    assert len(joined) == 1
    assert np.array_equal(probabilities[0], tile_row)


# --- the detector's face stage, with the shipped files -----------------------------------
FINDER = SHIPPED_MODELS / "tabletop.onnx"


def copied_model(tmp_path: Path, faces: bytes | None) -> Path:
    """The shipped finder and readers copied to ``tmp_path``; ``faces`` the face reader's
    bytes (None: no face reader)."""
    finder = tmp_path / "model.onnx"
    for source, target in ((FINDER, finder), (reader_path(FINDER), reader_path(finder)),
                           (card_finder_path(FINDER), card_finder_path(finder)),
                           (card_reader_path(FINDER), card_reader_path(finder))):
        shutil.copyfile(source, target)
    if faces is not None:
        face_reader_path(finder).write_bytes(faces)
    return finder


@pytest.mark.parametrize(("present", "way", "used"), [
    (True, None, True), (True, "on", True), (True, "off", False), (False, "on", False)])
def test_the_face_reader_beside_the_finder_is_used_unless_turned_off(
        tmp_path: Path, present: bool, way: str | None, used: bool) -> None:
    faces = face_reader_path(FINDER).read_bytes() if present else None
    settings = DetectorSettings() if way is None else DetectorSettings(faces=way)
    detector = Detector(copied_model(tmp_path, faces), settings)
    assert (detector.face_reader is not None) == used


@pytest.mark.parametrize("way", ["yes", "", "ON"])
def test_an_unknown_faces_way_is_refused_quoting_it(way: str) -> None:
    with pytest.raises(ValueError, match=f"not {way!r}"):
        DetectorSettings(faces=way)


def test_a_corrupt_face_reader_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match=r"cannot load face reader .*model\.faces\.onnx"):
        Detector(copied_model(tmp_path, b"not an onnx graph"))


def hidden_index_table() -> tuple[np.ndarray, np.ndarray, str]:
    """A table with a 5 of hearts whose indices are painted over (only its pips tell it)
    beside a whole 9 of clubs: the picture, the hidden card's outline, its label."""
    rng = np.random.default_rng(11)
    design = random_design(rng)
    table = np.full((720, 1280, 3), (40, 70, 120), np.float32)
    outline = None
    for label, x, hide in (("5H", 400, True), ("9C", 800, False)):
        card = render_card(label, design, 300)
        image, alpha = card.image.copy(), card.alpha
        if hide:
            for corners in card.indices:
                x1, y1 = np.floor(corners.min(axis=0)).astype(int) - 2
                x2, y2 = np.ceil(corners.max(axis=0)).astype(int) + 2
                image[max(0, y1) : y2, max(0, x1) : x2] = design.paper
            image *= alpha[..., None]
        h, w = alpha.shape
        region = table[200 : 200 + h, x : x + w]
        region *= 1 - alpha[..., None]
        region += image
        if hide:
            outline = np.array([[x, 200], [x + w, 200], [x + w, 200 + h], [x, 200 + h]], float)
    assert outline is not None
    return table.clip(0, 255).astype(np.uint8), outline, "5H"


def test_a_card_whose_indices_are_hidden_is_read_from_its_face() -> None:
    image, outline, label = hidden_index_table()
    read = {}
    for way in ("off", "on"):
        found = Detector(FINDER, DetectorSettings(faces=way))(image)
        centres = (found.boxes[:, :2] + found.boxes[:, 2:]) / 2
        read[way] = [found.labels[i] for i in range(len(found))
                     if found.kinds[i] == "card" and inside(outline, centres[i])]
        assert "9C" in found.labels  # the whole card is read either way
    assert label not in read["off"]
    assert label in read["on"]


def test_a_tile_table_is_read_alike_with_and_without_faces() -> None:
    from tabletop.studio.synth.dataset import image_seed
    from tabletop.studio.synth.scene import render_scene

    rendered = render_scene(image_seed(1697, 3), 1280, 720, "tiles")
    image = cv2.imdecode(np.frombuffer(rendered.encoded, np.uint8), cv2.IMREAD_COLOR)
    off = Detector(FINDER, DetectorSettings(faces="off"))(image)
    on = Detector(FINDER, DetectorSettings(faces="on"))(image)
    assert len(off) > 10
    assert on.labels == off.labels and np.array_equal(on.boxes, off.boxes)


@pytest.mark.parametrize(("way", "read"), [("on", True), ("off", False)])
def test_detect_reads_a_card_from_its_face_unless_told_not_to(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], way: str, read: bool) -> None:
    from tabletop.cli import main

    image, outline, label = hidden_index_table()
    photo = tmp_path / "table.png"
    cv2.imwrite(str(photo), image)
    assert main(["detect", str(photo), "--json", "--faces", way]) == 0
    detections = json.loads(capsys.readouterr().out)["detections"]
    on_card = [d["label"] for d in detections
               if inside(outline, ((d["box"][0] + d["box"][2]) / 2,
                                   (d["box"][1] + d["box"][3]) / 2))]
    assert (label in on_card) == read
    assert "9C" in [d["label"] for d in detections]


def test_a_look_again_at_one_spot_does_not_search_the_frame_for_faces(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import tabletop.vision.detector as detector_module

    image, _, _ = hidden_index_table()
    detector = Detector(FINDER)
    searched: list[int] = []

    def counting(frame: np.ndarray) -> list[np.ndarray]:
        searched.append(1)
        return find_faces(frame)

    monkeypatch.setattr(detector_module, "find_faces", counting)
    detector(image)
    assert searched == [1]  # the whole frame's reading looks for faces once
    # the spot of the 9 of clubs' top left index: the table asks about one item
    detector.look_again(image, np.array([[805.0, 205.0, 830.0, 245.0]]), ["card"])
    assert searched == [1]
