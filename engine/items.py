"""Tiles, cards and jokers, and the notation of CONTRACT.md.

Every item is a small hashable value.  ``parse_item(str(item)) == item`` holds
for every item, and tokens are case-insensitive on input.

Tiles and cards share one abstract model used by the meld logic: a *rank*
1..13 (tile number, or card rank with A=1, J=11, Q=12, K=13) and a *suit*
index 0..3 (tile colour K, B, O, R or card suit S, H, D, C).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class NotationError(ValueError):
    """A token, meld or list of melds that is not valid notation."""

    def __init__(self, message: str, token: str | None = None) -> None:
        super().__init__(message)
        self.token = token


class Family(enum.Enum):
    """Which kind of game material an item belongs to."""

    TILES = "tiles"
    CARDS = "cards"


class Color(enum.Enum):
    K = "black"
    B = "blue"
    O = "orange"  # the yellow of Romanian sets  # noqa: E741
    R = "red"

    @property
    def index(self) -> int:
        return _COLOR_ORDER.index(self)


class Suit(enum.Enum):
    S = "spades"
    H = "hearts"
    D = "diamonds"
    C = "clubs"

    @property
    def index(self) -> int:
        return _SUIT_ORDER.index(self)


_COLOR_ORDER = (Color.K, Color.B, Color.O, Color.R)
_SUIT_ORDER = (Suit.S, Suit.H, Suit.D, Suit.C)
RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
_RANK_BY_NAME = {"A": 1, "J": 11, "Q": 12, "K": 13, **{str(n): n for n in range(2, 11)}}


@dataclass(frozen=True, order=True)
class Tile:
    """A numbered tile: colour and number 1..13 (``R7``)."""

    color: Color
    number: int

    def __post_init__(self) -> None:
        if not 1 <= self.number <= 13:
            raise NotationError(f"tile number must be 1..13, not {self.number}")

    @property
    def rank(self) -> int:
        return self.number

    @property
    def suit_index(self) -> int:
        return self.color.index

    @property
    def family(self) -> Family:
        return Family.TILES

    @property
    def is_joker(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"{self.color.name}{self.number}"

    def __repr__(self) -> str:
        return f"Tile.from_str({str(self)!r})"

    @classmethod
    def from_str(cls, token: str) -> Tile:
        item = parse_item(token)
        if not isinstance(item, Tile):
            raise NotationError(f"not a tile: {token!r}", token)
        return item


@dataclass(frozen=True, order=True)
class Card:
    """A French playing card: rank 1..13 (A=1, J=11, Q=12, K=13) and suit (``QH``)."""

    rank: int
    suit: Suit

    def __post_init__(self) -> None:
        if not 1 <= self.rank <= 13:
            raise NotationError(f"card rank must be 1..13, not {self.rank}")

    @property
    def suit_index(self) -> int:
        return self.suit.index

    @property
    def family(self) -> Family:
        return Family.CARDS

    @property
    def is_joker(self) -> bool:
        return False

    def __str__(self) -> str:
        return f"{RANK_NAMES.get(self.rank, str(self.rank))}{self.suit.name}"

    def __repr__(self) -> str:
        return f"Card.from_str({str(self)!r})"

    @classmethod
    def from_str(cls, token: str) -> Card:
        item = parse_item(token)
        if not isinstance(item, Card):
            raise NotationError(f"not a card: {token!r}", token)
        return item


Natural = Tile | Card


@dataclass(frozen=True)
class Joker:
    """A joker, bare (``JK``) or declared to stand for an item (``JK=R5``)."""

    stands_for: Natural | None = None

    @property
    def is_joker(self) -> bool:
        return True

    @property
    def family(self) -> Family | None:
        return None if self.stands_for is None else self.stands_for.family

    def __str__(self) -> str:
        return "JK" if self.stands_for is None else f"JK={self.stands_for}"

    def __repr__(self) -> str:
        return f"Joker.from_str({str(self)!r})"

    @classmethod
    def from_str(cls, token: str) -> Joker:
        item = parse_item(token)
        if not isinstance(item, Joker):
            raise NotationError(f"not a joker: {token!r}", token)
        return item

    def bare(self) -> Joker:
        return JOKER


Item = Tile | Card | Joker
JOKER = Joker()


def _parse_natural(token: str, original: str) -> Natural:
    if not token:
        raise NotationError(f"empty token in {original!r}", original)
    head, tail = token[0], token[1:]
    if head in "KBOR" and tail.isdigit() and tail.isascii():
        number = int(tail)
        if not 1 <= number <= 13 or tail != str(number):
            raise NotationError(f"tile number must be 1..13 in {original!r}", original)
        return Tile(Color[head], number)
    rank_name, suit_name = token[:-1], token[-1]
    if suit_name in "SHDC" and rank_name in _RANK_BY_NAME:
        return Card(_RANK_BY_NAME[rank_name], Suit[suit_name])
    raise NotationError(
        f"unknown token {original!r}: expected a tile like R7, a card like QH, or JK", original
    )


def parse_item(token: str) -> Item:
    """Parse one token (``R7``, ``10H``, ``JK``, ``JK=QS``), case-insensitively."""
    if not isinstance(token, str):
        raise NotationError(f"a token must be a string, not {type(token).__name__}")
    original = token
    # Check ASCII before upper-casing: some non-ASCII letters upper-case to
    # ASCII ones ("ſ" -> "S", "ß" -> "SS"), and "Qſ" must not read as QS.
    if not token.isascii():
        raise NotationError(
            f"unknown token {original!r}: expected a tile like R7, a card like QH, or JK", original
        )
    token = token.strip().upper()
    if not token:
        raise NotationError(f"empty token {original!r}", original)
    if not token.isalnum() and "=" not in token:
        raise NotationError(
            f"unknown token {original!r}: expected a tile like R7, a card like QH, or JK", original
        )
    if token == "JK":
        return JOKER
    if token.startswith("JK="):
        return Joker(_parse_natural(token[3:], original))
    return _parse_natural(token, original)


def parse_items(text: str | Iterable[str]) -> tuple[Item, ...]:
    """Parse space-separated tokens (or an iterable of tokens)."""
    tokens = text.split() if isinstance(text, str) else list(text)
    for token in tokens:
        if isinstance(token, str) and "|" in token:
            raise NotationError(
                f"'|' separates melds; it cannot stand in a list of items: {text!r}", token
            )
    return tuple(parse_item(token) for token in tokens)


def parse_melds(text: str | Iterable[str]) -> tuple[tuple[Item, ...], ...]:
    """Parse melds separated by ``|`` (or an iterable of meld strings)."""
    parts = text.split("|") if isinstance(text, str) else list(text)
    melds = []
    for part in parts:
        items = parse_items(part)
        if not items:
            raise NotationError(f"empty meld in {text!r}", str(text))
        melds.append(items)
    return tuple(melds)


def format_items(items: Iterable[Item]) -> str:
    return " ".join(str(item) for item in items)


def format_melds(melds: Iterable[Iterable[Item]]) -> str:
    return " | ".join(format_items(meld) for meld in melds)


def natural(family: Family, rank: int, suit_index: int) -> Natural:
    """The tile or card of a family with the given abstract rank and suit index."""
    if family is Family.TILES:
        return Tile(_COLOR_ORDER[suit_index], rank)
    return Card(rank, _SUIT_ORDER[suit_index])


def all_naturals(family: Family) -> tuple[Natural, ...]:
    return tuple(natural(family, rank, suit) for suit in range(4) for rank in range(1, 14))


def family_of(items: Sequence[Item]) -> Family | None:
    """The one family of a list of items, None if only bare jokers; raises on a mix."""
    families = {item.family for item in items if item.family is not None}
    if len(families) > 1:
        raise NotationError(f"tiles and cards mixed: {format_items(items)!r}")
    return families.pop() if families else None
