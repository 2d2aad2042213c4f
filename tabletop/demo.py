"""``tabletop demo``: the main job on a bundled sample, no camera needed.

``tabletop demo`` plays the bundled sample video (``samples/videos/sabra.mp4``:
a Sabra round of three players, rendered at 640x360, 5 frames a second)
through the camera pipeline as ``tabletop run`` watches a camera: the video
source, the shipped detection model, the tracker and the watcher with the
table calibration the video was rendered with, the game.  The video carries
the button presses of its game (End turn, I'm out, Next round) at their times,
as the players pressed them.  The demo prints the events as the game reads
them from the frames, a status line while it works, and the scored round; it
exits 0 when the round was scored.

``tabletop demo --scripted`` plays two scripted games (Sabra and Rommé) as
sequences of committed snapshots and presses through the game, then scores
three sample matches with every variant rule.  ``--panel`` serves the web
panel and plays onto it (the video by default, the scripted games with
``--scripted``) on ``--port`` (default: the panel's, 8765); each game starts once
the panel answers and a page has opened its match, or after ``--wait-for-page``
seconds (default 30; 0: at once).
"""

from __future__ import annotations

import contextlib
import json
from importlib import resources
from typing import Any

from tabletop.engine.events import Event, RoundScored, event_to_json
from tabletop.engine.match import Match
from tabletop.engine.rounds import RoundInput, RoundResult, round_from_json, score_round
from tabletop.engine.variants import find_variant
from tabletop.live.events import describe_event

SAMPLES = ("remi-evening.json", "rommee-club.json", "sabra-kitchen.json")
SCENARIOS = ("sabra.json", "rommee.json")
SAMPLE_VIDEO = "sabra"
"""The bundled video the demo plays through the model.  The Rommé video's card indices
(11 pixels long at 640x360) are beyond the shipped model; the Sabra video is read right."""


def play_scenario(name: str) -> tuple[Any, list[Event]]:
    from tabletop.live.scenario import replay

    scenario = load_scenario_sample(name)
    _, events = replay(scenario)
    return scenario, events


def load_sample(name: str) -> dict[str, Any]:
    text = resources.files("tabletop").joinpath("samples", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def play_sample(data: dict[str, Any]) -> tuple[Match, list[tuple[RoundInput, RoundResult]]]:
    """Score every round of a sample and record it in a match."""
    variant = find_variant(data["variant"], data.get("options") or {})
    match = Match(
        variant,
        tuple(data["players"]),
        rounds_limit=data.get("rounds_limit"),
        target=data.get("target"),
    )
    results = []
    for raw in data["rounds"]:
        round_ = round_from_json(raw, variant)
        result = score_round(round_)
        match.record(result)
        results.append((round_, result))
    return match, results


def _print_match(
    data: dict[str, Any], match: Match, results: list[tuple[RoundInput, RoundResult]]
) -> None:
    penalty = match.variant.penalty_scoring
    print(f"== {data['title']} [{match.variant.id}]")
    for number, (round_, result) in enumerate(results, start=1):
        header = f"-- round {number}"
        if round_.pool_exhausted:
            header += ": the pool ran out"
            if result.winner:
                header += f", {result.winner} holds the least"
        elif result.winner:
            header += f": {result.winner} went out"
        if result.doubled:
            header += " (all points doubled)"
        print(header)
        for name, score in result.scores.items():
            shown = f"{-score:5d}" if penalty else f"{score:+5d}"
            print(f"   {name:<6} {shown}  " + "; ".join(result.details.get(name, [])))
        for problem in result.problems:
            print(f"   problem: {problem}")
    unit = "penalty points" if penalty else "points"
    print(f"-- standings after {match.rounds_played} rounds ({unit}):")
    for place, (name, total) in enumerate(match.standings(), start=1):
        print(f"   {place}. {name:<6} {(-total if penalty else total):5d}")
    if match.over:
        print(f"   winner: {match.winner or 'a draw'}")
    print()


DEFAULT_PAGE_WAIT_S = 30.0
"""How long ``demo --panel`` waits for a page to open before it plays anyway."""


def run_demo_with_panel(
    speed: float = 1.0,
    linger: bool = True,
    scripted: bool = False,
    port: int | None = None,
    wait_for_page: float = DEFAULT_PAGE_WAIT_S,
) -> int:
    """Serve the panel and play onto it at ``speed`` times the game's own pace, so the
    table, the turn and the scores move on the page as the game goes: the sample video
    through the model (the panel showing the camera's view), or with ``scripted`` the
    scripted games' snapshots.  Each game starts once the panel answers over HTTP and a
    page shows its match (at most ``wait_for_page`` seconds later), so a player who opens
    the printed address sees it from its first move."""
    import tempfile
    import time
    from pathlib import Path

    from tabletop.live.bus import EventBus
    from tabletop.live.game import Game
    from tabletop.live.scenario import apply_step, game_options
    from tabletop.panel.embed import start_panel
    from tabletop.panel.settings import PanelSettings

    names = SCENARIOS if scripted else (f"{SAMPLE_VIDEO}.json",)
    for name in names:
        scenario = load_scenario_sample(name)
        bus = EventBus()
        frame_path = Path(tempfile.mkdtemp(prefix="tabletop-demo-")) / "frame.jpg"
        panel = start_panel(
            bus,
            variant_id=scenario.variant.id,
            options=scenario.variant.options.as_dict(),
            players=scenario.players,
            name=f"demo: {scenario.variant.name}",
            settings=PanelSettings(frame_path=frame_path, port=port or PanelSettings().port),
        )
        _wait_until_answered(panel.url, panel.match_id)
        print(f"{scenario.variant.name}: open {panel.url} (playing at {speed}x)", flush=True)
        if wait_for_page > 0:
            print(
                f"the game starts when the page is open (at most {wait_for_page:g} s)",
                flush=True,
            )
            deadline = time.monotonic() + wait_for_page
            while (
                panel.service.hub.client_count(panel.match_id) == 0
                and time.monotonic() < deadline
            ):
                time.sleep(0.1)
        if scripted:
            game = Game(scenario.variant, scenario.players, bus, options=game_options(scenario))
            clock = 0.0
            for step in scenario.steps:
                time.sleep(max(0.0, (step.t - clock) / speed))
                clock = step.t
                apply_step(game, step)
        else:
            play_sample_video(bus, frame_path=frame_path, speed=speed)
        if linger and name == names[-1]:
            print("the demo has ended; the panel stays up (Ctrl-C to stop)", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                panel.thread.join()
        panel.stop()
    return 0


def _wait_until_answered(url: str, match_id: int, timeout: float = 10.0) -> None:
    """Until the panel serves the match's state over HTTP (its server thread has started;
    this is what a browser will ask first)."""
    import time
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}api/matches/{match_id}/state", timeout=2):
                return
        except (urllib.error.URLError, OSError) as error:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the panel at {url} does not answer: {error}") from None
            time.sleep(0.05)


def load_scenario_sample(name: str) -> Any:
    from tabletop.engine.scenario import scenario_from_json

    text = resources.files("tabletop").joinpath("samples", "scenarios", name).read_text("utf-8")
    return scenario_from_json(json.loads(text))


def sample_video_path() -> str:
    return str(resources.files("tabletop").joinpath("samples", "videos", f"{SAMPLE_VIDEO}.mp4"))


def play_sample_video(bus: Any, *, frame_path: Any = None, speed: float | None = None,
                      status: Any = None, model: str | None = None) -> Any:
    """The sample video through the camera pipeline with the shipped model (or ``model``);
    every event goes to ``bus``.  ``speed``: pace the frames at that many times the video's
    clock (None: as fast as the model reads).  ``status``: a
    :class:`tabletop.live.status.StatusLine` told of every frame.  Returns the
    :class:`tabletop.live.oracle.Replay`."""
    import importlib
    import time

    from tabletop.live.oracle import replay_video
    from tabletop.live.run import FrameWriter

    scenario = load_scenario_sample(f"{SAMPLE_VIDEO}.json")
    # imported by name, as tabletop.commands_vision does: the type checker stays out of the
    # model adapter's optional backends
    # the live pipeline's detector: the model looks only where the table changed
    detector = importlib.import_module("tabletop.vision.incremental").IncrementalDetector(
        importlib.import_module("tabletop.vision.detector").Detector(model))
    write_frame = FrameWriter(frame_path) if frame_path is not None else None
    started = time.monotonic()

    class Detect:
        """The detector, telling the status line of each frame."""

        def __call__(self, image: Any) -> Any:
            detections = detector(image)
            if status is not None:
                status.on_frame(len(detections))
            return detections

        set_time = staticmethod(detector.set_time)
        settling = staticmethod(detector.settling)

    detect = Detect()

    def on_frame(t: float, image: Any) -> None:
        if write_frame is not None:
            write_frame(t, image)
        if speed:
            time.sleep(max(0.0, started + t / speed - time.monotonic()))

    return replay_video(sample_video_path(), scenario, on_frame=on_frame, bus=bus,
                        detector=detect)


def run_demo_video(as_json: bool = False, quiet: bool = False) -> int:
    """``tabletop demo``: the sample video through the model to a scored round."""
    import sys

    from tabletop.live.bus import EventBus
    from tabletop.live.status import StatusLine

    scenario = load_scenario_sample(f"{SAMPLE_VIDEO}.json")
    players = scenario.players
    bus = EventBus()
    status = None if quiet or as_json else StatusLine(players, sys.stderr, event_notices=False)
    scored: list[Event] = []

    def show(event: Event) -> None:
        if isinstance(event, RoundScored):
            scored.append(event)
        if as_json:
            print(json.dumps(event_to_json(event), ensure_ascii=False), flush=True)
            return
        line = describe_event(event, players)
        if line is None:
            return
        text = f"   t={event.t:5.1f}  {line}"
        if status is not None:
            status.write_above(text, sys.stdout)
        else:
            print(text, flush=True)

    bus.subscribe(show)
    if status is not None:
        bus.subscribe(status.on_event)
    if not as_json:
        print(f"== {scenario.variant.name}, {', '.join(players)}: the sample video "
              f"{SAMPLE_VIDEO}.mp4 through the camera pipeline and the shipped model", flush=True)
        print("   (the presses recorded with the video end the turns and the round)", flush=True)
    if status is not None:
        status.start()
    try:
        replay = play_sample_video(bus, status=status)
    finally:
        if status is not None:
            status.stop()
    if status is not None:
        print(f"tabletop: {status.summary()}".replace("\n", "\ntabletop: "), file=sys.stderr)
    if not scored:
        print(f"tabletop: error: no round was scored in {replay.frames} frames", file=sys.stderr)
        return 1
    return 0


def run_demo_scripted(as_json: bool = False) -> int:
    outputs: list[dict[str, Any]] = []
    for name in SCENARIOS:
        scenario, events = play_scenario(name)
        if as_json:
            outputs.append({"scenario": name, "events": [event_to_json(e) for e in events]})
            continue
        players = scenario.players
        print(f"== live table: {scenario.variant.name}, {', '.join(players)} (scripted snapshots)")
        for event in events:
            line = describe_event(event, players)
            if line:
                print(f"   t={event.t:5.1f}  {line}")
        print()
    for name in SAMPLES:
        data = load_sample(name)
        match, results = play_sample(data)
        if as_json:
            outputs.append(
                {
                    "sample": name,
                    "rounds": [result.to_json() for _, result in results],
                    "match": match.to_json(),
                }
            )
        else:
            _print_match(data, match, results)
    if as_json:
        print(json.dumps(outputs, ensure_ascii=False))
    return 0
