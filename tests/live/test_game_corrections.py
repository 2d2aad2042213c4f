"""A person's correction of a misread item reaches everything the game remembers.

The game is fed committed snapshots as the watcher would (``snapshot_from_json``)
and the corrections as ``live.pipeline.apply_correction`` hands them on: the token is
swapped in the table, its copy from the turn's start, the table the game waits
for, the table an invalid turn left standing, who laid what and the hands, so the
correction is no play.
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.items import parse_item, parse_items
from tabletop.engine.variants import find_variant
from tabletop.live.bus import EventBus
from tabletop.live.game import Game, GameError, ItemFix
from tabletop.live.scenario import snapshot_from_json
from tabletop.live.snapshot import TableSnapshot
from tests.shared import json_events

Events = list[dict[str, Any]]


def _game(variant: str) -> tuple[Game, Events]:
    bus = EventBus()
    events, _ = json_events(bus)
    return Game(find_variant(variant), ("Ana", "Ben", "Cem"), bus), events


def _snap(t: float, *melds: str, **raw: Any) -> TableSnapshot:
    return snapshot_from_json(t, {"melds": list(melds), **raw})


def _meld(text: str) -> tuple[Any, ...]:
    return tuple(parse_items(text))


def _of(events: Events, kind: str) -> Events:
    return [e for e in events if e["type"] == kind]


def _codes(events: Events) -> list[str]:
    return [e["code"] for e in _of(events, "warning")]


# --- Sabra: a tile laid two turns ago -------------------------------------------------
# Ana opens with B7 R7 K7 (21) and R11 R12 JK (36: the joker after R12 is an R13); the
# camera read the joker as R10, and R11 R12 R10 passed as a run worth 33.  Ben draws; in
# Cem's turn a player corrects it.


def _ana_opened(game: Game) -> None:
    game.update(_snap(1, "B7 R7 K7", "R11 R12 R10"))
    game.end_turn(t=2)  # Ana opens with 54
    game.end_turn(t=3)  # Ben draws


@pytest.mark.parametrize("corrected", [True, False])
def test_a_tile_laid_two_turns_ago_is_corrected_without_a_penalty(corrected: bool) -> None:
    game, events = _game("sabra")
    _ana_opened(game)
    assert game.seat == 2
    if corrected:
        held = game.correct_item(parse_item("R10"), parse_item("JK"), 4,
                                 meld=_meld("R11 R12 R10"), index=2, who="Ben")
        assert held
    # the camera now reads the joker (pinned); Cem opens with K11 K12 K13 (36)
    game.update(_snap(5, "B7 R7 K7", "R11 R12 JK", "K11 K12 K13"))
    game.end_turn(t=6)
    ended = _of(events, "turn_ended")[-1]
    if not corrected:  # the control: the game takes the swap for Cem's play
        assert "penalty" in _codes(events) and ended["valid"] is False
        return
    assert _codes(events) == []
    assert (ended["seat"], ended["valid"], ended["laid"]) == (2, True, ["K11", "K12", "K13"])
    fixed = _of(events, "reading_corrected")
    assert [(e["seat"], e["was"], e["item"], e["meld"], e["value"], e["who"]) for e in fixed] == [
        (0, "R10", "JK", "R11 R12 JK", 36, "Ben")]
    table = next(e for e in events if e["seq"] == fixed[0]["seq"] + 1)
    assert table["type"] == "table" and table["melds"] == ["B7 R7 K7", "R11 R12 JK"]
    # no turn changed hands, and Ana is credited with the joker at the end of the round
    assert [e["seat"] for e in _of(events, "turn_started")] == [0, 1, 2, 0]
    ana = game.round_input().players[0]
    assert [list(map(str, c.own)) for c in ana.melds] == [
        ["B7", "R7", "K7"], ["R11", "R12", "JK"]]


def test_undo_after_a_correction_restores_the_old_token() -> None:
    game, events = _game("sabra")
    _ana_opened(game)
    game.correct_item(parse_item("R10"), parse_item("JK"), 4, meld=_meld("R11 R12 R10"))
    assert game.table[1] == _meld("R11 R12 JK")
    game.undo(t=5)
    assert events[-1]["type"] == "undo" and events[-1]["melds"] == ["B7 R7 K7", "R11 R12 R10"]
    assert game.table == game.state.start_shared == (_meld("B7 R7 K7"), _meld("R11 R12 R10"))
    assert list(map(str, game.state.laid_by[0])) == ["B7", "R7", "K7", "R11", "R12", "R10"]
    # the game again knows the table as first read: a draw is no play
    game.end_turn(t=6)
    assert _codes(events) == [] and _of(events, "turn_ended")[-1]["valid"] is True


def test_a_tile_laid_this_turn_changes_the_opening_shown() -> None:
    # the O9 read as O6 (the classic confusion) makes K9 B9 O6 no meld: 33 shown, not 60
    game, events = _game("sabra")
    game.update(_snap(1, "K9 B9 O6", "R10 R11 R12"))
    assert _of(events, "initial_meld_progress")[-1]["value"] == 33
    game.correct_item(parse_item("O6"), parse_item("O9"), 2, meld=_meld("K9 B9 O6"), index=2)
    progress = _of(events, "initial_meld_progress")[-1]
    assert (progress["value"], progress["meets"]) == (60, True)
    fixed = _of(events, "reading_corrected")[-1]
    assert (fixed["seat"], fixed["meld"], fixed["value"]) == (0, "K9 B9 O9", 27)
    assert game.state.start_shared == ()  # laid this turn: not on the table at its start
    game.end_turn(t=3)
    assert _codes(events) == []
    assert _of(events, "turn_ended")[-1]["laid"] == ["K9", "B9", "O9", "R10", "R11", "R12"]


def test_the_named_meld_picks_the_copy() -> None:
    # two R7 on the table: the one in the set is really the O7
    game, events = _game("sabra")
    game.update(_snap(1, "R7 B7 K7", "R5 R6 R7"))
    game.end_turn(t=2)
    game.correct_item(parse_item("R7"), parse_item("O7"), 3, meld=_meld("R7 B7 K7"), index=0)
    assert _of(events, "table")[-1]["melds"] == ["O7 B7 K7", "R5 R6 R7"]
    game.update(_snap(4, "O7 B7 K7", "R5 R6 R7"))
    game.end_turn(t=5)
    assert _codes(events) == [] and _of(events, "turn_ended")[-1]["valid"] is True


def test_the_table_waited_for_is_corrected_too() -> None:
    # Ben breaks Ana's meld and fails: the game waits for her table, K7 and all; then
    # the K7 is corrected to O7, and the table put back (read O7 now) ends the wait
    game, events = _game("sabra")
    game.update(_snap(1, "B7 R7 K7", "R10 R11 R12"))
    game.end_turn(t=2)
    game.update(_snap(3, "B7 R7", "K7", "R10 R11 R12"))
    game.end_turn(t=4)
    assert "penalty" in _codes(events) and game.state.waiting_for is not None
    game.correct_item(parse_item("K7"), parse_item("O7"), 5, meld=_meld("B7 R7 K7"))
    game.update(_snap(6, "B7 R7 O7", "R10 R11 R12"))
    assert game.state.waiting_for is None
    game.end_turn(t=7)  # Cem draws
    assert _of(events, "turn_ended")[-1]["valid"] is True
    assert _codes(events).count("penalty") == 1


def test_a_reading_the_game_never_took_is_not_in_its_memory() -> None:
    # a third R10 is refused; correcting it changes nothing the game holds, and the
    # corrected table is then taken as any other
    game, events = _game("sabra")
    game.update(_snap(1, "R10 R11 R12", "R10 B10 K10"))
    game.end_turn(t=2)
    game.update(_snap(3, "R10 R11 R12", "R10 B10 K10", "R8 R9 R10"))
    assert _codes(events) == ["too_many_copies"]
    count = len(events)
    assert not game.correct_item(parse_item("R10"), parse_item("O10"), 4,
                                 meld=_meld("R8 R9 R10"), index=2)
    assert len(events) == count and str(game.table[0][0]) == "R10"
    game.update(_snap(4, "R10 R11 R12", "R10 B10 K10", "R8 R9 O10"))
    assert _of(events, "meld_laid")[-1]["meld"] == "R8 R9 O10"


# --- Rommé: a card in a player's own laid meld ----------------------------------------


def test_a_card_in_a_players_own_meld_is_corrected_in_rommee() -> None:
    # Ana lays QH QS QD and 10C JC QC (60) in front of herself and discards; the QD is
    # really a QC (Rommé is played with two decks), read wrong
    game, events = _game("rommee")
    own = {"0": ["QH QS QD", "10C JC QC"]}
    game.update(snapshot_from_json(1, {"seats": own, "discards": ["4D"]}))
    assert game.seat == 1 and _codes(events) == []
    held = game.correct_item(parse_item("QD"), parse_item("QC"), 2,
                             meld=_meld("QH QS QD"), index=2, who="Ana")
    assert held
    fixed = _of(events, "reading_corrected")[-1]
    assert (fixed["seat"], fixed["meld"], fixed["value"]) == (0, "QH QS QC", 30)
    assert _of(events, "table")[-1]["melds"] == ["QH QS QC", "10C JC QC"]
    # Ben draws and discards: his turn is no play on Ana's meld
    fixed_own = {"0": ["QH QS QC", "10C JC QC"]}
    game.update(snapshot_from_json(3, {"seats": fixed_own, "discards": ["4D", "9S"]}))
    assert _codes(events) == []
    assert _of(events, "turn_ended")[-1]["seat"] == 1
    assert _of(events, "turn_ended")[-1]["valid"] is True
    assert "QC" in map(str, game.state.laid_by[0]) and "QD" not in map(str, game.state.laid_by[0])


def test_a_card_of_a_hand_laid_open_is_corrected_before_scoring() -> None:
    # Hand-Rommé (see test_live_game): Ben's KS 4C would count (10+4)x2; the KS is a 2S
    game, events = _game("rommee")
    game.update(snapshot_from_json(1, {"seats": {"0": ["2H 3H 4H", "5S 5D 5C"]}}))
    game.out(0, t=2)
    game.update(snapshot_from_json(3, {"seats": {"0": ["2H 3H 4H", "5S 5D 5C"],
                                                 "1": ["KS 4C"], "2": ["AS"]}}))
    game.correct_item(parse_item("KS"), parse_item("2S"), 4, meld=_meld("KS 4C"), index=0)
    shown = _of(events, "hand_shown")[-1]
    assert (shown["seat"], shown["items"], shown["value"]) == (1, ["2S", "4C"], 6)
    assert _of(events, "reading_corrected")[-1]["meld"] is None
    game.score(t=5)
    assert _of(events, "round_scored")[-1]["scores"] == {"Ana": 0, "Ben": -12, "Cem": -22}


# --- what the game refuses ------------------------------------------------------------


@pytest.mark.parametrize("meld, index, message", [
    ("R5 R6 R7", None, "'R5 R6 R7' does not hold R10"),
    ("R10 R11 R12", 1, "'R10 R11 R12' does not hold R10 at 1"),
    ("R10 R11 R12", 5, "does not hold R10 at 5"),
    (None, 0, "index 0 of which meld?"),
])
def test_a_fix_naming_a_meld_without_the_item_is_refused(
    meld: str | None, index: int | None, message: str
) -> None:
    with pytest.raises(GameError, match=message):
        ItemFix(parse_item("R10"), parse_item("JK"), None if meld is None else _meld(meld), index)


def test_confirming_a_reading_changes_nothing() -> None:
    game, events = _game("sabra")
    _ana_opened(game)
    count = len(events)
    assert game.correct_items([ItemFix(parse_item("R11"), parse_item("R11"))], 4) == 0
    assert len(events) == count
    game.undo(t=5)  # the undo takes back Ben's draw, not a correction that never was
    assert game.seat == 1


@pytest.mark.parametrize("turns, fix, taken_table", [
    # the misread card of Ana's invalid opening was laid in that turn and lies on no other
    # table the game keeps: her KS KD KC is KS KD KH and worth 40 after all
    ([({"0": ["KS KD KC"]}, ["4D"])], ("KC", "KH"), ["KS KD KH"]),
    # Ana opened; Ben's 2S 3S is no meld: a card of Ana's, on the table before Ben's turn,
    # is corrected on the table waited for and on the one Ben left standing alike
    ([({"0": ["KS KD KC", "5H 6H 7H"]}, ["4D"]),
      ({"0": ["KS KD KC", "5H 6H 7H"], "1": ["2S 3S"]}, ["4D", "9C"])],
     ("KC", "KH"), ["KS KD KH", "5H 6H 7H", "2S 3S"]),
])
def test_a_correction_while_the_table_waits_reaches_the_table_play_goes_on_with(
        turns: list[tuple[dict[str, list[str]], list[str]]], fix: tuple[str, str],
        taken_table: list[str]) -> None:
    game, events = _game("rommee")
    for t, (seats, discards) in enumerate(turns, start=1):
        game.update(snapshot_from_json(t, {"seats": seats, "discards": discards}))
    assert [e["valid"] for e in events if e["type"] == "turn_ended"][-1] is False
    before, after = map(parse_item, fix)
    assert game.correct_item(before, after, t=5.0, who="Ana")
    corrected = [e for e in events if e["type"] == "reading_corrected"]
    assert (corrected[-1]["was"], corrected[-1]["item"], corrected[-1]["seat"]) == (*fix, 0)
    seats, discards = turns[-1]
    seen = {seat: [m.replace(fix[0], fix[1]) for m in melds] for seat, melds in seats.items()}
    game.update(snapshot_from_json(6, {"seats": seen, "discards": [*discards, "8C"]}))
    assert [e.get("code") for e in events if e["type"] == "warning"][-1] == "table_left_standing"
    assert [e for e in events if e["type"] == "table"][-1]["melds"] == taken_table


def test_a_correction_to_the_table_left_standing_is_undone_with_one_undo() -> None:
    game, events = _game("rommee")
    opening = {"0": ["KS KD KC"]}
    game.update(snapshot_from_json(1, {"seats": opening, "discards": ["4D"]}))
    assert game.correct_item(parse_item("KC"), parse_item("KH"), t=1.5)
    game.undo(t=1.6)
    game.update(snapshot_from_json(3, {"seats": opening, "discards": ["4D", "8C"]}))
    assert [e for e in events if e["type"] == "table"][-1]["melds"] == ["KS KD KC"]
