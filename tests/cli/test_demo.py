"""The bundled samples, scored by hand from the rule texts, and the demo command."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabletop.demo import SAMPLES, load_sample, play_sample
from tests.shared import CHROMIUM, need, scaled

# Worked by hand.  Remi round 1, Ana: 100 + (R1 R2 R3 R4 = 4x5) + (K12 B12 O12 = 3x10)
# + (B9 B10 B11 = 5+10+10, her joker +50) + (O5 K5 R5 = 15) = 240; Ben: K7 K8 K9 15 + R5 laid
# on Ana's run 5 + trump 25 - rack (B13 10, JK 25, O2 5) = 5; Cem never melded: -200.
# Round 2, Ben goes out discarding a joker: (100 + 20 + 30 + 15) x 2 = 330.
# Round 3, Cem lays all 14 at once: 100 + 100 + 20 + 25 + 15 + 20 = 280.
# Rommé: hands at 2-10 face, JQK 10, A 11, joker 20; round 2 is a Hand-Rommé (doubled).
# Sabra: round 1 zero-sum (Ivo 13+12+30+1 = 56, Jana 3+4+9 = 16); round 2 pool exhausted,
# Ivo's 3 is lowest: Hana 18-3, Jana 46-3.
EXPECTED = {
    "remi-evening.json": (
        [
            {"Ana": 240, "Ben": 5, "Cem": -200},
            {"Ana": 20, "Ben": 330, "Cem": 50},
            {"Ana": -200, "Ben": 15, "Cem": 280},
        ],
        "Ben",
    ),
    "rommee-club.json": (
        [
            {"Dora": 0, "Emil": -24, "Fritz": -102, "Greta": -2},
            {"Dora": -70, "Emil": 0, "Fritz": -212, "Greta": -204},
        ],
        "Emil",
    ),
    "sabra-kitchen.json": (
        [
            {"Hana": 72, "Ivo": -56, "Jana": -16},
            {"Hana": -15, "Ivo": 58, "Jana": -43},
        ],
        "Hana",
    ),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_scores(name: str) -> None:
    match, results = play_sample(load_sample(name))
    rounds, winner = EXPECTED[name]
    assert [result.scores for _, result in results] == rounds
    assert all(not result.problems for _, result in results)
    assert match.over and match.winner == winner


def test_scripted_demo_command_runs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tabletop", "demo", "--scripted"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert result.returncode == 0, result.stderr
    assert "winner: Ben" in result.stdout and "winner: Emil" in result.stdout
    # the live-table scenarios: Sabra zero-sum (joker 30 on Ben's rack), Rommé penalties
    assert "round 1 scored, Ana wins: Ana +69, Ben -45, Cem -24" in result.stdout
    assert "round 1 scored, Cem wins: Ana -17, Ben -37, Cem +0" in result.stdout
    assert "draws 3 as a penalty" in result.stdout


def test_demo_plays_the_sample_video_through_the_model_to_a_scored_round() -> None:
    """The README's first command: the bundled video, the shipped model, a scored round."""
    result = subprocess.run(
        [sys.executable, "-m", "tabletop", "demo"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=scaled(300),
    )
    assert result.returncode == 0, result.stderr
    # the racks laid open at the end of the round, read by the model, scored by the rules
    assert "Ben's rack: B2 JK O9 R4 (45)" in result.stdout
    assert "round 1 scored, Ana wins: Ana +69, Ben -45, Cem -24" in result.stdout
    # the closing summary (the progress line comes every 5 s into a pipe, and the demo
    # takes about 2: tests/test_live_status.py checks it)
    assert "160 frames in" in result.stderr and "36 events" in result.stderr
    assert "1 round scored" in result.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _demo_process(tmp_path: Path, port: int, *flags: str) -> subprocess.Popen[str]:
    env = {**os.environ, "TABLETOP_PANEL_DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}"}
    return subprocess.Popen(
        [sys.executable, "-m", "tabletop", "demo", "--panel", "--port", str(port), *flags],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@contextlib.contextmanager
def demo_on_panel(tmp_path: Path, *flags: str) -> Iterator[str]:
    """Run `tabletop demo --panel --port P FLAGS` on a free port, playing at once, until its
    games have ended; yields the panel's API address, and stops the demo afterwards."""
    port = _free_port()
    process = _demo_process(tmp_path, port, "--wait-for-page", "0", *flags)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if "the demo has ended" in line:
                break
        yield f"http://127.0.0.1:{port}/api"
    finally:
        process.terminate()
        process.wait(scaled(10))


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


def test_demo_with_panel_plays_onto_the_served_panel(tmp_path: Path) -> None:
    """`tabletop demo --panel`: the games play onto the real server; the API shows them."""
    with demo_on_panel(tmp_path, "--scripted", "--speed", "50") as api:
        # the list puts the newest first; the demo played them in this order
        matches = sorted(get_json(f"{api}/matches"), key=lambda match: match["id"])
        assert [m["name"] for m in matches] == ["demo: Rummikub (Sabra)", "demo: Rommé"]
        state = get_json(f"{api}/matches/{matches[0]['id']}/state")
        assert state["rounds"][0]["scores"] == {"Ana": 69, "Ben": -45, "Cem": -24}


def test_demo_with_panel_plays_the_sample_video(tmp_path: Path) -> None:
    """`tabletop demo --panel`: the video goes through the camera pipeline and the model; the
    panel serves the camera's view and the scores the game read from the frames."""
    with demo_on_panel(tmp_path, "--speed", "100") as api:
        matches = get_json(f"{api}/matches")
        state = get_json(f"{api}/matches/{matches[0]['id']}/state")
        assert state["rounds"][0]["scores"] == {"Ana": 69, "Ben": -45, "Cem": -24}
        with urllib.request.urlopen(f"{api}/frame.jpg", timeout=5) as response:
            assert response.headers["content-type"] == "image/jpeg"
            assert response.read(3) == b"\xff\xd8\xff"


def test_demo_with_panel_waits_for_the_page_on_its_port(tmp_path: Path) -> None:
    """`tabletop demo --panel --port P`: the address it prints answers at once, and the game
    waits there until a page opens it (a player opening the link sees the first move)."""
    from playwright import sync_api

    need("chromium")
    port = _free_port()
    process = _demo_process(tmp_path, port, "--scripted", "--speed", "50", "--wait-for-page", "60")
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "open http" in line:
                break
        url = lines[-1].split("open ", 1)[1].split()[0]
        assert url.endswith(f":{port}/"), lines
        api = f"{url}api"
        first = min(get_json(f"{api}/matches"), key=lambda match: match["id"])
        # printed, answering, and nothing played yet: the game waits for the page
        waiting = get_json(f"{api}/matches/{first['id']}/state")
        assert waiting["rounds"] == [] and waiting["turn"] is None, waiting["feed"]
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(url)
            # the first move reaches the open page, then the round is scored on it
            sync_api.expect(page.locator("#feed li").first).to_be_visible(timeout=30_000)
            sync_api.expect(page.locator("#scoreboard li .last").first).to_be_visible(
                timeout=60_000
            )
            assert f"match={first['id']}" in page.url
            browser.close()
    finally:
        process.terminate()
        process.wait(scaled(10))


@pytest.mark.parametrize(
    ("argv", "given"),
    [
        (["demo", "--panel", "--port", "70000"], "70000"),
        (["demo", "--panel", "--port", "eighty"], "'eighty'"),
        (["panel", "--port", "0"], "0"),
    ],
)
def test_a_port_that_is_none_is_refused_in_one_line(
    argv: list[str], given: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from tabletop.cli import main

    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0, error
    assert f"argument --port: a port is a number from 1 to 65535, not {given}" in error
