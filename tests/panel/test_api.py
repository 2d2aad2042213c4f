"""The panel's HTTP and WebSocket API, through FastAPI's TestClient."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tabletop.engine.events import TurnEnded, TurnStarted
from tabletop.panel.app import InsecureSettings, create_app
from tabletop.panel.settings import PanelSettings
from tests.panel.clients import Follower, panel_client

JPEG = bytes.fromhex("ffd8ffe000104a46494600010100000100010000ffd9")

"""Where the panel serves by default: TestClient's own "testserver" is no name it answers to."""


def _match(client: TestClient, players: tuple[str, ...] = ("Ana", "Ben", "Cem")) -> int:
    match_id = int(client.post("/api/matches", json={"name": "Friday"}).json()["id"])
    setup = {"who": "Ana", "variant": "sabra", "players": list(players)}
    assert client.post(f"/api/matches/{match_id}/setup", json=setup).status_code == 201
    return match_id


def _event(client: TestClient, match_id: int, event: dict[str, Any]) -> dict[str, Any]:
    response = client.post(f"/api/matches/{match_id}/events", json=event)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_pages_and_static_files_are_served(client: TestClient) -> None:
    for path in ("/", "/table", "/history", "/setup"):
        page = client.get(path)
        assert page.status_code == 200 and "/static/panel.js" in page.text
        assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/static/panel.css").status_code == 200
    # No CDN: every script and style the page loads is our own.
    page = client.get("/").text
    assert "http://" not in page.replace("http://www.w3.org", "") and "https://" not in page


@pytest.mark.parametrize(
    "path", ["/static/../store.py", "/static/%2e%2e/store.py", "/static/..%2fapp.py", "/etc/passwd"]
)
def test_no_path_escapes_the_static_folder(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert "EventStore" not in response.text


def test_current_match_is_made_when_none_exists(client: TestClient) -> None:
    current = client.get("/api/matches/current").json()
    assert current["name"] == "Match 1"
    assert client.get("/api/matches").json()[0]["id"] == current["id"]


def test_round_scored_moves_the_totals(client: TestClient) -> None:
    match_id = _match(client)
    _event(
        client,
        match_id,
        {
            "seq": 30,
            "t": 95.0,
            "type": "round_scored",
            "seat": None,
            "scores": {"Ana": 41, "Ben": -23, "Cem": -18},
        },
    )
    state = client.get(f"/api/matches/{match_id}/state").json()
    assert state["match"]["totals"] == {"Ana": 41, "Ben": -23, "Cem": -18}
    assert state["rounds"][0]["scores"]["Ana"] == 41


def test_table_melds_carry_validity_and_value(client: TestClient) -> None:
    match_id = _match(client)
    _event(
        client,
        match_id,
        {
            "seq": 7,
            "t": 12.4,
            "type": "table",
            "seat": 1,
            "melds": ["R3 R4 R5", "K7 B7 O7", "R3 R4 R6"],
        },
    )
    melds = client.get(f"/api/matches/{match_id}/state").json()["table"]["melds"]
    assert [(m["valid"], m["value"]) for m in melds] == [(True, 12), (True, 21), (False, 0)]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"who": "A", "variant": "poker", "players": ["A", "B"]}, "variant"),
        ({"who": "A", "variant": "sabra", "players": ["A"]}, "at least 2"),
        ({"who": "A", "variant": "sabra", "players": ["A", "A"]}, "must differ"),
        (
            {"who": "A", "variant": "remi", "players": ["A", "B"], "options": {"nope": 1}},
            "unknown option",
        ),
        (
            {"who": "A", "variant": "remi", "players": ["A", "B"], "options": {"initial_meld": 44}},
            "initial_meld",
        ),
        ({"who": "A", "variant": "sabra", "players": ["A", "B"], "dealer": 2}, "not a seat"),
        ({"who": "", "variant": "sabra", "players": ["A", "B"]}, "who"),
        ({"who": "A", "variant": "sabra", "players": ["A", "B"], "extra": 1}, "extra"),
    ],
)
def test_setup_is_validated(client: TestClient, body: dict[str, Any], fragment: str) -> None:
    match_id = client.post("/api/matches", json={"name": "m"}).json()["id"]
    response = client.post(f"/api/matches/{match_id}/setup", json=body)
    assert response.status_code == 422
    assert fragment in response.text


def test_corrections_are_events_with_who_and_when(client: TestClient) -> None:
    match_id = _match(client)
    _event(
        client, match_id, {"seq": 1, "t": 1.0, "type": "table", "seat": 0, "melds": ["R3 R4 R6"]}
    )
    _event(
        client,
        match_id,
        {
            "seq": 2,
            "t": 2.0,
            "type": "round_scored",
            "seat": None,
            "scores": {"Ana": 10, "Ben": -4, "Cem": -6},
        },
    )
    base = f"/api/matches/{match_id}"
    fix = {"who": "Ben", "meld": 0, "index": 2, "item": "r5"}
    assert client.post(f"{base}/corrections/item", json=fix).status_code == 201
    edit = {"who": "Cem", "round": 1, "scores": {"Ana": 10, "Ben": -5, "Cem": -5}}
    assert client.post(f"{base}/corrections/score", json=edit).status_code == 201
    state = client.get(f"{base}/state").json()
    assert state["table"]["melds"][0]["meld"] == "R3 R4 R5"
    assert state["match"]["totals"] == {"Ana": 10, "Ben": -5, "Cem": -5}
    assert client.post(f"{base}/undo", json={"who": "Ana"}).status_code == 201
    state = client.get(f"{base}/state").json()
    assert state["match"]["totals"] == {"Ana": 10, "Ben": -4, "Cem": -6}
    events = client.get(f"{base}/events").json()
    assert [e["type"] for e in events][-3:] == ["item_corrected", "score_edited", "undo"]
    for event in events[-3:]:
        assert event["who"] in ("Ana", "Ben", "Cem") and event["at"] > 1e9
    assert events[-3]["was"] == "R6"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        # well formed but not what the match holds: a conflict with its state
        ("corrections/item", {"who": "A", "meld": 5, "index": 0, "item": "R5"}, 409),
        ("corrections/item", {"who": "A", "meld": 0, "index": 0, "item": "X9"}, 422),
        ("corrections/item", {"who": "A", "meld": 0, "index": 0, "item": "R5 R6"}, 422),
        ("corrections/score", {"who": "A", "round": 2, "scores": {"Ana": 1}}, 409),
        ("corrections/score", {"who": "A", "round": 1, "scores": {"Zed": 1}}, 409),
        ("events", {"type": "undo", "target": 1}, 422),
        ("events", {"type": "match_closed", "who": "A"}, 422),
        ("events", {"type": "Bad Type!"}, 422),
        # a game event the engine could not read back (the state folds the engine's values)
        ("events", {"type": "turn_started", "seat": 0}, 422),
        ("events", {"type": "turn_ended", "seat": 0, "valid": "yes", "laid": []}, 422),
        ("events", {"type": "hand_shown", "seat": 0, "items": ["R5"], "value": 1.5}, 422),
    ],
)
def test_bad_corrections_are_refused(
    client: TestClient, path: str, body: dict[str, Any], status: int
) -> None:
    match_id = _match(client)
    _event(client, match_id, {"seq": 1, "type": "table", "seat": 0, "melds": ["R3 R4 R5"]})
    _event(
        client,
        match_id,
        {"seq": 2, "type": "round_scored", "seat": None, "scores": {"Ana": 1, "Ben": -1, "Cem": 0}},
    )
    before = len(client.get(f"/api/matches/{match_id}/events").json())
    assert client.post(f"/api/matches/{match_id}/{path}", json=body).status_code == status
    assert len(client.get(f"/api/matches/{match_id}/events").json()) == before


def test_a_game_event_the_engine_cannot_read_is_refused_saying_why(client: TestClient) -> None:
    match_id = _match(client)
    response = client.post(f"/api/matches/{match_id}/events",
                           json={"type": "turn_started", "seat": 0, "t": 2.0})
    assert response.status_code == 422
    assert "turn_started event 1 lacks round, turn" in response.text


def test_unknown_match_is_404(client: TestClient) -> None:
    assert client.get("/api/matches/404/state").status_code == 404
    assert client.post("/api/matches/404/undo", json={"who": "A"}).status_code == 404


def test_export_endpoints(client: TestClient) -> None:
    match_id = _match(client, ("Ana", "Ben"))
    _event(
        client,
        match_id,
        {"seq": 1, "type": "round_scored", "seat": None, "scores": {"Ana": 5, "Ben": -5}},
    )
    exported = client.get(f"/api/matches/{match_id}/export.json").json()
    assert exported["state"]["match"]["totals"] == {"Ana": 5, "Ben": -5}
    csv_text = client.get(f"/api/matches/{match_id}/export.csv").text
    assert csv_text.splitlines() == ["round,dealer,Ana,Ben,Ana total,Ben total", "1,Ana,5,-5,5,-5"]
    assert client.get(f"/api/matches/{match_id}/export.csv?table=secrets").status_code == 422


def test_token_guards_every_change(tmp_path: Path) -> None:
    with panel_client(tmp_path, token="s3cret") as client:
        assert client.post("/api/matches", json={"name": "m"}).status_code == 401
        assert (
            client.post(
                "/api/matches", json={"name": "m"}, headers={"X-Panel-Token": "wrong"}
            ).status_code
            == 401
        )
        made = client.post("/api/matches", json={"name": "m"}, headers={"X-Panel-Token": "s3cret"})
        assert made.status_code == 201
        match_id = made.json()["id"]
        assert client.post(f"/api/matches/{match_id}/undo", json={"who": "A"}).status_code == 401
        # the token is no URL parameter (it would end up in logs and the history)
        path = f"/api/matches/{match_id}/events"
        event = {"type": "table", "melds": []}
        assert client.post(f"{path}?token=s3cret", json=event).status_code == 401
        assert client.post(path, json=event, headers={"X-Panel-Token": "s3cret"}).status_code == 201
        # Reading stays open on this machine: anyone at the table may look.
        assert client.get(f"/api/matches/{match_id}/state").status_code == 200


@pytest.mark.parametrize(
    ("host", "on_network"),
    [
        ("127.0.0.1", False),
        ("localhost", False),
        ("::1", False),
        ("0.0.0.0", True),
        ("192.168.1.20", True),
    ],
)
def test_on_the_network_a_token_is_required(tmp_path: Path, host: str, on_network: bool) -> None:
    settings = PanelSettings(database_url=f"sqlite:///{tmp_path / 'p.db'}", host=host)
    assert settings.on_network is on_network
    if on_network:
        with pytest.raises(InsecureSettings, match="set a token"):
            create_app(settings)
    else:
        assert settings.token_required is False


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLETOP_PANEL_TURN_SECONDS", "90")
    monkeypatch.setenv("TABLETOP_PANEL_HOST", "0.0.0.0")
    settings = PanelSettings()
    assert (settings.turn_seconds, settings.token_required) == (90, True)
    assert PanelSettings().host == "0.0.0.0"


def test_camera_frame(tmp_path: Path) -> None:
    frame = tmp_path / "frame.jpg"
    with panel_client(tmp_path, frame_path=frame) as client:
        assert client.get("/api/frame.jpg").status_code == 404
        frame.write_bytes(JPEG)
        response = client.get("/api/frame.jpg")
        assert response.status_code == 200 and response.content == JPEG
        assert response.headers["content-type"] == "image/jpeg"


def test_websocket_pushes_the_state_after_each_event(client: TestClient) -> None:
    match_id = _match(client, ("Ana", "Ben"))
    page = Follower()
    with client.websocket_connect(f"ws://127.0.0.1:8765/ws/matches/{match_id}") as socket:
        first = page.take(socket.receive_json())
        assert first["match"]["totals"] == {"Ana": 0, "Ben": 0}
        _event(
            client,
            match_id,
            {"seq": 1, "type": "round_scored", "seat": None, "scores": {"Ana": 30, "Ben": -30}},
        )
        pushed = page.take(socket.receive_json())
        assert pushed["match"]["totals"] == {"Ana": 30, "Ben": -30}
        assert pushed["last_id"] > first["last_id"]
        assert (page.wholes, page.patches) == (1, 1)


def test_bus_events_reach_the_store(tmp_path: Path) -> None:
    from tabletop.live.bus import EventBus

    with panel_client(tmp_path) as client:
        service = client.app.state.service  # type: ignore[attr-defined]
        match_id = _match(client, ("Ana", "Ben"))
        bus = EventBus()
        unsubscribe = service.attach(bus, match_id)
        bus.publish(TurnStarted(seq=1, t=0.0, seat=1, round=1, turn=1))
        unsubscribe()
        bus.publish(TurnEnded(seq=2, t=1.0, seat=1, valid=True, laid=()))
        state = client.get(f"/api/matches/{match_id}/state").json()
        assert state["turn"]["player"] == "Ben"


@pytest.mark.parametrize(
    "event",
    [
        {"type": "table", "melds": "R3 R4 R5"},
        {"type": "table"},
        {"type": "round_scored", "scores": ["Ana", 3]},
        {"type": "round_scored", "scores": {"Ana": "many"}},
        {"type": "warning", "message": 42},
    ],
)
def test_contract_fields_are_validated(client: TestClient, event: dict[str, Any]) -> None:
    match_id = _match(client)
    response = client.post(f"/api/matches/{match_id}/events", json={"seq": 1, **event})
    assert response.status_code == 422


def test_a_malformed_logged_event_does_not_break_the_state(client: TestClient) -> None:
    service = client.app.state.service  # type: ignore[attr-defined]
    match_id = _match(client, ("Ana", "Ben"))
    service.record(match_id, {"type": "round_scored", "scores": "garbage"})
    service.record(match_id, {"type": "round_scored", "scores": {"Ana": 2, "Ben": -2}})
    state = client.get(f"/api/matches/{match_id}/state").json()
    assert state["match"]["totals"] == {"Ana": 2, "Ben": -2}
    assert "skipped" in state["problems"][0]


@pytest.mark.parametrize("match_id", ["0", "-1", "9223372036854775808", "abc"])
def test_match_ids_are_bounded(client: TestClient, match_id: str) -> None:
    assert client.get(f"/api/matches/{match_id}/events").status_code == 422


def test_panel_command_exports_a_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tabletop.cli import main

    url = f"sqlite:///{tmp_path / 'panel.db'}"
    with panel_client(tmp_path) as client:
        match_id = _match(client, ("Ana", "Ben"))
        _event(
            client,
            match_id,
            {"seq": 1, "type": "round_scored", "seat": None, "scores": {"Ana": 7, "Ben": -7}},
        )
    assert main(["panel", "--database", url, "--match", str(match_id), "--export", "csv"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1,Ana,7,-7,7,-7"
    assert main(["panel", "--database", url, "--match", "99", "--export", "json"]) == 2
    assert "no match with id 99" in capsys.readouterr().err
