"""Replays composed from the real photos: seeded, truthful times, zones that hold the racks,
hands over every change, one-line errors, an MP4 that reads back.

The detection model is not run here (see studio/replay.py's docstring for what it read
on the composed game); frames are small so the whole file takes a few seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

import tabletop.cli as cli
from tabletop.calibration.zones import ZoneLayout
from tabletop.studio.replay import (
    COLOURS,
    UPRIGHT_ASPECT,
    CropBank,
    Replay,
    ReplayError,
    ReplaySettings,
    ReplayStep,
    compose,
    compose_game,
    compose_random_game,
    layout_problem,
    photo_names,
    photo_split,
    random_game,
    random_sabra_script,
    read_truth,
    sabra_round,
    score_events,
)
from tests.shared import REALDATA

pytestmark = pytest.mark.skipif(
    REALDATA is None,
    reason="no real-data folder ($TABLETOP_REALDATA or <repo>/../shared/realdata) to cut "
           "tiles from")

SMALL = ReplaySettings(width=320, height=180, seed=3)
SHORT = [ReplayStep((("R10", "R11", "R12"),), seat=0),
         ReplayStep((("R10", "R11", "R12", "R13"),), seat=1)]


@pytest.fixture(scope="module")
def bank() -> CropBank:
    return CropBank.load(REALDATA)


@pytest.fixture(scope="module")
def game(bank: CropBank) -> Replay:
    return compose(sabra_round(), settings=SMALL, bank=bank, realdata=REALDATA)


def _frame_index(replay: Replay, t: float) -> int:
    return round(t * replay.settings.fps)


def test_same_seed_same_frames_other_seed_other_frames(bank: CropBank) -> None:
    a = compose(SHORT, settings=SMALL, bank=bank, realdata=REALDATA)
    b = compose(SHORT, settings=SMALL, bank=bank, realdata=REALDATA)
    c = compose(SHORT, settings=ReplaySettings(width=320, height=180, seed=4), bank=bank,
                realdata=REALDATA)
    assert a.frame_count == b.frame_count == c.frame_count
    assert all(np.array_equal(fa.image, fb.image) for fa, fb in zip(a.frames(), b.frames(),
                                                                     strict=True))
    assert a.truth() == b.truth() and a.header() == b.header()
    last = a.frame_count - 1
    assert not np.array_equal(a.frame(last), c.frame(last))


def test_truth_times_are_the_first_frames_after_the_hand_left(game: Replay) -> None:
    truth = game.truth()
    assert [line["t"] for line in truth] == [t.settled_t for t in game.timings]
    assert game.hand_mask(0).sum() == 0  # the table before the first hand
    for step, timing in enumerate(game.timings):
        settled = _frame_index(game, timing.settled_t)
        assert game.hand_mask(settled - 1).any(), f"step {step}: a hand just before t"
        for index in range(settled, _frame_index(game, timing.end_t) + 1):
            assert not game.hand_mask(index).any(), f"step {step}: a hand at frame {index}"
            assert game.state_of(index) == step + 1
        # the hand comes in over the old table and leaves the new one
        assert game.state_of(_frame_index(game, timing.hand_in_t)) == step
        assert game.state_of(_frame_index(game, timing.change_t)) == step + 1
        assert game.state_of(_frame_index(game, timing.change_t) - 1) == step
        assert timing.hand_in_t < timing.change_t < timing.settled_t <= timing.end_t
        # the step's buttons are pressed while its table stands still
        assert all(timing.settled_t < p.t <= timing.end_t for p in timing.presses)
    assert truth[-1]["seats"] == {"0": "", "1": "K2 R3 B8"}
    assert truth[1]["melds"] == ["K11 B11 R11", "R10 R11 R12"]


def test_a_hand_covers_every_change_while_it_is_made(game: Replay) -> None:
    size = (game.settings.height, game.settings.width)
    for step, timing in enumerate(game.timings):
        assert timing.changed, f"step {step} changes nothing"
        change = _frame_index(game, timing.change_t)
        for index in (change - 1, change):  # the last old and the first new table
            mask = game.hand_mask(index)
            for x1, y1, x2, y2 in timing.changed:
                inside = mask[max(0, int(y1)):min(size[0], int(np.ceil(y2))),
                              max(0, int(x1)):min(size[1], int(np.ceil(x2)))]
                assert inside.mean() > 0.98, f"step {step}: box {(x1, y1, x2, y2)} shows"
        # and the frame shows skin there, not the tiles
        image = game.frame(change).astype(float)
        x1, y1, x2, y2 = timing.changed[0]
        patch = image[int(y1):int(y2), int(x1):int(x2)].reshape(-1, 3).mean(axis=0)
        assert np.abs(patch - np.array([120.0, 150.0, 215.0])).max() < 40


def test_a_tile_added_to_a_meld_leaves_the_others_where_they_lay(game: Replay) -> None:
    before = {(it.label, it.box) for it in game.items(1) if it.meld is not None}
    after = {(it.label, it.box) for it in game.items(2) if it.meld is not None}
    assert after - before == {it for it in after if it[0] == "R13"}
    assert before <= after
    assert [b for b in game.timings[2].changed] == [
        it.box for it in game.items(2) if it.label == "R13"]


def test_zone_bands_hold_the_racks_and_no_meld(bank: CropBank) -> None:
    players = ("Ana", "Ben", "Cem", "Dan")
    steps = [
        ReplayStep((("K3", "K4", "K5"), ("R7", "B7", "O7")), seat=0),
        ReplayStep((("K3", "K4", "K5", "K6"), ("R7", "B7", "O7"), ("O1", "R1", "B1")),
                   seats={0: ("R2",), 1: ("K8", "B9", "O10", "R11", "K12"), 2: ("B2", "O3"),
                          3: ("R4", "K7", "B12", "O13", "R5", "K10", "B1")}),
    ]
    replay = compose(steps, players=players, settings=ReplaySettings(width=640, height=360),
                     bank=bank, realdata=REALDATA)
    zones = replay.zones
    assert zones.table_size == (640.0, 360.0)
    seat_zones = [zones.seat_zone(s) for s in range(4)]
    assert all(zone is not None for zone in seat_zones)
    bands = [zone for zone in seat_zones if zone is not None]
    # seat 0 at the bottom, then clockwise from above: left, top, right
    centres = [np.mean(zone.polygon, axis=0) for zone in bands]
    assert centres[0][1] > 300 and centres[2][1] < 60
    assert centres[1][0] < 100 and centres[3][0] > 540
    items = replay.items(1)
    assert sorted(it.label for it in items if it.seat == 3) == sorted(steps[1].seats[3])
    for it in items:
        x1, y1, x2, y2 = it.box
        corners = [(x1, y1), (x2, y1), (x2, y2), (x1, y2)]
        if it.seat is not None:
            assert all(bands[it.seat].contains(c) for c in corners), f"{it} outside its band"
        else:
            assert not any(z.contains(c) for z in bands for c in corners), it
            zone = zones.zone_at(((x1 + x2) / 2, (y1 + y2) / 2))
            assert zone is not None and zone.kind == "meld"


def test_unknown_tokens_labels_and_photos_give_one_line_errors(bank: CropBank) -> None:
    def error(steps: list[ReplayStep], **kw: Any) -> str:
        with pytest.raises(ReplayError) as caught:
            compose(steps, settings=SMALL, realdata=REALDATA, **kw)
        message = str(caught.value)
        assert "\n" not in message
        return message

    assert "'X9'" in error([ReplayStep((("R3", "X9", "R5"),))], bank=bank)
    assert "'QH' is a card" in error([ReplayStep((("QH", "QS", "QD"),))], bank=bank)
    assert "no seat 2" in error([ReplayStep((), seats={2: ("R3",)})], bank=bank)
    assert "3 copies of R3" in error([ReplayStep((("R3", "R4", "R5"), ("R3", "K3", "B3"),
                                                  ("R3", "O3", "JK")))], bank=bank)
    # a label none of the photos used has: the message says which and where it is
    small = CropBank.load(REALDATA, use_images=["rummy4-29"])
    missing = next(label for label in ("K9", "K12", "B13", "R6") if not small.of(label))
    message = error([ReplayStep(((missing, "JK", "JK"),))], bank=small)
    assert message.startswith(f"no crop of {missing}: the photos used (rummy4-29) lack it; ")
    assert "photos not used" in message or "left out" in message
    with pytest.raises(ReplayError, match="no photo 'rummy-999'"):
        CropBank.load(REALDATA, holdout=["rummy-999"])


def test_holdout_keeps_those_photos_out(bank: CropBank) -> None:
    # a short name, and a path as the annotations write it
    held = CropBank.load(REALDATA, holdout=[
        "rummy-36", "images/rummy-8_jpeg.rf.6d9f080410988a16fe2280d9fdae8bcd.jpg"])
    assert "rummy-36" not in held.used and "rummy-8" not in held.used
    assert set(held.used) | {"rummy-36", "rummy-8"} == set(bank.used)
    assert all(crop.photo in held.used for label in held.labels() for crop in held.of(label))
    replay = compose(SHORT, settings=SMALL, bank=held, realdata=REALDATA)
    assert not {"rummy-36", "rummy-8"} & set(replay.photos)


def test_files_read_back(tmp_path: Path) -> None:
    replay = compose_game(("Ana", "Ben"), tmp_path, steps=SHORT, seed=1, realdata=REALDATA,
                          size=(320, 180), fps=5)
    assert replay.files is not None
    capture = cv2.VideoCapture(str(replay.files.video))
    frames = 0
    while True:
        ok, image = capture.read()
        if not ok:
            break
        assert image.shape == (180, 320, 3)
        frames += 1
    assert capture.get(cv2.CAP_PROP_FPS) == pytest.approx(5)
    capture.release()
    assert frames == replay.frame_count
    header, lines = read_truth(replay.files.truth)
    assert header is not None and header["kind"] == "header"
    assert header["frames"] == frames and header["size"] == [320, 180] and header["fps"] == 5
    assert header["zones"] == "zones.json" and header["players"] == ["Ana", "Ben"]
    assert lines == replay.truth()
    assert ZoneLayout.load(replay.files.zones) == replay.zones
    stream = list(replay.frames())
    assert [f.t for f in stream[:3]] == [0.0, 0.2, 0.4] and len(stream) == frames


def test_cli_compose_writes_three_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"players": ["Ana", "Ben"], "steps": [
        {"melds": ["K11 B11 O11"], "seat": 0, "press": "end_turn"},
        {"melds": "K11 B11 O11 | R1 R2 R3", "seat": 1}]}))
    out = tmp_path / "replay"
    status = cli.main([
        "replay", "compose", "--out", str(out), "--script", str(script), "--size", "320x180",
        "--seed", "2", "--realdata", str(REALDATA), "--json"])
    assert status == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["file"] for r in rows] == ["video", "truth", "zones"]
    assert all(Path(r["path"]).is_file() for r in rows)
    _, lines = read_truth(out / "truth.jsonl")
    assert lines[1]["melds"] == ["K11 B11 O11", "R1 R2 R3"]
    # bad input: exit 2, one line naming the token
    script.write_text(json.dumps([{"melds": ["K11 B11 Z11"]}]))
    status = cli.main([
        "replay", "compose", "--out", str(out), "--script", str(script), "--size", "320x180"])
    err = capsys.readouterr().err.strip()
    assert status == 2 and "'Z11'" in err and "\n" not in err


def test_score_events_finds_states_delays_and_false_tables() -> None:
    truth = [{"t": 3.0, "melds": ["R10 R11 R12"]},
             {"t": 7.0, "melds": ["R10 R11 R12", "K11 B11 O11"]},
             {"t": 11.0, "melds": ["R10 R11 R12", "K11 B11 O11"],
              "seats": {"0": "", "1": "K3 B8 O6"}}]
    events = [
        {"t": 3.4, "type": "table", "melds": ["R12 R11 R10"]},
        {"t": 5.0, "type": "table", "melds": ["R10 R11 R12", "K11 B11"]},  # hand half out
        {"t": 7.5, "type": "table", "melds": ["O11 K11 B11", "R10 R11 R12"]},
        {"t": 11.6, "type": "hand_shown", "seat": 1, "items": ["O6", "B8", "K3"]},
    ]
    score = score_events(truth, events)
    assert score.found == (0.4, 0.5, 0.6)
    assert score.false_states == ((5.0, ("R10 R11 R12", "K11 B11")),)
    # a run not told the round ended sees the rack as a meld; a joker's reading is dropped
    racks_as_meld = [{"t": 11.4, "type": "table",
                      "melds": ["R10 R11 R12", "K11 B11 O11", "K3 B8 O6"]}]
    assert score_events(truth[2:], racks_as_meld).found == (0.4,)
    assert score_events([{"t": 1.0, "melds": ["R5 JK R7"]}],
                        [{"t": 2.0, "type": "table", "melds": ["R5 JK=R6 R7"]}]).found == (1.0,)


# --- random games, the photo split and the bench's scoring ---------------------------
def _check_game(steps: list[ReplayStep], players: int) -> None:
    """A random game as random_sabra_script promises it."""
    from collections import Counter

    from tabletop.engine.items import parse_items
    from tabletop.engine.variants import find_variant

    sabra = find_variant("sabra")
    assert 4 <= len(steps) <= 8
    before: list[tuple[str, ...]] = []
    opened: set[int] = set()
    for n, step in enumerate(steps):
        for meld in step.melds:
            assert sabra.analyse(parse_items(list(meld))).valid, meld
        counts = Counter(t for m in (*step.melds, *step.seats.values()) for t in m)
        assert max(counts.values()) <= 2, counts
        melds = list(step.melds)
        if step.seats:  # the racks laid open: the last step, the table as it was
            assert n == len(steps) - 1 and melds == before and step.presses == ("score",)
            assert sorted(step.seats) == list(range(players))
            assert [s for s, rack in step.seats.items() if not rack] == [steps[-2].seat]
            assert all(2 <= len(r) <= 6 for r in step.seats.values() if r)
            continue
        assert step.seat == n % players
        assert len(melds) in (len(before), len(before) + 1)
        if len(melds) == len(before) + 1:  # a new meld at the end, the others as they were
            assert melds[:-1] == before
            new = melds[-1]
            if step.seat not in opened:
                assert sabra.check_initial_meld([parse_items(list(new))]).meets, new
        else:  # one meld grown by one tile at one end
            changed = [(a, b) for a, b in zip(before, melds, strict=True) if a != b]
            assert len(changed) == 1
            old, grown = changed[0]
            assert len(grown) == len(old) + 1 and old in (grown[1:], grown[:-1])
            assert step.seat in opened
        opened.add(step.seat if step.seat is not None else -1)
        before = melds


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_scripts_are_legal_sabra_games(players: int) -> None:
    for seed in range(40):
        _check_game(random_sabra_script(np.random.default_rng(seed), players), players)


def test_random_scripts_are_seeded_and_cover_every_tile() -> None:
    def game(seed: int) -> list[ReplayStep]:
        return random_sabra_script(np.random.default_rng(seed))

    assert game(5) == game(5) and game(5) != game(6)
    games = [game(seed) for seed in range(60)]
    tokens = {t for steps in games for step in steps
              for m in (*step.melds, *step.seats.values()) for t in m}
    assert {t[0] for t in tokens if t != "JK"} == set(COLOURS)
    assert {int(t[1:]) for t in tokens if t != "JK"} == set(range(1, 14))
    assert "JK" in tokens
    with_racks = sum(bool(steps[-1].seats) for steps in games)
    assert 10 < with_racks < 50
    assert len({len(steps) for steps in games}) >= 4
    # only the labels given
    few = ["R1", "R2", "R3", "R4", "R5", "K3", "B3", "O3", "R6", "R7", "R8", "R9", "R10",
           "R11", "R12", "R13", "JK"]
    for seed in range(10):
        steps = random_sabra_script(np.random.default_rng(seed), labels=few)
        assert {t for st in steps for m in (*st.melds, *st.seats.values()) for t in m} <= set(
            few)


@pytest.fixture(scope="module")
def measure_bank() -> CropBank:
    return CropBank.load(REALDATA, use_images=photo_split(REALDATA).measure,
                         max_aspect=UPRIGHT_ASPECT)


def test_random_games_fit_the_table_with_crops_of_the_measure_photos(
        measure_bank: CropBank) -> None:
    full = ReplaySettings()
    for players in (2, 4):
        for seed in range(25):
            steps = random_game(seed, players, bank=measure_bank, settings=full)
            _check_game(steps, players)
            assert layout_problem(steps, players, replace_seed(full, seed), measure_bank) is None
            measure_bank.check({t for st in steps for m in (*st.melds, *st.seats.values())
                                for t in m})
            assert steps == random_game(seed, players, bank=measure_bank, settings=full)
    # a script that does not fit says so, as compose would
    crowded = [ReplayStep(tuple((f"K{n}", f"B{n}", f"O{n}") for n in range(1, 13)))]
    problem = layout_problem(crowded, 2, full, measure_bank)
    assert problem is not None and "do not fit the meld area" in problem


def replace_seed(settings: ReplaySettings, seed: int) -> ReplaySettings:
    from dataclasses import replace

    return replace(settings, seed=seed)


def test_a_random_replay_keeps_every_laid_tile_where_it_lay(measure_bank: CropBank) -> None:
    grown = 0
    for seed in (2, 7):
        replay = compose_random_game(("Ana", "Ben"), seed=seed, size=(320, 180),
                                     realdata=REALDATA, bank=measure_bank)
        assert set(replay.photos) <= set(photo_split(REALDATA).measure)
        for step in range(1, len(replay.steps)):
            before = {(it.label, it.box) for it in replay.items(step - 1) if it.meld is not None}
            after = {(it.label, it.box) for it in replay.items(step) if it.meld is not None}
            assert before <= after, f"seed {seed} step {step}: a tile moved"
            added = len(after) - len(before)
            assert added == (sum(map(len, replay.steps[step].melds))
                             - sum(map(len, replay.steps[step - 1].melds)))
            grown += added == 1
        assert [line["melds"] for line in replay.truth()] == [
            sorted(" ".join(m) for m in st.melds) for st in replay.steps]
    assert grown  # a meld grown at an end (before or after) stays where it lay


def test_the_photo_split_is_fixed_and_disjoint() -> None:
    split = photo_split(REALDATA)
    names = photo_names(REALDATA)
    assert split == photo_split(REALDATA)
    assert not set(split.adapt) & set(split.measure)
    assert sorted((*split.adapt, *split.measure)) == sorted(names) == list(names)
    assert split.adapt == names[::3] and split.adapt[0] == names[0]
    assert split.of("adapt") == split.adapt and split.of("all") is None
    with pytest.raises(ReplayError, match="'train'"):
        split.of("train")
    # the measure photos alone have every tile
    measure = CropBank.load(REALDATA, use_images=split.measure, max_aspect=UPRIGHT_ASPECT)
    measure.check(f"{c}{n}" for c in COLOURS for n in range(1, 14))
    measure.check(["JK"])
    assert not set(measure.used) & set(split.adapt)


def test_cli_composes_a_random_game_from_the_measure_photos(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "random"
    status = cli.main(["replay", "compose", "--random", "--seed", "4", "--out", str(out),
                       "--size", "320x180", "--photos", "measure", "--realdata", str(REALDATA),
                       "--json"])
    assert status == 0
    capsys.readouterr()
    script = json.loads((out / "script.json").read_text())
    steps = [ReplayStep.from_json(st) for st in script["steps"]]
    _check_game(steps, 2)
    header, lines = read_truth(out / "truth.jsonl")
    assert header is not None and set(header["photos"]) <= set(photo_split(REALDATA).measure)
    assert len(lines) == len(steps)
    assert cli.main(["replay", "compose", "--random", "--script", str(out / "script.json"),
                     "--out", str(out)]) == 2
    assert "give one" in capsys.readouterr().err


def test_the_bench_scores_committed_states_found_states_and_final_tables() -> None:
    from bench import replays
    truth = [{"t": 3.0, "melds": ["R10 R11 R12"]},
             {"t": 7.0, "melds": ["K11 B11 O11", "R10 R11 R12"]},
             {"t": 11.0, "melds": ["K11 B11 O11", "R10 R11 R12"],
              "seats": {"0": "", "1": "K3 B8"}}]
    events = [
        {"t": 3.5, "type": "table", "melds": ["R12 R11 R10"]},                  # right
        {"t": 5.0, "type": "turn_started", "seat": 1},
        {"t": 7.6, "type": "table", "melds": ["R10 R11 R12", "K11 B11 R11"]},   # O11 misread
        {"t": 8.4, "type": "table", "melds": ["O11 K11 B11", "R10 R11 R12"]},   # right
        {"t": 11.5, "type": "table",                                            # racks as a meld
         "melds": ["R10 R11 R12", "K11 B11 O11", "B8 K3"]},
    ]
    score = replays.score_replay(truth, events)
    assert (score.committed, score.right, score.final_right) == (4, 3, True)
    assert score.found == (0.5, 1.4, 0.5) and score.false_states == 1
    (wrong,) = score.wrong
    assert wrong["near"] == 1 and wrong["missing"] == ["O11"] and wrong["extra"] == ["R11"]
    # the same tiles in other melds: a grouping error; a replay ending on a wrong table
    grouped = [{"t": 3.2, "type": "table", "melds": ["R10 R11"]},
               {"t": 3.9, "type": "table", "melds": ["R10 R11 R12"]},
               {"t": 7.5, "type": "table", "melds": ["K11 B11 O11 R10", "R11 R12"]}]
    other = replays.score_replay(truth[:2], grouped)
    assert (other.committed, other.right, other.final_right) == (3, 1, False)
    assert other.found == (0.9, None) and other.false_states == 2
    assert other.wrong[0]["missing"] == ["R12"] and other.wrong[0]["near"] == 0
    assert other.wrong[1].get("grouping") and other.wrong[1]["near"] == 1
    # a wrong table committed while a hand was over the table (the truth header's times)
    timed = replays.score_replay(truth[:2], grouped, [(2.0, 3.0), (6.0, 7.0)])
    assert [w["during_move"] for w in timed.wrong] == [False, False]
    timed = replays.score_replay(truth[:2], grouped, [(2.0, 3.5), (6.0, 7.5)])
    assert [w["during_move"] for w in timed.wrong] == [True, True]
    none = replays.score_replay(truth, [])
    assert (none.committed, none.right, none.final_right) == (0, 0, False)
    summary = replays.summarise([{"score": s.to_json(), "frames": 10, "run_s": 2.0}
                                 for s in (score, other, none)])
    assert summary["replays"] == 3 and summary["committed"] == 7 and summary["right"] == 4
    assert summary["right_share"] == round(4 / 7, 4)
    assert summary["found"] == 4 and summary["true_states"] == 8
    assert summary["found_share"] == 0.5
    assert summary["final_right"] == 1 and summary["final_right_share"] == round(1 / 3, 4)
    assert summary["false_states"] == 3
    assert summary["delay_median_s"] == 0.7 and summary["delay_max_s"] == 1.4
    assert summary["misread"] == {"O11->R11": 1} and summary["missing"] == {"R12": 1}
    assert summary["grouping"] == 1 and summary["wrong_states"] == 3
    assert "exactly right 4 (57.1%)" in replays.report(summary)
    # several tiles wrong in one state: misreads paired by colour, then by number
    assert replays.pair_misreads(["JK", "K7", "O11"], ["K1", "R11", "R10", "B3"]) == (
        [("K7", "K1"), ("O11", "R11")], ["JK"], ["R10", "B3"])
    assert replays.pair_misreads(["JK"], ["R10"]) == ([("JK", "R10")], [], [])



def test_the_replay_bench_keeps_replays_and_results_by_what_makes_them_differ(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bench import replays

    args = replays.parser().parse_args(["--replays", "3", "--seed", "2", "--model", "m.onnx",
                                        "--out", "o", "--label", "before", "--json"])
    # the photos default by the game: measure for tiles, all for cards
    assert (args.replays, args.seed, args.photos, args.size) == (3, 2, None, (1280, 720))
    assert args.game == "sabra"
    assert args.label == "before" and args.json and not args.verbose
    # replays are kept by what makes their videos differ, results by model and label too
    setup = replays.BenchSetup(Path("o"), seed=2, label="before")
    monkeypatch.setattr(replays, "model_tag", lambda model: "tabletop-0123456789")
    assert setup.tag == "tabletop-0123456789-before"
    assert setup.replay_folder(3) == Path("o/replays/s2-measure-p2-1280x720/003")
    assert setup.result_path(3, setup.tag) == Path(
        "o/runs/tabletop-0123456789-before/s2-measure-p2-1280x720/003.json")
    # detections are kept by model alone: a run with another label reuses them
    assert setup.detections_path(3) == Path(
        "o/detections/tabletop-0123456789/s2-measure-p2-1280x720/003.jsonl.gz")


def test_the_bench_keeps_each_frames_detections_and_reads_them_back(tmp_path: Path) -> None:
    from bench import replays
    from tabletop.vision.detections import Detections

    frames = [Detections([[10, 10, 40, 50]], ("R7",), ("tile",), [0.9],
                         alternatives=({"R7": 0.6, "R1": 0.3, "none": 0.05},)),
              Detections.empty(),
              Detections([[5, 5, 25, 35], [60, 5, 80, 35]], ("K1", "B2"), ("tile", "tile"),
                         [0.8, 0.7])]
    calls: list[int] = []

    def detector() -> Any:
        def detect(image: Any) -> Detections:
            calls.append(image)
            return frames[image]
        return detect

    path = tmp_path / "d" / "000.jsonl.gz"
    first = replays.CachedDetections(path, detector)
    assert [first(i) for i in range(3)] == frames and calls == [0, 1, 2]
    first.save()
    again = replays.CachedDetections(path, detector)
    read = [again(i) for i in range(3)]
    assert calls == [0, 1, 2]  # the model was not run again
    assert [r.labels for r in read] == [f.labels for f in frames]
    assert read[0].alternatives is not None and dict(read[0].alternatives[0]) == pytest.approx(
        {"R7": 0.6, "R1": 0.3, "none": 0.05})
    assert read[2].boxes.tolist() == frames[2].boxes.tolist()
    with pytest.raises(RuntimeError, match="holds 3 frames"):
        again(3)
