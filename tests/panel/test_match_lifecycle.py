"""Ending, deleting and playing a match again through the API, and which match a page opened
without ``?match=`` shows (issue 45, items 1, 8 and 14)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tabletop.live.bus import EventBus
from tabletop.live.corrections import inbox_for
from tabletop.panel.events import MatchSetUp
from tests.panel.clients import panel_client
from tests.panel.test_matches_list import _match, _round, _state


def test_an_open_match_is_ended_where_it_stands(client: TestClient) -> None:
    match_id = _match(client, "camera run", rounds_limit=5)
    _round(client, match_id, "Ben", 12)
    ended = client.post(f"/api/matches/{match_id}/close", json={"who": "Cem"})
    assert ended.status_code == 201 and ended.json()["type"] == "match_closed"
    state = _state(client, match_id)
    assert (state["result"]["over"], state["result"]["winner"]) == (True, "Ben")
    assert state["result"]["closed"]["who"] == "Cem"
    assert state["match"]["over"] and state["live"]["phase"] == "over"
    assert state["corrections"][0]["type"] == "match_closed"
    listed = {m["id"]: m for m in client.get("/api/matches").json()}
    assert (listed[match_id]["status"], listed[match_id]["winner"]) == ("finished", "Ben")
    # over: no round is entered, and it is not ended twice
    entry = {"who": "Ana", "players": [{"name": "Ana", "out": True}, {"name": "Ben", "points": 1}]}
    assert client.post(f"/api/matches/{match_id}/rounds", json=entry).status_code == 422
    again = client.post(f"/api/matches/{match_id}/close", json={"who": "Cem"})
    assert again.status_code == 409
    assert again.json()["detail"] == f"match {match_id} is already over"
    # taken back like any change: open again
    assert client.post(f"/api/matches/{match_id}/undo", json={"who": "Cem"}).status_code == 201
    assert not _state(client, match_id)["result"]["over"]


@pytest.mark.parametrize(("rounds", "winner"), [([], None), ([("Ana", 5), ("Ben", 5)], None)])
def test_a_match_ended_without_a_leader_has_no_winner(
    client: TestClient, rounds: list[tuple[str, int]], winner: str | None
) -> None:
    match_id = _match(client, "tie")
    for who, points in rounds:
        _round(client, match_id, who, points)
    assert client.post(f"/api/matches/{match_id}/close", json={"who": "A"}).status_code == 201
    result = _state(client, match_id)["result"]
    assert result["over"] and result["winner"] == winner


def test_a_deleted_match_is_gone_from_every_list(client: TestClient) -> None:
    kept = _match(client, "kept")
    gone = _match(client, "gone", players=["Lea", "Mo"])
    deleted = client.request("DELETE", f"/api/matches/{gone}", json={"who": "Ana"})
    assert deleted.status_code == 200 and deleted.json()["name"] == "gone"
    assert [m["id"] for m in client.get("/api/matches").json()] == [kept]
    assert {p["name"] for p in client.get("/api/players").json()} == {"Ana", "Ben"}
    for path in (f"/api/matches/{gone}/state", f"/api/matches/{gone}/events"):
        answer = client.get(path)
        assert answer.status_code == 404
        assert answer.json()["detail"] == f"match {gone} (gone) was deleted"
    assert client.post(f"/api/matches/{gone}/setup", json={
        "who": "A", "variant": "sabra", "players": ["A", "B"]}).status_code == 404
    assert client.request("DELETE", f"/api/matches/{gone}", json={"who": "A"}).status_code == 404
    with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect(
        f"ws://127.0.0.1:8765/ws/matches/{gone}"
    ) as socket:
        socket.receive_json()
    assert closed.value.code == 4404


def test_a_page_showing_a_match_deleted_elsewhere_is_told(client: TestClient) -> None:
    match_id = _match(client, "shown")
    with client.websocket_connect(f"ws://127.0.0.1:8765/ws/matches/{match_id}") as socket:
        assert socket.receive_json()["state"]["match_info"]["name"] == "shown"
        client.request("DELETE", f"/api/matches/{match_id}", json={"who": "Ana"})
        with pytest.raises(WebSocketDisconnect) as closed:
            socket.receive_json()
    assert closed.value.code == 4404


def test_a_match_a_live_table_plays_is_neither_ended_nor_deleted_here(
    client: TestClient,
) -> None:
    match_id = _match(client, "live")
    client.app.state.service.live_inboxes[match_id] = inbox_for(EventBus())  # type: ignore[attr-defined]
    ended = client.post(f"/api/matches/{match_id}/close", json={"who": "A"})
    assert ended.status_code == 409 and "end it there" in ended.json()["detail"]
    deleted = client.request("DELETE", f"/api/matches/{match_id}", json={"who": "A"})
    assert deleted.status_code == 409 and "stop the run first" in deleted.json()["detail"]


@pytest.mark.parametrize(
    ("name", "dealer", "rounds", "again", "next_dealer"),
    [
        ("Freitag", 0, 0, "Freitag 2", 0),  # nothing played: the same dealer
        ("Freitag 2", 1, 1, "Freitag 3", 0),  # Ben dealt round 1: Ana (of two) deals next
        ("Kegelclub", 0, 3, "Kegelclub 2", 1),
    ],
)
def test_the_same_players_again(
    client: TestClient, name: str, dealer: int, rounds: int, again: str, next_dealer: int
) -> None:
    match_id = _match(client, name, "rommee", dealer=dealer, rounds_limit=3,
                      options={"initial_meld": 30})
    for _ in range(rounds):
        _round(client, match_id, "Ana", 10)
    made = client.post(f"/api/matches/{match_id}/rematch", json={"who": "Ben"})
    assert made.status_code == 201 and made.json()["name"] == again
    state = _state(client, made.json()["id"])
    setup = state["setup"]
    assert (setup["variant"], setup["players"], setup["dealer"], setup["rounds_limit"]) == (
        "rommee", ["Ana", "Ben"], next_dealer, 3)
    assert setup["options"]["initial_meld"] == 30 and state["rounds"] == []


def test_a_match_without_players_is_not_played_again(client: TestClient) -> None:
    bare = int(client.post("/api/matches", json={"name": "bare"}).json()["id"])
    answer = client.post(f"/api/matches/{bare}/rematch", json={"who": "A"})
    assert answer.status_code == 409
    assert answer.json()["detail"].endswith("no players to play again")


def test_the_panels_own_match_is_current_however_new_the_others(tmp_path: Path) -> None:
    with panel_client(tmp_path) as first:
        old = _match(first, "old camera run")
        _round(first, old, "Ana", 3)
        own = _match(first, "Freitag")
        newer = _match(first, "newer")
        _round(first, newer, "Ben", 4)
        # no match named: the list's first (live, then open, newest activity first)
        assert first.get("/api/matches/current").json()["id"] == newer
    with panel_client(tmp_path, match_id=own) as pinned:
        assert pinned.get("/api/matches/current").json()["id"] == own
        _round(pinned, old, "Ben", 9)  # activity elsewhere does not move it
        assert pinned.get("/api/matches/current").json()["id"] == own
        pinned.request("DELETE", f"/api/matches/{own}", json={"who": "A"})
        assert pinned.get("/api/matches/current").json()["id"] == old


def test_the_live_tables_match_is_the_one_its_pages_open(tmp_path: Path) -> None:
    """A camera run's panel: a page opened without ``?match=`` shows the match the table
    plays, even when another match in the store has newer activity."""
    import json
    import socket
    import urllib.request

    from tabletop.panel.embed import start_panel
    from tabletop.panel.settings import PanelSettings

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    url = f"sqlite:///{tmp_path / 'matches.sqlite3'}"
    panel = start_panel(EventBus(), variant_id="sabra", options={}, players=["Ana", "Ben"],
                        name="camera", settings=PanelSettings(database_url=url, port=port))
    try:
        newer = panel.service.store.create_match("at another table").id
        panel.service.log(newer, MatchSetUp(who="A", variant="sabra", options={},
                                             players=("Ivo", "Jana"), dealer=0))
        with urllib.request.urlopen(f"{panel.url}api/matches/current", timeout=10) as answer:
            assert json.load(answer)["id"] == panel.match_id
    finally:
        panel.stop()
