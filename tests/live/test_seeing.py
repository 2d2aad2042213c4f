"""The seeing half of the live table: sources, zones, tracking, grouping, reading, watcher."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from tabletop.calibration.zones import ZoneLayout, default_layout
from tabletop.engine.variants import find_variant
from tabletop.live.grouping import Placed, group_items
from tabletop.live.reading import MotionMeter, resolve_labels
from tabletop.live.sources import FolderSource, VideoFileSource, open_source
from tabletop.live.tracking import Tracker, id_switches
from tabletop.live.watcher import TableWatcher, WatcherSettings
from tabletop.vision.detections import Detections
from tests.live.frames import dets, table_frame

# --- sources ------------------------------------------------------------------------


def test_video_file_gives_video_time(tmp_path: Path) -> None:
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 20.0, (64, 48))
    for i in range(10):
        writer.write(np.full((48, 64, 3), i * 20, np.uint8))
    writer.release()
    frames = list(open_source(str(path)))
    assert isinstance(open_source(str(path)), VideoFileSource)
    assert [f.t for f in frames] == pytest.approx([i / 20 for i in range(10)])
    assert frames[3].image.shape == (48, 64, 3)


def test_folder_skips_a_corrupt_image(tmp_path: Path, caplog: Any) -> None:
    for i in range(4):
        cv2.imwrite(str(tmp_path / f"f{i:03d}.png"), np.full((20, 30, 3), i, np.uint8))
    (tmp_path / "f002.png").write_bytes(b"\x89PNG not really")
    (tmp_path / "notes.txt").write_text("ignored")
    source = FolderSource(tmp_path, fps=5)
    frames = list(source)
    assert [f.t for f in frames] == pytest.approx([0.0, 0.2, 0.6])
    assert [p.name for p in source.skipped] == ["f002.png"]
    assert "not a readable image" in caplog.text


def test_folder_times_from_names(tmp_path: Path) -> None:
    for name in ("a_0.5.png", "a_1.25.png", "a_3.png"):
        cv2.imwrite(str(tmp_path / name), np.zeros((8, 8, 3), np.uint8))
    assert [f.t for f in FolderSource(tmp_path, times_from_names=True)] == [0.5, 1.25, 3.0]


# --- zones ------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_default_layout_has_every_seat_and_round_trips(players: int, tmp_path: Path) -> None:
    layout = default_layout("rommee", players, (900, 600))
    assert layout.seats == tuple(range(players))
    assert layout.zone_at((450, 300)).kind == "meld"  # type: ignore[union-attr]
    again = ZoneLayout.load(layout.save(tmp_path / "zones.json"))
    assert again == layout


@pytest.mark.parametrize("point, name", [
    ((450, 590), "seat 0"),  # bottom edge
    ((450, 10), "seat 2"),  # top edge
    ((10, 300), "seat 1"),  # left edge
    ((890, 300), "seat 3"),  # right edge
    ((300, 300), "meld area"),
    ((720, 200), "stock"),
    ((720, 400), "discards"),
    ((1000, 300), None),
])
def test_point_in_zone(point: tuple[float, float], name: str | None) -> None:
    zone = default_layout("rommee", 4, (900, 600)).zone_at(point)
    assert (zone.name if zone else None) == name


def test_rummikub_layout_has_no_discard_pile() -> None:
    # [sabra] no discarding: a player who cannot lay draws a tile from the pool
    assert not default_layout("sabra", 4).of_kind("discard")
    assert default_layout("rum500", 4).of_kind("discard")


def test_seats_reading_directions_face_the_middle() -> None:
    layout = default_layout("sabra", 4)
    assert [layout.seat_zone(s).reading_direction for s in range(4)] == [  # type: ignore[union-attr]
        (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0)]


# --- tracking ----------------------------------------------------------------------


def test_tracker_keeps_ids_through_jitter_and_occlusion() -> None:
    rng = np.random.default_rng(0)
    tracker = Tracker(confirm_frames=3, keep_lost_s=0.6)
    truth = [("R3", 100, 100), ("R4", 127, 100), ("R5", 154, 100), ("K9", 300, 200)]
    all_truth, all_ids = [], []
    for frame in range(40):
        t = frame / 10
        visible = [i for i in range(4) if not (i == 3 and 10 <= frame < 14)]  # hidden 0.4 s
        rows = [(truth[i][0], truth[i][1] + rng.normal(0, 1.5), truth[i][2] + rng.normal(0, 1.5),
                 0.9) for i in visible]
        out = tracker.update(dets(rows), t)
        assert out.track_ids is not None
        all_truth.append(visible)
        all_ids.append(out.track_ids.tolist())
    assert id_switches(all_truth, all_ids) == 0
    assert [tr.label for tr in tracker.confirmed()] == ["R3", "R4", "R5", "K9"]


def test_tracker_drops_a_removed_item_and_votes_decide_the_label() -> None:
    tracker = Tracker(confirm_frames=2, keep_lost_s=0.3)
    for frame in range(10):
        # the detector wavers: R6 mostly, R9 sometimes, with lower confidence
        label, conf = ("R9", 0.4) if frame % 3 == 0 else ("R6", 0.8)
        rows = [(label, 50, 50, conf)] + ([("K1", 200, 50, 0.9)] if frame < 5 else [])
        tracker.update(dets(rows), frame / 10)
    assert [tr.label for tr in tracker.confirmed()] == ["R6"]
    assert tracker.deaths == 1


# --- grouping ----------------------------------------------------------------------


def tile_row(start: int, x0: float, y0: float, n: int, angle_deg: float = 0.0,
             step: float = 27.0) -> list[Placed]:
    a = np.radians(angle_deg)
    return [Placed(start + i, "tile", (x0 + i * step * np.cos(a), y0 + i * step * np.sin(a)), 26)
            for i in range(n)]


@pytest.mark.parametrize("angle", [0, 30, 90, 135, 200])
def test_rows_of_tiles_at_any_rotation(angle: float) -> None:
    a = np.radians(angle)
    normal = np.array([-np.sin(a), np.cos(a)]) * 42  # the next row, a tile height and a gap
    items = tile_row(0, 400, 300, 4, angle) + tile_row(10, 400 + normal[0], 300 + normal[1], 3,
                                                       angle)
    items += tile_row(20, 400 + 8 * 27 * np.cos(a), 300 + 8 * 27 * np.sin(a), 3, angle)
    items.append(Placed(99, "tile", (400 - 400 * np.sin(a), 300 + 200 * np.cos(a)), 26))
    grouping = group_items(items, (1.0, 0.0))
    assert sorted(sorted(g) for g in grouping.groups) == [[0, 1, 2, 3], [10, 11, 12], [20, 21, 22]]
    assert grouping.singles == (99,)


@pytest.mark.parametrize("direction, expected", [
    ((1.0, 0.0), (0, 1, 2)),  # the player at the bottom reads left to right
    ((-1.0, 0.0), (2, 1, 0)),  # the player at the top reads the other way
])
def test_rows_read_in_the_facing_players_order(direction: tuple[float, float],
                                               expected: tuple[int, ...]) -> None:
    assert group_items(tile_row(0, 100, 100, 3), direction).groups == (expected,)


def test_overlapped_cards_group_by_their_indices_and_drop_the_second_corner() -> None:
    # indices 12 mm wide, cards shifted by 20 mm; the top card's far corner shows too
    cards = [Placed(i, "card", (100 + 20 * i, 100), 12, lab)
             for i, lab in enumerate(["7H", "8H", "9H"])]
    cards.append(Placed(9, "card", (100 + 40 + 50, 100 + 75), 12, "9H"))
    grouping = group_items(cards)
    assert grouping.groups == ((0, 1, 2),)
    assert grouping.second_corners == (9,) and grouping.singles == ()


# --- reading with the rules ---------------------------------------------------------


@pytest.mark.parametrize("variant, votes, expected", [
    # a 6 that makes a run beats a 9 that does not, even if the detector preferred 9
    ("sabra", [{"R5": 1.0}, {"R9": 0.7, "R6": 0.3}, {"R7": 1.0}], ["R5", "R6", "R7"]),
    # an upside-down 9 with no vote for 6 at all: the run still decides
    ("sabra", [{"B4": 1.0}, {"B5": 1.0}, {"B9": 1.0}], ["B4", "B5", "B6"]),
    # no rival makes it legal: kept as read (the game warns), not invented
    ("sabra", [{"R3": 1.0}, {"R4": 1.0}, {"R8": 1.0}], ["R3", "R4", "R8"]),
    # a set: the third item read 7 or 1, the set of 7s wins
    ("rommee", [{"7H": 1.0}, {"7S": 1.0}, {"AC": 0.6, "7C": 0.4}], ["7H", "7S", "7C"]),
])
def test_rules_help_reading(variant: str, votes: list[dict[str, float]],
                            expected: list[str]) -> None:
    shares = dict(enumerate(votes))
    reading = resolve_labels(find_variant(variant), shares, [list(shares)])
    assert [reading.labels[k] for k in shares] == expected
    assert reading.problems == ()


def test_no_more_copies_than_exist() -> None:
    # [sabra] 106 tiles: each number twice in each colour -> a third R5 cannot be
    variant = find_variant("sabra")
    shares = {0: {"R5": 1.0}, 1: {"R5": 1.0}, 2: {"R5": 0.6, "R3": 0.4}}
    assert resolve_labels(variant, shares, []).labels[2] == "R3"
    stuck = resolve_labels(variant, {0: {"R5": 1.0}, 1: {"R5": 1.0}, 2: {"R5": 1.0}}, [])
    assert stuck.problems == ("3 copies of R5 seen but Rummikub (Sabra) has 2",)
    # 500 Rum: one pack, so a second 7H is impossible
    rum = resolve_labels(find_variant("rum500"), {0: {"7H": 1.0}, 1: {"7H": 1.0}}, [])
    assert rum.problems and "7H" in rum.problems[0]


# --- the watcher ------------------------------------------------------------------


def run(watcher: TableWatcher, script: list[tuple[float, list[tuple[str, float, float, float]],
                                                  tuple[int, int] | None]]) -> list[Any]:
    out = []
    for t, rows, hand in script:
        snapshot = watcher.update(t, table_frame(hand), dets(rows))
        if snapshot is not None:
            out.append(snapshot)
    return out


def test_watcher_commits_once_the_table_is_still_and_no_hand_is_over_it() -> None:
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.4))
    meld = [("R3", 100, 100, 0.9), ("R4", 127, 100, 0.9), ("R5", 154, 100, 0.9)]
    script = []
    for i in range(10):  # a hand lays the meld and moves about
        script.append((i / 10, meld[: 1 + i // 4], (200 + 20 * i, 200)))
    for i in range(10, 20):  # the hand is gone, the table is still
        script.append((i / 10, meld, None))
    snapshots = run(watcher, script)
    assert len(snapshots) == 1
    assert snapshots[0].meld_strings() == ["R3 R4 R5"]
    assert 1.4 <= snapshots[0].t <= 1.6  # 0.4 s still after the hand left (and 3 frames to confirm)
    assert {s.track_id for s in snapshots[0].items} == {1, 2, 3}


def test_a_still_hand_over_items_stops_the_commit() -> None:
    watcher = TableWatcher(find_variant("sabra"), None, None, WatcherSettings(still_s=0.3))
    meld = [("R3", 100, 100, 0.9), ("R4", 127, 100, 0.9), ("R5", 154, 100, 0.9)]
    snapshots = run(watcher, [(i / 10, meld, None) for i in range(6)])
    assert [s.meld_strings() for s in snapshots] == [["R3 R4 R5"]]
    # a hand rests on R5 (no motion once it lies still) and R6 is laid beside it
    covered = meld[:2]
    later = run(watcher, [(0.6 + i / 10, covered, (154, 100)) for i in range(5)])
    assert later == []  # R5 is missing: a hand may be over it
    final = run(watcher, [(1.1 + i / 10, [*meld, ("R6", 181, 100, 0.9)], None) for i in range(8)])
    assert [s.meld_strings() for s in final] == [["R3 R4 R5 R6"]]


def rommee_watcher() -> TableWatcher:
    """A two-player Rommé table of 320 x 240 mm seen from straight above, 0.5 mm a pixel."""
    from tabletop.calibration import TableCalibration

    calibration = TableCalibration.from_corners([[0, 0], [640, 0], [640, 480], [0, 480]],
                                                (320.0, 240.0))
    zones = default_layout("rommee", 2, (320.0, 240.0))
    return TableWatcher(find_variant("rommee"), zones, calibration, WatcherSettings(still_s=0.2))


def test_watcher_with_zones_and_calibration_in_mm() -> None:
    watcher = rommee_watcher()
    # card indices 24 x 40 px (12 x 20 mm): a run in the meld area, 2 cards in seat 0,
    # one card on the discard pile
    rows = [("7H", 150, 240, 0.9), ("8H", 190, 240, 0.9), ("9H", 230, 240, 0.9),
            ("KS", 300, 440, 0.9), ("KD", 340, 440, 0.9), ("2C", 580, 300, 0.9),
            ("JK", 420, 20, 0.9)]
    snapshots = []
    for i in range(8):
        snapshot = watcher.update(i / 10, table_frame(), dets(rows, (24, 40), "card"))
        if snapshot is not None:
            snapshots.append(snapshot)
    assert len(snapshots) == 1
    s = snapshots[0]
    assert s.meld_strings() == ["7H 8H 9H"]
    assert {seat: [" ".join(map(str, m)) for m in melds] for seat, melds in s.seats.items()} == {
        0: ["KS KD"], 1: ["JK"]}
    assert [str(i) for i in s.discards] == ["2C"]
    assert s.items[0].position == pytest.approx((75.0, 120.0), abs=0.01)


PILE_MELD = [("7H", 150, 240, 0.9), ("8H", 190, 240, 0.9), ("9H", 230, 240, 0.9)]


@pytest.mark.parametrize(("pile_after", "in_view_under_hand", "commits"), [
    # a hand lays a card reading as the top discard, its index 16 px off the first one's
    # (24 px wide: overlapping it by a third): its twin, laid anew
    ([("2C", 596, 300, 0.9)], False, [(["2C"], False), (["2C"], True)]),
    # the hand leaves the pile as it was: nothing new
    ([("2C", 580, 300, 0.9)], False, [(["2C"], False)]),
    # the hand pushes the top card aside, its index seen all the while: the same card
    ([("2C", 596, 300, 0.9)], True, [(["2C"], False)]),
])
def test_a_top_discard_found_anew_off_the_committed_one_is_laid_anew(
        pile_after: list[tuple[str, float, float, float]], in_view_under_hand: bool,
        commits: list[tuple[list[str], bool]]) -> None:
    watcher = rommee_watcher()
    under_hand = PILE_MELD + ([("2C", 588, 300, 0.9)] if in_view_under_hand else [])
    steps = [([*PILE_MELD, ("2C", 580, 300, 0.9)], 10, False), (under_hand, 6, True),
             (PILE_MELD + pile_after, 10, False)]
    seen, t = [], 0.0
    for rows, frames, hand in steps:
        for k in range(frames):
            frame = table_frame((560 + 3 * k, 300) if hand else None)
            snapshot = watcher.update(t, frame, dets(rows, (24, 40), "card"))
            if snapshot is not None:
                seen.append(([str(i) for i in snapshot.discards], snapshot.discard_laid_anew))
            t += 0.1
    assert seen == commits


def test_a_card_index_boxed_twice_inside_itself_is_one_item() -> None:
    # the detector boxes QH's rank alone, inside the whole index, and reads it KH: the
    # watcher must not lay a KH on the table beside the run
    watcher = rommee_watcher()
    run_ = dets([("10H", 150, 240, 0.9), ("JH", 190, 240, 0.9), ("QH", 230, 240, 0.6)],
                (24, 40), "card")
    inner = Detections(np.array([[222.0, 224.0, 238.0, 244.0]]), ("KH",), ("card",),
                       np.array([0.4]))
    snapshots = []
    for i in range(8):
        snapshot = watcher.update(i / 10, table_frame(), Detections.concatenate([run_, inner]))
        if snapshot is not None:
            snapshots.append(snapshot)
    assert [s.meld_strings() for s in snapshots] == [["10H JH QH"]]
    assert [str(i.item) for i in snapshots[0].items] == ["10H", "JH", "QH"]


@pytest.mark.parametrize(("variant", "own", "stray"), [
    # a card face boxed as a tile on a card table, an index-like print among tiles
    ("rommee", ("card", [("7H", 150, 240, 0.9), ("8H", 190, 240, 0.9), ("9H", 230, 240, 0.9)]),
     ("tile", [("R5", 280, 240, 0.9)])),
    ("sabra", ("tile", [("R3", 150, 240, 0.9), ("R4", 177, 240, 0.9), ("R5", 204, 240, 0.9)]),
     ("card", [("5H", 280, 240, 0.9)])),
])
def test_the_other_materials_boxes_never_reach_the_table(
        variant: str, own: tuple[str, list[tuple[str, float, float, float]]],
        stray: tuple[str, list[tuple[str, float, float, float]]]) -> None:
    watcher = TableWatcher(find_variant(variant), None, None, WatcherSettings(still_s=0.2))
    size = {"tile": (26.0, 35.0), "card": (24.0, 40.0)}
    seen = Detections.concatenate([dets(own[1], size[own[0]], own[0]),
                                   dets(stray[1], size[stray[0]], stray[0])])
    snapshots = [snapshot for i in range(8)
                 if (snapshot := watcher.update(i / 10, table_frame(), seen)) is not None]
    assert len(snapshots) == 1
    assert snapshots[0].meld_strings() == [" ".join(label for label, *_ in own[1])]
    assert not snapshots[0].problems


def test_a_four_index_cards_two_corners_both_vote_for_it() -> None:
    # a run of a deck printed in all four corners: the top corner of the middle card is
    # misread 10C in every frame, its bottom corner read 10S; read as one card, the run's
    # rules settle the tie (without the second corner's votes the meld reads 9S 10C JS)
    watcher = rommee_watcher()
    top = [("9S", 150, 180, 0.9), ("10C", 190, 180, 0.9), ("JS", 230, 180, 0.9)]
    bottom = [("9S", 150, 280, 0.9), ("10S", 190, 280, 0.9), ("JS", 230, 280, 0.9)]
    snapshots = []
    for i in range(8):
        snapshot = watcher.update(i / 10, table_frame(), dets(top + bottom, (24, 40), "card"))
        if snapshot is not None:
            snapshots.append(snapshot)
    assert [s.meld_strings() for s in snapshots] == [["9S 10S JS"]]
    assert snapshots[0].problems == ()
    assert len(snapshots[0].items) == 3


def test_motion_meter_sees_a_hand() -> None:
    meter = MotionMeter()
    assert meter.update(table_frame()) == 0.0
    assert meter.update(table_frame()) == 0.0
    assert meter.update(table_frame((300, 200))) > 0.02
