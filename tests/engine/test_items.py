"""The notation of CONTRACT.md: tokens, melds, and the errors for bad input.

CONTRACT.md: "Tokens are case-insensitive on input and printed upper-case.  A
meld is a sequence of tokens in table order ...  Several melds are separated by
`|`."  Exit status 2 "for bad input (an unknown token ...)", so every bad token
must raise NotationError (a ValueError) whose message quotes it.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tabletop.engine.items import (
    JOKER,
    Card,
    Color,
    Family,
    Item,
    Joker,
    NotationError,
    Suit,
    Tile,
    all_naturals,
    family_of,
    format_items,
    format_melds,
    natural,
    parse_item,
    parse_items,
    parse_melds,
)

TILES = all_naturals(Family.TILES)
CARDS = all_naturals(Family.CARDS)
NATURALS = TILES + CARDS
ALL_ITEMS: tuple[Item, ...] = (JOKER, *NATURALS, *(Joker(n) for n in NATURALS))

items = st.sampled_from(ALL_ITEMS)


def _recase(draw: st.DrawFn, text: str) -> str:
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.lower() if flip else c for c, flip in zip(text, flips, strict=True))


@st.composite
def spelled(draw: st.DrawFn) -> tuple[Item, str]:
    """An item and one way a user may type it: any case, spaces around it."""
    item = draw(items)
    pad = st.sampled_from(["", " ", "  ", "\t"])
    return item, draw(pad) + _recase(draw, str(item)) + draw(pad)


# --- the material -----------------------------------------------------------
def test_material_counts() -> None:
    # [sabra] "104 davon haben Zahlen, von 1 bis 13, und es gibt vier verschiedene Farben"
    assert len(set(TILES)) == 52
    # [rommee] "Paketen französischer Spielkarten zu 52 Blatt"
    assert len(set(CARDS)) == 52
    assert len({str(item) for item in ALL_ITEMS}) == len(ALL_ITEMS) == 1 + 2 * 104


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        ("R7", Tile(Color.R, 7)),
        ("K13", Tile(Color.K, 13)),  # K is black for tiles ...
        ("KS", Card(13, Suit.S)),  # ... and the king for cards
        ("K1", Tile(Color.K, 1)),
        ("O1", Tile(Color.O, 1)),
        ("B10", Tile(Color.B, 10)),
        ("AS", Card(1, Suit.S)),
        ("10H", Card(10, Suit.H)),
        ("QD", Card(12, Suit.D)),
        ("JC", Card(11, Suit.C)),
        ("2C", Card(2, Suit.C)),
        ("JK", JOKER),
        ("JK=R5", Joker(Tile(Color.R, 5))),
        ("JK=QH", Joker(Card(12, Suit.H))),
        ("JK=JS", Joker(Card(11, Suit.S))),
        ("jk=10d", Joker(Card(10, Suit.D))),
        ("b10", Tile(Color.B, 10)),
        (" qh ", Card(12, Suit.H)),
    ],
)
def test_contract_examples(token: str, expected: Item) -> None:
    assert parse_item(token) == expected
    assert str(parse_item(token)) == token.strip().upper()


def test_abstract_rank_and_suit() -> None:
    # items.py: "A=1, J=11, Q=12, K=13"; suit index K,B,O,R and S,H,D,C
    cards = [Card.from_str(t) for t in ("AS", "2S", "10S", "JS", "QS", "KS")]
    assert [c.rank for c in cards] == [1, 2, 10, 11, 12, 13]
    tiles = [Tile.from_str(t) for t in ("K1", "B1", "O1", "R1")]
    assert [t.suit_index for t in tiles] == [0, 1, 2, 3]
    suits = [Card.from_str(t) for t in ("AS", "AH", "AD", "AC")]
    assert [c.suit_index for c in suits] == [0, 1, 2, 3]
    assert natural(Family.TILES, 7, 3) == Tile(Color.R, 7)
    assert natural(Family.CARDS, 12, 1) == Card(12, Suit.H)


# --- round trips ------------------------------------------------------------
@given(items)
def test_str_parse_round_trip(item: Item) -> None:
    assert parse_item(str(item)) == item
    assert str(parse_item(str(item))) == str(item)
    assert str(item) == str(item).upper()


@given(spelled())
def test_case_insensitive_and_padded(pair: tuple[Item, str]) -> None:
    item, text = pair
    assert parse_item(text) == item


@given(st.lists(st.lists(items, min_size=1, max_size=6), min_size=1, max_size=5))
def test_melds_round_trip(melds: list[list[Item]]) -> None:
    text = format_melds(melds)
    assert parse_melds(text) == tuple(tuple(meld) for meld in melds)
    assert format_melds(parse_melds(text)) == text
    # tight or lower-case input reads the same
    assert parse_melds(text.replace(" | ", "|").lower()) == parse_melds(text)


@given(st.lists(items, max_size=8))
def test_items_round_trip(row: list[Item]) -> None:
    assert parse_items(format_items(row)) == tuple(row)
    assert parse_items([str(item) for item in row]) == tuple(row)


_NEAR_MISSES = st.text(
    alphabet=st.sampled_from(
        [*"KBORSHDCAJQ0123456789=| \t", "ſ", "ß", "ı", "７", "Ä", "\u00a0", "\u212a"]
    ),
    max_size=8,
)


@given(_NEAR_MISSES)
@example("Qſ")  # "ſ".upper() == "S": must not read as QS
@example("jk=qſ")
@example("R07")
@example("\u212a7")  # the Kelvin sign, not K
def test_only_canonical_spellings_parse(text: str) -> None:
    """Anything accepted is a canonical token up to case and outer whitespace."""
    try:
        item = parse_item(text)
    except NotationError as err:
        assert repr(text) in str(err)
    else:
        assert str(item) == text.strip().upper()


# --- bad input --------------------------------------------------------------
BAD_TOKENS = [
    "X7",  # no such colour or rank
    "R14",  # tiles go 1..13
    "R0",
    "R07",  # one spelling per item
    "R-1",
    "11H",  # card ranks are A 2..10 J Q K
    "1S",  # the ace is A
    "0H",
    "ZZ",
    "JK=",  # a joker declared as nothing
    "JK=JK",  # ... or as a joker
    "JK=JK=R5",
    "JK=R14",
    "JK=X7",
    "JKR5",
    "JK R5",  # one token, not two
    "",
    "   ",
    "R７",  # full-width digit
    "Ä5",
    "Qſ",  # long s upper-cases to S
    "R7|",
    "|",
    "R 7",
    "10 H",
    "RR7",
    "7R",
    "H10",
]


@pytest.mark.parametrize("token", BAD_TOKENS)
def test_bad_token_raises_and_quotes_it(token: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_item(token)
    assert repr(token) in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("token", ["X7", "R14", "JK=JK", "Ä5"])
def test_bad_token_in_a_list_is_quoted(token: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_items(f"R3 R4 {token} R6")
    assert repr(token) in str(info.value)
    with pytest.raises(NotationError) as info:
        parse_melds(f"R3 R4 R5 | K7 {token} O7")
    assert repr(token) in str(info.value)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "|", "R3 R4 R5 |", "| R3 R4 R5", "R3 R4 R5 || K7 B7 O7", "R3 R4 R5 |  | K7"],
)
def test_empty_meld_raises(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_melds(text)
    assert repr(text) in str(info.value)


def test_bar_is_not_an_item() -> None:
    # "|" separates melds; a list of items cannot hold it
    with pytest.raises(NotationError) as info:
        parse_items("R3 R4|R5")
    assert "R3 R4|R5" in str(info.value)
    assert parse_melds("R3 R4 R5|K7 B7 O7") == (
        parse_items("R3 R4 R5"),
        parse_items("K7 B7 O7"),
    )


def test_constructors_check_ranges() -> None:
    with pytest.raises(NotationError):
        Tile(Color.R, 14)
    with pytest.raises(NotationError):
        Tile(Color.R, 0)
    with pytest.raises(NotationError):
        Card(0, Suit.S)


@pytest.mark.parametrize(
    ("cls", "token"), [(Tile, "QH"), (Tile, "JK"), (Card, "R7"), (Card, "JK=QH"), (Joker, "R7")]
)
def test_from_str_checks_the_kind(cls: type[Tile | Card | Joker], token: str) -> None:
    with pytest.raises(NotationError) as info:
        cls.from_str(token)
    assert repr(token) in str(info.value)


def test_from_str_and_repr() -> None:
    assert Tile.from_str("r7") == Tile(Color.R, 7)
    assert Card.from_str("qh") == Card(12, Suit.H)
    assert Joker.from_str("jk=r5") == Joker(Tile(Color.R, 5))
    for item in (Tile(Color.R, 7), Card(12, Suit.H), Joker(Card(1, Suit.S)), JOKER):
        assert str(item) in repr(item)


def test_families() -> None:
    assert family_of(parse_items("R3 JK R5")) is Family.TILES
    assert family_of(parse_items("QH JK=KH")) is Family.CARDS
    assert family_of(parse_items("JK JK")) is None
    assert parse_item("JK=R5").family is Family.TILES
    assert JOKER.family is None
    assert Joker.from_str("JK=R5").bare() == JOKER
    with pytest.raises(NotationError) as info:
        family_of(parse_items("R5 5H JK"))
    assert "R5 5H JK" in str(info.value)
