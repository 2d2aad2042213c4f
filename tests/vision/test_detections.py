"""Detections: the validated value passed between the vision stages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tabletop.vision.detections import (
    Detections,
    DetectionsError,
    ImageDetections,
    iou_matrix,
    overlap_of_smaller,
    read_jsonl,
    without_duplicates,
    without_nested,
)
from tabletop.vision.labels import CLASS_NAMES, class_id, label_of


def make(boxes: Any, labels: Any, kinds: Any, conf: Any, tracks: Any = None) -> Detections:
    return Detections(boxes, labels, kinds, conf, tracks)


GOOD = ([[0, 0, 10, 10]], ("R7",), ("tile",), [0.9])

INVALID = [
    # (what is wrong, boxes, labels, kinds, confidences, track ids, message fragment)
    ("x1 == x2", [[5, 0, 5, 10]], ("R7",), ("tile",), [0.9], None, "x1 < x2"),
    ("y2 < y1", [[0, 10, 5, 0]], ("R7",), ("tile",), [0.9], None, "y1 < y2"),
    ("NaN box", [[0, 0, float("nan"), 1]], ("R7",), ("tile",), [0.9], None, "not finite"),
    ("3 numbers", [[0, 0, 1]], ("R7",), ("tile",), [0.9], None, "shape"),
    ("label count", [[0, 0, 1, 1]], ("R7", "R8"), ("tile",), [0.9], None, "labels"),
    ("unknown tile", [[0, 0, 1, 1]], ("R14",), ("tile",), [0.9], None, "'R14'"),
    ("card token as tile", [[0, 0, 1, 1]], ("10H",), ("tile",), [0.9], None, "'10H'"),
    ("tile token as card", [[0, 0, 1, 1]], ("K13",), ("card",), [0.9], None, "'K13'"),
    ("1 instead of A", [[0, 0, 1, 1]], ("1S",), ("card",), [0.9], None, "'1S'"),
    ("T for ten", [[0, 0, 1, 1]], ("TH",), ("card",), [0.9], None, "'TH'"),
    ("bad kind", [[0, 0, 1, 1]], ("R7",), ("domino",), [0.9], None, "'domino'"),
    ("confidence > 1", [[0, 0, 1, 1]], ("R7",), ("tile",), [1.5], None, "1.5"),
    ("negative confidence", [[0, 0, 1, 1]], ("R7",), ("tile",), [-0.1], None, "-0.1"),
    ("confidence count", [[0, 0, 1, 1]], ("R7",), ("tile",), [0.9, 0.8], None, "confidences"),
    ("float track id", [[0, 0, 1, 1]], ("R7",), ("tile",), [0.9], [1.5], "track_ids"),
    ("track id count", [[0, 0, 1, 1]], ("R7",), ("tile",), [0.9], [1, 2], "track_ids"),
]


@pytest.mark.parametrize(("why", "boxes", "labels", "kinds", "conf", "tracks", "message"),
                         INVALID, ids=[row[0] for row in INVALID])
def test_invalid_detections_are_refused(why: str, boxes: Any, labels: Any, kinds: Any,
                                        conf: Any, tracks: Any, message: str) -> None:
    with pytest.raises(DetectionsError, match=message.replace("(", r"\(").replace("[", r"\[")):
        make(boxes, labels, kinds, conf, tracks)


@pytest.mark.parametrize(("given", "kind", "stored"), [
    ("r7", "tile", "R7"), ("k13", "tile", "K13"), ("o1", "tile", "O1"), ("jk", "tile", "JK"),
    ("10h", "card", "10H"), ("as", "card", "AS"), ("Qd", "card", "QD"), ("JK", "card", "JK"),
])
def test_labels_are_normalised_to_contract_tokens(given: str, kind: str, stored: str) -> None:
    assert make([[0, 0, 1, 1]], (given,), (kind,), [1.0]).labels == (stored,)


def test_empty_and_indexing() -> None:
    empty = Detections.empty()
    assert len(empty) == 0 and empty.boxes.shape == (0, 4)
    d = make([[0, 0, 10, 10], [5, 5, 20, 20], [1, 1, 2, 2]], ("R7", "AS", "JK"),
             ("tile", "card", "card"), [0.9, 0.5, 0.2], [4, 5, 6])
    assert d[1].labels == ("AS",) and d[-1].labels == ("JK",)
    assert d[1:].labels == ("AS", "JK")
    assert d[[2, 0]].labels == ("JK", "R7")
    assert d.filter([True, False, True]).track_ids.tolist() == [4, 6]
    assert d.with_confidence_at_least(0.5).labels == ("R7", "AS")
    assert d.of_kind("card").labels == ("AS", "JK")
    assert d.areas.tolist() == [100.0, 225.0, 1.0]
    with pytest.raises(IndexError):
        d[3]
    with pytest.raises(ValueError):
        d.boxes[0, 0] = 3.0  # frozen arrays: stages cannot change each other's input


def test_clipped_and_scaled() -> None:
    d = make([[-5, -5, 10, 10], [50, 50, 60, 60]], ("R7", "B2"), ("tile", "tile"), [1, 1])
    clipped = d.clipped(40, 40)
    assert clipped.labels == ("R7",)
    assert clipped.boxes.tolist() == [[0, 0, 10, 10]]
    assert d.scaled(2, 0.5).boxes[1].tolist() == [100, 25, 120, 30]


def test_contract_json_round_trip(tmp_path: Path) -> None:
    # CONTRACT.md: {"image", "width", "height", "detections": [{"label", "kind", "box",
    # "confidence"}]}
    line = {"image": "a.jpg", "width": 1000, "height": 750, "detections": [
        {"label": "R7", "kind": "tile", "box": [1.0, 2.0, 30.5, 40.0], "confidence": 0.97},
        {"label": "10H", "kind": "card", "box": [5.0, 5.0, 9.0, 20.0], "confidence": 0.5},
    ]}
    record = ImageDetections.from_json(line)
    assert record.to_json() == line
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps(line) + "\n\n" + json.dumps({**line, "detections": []}) + "\n")
    records = read_jsonl(path)
    assert [len(r.detections) for r in records] == [2, 0]
    # ground truth lines have no confidence: read as 1.0, and the kind of a non-joker
    # token may be left out
    truth = ImageDetections.from_json({"image": "b.jpg", "width": 10, "height": 10,
                                       "detections": [{"label": "QS", "box": [0, 0, 1, 1]}]})
    assert truth.detections.kinds == ("card",) and truth.detections.confidences.tolist() == [1]


@pytest.mark.parametrize(("line", "message"), [
    ({"image": "a", "width": 0, "height": 5, "detections": []}, "width"),
    ({"image": "a", "width": 5, "height": 5}, "'detections'"),
    ({"image": "a", "width": 5, "height": 5, "detections": [{"label": "JK", "box": [0, 0, 1, 1]}]},
     "both a tile and a card"),
    ({"image": "a", "width": 5, "height": 5, "detections": [], "box_meaning": "corner"},
     "box_meaning must be one of"),
    ({"image": "a", "width": 5, "height": 5, "detections": [], "labels": ["AS"]},
     "a label list needs 'kind'"),
    ({"image": "a", "width": 5, "height": 5, "detections": [], "kind": "card",
      "labels": ["AS", "R7"]}, "'R7' is not a card token"),
    ({"image": "a", "width": 5, "height": 5, "kind": "card", "labels": ["AS"],
      "detections": [{"label": "AS", "box": [0, 0, 1, 1]}]}, "both 'labels' and boxes"),
    ({"image": "a", "width": 5, "height": 5, "kind": "card", "labels": "AS",
      "detections": []}, "'labels' must be a list"),
])
def test_bad_json_lines(line: dict[str, Any], message: str) -> None:
    with pytest.raises(DetectionsError, match=message):
        ImageDetections.from_json(line)


@pytest.mark.parametrize(("line", "meaning"), [
    ({"image": "a.jpg", "width": 9, "height": 9, "detections": []}, "item"),
    ({"image": "a.jpg", "width": 9, "height": 9, "kind": "card", "box_meaning": "whole card",
      "detections": [{"label": "AS", "kind": "card", "box": [0.0, 0.0, 5.0, 8.0]}]},
     "whole card"),
    ({"image": "a.jpg", "width": 9, "height": 9, "kind": "card", "labels": ["AS", "10H"],
      "detections": []}, "labels"),
])
def test_how_a_line_labels_its_items_is_kept(line: dict[str, Any], meaning: str) -> None:
    record = ImageDetections.from_json(line)
    assert record.meaning == meaning
    assert record.to_json(with_confidence=False) == line


def test_bad_jsonl_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"image": "a", "width": 5, "height": 5, "detections": []}\nnot json\n')
    with pytest.raises(DetectionsError, match=r"bad.jsonl:2"):
        read_jsonl(path)


def test_iou_by_hand() -> None:
    a = np.array([[0, 0, 10, 10]])
    b = np.array([[0, 0, 10, 10], [5, 0, 15, 10], [2, 0, 12, 10], [20, 20, 30, 30]])
    # overlaps 100/100, 50/150, 80/120 and none
    assert iou_matrix(a, b)[0].tolist() == pytest.approx([1.0, 1 / 3, 2 / 3, 0.0])


def test_overlap_of_smaller_by_hand() -> None:
    inside = np.array([[0, 0, 10, 10]])
    boxes = np.array([[2, 2, 6, 6], [5, 0, 15, 10], [20, 20, 30, 30], [3, 3, 3, 8]])
    assert overlap_of_smaller(inside, boxes).tolist() == [[1.0, 0.5, 0.0, 0.0]]


# (why, boxes, labels, confidences, the positions kept)
DUPLICATES = [
    ("a shifted second box of one tile (IoU 0.52, NMS kept it)",
     [[97, 84, 118, 98], [95, 87, 116, 102]], ["B2", "B2"], [0.77, 0.27], [0]),
    ("the more confident one stays whatever the order",
     [[95, 87, 116, 102], [97, 84, 118, 98]], ["B2", "B2"], [0.27, 0.77], [1]),
    ("same place, different labels: both stay (the tracker and rules judge them)",
     [[97, 84, 118, 98], [95, 87, 116, 102]], ["B2", "B3"], [0.77, 0.27], [0, 1]),
    ("two copies side by side in a rack",
     [[0, 0, 20, 28], [21, 0, 41, 28]], ["R5", "R5"], [0.9, 0.8], [0, 1]),
    ("slightly overlapping copies (under the threshold)",
     [[0, 0, 20, 28], [10, 0, 30, 28]], ["R5", "R5"], [0.9, 0.8], [0, 1]),
    ("a partial box inside the whole one",
     [[0, 0, 20, 28], [2, 10, 18, 27]], ["K13", "K13"], [0.6, 0.9], [1]),
    ("a chain: the middle one goes, the outer two do not overlap each other",
     [[0, 0, 20, 28], [4, 0, 24, 28], [16, 0, 36, 28]], ["O1", "O1", "O1"], [0.9, 0.5, 0.8],
     [0, 2]),
]


@pytest.mark.parametrize(("why", "boxes", "labels", "conf", "kept"), DUPLICATES,
                         ids=[d[0] for d in DUPLICATES])
def test_same_label_duplicates_are_merged(why: str, boxes: Any, labels: list[str],
                                          conf: list[float], kept: list[int]) -> None:
    found = make(boxes, labels, ["tile"] * len(labels), conf)
    result = without_duplicates(found)
    assert result.boxes.tolist() == found.boxes[kept].tolist()
    assert list(result.labels) == [labels[k] for k in kept]


@pytest.mark.parametrize("overlap", [0.0, -0.1, 1.5])
def test_duplicate_overlap_must_be_a_share(overlap: float) -> None:
    with pytest.raises(ValueError, match="overlap must be in"):
        without_duplicates(make(*GOOD), overlap)


# (why, boxes, labels, kinds, confidences, the positions kept)
NESTED = [
    ("the rank alone boxed inside its whole index, read as another card",
     [[140, 553, 159, 584], [141, 560, 154, 580]], ["QH", "KH"], ["card", "card"], [0.46, 0.31],
     [0]),
    ("the more confident stays whatever the order",
     [[141, 560, 154, 580], [140, 553, 159, 584]], ["KH", "QH"], ["card", "card"], [0.31, 0.46],
     [1]),
    ("two indices overlapping a little in a tight fan both stay",
     [[0, 0, 10, 25], [6, 2, 16, 27]], ["5S", "6S"], ["card", "card"], [0.8, 0.7], [0, 1]),
    ("tiles are left to without_duplicates",
     [[0, 0, 20, 28], [2, 2, 18, 26]], ["R5", "R6"], ["tile", "tile"], [0.9, 0.5], [0, 1]),
    ("a tile and a card index in one place are not one index",
     [[0, 0, 20, 28], [2, 2, 18, 26]], ["R5", "5H"], ["tile", "card"], [0.9, 0.5], [0, 1]),
    ("the same label nested goes too",
     [[0, 0, 10, 25], [1, 1, 9, 20]], ["7D", "7D"], ["card", "card"], [0.4, 0.6], [1]),
]


@pytest.mark.parametrize(("why", "boxes", "labels", "kinds", "conf", "kept"), NESTED,
                         ids=[d[0] for d in NESTED])
def test_nested_card_indices_are_one_index(why: str, boxes: Any, labels: list[str],
                                           kinds: list[str], conf: list[float],
                                           kept: list[int]) -> None:
    found = make(boxes, labels, kinds, conf)
    result = without_nested(found)
    assert result.boxes.tolist() == found.boxes[kept].tolist()
    assert list(result.labels) == [labels[k] for k in kept]


@pytest.mark.parametrize("overlap", [0.0, 1.01])
def test_nested_overlap_must_be_a_share(overlap: float) -> None:
    with pytest.raises(ValueError, match="overlap must be in"):
        without_nested(make(*GOOD), overlap=overlap)


def test_class_ids_cover_both_jokers() -> None:
    assert len(CLASS_NAMES) == 53 + 53 == len(set(CLASS_NAMES))
    assert label_of(class_id("JK", "tile")) == ("JK", "tile")
    assert label_of(class_id("JK", "card")) == ("JK", "card")
    assert label_of(class_id("10h", "card")) == ("10H", "card")
    for i in range(len(CLASS_NAMES)):
        assert class_id(*label_of(i)) == i


# --- alternatives: the reader's distribution over each item's labels -------------------

ALTERNATIVES = {
    "R6": {"R6": 0.55, "R9": 0.4, "B6": 0.02, "none": 0.01},
    "AS": {"AS": 0.7, "4S": 0.2, "none": 0.1},
    "JK": {"JK": 0.9, "QS": 0.01, "none": 0.05},
}


def read_items() -> Detections:
    """Three read items, each label unique so an item can be found after any operation."""
    return Detections([[0, 0, 10, 10], [5, 5, 20, 20], [1, 1, 2, 2]], ("R6", "AS", "JK"),
                      ("tile", "card", "card"), [0.9, 0.5, 0.2], [4, 5, 6],
                      alternatives=tuple(ALTERNATIVES[label] for label in ("R6", "AS", "JK")))


OPERATIONS = [
    ("an index", lambda d: d[1], ["AS"]),
    ("a negative index", lambda d: d[-1], ["JK"]),
    ("a slice", lambda d: d[1:], ["AS", "JK"]),
    ("positions", lambda d: d[[2, 0]], ["JK", "R6"]),
    ("a mask", lambda d: d.filter([True, False, True]), ["R6", "JK"]),
    ("a confidence threshold", lambda d: d.with_confidence_at_least(0.5), ["R6", "AS"]),
    ("a kind", lambda d: d.of_kind("card"), ["AS", "JK"]),
    ("clipping (a box cut away)", lambda d: d.clipped(4, 4), ["R6", "JK"]),
    ("scaling", lambda d: d.scaled(2, 0.5), ["R6", "AS", "JK"]),
    ("new track ids", lambda d: d.with_track_ids([7, 8, 9]), ["R6", "AS", "JK"]),
    ("concatenating", lambda d: Detections.concatenate([d[2], Detections.empty(), d[:2]]),
     ["JK", "R6", "AS"]),
    ("the JSON items", lambda d: Detections.from_items(d.to_items()), ["R6", "AS", "JK"]),
    ("a JSON line", lambda d: ImageDetections.from_json(
        json.loads(json.dumps(ImageDetections("a.jpg", 40, 40, d).to_json()))).detections,
     ["R6", "AS", "JK"]),
    ("dropping a duplicate", lambda d: without_duplicates(Detections.concatenate(
        [d, d[:1].scaled(1.01, 1.01).with_track_ids([1])]))[:3], ["R6", "AS", "JK"]),
    ("emptied", lambda d: d.filter([False, False, False]), []),
]


@pytest.mark.parametrize(("why", "operation", "labels"), OPERATIONS,
                         ids=[row[0] for row in OPERATIONS])
def test_every_operation_keeps_the_alternatives_with_their_items(
        why: str, operation: Any, labels: list[str]) -> None:
    result = operation(read_items())
    assert list(result.labels) == labels
    assert result.alternatives is not None and len(result.alternatives) == len(labels)
    for label, alternatives in zip(result.labels, result.alternatives, strict=True):
        assert dict(alternatives) == pytest.approx(ALTERNATIVES[label])
        assert next(iter(alternatives)) == label  # largest first
    # detections read without alternatives stay so
    unread = make(read_items().boxes, read_items().labels, read_items().kinds,
                  read_items().confidences, [4, 5, 6])
    assert operation(unread).alternatives is None


def test_an_item_without_alternatives_joined_to_read_ones_is_sure_of_its_label() -> None:
    oracle = make([[0, 0, 5, 5]], ("K13",), ("tile",), [0.8])
    joined = Detections.concatenate([read_items()[:1], oracle])
    assert joined.alternatives is not None
    assert [dict(a) for a in joined.alternatives] == [ALTERNATIVES["R6"], {"K13": 0.8}]
    items = [*read_items()[:1].to_items(), {"label": "K13", "box": [0, 0, 5, 5]}]
    assert [dict(a) for a in Detections.from_items(items).alternatives or ()] == [
        ALTERNATIVES["R6"], {"K13": 1.0}]


def test_alternatives_in_the_json_form() -> None:
    line = ImageDetections("a.jpg", 40, 40, read_items()[:1]).to_json()
    assert line["detections"][0]["alternatives"] == [
        {"label": "R6", "p": 0.55}, {"label": "R9", "p": 0.4}, {"label": "B6", "p": 0.02},
        {"label": "none", "p": 0.01}]
    # the contract's fields are as they were
    assert set(line["detections"][0]) == {"label", "kind", "box", "confidence", "track_id",
                                          "alternatives"}
    # ground truth is written without them
    truth = ImageDetections("a.jpg", 40, 40, read_items()).to_json(with_confidence=False)
    assert all(set(item) == {"label", "kind", "box", "track_id"}
               for item in truth["detections"])
    # four places of rounding may lift the sum a little over 1
    rounded = [{"label": "R6", "p": 0.3334}, {"label": "R9", "p": 0.3333},
               {"label": "R3", "p": 0.3334}]
    assert Detections.from_items([{"label": "R6", "kind": "tile", "box": [0, 0, 1, 1],
                                   "alternatives": rounded}]).alternatives is not None


# (what is wrong, the item's label, its kind, its alternatives, message fragment)
BAD_ALTERNATIVES = [
    ("a probability over 1", "R6", "tile", {"R6": 1.5}, "1.5"),
    ("a negative probability", "R6", "tile", {"R6": 0.5, "R9": -0.1}, "-0.1"),
    ("a probability that is no number", "R6", "tile", {"R6": 0.5, "R9": "x"}, "'x'"),
    ("NaN", "R6", "tile", {"R6": float("nan")}, "nan"),
    ("summing over 1", "R6", "tile", {"R6": 0.6, "R9": 0.5}, "sum to 1.1000"),
    ("the label missing", "R6", "tile", {"R9": 0.3, "B6": 0.2}, "do not include it"),
    ("another label more probable", "R6", "tile", {"R6": 0.3, "R9": 0.6},
     "R6 is not the most probable"),
    ("a label of the other kind", "R6", "tile", {"R6": 0.6, "7H": 0.1}, "'7H'"),
    ("no label at all", "R6", "tile", {}, "must map labels"),
    ("not a mapping", "R6", "tile", [0.5], r"not \[0.5\]"),
]


@pytest.mark.parametrize(("why", "label", "kind", "alternatives", "message"), BAD_ALTERNATIVES,
                         ids=[row[0] for row in BAD_ALTERNATIVES])
def test_bad_alternatives_are_refused_in_one_line(why: str, label: str, kind: str,
                                                  alternatives: Any, message: str) -> None:
    with pytest.raises(DetectionsError, match=message) as refused:
        Detections([[0, 0, 1, 1]], (label,), (kind,), [0.9], alternatives=(alternatives,))
    assert "\n" not in str(refused.value)


def test_alternatives_must_be_one_per_item_and_listed_in_json() -> None:
    with pytest.raises(DetectionsError, match="1 boxes but 2 alternatives"):
        Detections([[0, 0, 1, 1]], ("R6",), ("tile",), [0.9],
                   alternatives=({"R6": 0.9}, {"R6": 0.9}))
    with pytest.raises(DetectionsError, match="'alternatives' must be a list"):
        Detections.from_items([{"label": "R6", "kind": "tile", "box": [0, 0, 1, 1],
                                "alternatives": [{"label": "R6"}]}])
    # an item's label need not be its reader's choice: none may be the most probable
    doubted = Detections([[0, 0, 1, 1]], ("7h",), ("card",), [0.3],
                         alternatives=({"none": 0.6, "7h": 0.3, "7D": 0.1},))
    assert doubted.alternatives is not None
    assert list(doubted.alternatives[0]) == ["none", "7H", "7D"]
