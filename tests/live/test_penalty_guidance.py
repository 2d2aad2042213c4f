"""After a penalty the players are told what to do, and the game follows the camera again
once they did it (issue 45, item 6, the live table's part).

A live run (``live.run.run`` over a camera whose frames and detections the test sets, the
real embedded panel taking the buttons): Ana opens with two melds; Ben lays a valid meld
and an invalid one, and presses End turn on the panel.  The penalty says which tiles go
back to Ben's rack and what the table goes back to; I'm out is refused with the real
reason (the table is not put back yet); while the tiles come off the table the game says
what is still to do; once the camera sees the table as it was, the panel's table is the
camera's and play goes on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tests.live.live_panel import Camera, Row, call, wait_for, watched_with_panel

OPENING: list[Row] = [("R10", 100.0, 100.0, 0.9), ("R11", 127.0, 100.0, 0.9),
                      ("R12", 154.0, 100.0, 0.9), ("K13", 300.0, 100.0, 0.9),
                      ("B13", 327.0, 100.0, 0.9), ("O13", 354.0, 100.0, 0.9)]
GOOD: list[Row] = [("B3", 100.0, 300.0, 0.9), ("B4", 127.0, 300.0, 0.9),
                   ("B5", 154.0, 300.0, 0.9)]
BAD: list[Row] = [("K2", 300.0, 300.0, 0.9), ("O7", 327.0, 300.0, 0.9)]


def test_a_penalty_says_what_goes_back_and_the_game_follows_once_it_is_done(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    camera = Camera(OPENING)
    watcher = TableWatcher(find_variant("sabra"), settings=WatcherSettings(still_s=0.3))
    with watched_with_panel(tmp_path, monkeypatch, camera, watcher=watcher) as live:
        events, base = live.events, live.base
        def of(kind: str, code: str | None = None) -> list[dict[str, Any]]:
            return [e for e in events if e["type"] == kind
                    and (code is None or e.get("code") == code)]

        def press(kind: str, who: str) -> dict[str, Any]:
            status, done = call(f"{base}/actions", {"who": who, "kind": kind})
            assert status == 200, done
            return dict(done)

        def shown() -> list[str]:
            return [m["meld"] for m in call(f"{base}/state")[1]["table"]["melds"]]

        wait_for(lambda: len(shown()) == 2, "Ana's opening")
        press("end_turn", "Ana")
        camera.rows = [*OPENING, *GOOD, *BAD]
        wait_for(lambda: len(shown()) == 4, "Ben's melds")
        press("end_turn", "Ben")
        (penalty,) = of("warning", "penalty")
        assert penalty["back_to_rack"] == ["B3", "B4", "B5", "K2", "O7"]
        assert sorted(penalty["table_before"]) == ["K13 B13 O13", "R10 R11 R12"]
        assert "B3 B4 B5 K2 O7 go back to Ben's rack" in penalty["message"]
        assert "the table goes back to 2 melds" in penalty["message"]
        assert sorted(shown()) == ["K13 B13 O13", "R10 R11 R12"]

        # I'm out now: refused, and the reason is the table still to be put back
        status, refused = call(f"{base}/actions", {"who": "Ben", "kind": "out", "seat": 1})
        assert status == 422
        assert refused["detail"] == ("Ben cannot go out yet: the table must be put back as it"
                                     " was first (2 melds: R10 R11 R12, K13 B13 O13)")

        # Ben takes the bad meld back first: the game says what is still to do
        camera.rows = [*OPENING, *GOOD]
        wait_for(lambda: bool(of("warning", "put_table_back")), "a word on what is left")
        (left,) = of("warning", "put_table_back")
        assert left["items"] == ["B3", "B4", "B5"] and left["missing"] == []
        assert "take B3 B4 B5 off the table" in left["message"]

        # the table as it was: the game follows the camera again, Ana plays on
        camera.rows = list(OPENING)
        wait_for(lambda: watcher.last is not None and len(watcher.last.melds) == 2,
                 "the camera to see the table put back")
        camera.rows = [*OPENING, ("R13", 181.0, 100.0, 0.9)]
        wait_for(lambda: "R10 R11 R12 R13" in shown(), "Ana's next move taken")
        assert sorted(shown()) == ["K13 B13 O13", "R10 R11 R12 R13"]
        assert len(of("warning", "put_table_back")) == 1
