"""Fixtures of the panel's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.panel.clients import panel_client


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    """A new panel with its own database (files that need other settings define theirs)."""
    with panel_client(tmp_path) as client:
        yield client
