"""A tenth variant added the way docs/architecture.md ("Adding a variant") says: one class
with its typed options and the round flags it asks for, one entry in ``VARIANTS``.  The
engine, the command line and the round files then take it with no other change."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from tabletop import cli
from tabletop.engine.base import (
    MatchRules,
    OptionError,
    RoundEntry,
    RoundInput,
    RoundResult,
    TableRules,
    VariantOptions,
    option,
)
from tabletop.engine.items import Item, parse_items, parse_melds
from tabletop.engine.rounds import round_from_json, score_round
from tabletop.engine.solver import solve
from tabletop.engine.variants import VARIANTS, CardVariant, find_variant


@dataclass(frozen=True)
class ToyOptions(VariantOptions):
    target: int = option(150, "points that end the match", bounds=(1, 10_000))
    knock_doubles: bool = option(True, "a round ended by knocking counts double")


class ToyRummy(CardVariant):
    """One deck, no jokers; the winner collects the cards left in the other hands (KS 3H:
    13, 7D: 7), twice over when he knocked."""

    id = "toy-rummy"
    name = "Toy Rummy"
    copies = 1
    jokers = 0
    round_entry = RoundEntry(winner_flags=("knocked",))
    Options = ToyOptions
    options: ToyOptions

    @property
    def table_rules(self) -> TableRules:
        return TableRules(rearrange=False, discard_pile=True, opening=False)

    @property
    def match_rules(self) -> MatchRules:
        return MatchRules(target=self.options.target)

    def hand_value(self, item: Item) -> int:
        return min(item.rank, 10)  # type: ignore[union-attr]

    def score_round(self, round_: RoundInput) -> RoundResult:
        winner = round_.winner
        scores = {player.name: 0 for player in round_.players}
        if winner is None:
            return RoundResult(scores, None)
        factor = 2 if winner.knocked and self.options.knock_doubles else 1
        for player in round_.players:
            if player is not winner:
                loss = factor * player.rack_value(self)
                scores[player.name] = -loss
                scores[winner.name] += loss
        return RoundResult(scores, winner.name, doubled=factor == 2)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(VARIANTS, ToyRummy.id, ToyRummy)


ROUND = {
    "variant": "toy-rummy",
    "players": [
        {"name": "Ana", "out": True, "knocked": True},
        {"name": "Ben", "hand": "KS 3H"},
        {"name": "Cem", "hand": "7D"},
    ],
}


@pytest.mark.usefixtures("toy")
def test_its_options_are_typed_and_checked() -> None:
    assert [spec.name for spec in ToyRummy.option_specs] == ["target", "knock_doubles"]
    variant = find_variant("toy-rummy", {"target": "200", "knock-doubles": "off"})
    assert isinstance(variant.options, ToyOptions)
    assert variant.options.target == 200 and variant.options.knock_doubles is False
    assert variant.match_rules.target == 200
    assert repr(variant) == "find_variant('toy-rummy', {'target': 200, 'knock_doubles': False})"
    with pytest.raises(OptionError, match="takes 1 to 10000"):
        find_variant("toy-rummy", {"target": "0"})
    with pytest.raises(OptionError, match="unknown option 'decks'"):
        find_variant("toy-rummy", {"decks": "2"})


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize(("options", "scores", "doubled"), [
    ({}, {"Ana": 40, "Ben": -26, "Cem": -14}, True),
    ({"knock_doubles": False}, {"Ana": 20, "Ben": -13, "Cem": -7}, False),
])
def test_a_round_file_is_scored_by_it(options: dict[str, bool], scores: dict[str, int],
                                      doubled: bool) -> None:
    result = score_round(round_from_json({**ROUND, "options": options}))
    assert result.scores == scores and result.winner == "Ana" and result.doubled is doubled


@pytest.mark.usefixtures("toy")
def test_the_optimiser_plays_it() -> None:
    toy = find_variant("toy-rummy")
    play = solve(toy, parse_items("4H 5H 6H 9C 9D 9S KS"), parse_melds("7H 8H 9H"))
    assert set(map(str, play.placed)) == {"4H", "5H", "6H", "9C", "9D", "9S"}
    assert play.optimal


@pytest.mark.usefixtures("toy")
def test_the_command_line_lists_and_scores_it(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules", "variants", "--json"]) == 0
    listed = {entry["id"]: entry for entry in json.loads(capsys.readouterr().out)}
    assert [o["name"] for o in listed["toy-rummy"]["options"]] == ["target", "knock_doubles"]
    round_file = tmp_path / "round.json"
    round_file.write_text(json.dumps(ROUND), encoding="utf-8")
    assert cli.main(["rules", "score", str(round_file), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scores"] == {"Ana": 40, "Ben": -26, "Cem": -14}
