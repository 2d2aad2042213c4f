"""The incremental detector (vision.incremental) on a game composed from the real tile photos:
it reads what the whole frame's pass reads, runs the model only where the table changed,
hides what a hand covers, looks at the whole frame when the camera moved or a while
went by, and keeps what a second look found; ``tabletop run`` with it commits the same
tables as with the model on every frame."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.run import Listeners, Reading, TableSetup, run
from tabletop.studio.replay import (
    CropBank,
    Replay,
    ReplaySettings,
    ReplayStep,
    compose,
)
from tabletop.vision.detections import Detections, iou_matrix
from tabletop.vision.detector import Detector
from tabletop.vision.incremental import (
    IncrementalDetector,
    IncrementalSettings,
    without_enclosing,
)
from tests.shared import REALDATA

pytestmark = [
    pytest.mark.skipif(REALDATA is None, reason="the real photos are missing"),
]

STEPS = [ReplayStep((("R10", "R11", "R12"),), seat=0),
         ReplayStep((("R10", "R11", "R12"), ("B3", "B4", "B5", "B6")), seat=1)]
NEVER = 1e9


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


@pytest.fixture(scope="module")
def game() -> Replay:
    return compose(STEPS, settings=ReplaySettings(seed=5), bank=CropBank.load(REALDATA),
                   realdata=REALDATA)


def _played(game: Replay, looker: IncrementalDetector, last: int | None = None
            ) -> list[object]:
    out = []
    for index in range(game.frame_count if last is None else last):
        looker.set_time(index / game.settings.fps)
        out.append(looker(game.frame(index)))
    return out


@pytest.fixture(scope="module")
def played(game: Replay, detector: Detector) -> tuple[IncrementalDetector, list[object]]:
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    return looker, _played(game, looker)


def test_it_reads_what_the_whole_frame_pass_reads(
        game: Replay, detector: Detector,
        played: tuple[IncrementalDetector, list[object]]) -> None:
    _, frames = played
    last = frames[-1]
    whole = detector(game.frame(game.frame_count - 1))
    assert len(last) == len(whole) == 7  # type: ignore[arg-type]
    overlap = iou_matrix(whole.boxes, last.boxes)  # type: ignore[attr-defined]
    assert overlap.max(axis=1).min() >= 0.8
    assert Counter(last.labels) == Counter(whole.labels)  # type: ignore[attr-defined]
    assert last.alternatives is not None  # type: ignore[attr-defined]


def test_the_model_runs_only_where_and_when_the_table_changed(
        game: Replay, played: tuple[IncrementalDetector, list[object]]) -> None:
    looker, _ = played
    counts = looker.counts
    assert counts.frames == game.frame_count
    assert counts.whole_looks == 1 and counts.whole_reasons == {"first frame": 1}
    # a region or two per step, each looked at on a few quiet frames, around the hand's
    # place, not the whole frame
    per_change = looker.settings.looks_per_change
    assert per_change <= counts.region_looks <= 2 * per_change * len(STEPS)
    area = game.settings.width * game.settings.height
    assert counts.region_pixels < (1 + 0.4 * counts.region_looks) * area
    # each of the 7 tiles read its few times (and a false alarm or two), and again where
    # a hand lay over it, at most once a step: no other rereading
    assert counts.uncovered <= 7 * len(STEPS)
    assert counts.reads <= looker.settings.reads * (9 + counts.uncovered)


def test_a_still_table_costs_no_model_run(
        game: Replay, detector: Detector) -> None:
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    _played(game, looker)
    before = (looker.counts.region_looks, looker.counts.whole_looks, looker.counts.reads)
    still = game.frame(game.frame_count - 1)
    first = looker(still)
    for _ in range(10):
        assert looker(still) is first  # the same items, not even rebuilt
    assert (looker.counts.region_looks, looker.counts.whole_looks,
            looker.counts.reads) == before


def test_what_a_hand_covers_is_hidden_and_the_rest_stays(
        game: Replay, played: tuple[IncrementalDetector, list[object]]) -> None:
    _, frames = played
    step = game.timings[1]
    fps = game.settings.fps
    before = frames[round(step.hand_in_t * fps) - 1]
    assert len(before) == 3  # type: ignore[arg-type]
    hidden = 0
    for index in range(round(step.hand_in_t * fps), round(step.settled_t * fps)):
        hand = game.hand_mask(index)
        shown = frames[index]
        for box in shown.boxes:  # type: ignore[attr-defined]
            x1, y1, x2, y2 = (int(v) for v in box)
            assert hand[y1:y2, x1:x2].mean() < 0.5
        for box in before.boxes:  # type: ignore[attr-defined]
            if len(shown) and iou_matrix(box[None], shown.boxes).max() >= 0.5:  # type: ignore
                continue
            hidden += 1
            # hidden only where the hand (or its shadow, a box's side around it) is
            side = int(max(box[2] - box[0], box[3] - box[1]))
            x1, y1, x2, y2 = (int(v) for v in box)
            assert hand[max(0, y1 - side):y2 + side, max(0, x1 - side):x2 + side].any()
    assert hidden > 0  # the hand passed over the first meld
    # the hand gone, all three are back
    after = frames[round(step.settled_t * fps) + 5]
    assert iou_matrix(before.boxes, after.boxes).max(axis=1).min() >= 0.5  # type: ignore


def test_a_moved_camera_is_looked_at_whole(game: Replay, detector: Detector) -> None:
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    _played(game, looker)
    last = game.frame(game.frame_count - 1)
    before = looker(last)
    moved = np.roll(last, (40, 60), axis=(0, 1))
    for index in range(3):
        looker.set_time(game.duration_s + index / game.settings.fps)
        after = looker(moved)
    assert looker.counts.whole_reasons.get("camera moved") == 1
    assert len(after) == len(before)  # type: ignore[arg-type]
    shift = np.median(after.boxes[:, :2], axis=0) - np.median(  # type: ignore[attr-defined]
        before.boxes[:, :2], axis=0)  # type: ignore[attr-defined]
    assert abs(shift[0] - 60) < 8 and abs(shift[1] - 40) < 8


def test_a_still_table_is_looked_at_whole_every_refresh(
        game: Replay, detector: Detector) -> None:
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=1.0))
    still = game.frame(game.frame_count - 1)
    for index in range(26):  # 2.5 s at 10 frames a second
        looker.set_time(index / 10)
        looker(still)
    assert looker.counts.whole_reasons == {"first frame": 1, "refresh": 2}


def test_what_a_second_look_finds_is_kept(game: Replay, detector: Detector) -> None:
    looker = IncrementalDetector(detector)
    empty = game.frame(0)
    assert len(looker(empty)) == 0
    laid = game.frame(game.frame_count - 1)
    truth = detector(laid)
    found = looker.look_again(laid, truth.boxes[:2], list(truth.kinds[:2]))
    assert len(found) == 2
    kept = looker(empty)
    assert Counter(kept.labels) == Counter(found.labels)


def _first_item_unshown(game: Replay, detector: Detector, why: str
                        ) -> tuple[IncrementalDetector, np.ndarray, Detections, Any]:
    """A still table's detector whose first kept item is not shown now: the last region
    looks at its place ``missed`` it (the finder's flicker at its threshold), or boxed it
    but their reading named nothing (``unnamed``: an index at the reader's threshold), so
    the watcher's spot on it stays empty.  Also the table's frame, what was shown before
    and that item."""
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    laid = game.frame(game.frame_count - 1)
    looker.set_time(0.0)
    shown = looker(laid)
    item = looker._items[0]
    if why == "missed":
        item.hits = (False,) * looker.settings.looks_per_change
    else:
        item.named = Detections.empty()
        item.reads = looker.settings.reads  # read as often as an item is, all to no name
    looker._emitted = None
    looker.set_time(0.1)
    assert len(looker(laid)) == len(shown) - 1
    return looker, laid, shown, item


def test_a_kept_item_the_region_looks_missed_shows_again_when_second_looks_find_it(
        game: Replay, detector: Detector) -> None:
    looker, laid, shown, missed = _first_item_unshown(game, detector, "missed")
    looks = 0
    while len(looker(laid)) < len(shown):
        assert looks < looker.settings.looks_per_change, "second looks that find it never show it"
        assert len(looker.look_again(laid, missed.box[None], [missed.kind])) == 1
        looks += 1
        looker.set_time(0.1 + looks / 10)
    assert Counter(looker(laid).labels) == Counter(shown.labels)


def test_a_kept_item_the_region_looks_left_unnamed_shows_once_a_second_look_names_it(
        game: Replay, detector: Detector) -> None:
    looker, laid, shown, unnamed = _first_item_unshown(game, detector, "unnamed")
    named = looker.look_again(laid, unnamed.box[None], [unnamed.kind])
    assert len(named) == 1
    looker.set_time(0.2)
    again = looker(laid)
    assert Counter(again.labels) == Counter(shown.labels)
    assert iou_matrix(named.boxes, again.boxes).max() > 0.9  # shown where the look boxed it


def test_find_in_a_region_finds_what_the_whole_frame_finds_there(
        game: Replay, detector: Detector) -> None:
    image = game.frame(game.frame_count - 1)
    whole = detector.find(image)
    x1, y1 = whole.boxes[:, :2].min(axis=0) - 50
    x2, y2 = whole.boxes[:, 2:].max(axis=0) + 50
    part = detector.find_in(image, (x1, y1, x2, y2))
    assert len(part) == len(whole)
    assert iou_matrix(whole.boxes, part.boxes).max(axis=1).min() >= 0.8
    # a region cutting a meld through keeps only the tiles wholly inside it
    mid = float(np.median((whole.boxes[:, 0] + whole.boxes[:, 2]) / 2))
    cut = detector.find_in(image, (0, 0, mid, image.shape[0]))
    assert all(box[2] < mid for box in cut.boxes)
    assert 0 < len(cut) < len(whole)


def test_run_commits_the_same_tables_as_the_model_on_every_frame(
        game: Replay, tmp_path: Path) -> None:
    game.write(tmp_path / "game")
    tables = {}
    for every_frame in (False, True):
        events = tmp_path / f"{every_frame}.jsonl"
        table = TableSetup(zones=tmp_path / "game" / "zones.json", find_markers=False)
        run(str(tmp_path / "game" / "video.mp4"), find_variant("sabra"), game.players,
            reading=Reading(every_frame=every_frame, table=table),
            listeners=Listeners(events_jsonl=events))
        tables[every_frame] = [e["melds"] for e in map(json.loads, events.read_text()
                                                        .splitlines()) if e["type"] == "table"]
    assert tables[False] == tables[True]
    assert sorted(tables[False][-1]) == ["B3 B4 B5 B6", "R10 R11 R12"]


def test_it_says_when_the_frame_is_not_the_table_yet(game: Replay, detector: Detector) -> None:
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    fps = game.settings.fps
    settling = []
    for index in range(game.frame_count):
        looker.set_time(index / fps)
        looker(game.frame(index))
        settling.append(looker.settling())
    for step in game.timings:
        # while the hand moves over the change, and until its region was looked at
        assert any(settling[round(step.hand_in_t * fps):round(step.settled_t * fps) + 1])
        # a second after the hand left, the frame is the table
        assert not settling[round(step.settled_t * fps) + round(fps)]
    assert not any(settling[:round(game.timings[0].hand_in_t * fps)])


def test_tile_colours_are_judged_against_the_set_s_inks_as_the_whole_frame_pass_does(
        game: Replay, detector: Detector, tmp_path: Path) -> None:
    """A model folder whose set's inks call this set's red blue and its blue red: the
    whole frame's pass and the incremental path name the tiles alike, both swapped."""
    import shutil

    from tabletop.vision.detector import set_inks_path
    from tabletop.vision.palette import SetInks, ink_features

    last = game.frame(game.frame_count - 1)
    plain = detector(last)
    features, measured = ink_features(last, plain.boxes)
    swapped = [{"R": "B", "B": "R"}.get(label[0], label[0]) for label in plain.labels]
    inks = SetInks.fit(features[measured], [c for c, ok in zip(swapped, measured,
                                                                 strict=True) if ok])
    for source in detector.path.parent.glob("tabletop.*onnx"):
        shutil.copy2(source, tmp_path / source.name)
    set_inks_path(tmp_path / "tabletop.onnx").write_text(json.dumps(inks.to_json()))
    adapted = Detector(tmp_path / "tabletop.onnx")
    whole = adapted(last)
    assert Counter(label[0] for label in whole.labels) == Counter(swapped)
    looker = IncrementalDetector(adapted, IncrementalSettings(refresh_s=NEVER))
    assert Counter(_played(game, looker)[-1].labels) == Counter(whole.labels)  # type: ignore[attr-defined]


TILE = [192.0, 481.0, 239.0, 541.0]


@pytest.mark.parametrize(("boxes", "kinds", "kept"), [
    # a box over the joker and the hand leaving below it (replay 018): the tile is kept
    ([[180.0, 470.0, 241.0, 584.0], TILE], ["tile", "tile"], [1]),
    # one box over two tiles beside each boxed: the two tiles
    ([[190.0, 480.0, 300.0, 545.0], TILE, [245.0, 480.0, 296.0, 545.0]],
     ["tile", "tile", "tile"], [1, 2]),
    # two boxes of one tile a little apart: neither holds the other at 1.5 times its size
    ([[190.0, 479.0, 241.0, 543.0], TILE], ["tile", "tile"], [0, 1]),
    # tiles side by side: both
    ([TILE, [245.0, 480.0, 296.0, 545.0]], ["tile", "tile"], [0, 1]),
    # a card index inside a card's box is not a tile's business
    ([[180.0, 470.0, 241.0, 584.0], TILE], ["card", "card"], [0, 1]),
])
def test_a_tile_box_holding_a_tighter_tile_box_is_dropped(
        boxes: list[list[float]], kinds: list[str], kept: list[int]) -> None:
    found = Detections(np.array(boxes), tuple("JK" for _ in boxes), tuple(kinds),  # type: ignore[arg-type]
                       np.full(len(boxes), 0.9))
    left = without_enclosing(found)
    assert [boxes.index(list(box)) for box in left.boxes.tolist()] == kept


@pytest.fixture(scope="module")
def card_table() -> np.ndarray:
    from tabletop.studio.card_replay import compose_random_card_game

    replay = compose_random_card_game(("Ana", "Ben"), seed=0, realdata=REALDATA)
    return replay.frame(replay.frame_count - 1)


@pytest.mark.parametrize("touched", [0, 3, 6])
def test_a_fingertip_on_a_card_index_loses_no_index(
        card_table: np.ndarray, detector: Detector, touched: int) -> None:
    """A small change over one card index (a fingertip, gone again): the region looked at
    around it is wide enough for the finder to box the indices by their cards, so every
    index is boxed again where it was."""
    import cv2

    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    looker.set_time(0.0)
    before = looker(card_table)
    cards = np.flatnonzero(np.asarray(before.kinds) == "card")
    assert len(cards) >= 8
    x1, y1, x2, y2 = before.boxes[cards[touched * len(cards) // 8]]
    fingertip = card_table.copy()
    cv2.circle(fingertip, (int((x1 + x2) / 2), int((y1 + y2) / 2)), 6, (60, 50, 40), -1)
    after = before
    for index, frame in enumerate([fingertip] * 4 + [card_table] * 10):
        looker.set_time((index + 1) / 30)
        after = looker(frame)
    assert looker.counts.region_looks > 0
    cards_after = np.flatnonzero(np.asarray(after.kinds) == "card")
    overlap = iou_matrix(before.boxes[cards], after.boxes[cards_after])
    assert overlap.max(axis=1).min() >= 0.5


@pytest.mark.parametrize("squared", [True, False])
def test_a_card_laid_squarely_on_another_is_read_as_itself(
        detector: Detector, squared: bool) -> None:
    """A discard laid squarely on the pile covers the one before all but its edge: the
    change map's cells hardly see the new index, yet a hand lay there, so the item is read
    afresh once the hand has gone.  A fanned pile shows each index apart."""
    from tabletop.studio.card_replay import card_settings, load_card_bank

    steps = [ReplayStep((("QS", "QH", "QD"),), seat=0, discards=("KH",)),
             ReplayStep((("QS", "QH", "QD"),), seat=1, discards=("KH", "5S"))]
    settings = card_settings(seed=0, base=ReplaySettings(squared_pile=squared))
    replay = compose(steps, variant="rommee", settings=settings,
                     bank=load_card_bank(REALDATA, use_images=["deal2"]), realdata=REALDATA)
    looker = IncrementalDetector(detector, IncrementalSettings(refresh_s=NEVER))
    last = _played(replay, looker)[-1]
    zone = replay.zones.of_kind("discard")[0]
    on_pile = sorted(label for label, box in zip(last.labels, last.boxes, strict=True)  # type: ignore[attr-defined]
                     if zone.contains(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)))
    whole = detector(replay.frame(replay.frame_count - 1))
    in_whole = sorted(label for label, box in zip(whole.labels, whole.boxes, strict=True)
                      if zone.contains(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)))
    assert "5S" in on_pile and on_pile == in_whole
    if squared:  # both indices of the top card, none of the KH under it
        assert on_pile == ["5S", "5S"] and looker.counts.uncovered >= 1
