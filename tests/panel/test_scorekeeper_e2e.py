"""End to end: the panel as the table's score keeper, in headless Chromium against the real
server (uvicorn in a subprocess, a SQLite file).

Whole matches scored by hand through the round entry (keypad, typed racks, who went out,
the engine's preview) up to the winner screen in Sabra (zero-sum), Remi and Rommé (penalty
points); the match list after the server restarts on the same file; the pages in German and
Romanian; every view on a 390 px phone; the hint; rounds entered offline; the timer alarm;
the installable app.  Uses Debian's ``chromium`` through Playwright's ``executable_path``;
fails naming the install line when chromium is missing.  The README's pictures:
``tests/panel/screenshots.py``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from tabletop.engine.items import parse_items
from tabletop.engine.variants import find_variant
from tests.panel.test_e2e import REPO, _free_port, _post
from tests.shared import needs, scaled

pytestmark = needs("chromium")
expect = sync_api.expect
WAIT_MS = 10_000
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
TV = {"width": 1920, "height": 1080}
VIEWS = ("", "table", "round", "history", "matches", "players", "setup", "tv")


@contextmanager
def running_panel(database: Path, *args: str) -> Iterator[str]:
    """``tabletop panel`` on ``database`` in a subprocess: its base URL while it runs."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tabletop", "panel", "--database", f"sqlite:///{database}",
         "--port", str(port), *args],
        cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + scaled(20)
    try:
        while True:
            try:
                urllib.request.urlopen(base + "/api/matches/current", timeout=1).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the panel did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=scaled(10))


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=10) as response:
        return json.loads(response.read())




def _page(browser: Any, viewport: dict[str, int], **options: Any) -> Any:
    context = browser.new_context(viewport=viewport, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    return page


def _view(page: Any, name: str) -> None:
    """Go to a view the way a player does: its tab, or "More" and then the tab."""
    link = page.locator(f'nav a[data-view="{name}"]')
    if not link.is_visible():
        page.locator("#more").click()
    link.click()
    expect(page.locator(f"#view-{name or 'scores'}")).to_be_visible()


def _set_up(page: Any, variant: str, players: list[str], **numbers: int) -> None:
    """The setup view: the game, the players in seat order, a target or a number of rounds."""
    _view(page, "setup")
    page.select_option("#setup-variant", variant)
    page.fill("#setup-players", "\n".join(players))
    for field, value in numbers.items():
        page.fill(f"#setup-{field}", str(value))
    page.locator("#setup-form button[type=submit]").click()
    expect(page.locator("#toast")).to_be_visible()
    said = page.locator("#toast").text_content()
    _view(page, "")
    expect(page.locator("#scoreboard li"), f"after the toast {said!r}").to_have_count(
        len(players), timeout=WAIT_MS)


def _enter_round(
    page: Any,
    racks: dict[str, int | str],
    out: str | None,
    *,
    melds: dict[str, str] | None = None,
    flags: dict[str, str] | None = None,
    preview: dict[str, str] | None = None,
) -> None:
    """A round on the round entry: who went out, each rack's points on the keypad or its
    items typed, what was laid; the engine's preview checked, then saved."""
    _view(page, "round")
    if out is not None:
        page.locator(f'.entry-row[data-player="{out}"] .out-toggle').click()
        expect(page.locator(f'.entry-row[data-player="{out}"]')).to_have_class(re.compile(r"\bout\b"))
    for name, rack in racks.items():
        row = page.locator(f'.entry-row[data-player="{name}"]')
        row.locator(".name").click()
        expect(row).to_have_class(re.compile(r"\bselected\b"))
        if isinstance(rack, int):
            for digit in str(rack):
                page.locator(f'#keypad button[data-key="{digit}"]').click()
            expect(row.locator("input.points")).to_have_value(str(rack))
        else:
            row.locator(".mode-toggle").click()
            row.locator("input.hand").fill(rack)
    for name, laid in (melds or {}).items():
        page.locator(f'.entry-row[data-player="{name}"] .melds-input').fill(laid)
    for name, flag in (flags or {}).items():
        page.locator(f'.entry-row[data-player="{name}"] input[data-flag="{flag}"]').check()
    for name, points in (preview or {}).items():
        expect(page.locator(f'#round-preview li[data-player="{name}"] .value')).to_have_attribute(
            "data-points", points, timeout=WAIT_MS)
    save = page.locator("#round-save")
    expect(save).to_be_enabled(timeout=WAIT_MS)
    save.click()
    expect(page.locator("#view-scores")).to_be_visible(timeout=WAIT_MS)


def _totals(page: Any, expected: dict[str, int]) -> None:
    for name, total in expected.items():
        expect(page.locator(f'#scoreboard li[data-player="{name}"] .total')).to_have_attribute(
            "data-total", str(total), timeout=WAIT_MS)


def _fits(page: Any) -> None:
    width = page.evaluate("innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url


def test_a_sabra_match_scored_by_hand_and_listed_after_a_restart(
    browser: Any, tmp_path: Path
) -> None:
    database = tmp_path / "matches.db"
    with running_panel(database, "--new", "Friday night") as base:
        page = _page(browser, DESKTOP)
        page.goto(base + "/")
        _set_up(page, "sabra", ["Ana", "Ben", "Cem"], target=50)
        expect(page.locator("#match-progress")).to_have_text("First to 50 points wins")

        # Ana went out; Ben counted 12, Cem's rack is typed (R3 R4 JK = 3 + 4 + 30)
        _enter_round(page, {"Ben": 12, "Cem": "R3 R4 JK"}, "Ana",
                     preview={"Ana": "49", "Ben": "-12", "Cem": "-37"})
        _totals(page, {"Ana": 49, "Ben": -12, "Cem": -37})
        # zero-sum: what Ana won the others lost, and she is 49 of the way to 50
        ana = page.locator('#scoreboard li[data-player="Ana"]')
        expect(ana.locator(".progress-text")).to_have_text("49 of 50")
        expect(ana.locator("[role=progressbar]")).to_have_attribute("aria-valuenow", "98")
        expect(page.locator("#feed li").first).to_contain_text("panel entered round 1 — Ana wins")

        # a mistake in round 1: Ben had 10, corrected from the History the same way
        _view(page, "history")
        page.locator('#rounds tr[data-round="1"] button').first.click()
        expect(page.locator("#round-title")).to_have_text("Correct round 1")
        expect(page.locator('.entry-row[data-player="Ben"] input.points')).to_have_value("12")
        expect(page.locator('.entry-row[data-player="Cem"] input.hand')).to_have_value("R3 R4 JK")
        expect(page.locator('.entry-row[data-player="Ana"]')).to_have_class(re.compile(r"\bout\b"))
        page.locator('.entry-row[data-player="Ben"] .name').click()
        page.locator('#keypad button[data-key="back"]').click()
        page.locator('#keypad button[data-key="0"]').click()
        expect(page.locator('#round-preview li[data-player="Ana"] .value')).to_have_attribute(
            "data-points", "47", timeout=WAIT_MS)
        page.locator("#round-save").click()
        _totals(page, {"Ana": 47, "Ben": -10, "Cem": -37})
        expect(page.locator("#feed li").first).to_contain_text("panel corrected round 1")
        expect(page.locator("#winner")).to_be_hidden()

        # round 2: Ana goes out again, and 3 more take her past 50
        _enter_round(page, {"Ben": 1, "Cem": 2}, "Ana", preview={"Ana": "3"})
        _totals(page, {"Ana": 50, "Ben": -11, "Cem": -39})

        # 50 reached: the match is over and the winner screen says so
        winner = page.locator("#winner")
        expect(winner).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#winner-title")).to_have_text("Ana wins the match!")
        expect(winner.locator("li.champion")).to_have_attribute("data-player", "Ana")
        _view(page, "round")
        expect(page.locator("#round-save")).to_be_disabled()
        expect(page.locator("#round-preview")).to_contain_text("The match is over")

        # the TV shows it across the room
        tv = _page(browser, TV)
        tv.goto(base + "/tv")
        expect(tv.locator("#tv-winner-title")).to_have_text("Ana wins the match!", timeout=WAIT_MS)
        expect(tv.locator(".bar")).to_be_hidden()
        size = tv.locator('#tv-board li[data-player="Ana"] .total').evaluate(
            "node => parseFloat(getComputedStyle(node).fontSize)")
        assert size >= 80, size  # 9vh of 1080 px

    # the server stops and starts again on the same file: the match is listed, finished
    with running_panel(database) as base:
        page = _page(browser, PHONE)
        page.goto(base + "/matches")
        card = page.locator('.match-card[data-match="1"]')
        expect(card).to_have_class(re.compile(r"\bfinished\b"), timeout=WAIT_MS)
        expect(card.locator(".match-name")).to_have_text("Friday night")
        expect(card.locator(".outcome")).to_have_text("Ana won")
        expect(card.locator(".about")).to_contain_text("Ana, Ben, Cem · 2 rounds")
        # a new match, listed as open before the finished one
        page.fill("#new-match-name", "Saturday")
        page.locator("#new-match button[type=submit]").click()
        expect(page.locator("#view-setup")).to_be_visible(timeout=WAIT_MS)
        assert "match=2" in page.url
        expect(page.locator("#setup-players")).to_have_value("Ana\nBen\nCem")
        _view(page, "matches")
        expect(page.locator(".match-card").first).to_have_attribute("data-match", "2")
        expect(page.locator(".match-card").nth(1)).to_have_attribute("data-match", "1")
        # the players' profiles from the store
        _view(page, "players")
        ana = page.locator('.player-card[data-player="Ana"]')
        expect(ana.locator(".stat-value").nth(1)).to_have_text("1")  # wins
        ana.locator(".player-open").click()
        expect(ana.locator(".played li")).to_have_count(1)
        expect(ana.locator(".played li")).to_contain_text("Friday night")
        _fits(page)
        assert not page.errors


def test_a_remi_match_scored_by_hand_on_a_phone(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "remi.db", "--new", "Remi") as base:
        page = _page(browser, PHONE)
        page.goto(base + "/")
        _set_up(page, "remi", ["Ana", "Ben"], rounds=2)
        expect(page.locator("#match-progress")).to_have_text("Round 1 of 2")
        # Remi scores what each laid: Ana out with 4 x 10 (+100 for winning); Ben laid
        # 3 x 5 and holds 30
        _enter_round(page, {"Ben": 30}, "Ana",
                     melds={"Ana": "R10 R11 R12 R13", "Ben": "B5 B6 B7"},
                     preview={"Ana": "140", "Ben": "-15"})
        _fits(page)
        _totals(page, {"Ana": 140, "Ben": -15})
        # Ben goes out; Ana never laid anything: -200 whatever her rack holds
        _enter_round(page, {"Ana": 40}, "Ben", melds={"Ben": "K2 K3 K4 K5 | O9 O10 O11"},
                     preview={"Ana": "-200", "Ben": "145"})
        _totals(page, {"Ana": -60, "Ben": 130})
        expect(page.locator("#winner-title")).to_have_text("Ben wins the match!", timeout=WAIT_MS)
        expect(page.locator("#winner-standings li").first).to_have_attribute("data-player", "Ben")
        _fits(page)
        # the winner screen steps aside for the scores
        page.locator("#winner-close").click()
        expect(page.locator("#winner")).to_be_hidden()
        assert not page.errors


def test_a_rommee_match_with_penalty_points_in_german(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "rommee.db", "--new", "Rommé-Abend") as base:
        page = _page(browser, DESKTOP)
        page.goto(base + "/")
        page.select_option("#lang", "de")
        expect(page.locator('nav a[data-view="history"]')).to_have_text("Verlauf")
        _set_up(page, "rommee", ["Ana", "Ben", "Cem"], target=100)
        expect(page.locator("#match-progress")).to_have_text(
            "Die Partie endet bei 100 Strafpunkten")
        _enter_round(page, {"Ben": 40, "Cem": 25}, "Ana", preview={"Ben": "-40", "Cem": "-25"})
        expect(page.locator('#scoreboard li[data-player="Ben"] .total')).to_have_text("40+40")
        # Ben goes out all at once (Hand-Rommé): the others' penalty points count double
        page.locator('nav a[data-view="round"]').click()
        page.locator('.entry-row[data-player="Ben"] .out-toggle').click()
        page.locator('.entry-row[data-player="Ben"] input[data-flag="all_at_once"]').check()
        for name, digits in (("Ana", "30"), ("Cem", "20")):
            page.locator(f'.entry-row[data-player="{name}"] .name').click()
            for digit in digits:
                page.locator(f'#keypad button[data-key="{digit}"]').click()
        expect(page.locator("#round-preview .doubled")).to_have_text("Doppelt!", timeout=WAIT_MS)
        ana_now = page.locator('#round-preview li[data-player="Ana"] .value')
        expect(ana_now).to_have_text("60 Strafpunkte")
        page.locator("#round-save").click()
        _totals(page, {"Ana": -60, "Ben": -40, "Cem": -65})
        # Ana reaches 105 of the 100 penalty points: the fewest, Ben's 50, win
        _enter_round(page, {"Ana": 45, "Ben": 10}, "Cem")
        expect(page.locator("#winner-title")).to_have_text(
            "Ben gewinnt die Partie!", timeout=WAIT_MS)
        expect(page.locator("#winner-standings li").nth(0)).to_have_attribute("data-player", "Ben")
        expect(page.locator("#winner-standings li").nth(0).locator(".total")).to_have_text("50")
        expect(page.locator("#winner-standings li").nth(2).locator(".total")).to_have_text("105")
        feed = page.locator("#feed li")
        expect(feed.first).to_have_text("Partie vorbei — Ben gewinnt")
        expect(feed.nth(1)).to_have_text(
            "panel hat Runde 3 eingetragen — Cem gewinnt: Strafpunkte Ana 45, Ben 10, Cem 0")
        assert not page.errors


ENGLISH = re.compile(
    r"\b(Scores|Round|Rounds|History|Matches|Players|Setup|Enter|Save|Latest|Turn|Table|"
    r"Undo|Cancel|Next|Went out|points|wins|What can I play|New match|Game|Target|Remember|"
    r"Language|Corrections|Export|opening|lays|went|rack|timer|Waiting)\b"
)


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("de", ("Punktestand", "Runde eintragen", "Was kann ich legen?", "Ana legt R10 R11 R12",
                "Eröffnung 33 von 30", "von Hand ein", "Partien", "Einstellungen speichern")),
        ("ro", ("Scorul", "Adaugă o rundă", "Ce pot să pun jos?", "Ana etalează R10 R11 R12",
                "deschidere 33 din 30", "de mână", "Partide", "Salvează setările")),
    ],
)
def test_the_pages_in_german_and_romanian(
    browser: Any, tmp_path: Path, language: str, expected: tuple[str, ...]
) -> None:
    with running_panel(tmp_path / "lang.db", "--new", "Abend") as base:
        _post(base, "/api/matches/1/setup",
              {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben", "Cem"]})
        _post(base, "/api/matches/1/rounds", {"who": "Ana", "players": [
            {"name": "Ana", "out": True}, {"name": "Ben", "points": 12},
            {"name": "Cem", "hand": "R3 R4 JK"}]})
        for seq, event in enumerate([
            {"type": "turn_started", "seat": 0, "round": 2, "turn": 1},
            {"type": "table", "seat": 0, "melds": ["R10 R11 R12"]},
            {"type": "meld_laid", "seat": 0, "meld": "R10 R11 R12"},
            {"type": "warning", "seat": 0, "code": "initial_too_low",
             "message": "the initial meld is 21, under 30", "items": ["B7", "O7", "K7"]},
        ], start=1):
            _post(base, "/api/matches/1/events", {"seq": seq, "t": float(seq), **event})
        # German from the switch; Romanian from the browser's language (the panel's default)
        locale = "ro-RO" if language == "ro" else "en-GB"
        page = _page(browser, PHONE, locale=locale)
        page.goto(base + "/")
        if language == "de":
            page.locator("#lang").select_option("de")
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator("#scoreboard li")).to_have_count(3, timeout=WAIT_MS)
        seen = ""
        for name in VIEWS[:-1]:
            _view(page, name)
            if name == "players":
                expect(page.locator(".player-card")).to_have_count(3, timeout=WAIT_MS)
            if name == "matches":
                expect(page.locator(".match-card")).to_have_count(1, timeout=WAIT_MS)
            if name == "setup":
                expect(page.locator("#setup-options .option").first).to_be_visible(timeout=WAIT_MS)
            text = page.locator(f"#view-{name or 'scores'}").inner_text()
            text += page.locator("header.bar").inner_text()
            leftovers = ENGLISH.findall(text)
            assert not leftovers, (name, leftovers, text)
            seen += text
            _fits(page)
        for phrase in expected:
            assert phrase in seen, (phrase, seen)
        # the language is remembered on this device
        page.reload()
        expect(page.locator("html")).to_have_attribute("lang", language)

        # setup: the options in plain words with the rule text's own sentence
        _view(page, "setup")
        option = page.locator('#setup-options .option[data-name="set_joker_needs_both"]')
        expect(option.locator(".option-label")).not_to_contain_text("set_joker")
        expect(option.locator(".option-label")).not_to_be_empty()
        expect(page.locator("#setup-options blockquote").first).to_be_visible()

        # the warning in the feed, explained: title, explanation and the rule's sentence
        _view(page, "")
        warning = page.locator('#feed li[data-type="warning"]')
        warning.locator(".explain-button").click()
        dialog = page.locator("#explain")
        expect(dialog).to_be_visible()
        texts = _get(base, f"/api/variants/sabra/rules?lang={language}")
        rules = texts["warnings"]["initial_too_low"]
        expect(page.locator("#explain-title")).to_have_text(rules["title"])
        expect(page.locator("#explain-text")).to_have_text(rules["explanation"])
        if rules["quote"]:
            expect(page.locator("#explain-quote")).to_contain_text(rules["quote"])
        expect(warning.locator(".line")).to_contain_text(rules["title"])
        dialog.locator("button").click()
        expect(dialog).to_be_hidden()
        assert not page.errors


def test_every_view_fits_a_phone(browser: Any, tmp_path: Path) -> None:
    long_name = "A very long match name for a small phone"
    with running_panel(tmp_path / "phone.db", "--new", long_name) as base:
        _post(base, "/api/matches/1/setup", {"who": "Ana", "variant": "remi",
              "players": ["Anastasia-Maria", "Bartholomäus", "Cem", "Dora", "Eleonora", "Fritz"]})
        page = _page(browser, PHONE)
        page.goto(base + "/")
        expect(page.locator("#scoreboard li")).to_have_count(6, timeout=WAIT_MS)
        nav = page.locator("nav")
        for name in VIEWS:
            if name == "tv":
                page.goto(base + "/tv")
            else:
                _view(page, name)
            page.wait_for_timeout(200)
            _fits(page)
            if name != "tv":
                # the tab bar: one row of five, at the bottom, never wrapping
                tabs = page.locator("nav a.primary, nav #more")
                tops = {round(tab.bounding_box()["y"]) for tab in tabs.all()}
                assert len(tops) == 1 and tabs.count() == 5, tops
                box = nav.bounding_box()
                assert box["y"] + box["height"] == pytest.approx(844, abs=1)
                assert all(tab.bounding_box()["height"] >= 48 for tab in tabs.all())
        # the round entry: big keys and buttons under the thumb
        page.goto(base + "/round")
        expect(page.locator(".entry-row")).to_have_count(6, timeout=WAIT_MS)
        for key in page.locator("#keypad button").all():
            assert key.bounding_box()["height"] >= 56
        assert page.locator(".entry-row .out-toggle").first.bounding_box()["height"] >= 48
        page.locator('.entry-row[data-player="Cem"] .name').click()
        page.locator('.entry-row[data-player="Cem"] .mode-toggle').click()
        page.locator('.entry-row[data-player="Cem"] input.hand').fill(
            "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 JK")
        _fits(page)
        assert not page.errors


def _legal(variant_id: str, melds: list[str]) -> bool:
    variant = find_variant(variant_id)
    return all(variant.analyse(parse_items(meld)).valid for meld in melds)


def test_the_hint_shows_a_legal_best_play(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "hint.db", "--new", "Hint") as base:
        _post(base, "/api/matches/1/setup",
              {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]})
        _post(base, "/api/matches/1/events",
              {"seq": 1, "t": 1.0, "type": "table", "seat": None,
               "melds": ["R3 R4 R5", "B7 O7 K7"]})
        page = _page(browser, PHONE)
        page.goto(base + "/")
        expect(page.locator("#melds-mini .meld")).to_have_count(2, timeout=WAIT_MS)
        page.fill("#hint-rack", "r6 b10 b11 b12 k1")
        page.get_by_role("button", name="What can I play?").click()
        result = page.locator("#hint-result")
        expect(result.locator(".hint-play")).to_contain_text("Lay", timeout=WAIT_MS)
        table = [" ".join(m.locator(".item").all_inner_texts())
                 for m in result.locator(".meld").all()]
        assert len(table) == 3 and _legal("sabra", table), table
        placed = result.locator(".item.placed").all_inner_texts()
        assert sorted(placed) == ["B10", "B11", "B12", "R6"], placed
        # the new and changed melds are marked: the run R3-R6 and B10-B12
        fresh = [" ".join(m.locator(".item").all_inner_texts())
                 for m in result.locator(".meld.new").all()]
        assert sorted(fresh) == ["B10 B11 B12", "R3 R4 R5 R6"], fresh
        assert "K1" not in " ".join(placed)
        _fits(page)

        # the counting phase: the rack Ben shows is asked about without typing it; he has not
        # opened, so the play must make Sabra's 30
        for seq, event in enumerate([
            {"type": "player_out", "seat": 0},
            {"type": "hand_shown", "seat": 1, "items": ["O10", "O11", "O12", "K9"], "value": 42},
        ], start=2):
            _post(base, "/api/matches/1/events", {"seq": seq, "t": float(seq), **event})
        expect(page.locator("#hint-seat-label")).to_be_visible(timeout=WAIT_MS)
        page.fill("#hint-rack", "")
        page.select_option("#hint-seat", "1")
        page.get_by_role("button", name="What can I play?").click()
        expect(result.locator(".item.placed")).to_have_text(["O10", "O11", "O12"], timeout=WAIT_MS)
        expect(result.locator(".meld.new")).to_have_count(1)
        expect(result.locator("p.muted")).to_have_text("worth 33 points · enough to open")
        assert not page.errors


def test_a_round_entered_offline_is_queued_and_sent(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "offline.db", "--new", "Camping") as base:
        _post(base, "/api/matches/1/setup",
              {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]})
        page = _page(browser, PHONE)
        page.goto(base + "/")
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        page.context.set_offline(True)
        _view(page, "round")
        page.locator('.entry-row[data-player="Ana"] .out-toggle').click()
        page.locator('.entry-row[data-player="Ben"] .name').click()
        for digit in "17":
            page.locator(f'#keypad button[data-key="{digit}"]').click()
        expect(page.locator("#round-preview")).to_contain_text("No connection", timeout=WAIT_MS)
        page.locator("#round-save").click()
        expect(page.locator("#toast")).to_contain_text("round 1 is kept")
        expect(page.locator("#round-pending li")).to_have_text(["Round 1 · waiting to be sent"])
        queued = page.evaluate("JSON.parse(localStorage.getItem('panelQueue'))")
        assert len(queued) == 1 and len(queued[0]["key"]) == 32
        _view(page, "")
        expect(page.locator("#pending")).to_contain_text("1 round is waiting")
        assert _get(base, "/api/matches/1/state")["rounds"] == []

        # back online: sent once (the same Idempotency-Key), and gone from the queue
        page.context.set_offline(False)
        _totals(page, {"Ana": 17, "Ben": -17})
        expect(page.locator("#pending")).to_be_hidden(timeout=WAIT_MS)
        assert page.evaluate("localStorage.getItem('panelQueue')") == "[]"
        rounds = _get(base, "/api/matches/1/state")["rounds"]
        assert [r["scores"] for r in rounds] == [{"Ana": 17, "Ben": -17}]
        # sending it again, as after a lost answer, stores nothing new
        request = urllib.request.Request(
            base + "/api/matches/1/rounds", method="POST",
            data=json.dumps(queued[0]["body"]).encode(),
            headers={"Content-Type": "application/json", "Idempotency-Key": queued[0]["key"]})
        urllib.request.urlopen(request, timeout=10).close()
        assert len(_get(base, "/api/matches/1/state")["rounds"]) == 1
        assert not page.errors


def test_the_timer_alarm_rings_when_the_turn_runs_out(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "timer.db", "--new", "Quick") as base:
        _post(base, "/api/matches/1/setup", {"who": "Ana", "variant": "sabra",
              "players": ["Ana", "Ben"], "turn_seconds": 5})
        page = _page(browser, PHONE)
        page.add_init_script(
            "window.vibrations = [];"
            " navigator.vibrate = (p) => { window.vibrations.push(p); return true; };")
        page.goto(base + "/")
        expect(page.locator("#conn")).to_have_text("live", timeout=WAIT_MS)
        page.locator(".brand").click()  # the tap that lets the page make sounds
        _post(base, "/api/matches/1/events",
              {"seq": 1, "t": 1.0, "type": "turn_started", "seat": 1,
               "round": 1, "turn": 1})
        expect(page.locator("#turn .who")).to_have_text("Ben", timeout=WAIT_MS)
        expect(page.locator("body")).to_have_attribute("data-alarms", "1", timeout=9000)
        expect(page.locator("#turn .timer")).to_have_class(re.compile(r"\blate\b"))
        assert page.evaluate("window.vibrations.length") == 1
        # muted: the next turn runs out silently
        page.locator("#mute").click()
        expect(page.locator("#mute")).to_have_attribute("aria-pressed", "true")
        _post(base, "/api/matches/1/events",
              {"seq": 2, "t": 2.0, "type": "turn_started", "seat": 0,
               "round": 1, "turn": 2})
        expect(page.locator("#turn .who")).to_have_text("Ana", timeout=WAIT_MS)
        expect(page.locator("body")).to_have_attribute("data-alarms", "2", timeout=9000)
        assert page.evaluate("window.vibrations.length") == 1
        assert not page.errors


def test_the_panel_installs_and_opens_offline(browser: Any, tmp_path: Path) -> None:
    with running_panel(tmp_path / "app.db", "--new", "App") as base:
        manifest = _get(base, "/manifest.webmanifest")
        assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
        assert any(icon["src"].endswith(".svg") for icon in manifest["icons"])
        with urllib.request.urlopen(base + "/sw.js", timeout=10) as response:
            assert response.headers["Content-Type"].startswith("text/javascript")
        _post(base, "/api/matches/1/setup",
              {"who": "Ana", "variant": "sabra", "players": ["Ana", "Ben"]})
        page = _page(browser, PHONE)
        page.goto(base + "/")
        scope = page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
        assert scope == base + "/"
        cached = page.evaluate(
            "caches.keys().then((keys) => caches.open(keys[0])).then((c) => c.keys())"
            ".then((r) => r.map((x) => new URL(x.url).pathname))")
        assert {"/", "/static/panel.js", "/static/i18n/de.json"} <= set(cached)
        # with no network the shell still opens, on any view
        page.reload()  # now controlled by the worker, which keeps what the page reads
        kept = (
            "caches.keys().then((keys) => caches.open(keys[0]))"
            ".then((c) => Promise.all(['/api/matches/1/state', '/api/variants']"
            ".map((path) => c.match(path))))"
            ".then((answers) => answers.every(Boolean))"
        )
        deadline = time.monotonic() + 10
        while not page.evaluate(kept):
            assert time.monotonic() < deadline, "the worker kept no copy of the state"
            page.wait_for_timeout(100)
        page.context.set_offline(True)
        page.goto(base + "/history")
        expect(page.locator("#view-history")).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("nav a.active")).to_have_attribute("data-view", "history")
        expect(page.locator("#conn")).to_have_text("offline")
        # the last state seen is shown, and a round can be entered, to be sent later
        expect(page.locator("#rounds thead th")).to_have_text(["Round", "Dealer", "Ana", "Ben"])
        _view(page, "round")
        expect(page.locator(".entry-row")).to_have_count(2)
        assert not page.errors
