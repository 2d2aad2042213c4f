"""What the panel refuses before any route runs, and what it needs on the network:
bodies too large, unknown host names (DNS rebinding), writes from other sites, numbers
JSON does not have, the token in cookies rather than addresses, retried events."""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tabletop.panel.app import create_app
from tabletop.panel.dependencies import TOKEN_COOKIE
from tabletop.panel.schemas import EVENT_MAX_BYTES, EVENT_MAX_DEPTH
from tabletop.panel.settings import PanelSettings

HOME = "http://127.0.0.1:8765"
LAN = "http://192.168.1.20:8765"
TOKEN = "s3cret-token"


def _app(tmp_path: Path, **settings: Any) -> Any:
    return create_app(PanelSettings(database_url=f"sqlite:///{tmp_path / 'p.db'}", **settings))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(_app(tmp_path), base_url=HOME) as client:
        yield client


@pytest.fixture
def lan(tmp_path: Path) -> Iterator[TestClient]:
    """A panel listening on the network, as a phone at the table sees it."""
    with TestClient(_app(tmp_path, host="0.0.0.0", token=TOKEN), base_url=LAN) as client:
        yield client


def _match(client: TestClient, **headers: str) -> int:
    made = client.post("/api/matches", json={"name": "Friday"}, headers=headers)
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def _stored(client: TestClient, match_id: int, **headers: str) -> list[dict[str, Any]]:
    events = client.get(f"/api/matches/{match_id}/events", headers=headers)
    return list(events.json())


# --- size ------------------------------------------------------------------------------
def test_a_body_over_the_limit_is_refused_before_it_is_read(client: TestClient) -> None:
    match_id = _match(client)
    huge = json.dumps({"type": "note", "text": "x" * 300_000})
    answer = client.post(f"/api/matches/{match_id}/events", content=huge,
                         headers={"Content-Type": "application/json"})
    assert answer.status_code == 413 and "262144 bytes" in answer.json()["detail"]
    assert _stored(client, match_id) == []


def test_a_streamed_body_is_cut_off_at_the_limit(tmp_path: Path) -> None:
    """Through a real server: a chunked body is stopped at the limit, not read to its end."""
    app = _app(tmp_path)
    match_id = app.state.service.store.create_match("m").id
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.putrequest("POST", f"/api/matches/{match_id}/events")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        sent = 0
        chunk = b"x" * 65536
        with contextlib.suppress(OSError):
            connection.send(b'1a\r\n{"type": "note", "text": "\r\n')
            while sent < 200 * len(chunk):  # 12.5 MB if all of it were read
                connection.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent += len(chunk)
        answer = connection.getresponse()
        assert answer.status == 413
        assert sent < 200 * len(chunk)
        assert app.state.service.store.events(match_id) == []
    finally:
        server.should_exit = True
        thread.join(10)


def test_an_event_over_its_own_limit_is_refused(client: TestClient) -> None:
    match_id = _match(client)
    event = {"type": "note", "text": "x" * (EVENT_MAX_BYTES + 10)}
    answer = client.post(f"/api/matches/{match_id}/events", json=event)
    assert answer.status_code == 422 and "bytes of JSON" in answer.text
    assert _stored(client, match_id) == []


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("where", ["t", "extra", "nested"])
def test_numbers_json_does_not_have_are_refused(
    client: TestClient, number: str, where: str
) -> None:
    match_id = _match(client)
    body = {
        "t": f'{{"type": "note", "t": {number}}}',
        "extra": f'{{"type": "note", "score": {number}}}',
        "nested": f'{{"type": "note", "boxes": [[1, 2, {number}, 4]]}}',
    }[where]
    answer = client.post(f"/api/matches/{match_id}/events", content=body,
                         headers={"Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert _stored(client, match_id) == []


def test_nesting_is_bounded(client: TestClient) -> None:
    match_id = _match(client)
    deep: Any = 1
    for _ in range(EVENT_MAX_DEPTH + 2):
        deep = [deep]
    answer = client.post(f"/api/matches/{match_id}/events", json={"type": "note", "deep": deep})
    assert answer.status_code == 422 and "nests deeper" in answer.text


# --- host names and origins ------------------------------------------------------------
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io"])
def test_an_unknown_host_name_is_refused(client: TestClient, host: str) -> None:
    # a page on evil.example whose name was made to resolve to 127.0.0.1
    assert client.post("/api/matches", json={"name": "x"}, headers={"Host": host}).status_code \
        == 400
    assert client.get("/api/matches", headers={"Host": host}).status_code == 400
    assert client.get("/api/matches").json() == []


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "10.1.2.3"])
def test_the_panels_own_names_and_any_address_are_answered(client: TestClient, host: str) -> None:
    assert client.get("/api/matches", headers={"Host": host}).status_code == 200


def test_more_names_can_be_allowed(tmp_path: Path) -> None:
    with TestClient(_app(tmp_path, allowed_hosts=["scores.club"]), base_url=HOME) as client:
        assert client.get("/api/matches", headers={"Host": "scores.club"}).status_code == 200
        assert client.get("/api/matches", headers={"Host": "other.club"}).status_code == 400


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Sec-Fetch-Site": "cross-site"}, 403),
        ({"Sec-Fetch-Site": "same-site"}, 403),
        ({"Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "same-origin"}, 201),
        ({}, 201),  # a program, not a browser
    ],
)
def test_writes_from_a_browser_must_come_from_the_panels_pages(
    client: TestClient, headers: dict[str, str], status: int
) -> None:
    answer = client.post("/api/matches", json={"name": "x"}, headers=headers)
    assert answer.status_code == status, answer.text
    assert len(client.get("/api/matches").json()) == (status == 201)


# Each differs from the panel's own origin (http://127.0.0.1:8765) in one part only.
WRONG_ORIGINS = [
    "http://127.0.0.1:9999",  # another port of this machine
    "http://127.0.0.1",  # no port: port 80
    "https://127.0.0.1:8765",  # another scheme
    "https://127.0.0.1",
    "http://localhost:8765",  # another name for the same address is another origin
    "http://127.0.0.2:8765",
    "http://127.0.0.1:8765.evil.example",
    "http://127.0.0.1:87650",
    "http://user@127.0.0.1:8765",
    "ftp://127.0.0.1:8765",
    "127.0.0.1:8765",
    "",
]


@pytest.mark.parametrize("origin", WRONG_ORIGINS)
def test_a_write_from_another_origin_of_this_machine_is_refused(
    client: TestClient, origin: str
) -> None:
    answer = client.post("/api/matches", json={"name": "x"}, headers={"Origin": origin})
    assert answer.status_code == 403, answer.text
    assert client.get("/api/matches").json() == []


@pytest.mark.parametrize("origin", WRONG_ORIGINS)
def test_a_websocket_from_another_origin_of_this_machine_is_refused(
    client: TestClient, origin: str
) -> None:
    match_id = _match(client)
    url = f"ws://127.0.0.1:8765/ws/matches/{match_id}"
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect(
        url, headers={"Origin": origin}
    ) as live:
        live.receive_json()
    assert refused.value.code == 1008


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8765", "HTTP://127.0.0.1:8765"])
def test_the_panels_own_origin_is_taken(client: TestClient, origin: str) -> None:
    answer = client.post("/api/matches", json={"name": "x"}, headers={"Origin": origin})
    assert answer.status_code == 201, answer.text


def test_a_panel_on_port_80_takes_its_origin_without_a_port(tmp_path: Path) -> None:
    with TestClient(_app(tmp_path), base_url="http://127.0.0.1") as client:
        answer = client.post(
            "/api/matches", json={"name": "x"}, headers={"Origin": "http://127.0.0.1"}
        )
        assert answer.status_code == 201, answer.text
        refused = client.post(
            "/api/matches", json={"name": "x"}, headers={"Origin": "http://127.0.0.1:8765"}
        )
        assert refused.status_code == 403


@pytest.mark.parametrize("path", ["/", "/history", "/docs", "/api/matches", "/static/panel.css"])
def test_no_page_of_the_panel_can_be_framed_by_another_site(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 200, answer.text
    assert answer.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]


def test_a_websocket_from_another_site_is_refused(client: TestClient) -> None:
    match_id = _match(client)
    url = f"ws://127.0.0.1:8765/ws/matches/{match_id}"
    with pytest.raises(WebSocketDisconnect), client.websocket_connect(
        url, headers={"Origin": "http://evil.example"}
    ) as live:
        live.receive_json()
    with client.websocket_connect(url, headers={"Origin": HOME}) as live:
        assert live.receive_json()["state"]["last_id"] == 0


# --- the token on the network ----------------------------------------------------------
def test_on_the_network_reading_needs_the_token(lan: TestClient) -> None:
    assert lan.get("/api/matches").status_code == 401
    assert lan.get("/api/matches/current").status_code == 401
    assert lan.get("/api/frame.jpg").status_code == 401
    assert lan.get("/api/matches", headers={"X-Panel-Token": "wrong"}).status_code == 401
    assert lan.get("/api/matches", headers={"X-Panel-Token": TOKEN}).status_code == 200
    page = lan.get("/")
    assert page.status_code == 401 and "link" in page.text


def test_the_token_moves_from_the_link_to_a_cookie(lan: TestClient) -> None:
    first = lan.get(f"/history?match=1&token={TOKEN}", follow_redirects=False)
    assert first.status_code == 303
    assert first.headers["location"] == "/history?match=1"
    cookie = first.headers["set-cookie"]
    assert f"{TOKEN_COOKIE}={TOKEN}" in cookie and "HttpOnly" in cookie
    assert "samesite=strict" in cookie.lower()
    # the browser now sends the cookie: pages, reads and changes work without the link
    assert lan.get("/history").status_code == 200
    assert lan.get("/api/matches").status_code == 200
    assert lan.post("/api/matches", json={"name": "x"}).status_code == 201
    lan.cookies.clear()
    assert lan.get("/api/matches").status_code == 401
    assert lan.get(f"/?token=not-{TOKEN}").status_code == 401


def test_on_the_network_the_websocket_needs_the_cookie(lan: TestClient) -> None:
    match_id = _match(lan, **{"X-Panel-Token": TOKEN})
    url = f"ws://192.168.1.20:8765/ws/matches/{match_id}"
    with pytest.raises(WebSocketDisconnect) as refused, lan.websocket_connect(url) as live:
        live.receive_json()
    assert refused.value.code == 4401
    lan.get(f"/?token={TOKEN}")
    with lan.websocket_connect(url, headers={"Origin": LAN}) as live:
        assert live.receive_json()["state"]["last_id"] == 0


def test_the_api_page_loads_nothing_from_elsewhere(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and "/api/matches/{match_id}/events" in page.text
    assert "<script" not in page.text and "cdn" not in page.text.lower()
    assert client.get("/redoc").status_code == 404


# --- retried events ----------------------------------------------------------------------
def test_a_retried_event_is_stored_once(client: TestClient) -> None:
    match_id = _match(client)
    path = f"/api/matches/{match_id}/events"
    event = {"type": "round_scored", "seq": 9, "seat": None, "scores": {"Ana": 3, "Ben": -3}}
    first = client.post(path, json=event, headers={"Idempotency-Key": "game-7/seq-9"})
    again = client.post(path, json=event, headers={"Idempotency-Key": "game-7/seq-9"})
    other = client.post(path, json=event, headers={"Idempotency-Key": "game-7/seq-10"})
    assert first.json()["id"] == again.json()["id"] != other.json()["id"]
    assert len(_stored(client, match_id)) == 2
    assert client.post(path, json=event, headers={"Idempotency-Key": "a b"}).status_code == 422


def test_retries_racing_each_other_store_one_event(client: TestClient) -> None:
    match_id = _match(client)
    store = client.app.state.service.store  # type: ignore[attr-defined]
    ids: list[int] = []
    start = threading.Barrier(8)

    def post() -> None:
        start.wait()
        ids.append(store.append(match_id, {"type": "note"}, key="same").id)

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(set(ids)) == 1 and len(ids) == 8
    assert len(store.events(match_id)) == 1
