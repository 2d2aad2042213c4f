"""A track's evidence: the reader's distributions multiplied over the frames its item lay
still and was seen, and what the watcher's rules-helped reading makes of it."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pytest

from tabletop.engine.variants import find_variant
from tabletop.live.corrections import Correction
from tabletop.live.reading import candidates
from tabletop.live.snapshot import TableSnapshot
from tabletop.live.tracking import EVIDENCE_FLOOR, Tracker
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tabletop.vision.detections import Detections
from tests.live.frames import table_frame
from tests.live.readings import Seen, read
from tests.shared import json_events

R6_OR_R9 = {"R6": 0.55, "R9": 0.45}
CLEARLY_R6 = {"R6": 0.95, "R9": 0.03, "none": 0.01}


def log(p: float) -> float:
    return math.log(max(p, EVIDENCE_FLOOR))


def faded(logs: list[float], decay: float) -> float:
    """Per-frame log-probabilities summed, the older ones fading by ``decay`` a frame."""
    return sum(value * decay ** age for age, value in enumerate(reversed(logs)))


@pytest.mark.parametrize("decay", [1.0, 0.85])
def test_evidence_sums_the_still_frames_only(decay: float) -> None:
    tracker = Tracker(confirm_frames=1, smoothing=0.0, evidence_decay=decay)
    frames: list[list[Seen]] = [
        [(50, 50, {"R6": 0.6, "R9": 0.3, "none": 0.1})],  # first seen: still so far
        [(51, 50, {"R6": 0.5, "R9": 0.4})],               # a pixel of jitter: still
        [(60, 50, {"R9": 0.9, "R6": 0.05})],              # slid along: moving, not counted
        [],                                               # under a hand: not seen
        [(60, 50, {"R6": 0.7, "B6": 0.2})],               # at rest again
    ]
    for t, items in enumerate(frames):
        tracker.update(read(items), t / 10)
    (track,) = tracker.tracks.values()
    assert track.evidence_weight == pytest.approx(faded([1, 1, 1], decay))
    # a label missing from a frame's alternatives gets half the least listed label's
    # probability (none is no label); the floor bounds the rest
    assert track.evidence == pytest.approx({
        "R6": faded([log(0.6), log(0.5), log(0.7)], decay),
        "R9": faded([log(0.3), log(0.4), log(0.1)], decay),
        "B6": faded([log(0.15), log(0.2), log(0.2)], decay),
    })
    assert track.label == "R6"
    assert track.votes["R9"] > 0  # the moving frame still votes
    product = {label: math.exp(value) for label, value in track.evidence.items()}
    total = sum(product.values())
    assert track.shares() == pytest.approx({k: v / total for k, v in product.items()})
    assert next(iter(track.shares())) == "R6"


def test_a_reading_given_again_frame_after_frame_adds_the_same_evidence_as_a_copy() -> None:
    """A still table's detector hands the tracker the very same reading every frame."""
    same, copies = (Tracker(confirm_frames=1, smoothing=0.0) for _ in range(2))
    held = read([(50, 50, {"R6": 0.6, "R9": 0.3, "none": 0.1}), (90, 50, R6_OR_R9)])
    for t in range(6):
        same.update(held, t / 10)
        copies.update(read([(50, 50, {"R6": 0.6, "R9": 0.3, "none": 0.1}),
                            (90, 50, R6_OR_R9)]), t / 10)
    # then other readings at the same places: the new ones count, not the old ones
    for t in range(6, 9):
        other = read([(50, 50, CLEARLY_R6), (90, 50, {"R9": 0.8, "R6": 0.1})])
        same.update(other, t / 10)
        copies.update(read([(50, 50, CLEARLY_R6), (90, 50, {"R9": 0.8, "R6": 0.1})]), t / 10)
    for mine, theirs in zip(same.tracks.values(), copies.tracks.values(), strict=True):
        assert mine.evidence == pytest.approx(theirs.evidence)
        assert mine.unlisted_evidence == pytest.approx(theirs.unlisted_evidence)
    assert [tr.label for tr in same.tracks.values()] == ["R6", "R9"]


def test_a_wavering_6_then_clearly_read_ends_up_a_6_by_its_evidence() -> None:
    tracker = Tracker(confirm_frames=3)
    seen = [R6_OR_R9] * 5 + [CLEARLY_R6] * 3
    for frame, distribution in enumerate(seen):
        tracker.update(read([(100, 100, distribution)]), frame / 10)
    (track,) = tracker.confirmed()
    assert track.label == "R6"
    r6, r9 = (faded([math.log(d[label]) for d in seen], tracker.evidence_decay)
              for label in ("R6", "R9"))
    assert track.shares()["R6"] == pytest.approx(1 / (1 + math.exp(r9 - r6)))
    assert track.confidence > 0.99


@pytest.mark.parametrize(("decay", "labels"), [
    (0.85, ["JK", "JK", "JK", "JK", "R5", "R5"]),
    (1.0, ["JK"] * 6),  # summed alike, a minute of evidence takes a minute to overturn
])
def test_an_item_swapped_in_place_changes_label_within_a_few_frames(
        decay: float, labels: list[str]) -> None:
    # a joker lies still for a minute, then a hand swaps in an R5 quickly enough that the
    # track lives on
    tracker = Tracker(confirm_frames=1, evidence_decay=decay)
    for frame in range(600):
        tracker.update(read([(100, 100, {"JK": 0.99, "R5": 0.001})]), frame / 10)
    (track,) = tracker.tracks.values()
    seen = []
    for frame in range(600, 606):
        tracker.update(read([(100, 100, {"R5": 0.99, "JK": 0.001})]), frame / 10)
        seen.append(track.label)
    assert seen == labels


def test_without_distributions_the_votes_decide_as_before() -> None:
    tracker = Tracker(confirm_frames=1)
    plain = read([(100, 100, {"R9": 0.8})])
    unread = Detections(plain.boxes, plain.labels, plain.kinds, plain.confidences)
    for frame in range(3):
        tracker.update(unread, frame / 10)
    (track,) = tracker.tracks.values()
    assert track.evidence == {} and track.label == "R9"
    assert track.shares() == {"R9": 1.0}


@pytest.mark.parametrize(("floor", "decay", "message"), [
    (0.0, 0.85, "evidence floor"), (1.0, 0.85, "evidence floor"),
    (1e-4, 0.0, "evidence decay"), (1e-4, 1.5, "evidence decay")])
def test_evidence_settings_are_checked(floor: float, decay: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Tracker(evidence_floor=floor, evidence_decay=decay)


# --- the watcher's reading --------------------------------------------------------------


def test_candidates_add_the_6_9_prior_only_to_shares_from_votes() -> None:
    assert candidates({"R9": 1.0}) == [("R9", 1.0), ("R6", 0.05)]
    assert candidates({"R9": 1.0}, from_distributions=True) == [("R9", 1.0)]
    assert candidates({"R9": 0.7, "R6": 0.3}, from_distributions=True) == [
        ("R9", 0.7), ("R6", 0.3)]


def watch(middle: list[Mapping[str, float]], frames: int = 8) -> list[TableSnapshot]:
    """R5 ? R7 laid still, the middle tile read as ``middle`` frame after frame (the last
    one repeated); what the watcher commits."""
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    commits = []
    for frame in range(frames):
        seen = middle[min(frame, len(middle) - 1)]
        snapshot = watcher.update(frame / 10, table_frame(), read(
            [(100, 100, {"R5": 0.98}), (127, 100, seen), (154, 100, {"R7": 0.97})]))
        if snapshot is not None:
            commits.append(snapshot)
    return commits


@pytest.mark.parametrize(("middle", "expected"), [
    # read 9 more often than 6, but the 6 keeps a fair share: the run makes it a 6
    ([{"R9": 0.55, "R6": 0.45}], "R5 R6 R7"),
    # R6 R9 wavering, then clearly a 6
    ([R6_OR_R9] * 5 + [CLEARLY_R6], "R5 R6 R7"),
    # the reader is sure of a 9 frame after frame: no prior invents a 6
    ([{"R9": 0.99, "R6": 0.001}], "R5 R9 R7"),
])
def test_the_rules_choose_among_the_readers_alternatives(
        middle: list[Mapping[str, float]], expected: str) -> None:
    commits = watch(middle)
    assert [s.meld_strings() for s in commits] == [[expected]]


def test_a_correction_beats_the_evidence() -> None:
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    rows = [(100.0, 100.0, {"R5": 0.98}), (127.0, 100.0, {"R9": 0.99, "R6": 0.001}),
            (154.0, 100.0, {"R7": 0.97})]
    commits = [s for t in range(8)
               if (s := watcher.update(t / 10, table_frame(), read(rows))) is not None]
    assert [s.meld_strings() for s in commits] == [["R5 R9 R7"]]
    fixed = watcher.correct(Correction(0, 1, "R6", "Ana", "R9")).snapshot
    assert fixed.meld_strings() == ["R5 R6 R7"]
    later = [s for t in range(8, 28) if (s := watcher.update(
        t / 10, table_frame(), read([*rows, (181.0, 100.0, {"R8": 0.9})]))) is not None]
    assert [s.meld_strings() for s in later] == [["R5 R6 R7 R8"]]


def test_a_doubtful_illegal_meld_is_a_warning_with_its_alternatives() -> None:
    from tabletop.live.bus import EventBus
    from tabletop.live.game import Game

    variant = find_variant("sabra")
    bus = EventBus()
    events, _ = json_events(bus)
    game = Game(variant, ("Ana", "Ben"), bus)
    watcher = TableWatcher(variant, None, None, WatcherSettings(still_s=0.3))
    # R5 R9 R7, the 9 read half as an orange 9 and the 6 all but ruled out
    rows = [(100.0, 100.0, {"R5": 0.98}), (127.0, 100.0, {"R9": 0.5, "O9": 0.45,
                                                          "R6": 0.002}),
            (154.0, 100.0, {"R7": 0.97})]
    for t in range(12):
        snapshot = watcher.update(t / 10, table_frame(), read(rows))
        if snapshot is not None:
            game.update(snapshot)
    assert watcher.last is not None and watcher.last.meld_strings() == ["R5 R9 R7"]
    (problem,) = watcher.last.reading_problems
    assert problem.code == "illegal_meld" and problem.alternatives[0][0] == "R5 R6 R7"
    warnings = [e for e in events if e["type"] == "warning"]
    assert [w["code"] for w in warnings] == ["unreadable_meld"]  # once, not per snapshot
    assert warnings[0]["items"] == ["R5", "R9", "R7"]
    assert warnings[0]["alternatives"][0]["meld"] == "R5 R6 R7"
    assert warnings[0]["alternatives"][0]["odds"] > 200
    assert "R5 R6 R7" in warnings[0]["message"]
