"""bench.set_inks on one rendered set: the three ways read the same tiles, and the set's
inks from its layout photo are learnt through the real command path."""

from __future__ import annotations

import pytest

from bench.set_inks import WAYS, run


def test_one_set_is_read_three_ways_on_the_same_tiles() -> None:
    said: list[str] = []
    result = run(sets=1, tables=1, family="modern", seed=7100, log=said.append)
    assert result["failed_layouts"] == 0
    labelled = {result[way]["labelled"] for way in WAYS}
    assert len(labelled) == 1 and labelled.pop() > 5
    for way in ("table", "layout"):
        both = result[way]["against_reader"]
        assert both["labelled"] == result["reader"]["labelled"]
    # the set's own inks never read a tile of the set worse than the reader alone
    assert result["layout"]["identity"] >= result["reader"]["identity"]
    assert said == ["set 1/1 done"]


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown palette family 'pastel'"):
        run(sets=1, tables=1, family="pastel", seed=1)
