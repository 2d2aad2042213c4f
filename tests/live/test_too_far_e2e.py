"""A card table seen from too far, as a person meets it: ``tabletop run`` watching a
camera stream (the bundled 640x360 Rommé video served as MJPEG on 127.0.0.1: card
indices 7-14 pixels long) with its panel open on a phone.  The page says the indices
are too small to read and what to do, in the page's language; the terminal says it
once."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import cv2
from playwright import sync_api

from tests.live.mjpeg_server import MjpegServer
from tests.panel.test_e2e import _free_port
from tests.shared import CHROMIUM, needs, scaled, with_default_interrupt

pytestmark = needs("chromium")
ROOT = Path(__file__).resolve().parents[2]
VIDEO = ROOT / "tabletop" / "samples" / "videos" / "rommee.mp4"


def _frames() -> list[object]:
    capture = cv2.VideoCapture(str(VIDEO))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    assert frames, f"cannot read {VIDEO}"
    return frames


def _wait_for_panel(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + scaled(60)
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"the panel at {url} never answered (run ended: {process.poll()})")


def test_the_phone_is_told_the_camera_is_too_far_to_read_the_cards(tmp_path: Path) -> None:
    header = json.loads(VIDEO.with_suffix(".truth.jsonl").read_text().splitlines()[0])
    port = _free_port()
    env = {**os.environ, "TABLETOP_DATA_DIR": str(tmp_path / "data"),
           "TABLETOP_PANEL_DATABASE_URL": f"sqlite:///{tmp_path / 'matches.sqlite3'}"}
    with MjpegServer(_frames(), fps=header["fps"], timeline="server") as camera:
        process = subprocess.Popen(
            [sys.executable, "-m", "tabletop", "run", "--source", camera.url,
             "--variant", "rommee", "--players", ",".join(header["players"]),
             "--no-markers", "--port", str(port)],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, preexec_fn=with_default_interrupt)
        try:
            with sync_api.sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 390, "height": 844})
                _wait_for_panel(f"http://127.0.0.1:{port}/", process)
                page.goto(f"http://127.0.0.1:{port}/")
                told = page.locator("#too-far")
                sync_api.expect(told).to_be_visible(timeout=scaled(90) * 1000)
                text = told.text_content() or ""
                length = int(re.search(r"about (\d+) px long", text).group(1))  # type: ignore[union-attr]
                assert 5 <= length < 12 and "bring the camera closer" in text, text
                page.select_option("#lang", "de")
                sync_api.expect(told).to_contain_text(f"etwa {length} px")
                sync_api.expect(told).to_contain_text("Kamera näher heranbringen")
                browser.close()
        finally:
            process.send_signal(signal.SIGINT)
            try:
                _, said = process.communicate(timeout=scaled(20))
            except subprocess.TimeoutExpired:
                process.kill()
                _, said = process.communicate(timeout=scaled(5))
    assert said.count("too small to read") == 1, said
