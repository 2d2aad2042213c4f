"""bench.set_inks on one rendered set: the five ways read the same tiles, and the set's
inks and head from its layout photo are learnt through the real command path."""

from __future__ import annotations

import pytest

from bench.set_inks import WAYS, run
from tabletop.vision.palette import SET_MISREAD_SHARE


def test_one_set_is_read_five_ways_on_the_same_tiles() -> None:
    said: list[str] = []
    result = run(sets=1, tables=1, family="modern", seed=7100, log=said.append)
    assert result["failed_layouts"] == 0
    labelled = {result[way]["labelled"] for way in WAYS}
    assert len(labelled) == 1 and labelled.pop() > 5
    for way in WAYS[1:]:
        assert result[way]["against_reader"]["labelled"] == result["reader"]["labelled"]
    # the reader reads this set's inks on its layout, so the inks judge no colour: with
    # them the tiles read as without them
    (misread,) = result["inks_misread"]
    assert result["inks_judge"] == [""] and max(misread) < SET_MISREAD_SHARE, misread
    for way, without in (("inks", "reader"), ("adapted", "head")):
        both = result[way][f"against_{without}"]
        assert both["only_first_right"] == both["only_second_right"] == 0, way
    assert said == ["set 1/1 done"]


def test_an_unknown_family_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown palette family 'pastel'"):
        run(sets=1, tables=1, family="pastel", seed=1)
