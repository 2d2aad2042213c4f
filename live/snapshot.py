"""What the camera settled on: the interface between seeing the table and playing the game.

The vision side (tracking, calibration, grouping) commits a ``TableSnapshot``
when the scene has been still for a moment and no hand is over it; the game
side turns consecutive snapshots into events.  Items are contract tokens
parsed into engine items; positions are in table millimetres when a
calibration is known, else in image pixels.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tabletop.engine.items import Item, format_items
from tabletop.live.decoding import ReadingProblem

Box = tuple[float, float, float, float]
"""A box in the camera's frame (pixels): x1, y1, x2, y2."""


@dataclass(frozen=True)
class SeenItem:
    """One physical item, tracked across frames."""

    item: Item
    track_id: int
    position: tuple[float, float]
    """Centre in table coordinates (mm) or image pixels without calibration."""
    angle: float = 0.0
    """Rotation in degrees from the zone's reading direction, positive clockwise as
    the camera sees the table: its meld row's direction (along a fan, the arc's
    direction at it).  0.0 for items in no row, whose rotation the axis-aligned
    boxes do not tell."""
    confidence: float = 1.0
    """Share its label holds of the item's evidence (or of its weighted votes, where the
    detector gave no label distribution)."""


@dataclass(frozen=True)
class TableSnapshot:
    """The table at one committed moment.

    ``melds``: the shared meld area, items grouped into melds in table order
    (left to right as the meld reads).  ``seats``: per seat index, the items
    lying open in that seat's area (a player's own melds where a variant lays
    them in front of the player, or the hand laid out at the end of a round).
    ``discards``: the discard row or pile, oldest first, as far as visible.
    ``unplaced``: items seen outside every zone or not grouped into any meld.
    """

    t: float
    melds: tuple[tuple[Item, ...], ...] = ()
    seats: Mapping[int, tuple[tuple[Item, ...], ...]] = field(default_factory=dict)
    discards: tuple[Item, ...] = ()
    unplaced: tuple[Item, ...] = ()
    items: tuple[SeenItem, ...] = ()
    """Every item behind the groups above, with track ids and positions."""
    problems: tuple[str, ...] = ()
    """Readings that stayed impossible (a third copy of a tile, a card in a tile game):
    reported, never silently changed."""
    reading_problems: tuple[ReadingProblem, ...] = ()
    """The decoder's among them (a doubtful meld with no likely legal reading, a label
    seen more often than it exists), with what was read and the alternatives."""
    meld_boxes: tuple[Box, ...] = ()
    """Where each of ``melds`` lies in the camera's frame: the box around its items (as
    the panel's Table view frames it); empty where the watcher had no frames."""
    seat_boxes: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)
    """The same for each seat's rows in ``seats``."""
    discard_laid_anew: bool = False
    """The top discard reads as at the last commit, on a pile of as many cards, but was
    found since and lies elsewhere: a card laid on its twin of the other deck (or the top
    card taken from its twin, where the pile holds both), which its reading alone cannot
    tell."""

    def meld_strings(self) -> list[str]:
        return [format_items(meld) for meld in self.melds]
