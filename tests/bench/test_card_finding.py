"""bench.card_finding's outcome of a card: unboxed, right, a spade taken for a club (or
back), another rank, or anything else, judged by the most confident box on its index."""

from __future__ import annotations

import pytest

from bench.card_finding import outcome_of, summary


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
