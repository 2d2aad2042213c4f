"""The bundled rendered videos replayed through the pipeline (issue 5, "Sample and proof").

Each video in tabletop/samples/videos/ was rendered from its scenario by
``python -m tabletop.studio.synth.scripted``; the oracle detector (live/oracle.py)
answers from the renderer's truth file with jitter and misses, in place of
the model that is not trained yet.  Everything after the model is the real
pipeline: the video source, tracker, stillness rule, calibration, zones,
grouping, reading, game.  The replay must give exactly the scenario's true
events (types, seats, melds, items, scores); only the times differ, the
video having its own clock.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tabletop.calibration.zones import default_layout
from tabletop.engine.events import GameWarning, event_to_json
from tabletop.engine.scenario import TableStep
from tabletop.live.oracle import (
    EXACT,
    Noise,
    OracleDetector,
    OracleError,
    calibration_from,
    read_truth,
    replay_video,
    truth_path_for,
)
from tabletop.live.scenario import load_scenario
from tabletop.live.sources import open_source
from tabletop.studio.synth.scripted import TABLE_MM, layout_snapshot, renderable
from tests.shared import FINDER, SCENARIOS, VIDEOS, needs

ROOT = Path(__file__).resolve().parents[2]
GAMES = ("sabra", "rommee")
MAX_BYTES = 2_000_000


def _without_time(event: dict[str, Any]) -> dict[str, Any]:
    """An event as the scenario has it: without its time, nor where the camera saw each
    meld (``boxes``, which a scenario without a camera has not)."""
    return {k: v for k, v in event.items() if k not in ("seq", "t", "boxes")}


def _expected(name: str) -> list[dict[str, Any]]:
    """The scenario's true events, less those of steps the video cannot show.

    Sabra's step at t=7.5 reads a card (QH) in a Rummikub meld: an injected
    misreading.  A camera sees tiles and cards apart (the grouping never puts
    a card in a row of tiles), so that snapshot is not rendered and its one
    event, the ``wrong_material`` warning, is not expected from the video."""
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    header, _ = read_truth(truth_path_for(VIDEOS / f"{name}.mp4"))
    skipped_t = {s["scenario_t"] for s in header["skipped"]}
    return [_without_time(event_to_json(e)) for e in scenario.events
            if not (isinstance(e, GameWarning) and e.t in skipped_t)]


@pytest.mark.parametrize("name", GAMES)
def test_bundled_video_is_small_and_matches_its_truth(name: str) -> None:
    video = VIDEOS / f"{name}.mp4"
    assert video.stat().st_size < MAX_BYTES
    header, frames = read_truth(truth_path_for(video))
    source = open_source(video)
    shapes = [(f.t, f.image.shape) for f in source]
    assert len(shapes) == header["frames"] == len(frames)
    assert {s for _, s in shapes} == {(header["height"], header["width"], 3)}
    # the video's clock is the truth's clock
    assert shapes[-1][0] == pytest.approx((len(frames) - 1) / header["fps"])


def test_only_the_injected_misreading_is_skipped() -> None:
    header, _ = read_truth(truth_path_for(VIDEOS / "sabra.mp4"))
    assert [s["scenario_t"] for s in header["skipped"]] == [7.5]
    header, _ = read_truth(truth_path_for(VIDEOS / "rommee.mp4"))
    assert header["skipped"] == []
    scenario = load_scenario(SCENARIOS / "sabra.json")
    step = next(s for s in scenario.steps if isinstance(s, TableStep) and s.t == 7.5)
    assert not renderable(scenario, step)


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("noise", [EXACT, Noise()], ids=["exact", "jitter-and-misses"])
def test_replay_gives_the_true_events(name: str, noise: Noise) -> None:
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    replay = replay_video(VIDEOS / f"{name}.mp4", scenario, noise=noise, seed=3)
    assert [_without_time(e) for e in replay.json_events()] == _expected(name)
    scored = [e for e in replay.json_events() if e["type"] == "round_scored"]
    assert [e["scores"] for e in scored] == list(scenario.scores)


@pytest.mark.parametrize("name", GAMES)
def test_every_snapshot_is_committed_after_its_hand_and_before_the_next(name: str) -> None:
    """The stillness rule: nothing is committed while the hand moves; each still step is
    committed within the 2 s it is held (the first commit is the empty table)."""
    scenario = load_scenario(SCENARIOS / f"{name}.json")
    video = VIDEOS / f"{name}.mp4"
    header, _ = read_truth(truth_path_for(video))
    replay = replay_video(video, scenario, seed=1)
    lines = [json.loads(x) for x in truth_path_for(video).read_text().splitlines()[1:]]
    with_hand = {line["t"] for line in lines if line["hand"]}
    assert with_hand and not set(replay.committed_t) & with_hand
    settled = [s["settled_t"] for s in header["steps"]]
    after = [t for t in replay.committed_t if t > settled[0]]
    for t in after:
        step = max(s for s in settled if s < t)
        assert t - step <= 2.0


def test_oracle_noise_is_seeded_and_bounded() -> None:
    oracle = OracleDetector.for_video(VIDEOS / "sabra.mp4")
    frame = next(i for i, f in enumerate(oracle.frames) if len(f) >= 10)
    a, b = oracle.at(frame), oracle.at(frame)
    assert a.labels == b.labels and np.array_equal(a.boxes, b.boxes)
    truth = np.array([d["box"] for d in oracle.frames[frame]])
    assert len(a) == len(truth)  # one frame of 10+ items: the 0.3% miss rate spares it
    assert not np.array_equal(a.boxes, truth)
    sides = (truth[:, 2:] - truth[:, :2]).repeat(2, axis=1)
    assert np.all(np.abs(a.boxes - truth) <= 5 * (0.03 * sides + 0.2))
    exact = OracleDetector.for_video(VIDEOS / "sabra.mp4", noise=EXACT).at(frame)
    assert np.allclose(exact.boxes, truth) and set(exact.confidences) == {1.0}


def test_oracle_misses_at_its_rate() -> None:
    oracle = OracleDetector.for_video(VIDEOS / "rommee.mp4", noise=Noise(miss_rate=0.2))
    seen = sum(len(oracle.at(i)) for i in range(len(oracle.frames)))
    total = sum(len(f) for f in oracle.frames)
    assert 0.75 < seen / total < 0.85


def test_oracle_refuses_frames_of_another_size() -> None:
    oracle = OracleDetector.for_video(VIDEOS / "sabra.mp4")
    with pytest.raises(OracleError, match=r"1280x720 but sabra\.truth\.jsonl describes 640x360"):
        oracle(np.zeros((720, 1280, 3), np.uint8))
    oracle.index = len(oracle.frames)
    with pytest.raises(OracleError, match="past the"):
        oracle(None)


def test_a_truth_file_with_a_gap_is_refused(tmp_path: Path) -> None:
    lines = truth_path_for(VIDEOS / "sabra.mp4").read_text().splitlines()
    broken = tmp_path / "x.truth.jsonl"
    broken.write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    with pytest.raises(OracleError, match="line 4 is not frame 2"):
        read_truth(broken)


@pytest.mark.parametrize("name", GAMES)
def test_every_item_is_laid_in_the_zone_it_is_read_from(name: str) -> None:
    """Shared melds in the meld area, a seat's items in its band, discards in the discard
    zone: the layout agrees with default_layout through the camera's calibration."""
    from tabletop.studio.synth.cards import random_design
    from tabletop.studio.synth.tiles import random_style

    scenario = load_scenario(SCENARIOS / f"{name}.json")
    zones = default_layout(scenario.variant.id, len(scenario.players), TABLE_MM)
    rng = np.random.default_rng(0)
    style, design = random_style(rng), random_design(rng)
    for step in scenario.steps:
        if not isinstance(step, TableStep) or not renderable(scenario, step):
            continue
        placed = layout_snapshot(scenario, step, style, design)
        shared = sum(len(m) for m in step.melds)
        seats = {s: sum(len(m) for m in rows) for s, rows in step.seats.items()}
        counts: dict[str, int] = {}
        for p in placed:
            zone = zones.zone_at(p.centre)
            assert zone is not None, p
            counts[zone.name] = counts.get(zone.name, 0) + 1
        assert counts.get("meld area", 0) == shared
        for seat, n in seats.items():
            assert counts.get(f"seat {seat}", 0) == n
        # a discard card's centre lies on the stock/discard line; its index is read below it
        assert counts.get("discards", 0) + counts.get("stock", 0) == len(step.discards)


def test_calibration_maps_the_table_corners() -> None:
    header, _ = read_truth(truth_path_for(VIDEOS / "rommee.mp4"))
    calibration = calibration_from(header)
    corners = calibration.to_table(header["image_corners"])
    assert np.allclose(corners, [[0, 0], [1000, 0], [1000, 600], [0, 600]], atol=1e-3)


@pytest.mark.parametrize("seed", [1, 3])
def test_missed_detections_do_not_delay_commits(seed: int) -> None:
    """A detector that misses each item in 4% of frames: an item unseen for a frame is not
    a hand over the table (live.watcher.MISSED_DETECTION_GRACE_S), so every commit still
    comes in its still window and the events stay the true ones.  (Without the grace
    these seeds lose a commit and the events diverge.)"""
    scenario = load_scenario(SCENARIOS / "sabra.json")
    harsh = Noise(miss_rate=0.04)
    replay = replay_video(VIDEOS / "sabra.mp4", scenario, noise=harsh, seed=seed)
    assert [_without_time(e) for e in replay.json_events()] == _expected("sabra")





def test_the_shipped_model_replays_the_sabra_video_to_the_true_events() -> None:
    """The whole pipeline with the trained detector in place of the oracle:
    the Sabra game's tiles (14 pixels wide at 640x360) are read well enough
    that tracking, stillness and reading give every true event.  (The Rommé
    video's card indices are not read well enough yet: see models/README.md.)"""
    from tabletop.vision.detector import Detector

    scenario = load_scenario(SCENARIOS / "sabra.json")
    replay = replay_video(VIDEOS / "sabra.mp4", scenario, detector=Detector(FINDER))
    assert [_without_time(e) for e in replay.json_events()] == _expected("sabra")
    scored = [e for e in replay.json_events() if e["type"] == "round_scored"]
    assert [e["scores"] for e in scored] == list(scenario.scores)


@pytest.fixture(scope="module")
def four_index_rommee(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Rommé game rendered with a deck printed in all four corners (seed 9 draws one at
    640x360), as most German Rommé decks are: laid melds show a second row of indices and
    a discard shows two or more."""
    from tabletop.studio.synth.scripted import VideoSettings, render_video

    video = tmp_path_factory.mktemp("four-index") / "rommee4.mp4"
    header = render_video(SCENARIOS / "rommee.json", video, VideoSettings(seed=9))
    assert header["seed"] == 9
    return video


def test_the_four_index_deck_video_really_shows_four_corners(four_index_rommee: Path) -> None:
    _, frames = read_truth(truth_path_for(four_index_rommee))
    last = [d.label for d in frames[-1]] if hasattr(frames[-1][0], "label") else [
        d["label"] for d in frames[-1]]
    # the last still table: every meld's cards show two indices or more in sight
    assert max(last.count(label) for label in set(last)) >= 4


@pytest.mark.parametrize("noise", [EXACT, Noise()], ids=["exact", "jitter-and-misses"])
def test_a_four_index_deck_replays_to_the_true_events(four_index_rommee: Path,
                                                       noise: Noise) -> None:
    scenario = load_scenario(SCENARIOS / "rommee.json")
    replay = replay_video(four_index_rommee, scenario, noise=noise, seed=3)
    assert [_without_time(e) for e in replay.json_events()] == _expected("rommee")


@needs("fonts")  # the deck seed 5 draws is one of the installed faces
def test_the_shipped_model_replays_a_four_index_rommee_game_through_its_first_melds(
        tmp_path: Path) -> None:
    """The Rommé game drawn at 1280x720 (seed 5 draws a four-index deck at that size) with
    the trained detector, the model on every frame: its first 23 events are the true ones
    (the first two turns: three melds read, a too-low initial meld warned and restored, two
    discards; the third turn's two melds and its opening); it then loses the ace of
    spades of a meld just laid while the next discard is laid."""
    from tabletop.studio.synth.scripted import VideoSettings, render_video
    from tabletop.vision.detector import Detector

    video = tmp_path / "rommee720.mp4"
    render_video(SCENARIOS / "rommee.json", video, VideoSettings(width=1280, height=720))
    scenario = load_scenario(SCENARIOS / "rommee.json")
    replay = replay_video(video, scenario, detector=Detector(FINDER))
    assert [_without_time(e) for e in replay.json_events()][:23] == _expected("rommee")[:23]
