"""Joining the panel from a phone: the network address instead of 0.0.0.0, a QR code that
a camera decodes to it (on the page and in the terminal), and the pages' language."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np
import pytest

from tabletop.panel.join import join_url, lan_address, print_qr, qr_matrix
from tabletop.panel.routers.about import best_language
from tests.panel.clients import panel_client
from tests.shared import REPO, scaled

TOKEN = "s3cret-token"
DARK_OR_LIGHT = {" ": (True, True), "▀": (False, True), "▄": (True, False), "█": (False, False)}


def _decode(modules: list[list[bool]]) -> str:
    """What a camera reads off the code: drawn 8 pixels a module, black on white."""
    image = np.where(np.array(modules, dtype=bool), 0, 255).astype(np.uint8)
    image = cv2.resize(image, None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    text, _points, _ = cv2.QRCodeDetector().detectAndDecode(image)
    return str(text)


def _terminal_modules(lines: list[str]) -> list[list[bool]]:
    rows: list[list[bool]] = []
    for line in lines:
        pairs = [DARK_OR_LIGHT[glyph] for glyph in line]
        rows += [[top for top, _ in pairs], [bottom for _, bottom in pairs]]
    return rows


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", None),
        ("127.0.0.5", None),
        ("localhost", None),
        ("::1", None),
        ("192.168.1.20", "192.168.1.20"),
        ("panel.club.example", "panel.club.example"),
    ],
)
def test_the_address_phones_use(host: str, expected: str | None) -> None:
    assert lan_address(host) == expected


@pytest.mark.parametrize("host", ["0.0.0.0", "::"])
def test_listening_everywhere_names_this_machine_not_the_wildcard(host: str) -> None:
    address = lan_address(host)
    assert address not in (None, "0.0.0.0", "::", "")
    url = join_url(host, 8799, TOKEN)
    assert url is not None and "0.0.0.0" not in url
    assert url.endswith(f":8799/?token={TOKEN}")


@pytest.mark.parametrize(
    "url", ["http://192.168.1.20:8765/?token=s3cret-token", "http://[fd00::7]:80/"]
)
def test_the_qr_code_reads_back_as_the_link(url: str) -> None:
    assert _decode(qr_matrix(url)) == url


def test_the_terminal_qr_code_reads_back_as_the_link() -> None:
    url = "http://10.0.0.4:8765/?token=abcdefghijklmnopqrstuv"
    out = io.StringIO()
    print_qr(url, out)
    assert _decode(_terminal_modules(out.getvalue().splitlines())) == url


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, "en"),
        ("", "en"),
        ("de-AT,de;q=0.9,en;q=0.8", "de"),
        ("ro-RO", "ro"),
        ("fr-FR,fr;q=0.9,ro;q=0.5,de;q=0.4", "ro"),
        ("en;q=0.2,de;q=0.7", "de"),
        ("de;q=0,ro", "ro"),
        ("ja,zh", "en"),
        ("de;q=banana,ro;q=0.5", "ro"),
        ("*", "en"),
    ],
)
def test_the_browsers_language_picks_the_pages_language(header: str | None, expected: str) -> None:
    assert best_language(header) == expected


@pytest.mark.parametrize(
    ("lang", "accept", "expected"),
    [(None, "ro,en;q=0.5", "ro"), ("de", "ro,en;q=0.5", "de"), (None, None, "en")],
)
def test_the_panel_tells_the_page_its_language(
    tmp_path: Path, lang: str | None, accept: str | None, expected: str
) -> None:
    headers = {"Accept-Language": accept} if accept else {}
    with panel_client(tmp_path, lang=lang) as client:
        answer = client.get("/api/panel", headers=headers).json()
    assert answer == {"lang": expected, "languages": ["de", "en", "ro"], "on_network": False}


def test_a_local_panel_has_nothing_to_join(tmp_path: Path) -> None:
    with panel_client(tmp_path) as client:
        assert client.get("/api/join").json() == {"url": None, "qr_svg": None, "qr_url": None}
        assert client.get("/api/join.svg").status_code == 404


def test_a_panel_on_the_network_shows_its_link_and_code(tmp_path: Path) -> None:
    with panel_client(tmp_path, host="0.0.0.0", port=8799, token=TOKEN) as client:
        assert client.get("/api/join").status_code == 401  # the code holds the token
        client.headers["X-Panel-Token"] = TOKEN
        answer = client.get("/api/join").json()
        image = client.get(answer["qr_url"])
    assert answer["url"] == join_url("0.0.0.0", 8799, TOKEN)
    assert answer["qr_svg"].startswith("<svg") and image.text == answer["qr_svg"]
    assert image.headers["content-type"].startswith("image/svg+xml")


@pytest.fixture
def network_panel(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tabletop", "panel", "--host", "0.0.0.0", "--port", str(port),
         "--token", TOKEN, "--database", f"sqlite:///{tmp_path / 'p.db'}", "--new", "Club"],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, encoding="utf-8",
    )
    try:
        yield process, port
    finally:
        process.kill()
        process.wait(timeout=scaled(10))


def test_tabletop_panel_prints_the_link_and_a_code_a_phone_can_scan(
    network_panel: tuple[subprocess.Popen[str], int],
) -> None:
    process, port = network_panel
    assert process.stderr is not None
    expected = join_url("0.0.0.0", port, TOKEN)
    assert expected is not None
    code_lines = (len(qr_matrix(expected)) + 1) // 2
    lines: list[str] = []
    deadline = time.monotonic() + scaled(30)
    while time.monotonic() < deadline and len(lines) < 2 + code_lines:
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
    said = "\n".join(lines)
    assert "0.0.0.0" not in said, said
    assert f"open {expected}" in said, said
    code = [line for line in lines if line and set(line) <= set(DARK_OR_LIGHT)]
    assert _decode(_terminal_modules(code)) == expected
