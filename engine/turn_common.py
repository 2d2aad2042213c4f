"""What a turn check reports, and the helpers both turn judges share.

:mod:`tabletop.engine.turns` checks a turn; :mod:`tabletop.engine.turn_rearranged` judges tables
that may be rebuilt, :mod:`tabletop.engine.turn_extended` tables whose melds may only be
extended.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from tabletop.engine.items import JOKER, Item, Joker, Natural, natural
from tabletop.engine.melds import MeldKind, Reading, Slot

Meld = tuple[Item, ...]
Bag = Counter[Item]
Occurrence = tuple[int, int]
"""A joker on the table after the turn: (index of its meld, k-th joker of that meld)."""

SEARCH_LIMIT = 20000
"""Joker explanations judged at most per turn (Sabra has two jokers, so this is
never reached in a real game; it keeps hostile input from running for ever: past
it the best explanation found so far is reported)."""


class TurnError(ValueError):
    """A turn that cannot be judged as asked: a discard pile where the variant has
    none, Borgen outside American Rummy, ``own_melds`` naming no meld."""


@dataclass(frozen=True)
class TurnProblem:
    """One rule the turn breaks.

    ``code`` is a short machine id: ``item_missing``, ``item_from_nowhere``,
    ``nothing_laid``, ``invalid_meld``, ``initial_too_low``, ``not_from_hand``,
    ``table_changed_before_opening``, ``joker_split``, ``joker_meaning_changed``,
    ``joker_exchange_incomplete``, ``freed_joker_unused``, ``freed_joker_same_meld``,
    ``freed_joker_not_new_group``, ``freed_joker_without_hand_tiles``,
    ``freed_joker_not_hand_group``; where melds may only be extended also
    ``meld_split``, ``melds_joined``, ``joker_exchange_not_allowed`` (500 Rum),
    ``laid_off_before_opening``, ``exchange_before_opening``,
    ``discard_used_for_opening``, ``discard_taken_before_opening``,
    ``discard_not_melded``, ``discard_below_top``, ``discard_with_short_rack``,
    ``borrowing_not_allowed``, ``borrowed_not_in_new_meld`` (American Rummy's
    Borgen) and ``no_laying_out`` (Wiener Rummy).
    """

    code: str
    message: str
    items: tuple[Item, ...]


@dataclass(frozen=True)
class TurnCheck:
    valid: bool
    problems: tuple[TurnProblem, ...]
    """Every problem found, not just the first."""
    initial_value: int | None
    """Value of the opening melds when the player had not opened (else None)."""
    exchanged_jokers: tuple[Natural, ...]
    """Tiles laid from the rack that freed a joker (under ``set_joker_needs_both``
    both colours laid to free a set's joker)."""
    restored_table: tuple[Meld, ...]
    """The table to put back if the turn is invalid: the table before the turn."""
    penalty_draw: int
    """Items the player draws as a penalty for an invalid turn: 3 in Sabra, 0 in every
    other variant (their texts name no penalty; the player takes his items back)."""
    hints: tuple[TurnProblem, ...] = ()
    """Advice that leaves the turn valid: ``joker_out_of_place`` where a variant's rule
    text makes a joker's place in a run say what it stands for and a laid run holds one
    out of place (it is read as the run it can form, never penalised)."""


# --- small helpers ------------------------------------------------------------
def bare(item: Item) -> Item:
    """Jokers count as jokers, whatever they were declared to stand for."""
    return JOKER if isinstance(item, Joker) else item


def item_bag(items: Sequence[Item]) -> Bag:
    return Counter(bare(item) for item in items)


def natural_bag(items: Sequence[Item]) -> Bag:
    return Counter(item for item in items if not isinstance(item, Joker))


def count_jokers(items: Sequence[Item]) -> int:
    return sum(item.is_joker for item in items)


def meld_key(meld: Sequence[Item]) -> tuple[str, ...]:
    """A meld as a multiset of items: the order on the table does not matter."""
    return tuple(sorted(str(bare(item)) for item in meld))


def expand(bag: Bag) -> tuple[Item, ...]:
    return tuple(sorted(bag.elements(), key=str))


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def table_difference(
    before: Sequence[Sequence[Item]], after: Sequence[Sequence[Item]], laid: Sequence[Item]
) -> tuple[Bag, Bag]:
    """(items gone from the table, items come from nowhere)."""
    had = item_bag([i for m in before for i in m]) + item_bag(laid)
    has = item_bag([i for m in after for i in m])
    return had - has, has - had


def table_conserved(
    before: Sequence[Sequence[Item]], after: Sequence[Sequence[Item]], laid: Sequence[Item]
) -> bool:
    """Whether the table after the turn holds exactly the table before plus ``laid``."""
    had = item_bag([i for m in before for i in m]) + item_bag(laid)
    return item_bag([i for m in after for i in m]) == had


# --- what a joker stands for -----------------------------------------------------
def joker_slots(reading: Reading | None) -> list[Slot | None]:
    if reading is None:
        return []
    return [slot for slot in reading.slots if slot.is_joker]


def joker_meaning(reading: Reading | None, k: int) -> frozenset[Natural] | None:
    """What the k-th joker of a reading may stand for; None where the meld has no
    legal reading (then nothing can be said and nothing is objected to).

    A joker in a set stands for any colour its set is missing, even where it
    was declared as one ([sabra] "kann der Joker durch einen passenden
    Spielstein jeder der fehlenden Farben ersetzt werden"); two jokers in
    ``R5 JK JK`` are interchangeable.
    """
    if reading is None:
        return None
    slots = joker_slots(reading)
    if k >= len(slots):
        return None
    slot = slots[k]
    assert slot is not None
    if reading.kind is MeldKind.RUN:
        assert slot.suit is not None
        return frozenset({natural(reading.family, slot.rank, slot.suit)})
    return frozenset(natural(reading.family, slot.rank, s) for s in reading.missing_suits)


def meanings_compatible(old: frozenset[Natural] | None, new: frozenset[Natural] | None) -> bool:
    return old is None or new is None or bool(old & new)


def describe_meaning(meaning: frozenset[Natural] | None) -> str:
    if not meaning:
        return "a tile"
    return " or ".join(sorted(str(m) for m in meaning))


# --- the search for a legal explanation of the jokers ----------------------------
