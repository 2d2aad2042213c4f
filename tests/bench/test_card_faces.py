"""bench.card_faces: cards lying apart on rendered tables, read with the face stage off
and on, card by card."""

from __future__ import annotations

import json

import pytest


def test_the_card_faces_bench_reads_the_same_cards_both_ways(
        capsys: pytest.CaptureFixture[str]) -> None:
    from bench import card_faces

    assert card_faces.main(["--scenes", "2", "--seed", "930500", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["scenes"] == 2 and 8 <= result["cards"] <= 18
    for way in ("off", "on"):
        figures = result[way]
        assert figures["read"] + figures["misread"] + figures["missed"] == result["cards"]
        low, high = figures["interval"]
        assert low <= figures["share"] <= high
    assert result["on"]["read"] - result["off"]["read"] == (
        result["only_on"] - result["only_off"])
    # the face stage reads whole cards the indices alone do not
    assert result["on"]["read"] >= result["off"]["read"]


@pytest.mark.parametrize("argv", [["--scenes", "0"], ["--scenes", "-3"]])
def test_a_bench_of_no_tables_is_refused(argv: list[str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    from bench import card_faces

    with pytest.raises(SystemExit) as exit_:
        card_faces.main(argv)
    assert exit_.value.code == 2
    assert "--scenes must be at least 1" in capsys.readouterr().err
