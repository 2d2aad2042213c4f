"""Fixtures of the panel's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.panel.clients import panel_client


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """A new panel with its own database (files that need other settings define theirs)."""
    with panel_client(tmp_path) as client:
        yield client


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, through Playwright (no browser download)."""
    from playwright import sync_api

    from tests.shared import CHROMIUM

    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        yield chromium
        chromium.close()
