"""Every variant's facts in one table, as the rule texts state them.

Everything else asks the variant for these; a tenth variant adds one row here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tabletop.engine.base import MatchRules, PlayerRound, RoundInput
from tabletop.engine.items import Family, parse_items
from tabletop.engine.variants import VARIANTS, find_variant

# id: family, copies, jokers, opening, rearrange, discard pile, lays out, penalty points,
#     deal direction, invalid-turn penalty, knock limit
FACTS: dict[str, tuple[Family, int, int, int, bool, bool, bool, bool, int, int, int | None]] = {
    # [sabra] "mindesten 30"; "zur Strafe drei Spielsteine aus dem Pool ziehen"
    "sabra": (Family.TILES, 2, 2, 30, True, False, True, False, 1, 3, None),
    # [american] "mindestens 21 Punkten"; "Abgelegte Spielsteine werden aufgestapelt"
    "rummikub-american": (Family.TILES, 2, 2, 21, False, True, True, False, -1, 0, None),
    # [international] "mindestens 50 Punkte"
    "rummikub-international": (Family.TILES, 2, 2, 50, False, True, True, False, -1, 0, None),
    # [remi] opening 50 with a run; "Geber der Spieler rechts vom letzten Geber"
    "remi": (Family.TILES, 2, 2, 50, False, True, True, False, -1, 0, None),
    # [rum500] one deck, two jokers
    "rum500": (Family.CARDS, 1, 2, 0, False, True, True, False, 1, 0, None),
    # [american-rummy] 52 cards, no jokers
    "american-rummy": (Family.CARDS, 1, 0, 0, False, True, True, False, 1, 0, None),
    # [rommee] 2x52 and 6 jokers, Erstmeldung 40, Schlechtpunkte
    "rommee": (Family.CARDS, 2, 6, 40, False, True, True, True, 1, 0, None),
    # [raeuber] "Ansonsten gelten alle Regeln des Spiels mit Auslegen"
    "raeuber": (Family.CARDS, 2, 6, 40, True, True, True, True, 1, 0, None),
    # [wiener] "Rommé ohne Auslegen", "nur je einem Joker", "fünf oder weniger Augen"
    "wiener": (Family.CARDS, 2, 2, 0, False, True, False, True, 1, 0, 5),
}

MATCH: dict[str, MatchRules] = {
    "sabra": MatchRules(),
    "rummikub-american": MatchRules(),
    "rummikub-international": MatchRules(settlement=True),
    "remi": MatchRules(),
    "rum500": MatchRules(target=500),
    "american-rummy": MatchRules(target=100, collected_only=True),
    "rommee": MatchRules(),
    "raeuber": MatchRules(),
    "wiener": MatchRules(elimination=101, buy_back_from=81, stake=5, klopfgeld=1),
}


def test_the_table_covers_every_variant() -> None:
    assert set(FACTS) == set(VARIANTS) == set(MATCH)


@pytest.mark.parametrize("variant_id", sorted(FACTS))
def test_variant_facts(variant_id: str) -> None:
    (family, copies, jokers, opening, rearrange, discard, lays_out, penalty, direction,
     turn_penalty, knock) = FACTS[variant_id]
    variant = find_variant(variant_id)
    rules = variant.table_rules
    assert variant.family is family
    assert (variant.copies_of_each, variant.joker_count) == (copies, jokers)
    assert variant.initial_meld_required == opening
    assert rules.opening is (opening > 0)
    assert rules.rearrange is rearrange
    assert rules.discard_pile is discard is variant.has_discard_pile
    assert rules.lays_out is lays_out
    assert variant.penalty_scoring is penalty
    assert variant.deal_direction == direction
    assert rules.invalid_turn_penalty == turn_penalty
    assert variant.knock_limit == knock
    assert variant.match_rules == MATCH[variant_id]


@pytest.mark.parametrize("variant_id", sorted(FACTS))
def test_every_variant_scores_its_own_rounds(variant_id: str) -> None:
    variant = find_variant(variant_id)
    hand = "R5" if variant.family is Family.TILES else "5S"
    round_ = RoundInput(
        variant, (PlayerRound("Ana", out=True), PlayerRound("Ben", hand=parse_items(hand)))
    )
    result = variant.score_round(round_)
    assert set(result.scores) == {"Ana", "Ben"}
    assert result.scores["Ben"] < 0


@pytest.mark.parametrize(
    "variant_id, options, expected",
    [
        # [raeuber] "Räuber-Rommé wird aber auch ohne Ablagestapel gespielt"
        ("raeuber", {"discard_pile": "false"}, {"discard_pile": False}),
        # Dutch Sabra: "vorausgesetzt, dass der Joker immer für denselben Spielstein steht"
        ("sabra", {"dutch": "true"}, {"split_joker_melds": True}),
        ("sabra", {"freed_joker": "new_group"}, {"freed_joker": "new_group"}),
        ("sabra", {"rearrange_on_opening_turn": "false"}, {"rearrange_on_opening_turn": False}),
        # [remi] Varianten: "nur ein Stein ..., wenn er sofort für die Anfangsmeldung benutzt"
        ("remi", {"take_discard_to_open": "true"}, {"discard_before_opening": "opening_only"}),
        ("rommee", {"discard_must_meld": "true"}, {"discard_must_meld": True}),
        ("rommee", {"set_joker_exchange_needs_four": "true"}, {"set_exchange_needs_four": True}),
    ],
)
def test_options_reach_the_table_rules(
    variant_id: str, options: dict[str, str], expected: dict[str, Any]
) -> None:
    rules = find_variant(variant_id, options).table_rules
    default = find_variant(variant_id).table_rules
    for name, value in expected.items():
        assert getattr(rules, name) == value != getattr(default, name)


@pytest.mark.parametrize(
    "variant_id, options, expected",
    [
        ("rum500", {"target": "300", "must_go_out": "true"},
         MatchRules(target=300, target_needs_going_out=True)),
        ("american-rummy", {"target": "150"}, MatchRules(target=150, collected_only=True)),
        ("wiener", {"elimination": "151", "buy_back_from": "121"},
         MatchRules(elimination=151, buy_back_from=121, stake=5, klopfgeld=1)),
    ],
)
def test_options_reach_the_match_rules(
    variant_id: str, options: dict[str, str], expected: MatchRules
) -> None:
    assert find_variant(variant_id, options).match_rules == expected


# id: melds laid count, the winner's flags, anyone's flags, win kinds, last discard
ROUND_ENTRY: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], bool]] = {
    "sabra": (False, (), (), (), False),
    "rummikub-american": (False, (), (), (), False),
    "rummikub-international": (
        False, ("first_turn", "original_hand"), ("trump_declared",), ("open", "foot", "closed"),
        True,
    ),
    "remi": (True, ("all_at_once",), ("trump_declared",), (), True),
    "rum500": (True, (), (), (), False),
    "american-rummy": (False, ("all_at_once",), (), (), False),
    "rommee": (False, ("all_at_once",), (), (), False),
    "raeuber": (False, ("all_at_once",), (), (), False),
    "wiener": (False, ("knocked",), (), (), False),
}


@pytest.mark.parametrize("variant_id", sorted(VARIANTS))
def test_what_a_round_entry_asks_for(variant_id: str) -> None:
    entry = VARIANTS[variant_id].round_entry
    melds, winner_flags, anyone_flags, win_kinds, last_discard = ROUND_ENTRY[variant_id]
    assert (entry.melds, entry.winner_flags, entry.anyone_flags, entry.win_kinds,
            entry.last_discard) == (melds, winner_flags, anyone_flags, win_kinds, last_discard)
    fields = PlayerRound.__dataclass_fields__
    assert all(fields[flag].type in (bool, "bool") for flag in winner_flags + anyone_flags)
