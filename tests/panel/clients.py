"""The panel as its tests open it: the real app on a SQLite file, through Starlette's
client under an address the panel serves (its own checks refuse TestClient's default
host name, ``testserver``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tabletop.panel.app import create_app
from tabletop.panel.settings import PanelSettings

PANEL_URL = "http://127.0.0.1:8765"


def panel_client(tmp_path: Path, **settings: Any) -> TestClient:
    """A client of a new panel keeping its matches in ``tmp_path``."""
    config = PanelSettings(database_url=f"sqlite:///{tmp_path / 'panel.db'}", **settings)
    return TestClient(create_app(config), base_url=PANEL_URL)
