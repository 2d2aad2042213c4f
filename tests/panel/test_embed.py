"""The panel beside the live game: a scripted game's events reach the real server's API."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path

from tabletop.live.bus import EventBus
from tabletop.live.scenario import load_scenario, replay
from tabletop.panel.embed import start_panel
from tabletop.panel.settings import PanelSettings
from tests.shared import SCENARIOS


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_game_events_reach_the_served_panel(tmp_path: Path) -> None:
    scenario = load_scenario(SCENARIOS / "sabra.json")
    bus = EventBus()
    settings = PanelSettings(
        database_url=f"sqlite:///{tmp_path / 'matches.sqlite3'}", port=free_port()
    )
    panel = start_panel(
        bus,
        variant_id=scenario.variant.id,
        options=scenario.variant.options.as_dict(),
        players=scenario.players,
        name="sabra demo",
        settings=settings,
    )
    try:
        replay(scenario, bus)
        url = f"http://127.0.0.1:{settings.port}/api/matches/{panel.match_id}/state"
        with urllib.request.urlopen(url, timeout=5) as response:
            state = json.load(response)
        # the round the game scored (zero-sum Sabra: Ana +69, Ben -45, Cem -24) is the panel's
        assert state["setup"]["players"] == list(scenario.players)
        assert [r["scores"] for r in state["rounds"]] == list(scenario.scores)
        assert state["match_over"]
    finally:
        panel.stop()
