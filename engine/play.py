"""What the optimiser answers with: a play, and the error for input it cannot take.

Shared by :mod:`tabletop.engine.solver` (tables that may only be extended) and
:mod:`tabletop.engine.rearrange` (tables that may be rebuilt).
"""

from __future__ import annotations

from dataclasses import dataclass

from tabletop.engine.items import Item, format_items

__all__ = ["OBJECTIVES", "Meld", "Play", "SolveError"]

OBJECTIVES = ("tiles", "value")
"""``tiles``: place as many rack items as possible; ``value``: as much value."""

Meld = tuple[Item, ...]


class SolveError(ValueError):
    """A rack or table the solver cannot work with (quoting it)."""


@dataclass(frozen=True)
class Play:
    """The best play: the table after it and what it took from the rack."""

    melds: tuple[Meld, ...]
    """The whole table after the play; melds that were not touched are as given,
    changed and new melds are written with every joker as ``JK=<item>``."""
    placed: tuple[Item, ...]
    """Items taken from the rack (a joker as bare ``JK``)."""
    value: int
    """What the placed items count (``variant.slot_value`` in the melds they lie in)."""
    meets_initial: bool
    """The play satisfies the initial-meld rule (True when it did not apply)."""
    optimal: bool = True
    """The search finished within its time budget, so no better play exists; False: the
    budget ran out first and this is the best play found by then."""

    def to_json(self) -> dict[str, object]:
        return {
            "melds": [format_items(meld) for meld in self.melds],
            "placed": [str(item) for item in self.placed],
            "value": self.value,
            "meets_initial": self.meets_initial,
            "optimal": self.optimal,
        }

    def __str__(self) -> str:
        if not self.placed:
            head = "no legal play: nothing can be placed"
            if not self.meets_initial:
                head = "no initial meld can be made: nothing can be placed"
        else:
            head = (
                f"place {format_items(self.placed)}"
                f" ({len(self.placed)} items, value {self.value})"
            )
        if not self.optimal:
            head += " (the time budget ran out: a better play may exist)"
        return "\n".join([head, *(f"  {format_items(meld)}" for meld in self.melds)])
