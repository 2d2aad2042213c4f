"""Names and option values as a fuzzer (or a careless keyboard) sends them: control
characters refused in one line on SQLite and PostgreSQL alike, any printable player name
has its profile, and an option of the wrong kind is explained in words."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tabletop.engine.variants import find_variant
from tabletop.panel.app import create_app
from tabletop.panel.settings import PanelSettings
from tests.panel.clients import PANEL_URL, panel_client
from tests.panel.postgres import throwaway_cluster


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with throwaway_cluster() as url:
        yield url


def _detail(answer: Any) -> str:
    detail = answer.json()["detail"]
    return detail if isinstance(detail, str) else "; ".join(item["msg"] for item in detail)


CONTROL_NAMES = ["Fri\x00day", "Friday\x07", "Fri\nday", "Fri\x1bday", "Fri\x85day"]


@pytest.mark.parametrize("name", CONTROL_NAMES)
def test_a_match_name_with_a_control_character_is_refused(tmp_path: Path, name: str) -> None:
    with panel_client(tmp_path) as client:
        answer = client.post("/api/matches", json={"name": name})
        assert answer.status_code == 422, answer.text
        assert "no control characters" in _detail(answer)
        assert client.get("/api/matches").json() == []


def test_a_match_name_with_nul_is_refused_on_postgresql(postgres_url: str) -> None:
    app = create_app(PanelSettings(database_url=postgres_url))
    with TestClient(app, base_url=PANEL_URL) as client:
        answer = client.post("/api/matches", json={"name": "Fri\x00day"})
        assert answer.status_code == 422, answer.text
        assert "no control characters" in _detail(answer)
        assert client.post("/api/matches", json={"name": "Friday"}).status_code == 201


@pytest.mark.parametrize(
    "body",
    [
        {"who": "Ana\x00", "variant": "sabra", "players": ["Ana", "Ben"]},
        {"who": "Ana", "variant": "sabra", "players": ["A\x00na", "Ben"]},
    ],
)
def test_a_player_or_who_with_a_control_character_is_refused(
    client: TestClient, body: dict[str, Any]
) -> None:
    match_id = client.post("/api/matches", json={"name": "Friday"}).json()["id"]
    answer = client.post(f"/api/matches/{match_id}/setup", json=body)
    assert answer.status_code == 422, answer.text
    assert "no control characters" in _detail(answer)


# (a name with "%" is left out: Starlette's test client decodes the path twice)
@pytest.mark.parametrize("name", ["Ana/Ben", "Ana?Ben", "Ana#1", "Zoë & Ben", "a/../b", "/Ana/"])
def test_every_player_of_a_match_has_a_profile(client: TestClient, name: str) -> None:
    match_id = client.post("/api/matches", json={"name": "Friday"}).json()["id"]
    setup = client.post(f"/api/matches/{match_id}/setup",
                        json={"who": "Ana", "variant": "sabra", "players": [name, "Cem"]})
    assert setup.status_code == 201, setup.text
    listed = [player["name"] for player in client.get("/api/players").json()]
    assert name in listed
    profile = client.get(f"/api/players/{quote(name, safe='')}")
    assert profile.status_code == 200, profile.text
    assert profile.json()["name"] == name


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"initial_meld": True}, "takes a whole number, not True"),
        ({"initial_meld": "lots"}, "takes a whole number, not 'lots'"),
    ],
)
def test_an_option_of_the_wrong_kind_is_explained_in_words(
    client: TestClient, options: dict[str, Any], words: str
) -> None:
    match_id = client.post("/api/matches", json={"name": "Friday"}).json()["id"]
    answer = client.post(f"/api/matches/{match_id}/setup", json={
        "who": "Ana", "variant": "rommee", "players": ["Ana", "Ben"], "options": options})
    state = client.get(f"/api/matches/{match_id}/state").json()
    said = _detail(answer) if answer.status_code == 422 else "; ".join(state["problems"])
    assert words in said, said
    assert " int" not in said and "bool" not in said


@pytest.mark.parametrize(
    ("value", "words"),
    [({"a": 1}, "takes a whole number, not {'a': 1}"), ([30], "takes a whole number, not [30]"),
     (30, "takes true or false, not 30")],
)
def test_the_engines_option_message_names_the_kind_in_words(value: Any, words: str) -> None:
    """What the panel and the command line show for a setup read from a file."""
    option = "initial_meld" if words.startswith("takes a whole") else "rearrange_on_opening_turn"
    variant = "rommee" if option == "initial_meld" else "sabra"
    with pytest.raises(ValueError, match="option") as refused:
        find_variant(variant, {option: value})
    assert f"option {option!r} of {variant} {words}" == str(refused.value)
