"""A table as seen: it may be impossible, and says everything that is wrong with it.

The camera will produce positions no game can reach (three copies of a tile,
a meld read wrong, a card in a tile game).  ``TableState`` holds them without
complaint and ``problems()`` lists every problem at once, so a person can fix
the reading rather than meet the first exception.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from tabletop.engine.base import Variant
from tabletop.engine.items import Item, Joker, format_items
from tabletop.engine.melds import MeldAnalysis


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a table: a short code, a sentence, the items concerned."""

    code: str
    message: str
    items: tuple[Item, ...] = ()
    meld: int | None = None
    """Index of the meld concerned, if one."""

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "message": self.message,
            "items": [str(item) for item in self.items],
            "meld": self.meld,
        }


@dataclass(frozen=True)
class TableState:
    """Melds on the table, plus any items seen elsewhere (racks laid open, discards)."""

    variant: Variant
    melds: tuple[tuple[Item, ...], ...] = ()
    hands: Mapping[str, tuple[Item, ...]] = field(default_factory=dict)
    discards: tuple[Item, ...] = ()

    @classmethod
    def from_melds(cls, variant: Variant, melds: Iterable[Sequence[Item]]) -> TableState:
        return cls(variant, tuple(tuple(meld) for meld in melds))

    def analyses(self) -> tuple[MeldAnalysis, ...]:
        return tuple(self.variant.analyse(meld) for meld in self.melds)

    def all_items(self) -> list[Item]:
        items = [item for meld in self.melds for item in meld]
        for hand in self.hands.values():
            items.extend(hand)
        items.extend(self.discards)
        return items

    def problems(self) -> list[Problem]:
        """Every problem with this table, in a stable order: material first, then melds."""
        problems: list[Problem] = []
        items = self.all_items()
        family = self.variant.family

        wrong = [item for item in items if item.family is not None and item.family is not family]
        if wrong:
            kind = "tiles" if family.value == "tiles" else "cards"
            problems.append(
                Problem(
                    "wrong_material",
                    f"{format_items(wrong)} {'is' if len(wrong) == 1 else 'are'} not among the"
                    f" {kind} of {self.variant.name}",
                    tuple(wrong),
                )
            )

        naturals = Counter(item for item in items if not item.is_joker and item.family is family)
        limit = self.variant.copies_of_each
        for item, count in sorted(naturals.items(), key=lambda pair: str(pair[0])):
            if count > limit:
                problems.append(
                    Problem(
                        "too_many_copies",
                        f"{item} is seen {count} times, but {self.variant.name} has"
                        f" {limit} {'copy' if limit == 1 else 'copies'}",
                        (item,) * count,
                    )
                )

        jokers = [item for item in items if isinstance(item, Joker)]
        if len(jokers) > self.variant.joker_count:
            problems.append(
                Problem(
                    "too_many_jokers",
                    f"{len(jokers)} jokers are seen, but {self.variant.name} has"
                    f" {self.variant.joker_count}",
                    tuple(jokers),
                )
            )

        for index, analysis in enumerate(self.analyses()):
            if not analysis.valid:
                problems.append(
                    Problem(
                        "invalid_meld",
                        f"{format_items(analysis.items)} is not a valid meld: {analysis.reason}",
                        analysis.items,
                        index,
                    )
                )
        return problems

    @property
    def valid(self) -> bool:
        return not self.problems()
