"""The README's pictures of the panel: a Sabra match in its third round on a phone, a
desktop and a TV, its history, and the round entry on a phone; the panel listening on the
network as at a club table.

    python -m tests.panel.screenshots [FOLDER]     (default: docs)

Runs ``tabletop panel --host 0.0.0.0`` in a subprocess, scores two rounds by hand through
the API, plays a turn's events, and photographs the pages in headless Chromium.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from playwright.sync_api import expect, sync_playwright

from tests.panel.test_e2e import CHROMIUM, REPO, _free_port
from tests.shared import scaled

TOKEN = "friday-night"
VIEWPORTS = {
    "phone": ({"width": 390, "height": 844}, "/"),
    "desktop": ({"width": 1280, "height": 800}, "/"),
    "tv": ({"width": 1920, "height": 1080}, "/tv"),
    "history": ({"width": 1280, "height": 800}, "/history"),
    "round": ({"width": 390, "height": 844}, "/round"),
}
PLAYERS = ("Ana", "Ben", "Cem", "Dora")


def _call(base: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json", "X-Panel-Token": TOKEN},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _match_in_progress(base: str) -> None:
    _call(base, "/api/matches/1/setup", {"who": "Ana", "variant": "sabra",
                                         "players": list(PLAYERS), "target": 250})
    for racks in ({"Ben": 23, "Cem": 18, "Dora": 0}, {"Ana": 12, "Cem": 9, "Dora": 14}):
        players = [{"name": name, "points": racks[name]} if name in racks
                   else {"name": name, "out": True} for name in PLAYERS]
        _call(base, "/api/matches/1/rounds", {"who": "Ana", "players": players})
    for seq, event in enumerate([
        {"type": "turn_started", "seat": 2, "round": 3, "turn": 4},
        {"type": "table", "seat": 2, "melds": ["R3 R4 R5", "K7 B7 O7", "B10 B11 JK B13"]},
        {"type": "meld_laid", "seat": 2, "meld": "B10 B11 JK B13"},
    ], start=1):
        _call(base, "/api/matches/1/events", {"seq": seq, "t": float(seq), **event})


def main(argv: list[str] | None = None) -> int:
    folder = REPO / ((argv if argv is not None else sys.argv[1:]) or ["docs"])[0]
    port = _free_port()
    with TemporaryDirectory() as scratch:
        process = subprocess.Popen(
            [sys.executable, "-m", "tabletop", "panel", "--host", "0.0.0.0", "--port", str(port),
             "--token", TOKEN, "--database", f"sqlite:///{Path(scratch) / 'shots.db'}",
             "--new", "Friday night"],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + scaled(20)
            while True:
                try:
                    _call(base, "/api/matches/current")
                    break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the panel did not start") from None
                    time.sleep(0.1)
            _match_in_progress(base)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                for name, (viewport, path) in VIEWPORTS.items():
                    page = browser.new_context(viewport=viewport).new_page()
                    page.goto(f"{base}{path}?token={TOKEN}")
                    expect(page.locator("#conn")).to_have_text("live", timeout=10_000)
                    page.wait_for_timeout(800)
                    shot = folder / f"panel-{name}.png"
                    page.screenshot(path=str(shot))
                    print(f"{shot.relative_to(REPO)}: {shot.stat().st_size // 1024} KB")
                browser.close()
        finally:
            process.terminate()
            process.wait(timeout=scaled(10))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
