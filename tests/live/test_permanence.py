"""Item permanence on a game composed from the real tile photos (live.permanence): a meld
no hand touched stays on the table when the detector stops finding it, and a picture
that suddenly shows much less is a camera event, not a move.

The detector here is the composer's truth (every tile it drew, less those a hand
half covers), so what the test changes is exactly what the detector misses; the frames,
the watcher, the game and the events are the real ones."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.events import CAMERA_EVENT_CODE
from tabletop.live.game import Game
from tabletop.live.pipeline import Pipeline
from tabletop.live.watcher import TableWatcher
from tabletop.studio.replay import CropBank, Replay, ReplaySettings, ReplayStep, compose, table_key
from tabletop.vision.detections import Detections
from tests.shared import REALDATA, json_events

pytestmark = pytest.mark.skipif(REALDATA is None, reason="the real photos are missing")

STILL = ("JK", "B5", "B6")
STEPS = [
    ReplayStep((STILL,), seat=0, presses=("end_turn",)),
    ReplayStep((STILL, ("K11", "B11", "R11")), seat=1, presses=("end_turn",)),
    ReplayStep((STILL, ("K11", "B11", "R11"), ("R10", "R11", "R12")), seat=0),
]


@pytest.fixture(scope="module")
def game() -> Replay:
    return compose(STEPS, settings=ReplaySettings(seed=11), bank=CropBank.load(REALDATA),
                   realdata=REALDATA)


class TruthDetector:
    """The tiles the composer drew in each frame, less those a hand covers half of, and
    less those ``misses(frame index, tile)`` says the detector does not find."""

    def __init__(self, game: Replay, misses: Callable[[int, Any], bool]) -> None:
        self.game = game
        self.misses = misses
        self.index = -1

    def __call__(self, image: Any) -> Detections:
        self.index += 1
        state = self.game.state_of(self.index)
        hand = self.game.hand_mask(self.index)
        found = []
        for tile in self.game.items(None if state == 0 else state - 1):
            x1, y1, x2, y2 = (round(v) for v in tile.box)
            if hand[y1:y2, x1:x2].mean() >= 0.5 or self.misses(self.index, tile):
                continue
            found.append(tile)
        if not found:
            return Detections.empty()
        return Detections(np.array([t.box for t in found], np.float64),
                          tuple(t.label for t in found), tuple("tile" for _ in found),
                          np.full(len(found), 0.9))


def played(game: Replay, detector: TruthDetector, frames: Any = None) -> list[dict[str, Any]]:
    bus = EventBus()
    events, _ = json_events(bus)
    watcher = TableWatcher(find_variant("sabra"), game.zones)
    game_ = Game(find_variant("sabra"), game.players, bus)
    Pipeline(frames if frames is not None else game.frames(), detector, watcher, game_).run()
    return events


def tables(events: list[dict[str, Any]]) -> list[tuple[tuple[str, ...], ...]]:
    return [table_key(e["melds"]) for e in events if e["type"] == "table"]


def truths(game: Replay) -> list[tuple[tuple[str, ...], ...]]:
    return [table_key(line["melds"]) for line in game.truth()]


def test_a_meld_the_detector_stops_finding_stays_on_the_table(game: Replay) -> None:
    """Seat 0 lays R10 R11 R12 on the last move; once the hand has left, the detector no
    longer finds JK B5 B6, which no hand touched (as the incremental detector, looking
    at the move's region again, lost it in issue 45).  The picture still shows the meld
    where it lay: it stays, and the table read after the move is the true one, not a
    table without it."""
    settled = round(game.timings[2].settled_t * game.settings.fps)

    def misses(index: int, tile: Any) -> bool:
        return index >= settled and tile.meld == 0

    events = played(game, TruthDetector(game, misses))
    assert tables(events) == truths(game)
    assert not [e for e in events if e["type"] == "warning"]


def test_a_meld_taken_away_by_a_hand_leaves_the_table(game: Replay) -> None:
    """The other side of the rule: where the picture no longer shows the meld (here: the
    frames after the last move drawn without it), it is gone, whatever was committed."""
    hand_in = round(game.timings[2].hand_in_t * game.settings.fps)
    gone: Collection[tuple[float, ...]] = {tuple(t.box) for t in game.items(0)}

    def frames() -> Any:
        for frame in game.frames():
            if frame.index >= hand_in:
                image = frame.image.copy()
                for box in gone:  # the table cloth where the meld lay
                    x1, y1, x2, y2 = (round(v) for v in box)
                    image[y1:y2, x1:x2] = game.frame(0)[y1:y2, x1:x2]
                yield type(frame)(frame.index, frame.t, image)
            else:
                yield frame

    def misses(index: int, tile: Any) -> bool:
        return index >= hand_in and tile.meld == 0

    events = played(game, TruthDetector(game, misses), frames())
    assert tables(events)[-1] == table_key(["K11 B11 R11", "R10 R11 R12"])


def test_a_restarted_picture_is_a_camera_event_not_a_move(game: Replay) -> None:
    """The stream restarts its picture from the empty table after the last move (a phone's
    camera app reconnecting): no ``table`` event takes the tiles away; one
    ``camera_view_changed`` warning says what happened."""
    last = game.frame_count

    def frames() -> Any:
        yield from game.frames()
        for extra in range(30):  # the first frames of the game again: an empty table
            yield type(next(game.frames()))(last + extra, (last + extra) / game.settings.fps,
                                            game.frame(0))

    class Restarted(TruthDetector):
        def __call__(self, image: Any) -> Detections:
            if self.index + 1 >= last:
                self.index += 1
                return Detections.empty()
            return super().__call__(image)

    events = played(game, Restarted(game, lambda index, tile: False), frames())
    assert tables(events) == truths(game)
    warnings = [e for e in events if e["type"] == "warning"]
    assert [w["code"] for w in warnings] == [CAMERA_EVENT_CODE]
    assert "9 of 9 items" in warnings[0]["message"]
