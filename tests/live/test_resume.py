"""`tabletop run --resume`: a run that was stopped (a crash, a closed laptop) goes on with
its match in the panel's store, from the next round, instead of starting a new match."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tabletop.panel.store import EventStore, sqlite_url
from tests.shared import REPO, SCENARIOS, scaled, with_default_interrupt

PLAYERS = "Ana,Ben,Cem"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _endless(folder: Path) -> Path:
    """The scripted Sabra round in a match with no end of its own: the sample's game ends
    its match after that round (and says so, match_over), and a match that is over is
    not gone on with."""
    scenario = json.loads((SCENARIOS / "sabra.json").read_text(encoding="utf-8"))
    del scenario["game"]["rounds_limit"]
    path = folder / "sabra-endless.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    return path


def _play(data: Path, *extra: str, scenario: Path = SCENARIOS / "sabra.json") -> str:
    """One sitting: the scripted Sabra round through `tabletop run` with its panel, ended
    with Ctrl-C once the source is over, as a person ends it; its stderr."""
    env = {**os.environ, "TABLETOP_DATA_DIR": str(data)}
    command = [sys.executable, "-m", "tabletop", "-q", "run", "--source",
               f"scenario:{scenario}", "--variant", "sabra",
               "--players", PLAYERS, "--port", str(_free_port()), *extra]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=with_default_interrupt)
    lines = []
    deadline = time.monotonic() + scaled(120)
    assert process.stderr is not None
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
        if "the source has ended" in line:
            process.send_signal(signal.SIGINT)
            break
    try:
        process.wait(scaled(30))
    finally:
        process.kill()
    return "".join(lines)


def _rounds(data: Path) -> dict[int, list[dict[str, object]]]:
    store = EventStore(sqlite_url(str(data / "matches.sqlite3")))
    try:
        return {info.id: [stored.event for stored in store.events(info.id)
                          if stored.type in ("round_scored", "turn_started")]
                for info in store.matches()}
    finally:
        store.close()


def test_a_stopped_match_goes_on_from_its_next_round(tmp_path: Path) -> None:
    scenario = _endless(tmp_path)
    first = _play(tmp_path, scenario=scenario)
    assert "going on with" not in first
    (match_id, events), = _rounds(tmp_path).items()
    assert sum(e["type"] == "round_scored" for e in events) == 1

    again = _play(tmp_path, "--resume", scenario=scenario)
    assert f"going on with match {match_id} from round 2" in again
    played = _rounds(tmp_path)
    assert list(played) == [match_id]  # no second match
    later = played[match_id][len(events):]
    assert later and all(e["round"] == 2 for e in later)
    # the second round begins with the next player (Sabra passes to the left)
    assert later[0]["type"] == "turn_started" and later[0]["seat"] == 1


def _seqs(data: Path) -> list[int]:
    store = EventStore(sqlite_url(str(data / "matches.sqlite3")))
    try:
        (info,) = store.matches()
        return [stored.event["seq"] for stored in store.events(info.id) if "seq" in stored.event]
    finally:
        store.close()


def test_a_resumed_match_numbers_its_events_on(tmp_path: Path) -> None:
    scenario = _endless(tmp_path)
    _play(tmp_path, scenario=scenario)
    first = _seqs(tmp_path)
    assert first == list(range(1, len(first) + 1))
    _play(tmp_path, "--resume", scenario=scenario)
    # one match, its events numbered 1, 2, ... across both sittings
    both = _seqs(tmp_path)
    assert len(both) > len(first) and both == list(range(1, len(both) + 1))


def test_resume_with_no_match_to_go_on_with_begins_a_new_one(tmp_path: Path) -> None:
    said = _play(tmp_path, "--resume")
    assert "no unfinished match of these players: a new one begins" in said
    assert len(_rounds(tmp_path)) == 1


def test_resume_needs_the_panels_store(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tabletop", "run", "--source", str(tmp_path), "--variant",
         "sabra", "--players", PLAYERS, "--headless", "--resume"],
        cwd=REPO, capture_output=True, text=True, timeout=scaled(60),
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "leave out --headless" in done.stderr
