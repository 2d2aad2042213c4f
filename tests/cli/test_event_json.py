"""The event JSON a person gets is the same, byte for byte, as the files in tests/data/events
that the commands wrote before the events became typed values: the demo, the scripted demo,
``tabletop run`` on both sample scenarios and both sample videos, and a match the panel
stored from the same game."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tabletop.engine.events import event_from_json
from tabletop.live.bus import EventBus
from tabletop.live.scenario import load_scenario, replay
from tabletop.panel.service import PanelService
from tabletop.panel.store import EventStore
from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]
WRITTEN = REPO / "tests" / "data" / "events"
SAMPLES = REPO / "tabletop" / "samples"


def _players(game: str) -> str:
    header = json.loads((SAMPLES / "videos" / f"{game}.truth.jsonl").read_text().splitlines()[0])
    return ",".join(header["players"])


def _tabletop(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "tabletop", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("flags", [["--json"], ["--scripted", "--json"]])
def test_the_demo_prints_the_same_events(flags: list[str]) -> None:
    name = "demo-scripted.jsonl" if "--scripted" in flags else "demo.jsonl"
    assert _tabletop("demo", *flags) == (WRITTEN / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("game", "source"),
    [("sabra", "scenario"), ("rommee", "scenario"), ("sabra", "video"), ("rommee", "video")],
)
def test_a_run_writes_the_same_events_file(tmp_path: Path, game: str, source: str) -> None:
    where = (f"scenario:{SAMPLES / 'scenarios' / f'{game}.json'}" if source == "scenario"
             else str(SAMPLES / "videos" / f"{game}.mp4"))
    out = tmp_path / "events.jsonl"
    _tabletop("run", "--source", where, "--variant", game, "--players", _players(game),
              "--headless", "--events-jsonl", str(out))
    assert out.read_bytes() == (WRITTEN / f"{source}-{game}.jsonl").read_bytes()


@pytest.mark.parametrize("game", ["sabra", "rommee"])
def test_the_panel_stores_the_same_events(tmp_path: Path, game: str) -> None:
    service = PanelService(EventStore(f"sqlite:///{tmp_path / 'p.db'}"))
    match_id = service.store.create_match("golden").id
    bus = EventBus()
    service.attach(bus, match_id)
    replay(load_scenario(SAMPLES / "scenarios" / f"{game}.json"), bus)
    written = [json.loads(line) for line in
               (WRITTEN / f"scenario-{game}.jsonl").read_text(encoding="utf-8").splitlines()]
    stored = [stored.event for stored in service.store.events(match_id)]
    assert stored == written
    # and every stored event reads back into the value the game published
    assert [event_from_json(event) for event in stored] == [
        event_from_json(event) for event in written]
