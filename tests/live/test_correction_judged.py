"""A correction made on the panel is the table the game judges (issue 45, item 4).

The camera reads ``R12 R13 JK``; a player says on the panel's Table view that the joker
stands for R11 (``JK`` -> ``JK=R11``) and presses End turn there.  The real embedded panel
(uvicorn) takes both requests while ``live.run.run`` watches a camera over a still table
(synthetic frames and detections: the reading is what the test fixes), and the turn the
game judges holds ``JK=R11``: no complaint about the joker, the turn valid, and the next
table the camera commits keeps the declared joker.  The control: without the
correction, the same End turn complains about the joker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.live.live_panel import Camera, Row, call, wait_for, watched_with_panel

LAID: list[Row] = [("R12", 100.0, 100.0, 0.9), ("R13", 127.0, 100.0, 0.9),
                   ("JK", 154.0, 100.0, 0.9)]
SECOND: list[Row] = [("B5", 100.0, 300.0, 0.9), ("B6", 127.0, 300.0, 0.9),
                     ("B7", 154.0, 300.0, 0.9)]


@pytest.mark.parametrize("declared", [True, False])
def test_a_joker_declared_on_the_panel_is_the_meld_the_game_judges(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, declared: bool) -> None:
    camera = Camera(LAID)
    with watched_with_panel(tmp_path, monkeypatch, camera) as live:
        events, base = live.events, live.base
        def of(kind: str) -> list[dict[str, Any]]:
            return [e for e in events if e["type"] == kind]

        wait_for(lambda: bool(of("table")), "the laid meld")
        assert of("table")[-1]["melds"] == ["R12 R13 JK"]
        if declared:
            status, answer = call(f"{base}/corrections/item",
                                  {"who": "Ana", "meld": 0, "index": 2, "item": "JK=R11"})
            assert status == 201, answer
            (fixed,) = of("reading_corrected")
            assert (fixed["was"], fixed["item"], fixed["meld"]) == ("JK", "JK=R11",
                                                                    "R12 R13 JK=R11")
            assert of("table")[-1]["melds"] == ["R12 R13 JK=R11"]
        warned = len(of("warning"))
        status, done = call(f"{base}/actions", {"who": "Ana", "kind": "end_turn"})
        assert status == 200, done
        (ended,) = of("turn_ended")
        complaints = of("warning")[warned:]
        if declared:
            assert ended["valid"] is True and complaints == []
            assert ended["laid"] == ["R12", "R13", "JK=R11"]
            # the next table the camera commits keeps the joker as declared
            camera.rows = [*LAID, *SECOND]
            wait_for(lambda: of("table")[-1]["melds"] == ["R12 R13 JK=R11", "B5 B6 B7"],
                     f"the next table; tables: {[e['melds'] for e in of('table')]}")
        else:  # the control: the bare joker at the run's end is complained about
            assert complaints or ended["valid"] is False, (ended, complaints)
