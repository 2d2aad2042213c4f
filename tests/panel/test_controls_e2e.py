"""End to end: a round played with the panel's buttons in headless Chromium.

The embedded panel (``panel.embed.start_panel``, real uvicorn) beside a real
:class:`tabletop.live.game.Game` whose loop thread applies the panel's actions between
"frames" (see ``test_panel_controls.LiveTable``); the camera's table snapshots
are handed to that loop.  Uses Debian's ``chromium`` through Playwright's
``executable_path``; fails naming the install line when chromium is missing.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from playwright import sync_api

from tabletop.live.bus import EventBus
from tabletop.panel.embed import start_panel
from tabletop.panel.settings import PanelSettings
from tests.panel.live_table import BEN_OPENS, OPENING, LiveTable
from tests.shared import needs

CHROMIUM = next(
    (path for name in ("chromium", "chromium-browser") if (path := shutil.which(name))), None
)
pytestmark = needs("chromium")
WAIT_MS = 10000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_round_played_with_the_panels_buttons(tmp_path: Path) -> None:
    expect = sync_api.expect
    bus = EventBus()
    settings = PanelSettings(database_url=f"sqlite:///{tmp_path / 'm.db'}", port=_free_port())
    panel = start_panel(bus, variant_id="sabra", options={}, players=["Ana", "Ben"],
                        name="buttons", settings=settings)
    table = LiveTable(bus).start()
    try:
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            # a phone: the Scores view comes first, with the buttons under the thumb
            page = browser.new_page(viewport={"width": 390, "height": 844})
            page.goto(panel.url)
            end_turn = page.get_by_role("button", name="End turn")
            expect(page.locator("#turn .who")).to_have_text("Ana", timeout=WAIT_MS)
            expect(end_turn).to_be_enabled()
            expect(page.locator("#controls-hint")).to_be_hidden()
            for action in ("end_turn", "out", "pause_timer", "undo"):
                box = page.locator(f'[data-action="{action}"]').bounding_box()
                assert box is not None and box["height"] >= 48, action
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            expect(page.locator('[data-action="next_round"]')).to_be_hidden()

            # Ana opens on the table and ends her turn on the panel: Ben's turn
            table.lay(OPENING)
            end_turn.click()
            expect(page.locator("#turn .who")).to_have_text("Ben", timeout=WAIT_MS)
            expect(page.locator('#scoreboard li[data-player="Ben"]')).to_have_class("turn")

            # the timer stands still while paused
            page.locator('[data-action="pause_timer"]').click()
            resume = page.get_by_role("button", name="Resume timer")
            expect(resume).to_have_attribute("data-action", "resume_timer", timeout=WAIT_MS)
            expect(page.locator("#turn .timer")).to_have_class("timer paused")
            shown = page.locator("#turn .timer").text_content()
            page.wait_for_timeout(1500)
            assert page.locator("#turn .timer").text_content() == shown
            resume.click()
            expect(page.locator('[data-action="pause_timer"]')).to_have_text(
                "Pause timer", timeout=WAIT_MS)

            # Ben lays his opening and goes out: the racks are counted
            table.lay(OPENING, BEN_OPENS)
            page.get_by_role("button", name="I'm out").click()
            next_round = page.locator('[data-action="next_round"]')
            expect(next_round).to_be_visible(timeout=WAIT_MS)
            expect(end_turn).to_be_hidden()
            expect(page.locator('#racks li[data-seat="1"] .rack')).to_have_text("went out")
            ana = page.locator('#racks li[data-seat="0"]')
            expect(ana.locator(".rack")).to_have_text("not seen yet")
            # the camera cannot see Ana's rack: she types it (R3 R4 JK = 3 + 4 + 30)
            ana.get_by_role("textbox", name="Ana's rack").fill("R3 R4 JK")
            ana.get_by_role("button", name="Set Ana's rack").click()
            expect(ana.locator(".rack")).to_have_text("R3 R4 JK = 37 (typed)", timeout=WAIT_MS)

            next_round.click()
            banner = page.locator("#round-banner")
            expect(banner.locator(".result")).to_have_text(
                "Round 1: Ben wins · Ana dealt", timeout=WAIT_MS)
            expect(banner.locator("li.winner")).to_have_attribute("data-player", "Ben")
            expect(banner.locator(".points .value")).to_have_text(["+37", "-37"])
            total = page.locator('#scoreboard li[data-player="Ben"] .total')
            expect(total).to_have_attribute("data-total", "37")
            # round 2: Ben begins; the round's result stays up until his turn ends
            expect(page.locator("#turn .who")).to_have_text("Ben")
            expect(next_round).to_be_hidden()
            table.lay()  # the table is cleared for the new round
            end_turn.click()
            expect(page.locator("#turn .who")).to_have_text("Ana", timeout=WAIT_MS)
            expect(banner).to_be_hidden()

            # the pipeline's loop ends: the game buttons go, and the page says why
            table.stop()
            expect(end_turn).to_be_hidden(timeout=WAIT_MS)
            expect(page.locator("#controls-hint")).to_contain_text("No live table is attached")
            browser.close()
    finally:
        table.stop()
        panel.stop()
