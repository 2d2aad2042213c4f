"""A page on another port of this machine, in headless Chromium, against the real panel:
it can neither read the live match over the WebSocket nor change it.

Uses Debian's ``chromium`` through Playwright's ``executable_path`` (no browser is
downloaded).
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright import sync_api

from tabletop.panel.app import create_app
from tabletop.panel.embed import listen_socket
from tabletop.panel.settings import PanelSettings
from tests.shared import needs, scaled

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = needs("chromium")

PROBE = """<!doctype html><meta charset="utf-8"><title>probe</title><script>
window.seen = {messages: 0, closed: false, posted: null};
const ws = new WebSocket("ws://127.0.0.1:%(port)d/ws/matches/%(match)d");
ws.onmessage = () => { window.seen.messages += 1; };
ws.onclose = () => { window.seen.closed = true; };
fetch("http://127.0.0.1:%(port)d/api/matches", {
  method: "POST", mode: "no-cors", body: JSON.stringify({name: "from elsewhere"}),
}).then(() => { window.seen.posted = "sent"; }, () => { window.seen.posted = "failed"; });
</script>"""


@pytest.fixture
def panel(tmp_path: Path) -> Iterator[tuple[int, int]]:
    """The real panel on a free port of 127.0.0.1, with one match: (port, match id)."""
    sock = listen_socket("127.0.0.1", 0)
    port = int(sock.getsockname()[1])
    settings = PanelSettings(database_url=f"sqlite:///{tmp_path / 'p.db'}", port=port)
    app = create_app(settings)
    match_id = app.state.service.store.create_match("Friday").id
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    yield port, match_id
    server.should_exit = True
    thread.join(scaled(10))
    sock.close()


@pytest.fixture
def elsewhere(tmp_path: Path, panel: tuple[int, int]) -> Iterator[str]:
    """Another site on another port of 127.0.0.1, serving the probe page."""
    port, match_id = panel
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(PROBE % {"port": port, "match": match_id})
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


def test_a_page_on_another_port_can_neither_watch_nor_change_the_match(
    panel: tuple[int, int], elsewhere: str
) -> None:
    port = panel[0]
    statuses: list[int] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page()
        page.on(
            "response",
            lambda response: statuses.append(response.status)
            if response.url.endswith("/api/matches") else None,
        )
        page.goto(elsewhere)
        page.wait_for_function(
            "window.seen.closed && window.seen.posted !== null", timeout=scaled(10) * 1000
        )
        seen = page.evaluate("window.seen")
        browser.close()
    assert seen["messages"] == 0  # not one state of the match reached the other site
    assert statuses == [403]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/matches", timeout=10) as answer:
        names = [match["name"] for match in json.loads(answer.read())]
    assert names == ["Friday"]
