"""The Table view frames each meld in a live run (issue 45, item 5).

``live.run.run`` watches a camera over a table with two melds (synthetic frames and
detections, so the test knows where each tile lies) with the real embedded panel; the
panel's state for the Table view (``GET /api/matches/{id}/state``) carries one frame box
per meld listed, in the camera frame's pixels, around that meld's tiles, and so does the
``table`` event, after a later move and after a correction too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.live.live_panel import Camera, Row, call, wait_for, watched_with_panel

TILE_W, TILE_H = 26, 35  # tests.live.frames.dets' tile size
RUN: list[Row] = [("R3", 100.0, 100.0, 0.9), ("R4", 127.0, 100.0, 0.9),
                  ("R5", 154.0, 100.0, 0.9)]
SET: list[Row] = [("K9", 300.0, 300.0, 0.9), ("B9", 327.0, 300.0, 0.9),
                  ("O9", 354.0, 300.0, 0.9)]
MORE: list[Row] = [("B1", 400.0, 420.0, 0.9), ("B2", 427.0, 420.0, 0.9),
                   ("B3", 454.0, 420.0, 0.9)]


def around(rows: list[Row]) -> list[float]:
    xs, ys = [r[1] for r in rows], [r[2] for r in rows]
    return [min(xs) - TILE_W / 2, min(ys) - TILE_H / 2, max(xs) + TILE_W / 2,
            max(ys) + TILE_H / 2]


def test_the_table_view_gets_a_frame_for_every_meld(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    camera = Camera([*RUN, *SET])
    with watched_with_panel(tmp_path, monkeypatch, camera) as live:
        events, base = live.events, live.base
        def shown() -> dict[str, Any]:
            return dict(call(f"{base}/state")[1]["table"])

        def framed(table: dict[str, Any]) -> dict[str, list[float]]:
            melds = [m["meld"] if isinstance(m, dict) else m for m in table["melds"]]
            assert len(table["boxes"]) == len(melds), table
            return dict(zip(melds, table["boxes"], strict=True))

        wait_for(lambda: len(shown()["melds"]) == 2, "the two melds on the panel")
        assert framed(shown()) == {"R3 R4 R5": around(RUN), "K9 B9 O9": around(SET)}
        event = [e for e in events if e["type"] == "table"][-1]
        assert framed(event) == framed(shown())

        camera.rows = [*RUN, *SET, *MORE]  # a third meld laid
        wait_for(lambda: len(shown()["melds"]) == 3, "the third meld on the panel")
        assert framed(shown()) == {"R3 R4 R5": around(RUN), "K9 B9 O9": around(SET),
                                   "B1 B2 B3": around(MORE)}
        # a correction's table keeps the frames: R5 said to be R6 (the detector's R5 stays)
        status, answer = call(f"{base}/corrections/item",
                              {"who": "Ana", "meld": 0, "index": 2, "item": "R6"})
        assert status == 201, answer
        corrected = framed(shown())
        assert corrected["R3 R4 R6"] == around(RUN) and len(corrected) == 3
