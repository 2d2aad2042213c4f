"""bench.card_finding's outcome of a card: unboxed, right, a spade taken for a club (or
back), another rank, or anything else, judged by the most confident box on its index."""

from __future__ import annotations

import argparse

import pytest

from bench.card_finding import _named_model, outcome_of, summary


@pytest.mark.parametrize(("label", "hits", "outcome"), [
    ("QS", [], "unboxed"),
    ("QS", [("QC", 0.9), ("QS", 0.4)], "right"),
    ("QS", [("QC", 0.9)], "spade_club"),
    ("7C", [("7S", 0.6), ("1C", 0.3)], "spade_club"),
    ("10S", [("JS", 0.8), ("10C", 0.5)], "rank"),
    ("QH", [("QD", 0.7)], "other"),
    ("QS", [("QH", 0.7)], "other"),
])
def test_outcome_follows_the_most_confident_box(label: str, hits: list[tuple[str, float]],
                                                outcome: str) -> None:
    assert outcome_of(label, hits) == outcome


def test_summary_counts_every_outcome_with_an_interval() -> None:
    figures = summary(["right", "right", "unboxed", "rank"])
    assert figures["cards"] == 4
    assert figures["right"]["count"] == 2 and figures["spade_club"]["count"] == 0
    low, high = figures["unboxed"]["interval"]
    assert 0 < low < 0.25 < high < 1


@pytest.mark.parametrize(("text", "parsed"), [
    ("a=shipped", ("a", (None, None))),
    ("odds1=shipped@1", ("odds1", (None, 1.0))),
])
def test_a_model_is_named_with_its_spade_odds(text: str, parsed: object) -> None:
    assert _named_model(text) == parsed


@pytest.mark.parametrize("text", ["shipped", "a=nowhere.onnx", "a=shipped@9", "a=shipped@x"])
def test_a_bad_model_name_is_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        _named_model(text)
