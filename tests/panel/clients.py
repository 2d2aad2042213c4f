"""The panel as its tests open it: the real app on a SQLite file, through Starlette's
client under an address the panel serves (its own checks refuse TestClient's default
host name, ``testserver``); and a page's copy of a match fed by the live WebSocket."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tabletop.panel import patch
from tabletop.panel.app import create_app
from tabletop.panel.settings import PanelSettings

PANEL_URL = "http://127.0.0.1:8765"


def panel_client(tmp_path: Path, **settings: Any) -> TestClient:
    """A client of a new panel keeping its matches in ``tmp_path``."""
    config = PanelSettings(database_url=f"sqlite:///{tmp_path / 'panel.db'}", **settings)
    return TestClient(create_app(config), base_url=PANEL_URL)


class Follower:
    """A page's copy of a match fed by the live WebSocket (panel/routers/live.py): the
    whole state first, then each patch applied to the version held, as the page does."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.state: dict[str, Any] | None = None
        self.wholes = 0
        self.patches = 0
        self.skipped = 0
        """Patches that spanned more than one push (the page was sent only the newest)."""

    def take(self, message: str | bytes | dict[str, Any]) -> dict[str, Any]:
        """The state after ``message`` (its text, or as TestClient's ``receive_json``)."""
        push = message if isinstance(message, dict) else json.loads(message)
        if "state" in push:
            self.version, self.state = push["version"], push["state"]
            self.wholes += 1
        else:
            assert push["base"] == self.version, f"{push['base']} patched, {self.version} held"
            self.state = patch.apply(self.state, push["patch"])
            if push_number(push["version"]) > push_number(push["base"]) + 1:
                self.skipped += 1
            self.version = push["version"]
            self.patches += 1
        assert self.state is not None
        return self.state


def push_number(version: str) -> int:
    """The feed's count of pushes in a version (``"<last_id>.<n>"``)."""
    return int(version.rsplit(".", 1)[1])
