"""End to end: the panel's layout where players found it wanting (issue 45, items 12 and 6),
measured on the real element boxes in headless Chromium against ``tabletop panel`` (and, for
the penalty, the embedded panel beside a live game): nothing overlaps, a line stays one line,
a label is big enough to read, the part a player needs is on screen.
"""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from tabletop.live.bus import EventBus
from tabletop.panel.embed import start_panel
from tabletop.panel.settings import PanelSettings
from tests.panel.live_table import LiveTable
from tests.panel.test_e2e import _post
from tests.panel.test_scorekeeper_e2e import (
    DESKTOP,
    PHONE,
    WAIT_MS,
    _enter_round,
    _get,
    _page,
    _view,
    running_panel,
)
from tests.shared import needs

pytestmark = needs("chromium")
expect = sync_api.expect
LONG_NAME = "Freitagabend bei Anastasia und Bartholomäus, mit dem ganzen Kegelclub, Runde zwei"
CAMERA_GAME = [
    {"type": "turn_started", "seat": 0, "round": 1, "turn": 1},
    {"type": "table", "seat": 0, "melds": ["R10 R11 R12", "K7 B7 O7", "B1 B2 B3 B4"]},
    {"type": "meld_laid", "seat": 0, "meld": "R10 R11 R12"},
    {"type": "warning", "seat": 0, "code": "initial_too_low",
     "message": "the initial meld is 21, under 30", "items": ["B7", "O7", "K7"]},
]




def _box(page: Any, selector: str) -> dict[str, float]:
    """The element's box once it is laid out (a page redrawn as its data arrives may
    replace an element between being counted and being measured)."""
    element = page.locator(selector)
    element.wait_for(state="visible", timeout=WAIT_MS)
    box = element.bounding_box(timeout=WAIT_MS)
    assert box is not None, f"{selector} is not shown"
    return dict(box)


def _overlap(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def _lines(page: Any, selector: str) -> int:
    """How many lines the element's text is laid out on."""
    return int(page.locator(selector).evaluate(
        "node => { const range = document.createRange(); range.selectNodeContents(node);"
        " return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size; }"))


def _camera_match(base: str, *, rounds_limit: int | None = None) -> None:
    setup: dict[str, Any] = {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben", "Cem"]}
    if rounds_limit:
        setup["rounds_limit"] = rounds_limit
    _post(base, "/api/matches/1/setup", setup)
    for seq, event in enumerate(CAMERA_GAME, start=1):
        _post(base, "/api/matches/1/events", {"seq": seq, "t": float(seq), **event})


@pytest.mark.parametrize("width", [900, 1280, 1440])
def test_more_never_runs_into_the_language_switch(browser: Any, tmp_path: Path, width: int) -> None:
    with running_panel(tmp_path / "m.db", "--new", LONG_NAME) as base:
        page = _page(browser, {"width": width, "height": 800})
        page.goto(base + "/")
        expect(page.locator("#match-name")).to_have_text(f"· {LONG_NAME}", timeout=WAIT_MS)
        more, brand = _box(page, "#more"), _box(page, ".brand")
        for tool in ("#lang", "#mute", "#conn"):
            assert not _overlap(more, _box(page, tool)), (tool, more)
        assert brand["x"] + brand["width"] <= _box(page, "nav a[data-view='']")["x"] + 1
        # the name is cut short on one line, and the menu still opens onto its views
        assert _lines(page, "#match-name") == 1
        page.locator("#more").click()
        page.locator('#more-menu a[data-view="setup"]').click()
        expect(page.locator("#view-setup")).to_be_visible()
        assert not page.errors


@pytest.mark.parametrize(
    "viewport", [{"width": 1920, "height": 1080}, {"width": 1280, "height": 720}]
)
def test_the_tv_writes_its_progress_on_one_line(
    browser: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    with running_panel(tmp_path / "m.db", "--new", LONG_NAME) as base:
        _post(base, "/api/matches/1/setup", {"who": "Ana", "variant": "rommee",
                                             "players": ["Ana", "Ben"], "rounds_limit": 1})
        tv = _page(browser, viewport)
        tv.goto(base + "/tv")
        expect(tv.locator("#tv-progress")).to_have_text("Round 1 of 1", timeout=WAIT_MS)
        expect(tv.locator("#tv-unit")).to_be_visible()
        for line in ("#tv-progress", "#tv-unit", "#tv-title"):
            assert _lines(tv, line) == 1, line
        title, progress = _box(tv, "#tv-title"), _box(tv, "#tv-progress")
        assert not _overlap(title, progress)
        assert progress["width"] > 100, progress
        assert not tv.errors


def test_on_the_phone_the_table_is_in_view_and_save_opens_at_the_scores(
    browser: Any, tmp_path: Path
) -> None:
    with running_panel(tmp_path / "m.db", "--new", "Küche") as base:
        _camera_match(base, rounds_limit=1)
        page = _page(browser, PHONE)
        page.goto(base + "/")
        expect(page.locator("#melds-mini .meld")).to_have_count(3, timeout=WAIT_MS)
        last_meld = _box(page, "#melds-mini .meld >> nth=2")
        # above the bottom tab bar, without scrolling
        assert last_meld["y"] + last_meld["height"] <= PHONE["height"] - 60, last_meld
        # a camera game: the game's own buttons lead, "Enter a round" is the quiet one
        enter = page.locator("#enter-round")
        expect(enter).to_have_class(re.compile(r"\bquiet\b"))
        loud = page.locator("#winner-rematch").evaluate(
            "node => getComputedStyle(node).backgroundColor")
        assert enter.evaluate("node => getComputedStyle(node).backgroundColor") != loud

        # the round saved from the bottom of the entry: the page opens at the top, the scores
        _enter_round(page, {"Ben": 12, "Cem": 3}, "Ana")
        page.wait_for_function("() => window.scrollY === 0", timeout=WAIT_MS)
        board = _box(page, "#scoreboard")
        assert 0 <= board["y"] < PHONE["height"] - 120, board  # under the winner, in view
        # the match is over (its one round): no round to enter any more
        expect(page.locator("#winner")).to_be_visible(timeout=WAIT_MS)
        expect(enter).to_be_hidden()
        assert not page.errors


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_history_axis_labels_read_at_12_px(
    browser: Any, tmp_path: Path, viewport: dict[str, int]
) -> None:
    with running_panel(tmp_path / "m.db", "--new", "Plot") as base:
        _post(base, "/api/matches/1/setup",
              {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]})
        for loser in (12, 30, 7):
            _post(base, "/api/matches/1/rounds", {"who": "Ana", "players": [
                {"name": "Ana", "out": True}, {"name": "Ben", "points": loser}]})
        page = _page(browser, viewport)
        page.goto(base + "/history")
        labels = page.locator("#plot text.axis")
        expect(labels.first).to_be_visible(timeout=WAIT_MS)
        # measured in one go: the plot is redrawn as the state arrives, and a label counted
        # before a redraw is gone after it
        boxes = labels.evaluate_all(
            "nodes => nodes.map((n) => { const r = n.getBoundingClientRect(),"
            " p = n.ownerSVGElement.getBoundingClientRect();"
            " return [r.x, r.y, r.width, r.height, p.x, p.y, p.width, p.height]; })")
        assert len(boxes) >= 6 and min(box[3] for box in boxes) >= 12, boxes
        for x, y, width, height, *plot in boxes:
            label = {"x": x, "y": y, "width": width, "height": height}
            assert _overlap(label, dict(zip(("x", "y", "width", "height"), plot, strict=True)))
        assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]


@pytest.mark.parametrize(("language", "quote_open"), [("en", False), ("de", True)])
def test_why_names_the_rules_in_the_pages_language(
    browser: Any, tmp_path: Path, language: str, quote_open: bool
) -> None:
    with running_panel(tmp_path / "m.db", "--new", "Why", "--lang", language) as base:
        _camera_match(base)
        page = _page(browser, PHONE)
        page.goto(base + "/")
        warning = page.locator('#feed li[data-type="warning"]')
        rules = _get(base, f"/api/variants/sabra/rules?lang={language}")
        title = rules["warnings"]["initial_too_low"]["title"]
        expect(warning.locator(".line")).to_contain_text(title, timeout=WAIT_MS)  # rules loaded
        warning.locator(".explain-button").click()
        dialog = page.locator("#explain")
        expect(dialog).to_be_visible()
        text = dialog.inner_text()
        assert "rules/" not in text and ".txt" not in text, text
        expect(page.locator("#explain-source")).to_contain_text("Rummikub (Sabra)")
        quote = page.locator("#explain-quote")
        if quote_open:
            expect(quote).to_be_visible()
        else:
            # the German sentence is a tap away on an English page, not in its text
            expect(quote).to_be_hidden()
            expect(page.locator("#explain-original summary")).to_have_text(
                "The rule's own words (in German)")
        assert not page.errors


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_after_a_penalty_the_message_leaves_the_buttons_free(
    browser: Any, tmp_path: Path
) -> None:
    bus = EventBus()
    settings = PanelSettings(database_url=f"sqlite:///{tmp_path / 'm.db'}", port=_free_port())
    panel = start_panel(bus, variant_id="sabra", options={}, players=["Ana", "Ben"],
                        name="penalty", settings=settings)
    table = LiveTable(bus).start()
    try:
        page = _page(browser, PHONE)
        page.goto(panel.url)
        expect(page.locator("#turn .who")).to_have_text("Ana", timeout=WAIT_MS)
        # Ana lays a meld that is no meld and ends her turn: the game gives a penalty
        table.lay("R1 R5 K9")
        page.get_by_role("button", name="End turn").click()
        toast = page.locator("#toast")
        expect(toast).to_be_visible(timeout=WAIT_MS)
        shown = _box(page, "#toast")
        boxes = page.locator("#controls button, nav a, #enter-round").evaluate_all(
            "nodes => nodes.filter((n) => n.offsetParent !== null).map((n) => {"
            " const r = n.getBoundingClientRect();"
            " return {text: n.textContent, x: r.x, y: r.y, width: r.width, height: r.height}; })")
        assert len(boxes) >= 5, boxes  # the tabs and End turn at least
        covered = [box["text"] for box in boxes if _overlap(shown, box)]
        assert not covered, (covered, shown)
        assert toast.evaluate("node => getComputedStyle(node).pointerEvents") == "none"
        assert not page.errors
    finally:
        table.stop()
        panel.stop()


@pytest.mark.parametrize("view", ["round", "history", "matches", "setup"])
def test_a_view_opened_from_the_tabs_starts_at_its_top(
    browser: Any, tmp_path: Path, view: str
) -> None:
    with running_panel(tmp_path / "m.db", "--new", "Scroll") as base:
        _camera_match(base)
        page = _page(browser, PHONE)
        page.goto(base + "/")
        expect(page.locator("#feed li").first).to_be_visible(timeout=WAIT_MS)
        page.evaluate("scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("scrollY") > 0
        _view(page, view)
        page.wait_for_function("() => window.scrollY === 0", timeout=WAIT_MS)
        page.evaluate("scrollTo(0, document.body.scrollHeight)")
        _view(page, "")
        page.wait_for_function("() => window.scrollY === 0", timeout=WAIT_MS)
        assert not page.errors
