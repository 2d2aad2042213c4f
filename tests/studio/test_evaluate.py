"""The scoring of `tabletop eval`, on hand-made cases with numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.studio.evaluate import (
    Truth,
    average_precision,
    compare,
    compare_predictors,
    evaluate,
    evaluate_predictor,
    evaluate_truths,
    items_read_right,
    mcnemar_exact,
    wilson_interval,
)
from tabletop.vision.detections import LABEL_LIST, WHOLE_CARD_BOXES, Detections


def dets(rows: list[tuple[str, list[float], float]], kind: str = "tile") -> Detections:
    if not rows:
        return Detections.empty()
    return Detections(np.array([r[1] for r in rows], float), tuple(r[0] for r in rows),
                      (kind,) * len(rows), np.array([r[2] for r in rows]))  # type: ignore[arg-type]


TRUTH = dets([("R1", [0, 0, 10, 10], 1), ("R2", [20, 0, 30, 10], 1)])

CASES = [
    # name, predictions, found, identity, precision, mAP50
    ("perfect", [("R1", [0, 0, 10, 10], 0.9), ("R2", [20, 0, 30, 10], 0.8)], 1, 1, 1, 1),
    # IoU 80/120 = 0.67 counts, 50/150 = 0.33 does not
    ("shifted by 2 px", [("R1", [2, 0, 12, 10], 0.9), ("R2", [22, 0, 32, 10], 0.8)], 1, 1, 1, 1),
    ("shifted by 5 px", [("R1", [5, 0, 15, 10], 0.9), ("R2", [25, 0, 35, 10], 0.8)], 0, 0, 0, 0),
    # boxes right, labels swapped: every item found, none identified, both APs 0
    ("swapped labels", [("R2", [0, 0, 10, 10], 0.9), ("R1", [20, 0, 30, 10], 0.8)], 1, 0, 0, 0),
    # an extra R1 ranked first: R1's PR points (r 0, p 0), (r 1, p 1/2) -> AP 1/2; R2 AP 1
    ("extra box", [("R1", [50, 50, 60, 60], 0.95), ("R1", [0, 0, 10, 10], 0.9),
                   ("R2", [20, 0, 30, 10], 0.8)], 1, 1, 2 / 3, 0.75),
    # the same extra box ranked last does not lower AP (recall is already 1)
    ("extra box ranked last", [("R1", [50, 50, 60, 60], 0.1), ("R1", [0, 0, 10, 10], 0.9),
                               ("R2", [20, 0, 30, 10], 0.8)], 1, 1, 2 / 3, 1),
    # one item missed: found 1/2, R1 AP 1, R2 AP 0
    ("one missed", [("R1", [0, 0, 10, 10], 0.9)], 0.5, 0.5, 1, 0.5),
    # two boxes on one item: the second is a false positive of R1, ranked after the hit
    ("duplicate", [("R1", [0, 0, 10, 10], 0.9), ("R1", [1, 0, 11, 10], 0.7),
                   ("R2", [20, 0, 30, 10], 0.8)], 1, 1, 2 / 3, 1),
    ("nothing predicted", [], 0, 0, 0, 0),
]


@pytest.mark.parametrize(("name", "predicted", "found", "identity", "precision", "map50"),
                         CASES, ids=[c[0] for c in CASES])
def test_metrics_by_hand(name: str, predicted: list[tuple[str, list[float], float]],
                         found: float, identity: float, precision: float, map50: float) -> None:
    result = evaluate([(TRUTH, dets(predicted))])
    assert (result.found, result.identity, result.precision, result.map50) == pytest.approx(
        (found, identity, precision, map50))


def test_confusion_table_counts_label_mistakes() -> None:
    truth = dets([("K6", [0, 0, 10, 10], 1), ("B6", [20, 0, 30, 10], 1),
                  ("K6", [40, 0, 50, 10], 1)])
    pred = dets([("K9", [0, 0, 10, 10], 0.9), ("B6", [20, 0, 30, 10], 0.9),
                 ("K9", [40, 0, 50, 10], 0.9)])
    result = evaluate([(truth, pred), (truth, pred)])
    assert result.confusions == (("K6", "K9", 4),)
    assert result.identity == pytest.approx(2 / 6)


def test_tile_and_card_jokers_are_different_classes() -> None:
    truth = dets([("JK", [0, 0, 10, 10], 1)], kind="tile")
    pred = dets([("JK", [0, 0, 10, 10], 0.9)], kind="card")
    result = evaluate([(truth, pred)])
    assert result.found == 1 and result.identity == 0
    assert result.confusions == (("JK", "JK.card", 1),)


def test_average_precision_all_point() -> None:
    # PR points (0.5, 1), (0.5, 0.5), (1, 2/3): envelope 1 up to r 0.5, then 2/3 -> 5/6
    recall = np.array([0.5, 0.5, 1.0])
    precision = np.array([1.0, 0.5, 2 / 3])
    assert average_precision(recall, precision) == pytest.approx(0.5 + 0.5 * 2 / 3)


def test_evaluate_predictor_reads_a_jsonl_set(tmp_path: Path) -> None:
    image = np.zeros((50, 100, 3), np.uint8)
    cv2.imwrite(str(tmp_path / "a.png"), image)
    line = {"image": "a.png", "width": 100, "height": 50,
            "detections": [{"label": "AS", "kind": "card", "box": [10, 10, 20, 30]}]}
    (tmp_path / "annotations.jsonl").write_text(json.dumps(line) + "\n")
    seen = []

    def predictor(img: np.ndarray) -> Detections:
        seen.append(img.shape)
        return dets([("AS", [11, 10, 21, 30], 0.8)], kind="card")

    result = evaluate_predictor(predictor, tmp_path)
    assert seen == [(50, 100, 3)]
    assert (result.name, result.found, result.identity, result.map50) == (tmp_path.name, 1, 1, 1)
    assert json.loads(json.dumps(result.to_json()))["identity"] == 1


def mixed(tiles: list[tuple[str, list[float], float]],
          cards: list[tuple[str, list[float], float]]) -> Detections:
    parts = [d for d in (dets(tiles), dets(cards, kind="card")) if len(d)]
    if not parts:
        return Detections.empty()
    return Detections(np.concatenate([d.boxes for d in parts]),
                      tuple(lab for d in parts for lab in d.labels),
                      tuple(k for d in parts for k in d.kinds),
                      np.concatenate([d.confidences for d in parts]))


MIXED_TRUTH = mixed([("R1", [0, 0, 10, 10], 1), ("R2", [20, 0, 30, 10], 1)],
                    [("AS", [40, 0, 46, 12], 1), ("KD", [60, 0, 66, 12], 1)])

BY_KIND_CASES = [
    # name, predictions, (tile found, identity, precision), (card found, identity, precision)
    ("all right", mixed([("R1", [0, 0, 10, 10], 0.9), ("R2", [20, 0, 30, 10], 0.9)],
                        [("AS", [40, 0, 46, 12], 0.9), ("KD", [60, 0, 66, 12], 0.9)]),
     (1, 1, 1), (1, 1, 1)),
    # a card misread and one missed: the tiles' figures do not move
    ("cards wrong", mixed([("R1", [0, 0, 10, 10], 0.9), ("R2", [20, 0, 30, 10], 0.9)],
                          [("AC", [40, 0, 46, 12], 0.9)]),
     (1, 1, 1), (0.5, 0, 0)),
    # a card box on a tile: a miss among the tiles, a false alarm among the cards
    ("card box on a tile", mixed([("R1", [0, 0, 10, 10], 0.9)],
                                 [("AS", [20, 0, 30, 10], 0.9), ("AS", [40, 0, 46, 12], 0.9),
                                  ("KD", [60, 0, 66, 12], 0.9)]),
     (0.5, 0.5, 1), (1, 1, 2 / 3)),
]


@pytest.mark.parametrize(("name", "predicted", "tiles", "cards"), BY_KIND_CASES,
                         ids=[c[0] for c in BY_KIND_CASES])
def test_figures_by_kind(name: str, predicted: Detections, tiles: tuple[float, float, float],
                         cards: tuple[float, float, float]) -> None:
    result = evaluate([(MIXED_TRUTH, predicted)], "set")
    parts = dict(result.by_kind)
    assert list(parts) == ["tile", "card"]
    for kind, expected in (("tile", tiles), ("card", cards)):
        part = parts[kind]
        assert part.labelled == 2
        assert (part.found, part.identity, part.precision) == pytest.approx(expected)
    # the whole set's figures are the two kinds' pooled
    assert result.labelled == 4
    assert result.identity == pytest.approx((tiles[1] + cards[1]) / 2)
    shown = result.to_json()["by_kind"]
    assert shown["card"]["identity"] == pytest.approx(cards[1], abs=1e-4)
    assert "tiles:" in result.to_text() and "cards:" in result.to_text()


@pytest.mark.parametrize("predicted", [dets([("R1", [0, 0, 10, 10], 0.9)]),
                                       mixed([("R1", [0, 0, 10, 10], 0.9)],
                                             [("AS", [40, 0, 46, 12], 0.9)])],
                         ids=["tiles only", "a card false alarm among tiles"])
def test_one_labelled_kind_has_no_breakdown(predicted: Detections) -> None:
    result = evaluate([(TRUTH, predicted)])
    assert result.by_kind == ()
    assert result.precision == 1 / len(predicted)
    assert result.to_json()["by_kind"] == {}
    assert "tiles:" not in result.to_text()


def _square(label: str, x: float, side: float) -> tuple[str, list[float], float]:
    return (label, [x, 0, x + side, side], 1.0)


# items of longer side 10, 20, 40 and 200 px (a 10 x 40 box counts as 40)
SIZED_TRUTH = dets([_square("R1", 0, 10), _square("R2", 300, 20), ("R3", [600, 0, 610, 40], 1),
                    _square("R4", 900, 200)])

BY_SIZE_CASES = [
    # name, predictions, {group: (labelled, found, identity)}
    ("all right", [_square("R1", 0, 10), _square("R2", 300, 20), ("R3", [600, 0, 610, 40], 0.9),
                   _square("R4", 900, 200)],
     {"0-16 px": (1, 1, 1), "16-32 px": (1, 1, 1), "32-64 px": (1, 1, 1), "128+ px": (1, 1, 1)}),
    # the small one missed, the tall thin one misread
    ("small missed, thin misread", [_square("R2", 300, 20), ("R9", [600, 0, 610, 40], 0.9),
                                    _square("R4", 900, 200)],
     {"0-16 px": (1, 0, 0), "16-32 px": (1, 1, 1), "32-64 px": (1, 1, 0), "128+ px": (1, 1, 1)}),
    ("nothing", [], {"0-16 px": (1, 0, 0), "16-32 px": (1, 0, 0), "32-64 px": (1, 0, 0),
                     "128+ px": (1, 0, 0)}),
]


@pytest.mark.parametrize(("name", "predicted", "groups"), BY_SIZE_CASES,
                         ids=[c[0] for c in BY_SIZE_CASES])
def test_figures_by_box_size(name: str, predicted: list[tuple[str, list[float], float]],
                             groups: dict[str, tuple[int, float, float]]) -> None:
    result = evaluate([(SIZED_TRUTH, dets(predicted))])
    shown = {group.name: (group.labelled, group.found, group.right)
             for group in result.by_size if group.labelled}
    assert shown == groups
    # the groups add up to the whole set
    assert sum(group.labelled for group in result.by_size) == result.labelled
    assert sum(group.right for group in result.by_size) == round(result.identity * 4)
    rows = result.to_json()["by_size"]
    assert [row["longer_side_px"] for row in rows] == [[0, 16], [16, 32], [32, 64], [128, None]]
    assert "by box size" in result.to_text() and "128+ px" in result.to_text()


# Newcombe (1998), "Two-sided confidence intervals for the single proportion",
# Table I, method 3 (Wilson score, no continuity correction).
@pytest.mark.parametrize(("successes", "trials", "low", "high"), [
    (81, 263, 0.2553, 0.3662),
    (15, 148, 0.0624, 0.1605),
    (0, 20, 0.0, 0.1611),
    (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_published_values(successes: int, trials: int, low: float,
                                                  high: float) -> None:
    got = wilson_interval(successes, trials)
    assert got == pytest.approx((low, high), abs=5e-5)


@pytest.mark.parametrize(("successes", "trials"), [(-1, 5), (6, 5)])
def test_wilson_interval_refuses_impossible_counts(successes: int, trials: int) -> None:
    with pytest.raises(ValueError, match=f"{successes} of {trials}"):
        wilson_interval(successes, trials)


def test_evaluation_reports_intervals_around_its_shares() -> None:
    truth = dets([("K1", [0, 0, 10, 10], 1), ("K2", [20, 0, 30, 10], 1),
                  ("K3", [40, 0, 50, 10], 1), ("K4", [60, 0, 70, 10], 1)])
    pred = dets([("K1", [0, 0, 10, 10], 0.9), ("K9", [20, 0, 30, 10], 0.9),
                 ("K3", [40, 0, 50, 10], 0.9), ("K5", [80, 0, 90, 10], 0.9)])
    result = evaluate([(truth, pred)])
    assert (result.found, result.identity, result.precision) == (0.75, 0.5, 0.5)
    intervals = result.intervals()
    assert intervals == {"found": wilson_interval(3, 4), "identity": wilson_interval(2, 4),
                         "precision": wilson_interval(2, 4)}
    for key, (low, high) in intervals.items():
        assert low < getattr(result, key) < high
    assert json.loads(json.dumps(result.to_json()))["intervals"]["identity"] == [
        round(value, 4) for value in wilson_interval(2, 4)]
    assert "95% intervals: found 0.301-0.954" in result.to_text()


def test_an_empty_evaluation_knows_nothing() -> None:
    result = evaluate([(Detections.empty(), Detections.empty())])
    assert set(result.intervals().values()) == {(0.0, 1.0)}


@pytest.mark.parametrize(("only_first", "only_second", "p_value"), [
    (0, 0, 1.0),            # nothing to tell them apart
    (1, 0, 1.0),            # one item either way is a coin's toss
    (0, 5, 2 / 32),         # 2 * P(X <= 0), X ~ Bin(5, 1/2)
    (9, 1, 2 * 11 / 1024),  # 2 * (1 + 10) / 2**10
    (3, 2, 1.0),
])
def test_mcnemar_exact_known_answers(only_first: int, only_second: int, p_value: float) -> None:
    assert mcnemar_exact(only_first, only_second) == pytest.approx(p_value)
    assert mcnemar_exact(only_second, only_first) == pytest.approx(p_value)


def test_mcnemar_exact_refuses_negative_counts() -> None:
    with pytest.raises(ValueError, match="-1 and 2"):
        mcnemar_exact(-1, 2)


def test_items_read_right_follows_images_and_items_in_order() -> None:
    truth = dets([("K1", [0, 0, 10, 10], 1), ("K2", [20, 0, 30, 10], 1),
                  ("JK", [40, 0, 50, 10], 1)])
    first = dets([("K1", [0, 0, 10, 10], 0.9), ("K9", [20, 0, 30, 10], 0.9)])
    tile_as_card = dets([("JK", [40, 0, 50, 10], 0.9)], kind="card")  # same token, wrong kind
    assert items_read_right([(truth, first), (truth, tile_as_card)]).tolist() == [
        True, False, False, False, False, False]


def test_compare_counts_each_item_once() -> None:
    truth = dets([("K1", [0, 0, 10, 10], 1), ("K2", [20, 0, 30, 10], 1),
                  ("K3", [40, 0, 50, 10], 1), ("K4", [60, 0, 70, 10], 1)])
    first = dets([("K1", [0, 0, 10, 10], 0.9), ("K2", [20, 0, 30, 10], 0.9)])
    second = dets([("K1", [0, 0, 10, 10], 0.9), ("K5", [20, 0, 30, 10], 0.9),
                   ("K3", [40, 0, 50, 10], 0.9)])
    result = compare([(truth, first)], [(truth, second)], "s", ("a", "b"))
    assert (result.both, result.only_first, result.only_second, result.neither) == (1, 1, 1, 1)
    shown = json.loads(json.dumps(result.to_json()))
    assert (shown["identity_first"], shown["identity_second"], shown["mcnemar_p"]) == (
        0.5, 0.5, 1.0)
    assert "only a 1, only b 1" in result.to_text()


def test_compare_refuses_runs_of_different_items() -> None:
    one = dets([("K1", [0, 0, 10, 10], 1)])
    two = dets([("K1", [0, 0, 10, 10], 1), ("K2", [20, 0, 30, 10], 1)])
    with pytest.raises(ValueError, match=r"'s'.*same items"):
        compare([(one, one)], [(two, two)], "s")


def test_compare_predictors_reads_each_image_once_for_both(tmp_path: Path) -> None:
    for name in ("a.png", "b.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((50, 100, 3), np.uint8))
    lines = [{"image": name, "width": 100, "height": 50,
              "detections": [{"label": "AS", "kind": "card", "box": [10, 10, 20, 30]}]}
             for name in ("a.png", "b.png")]
    (tmp_path / "annotations.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    calls: list[str] = []

    def reads_right(img: np.ndarray) -> Detections:
        calls.append("right")
        return dets([("AS", [10, 10, 20, 30], 0.8)], kind="card")

    def misreads(img: np.ndarray) -> Detections:
        calls.append("wrong")
        return dets([("AH", [10, 10, 20, 30], 0.8)], kind="card")

    first, second, comparison = compare_predictors(reads_right, misreads, tmp_path,
                                                   ("r", "w"))
    assert calls == ["right", "wrong", "right", "wrong"]
    assert (first.identity, second.identity) == (1.0, 0.0)
    assert (comparison.name, comparison.only_first, comparison.only_second) == (
        tmp_path.name, 2, 0)
    assert comparison.p_value == pytest.approx(0.5)


# --- sets labelled by whole-card boxes or by label lists ------------------------------
CARD_BOXES = Detections(np.array([[0, 0, 100, 140], [200, 0, 300, 140]], float),
                        ("AS", "10H"), ("card", "card"), np.ones(2))
WHOLE_CARD_CASES = [
    # name, predictions (label, box), found, identity, precision
    ("both corners of each card read", [("AS", [5, 5, 20, 30]), ("AS", [80, 110, 95, 135]),
                                        ("10H", [205, 5, 220, 30])], 1.0, 1.0, 1.0),
    ("one card read as another", [("AC", [5, 5, 20, 30]), ("10H", [205, 5, 220, 30])],
     1.0, 0.5, 0.5),
    ("one corner right is enough", [("AC", [5, 5, 20, 30]), ("AS", [80, 110, 95, 135])],
     0.5, 0.5, 0.5),
    ("an index outside every card is a false alarm", [("AS", [5, 5, 20, 30]),
                                                     ("KD", [120, 5, 140, 30])], 0.5, 0.5, 0.5),
    ("nothing read", [], 0.0, 0.0, 0.0),
]


@pytest.mark.parametrize(("name", "predicted", "found", "identity", "precision"),
                         WHOLE_CARD_CASES, ids=[c[0] for c in WHOLE_CARD_CASES])
def test_whole_card_boxes_by_hand(name: str, predicted: list[tuple[str, list[float]]],
                                  found: float, identity: float, precision: float) -> None:
    truth = Truth(CARD_BOXES, WHOLE_CARD_BOXES)
    result = evaluate_truths([(truth, dets([(lab, box, 0.9) for lab, box in predicted],
                                           "card"))])
    assert (result.found, result.identity, result.precision) == pytest.approx(
        (found, identity, precision))
    assert result.map50 is None
    assert result.to_json()["map50"] is None


LABEL_LIST_CASES = [
    # name, listed, read, identity, precision
    ("each card read once", ("AS", "10H", "2C"), ("AS", "10H", "2C"), 1.0, 1.0),
    ("a card's two indices name it once", ("AS", "10H"), ("AS", "AS", "10H", "10H"), 1.0, 1.0),
    ("a card read that is not there", ("AS", "10H"), ("AS", "10H", "KD"), 1.0, 2 / 3),
    ("a card read as another", ("AS", "10H"), ("AC", "10H"), 0.5, 0.5),
    ("nothing read", ("AS",), (), 0.0, 0.0),
]


@pytest.mark.parametrize(("name", "listed", "read", "identity", "precision"),
                         LABEL_LIST_CASES, ids=[c[0] for c in LABEL_LIST_CASES])
def test_label_lists_by_hand(name: str, listed: tuple[str, ...], read: tuple[str, ...],
                             identity: float, precision: float) -> None:
    truth = Truth(Detections.empty(), LABEL_LIST, listed, "card")
    predicted = dets([(lab, [10.0 * i, 0, 10.0 * i + 8, 8], 0.9) for i, lab in enumerate(read)],
                     "card")
    result = evaluate_truths([(truth, predicted)])
    assert (result.identity, result.precision) == pytest.approx((identity, precision))
    assert items_read_right([(truth, predicted)]).sum() == round(identity * len(listed))


def test_a_set_mixing_ways_of_labelling_is_refused() -> None:
    pairs = [(Truth(CARD_BOXES, WHOLE_CARD_BOXES), Detections.empty()),
             (Truth(Detections.empty(), LABEL_LIST, ("AS",), "card"), Detections.empty())]
    with pytest.raises(ValueError, match="mixes pictures labelled by"):
        evaluate_truths(pairs, "mixed")


def test_eval_reads_label_list_and_whole_card_files(tmp_path: Path) -> None:
    cv2.imwrite(str(tmp_path / "a.png"), np.full((200, 320, 3), 90, np.uint8))
    lines = [{"image": "a.png", "width": 320, "height": 200, "kind": "card",
              "box_meaning": "whole card",
              "detections": [{"label": "AS", "kind": "card", "box": [0, 0, 100, 140]}]}]
    (tmp_path / "annotations.jsonl").write_text("".join(json.dumps(line) + "\n"
                                                        for line in lines))
    reads_ace = dets([("AS", [5, 5, 20, 30], 0.9)], "card")
    assert evaluate_predictor(lambda image: reads_ace, tmp_path).identity == 1.0
    listed = [{"image": "a.png", "width": 320, "height": 200, "kind": "card",
               "labels": ["AS", "KD"], "detections": []}]
    (tmp_path / "annotations.jsonl").write_text(json.dumps(listed[0]) + "\n")
    result = evaluate_predictor(lambda image: reads_ace, tmp_path)
    assert (result.labelled, result.identity, result.precision) == (2, 0.5, 1.0)


NAMED_CASES = [
    # name, predictions, items named anywhere in the picture (of 2), identity
    ("both boxed right", [("R1", [0, 0, 10, 10], 0.9), ("R2", [20, 0, 30, 10], 0.8)], 2, 1.0),
    # each box half a tile off, straddling a neighbour: IoU misses both, both still named
    ("boxes straddling neighbours", [("R1", [5, 0, 15, 10], 0.9), ("R2", [15, 0, 25, 10], 0.8)],
     2, 0.0),
    # one label read twice answers one item only
    ("one label read twice", [("R1", [0, 0, 10, 10], 0.9), ("R1", [20, 0, 30, 10], 0.8)],
     1, 0.5),
    ("a wrong label anywhere", [("R9", [50, 50, 60, 60], 0.9)], 0, 0.0),
    ("nothing predicted", [], 0, 0.0),
]


@pytest.mark.parametrize(("name", "predicted", "named", "identity"), NAMED_CASES,
                         ids=[c[0] for c in NAMED_CASES])
def test_items_named_anywhere_in_their_picture(name: str,
                                               predicted: list[tuple[str, list[float], float]],
                                               named: int, identity: float) -> None:
    result = evaluate([(TRUTH, dets(predicted))])
    assert (result.named_anywhere, result.identity) == (named, pytest.approx(identity))
    assert result.named_share == pytest.approx(named / 2)
    shown = result.to_json()["named_anywhere"]
    assert shown["items"] == named
    assert shown["interval"] == [round(value, 4) for value in wilson_interval(named, 2)]
    assert f"named anywhere in their picture (boxes ignored) {named / 2:.3f}" in result.to_text()


def test_a_label_in_another_picture_names_nothing() -> None:
    # R2 is read, but in the picture without it
    result = evaluate([(TRUTH, dets([("R1", [0, 0, 10, 10], 0.9)])),
                       (dets([("R3", [0, 0, 10, 10], 1)]), dets([("R2", [0, 0, 10, 10], 0.9)]))])
    assert (result.named_anywhere, result.labelled) == (1, 3)


def test_sets_without_item_boxes_name_nothing_anywhere() -> None:
    truth = Truth(Detections.empty(), LABEL_LIST, ("KS", "QH"))
    result = evaluate_truths([(truth, dets([("KS", [0, 0, 5, 5], 0.9)], kind="card"))])
    assert result.named_anywhere is None and result.named_share is None
    assert result.to_json()["named_anywhere"] is None
    assert "named anywhere" not in result.to_text()
