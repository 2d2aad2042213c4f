"""Replays composed from the real photos: seeded, truthful times, zones that hold the racks,
hands over every change, one-line errors, an MP4 that reads back.

The detection model is not run here (see vision/replay.py's docstring for what it read
on the composed game); frames are small so the whole file takes a few seconds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
cv2 = pytest.importorskip("cv2")

import tabletop.cli as cli  # noqa: E402
from live.zones import ZoneLayout  # noqa: E402
from vision.replay import (  # noqa: E402
    CropBank,
    Replay,
    ReplayError,
    ReplaySettings,
    ReplayStep,
    compose,
    compose_game,
    find_realdata,
    read_truth,
    sabra_round,
    score_events,
)

REALDATA = find_realdata()
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
