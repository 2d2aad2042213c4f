"""Panel settings, from the environment (``TABLETOP_PANEL_*``) or the command line."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tabletop.paths import matches_database_url


class PanelSettings(BaseSettings):
    """``TABLETOP_PANEL_DATABASE_URL``, ``TABLETOP_PANEL_HOST``, ... override the defaults."""

    model_config = SettingsConfigDict(env_prefix="TABLETOP_PANEL_", extra="ignore")

    database_url: str = Field(default_factory=matches_database_url)
    """Any SQLAlchemy URL; ``postgresql+psycopg://user@server/db`` for a club server.
    By default ``matches.sqlite3`` in the user's data folder (live/paths.py), which
    is only created when no URL is given."""
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535)] = 8765
    token: str | None = None
    """Needed (header ``X-Panel-Token`` or ``?token=``) for every change when set."""
    match_id: int | None = None
    """The match the pages open; the newest when unset."""
    turn_seconds: Annotated[int, Field(ge=5, le=3600)] = 120
    frame_path: Path | None = None
    """A JPEG the live table overwrites with its latest frame; none: no camera image."""
    allowed_hosts: list[Annotated[str, Field(max_length=253)]] = []
    """Names besides this machine's own that the panel answers to (a name a router hands
    out, a club's server name); addresses written as numbers are always answered."""
    lang: Literal["de", "en", "ro"] | None = None
    """The pages' language; unset: the best of each browser's Accept-Language."""
    max_body_bytes: Annotated[int, Field(ge=1024, le=16 * 1024 * 1024)] = 256 * 1024
    """Larger request bodies are refused before they are read."""
    hint_workers: Annotated[int, Field(ge=1, le=64)] = Field(
        default_factory=lambda: os.cpu_count() or 2)
    """Hints worked out at once (one a core: the optimiser's search runs in parallel)."""
    hint_waiting: Annotated[int, Field(ge=0, le=1000)] = 16
    """Hints that may wait for a worker; more are refused at once (503)."""

    def served_names(self) -> set[str]:
        """The host names the panel answers to (see :mod:`tabletop.panel.guards`)."""
        names = {"localhost", *(name.lower() for name in self.allowed_hosts)}
        if self.host not in ("0.0.0.0", "::", ""):
            names.add(self.host.lower())
        if self.on_network:
            machine = socket.gethostname().lower()
            names |= {machine, f"{machine}.local", socket.getfqdn().lower()}
        return names

    @property
    def on_network(self) -> bool:
        """True unless the panel listens on a loopback address only."""
        if self.host == "localhost":
            return False
        try:
            return not ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return True

    @property
    def token_required(self) -> bool:
        return self.token is not None or self.on_network
