"""The players' profiles (GET /api/players, GET /api/players/{name}), computed from every
match in the store, on SQLite and on a real PostgreSQL (a throwaway cluster; skipped
where Debian's ``postgresql`` is not installed)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from tabletop.panel.app import create_app
from tabletop.panel.settings import PanelSettings
from tests.panel.postgres import throwaway_cluster

PANEL_URL = "http://127.0.0.1:8765"


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with throwaway_cluster() as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[str]:
    """An empty store's URL: an SQLite file, or a new database on the cluster."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'matches.sqlite3'}"
        return
    server: str = request.getfixturevalue("postgres_url")
    name = f"players_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield server.rsplit("/", 1)[0] + f"/{name}"
    admin.dispose()


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    app = create_app(PanelSettings(database_url=database_url))
    with TestClient(app, base_url=PANEL_URL) as client:
        yield client
    app.state.service.store.close()


def _match(client: TestClient, name: str, variant: str, players: list[str], **setup: Any) -> int:
    match_id = int(client.post("/api/matches", json={"name": name}).json()["id"])
    body = {"who": "Ana", "variant": variant, "players": players, **setup}
    assert client.post(f"/api/matches/{match_id}/setup", json=body).status_code == 201
    return match_id


def _round(client: TestClient, match_id: int, *players: dict[str, Any]) -> None:
    entry = {"who": "Ana", "players": list(players)}
    response = client.post(f"/api/matches/{match_id}/rounds", json=entry)
    assert response.status_code == 201, response.text


def _history(client: TestClient) -> dict[str, int]:
    friday = _match(client, "Friday", "sabra", ["Ana", "Ben", "Cem"], rounds_limit=2)
    # Sabra is zero-sum: Ana +30, Ben -10, Cem -20; then Ben +12, Ana -5, Cem -7
    _round(
        client,
        friday,
        {"name": "Ana", "out": True},
        {"name": "Ben", "points": 10},
        {"name": "Cem", "points": 20},
    )
    _round(
        client,
        friday,
        {"name": "Ana", "points": 5},
        {"name": "Ben", "out": True},
        {"name": "Cem", "points": 7},
    )
    saturday = _match(client, "Saturday", "rommee", ["Ana", "Dan"])
    # Rommé: "so viele Schlechtpunkte, wie sie noch an Augen in der Hand halten"
    _round(client, saturday, {"name": "Ana", "points": 12}, {"name": "Dan", "out": True})
    sunday = _match(client, "Sunday", "sabra", ["Ben", "Dan"])
    client.post("/api/matches", json={"name": "never set up"})
    return {"friday": friday, "saturday": saturday, "sunday": sunday}


def test_profiles_add_up_every_match(client: TestClient) -> None:
    _history(client)
    updated = {m["name"]: m["updated_at"] for m in client.get("/api/matches").json()}
    profiles = client.get("/api/players").json()
    assert profiles == [
        {
            "name": "Ana",
            "matches": 2,
            "finished": 1,
            "wins": 1,  # Friday: 25 against 2 and -27
            "rounds": 3,
            # point games and penalty games are not added together: Sabra's +30 and -5
            # apart from Rommé's 12 penalty points (fewer is better)
            "average_per_round": 12.5,
            "best_round": 30,
            "penalty_rounds": 1,
            "penalty_average_per_round": 12.0,
            "fewest_penalty_points": 12,
            "last_played": updated["Saturday"],
        },
        {
            "name": "Ben",
            "matches": 2,
            "finished": 1,
            "wins": 0,
            "rounds": 2,
            "average_per_round": 1.0,
            "best_round": 12,
            "penalty_rounds": 0,
            "penalty_average_per_round": None,
            "fewest_penalty_points": None,
            "last_played": updated["Sunday"],
        },
        {
            "name": "Cem",
            "matches": 1,
            "finished": 1,
            "wins": 0,
            "rounds": 2,
            "average_per_round": -13.5,
            "best_round": -7,
            "penalty_rounds": 0,
            "penalty_average_per_round": None,
            "fewest_penalty_points": None,
            "last_played": updated["Friday"],
        },
        {
            "name": "Dan",
            "matches": 2,
            "finished": 0,
            "wins": 0,
            "rounds": 1,
            "average_per_round": 0.0,
            "best_round": None,
            "penalty_rounds": 1,
            "penalty_average_per_round": 0.0,
            "fewest_penalty_points": 0,
            "last_played": updated["Sunday"],
        },
    ]


def test_one_profile_lists_the_matches_newest_first(client: TestClient) -> None:
    ids = _history(client)
    ana = client.get("/api/players/Ana").json()
    assert ana["wins"] == 1 and ana["rounds"] == 3
    played = ana["matches_played"]
    assert [m["match_id"] for m in played] == [ids["saturday"], ids["friday"]]
    assert played[0] == {
        "match_id": ids["saturday"],
        "name": "Saturday",
        "variant": "rommee",
        "variant_name": played[0]["variant_name"],
        "total": 12,  # penalty points, as the players count them
        "penalty": True,
        "won": False,
        "finished": False,
        "created_at": played[0]["created_at"],
    }
    assert played[1]["total"] == 25 and played[1]["won"] and played[1]["finished"]
    assert played[0]["created_at"] > played[1]["created_at"]
    dan = client.get("/api/players/Dan").json()
    assert [(m["name"], m["total"]) for m in dan["matches_played"]] == [
        ("Sunday", 0),
        ("Saturday", 0),
    ]
    for unknown in ("Zed", "ana"):
        response = client.get(f"/api/players/{unknown}")
        assert response.status_code == 404
        assert response.json()["detail"] == f"no player named {unknown!r} in any match"


def test_profiles_follow_an_edited_round(client: TestClient) -> None:
    ids = _history(client)
    # Friday's second round entered again: Cem went out, Ana 40, Ben 3
    entry = {
        "who": "Cem",
        "players": [
            {"name": "Ana", "points": 40},
            {"name": "Ben", "points": 3},
            {"name": "Cem", "out": True},
        ],
    }
    assert client.put(f"/api/matches/{ids['friday']}/rounds/2", json=entry).status_code == 201
    cem = client.get("/api/players/Cem").json()
    # Cem: -20 then +43; Friday ends Ana -10, Ben -13, Cem 23
    assert (cem["best_round"], cem["average_per_round"], cem["wins"]) == (43, 11.5, 1)
    assert client.get("/api/players/Ana").json()["wins"] == 0


def test_no_matches_no_players(client: TestClient) -> None:
    assert client.get("/api/players").json() == []
