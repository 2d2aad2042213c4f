"""Grouping items into melds by position and alignment, in table coordinates.

Tiles of a meld lie in a row, nearly touching, at any rotation; cards of a
meld overlap so that only their corner indices show, also in a row.  Both
become rows of box centres with near-equal spacing, so one method serves:

1. link each item to its two nearest neighbours when the link is mutual and
   shorter than ``link`` item sizes (rows stacked above each other are
   farther apart than neighbours in a row, and mutual links stop a row's
   end from reaching over to the next row);
2. where a row turns sharply at an item, cut the longer of its two links
   (two rows joined at their ends).  "Sharply" is judged against the row's
   own steady curvature: a straight row may bend by ``max_bend_deg`` at an
   item, and a fanned hand laid down, whose corner indices lie on an arc
   and turn by the same few degrees at every card (90..120 degrees or more
   across 13 cards), may bend that much beyond its curvature; no row bends
   by more than ``max_arc_bend_deg`` at one item;
3. cut a row where one gap is far wider than the others (two melds laid end
   to end in one line); two boxes lying over each other (a card's far corner
   beside the next card's index) are no step of the row and do not set its
   pitch.

A card whose two corners both show gives two index boxes with one label; the
second one, alone and near a group holding its label, is dropped.  Many decks
(most German Rommé decks) print an index in all four corners: the last card
of a meld then shows a second index in line with the row, and the cards of a
meld show a second row of indices beside the first, the same labels in the
same order.  A row's end item with its neighbour's label (a joker only where
its gap is also wider than the row's others), a twin row (most of its
indices lying on a longer or equal row's at one common offset, at least half
of them with the same label) and a lone card's other corners are dropped as
second corners too.  Where a meld's last card lies over the one before, its far
corners show inside the row, farther out than the row's pitch; an end index
that far out, with no twin of its own, is dropped as well where the twin of
the index before it carries its label (that far corner misread, its twin read
right), or where a corner of the card before lies across the row from it (its
twin read right and dropped as that card's far corner).  The last card of a
row lies whole in view: a box between its near index and its far corner, farther
apart than the row's pitch, is a detail of its face (a court figure's, a pip's),
not a card.  In a zone of melds (three cards or more each), a lone card in line
with a row's end, about a card's width out, was laid beside that end card rather
than over it and joins the row; its near index, a step past the end card's far
corner, must not pair with that corner as a row of two.  A card as near to two
rows' ends joins the one that the rules let it complete, and stays alone where
they allow both or neither.  Each row is read along
the zone's reading direction, so the player facing it reads left to right; a
meld laid descending reads right to left in the engine.

Boxes are axis-aligned, so they do not tell an item's rotation; a row does:
``row_angles`` gives each grouped item its row's direction (along a fan, the
direction of the arc at that item), which is how the item lies.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

Point = tuple[float, float]
INDEX_ASPECT = 2.5
"""A standard card index (rank over suit) is about 10 x 25 mm."""
SPAN_SHARE = 0.5
"""A corner must also turn the row by this share of ``max_bend_deg`` (beyond its curvature)
from the link before the previous item to the link after the next: one index detected a
little off the arc makes a sharp turn at itself and opposite turns at its neighbours, which
cancel over that span, where a true corner's do not."""


OVERLAP_SHARE = 0.8
"""Items of a row whose centres lie closer than this share of their size lie over each other:
their gap is not the row's pitch."""

LINE_ITEMS = 3.0
"""Item sizes (a tile's width, a card index's) across the reading direction beyond which
two rows of one zone lie on two lines."""


@dataclass(frozen=True)
class Placed:
    key: int  # the track id
    kind: str  # "tile" or "card"
    position: Point  # centre, table coordinates
    size: float  # the item's (or card index's) smaller side, same units
    label: str = ""
    length: float = 0.0  # its longer side (0: not known)

    @property
    def link_size(self) -> float:
        """The size links are measured in: for a card index whose longer side is known, the
        smaller side of a standard index (10 x 25 mm) of the same area, so that a condensed
        font's narrow index, turned a quarter, links its row as a wide one does."""
        if self.kind != "card" or self.length <= self.size:
            return self.size
        return math.sqrt(self.size * self.length / INDEX_ASPECT)

    @property
    def index_length(self) -> float:
        """The longer side (a standard index's where only the smaller is known)."""
        return self.length if self.length > 0 else INDEX_ASPECT * self.size


@dataclass(frozen=True)
class Grouping:
    groups: tuple[tuple[int, ...], ...]  # keys, each row in reading order
    singles: tuple[int, ...]  # items in no row
    second_corners: tuple[int, ...]  # card indices dropped as another corner of a grouped card
    corner_of: tuple[tuple[int, int], ...] = ()
    """(second corner, the kept index of its card) where that card is known: the reader's
    votes for both corners are votes for one card."""


def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def group_items(items: Sequence[Placed], reading_direction: Point = (1.0, 0.0), *,
                tile_link: float = 1.6, card_link: float = 3.6, max_bend_deg: float = 30.0,
                max_arc_bend_deg: float = 50.0, gap_ratio: float = 1.8,
                corner_reach: float = 14.0, melds: bool = False,
                fits: Callable[[tuple[str, ...]], bool] | None = None) -> Grouping:
    """Rows of ``items`` (one zone's), in reading order; the ``link`` factors are in item sizes
    (tile: its width; card: the width of its index box).  A row may turn by ``max_bend_deg``
    at an item beyond its steady curvature (a fan's), never by more than ``max_arc_bend_deg``
    (see the module's step 2).  Where the zone holds ``melds`` (three cards or more each),
    a lone card laid beside a row's end joins that row; where it lies as near to two rows'
    ends, it joins the one row that ``fits`` (the rules: is this a legal meld?) says it
    completes, read in reading order with the labels as read."""
    groups: list[tuple[int, ...]] = []
    singles: list[int] = []
    corners: list[int] = []
    partner: dict[int, int] = {}
    for kind in ("tile", "card"):
        of_kind = [it for it in items if it.kind == kind]
        if not of_kind:
            continue
        rows, alone = _rows(of_kind, tile_link if kind == "tile" else card_link,
                            max_bend_deg, max_arc_bend_deg, gap_ratio)
        by_key = {it.key: it for it in of_kind}
        if kind == "card":
            rows, twins, twin_partner, lone = _without_twin_corners(rows, by_key, corner_reach,
                                                                    gap_ratio)
            corners.extend(twins)
            partner.update(twin_partner)
            alone = [*alone, *lone]
            kept: list[int] = []
            for key in alone:
                item = by_key[key]
                reach = corner_reach * item.link_size
                twins_in_rows = [other for row in rows for other in row
                                 if item.label and by_key[other].label == item.label
                                 and _dist(by_key[other].position, item.position) <= reach]
                if twins_in_rows:
                    partner[key] = min(twins_in_rows, key=lambda o: _dist(
                        by_key[o].position, item.position))
                else:
                    kept.append(key)
            # a lone card of a four-index deck shows its corners too far apart to link
            same_card = loose_corner_partners([by_key[k] for k in sorted(kept)], [],
                                              corner_reach=TWIN_REACH_LENGTHS * INDEX_ASPECT)
            partner.update(same_card)
            alone = [k for k in kept if k not in same_card]
            if melds:
                alone = _beside_row_ends(alone, rows, by_key, _resolved(partner),
                                         reading_direction, fits)
            corners.extend(sorted(set(partner) - set(corners)))
        groups.extend(_ordered(row, by_key, reading_direction) for row in rows)
        singles.extend(alone)
    return Grouping(tuple(groups), tuple(sorted(singles)), tuple(sorted(corners)),
                    tuple(sorted(_resolved(partner).items())))


BESIDE_LENGTHS = 3.0
"""How far (in index lengths) past a row's end a lone card's index may lie and still be that
meld's: a card laid beside the last one, not over it, shows its index a card's width (about
2.5 index lengths) out."""
BESIDE_ACROSS_SIZES = 1.0
"""How far (in index sizes) across the row's line that index may lie."""
BESIDE_CLEAR = 1.5
"""A lone card as near (within this factor) to a second meld's end stays alone."""


def _beside_row_ends(lone: list[int], rows: list[list[int]], by_key: dict[int, Placed],
                     corner_of: dict[int, int], reading_direction: Point = (1.0, 0.0),
                     fits: Callable[[tuple[str, ...]], bool] | None = None) -> list[int]:
    """``lone`` cards without those laid beside a row's end, each appended to that row (in
    place); a card is judged by any of its corners against any of the end card's.  A meld
    has three cards or more, so a card alone in line with a meld's end, about one card's
    width out, was laid on to that meld (beside its end card), not as a meld of its own;
    one lying between two melds' ends joins the one it makes a legal meld with (``fits``),
    and stays alone where the rules cannot tell either."""
    corners: dict[int, list[int]] = {}
    for corner, index in corner_of.items():
        corners.setdefault(index, []).append(corner)
    left: list[int] = []
    for card in lone:
        shown = [by_key[k].position for k in (card, *corners.get(card, ()))]
        nearest: dict[int, tuple[float, list[int], bool]] = {}  # per row
        for number, row in enumerate(rows):
            if len(row) < 2:
                continue
            reach = BESIDE_LENGTHS * _median([by_key[k].index_length for k in row])
            across_limit = BESIDE_ACROSS_SIZES * _median([by_key[k].link_size for k in row])
            for at_end in (True, False):
                end, before = (row[-1], row[-2]) if at_end else (row[0], row[1])
                outward = _unit(by_key[before].position, by_key[end].position)
                for at in (by_key[k].position for k in (end, *corners.get(end, ()))):
                    for point in shown:
                        along, across = _along_across(at, outward, point)
                        if (0 < along <= reach and across <= across_limit
                                and (number not in nearest or along < nearest[number][0])):
                            nearest[number] = (along, row, at_end)
        ranked = sorted(nearest.values(), key=lambda found: found[0])
        near = [found for found in ranked if found[0] <= BESIDE_CLEAR * ranked[0][0]]
        if len(near) > 1 and fits is not None:
            near = [found for found in near
                    if fits(_labels(_ordered(_joined(card, *found[1:]), by_key,
                                             reading_direction), by_key))]
        if len(near) != 1:
            left.append(card)  # beside no meld, or between two the rules cannot tell apart
            continue
        _, row, at_end = near[0]
        if at_end:
            row.append(card)
        else:
            row.insert(0, card)
    return left


def _joined(card: int, row: list[int], at_end: bool) -> list[int]:
    return [*row, card] if at_end else [card, *row]


def _labels(keys: Sequence[int], by_key: dict[int, Placed]) -> tuple[str, ...]:
    return tuple(by_key[k].label for k in keys)


def _unit(start: Point, end: Point) -> Point:
    """The unit vector from ``start`` towards ``end``."""
    norm = math.hypot(end[0] - start[0], end[1] - start[1]) or 1.0
    return ((end[0] - start[0]) / norm, (end[1] - start[1]) / norm)


def _along_across(origin: Point, direction: Point, point: Point) -> tuple[float, float]:
    """How far ``point`` lies from ``origin`` along the unit ``direction``, and (unsigned)
    across it."""
    dx, dy = point[0] - origin[0], point[1] - origin[1]
    return (dx * direction[0] + dy * direction[1],
            abs(dx * direction[1] - dy * direction[0]))


def _resolved(partner: dict[int, int]) -> dict[int, int]:
    """Each dropped corner's partner followed to an index that stays (a lone card's first
    corner may itself be dropped beside its twin in a row)."""
    out: dict[int, int] = {}
    for key in partner:
        seen, target = {key}, partner[key]
        while target in partner and target not in seen:
            seen.add(target)
            target = partner[target]
        if target not in partner:
            out[key] = target
    return out


OPPOSITE_CORNER_SPAN = (2.5, 5.5)
"""A card's two opposite corner indices lie this many index lengths apart: a bridge card's
(57 x 88 mm, an index a fifth of its height) about 4.1, a poker card's 4.3, a jumbo
index's nearer 3."""
OPPOSITE_CORNER_SIDES = 1.0
"""How many index lengths, at least, the line between a card's opposite corners runs both
along and across the pile's reading direction: a fanned pile's indices lie along it."""


def _opposite_corners(a: Placed, b: Placed, direction: Point) -> float | None:
    """How far (in index lengths) the distance from ``a`` to ``b`` is from the usual span
    of one card's opposite corners, or None where ``b`` cannot be the corner diagonally
    opposite ``a``."""
    length = max(a.index_length, b.index_length)
    dx, dy = b.position[0] - a.position[0], b.position[1] - a.position[1]
    along, across = _along_across((0.0, 0.0), direction, (dx, dy))
    span = math.hypot(dx, dy) / length
    lowest, highest = OPPOSITE_CORNER_SPAN
    if not lowest <= span <= highest or min(abs(along), abs(across)) < (
            OPPOSITE_CORNER_SIDES * length):
        return None
    return abs(span - sum(OPPOSITE_CORNER_SPAN) / 2)


def loose_corner_partners(loose: Sequence[Placed], anchors: Sequence[Placed], *,
                          corner_reach: float = 14.0,
                          directions: Mapping[int, Point] | None = None) -> dict[int, int]:
    """The ``loose`` card indices that are another corner of a card already read, each with
    the key of that card's index.

    ``loose`` are card indices in no meld (a discard pile's, the stock's, those outside every
    zone), most trusted first; ``anchors`` are those in melds, kept whatever this says.  A
    loose index is dropped when an anchor, or a loose one before it that stays, has its
    label within ``corner_reach`` times its :attr:`Placed.link_size` (the nearest is its
    card): a card lying across two zones, or a discard of a four-index deck, shows more
    than one index, and each would otherwise count as a copy.  (Two copies of one card
    discarded one on the other read as one: the price of reading a four-index deck's
    discards.)

    Then two loose indices read as two labels, neither with a corner of its own label,
    lying diagonally opposite on one card (:data:`OPPOSITE_CORNER_SPAN` apart, the line
    between them off the zone's reading direction, ``directions[key]``, default along x)
    are one card read two ways: the discard on a squared pile shows its two corners, and
    the reader may name them apart (a queen's far corner read as a 10).  The later one is
    its card's other corner, and the card is read from both.  Pairs nearest the usual
    span go first."""
    kept = [it for it in anchors if it.kind == "card" and it.label]
    dropped: dict[int, int] = {}
    kept_loose: list[Placed] = []
    for item in loose:
        if item.kind != "card" or not item.label:
            continue
        reach = corner_reach * item.link_size
        twins = [other for other in kept if other.label == item.label
                 and _dist(other.position, item.position) <= reach]
        if twins:
            dropped[item.key] = min(twins, key=lambda o: _dist(o.position, item.position)).key
        else:
            kept.append(item)
            kept_loose.append(item)
    cornered = set(dropped.values())
    alone = [it for it in kept_loose if it.key not in cornered]
    pairs = []
    for i, a in enumerate(alone):
        for b in alone[i + 1:]:
            if a.label == b.label:
                continue
            off = _opposite_corners(a, b, (directions or {}).get(a.key, (1.0, 0.0)))
            if off is not None:
                pairs.append((off, i, a.key, b.key))
    paired: set[int] = set()
    for _, _, first, second in sorted(pairs):
        if first not in paired and second not in paired:
            dropped[second] = first
            paired.update((first, second))
    return dropped


TWIN_MATCH_SHARE = 0.6
"""A row is another's twin when at least this share of its items (and two) lie on the other's
at one common offset (within ``TWIN_OFFSET_SIZES``)."""
TWIN_OFFSET_SIZES = 1.5
"""How far (in index sizes) an index may lie from where the common offset puts its partner."""
TWIN_REACH_LENGTHS = 3.5
"""How far (in index lengths) a twin row's index may lie from its partner: within one card (a
real index is about 25 mm long, its far twin 58 mm away on an 89 mm card), so that two equal
melds laid one below the other, a card's length or more apart, stay two."""
JOKER_LABEL = "JK"
FAR_CORNER_GAP = 1.2
"""A row's end gap wider than this many times its others' may be a far corner's (a card's
corners lie farther apart than the row's pitch); a card laid at the pitch is no wider."""


def _without_twin_corners(rows: list[list[int]], by_key: dict[int, Placed],
                          corner_reach: float, gap_ratio: float
                          ) -> tuple[list[list[int]], list[int], dict[int, int], list[int]]:
    """``rows`` of card indices without the second corners of four-index cards: a row end
    repeating its neighbour's label, rows that twin a longer (or equal, earlier) row, and
    then a row end lying far out whose label its neighbour's twin carries; also the
    dropped keys, the index each is a corner of where known, and the first of
    each row that is one card's corners, alone now."""
    dropped: list[int] = []
    partner: dict[int, int] = {}
    lone: list[int] = []
    trimmed: list[list[int]] = []
    for row in rows:
        row = list(row)
        if _one_card(row, rows, by_key, corner_reach):
            lone.append(row[0])
            dropped.extend(row[1:])
            partner.update((k, row[0]) for k in row[1:])
            continue
        for _ in range(2):  # each end once
            if len(row) >= 3 and _end_twin(row, by_key, gap_ratio):
                partner[row[-1]] = row[-2]
                dropped.append(row.pop())
            elif len(row) >= 4 and _face_detail_before_far_corner(row, by_key):
                dropped.append(row.pop(-2))  # no index: what the card's face shows
                partner[row[-1]] = row[-2]
                dropped.append(row.pop())
            row.reverse()
        trimmed.append(row)
    trimmed.sort(key=lambda r: (-len(r), min(r)))
    kept: list[list[int]] = []
    for row in trimmed:
        pairs = next((p for p in (_twin_of(row, other, by_key) for other in kept) if p), None)
        if pairs is None:
            kept.append(row)
            continue
        dropped.extend(row)  # an index the offset put on no other is a corner all the same
        partner.update(pairs)
    # A card laid beside a meld's last card shows its near index a step past that card's
    # far corner, which then pairs with it as a row of two (10C JC beside 8C 9C 10C): the
    # far corner is the meld's end card, and the other index is a lone card again.
    for row in [r for r in kept if len(r) == 2]:
        for corner, other in ((row[0], row[1]), (row[1], row[0])):
            end = _meld_end_twin(corner, kept, by_key)
            if end is not None:
                kept.remove(row)
                partner[corner] = end
                dropped.append(corner)
                lone.append(other)
                break
    # A card lying over the one before it shows its far corners inside the row, one index
    # width or more past its near ones: farther than the row's pitch.  A far corner
    # misread there hides the row's end from the pass above; its twin, read right, names
    # it, so each end lying that far out is looked at again with that name.
    named_by_twin: dict[int, set[str]] = {}
    for corner, index in partner.items():
        if by_key[corner].label:
            named_by_twin.setdefault(index, set()).add(by_key[corner].label)
    # The end misread instead, its twin across the card (read right) was dropped above as
    # the far corner of the card before: the end lies across from a corner of that card.
    corners_of: dict[int, list[int]] = {}
    for corner, index in _resolved(partner).items():
        corners_of.setdefault(index, []).append(corner)
    for row in kept:
        for _ in range(2):
            if len(row) >= 3 and row[-1] not in named_by_twin and (
                    (by_key[row[-1]].label in named_by_twin.get(row[-2], set())
                     and _wide_end(row, by_key, _halfway_to_a_cut(gap_ratio)))
                    or (_across_from(row, corners_of.get(row[-2], []), by_key)
                        and _wide_end(row, by_key, FAR_CORNER_GAP))):
                partner[row[-1]] = row[-2]
                dropped.append(row.pop())
            row.reverse()
    return kept, dropped, partner, lone


def _meld_end_twin(corner: int, rows: list[list[int]], by_key: dict[int, Placed]
                   ) -> int | None:
    """The end index of a row of three or more that ``corner`` is another corner of: one
    label, within one card of it (no meld holds a card twice, and a row of two is no
    meld); None if there is none."""
    item = by_key[corner]
    if not item.label:
        return None
    for row in rows:
        if len(row) < 3:
            continue
        for end in (row[0], row[-1]):
            near = by_key[end]
            reach = TWIN_REACH_LENGTHS * near.index_length
            if near.label == item.label and _dist(near.position, item.position) <= reach:
                return end
    return None


def _across_from(row: list[int], corners: list[int], by_key: dict[int, Placed]) -> bool:
    """Whether one of ``corners`` lies across the row from ``row``'s last index, within a
    card's length, as a card's other corner on that side lies."""
    end = by_key[row[-1]]
    outward = _unit(by_key[row[-2]].position, end.position)
    for key in corners:
        along, across = _along_across(end.position, outward, by_key[key].position)
        if (abs(along) <= TWIN_OFFSET_SIZES * end.link_size
                and end.link_size < across <= TWIN_REACH_LENGTHS * end.index_length):
            return True
    return False


def _one_card(row: list[int], rows: list[list[int]], by_key: dict[int, Placed],
              corner_reach: float) -> bool:
    """Whether ``row`` is the corners of one card: all one label (no meld holds one card
    twice); jokers only where another row holds a joker within reach (that card's near
    corners), since two jokers may lie side by side."""
    label = by_key[row[0]].label
    if not label or any(by_key[k].label != label for k in row):
        return False
    if label != JOKER_LABEL:
        return True
    first = by_key[row[0]]
    return any(by_key[k].label == JOKER_LABEL
               and _dist(by_key[k].position, first.position) <= corner_reach * first.link_size
               for other in rows if other is not row for k in other)


def _end_twin(row: list[int], by_key: dict[int, Placed], gap_ratio: float) -> bool:
    """Whether ``row``'s last item is the far corner of the card before it."""
    last, before = by_key[row[-1]], by_key[row[-2]]
    if not last.label or last.label != before.label:
        return False
    if last.label != JOKER_LABEL:
        return True  # no meld holds one card twice in a row; two jokers may lie side by side
    return _wide_end(row, by_key, _halfway_to_a_cut(gap_ratio))


PITCH_TOLERANCE = 0.25
"""Two steps each within this share of a row's pitch are two cards laid at that pitch (a
fanned pile or hand of two decks may show one card twice, two apart)."""


def _face_detail_before_far_corner(row: list[int], by_key: dict[int, Placed]) -> bool:
    """Whether ``row``'s last item is the far corner of the card two before it, farther out
    than the row's pitch and within one card, with the item between lying on that card's
    face, off the row's pitch: the row's last card lies whole in view, so what is boxed
    between its corners is a court figure's or a pip's detail, not another card's index."""
    last, detail, card = (by_key[k] for k in row[-3:][::-1])
    if not last.label or last.label == JOKER_LABEL or last.label != card.label:
        return False
    span = _dist(card.position, last.position)
    if span > TWIN_REACH_LENGTHS * card.index_length:
        return False
    along, _ = _along_across(card.position, _unit(card.position, last.position),
                             detail.position)
    pitch = _median([_dist(by_key[a].position, by_key[b].position)
                     for a, b in itertools.pairwise(row[:-2])])
    steps = (_dist(card.position, detail.position), _dist(detail.position, last.position))
    at_pitch = all(abs(step - pitch) <= PITCH_TOLERANCE * pitch for step in steps)
    return 0 < along < span and span > FAR_CORNER_GAP * pitch and not at_pitch


def _halfway_to_a_cut(gap_ratio: float) -> float:
    """A gap wider than the row's others by half the ratio that cuts a row in two."""
    return 1 + (gap_ratio - 1) / 2


def _wide_end(row: list[int], by_key: dict[int, Placed], factor: float) -> bool:
    """Whether ``row``'s last gap is wider than ``factor`` times its others'."""
    gaps = [_dist(by_key[a].position, by_key[b].position) for a, b in itertools.pairwise(row)]
    return gaps[-1] > factor * _median(gaps[:-1])


def _twin_of(row: list[int], other: list[int], by_key: dict[int, Placed]) -> dict[int, int]:
    """Whether ``row`` is the far corners of ``other``'s cards: at one offset from ``other``,
    most of its indices (and two) lie on one of ``other``'s, and at least half of those
    carry that one's label; the rest are misreads.  The offset is one that some
    pair of equal labels, within a card of each other, shows.  Returns the pairs (``row``'s
    index -> ``other``'s), empty when it is no twin."""
    if len(row) < 2 or len(row) > len(other):
        return {}
    reach = TWIN_REACH_LENGTHS * _median([by_key[k].index_length for k in row])
    tolerance = TWIN_OFFSET_SIZES * _median([by_key[k].link_size for k in row])
    offsets = {(by_key[o].position[0] - by_key[k].position[0],
                by_key[o].position[1] - by_key[k].position[1])
               for k in row for o in other
               if by_key[k].label and by_key[o].label == by_key[k].label
               and _dist(by_key[o].position, by_key[k].position) <= reach}
    needed = max(2, math.ceil(TWIN_MATCH_SHARE * len(row)))
    for offset in sorted(offsets):
        placed_on = agreeing = 0
        used: set[int] = set()
        pairs: dict[int, int] = {}
        for key in row:
            x, y = by_key[key].position
            target = (x + offset[0], y + offset[1])
            near = [o for o in other if o not in used
                    and _dist(by_key[o].position, target) <= tolerance]
            if not near:
                continue
            partner = min(near, key=lambda o: _dist(by_key[o].position, target))
            used.add(partner)
            pairs[key] = partner
            placed_on += 1
            agreeing += by_key[partner].label == by_key[key].label
        if placed_on >= needed and agreeing >= math.ceil(placed_on / 2):
            return pairs
    return {}


def _rows(items: Sequence[Placed], link: float, max_bend_deg: float, max_arc_bend_deg: float,
          gap_ratio: float) -> tuple[list[list[int]], list[int]]:
    n = len(items)
    size = _median([it.link_size for it in items])
    limit = link * size
    nearest: list[list[int]] = []
    for i in range(n):
        others = sorted((j for j in range(n) if j != i),
                        key=lambda j: _dist(items[i].position, items[j].position))
        nearest.append([j for j in others[:2]
                        if _dist(items[i].position, items[j].position) <= limit])
    edges = {(min(i, j), max(i, j)) for i in range(n) for j in nearest[i] if i in nearest[j]}
    _cut_corners(items, edges, max_bend_deg, max_arc_bend_deg)
    # components (each a path now)
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for i, j in edges:
        parent[find(i)] = find(j)
    components: dict[int, list[int]] = {}
    for i in range(n):
        components.setdefault(find(i), []).append(i)
    rows: list[list[int]] = []
    alone: list[int] = []
    for members in components.values():
        for part in _split_gaps(_path_order(members, edges), items, gap_ratio):
            if len(part) >= 2:
                rows.append([items[i].key for i in part])
            else:
                alone.append(items[part[0]].key)
    return rows, alone


def _turn(items: Sequence[Placed], a: int, i: int, b: int) -> float:
    """Signed degrees the way a -> i -> b turns at ``i`` (0 = straight on)."""
    pa, pi, pb = items[a].position, items[i].position, items[b].position
    ux, uy = pi[0] - pa[0], pi[1] - pa[1]
    vx, vy = pb[0] - pi[0], pb[1] - pi[1]
    return math.degrees(math.atan2(ux * vy - uy * vx, ux * vx + uy * vy))


def _cut_corners(items: Sequence[Placed], edges: set[tuple[int, int]], max_bend_deg: float,
                 max_arc_bend_deg: float) -> None:
    """Cut ``edges`` (in place) where two rows meet at an angle, keeping arcs whole.

    Each row turns at an item by its own steady curvature (none for a straight row; the
    same few degrees at every index of a fanned hand laid down) plus the wobble of the
    detections.  A corner is an item that turns by more than ``max_bend_deg`` beyond the
    row's steady curvature (the median turn of its other items, 0 where it has none) and
    whose turn is no single stray index (``SPAN_SHARE``), or that turns by more than
    ``max_arc_bend_deg`` in all (sharper than any fan).  The sharpest corner is cut first,
    at its longer link, and the rest judged again without it: a corner's neighbours turn
    little once it is gone."""
    while True:
        links: dict[int, list[int]] = {}
        for i, j in edges:
            links.setdefault(i, []).append(j)
            links.setdefault(j, []).append(i)
        worst: tuple[float, int] | None = None
        for chain in _chains(links):
            inner = [(i, _turn(items, a, i, b)) for a, i, b in _windows(chain)]
            for place, (i, turn) in enumerate(inner):
                if abs(turn) <= max_bend_deg:
                    continue
                others = [t for k, (_, t) in enumerate(inner) if k != place]
                steady = _median(others or [0.0])
                # the turn from the link before the previous item to the link after the
                # next: one item off the arc moves neither, a corner turns both
                span = [t for _, t in inner[max(0, place - 1):place + 2]]
                beyond = abs(turn - steady)
                span_beyond = abs(sum(span) - len(span) * steady)
                stray = span_beyond <= SPAN_SHARE * max_bend_deg
                corner = (beyond > max_bend_deg and not stray) or abs(turn) > max_arc_bend_deg
                if corner and (worst is None or beyond > worst[0]):
                    worst = (beyond, i)
        if worst is None:
            return
        i = worst[1]
        edges.discard(max(((min(i, j), max(i, j)) for j in links[i]),
                          key=lambda e: _dist(items[e[0]].position, items[e[1]].position)))


def _chains(links: dict[int, list[int]]) -> list[list[int]]:
    """The linked items as walks, each from one end (a ring of links: from any item, with
    its first two items again at the end, so that every item is inside a walk once)."""
    chains: list[list[int]] = []
    seen: set[int] = set()
    for start in sorted(links, key=lambda k: (len(links[k]) != 1, k)):
        if start in seen:
            continue
        walk, previous = [start], -1
        while True:
            step = [m for m in links[walk[-1]] if m != previous and m not in walk]
            if not step:
                break
            previous = walk[-1]
            walk.append(step[0])
        if len(walk) > 2 and walk[0] in links[walk[-1]]:  # a ring
            walk += walk[:2]
        seen.update(walk)
        chains.append(walk)
    return chains


def _windows(chain: list[int]) -> list[tuple[int, int, int]]:
    return list(zip(chain, chain[1:], chain[2:], strict=False))


def rows_in_reading_order(rows: Sequence[tuple[int, ...]], items: Sequence[Placed],
                          reading_direction: Point) -> list[tuple[int, ...]]:
    """``rows`` (of ``items``' keys) as the zone's player reads them: line by line from the
    far side of their view, each line along ``reading_direction`` (a player across the
    table reads its melds right to left in the picture).  A row starts a new line where it
    lies more than ``LINE_ITEMS`` item sizes nearer the player than the line's last."""
    if len(rows) < 2:
        return list(rows)
    by_key = {it.key: it for it in items}
    dx, dy = reading_direction
    nx, ny = -dy, dx  # towards the player, in the table's coordinates

    def along(row: tuple[int, ...]) -> float:
        return min(by_key[k].position[0] * dx + by_key[k].position[1] * dy for k in row)

    def across(row: tuple[int, ...]) -> float:
        return sum(by_key[k].position[0] * nx + by_key[k].position[1] * ny
                   for k in row) / len(row)

    size = _median([by_key[k].size for row in rows for k in row])
    lines: list[list[tuple[int, ...]]] = []
    for row in sorted(rows, key=across):
        if not lines or across(row) - across(lines[-1][-1]) > LINE_ITEMS * size:
            lines.append([row])
        else:
            lines[-1].append(row)
    return [row for line in lines for row in sorted(line, key=along)]


def _path_order(members: list[int], edges: set[tuple[int, int]]) -> list[int]:
    if len(members) == 1:
        return members
    adjacency: dict[int, list[int]] = {m: [] for m in members}
    for i, j in edges:
        if i in adjacency:
            adjacency[i].append(j)
            adjacency[j].append(i)
    start = next((m for m in members if len(adjacency[m]) == 1), members[0])
    order, previous = [start], -1
    while len(order) < len(members):
        step = [m for m in adjacency[order[-1]] if m != previous and m not in order]
        if not step:
            break
        previous = order[-1]
        order.append(step[0])
    return order


def _split_gaps(order: list[int], items: Sequence[Placed], gap_ratio: float) -> list[list[int]]:
    if len(order) < 3:
        return [order]
    gaps = [_dist(items[a].position, items[b].position) for a, b in itertools.pairwise(order)]
    # Two boxes lying over each other are no step of the row: a card lying over the next
    # one's index shows its far corner there, and would halve the row's pitch.
    steps = [gap for gap, (a, b) in zip(gaps, itertools.pairwise(order), strict=True)
             if gap >= OVERLAP_SHARE * (items[a].size + items[b].size) / 2]
    typical = _median(steps or gaps)
    parts, current = [], [order[0]]
    for gap, nxt in zip(gaps, order[1:], strict=True):
        if gap > gap_ratio * typical:
            parts.append(current)
            current = []
        current.append(nxt)
    parts.append(current)
    return parts


def _ordered(keys: list[int], by_key: dict[int, Placed], direction: Point) -> tuple[int, ...]:
    """Along the row, oriented so it reads along ``direction``; a row square to it reads
    along ``direction`` turned a quarter clockwise (top to bottom for the bottom seat)."""
    first, last = by_key[keys[0]].position, by_key[keys[-1]].position
    along = (last[0] - first[0], last[1] - first[1])
    dx, dy = direction
    dot = along[0] * dx + along[1] * dy
    length = math.hypot(*along) + 1e-12
    if abs(dot) / length < 0.26:  # within ~75..105 degrees: use the turned direction
        dot = along[0] * -dy + along[1] * dx
    return tuple(keys if dot >= 0 else reversed(keys))


STRAIGHT_TURN_DEG = 20.0
"""A row whose links turn by no more than this from its first to its last is taken as straight:
every item gets the one line fitted through them all, steadier than any local direction."""


def row_angles(grouping: Grouping, items: Sequence[Placed],
               reading_direction: Point = (1.0, 0.0)) -> dict[int, float]:
    """Each grouped item's rotation in degrees, by key: the direction of its row as the row
    reads (``grouping.groups`` order), measured from ``reading_direction``, in (-180, 180],
    positive clockwise as the camera sees the table (table y pointing down, as image rows
    do).  0 is a row lying along the reading direction, 90 a row read top to bottom by the
    player at the bottom edge.

    A straight row gives all its items the direction of the line fitted through their
    centres; an arc (a fanned hand laid down) gives each item the arc's direction at it,
    which is the way that card is turned.  Singles and dropped second corners have no row
    and no entry: their rotation is unknown from axis-aligned boxes (0 where one is needed).
    """
    position = {it.key: it.position for it in items}
    dx, dy = reading_direction
    norm = math.hypot(dx, dy)
    if norm == 0:
        raise ValueError(f"reading direction must not be zero, not {reading_direction!r}")
    dx, dy = dx / norm, dy / norm
    angles: dict[int, float] = {}
    for row in grouping.groups:
        missing = [key for key in row if key not in position]
        if missing:
            raise ValueError(f"row {row!r} has keys {missing!r} not among the items")
        for key, direction in zip(row, _directions([position[k] for k in row]), strict=True):
            # from the reading direction to the row's: atan2 of their cross and dot products
            vx, vy = math.cos(direction), math.sin(direction)
            angle = round(math.degrees(math.atan2(dx * vy - dy * vx, dx * vx + dy * vy)), 1)
            angles[key] = 180.0 if angle == -180.0 else angle + 0.0  # no -0.0
    return angles


def _directions(points: Sequence[Point]) -> list[float]:
    """Radians in table coordinates, one per point of a row in reading order."""
    links = [math.atan2(b[1] - a[1], b[0] - a[0]) for a, b in itertools.pairwise(points)]
    for k in range(1, len(links)):  # unwrapped, so differences are turns
        links[k] = links[k - 1] + math.remainder(links[k] - links[k - 1], math.tau)
    if len(links) < 2 or abs(links[-1] - links[0]) <= math.radians(STRAIGHT_TURN_DEG):
        # the principal axis of the centres, pointing from the first to the last
        mx = sum(p[0] for p in points) / len(points)
        my = sum(p[1] for p in points) / len(points)
        sxx = sum((p[0] - mx) ** 2 for p in points)
        syy = sum((p[1] - my) ** 2 for p in points)
        sxy = sum((p[0] - mx) * (p[1] - my) for p in points)
        axis = 0.5 * math.atan2(2 * sxy, sxx - syy)
        first, last = points[0], points[-1]
        if (last[0] - first[0]) * math.cos(axis) + (last[1] - first[1]) * math.sin(axis) < 0:
            axis += math.pi
        return [axis] * len(points)
    # along an arc, a chord from the point before to the point after is parallel to the
    # arc at the point between; an end item turns on by half its neighbour's turn
    inner = [(a + b) / 2 for a, b in itertools.pairwise(links)]
    first_end = links[0] - (links[1] - links[0]) / 2
    last_end = links[-1] + (links[-1] - links[-2]) / 2
    return [first_end, *inner, last_end]
