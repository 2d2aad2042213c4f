"""End to end: the real server (uvicorn in a subprocess) and headless Chromium.

Uses Debian's ``chromium`` through Playwright's ``executable_path`` (no browser
is downloaded); fails naming the install line when chromium is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from tests.shared import needs, scaled

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = needs("chromium")
REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _post(base: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.loads(response.read()))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tabletop",
            "panel",
            "--database",
            f"sqlite:///{tmp_path / 'e2e.db'}",
            "--port",
            str(port),
            "--new",
            "Friday night",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + scaled(20)
    while True:
        try:
            urllib.request.urlopen(base + "/api/matches/current", timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("the panel did not start") from None
            time.sleep(0.1)
    yield base
    process.terminate()
    process.wait(timeout=scaled(10))


def test_a_score_change_is_pushed_live(server: str, tmp_path: Path) -> None:
    match_id = 1
    _post(
        server,
        f"/api/matches/{match_id}/setup",
        {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben", "Cem", "Dora"]},
    )
    events: list[dict[str, Any]] = [
        {
            "type": "round_scored",
            "seat": None,
            "scores": {"Ana": 41, "Ben": -23, "Cem": -18, "Dora": 0},
        },
        {
            "type": "round_scored",
            "seat": None,
            "scores": {"Ana": -12, "Ben": 35, "Cem": -9, "Dora": -14},
        },
        {
            "type": "table",
            "seat": 1,
            "melds": ["R3 R4 R5", "K7 B7 O7", "B10 B11 JK B13", "O4 O5 O7"],
        },
        {
            "type": "warning",
            "seat": 1,
            "message": "O4 O5 O7 is not a run",
            "items": ["O4", "O5", "O7"],
        },
        {"type": "turn_started", "seat": 2, "round": 1, "turn": 3},
        {"type": "initial_meld_progress", "seat": 2, "value": 21, "required": 30,
         "meets": False},
    ]
    for seq, event in enumerate(events, start=1):
        _post(server, f"/api/matches/{match_id}/events", {"seq": seq, "t": 10.0 * seq, **event})

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 760})
        page.goto(server + "/")
        total = page.locator('#scoreboard li[data-player="Ben"] .total')
        sync_api.expect(total).to_have_attribute("data-total", "12", timeout=10000)
        sync_api.expect(page.locator("#conn")).to_have_text("live")
        # The invalid meld is drawn red, the valid ones green, each with its value.
        sync_api.expect(page.locator('#melds-mini .meld[data-valid="false"]')).to_have_count(1)
        sync_api.expect(page.locator('#melds-mini .meld[data-valid="true"] .value')).to_have_text(
            ["12", "21", "46"]
        )
        sync_api.expect(page.locator("#turn .who")).to_have_text("Cem")
        before = page.evaluate("performance.getEntriesByType('navigation').length")

        # An event published now reaches the open page without a reload.
        _post(
            server,
            f"/api/matches/{match_id}/events",
            {
                "seq": 7,
                "t": 80.0,
                "type": "round_scored",
                "seat": None,
                "scores": {"Ana": -5, "Ben": 20, "Cem": -10, "Dora": -5},
            },
        )
        sync_api.expect(total).to_have_attribute("data-total", "32", timeout=10000)
        sync_api.expect(page.locator("#scoreboard li").first).to_have_attribute(
            "data-player", "Ben"
        )
        assert page.evaluate("performance.getEntriesByType('navigation').length") == before
        # The next turn: Ana opening, 24 of Sabra's 30 ("mindestens 30 Punkte") laid so far.
        _post(
            server,
            f"/api/matches/{match_id}/events",
            {"seq": 8, "t": 81.0, "type": "turn_started", "seat": 0, "round": 1, "turn": 4},
        )
        _post(
            server,
            f"/api/matches/{match_id}/events",
            {
                "seq": 9,
                "t": 90.0,
                "type": "initial_meld_progress",
                "seat": 0,
                "value": 24,
                "required": 30,
                "meets": False,
            },
        )
        sync_api.expect(page.locator("#turn .who")).to_have_text("Ana")
        sync_api.expect(page.locator("#opening-mini p")).to_have_text("Ana opening: 24 / 30")
        shot = tmp_path / "panel.png"
        page.screenshot(path=str(shot), full_page=False)
        assert shot.stat().st_size > 10_000

        # The history view plots one line per player over rounds 0..3.
        page.click('nav a[data-view="history"]')
        lines = page.locator("#plot polyline")
        sync_api.expect(lines).to_have_count(4)
        assert len((lines.first.get_attribute("points") or "").split()) == 4

        # A phone: one column, nothing wider than the screen.
        phone = browser.new_page(viewport={"width": 390, "height": 844})
        phone.goto(server + "/")
        sync_api.expect(phone.locator('#scoreboard li[data-player="Ben"] .total')).to_have_text(
            "32+20"
        )
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390
        browser.close()


def test_the_page_follows_the_patches_to_the_state_the_api_serves(
    server: str, browser: Any
) -> None:
    """The page is sent the whole state once and patches after it: what it holds then is
    the API's state, and each view draws it."""
    players = ["Ana", "Ben", "Cem", "Dora"]
    _post(server, "/api/matches/1/setup", {"who": "Ana", "variant": "sabra", "players": players})
    frames: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 760})
    page.on("websocket",
            lambda socket: socket.on("framereceived", lambda frame: frames.append(frame)))
    page.goto(server + "/")
    sync_api.expect(page.locator("#conn")).to_have_text("live")
    for number in range(6):
        _post(server, "/api/matches/1/events", {
            "type": "table", "seat": number % 4,
            "melds": ["R3 R4 R5", f"K{number + 1} B{number + 1} O{number + 1}"]})
        time.sleep(0.3)  # a push each
        _post(server, "/api/matches/1/rounds", {"who": "Ana", "players": [
            {"name": name, "out": True} if seat == number % 4
            else {"name": name, "points": 5 + seat + number} for seat, name in enumerate(players)]})
        time.sleep(0.3)
    _post(server, "/api/matches/1/undo", {"who": "Ana"})
    with urllib.request.urlopen(server + "/api/matches/1/state", timeout=10) as answer:
        final = json.loads(answer.read())

    def held() -> Any:
        return json.loads(page.evaluate(
            "import('/static/core.js').then((core) => JSON.stringify(core.app.state))"))

    deadline = time.monotonic() + scaled(15)
    while held() != final and time.monotonic() < deadline:
        time.sleep(0.2)
    assert held() == final
    pushes = [json.loads(frame) for frame in frames]
    assert "state" in pushes[0] and all("patch" in push for push in pushes[1:])
    assert len(pushes) >= 8 and len(final["rounds"]) == 5
    for name, total in final["match"]["totals"].items():
        sync_api.expect(page.locator(f'#scoreboard li[data-player="{name}"] .total')) \
            .to_have_attribute("data-total", str(total))
    sync_api.expect(page.locator("#melds-mini .meld")).to_have_count(2)
    page.click('nav a[data-view="history"]')
    lines = page.locator("#plot polyline")
    sync_api.expect(lines).to_have_count(4)
    assert len((lines.first.get_attribute("points") or "").split()) == 6
    page.evaluate("import('/static/core.js').then((core) => core.go('/tv'))")
    for name, total in final["match"]["totals"].items():
        sync_api.expect(page.locator(f'#tv-board li[data-player="{name}"] .total')) \
            .to_have_text(str(total))
    assert sum("state" in json.loads(frame) for frame in frames) == 1  # nothing reconnected
