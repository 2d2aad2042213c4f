"""A tile corrected on the panel stays corrected in the live game.

The real TableWatcher is fed synthetic detections frame by frame in which one
tile (B10) is always read as B1; a person's correction pins B10 to that
physical tile, through later commits, a hand over it and the rules' own
guesses.  End to end: the embedded panel (real uvicorn) takes the correction
while ``live.run.run`` watches a synthetic camera, and the game's next events
carry the corrected tile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.corrections import (
    Correction,
    CorrectionError,
    Inbox,
    LiveTableGone,
    find_inbox,
    inbox_for,
)
from tabletop.live.reading import resolve_labels
from tabletop.live.snapshot import SeenItem, TableSnapshot
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tests.live.frames import dets, table_frame
from tests.live.live_panel import Camera, Row, call, wait_for, watched_with_panel
from tests.shared import SCENARIOS, json_events

MISREAD = [("B9", 100.0, 100.0, 0.9), ("B1", 127.0, 100.0, 0.9), ("B11", 154.0, 100.0, 0.9)]
"""B9 B10 B11 on the table; the detector reads the B10 as B1, always and confidently."""
B12: Row = ("B12", 181.0, 100.0, 0.9)
FIX = Correction(meld=0, index=1, item="B10", who="Ana", was="B1")


class Feed:
    """Frames at 10 per second of video time into one watcher; keeps what it commits."""

    def __init__(self, watcher: TableWatcher) -> None:
        self.watcher = watcher
        self.t = 0.0
        self.commits: list[TableSnapshot] = []

    def frames(self, rows: list[Row], count: int,
               hand: Callable[[int], tuple[int, int]] | None = None) -> list[TableSnapshot]:
        new = []
        for i in range(count):
            frame = table_frame(hand(i) if hand is not None else None)
            snapshot = self.watcher.update(self.t, frame, dets(rows))
            self.t = round(self.t + 0.1, 3)
            if snapshot is not None:
                new.append(snapshot)
        self.commits.extend(new)
        return new


def watched(rows: list[Row] = MISREAD, melds: tuple[str, ...] = ("B9 B1 B11",)) -> Feed:
    """A watcher that has committed ``rows`` once, read as ``melds``."""
    feed = Feed(TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3)))
    assert [s.meld_strings() for s in feed.frames(rows, 8)] == [list(melds)]
    return feed


def seen_at(snapshot: TableSnapshot, x: float, y: float) -> SeenItem:
    return min(snapshot.items, key=lambda s: abs(s.position[0] - x) + abs(s.position[1] - y))


# --- the watcher ----------------------------------------------------------------------


@pytest.mark.parametrize("corrected, expected", [
    (False, "B9 B1 B11 B12"),  # the control: without the correction the misreading stays
    (True, "B9 B10 B11 B12"),
])
def test_later_commits_keep_the_correction(corrected: bool, expected: str) -> None:
    feed = watched()
    if corrected:
        snapshot = feed.watcher.correct(FIX).snapshot
        assert snapshot.meld_strings() == ["B9 B10 B11"]
        assert feed.watcher.last is snapshot
        assert seen_at(snapshot, 127, 100).confidence == 1.0
    # the detector goes on reading B1 for 2 s; then B12 is laid and the table commits
    assert feed.frames(MISREAD, 20) == []
    later = feed.frames([*MISREAD, B12], 8)
    assert [s.meld_strings() for s in later] == [[expected]]


@pytest.mark.parametrize("token, expected", [
    ("B10", "B9 B10 B11"),
    ("b10", "B9 B10 B11"),
    # the camera sees a bare joker; the table keeps what the person declared it stands for
    ("JK=B10", "B9 JK=B10 B11"),
    ("B1", "B9 B1 B11"),  # confirming the reading is allowed, and pins it too
])
def test_the_token_is_read_as_a_contract_token(token: str, expected: str) -> None:
    feed = watched()
    fix = Correction(0, 1, token, "Ana", "B1")
    assert feed.watcher.correct(fix).snapshot.meld_strings() == [expected]
    # the pin holds the label as the detector writes it: a joker bare
    assert [pin.label for pin in feed.watcher.pins.values()] == [
        expected.split()[1].split("=")[0]]


def test_a_person_beats_the_rules_guess() -> None:
    # R5 R9 R7: the rules read the 9 as an upside-down 6 (R5 R6 R7 is a run) ...
    rows = [("R5", 100.0, 100.0, 0.9), ("R9", 127.0, 100.0, 0.9), ("R7", 154.0, 100.0, 0.9)]
    feed = Feed(TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3)))
    assert [s.meld_strings() for s in feed.frames(rows, 8)] == [["R5 R6 R7"]]
    # ... but the player says it is a 9, and so it stays, invalid meld and all
    assert feed.watcher.correct(Correction(0, 1, "R9", "Ben", "R6")).snapshot.meld_strings() == [
        "R5 R9 R7"]
    later = feed.frames([*rows, ("R8", 181.0, 100.0, 0.9)], 10)
    assert [s.meld_strings() for s in later] == [["R5 R9 R7 R8"]]


@pytest.mark.parametrize("hidden_s, back_at, expected", [
    (0.3, (127.0, 100.0), "B10"),  # shorter than the tracker keeps a lost track
    (1.5, (127.0, 100.0), "B10"),  # the track is lost; a new one where it lay inherits
    (1.5, (129.0, 101.0), "B10"),  # ... also a couple of pixels off (put back by hand)
    (1.5, (400.0, 300.0), "B1"),  # laid elsewhere: a new item to the camera, read afresh
])
def test_the_correction_survives_a_hand_over_the_tile(
    hidden_s: float, back_at: tuple[float, float], expected: str
) -> None:
    feed = watched()
    feed.watcher.correct(FIX)
    (old_id,) = feed.watcher.pins
    covered = [MISREAD[0], MISREAD[2]]
    # a hand moves over B10 (no commit while it moves) and lays B12 at the meld's end
    hand_frames = round(hidden_s * 10)
    assert feed.frames([*covered, B12], hand_frames, lambda i: (127 + 25 * (i % 2), 110)) == []
    back = [MISREAD[0], ("B1", *back_at, 0.9), MISREAD[2], B12]
    later = feed.frames(back, 10)
    assert later, "the table settles and commits"
    item = seen_at(later[-1], *back_at)
    assert str(item.item) == expected
    lost = hidden_s > WatcherSettings().keep_lost_s
    assert (item.track_id != old_id) == lost
    if expected == "B10":
        assert later[-1].meld_strings() == ["B9 B10 B11 B12"]
        assert set(feed.watcher.pins) == {item.track_id}


def test_an_unseen_correction_is_forgotten_after_a_while() -> None:
    feed = Feed(TableWatcher(find_variant("sabra"), None, None,
                             WatcherSettings(still_s=0.3, forget_correction_s=1.0)))
    feed.frames(MISREAD, 8)
    feed.watcher.correct(FIX)
    feed.frames([MISREAD[0], MISREAD[2]], 30, lambda i: (127 + 25 * (i % 2), 110))
    assert dict(feed.watcher.pins) == {}
    later = feed.frames(MISREAD, 10)
    assert [s.meld_strings() for s in later] == [["B9 B1 B11"]]


@pytest.mark.parametrize("fix, message", [
    (Correction(1, 0, "B10", "Ana"),
     "no meld 1 (asked for item 0 of meld 1): the table has 1 meld"),
    (Correction(-1, 0, "B10", "Ana"), "no meld -1"),
    (Correction(0, 3, "B10", "Ana"), "no item 3 in meld 0: it has 3"),
    (Correction(0, 1, "B10", "Ana", was="B7"),
     "item 1 of meld 0 reads B1 on the table now, not B7"),
    (Correction(0, 1, "10H", "Ana"), "item 1 of meld 0 cannot become '10H': not part of a"),
    (Correction(0, 1, "X9", "Ana"), "item 1 of meld 0 cannot become 'X9'"),
])
def test_a_bad_correction_is_refused_and_changes_nothing(fix: Correction, message: str) -> None:
    feed = watched()
    last = feed.watcher.last
    with pytest.raises(CorrectionError) as raised:
        feed.watcher.correct(fix)
    assert message in str(raised.value)
    assert isinstance(raised.value, ValueError)
    assert feed.watcher.last is last and dict(feed.watcher.pins) == {}
    later = feed.frames([*MISREAD, B12], 8)
    assert [s.meld_strings() for s in later] == [["B9 B1 B11 B12"]]


def test_no_correction_before_the_first_commit() -> None:
    watcher = TableWatcher(find_variant("sabra"))
    with pytest.raises(CorrectionError, match="no item 1 of meld 0: no table has been committed"):
        watcher.correct(FIX)


# --- the inbox ------------------------------------------------------------------------


def test_the_inbox_answers_each_sender_from_the_loop_thread() -> None:
    inbox = Inbox()
    answers: dict[int, object] = {}

    def send(n: int) -> None:
        future = inbox.submit(Correction(0, n, "R5", f"p{n}"))
        try:
            answers[n] = future.result(timeout=10)
        except CorrectionError as error:
            answers[n] = str(error)

    senders = [threading.Thread(target=send, args=(n,)) for n in range(3)]
    for sender in senders:
        sender.start()
    handled: list[int] = []

    def handler(correction: Correction) -> int:
        assert threading.current_thread() is threading.main_thread()
        handled.append(correction.index)
        if correction.index == 1:
            raise CorrectionError(f"no item {correction.index}")
        return correction.index * 10

    deadline = time.monotonic() + 10
    while len(handled) < 3 and time.monotonic() < deadline:
        inbox.apply_pending(handler)
        time.sleep(0.01)
    for sender in senders:
        sender.join(10)
    assert answers == {0: 0, 1: "no item 1", 2: 20}


def test_a_closed_inbox_says_the_live_table_is_gone() -> None:
    inbox = Inbox()
    waiting = inbox.submit(FIX)
    cancelled = inbox.submit(FIX)
    assert cancelled.cancel()
    with inbox.serving():
        assert inbox.apply_pending(lambda c: "done") == 1
        assert waiting.result(timeout=1) == "done"
        pending = inbox.submit(FIX)
    assert inbox.closed
    with pytest.raises(LiveTableGone):
        pending.result(timeout=1)
    with pytest.raises(LiveTableGone):
        inbox.submit(FIX).result(timeout=1)


def test_the_panel_and_the_loop_meet_through_the_bus() -> None:
    bus, other = EventBus(), EventBus()
    assert find_inbox(bus) is None
    inbox = inbox_for(bus)
    assert find_inbox(bus) is inbox and inbox_for(bus) is inbox and find_inbox(other) is None


def test_a_scenario_run_has_no_camera_to_correct() -> None:
    from tabletop.live.run import Listeners, run

    bus = EventBus()
    inbox = inbox_for(bus)
    scenario = SCENARIOS / "sabra.json"
    run(f"scenario:{scenario}", find_variant("sabra"), ("Ana", "Ben", "Cem"),
        listeners=Listeners(bus=bus))
    assert inbox.closed
    with pytest.raises(LiveTableGone):
        inbox.submit(FIX).result(timeout=1)


def test_correcting_an_item_laid_in_an_earlier_turn_is_no_play() -> None:
    from tabletop.live.game import Game
    from tabletop.live.pipeline import apply_correction

    rows = [("B7", 100.0, 100.0, 0.9), ("R7", 127.0, 100.0, 0.9), ("K7", 154.0, 100.0, 0.9),
            ("R10", 100.0, 200.0, 0.9), ("R11", 127.0, 200.0, 0.9), ("R12", 154.0, 200.0, 0.9)]
    feed = watched(rows, ("B7 R7 K7", "R10 R11 R12"))  # the K7 is really an O7
    bus = EventBus()
    events, _ = json_events(bus)
    game = Game(find_variant("sabra"), ("Ana", "Ben"), bus)
    game.update(feed.commits[-1])
    game.end_turn(t=feed.t)  # Ana opened with 54
    corrected = apply_correction(feed.watcher, game, Correction(0, 2, "O7", "Ben", "K7"))
    assert (str(corrected.before), str(corrected.after)) == ("K7", "O7")
    game.end_turn(t=feed.t + 1)  # Ben only drew
    assert [e for e in events if e["type"] == "warning"] == []
    assert events[-2]["type"] == "turn_ended" and events[-2]["valid"] is True
    assert game.table[0] == feed.watcher.last.melds[0]  # type: ignore[union-attr]
    fixed = next(e for e in events if e["type"] == "reading_corrected")
    assert (fixed["was"], fixed["item"], fixed["meld"], fixed["seat"], fixed["who"]) == (
        "K7", "O7", "B7 R7 O7", 0, "Ben")
    # the camera goes on reading K7; the next commit keeps O7 and the game sees no play
    later = feed.frames([*rows, ("R13", 181.0, 200.0, 0.9)], 10)
    assert [s.meld_strings() for s in later] == [["B7 R7 O7", "R10 R11 R12 R13"]]
    game.update(later[-1])
    game.end_turn(t=feed.t)
    assert [e for e in events if e["type"] == "warning"] == []
    assert events[-2]["type"] == "turn_ended" and events[-2]["laid"] == ["R13"]


def test_the_watcher_says_what_reads_differently() -> None:
    feed = watched()
    corrected = feed.watcher.correct(FIX)
    assert (str(corrected.before), str(corrected.after)) == ("B1", "B10")
    assert [(c.meld, c.index, str(c.before), str(c.after), " ".join(map(str, c.row)))
            for c in corrected.changes] == [(0, 1, "B1", "B10", "B9 B1 B11")]
    # confirming the reading changes nothing
    again = feed.watcher.correct(Correction(0, 1, "B10", "Ana", "B10"))
    assert again.changes == () and again.snapshot.meld_strings() == ["B9 B10 B11"]


# --- the rules-helped reading knows the pins --------------------------------------------
# R? R? R?: the person says the first is a 9.  Its neighbours are read R4 / R5 with a
# second choice of R10 / R11.  Not knowing the pin, the rules trade the 9 for a 6 (the
# classic confusion) to make R4 R5 R6; knowing it, R9 R10 R11 is the legal meld.
PIN_SHARES = {1: {"R9": 1.0}, 2: {"R4": 0.85, "R10": 0.15}, 3: {"R5": 0.85, "R11": 0.15}}


@pytest.mark.parametrize("fixed, expected", [
    (None, {1: "R6", 2: "R4", 3: "R5"}),  # the control: the reading without the pin
    ({1: "R9"}, {1: "R9", 2: "R10", 3: "R11"}),
    ({1: "R9", 7: "R5"}, {1: "R9", 2: "R10", 3: "R11"}),  # a pin on an item not seen now
])
def test_the_reading_keeps_pinned_labels_and_reads_the_rest_around_them(
    fixed: dict[int, str] | None, expected: dict[int, str]
) -> None:
    reading = resolve_labels(find_variant("sabra"), PIN_SHARES, [[1, 2, 3]], fixed)
    assert reading.labels == expected and reading.problems == ()


@pytest.mark.parametrize("fixed, expected, problem", [
    # three R5 read, two exist: the least voted gives way, unless a person named it
    ({}, {1: "R5", 2: "R5", 3: "R6"}, None),
    ({3: "R5"}, {1: "R5", 2: "R6", 3: "R5"}, None),
    ({1: "R5", 2: "R5", 3: "R5"}, {1: "R5", 2: "R5", 3: "R5"}, "3 copies of R5 seen"),
])
def test_the_copy_limit_never_moves_a_pinned_label(
    fixed: dict[int, str], expected: dict[int, str], problem: str | None
) -> None:
    shares = {1: {"R5": 1.0}, 2: {"R5": 0.9, "R6": 0.1}, 3: {"R5": 0.8, "R6": 0.2}}
    reading = resolve_labels(find_variant("sabra"), shares, [], fixed)
    assert reading.labels == expected
    if problem is None:
        assert reading.problems == ()
    else:
        assert [problem in p for p in reading.problems] == [True]


# --- end to end: panel, loop, watcher, game -------------------------------------------


def test_a_correction_on_the_panel_reaches_the_live_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    camera = Camera(MISREAD)
    kept = tmp_path / "corrections" / "corrections.jsonl"
    with watched_with_panel(tmp_path, monkeypatch, camera, keep_corrections=kept) as live:
        events, base = live.events, live.base

        def tables() -> list[list[str]]:
            return [e["melds"] for e in events if e["type"] == "table"]

        def shown() -> list[str]:
            return [m["meld"] for m in call(f"{base}/state")[1]["table"]["melds"]]

        def progress() -> list[dict[str, Any]]:
            return [e for e in events if e["type"] == "initial_meld_progress"]

        def logged_fixes() -> list[dict[str, Any]]:
            return [e for e in call(f"{base}/events")[1] if e["type"] == "item_corrected"]

        # the game publishes the table, then the opening's progress; the store logs each
        wait_for(lambda: bool(progress()) and shown() == ["B9 B1 B11"], "the misread table")
        assert tables() == [["B9 B1 B11"]]
        assert progress()[-1]["meets"] is False  # B9 B1 B11 is no meld: not an opening

        fix = {"who": "Ben", "meld": 0, "index": 1, "item": "b10"}
        status, answer = call(f"{base}/corrections/item", fix)
        assert status == 201, answer
        # the game took the corrected table before the panel answered
        assert tables()[-1] == ["B9 B10 B11"]
        assert (progress()[-1]["value"], progress()[-1]["meets"]) == (30, True)
        assert shown() == ["B9 B10 B11"]
        (logged,) = logged_fixes()
        assert (logged["who"], logged["was"], logged["item"], logged["live"]) == (
            "Ben", "B1", "B10", True)
        # what the correction teaches is kept for 'tabletop adapt --corrections': the
        # frame of the corrected table and the item's box in it, labelled B10
        from tabletop.studio.adapt import read_labelled

        (photo,) = read_labelled([kept])
        image, truth = photo.read()
        assert truth.labels == ("B10",) and photo.partial
        assert truth.boxes[0].tolist() == pytest.approx(dets(MISREAD).boxes[1].tolist(), abs=1)
        assert image.shape == table_frame().shape

        # the detector still reads B1; B12 is laid and the next table keeps B10
        camera.rows = [*MISREAD, B12]
        wait_for(lambda: tables()[-1] == ["B9 B10 B11 B12"], "the next table")
        assert ["B9 B1 B11 B12"] not in tables()
        added = [e for e in events if e["type"] == "item_added"]
        assert added[-1]["meld"] == "B9 B10 B11 B12" and added[-1]["items"] == ["B12"]

        # a card in a tile game: the panel's own checks pass it, the live table refuses it
        assert len(logged_fixes()) == 1
        status, answer = call(f"{base}/corrections/item", {**fix, "item": "10H"})
        assert status == 422 and "item 1 of meld 0 cannot become '10H'" in answer["detail"]
        assert len(logged_fixes()) == 1
        assert shown() == ["B9 B10 B11 B12"]
        live.stop_watching()
        # the video is over: a correction now only fixes the panel's view
        status, _ = call(f"{base}/corrections/item", {**fix, "index": 3, "item": "B13"})
        assert status == 201
        assert logged_fixes()[-1]["live"] is False
        assert shown() == ["B9 B10 B11 B13"]
