"""Spots a meld row suggests an item is missing at (live.spots), and the watcher's second
look there."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.spots import gap_spots
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tabletop.vision.detections import Detections
from tests.live.frames import table_frame
from tests.live.readings import read

W, H = 24.0, 32.0


def tile(x: float, y: float = 100.0) -> Any:
    return np.array([x - W / 2, y - H / 2, x + W / 2, y + H / 2])


def centres(spots: list[Any]) -> list[tuple[float, float]]:
    return [tuple(round(v) for v in spot.centre) for spot in spots]


@pytest.mark.parametrize(("xs", "rows", "expected"), [
    # R3 R4 _ R6 R7: two rows two pitches apart in line: the gap between them
    ([100, 127, 181, 208], [[0, 1], [2, 3]], [(154, 100), (73, 100), (235, 100)]),
    # a run and a single two pitches on: the gap, and nothing beyond the single
    ([100, 127, 154, 208], [[0, 1, 2], [3]], [(181, 100)]),
    # rows three pitches apart: room for two, no spot (nor beyond the long rows)
    ([100, 127, 154, 235, 262, 289], [[0, 1, 2], [3, 4, 5]], []),
    # a meld and the next meld a normal gap on: no spot
    ([100, 127, 154, 168, 195, 222], [[0, 1, 2], [3, 4, 5]], []),
    # a row of two: one short of a meld, both its ends looked beyond
    ([100, 127], [[0, 1]], [(73, 100), (154, 100)]),
    # a row of two at the frame's edge: the end beyond the edge is left out
    ([14, 41], [[0, 1]], [(68, 100)]),
])
def test_gap_spots(xs: list[float], rows: list[list[int]],
                   expected: list[tuple[float, float]]) -> None:
    boxes = {key: tile(x) for key, x in enumerate(xs)}
    kinds = dict.fromkeys(boxes, "tile")
    spots = gap_spots(boxes, kinds, rows, (640, 480))
    assert sorted(centres(spots)) == sorted(expected)
    assert all(spot.kind == "tile" for spot in spots)


def test_with_row_ends_every_rows_ends_are_looked_past() -> None:
    boxes = {key: tile(x) for key, x in enumerate([100, 127, 154, 300, 327, 354])}
    kinds = dict.fromkeys(boxes, "tile")
    assert gap_spots(boxes, kinds, [[0, 1, 2], [3, 4, 5]], (640, 480)) == []
    ends = gap_spots(boxes, kinds, [[0, 1, 2], [3, 4, 5]], (640, 480), row_ends=True)
    assert sorted(centres(ends)) == [(73, 100), (181, 100), (273, 100), (381, 100)]


def test_rows_out_of_line_or_of_other_kinds_leave_no_spot() -> None:
    # the second row lies two pitches on but a row lower: not in line with the first
    boxes = {0: tile(100), 1: tile(127), 2: tile(154), 3: tile(208, 140), 4: tile(235, 140),
             5: tile(262, 140)}
    assert gap_spots(boxes, dict.fromkeys(boxes, "tile"), [[0, 1, 2], [3, 4, 5]]) == []
    cards = {0: tile(100), 1: tile(127), 2: tile(154), 3: tile(208)}
    kinds = {0: "tile", 1: "tile", 2: "tile", 3: "card"}
    assert gap_spots(cards, kinds, [[0, 1, 2], [3]]) == []


class SecondLook:
    """A detector's second look that sees ``label`` wherever it is asked within ``reach``
    of ``at`` (the tile the frame's pass keeps missing), and nothing elsewhere."""

    def __init__(self, at: tuple[float, float], label: str, reach: float = 8.0) -> None:
        self.at, self.label, self.reach = at, label, reach
        self.asked: list[tuple[float, float]] = []

    def __call__(self, frame: Any, boxes: Any, kinds: list[str]) -> Detections:
        found = []
        for box in boxes:
            centre = ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)
            self.asked.append(centre)
            if abs(centre[0] - self.at[0]) <= self.reach and abs(centre[1] - self.at[1]) <= \
                    self.reach:
                found.append((self.at[0], self.at[1], {self.label: 0.9, "R9": 0.05}))
        return read(found) if found else Detections.empty()


@pytest.mark.parametrize(("looks", "expected"), [
    (False, ["R3 R4", "R6 R7"]),  # the frame's pass misses R5: two pieces, no meld
    (True, ["R3 R4 R5 R6 R7"]),   # looked at again: the meld is whole before it is judged
])
def test_a_gap_is_looked_at_again_before_the_meld_is_judged(
        looks: bool, expected: list[str]) -> None:
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    second = SecondLook((154.0, 100.0), "R5")
    if looks:
        watcher.look_again = second
    seen = [(100.0, 100.0, {"R3": 0.97}), (127.0, 100.0, {"R4": 0.97}),
            (181.0, 100.0, {"R6": 0.97}), (208.0, 100.0, {"R7": 0.97})]
    commits = [s for t in range(20)
               if (s := watcher.update(t / 10, table_frame(), read(seen))) is not None]
    assert commits[-1].meld_strings() == expected
    if looks:
        # the spot was looked at before any table was committed, and only that spot
        # and the short rows' ends were asked about
        assert [s.meld_strings() for s in commits] == [expected]
        assert (154.0, 100.0) in second.asked
        assert watcher.looks == len(second.asked)


def test_an_empty_spot_is_given_up_after_a_few_looks() -> None:
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    second = SecondLook((999.0, 999.0), "R5")  # nothing there to find
    watcher.look_again = second
    seen = [(100.0, 100.0, {"R3": 0.97}), (127.0, 100.0, {"R4": 0.97}),
            (181.0, 100.0, {"R6": 0.97}), (208.0, 100.0, {"R7": 0.97})]
    for t in range(40):
        watcher.update(t / 10, table_frame(), read(seen))
    gap = [c for c in second.asked if c == (154.0, 100.0)]
    assert 1 <= len(gap) <= 3
    assert watcher.last is not None and watcher.last.meld_strings() == ["R3 R4", "R6 R7"]


def test_a_spot_filled_under_another_box_is_not_looked_at_again() -> None:
    """The detector may keep what a second look found under a box of its own that overlaps
    the spot less than the look's box did: the spot is filled all the same, not looked at
    again every frame (each look is a finder pass)."""
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    second = SecondLook((154.0, 106.0), "R5")
    watcher.look_again = second
    seen = [(100.0, 100.0, {"R3": 0.97}), (127.0, 100.0, {"R4": 0.97}),
            (181.0, 100.0, {"R6": 0.97}), (208.0, 100.0, {"R7": 0.97})]
    kept = (154.0, 120.0, {"R5": 0.9})  # IoU 0.23 with the spot, 0.39 with the look's box
    for t in range(40):
        found_once = any(c == (154.0, 100.0) for c in second.asked)
        watcher.update(t / 10, table_frame(), read([*seen, kept] if found_once else seen))
    gap = [c for c in second.asked if c == (154.0, 100.0)]
    assert len(gap) == 1
