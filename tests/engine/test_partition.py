"""engine.partition: exact splitting into melds, checked against the rule texts
and against a brute force over all set partitions."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabletop.engine.items import JOKER, Card, Color, Item, Suit, Tile, format_items, parse_items
from tabletop.engine.melds import Reading
from tabletop.engine.partition import best_split, can_be_melded, meld_partitions
from tabletop.engine.variants import Variant, find_variant


def _split_key(split: Sequence[Reading]) -> tuple[tuple[str, ...], ...]:
    """A split as the multiset of its melds' items, order ignored."""
    return tuple(sorted(tuple(sorted(str(s.item) for s in r.slots)) for r in split))


def _splits(text: str, variant: Variant) -> list[str]:
    return [
        " | ".join(str(r) for r in split) for split in meld_partitions(parse_items(text), variant)
    ]


# --- known cases from the rule texts -----------------------------------------
MELDABLE = [
    # [american] "sowohl 1-2-3 als auch 12-13-1 regelgerechte Folgen, ... aber 13-1-2 ist nicht"
    ("rummikub-american", "R1 R2 R3", True),
    ("rummikub-american", "R12 R13 R1", True),
    ("rummikub-american", "R13 R1 R2", False),
    ("rummikub-international", "R12 R13 R1", True),
    ("rummikub-international", "R13 R1 R2", False),
    # [sabra] "12-13-1 ist keine regelgerechte Folge"
    ("sabra", "R12 R13 R1", False),
    # [sabra] Satz "drei oder vier Spielsteine derselben Zahl und verschiedener Farben"
    ("sabra", "R5 B5 K5 O5", True),
    ("sabra", "R5 R5 B5", False),
    ("sabra", "R5 B5", False),
    # [sabra] Folge "drei oder mehr aufeinanderfolgende Zahlen derselben Farbe"
    ("sabra", "R5 R6 B7", False),
    # Royal (international 24): one run 1..13..1 of 14 tiles
    ("rummikub-international", "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", True),
    ("sabra", "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", False),
    # [rommee] "♣B–♣D–J–♣A", "♠6–♥6–J", "♠3–J–J–♠6" are allowed
    ("rommee", "JC QC JK AC", True),
    ("rommee", "6S 6H JK", True),
    ("rommee", "3S JK JK 6S", True),
    # [rommee] "nicht gestattet, eine Figur mit nur einer natürlichen Karte und zwei Jokern"
    ("rommee", "5H JK JK", False),
    ("wiener", "5H JK JK", False),
    # [rommee] "nicht aber ♠K–♠A–♠2" unless the house rule ace_around
    ("rommee", "KS AS 2S", False),
    # [raeuber] example: ♦5–♠5–♣5, ♦6–♥6–♠6 und ♦7–J–♦9
    ("raeuber", "5D 6D 7D 5S 6S JK 5C 6H 9D", True),
    # [remi] "mindestens doppelt so viele echte Steine enthalten wie Jolys"
    ("remi", "R4 R5 JK", True),
    ("remi", "R4 JK JK", False),
    ("remi", "R4 R5 JK JK", False),
    # American Rummy is played without jokers
    ("american-rummy", "5H 6H JK", False),
    # nothing to meld is trivially melded; a lone joker or a meld of jokers never is
    ("sabra", "", True),
    ("sabra", "JK JK JK", False),
    ("sabra", "JK=R5 JK=R6 JK=R7", False),
]


@pytest.mark.parametrize("variant_id, text, expected", MELDABLE)
def test_can_be_melded(variant_id: str, text: str, expected: bool) -> None:
    variant = find_variant(variant_id)
    items = parse_items(text)
    assert can_be_melded(items, variant) is expected
    assert (next(meld_partitions(items, variant), None) is not None) is expected


def test_ace_around_house_rule_allows_k_a_2() -> None:
    # [rommee] "nicht aber ♠K–♠A–♠2" is the standard; ace_around is the named house rule
    variant = find_variant("rommee", {"ace_around": True})
    assert can_be_melded(parse_items("KS AS 2S"), variant)
    # A-2-3 is found once, not also as the wrapped 14-15-16
    assert _splits("AS 2S 3S", variant) == ["AS 2S 3S"]


SPLITS = [
    # R5 JK JK: a set of fives or three runs (the ambiguity CONTRACT.md asks to report)
    (
        "rummikub-american",
        "R5 JK JK",
        {"R5 JK=K5 JK=B5", "JK=R3 JK=R4 R5", "JK=R4 R5 JK=R6", "R5 JK=R6 JK=R7"},
    ),
    # sets: every choice of three of four colours plus the four
    (
        "sabra",
        "R5 B5 K5 O5",
        {"K5 B5 O5 R5"},
    ),
    # two copies of a tile: K1 K2 K3 K1 K2 K3 is two runs, found once
    ("sabra", "K1 K2 K3 K1 K2 K3", {"K1 K2 K3 | K1 K2 K3"}),
    # a run and a set share R5: only one of them can have it
    ("sabra", "R3 R4 R5 B5 K5", set()),
    ("sabra", "R3 R4 R5 B5 K5 O5", {"K5 B5 O5 | R3 R4 R5"}),
    # [american] 12-13-1 with a joker: JK R13 R1 reads as R12 (13-1-2 is not a run); as a set
    # it fails (13 and 1)
    ("rummikub-american", "JK R13 R1", {"JK=R12 R13 R1"}),
    # [sabra] no 1 after 13: the joker can only go low... and R13 R1 cannot share a run
    ("sabra", "JK R13 R1", set()),
    # declared jokers keep their meaning
    ("sabra", "R4 JK=R5 R6", {"R4 JK=R5 R6"}),
    ("sabra", "R4 JK=B5 R6", set()),
]


@pytest.mark.parametrize("variant_id, text, expected", SPLITS)
def test_known_splits(variant_id: str, text: str, expected: set[str]) -> None:
    found = _splits(text, find_variant(variant_id))
    assert len(found) == len(set(found)), "a split was yielded twice"
    assert set(found) == expected


@pytest.mark.parametrize(
    "variant_id, text, count",
    [
        # two copies of the ace ("zwei Paketen"): A-2-3 and Q-K-A, found once, not once per ace
        ("rommee", "AD 2D 3D QD KD AD", 1),
        ("rummikub-international", "R1 R2 R3 R12 R13 R1", 1),
        # R5 R5 B5 K5 JK JK: {R5 B5 K5}+{R5 JK JK} (a set or three runs) or
        # {R5 B5 JK}+{R5 K5 JK}: 5 splits
        ("sabra", "R5 R5 B5 K5 JK JK", 5),
    ],
)
def test_copies_of_an_item_do_not_repeat_splits(variant_id: str, text: str, count: int) -> None:
    found = _splits(text, find_variant(variant_id))
    assert len(found) == len(set(found)) == count


def test_royal_is_found_once_and_with_its_sub_splits() -> None:
    variant = find_variant("rummikub-international")
    found = _splits("R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1", variant)
    assert len(found) == len(set(found))
    assert "R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 R11 R12 R13 R1" in found
    assert "R1 R2 R3 R4 R5 R6 R7 | R8 R9 R10 R11 R12 R13 R1" in found
    # 13-1-2 never appears
    assert not any("R13 R1 R2" in split for split in found)


BEST = [
    # (variant, items, expected melds as text, expected leftover)
    # Rommé values: A 11, pictures 10, joker 20 ("bei der Schlussabrechnung ... zwanzig")
    ("wiener", "5H 6H 7H 9C", "5H 6H 7H", "9C"),
    # the joker is worth keeping in a meld rather than left (20 points)
    ("wiener", "5H 6H JK 2C", "5H 6H JK", "2C"),
    # two ways to meld: leave the cheaper card. 7H 7S 7D set leaves 8H 9H (17);
    # 7H 8H 9H run leaves 7S 7D (14)
    ("wiener", "7H 8H 9H 7S 7D", "7H 8H 9H", "7S 7D"),
    # ...but with the 7C too both fit: the set of three and the run
    ("wiener", "7H 8H 9H 7S 7D 7C", "7H 8H 9H | 7S 7D 7C", ""),
    # nothing melds: everything is left
    ("wiener", "2C 9H KS", "", "2C 9H KS"),
    # International: 1 counts 10 on the rack, so meld the 1s rather than the threes
    ("rummikub-international", "R1 B1 K1 R3 B3 K3 O1 O3", "K1 B1 O1 R1 | K3 B3 O3 R3", ""),
]


@pytest.mark.parametrize("variant_id, text, melds, leftover", BEST)
def test_best_split_known(variant_id: str, text: str, melds: str, leftover: str) -> None:
    variant = find_variant(variant_id)
    got_melds, got_left = best_split(parse_items(text), variant)
    # compare the items of each meld (what a joker stands for is not the point here)
    expected = sorted(tuple(sorted(part.split())) for part in melds.split("|") if part.strip())
    assert list(_split_key(got_melds)) == expected
    assert sorted(map(str, got_left)) == sorted(leftover.split())


def test_best_split_custom_cost_and_ties() -> None:
    variant = find_variant("sabra")
    # cost 1 each: fewest leftover tiles; R3 R4 R5 R6 is better than a set of 5s + R3 R4 R6
    _melds, left = best_split(parse_items("R3 R4 R5 R6 B5 K5"), variant, cost=lambda item: 1)
    assert sorted(map(str, left)) == ["B5", "K5"]
    # all costs zero: still the fewest leftovers (the tie-break)
    _melds, left = best_split(parse_items("R3 R4 R5 R9"), variant, cost=lambda item: 0)
    assert format_items(left) == "R9"
    # the answer does not depend on the order of the input
    a = best_split(parse_items("B5 K5 R5 R6 R7 O5"), variant)
    b = best_split(parse_items("O5 R7 R6 R5 K5 B5"), variant)
    assert _split_key(a[0]) == _split_key(b[0]) and a[1] == b[1]


# --- brute force ---------------------------------------------------------------
@cache
def _legal_block(variant_id: str, block: tuple[str, ...]) -> bool:
    """Whether some table order of the block is a legal meld (analyse decides)."""
    variant = find_variant(variant_id, _OPTIONS.get(variant_id))
    items = parse_items(block)
    return any(variant.analyse(order).valid for order in set(itertools.permutations(items)))


_OPTIONS: dict[str, dict[str, object]] = {"wiener": {"ace_around": True}}


def _set_partitions(indices: list[int]) -> Iterator[list[list[int]]]:
    if not indices:
        yield []
        return
    first, rest = indices[0], indices[1:]
    for size in range(len(rest) + 1):
        for others in itertools.combinations(rest, size):
            left = [i for i in rest if i not in others]
            for tail in _set_partitions(left):
                yield [[first, *others], *tail]


def _brute_splits(items: Sequence[Item], variant_id: str) -> set[tuple[tuple[str, ...], ...]]:
    names = [str(item) for item in items]
    found = set()
    for partition in _set_partitions(list(range(len(items)))):
        blocks = [tuple(sorted(names[i] for i in block)) for block in partition]
        if all(len(b) >= 3 and _legal_block(variant_id, b) for b in blocks):
            found.add(tuple(sorted(blocks)))
    return found


def _tile_pool() -> list[Item]:
    tiles: list[Item] = [
        Tile(c, n) for c in (Color.K, Color.B, Color.R) for n in (1, 2, 3, 4, 12, 13)
    ]
    return tiles * 2 + [JOKER, JOKER]


def _card_pool() -> list[Item]:
    cards: list[Item] = [Card(r, s) for s in (Suit.S, Suit.H, Suit.D) for r in (1, 2, 3, 12, 13)]
    return cards * 2 + [JOKER, JOKER]


def _hands(pool: list[Item]) -> st.SearchStrategy[list[Item]]:
    return st.lists(st.sampled_from(range(len(pool))), min_size=3, max_size=6, unique=True).map(
        lambda picks: [pool[i] for i in picks]
    )


VARIANTS_FOR_BRUTE = [
    ("sabra", _tile_pool()),
    ("rummikub-international", _tile_pool()),
    ("remi", _tile_pool()),
    ("rommee", _card_pool()),
    ("wiener", _card_pool()),  # with the ace_around house rule
]


@pytest.mark.parametrize(
    "variant_id, pool", VARIANTS_FOR_BRUTE, ids=[v for v, _ in VARIANTS_FOR_BRUTE]
)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_against_brute_force(variant_id: str, pool: list[Item], data: st.DataObject) -> None:
    items = data.draw(_hands(pool))
    variant = find_variant(variant_id, _OPTIONS.get(variant_id))
    splits = list(meld_partitions(items, variant))
    # every yielded meld is legal as laid out, and each split covers exactly the items
    for split in splits:
        for reading in split:
            assert variant.analyse(reading.resolved_items()).valid
        assert Counter(str(s.item) for r in split for s in r.slots) == Counter(map(str, items))
    # no reading-for-reading duplicate
    layouts = [
        tuple(
            sorted((r.kind.value, tuple((str(s.item), s.position) for s in r.slots)) for r in split)
        )
        for split in splits
    ]
    assert len(layouts) == len(set(layouts))
    # the same item partitions as the brute force
    brute = _brute_splits(items, variant_id)
    assert {_split_key(split) for split in splits} == brute
    assert can_be_melded(items, variant) is bool(brute)

    # best_split: the least leftover cost over all subsets left out, then fewest left
    melds, left = best_split(items, variant)
    assert Counter(map(str, left)) + Counter(
        str(s.item) for r in melds for s in r.slots
    ) == Counter(map(str, items))
    for reading in melds:
        assert variant.analyse(reading.resolved_items()).valid
    best = min(
        (sum(variant.hand_value(items[i]) for i in out), len(out))
        for size in range(len(items) + 1)
        for out in itertools.combinations(range(len(items)), size)
        if _brute_splits([items[i] for i in range(len(items)) if i not in out], variant_id)
    )
    assert (sum(variant.hand_value(item) for item in left), len(left)) == best
