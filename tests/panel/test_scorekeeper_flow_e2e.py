"""End to end: the score keeper's own flow, as a group keeping score on a phone and a desktop
hits it (issue 45), in headless Chromium against ``tabletop panel`` in a subprocess.

The match a page shows never changes under it (a quit camera run's open match in the same
store, a newer match started elsewhere); one sign convention for penalty points on every
view and in the export; ending, deleting and playing a match again; the winner staying on
screen; the dealer by name on the Scores page and in the History; the first-run setup of
``panel --new``.
"""

from __future__ import annotations

import csv
import io
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api

from tabletop.panel.events import MatchSetUp
from tabletop.panel.service import PanelService
from tabletop.panel.store import EventStore
from tests.panel.test_e2e import _post
from tests.panel.test_scorekeeper_e2e import (
    DESKTOP,
    PHONE,
    TV,
    WAIT_MS,
    _enter_round,
    _get,
    _page,
    _set_up,
    _totals,
    _view,
    running_panel,
)
from tests.shared import needs

pytestmark = needs("chromium")
expect = sync_api.expect
SIZES = {"phone": PHONE, "desktop": DESKTOP}




def _leftover_camera_match(database: Path, players: list[str], *, scored: bool = False) -> int:
    """What a quit ``tabletop run`` leaves in the store: a Sabra match set up by the live
    table, a turn started and never ended (its timer long overdue), maybe a round scored."""
    service = PanelService(EventStore(f"sqlite:///{database}"))
    try:
        match_id = service.store.create_match("demo: Rummikub (Sabra)").id
        service.log(match_id, MatchSetUp(who="tabletop", variant="sabra", options={},
                                         players=tuple(players), dealer=0, turn_seconds=120))
        if scored:
            service.record(match_id, {"type": "round_scored", "seat": None, "round": 1,
                                      "scores": {players[0]: 10, players[1]: -4, players[2]: -6},
                                      "winner": players[0]})
        service.record(match_id, {"type": "turn_started", "seat": 1, "round": 2, "turn": 1,
                                  "t": 0.0, "seq": 1})
        return match_id
    finally:
        service.store.close()


def _shows(page: Any, match_id: int, name: str) -> None:
    expect(page.locator("#match-name")).to_have_text(f"· {name}", timeout=WAIT_MS)
    expect(page).to_have_url(re.compile(rf"[?&]match={match_id}\b"))


def _accept_dialogs(page: Any) -> list[str]:
    seen: list[str] = []

    def answer(dialog: Any) -> None:
        seen.append(dialog.message)
        dialog.accept()

    page.on("dialog", answer)
    return seen


# --- item 1: the match a page shows never changes under it ------------------------------------
def test_the_score_keepers_page_stays_on_its_match(browser: Any, tmp_path: Path) -> None:
    database = tmp_path / "matches.db"
    old = _leftover_camera_match(database, ["Ivo", "Jana", "Kai"])
    with running_panel(database, "--new", "Freitag", "--lang", "de") as base:
        phone = _page(browser, PHONE)
        _accept_dialogs(phone)
        phone.goto(base + "/")
        freitag = old + 1
        _shows(phone, freitag, "Freitag")
        _set_up(phone, "rommee", ["Ana", "Ben", "Cem"], rounds=2)
        _enter_round(phone, {"Ben": 23, "Cem": 7}, "Ana")
        # on Save the page stays on Freitag, not the camera run's match with its turn on
        _shows(phone, freitag, "Freitag")
        expect(phone.locator("#turn")).not_to_contain_text("Jana")
        _totals(phone, {"Ana": 0, "Ben": -23, "Cem": -7})
        _enter_round(phone, {"Ana": 4, "Cem": 10}, "Ben")
        _shows(phone, freitag, "Freitag")
        expect(phone.locator("#winner")).to_be_visible(timeout=WAIT_MS)
        expect(phone.locator("#winner-title")).to_contain_text("Ana")

        # taken back and entered again: still Freitag, and the winner comes back
        _view(phone, "history")
        phone.locator("#undo").click()
        _view(phone, "")
        expect(phone.locator("#winner")).to_be_hidden(timeout=WAIT_MS)
        _enter_round(phone, {"Ana": 4, "Cem": 10}, "Ben")
        _shows(phone, freitag, "Freitag")
        expect(phone.locator("#winner")).to_be_visible(timeout=WAIT_MS)

        # `/` and `/tv` opened fresh show the match `panel --new` made, with its winner
        tv = _page(browser, TV)
        tv.goto(base + "/tv")
        expect(tv.locator("#tv-title")).to_contain_text("Freitag", timeout=WAIT_MS)
        expect(tv.locator("#tv-winner-title")).to_contain_text("Ana", timeout=WAIT_MS)
        desktop = _page(browser, DESKTOP)
        desktop.goto(base + "/")
        _shows(desktop, freitag, "Freitag")

        # a newer match started at another table pulls neither the open pages nor a new one
        newer = _post(base, "/api/matches", {"name": "Samstag"})["id"]
        _post(base, f"/api/matches/{newer}/setup",
              {"who": "Ivo", "variant": "sabra", "players": ["Ivo", "Jana"]})
        _post(base, f"/api/matches/{newer}/rounds",
              {"who": "Ivo",
               "players": [{"name": "Ivo", "out": True}, {"name": "Jana", "points": 5}]})
        _view(phone, "history")
        _view(phone, "")
        _shows(phone, freitag, "Freitag")
        phone.reload()
        _shows(phone, freitag, "Freitag")
        expect(phone.locator("#winner")).to_be_visible(timeout=WAIT_MS)
        tv.reload()
        expect(tv.locator("#tv-title")).to_contain_text("Freitag", timeout=WAIT_MS)
        fresh = _page(browser, PHONE)
        fresh.goto(base + "/")
        _shows(fresh, freitag, "Freitag")
        assert not phone.errors and not tv.errors


# --- item 7: one sign convention for penalty points ------------------------------------------
@pytest.mark.parametrize("size", SIZES)
def test_penalty_points_read_the_same_on_every_view(
    browser: Any, tmp_path: Path, size: str
) -> None:
    with running_panel(tmp_path / "matches.db", "--new", "Rommé night") as base:
        page = _page(browser, SIZES[size])
        page.goto(base + "/")
        _set_up(page, "rommee", ["Ana", "Ben", "Cem"])
        _enter_round(page, {"Ben": 23, "Cem": 7}, "Ana",
                     preview={"Ana": "0", "Ben": "-23", "Cem": "-7"})
        ben = page.locator('#scoreboard li[data-player="Ben"]')
        expect(ben.locator(".total")).to_have_text(re.compile(r"^23"), timeout=WAIT_MS)
        expect(ben.locator(".last")).to_have_text("+23")
        expect(page.locator("#score-unit")).to_have_text("Penalty points: the fewest win")
        banner = page.locator('#round-banner li[data-player="Ben"] .value')
        expect(banner).to_have_text("23 penalty points")
        expect(page.locator("#feed li").first).to_contain_text(
            "penalty points Ana 0, Ben 23, Cem 7")

        _view(page, "history")
        expect(page.locator('#rounds tbody td[data-player="Ben"] button')).to_have_text("23")
        expect(page.locator('#rounds tfoot td[data-player="Ben"]')).to_have_text("23")
        expect(page.locator("#plot-unit")).to_have_text("Penalty points (the fewest win)")
        labels = [int(text) for text in page.locator("#plot text.axis").all_text_contents()]
        assert min(labels) >= 0 and max(labels) >= 23, labels

        with urllib.request.urlopen(base + "/api/matches/1/export.csv", timeout=10) as answer:
            rows = list(csv.reader(io.StringIO(answer.read().decode())))
        assert rows[0] == ["round", "dealer", "Ana penalty points", "Ben penalty points",
                           "Cem penalty points", "Ana total penalty points",
                           "Ben total penalty points", "Cem total penalty points"]
        assert rows[1] == ["1", "Ana", "0", "23", "7", "0", "23", "7"]

        _view(page, "players")
        card = page.locator('.player-card[data-player="Ben"]')
        expect(card.locator(".stat").nth(3)).to_have_text(
            re.compile(r"^23\s*penalty points per round$"))
        card.locator(".player-open").click()
        expect(card.locator(".played .total")).to_have_text(" 23 penalty points")
        _view(page, "matches")
        expect(page.locator('.match-card[data-match="1"] .outcome')).to_have_text(
            "Ana leads with 0 penalty points")

        tv = _page(browser, TV)
        tv.goto(base + "/tv")
        expect(tv.locator('#tv-board li[data-player="Ben"] .total')).to_have_text(
            "23", timeout=WAIT_MS)
        expect(tv.locator('#tv-board li[data-player="Ben"] .last')).to_have_text("+23")
        expect(tv.locator("#tv-unit")).to_have_text("Penalty points: the fewest win")
        expect(tv.locator(".tv-changes")).to_have_text("Ana 0 · Ben +23 · Cem +7")
        assert not page.errors and not tv.errors


# --- items 8 and 14: end, delete, play again, the winner stays, the dealer by name -------------
@pytest.mark.parametrize("size", SIZES)
def test_leftover_matches_are_ended_or_deleted_from_the_list(
    browser: Any, tmp_path: Path, size: str
) -> None:
    database = tmp_path / "matches.db"
    ended = _leftover_camera_match(database, ["Ivo", "Jana", "Kai"], scored=True)
    gone = _leftover_camera_match(database, ["Lea", "Mo", "Nils"])
    with running_panel(database) as base:
        page = _page(browser, SIZES[size])
        page.goto(base + "/matches")
        dialogs: list[str] = []

        def answer(dialog: Any) -> None:
            dialogs.append(dialog.message)
            # the first delete is thought better of; every other question is answered yes
            if "Delete" in dialog.message and len(dialogs) == 2:
                dialog.dismiss()
            else:
                dialog.accept()

        page.on("dialog", answer)
        card = page.locator(f'.match-card[data-match="{ended}"]')
        expect(card).to_have_class(re.compile(r"\bopen\b"), timeout=WAIT_MS)
        card.locator('button[data-action="close"]').click()
        expect(card).to_have_class(re.compile(r"\bfinished\b"), timeout=WAIT_MS)
        expect(card.locator(".outcome")).to_have_text("Ivo won")
        assert dialogs[0].startswith("End “demo: Rummikub (Sabra)” now?")
        state = _get(base, f"/api/matches/{ended}/state")
        assert state["result"]["over"] and state["result"]["closed"]["who"] == "panel"

        doomed = page.locator(f'.match-card[data-match="{gone}"]')
        doomed.locator('button[data-action="delete"]').click()
        expect(doomed).to_be_visible()  # the question was answered no: nothing happened
        doomed.locator('button[data-action="delete"]').click()
        expect(doomed).to_have_count(0, timeout=WAIT_MS)
        assert len(dialogs) == 3
        with pytest.raises(urllib.error.HTTPError) as refused:
            _get(base, f"/api/matches/{gone}/state")
        assert refused.value.code == 404
        assert "Lea" not in [player["name"] for player in _get(base, "/api/players")]
        _view(page, "players")
        expect(page.locator('.player-card[data-player="Ivo"]')).to_be_visible(timeout=WAIT_MS)
        expect(page.locator('.player-card[data-player="Lea"]')).to_have_count(0)
        assert not page.errors


@pytest.mark.parametrize("size", SIZES)
def test_the_winner_stays_and_the_same_players_play_again(
    browser: Any, tmp_path: Path, size: str
) -> None:
    with running_panel(tmp_path / "matches.db", "--new", "Freitag") as base:
        page = _page(browser, SIZES[size])
        page.goto(base + "/")
        _view(page, "setup")
        page.select_option("#setup-variant", "sabra")
        page.fill("#setup-players", "Ana\nBen\nCem")
        page.select_option("#setup-dealer", label="Ben")
        page.fill("#setup-rounds", "2")
        page.locator("#setup-form button[type=submit]").click()
        expect(page.locator("#toast")).to_be_visible()
        _view(page, "")
        expect(page.locator("#dealer-line")).to_have_text("Round 1: Ben deals", timeout=WAIT_MS)
        _enter_round(page, {"Ben": 12, "Cem": 3}, "Ana")
        expect(page.locator("#dealer-line")).to_have_text("Round 2: Cem deals", timeout=WAIT_MS)
        expect(page.locator("#round-banner .result")).to_have_text("Round 1: Ana wins · Ben dealt")
        _enter_round(page, {"Ana": 2, "Cem": 9}, "Ben")

        winner = page.locator("#winner")
        expect(winner).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#dealer-line")).to_be_hidden()
        # the winner stays: after "Show the scores", after a reload, on the TV
        page.locator("#winner-close").click()
        expect(winner).to_be_hidden()
        expect(page.locator("#winner-line")).to_have_text("★ Ana wins the match!")
        page.reload()
        expect(page.locator("#winner-line")).to_have_text("★ Ana wins the match!", timeout=WAIT_MS)
        tv = _page(browser, TV)
        tv.goto(base + "/tv")
        expect(tv.locator("#tv-winner-title")).to_have_text("Ana wins the match!", timeout=WAIT_MS)
        page.wait_for_timeout(2500)  # several state pushes later
        expect(tv.locator("#tv-winner")).to_be_visible()

        # the History names each round's dealer
        _view(page, "history")
        expect(page.locator("#rounds tbody td.dealer")).to_have_text(["Ben", "Cem"])

        # same players again: the match list's button, the next dealer (Ana) deals first
        _view(page, "matches")
        page.locator('.match-card[data-match="1"] button[data-action="rematch"]').click()
        expect(page.locator("#view-scores")).to_be_visible(timeout=WAIT_MS)
        _shows(page, 2, "Freitag 2")
        expect(page.locator("#toast")).to_have_text(
            "“Freitag 2”: the same players, Ana deals first")
        expect(page.locator("#scoreboard li")).to_have_count(3, timeout=WAIT_MS)
        expect(page.locator("#dealer-line")).to_have_text("Round 1: Ana deals")
        expect(page.locator("#match-progress")).to_have_text("Round 1 of 2")
        expect(page.locator("#winner")).to_be_hidden()
        setup = _get(base, "/api/matches/2/state")["setup"]
        assert (setup["variant"], setup["players"], setup["dealer"], setup["rounds_limit"]) == (
            "sabra", ["Ana", "Ben", "Cem"], 0, 2)
        assert not page.errors and not tv.errors


# --- item 13: the first-run setup of `panel --new`, cards typed on the phone's keyboard --------
@pytest.mark.parametrize("size", SIZES)
def test_a_new_match_leads_to_its_setup_with_the_dealer_by_name(
    browser: Any, tmp_path: Path, size: str
) -> None:
    with running_panel(tmp_path / "matches.db", "--new", "Freitag") as base:
        page = _page(browser, SIZES[size])
        page.goto(base + "/")
        first = page.locator("#first-run")
        expect(first).to_be_visible(timeout=WAIT_MS)
        expect(page.locator("#view-scores .scores")).to_be_hidden()
        first.locator("a").click()
        expect(page.locator("#view-setup")).to_be_visible()
        page.select_option("#setup-variant", "rommee")
        page.fill("#setup-players", "Ana\nBen\nCem")
        dealer = page.locator("#setup-dealer")
        expect(dealer.locator("option")).to_have_text(["Ana", "Ben", "Cem"])
        dealer.select_option(label="Cem")
        page.locator("#setup-form button[type=submit]").click()
        expect(page.locator("#toast")).to_have_text("Setup saved.")
        assert _get(base, "/api/matches/1/state")["setup"]["dealer"] == 2
        _view(page, "")
        expect(first).to_be_hidden(timeout=WAIT_MS)
        expect(page.locator("#dealer-line")).to_have_text("Round 1: Cem deals")

        # typing a rack's cards: the phone's own keyboard, not the number keys
        _view(page, "round")
        row = page.locator('.entry-row[data-player="Ben"]')
        row.locator(".name").click()
        expect(page.locator("#keypad")).to_be_visible()
        row.locator(".mode-toggle").click()
        expect(row.locator("input.hand")).to_have_attribute("inputmode", "text")
        expect(page.locator("#keypad")).to_be_hidden()
        row.locator(".mode-toggle").click()
        expect(page.locator("#keypad")).to_be_visible()
        assert not page.errors


def test_a_game_chosen_before_its_rules_texts_arrive_takes_its_own_options(
    browser: Any, tmp_path: Path
) -> None:
    # on a slow phone the options shown are the game chosen before (Sabra's) until the
    # chosen game's rules texts arrive; saving then must not send them as Rommé's
    with running_panel(tmp_path / "matches.db", "--new", "Rommé night") as base:
        page = _page(browser, PHONE)
        page.goto(base + "/")
        _view(page, "setup")
        expect(page.locator('#setup-options [data-option="joker_penalty"]')).to_have_count(1)
        held: list[Any] = []
        page.route("**/api/variants/rommee/rules*", lambda route: held.append(route))
        page.select_option("#setup-variant", "rommee")
        # the route's handler runs as the page's messages are taken in: wait for it, so
        # that the form is sent while the rules texts are held back
        for _ in range(200):
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the rules texts were not held back: the race was not set up"
        page.fill("#setup-players", "Ana\nBen\nCem")
        page.locator("#setup-form button[type=submit]").click()
        expect(page.locator("#toast")).to_have_text(re.compile("saved", re.I))
        setup = _get(base, "/api/matches/1/state")["setup"]
        assert setup["variant"] == "rommee"
        assert "joker_penalty" not in setup["options"]
        assert setup["options"].get("initial_meld", 40) == 40  # Rommé's, not Sabra's 30
        for route in held:
            route.continue_()
        expect(page.locator('#setup-options [data-option="joker_penalty"]')).to_have_count(0)
        assert not page.errors
