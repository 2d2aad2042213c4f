"""``tabletop demo``: the live table and the scorer on bundled samples, no camera needed.

First the live table: two scripted games (Sabra and Rommé), each a sequence
of committed table snapshots and button presses as the camera side would
hand them over, go through the game (live.game) exactly as ``tabletop run``
drives it; the demo prints the events as they are published: turns, melds,
the initial-meld value as it grows, warnings with a failed rearrangement's
penalty, the round scored.  Then three sample matches as a score keeper
would note them (per round, what each player laid and still held) are
scored with every variant rule and the match standings kept.  (Once the
detector is trained, the demo plays a rendered video instead.)
"""

from __future__ import annotations

import contextlib
import json
from importlib import resources
from typing import Any

from engine.match import Match
from engine.rounds import RoundInput, RoundResult, round_from_json, score_round
from engine.variants import find_variant

SAMPLES = ("remi-evening.json", "rommee-club.json", "sabra-kitchen.json")
SCENARIOS = ("sabra.json", "rommee.json")


def describe_event(event: dict[str, Any], players: tuple[str, ...]) -> str | None:
    """One readable line for an event (None for the ones a person need not see)."""
    who = players[event["seat"]] if isinstance(event.get("seat"), int) else ""
    kind = event["type"]
    if kind == "turn_started":
        return f"{who}'s turn"
    if kind == "meld_laid":
        return f"{who} lays {event['meld']}"
    if kind == "item_added":
        return f"{who} adds {' '.join(event['items'])} to {event['meld']}"
    if kind == "table_rearranged":
        return f"{who} rebuilds the table: {' | '.join(event['after'])}"
    if kind == "joker_exchanged":
        return f"{who} exchanges a joker: {event['meld']}"
    if kind == "initial_meld_progress":
        verdict = "enough to open" if event["meets"] else "not enough yet"
        return f"{who}'s opening is worth {event['value']} of {event['required']}: {verdict}"
    if kind == "warning":
        return f"WARNING {event['message']}"
    if kind in ("discard_taken", "item_discarded"):
        items = event.get("items") or [event.get("item")]
        verb = "takes the discard" if kind == "discard_taken" else "discards"
        return f"{who} {verb} {' '.join(map(str, items))}"
    if kind == "player_out":
        return f"{who} goes out"
    if kind == "round_scored":
        return "round scored: " + ", ".join(f"{n} {v:+d}" for n, v in event["scores"].items())
    if kind == "match_over":
        return f"match over, winner {event['winner']}"
    return None


def play_scenario(name: str) -> tuple[Any, list[dict[str, Any]]]:
    from live.scenario import replay, scenario_from_json

    text = resources.files("tabletop").joinpath("samples", "scenarios", name).read_text("utf-8")
    scenario = scenario_from_json(json.loads(text))
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


def run_demo_with_panel(speed: float = 4.0, linger: bool = True, video: bool = False) -> int:
    """Serve the panel and play the games at ``speed`` times their own pace, so the table,
    the turn and the scores move on the page as the game goes.

    ``video``: play the rendered sample videos through the camera pipeline (source,
    tracker, watcher, game), the panel showing the camera's view; until a detector is
    trained, the videos' ground-truth boxes (with jitter and misses) stand in for it.
    Needs the vision extra (OpenCV).  Otherwise the scripted snapshots are played."""
    import tempfile
    import time
    from pathlib import Path

    from live.bus import EventBus
    from live.game import Game
    from live.scenario import apply_step, scenario_from_json
    from panel.embed import start_panel
    from panel.settings import PanelSettings

    for name in SCENARIOS:
        text = resources.files("tabletop").joinpath("samples", "scenarios", name).read_text("utf-8")
        scenario = scenario_from_json(json.loads(text))
        bus = EventBus()
        frame_path = Path(tempfile.mkdtemp(prefix="tabletop-demo-")) / "frame.jpg"
        panel = start_panel(
            bus,
            variant_id=scenario.variant.id,
            options=scenario.variant.options,
            players=scenario.players,
            name=f"demo: {scenario.variant.name}",
            settings=PanelSettings(frame_path=frame_path) if video else None,
        )
        print(f"{scenario.variant.name}: open {panel.url} (playing at {speed}x)", flush=True)
        if video:
            _play_video(name, scenario, bus, frame_path, speed)
        else:
            game = Game(scenario.variant, scenario.players, bus, options=scenario.options)
            clock = 0.0
            for step in scenario.steps:
                time.sleep(max(0.0, (step.t - clock) / speed))
                clock = step.t
                apply_step(game, step)
        if linger and name == SCENARIOS[-1]:
            print("the demo has ended; the panel stays up (Ctrl-C to stop)", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                panel.thread.join()
        panel.stop()
    return 0


def _play_video(name: str, scenario: Any, bus: Any, frame_path: Any, speed: float) -> None:
    import time

    from live.oracle import replay_video
    from live.run import FrameWriter

    video = resources.files("tabletop").joinpath("samples", "videos", name.replace(".json", ".mp4"))
    write_frame = FrameWriter(frame_path)
    started = time.monotonic()

    def paced(t: float, image: Any) -> None:
        write_frame(t, image)
        time.sleep(max(0.0, started + t / speed - time.monotonic()))

    replay_video(str(video), scenario, on_frame=paced, bus=bus)


def run_demo(as_json: bool = False) -> int:
    outputs: list[dict[str, Any]] = []
    for name in SCENARIOS:
        scenario, events = play_scenario(name)
        if as_json:
            outputs.append({"scenario": name, "events": events})
            continue
        players = scenario.players
        print(f"== live table: {scenario.variant.name}, {', '.join(players)} (scripted snapshots)")
        for event in events:
            line = describe_event(event, players)
            if line:
                print(f"   t={event['t']:5.1f}  {line}")
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
