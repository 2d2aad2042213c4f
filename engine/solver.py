"""The best play for a rack, found exactly (``tabletop solve``).

Two kinds of game need two kinds of search:

* Sabra and Räuber-Rommé let the table be rebuilt; :func:`solve` hands them to
  :func:`tabletop.engine.rearrange.solve_rearrangement`.
* Every other variant only *extends* the table ("anlegen"): a play is some new
  melds made of rack items alone plus, for each meld on the table, at most one
  bundle of rack items laid onto it (at the ends of a run, into the missing
  suits of a set).  Jokers on the table keep what they stand for; a set's
  joker stands for any suit the set is missing, as the texts read ([rommee]
  "hier also die ♣6 oder ♦6").

Both are found by :class:`tabletop.engine.partition.MeldPacking`, a search on counts
with branch and bound (30-card racks in a tenth of a second).  New melds from the rack
alone (no table to lay off onto, or an opening turn, which lays nothing off) are its
plain packing.  With a table to extend, each table meld is one more count (a token) and
every bundle of rack items that may be laid onto it (every window of positions round a
run, every choice of missing suits of a set, with the rack's jokers filling gaps, under
every reading of the meld) is one more move that takes the token with the items: the
lowest rack item left (the *pivot*) stays on the rack, starts a new meld, or starts a
bundle onto a table meld not yet extended, and bundles of jokers alone are laid once no
natural is left.  Every legal play is one path of this search, so the best one is found
(the tests prove it against an item-by-item search, ``tests/engine/item_search.py``).

Legality is always decided by ``variant.analyse`` (joker ratios, ace rules,
no jokers at all); :func:`tabletop.engine.turns.check_turn` accepts every play returned
(the tests assert it).

Joker exchanges ([remi] rules 5-7, [rommee] "Austauschen eines Jokers", [american])
are searched exactly where the variant allows them (Remi, Rommé, American and
International Rummikub; never in 500 Rum, "Dies kann anschließend nicht mehr geändert
werden", nor in an opening turn, [remi] "Gleichzeitig mit der Anfangsmeldung darf man
keine Steine ... anlegen oder den Joly ... austauschen", [rommee] "erst nach Auslage
der Erstmeldung"). The table jokers are few, so every choice of exchanges is tried,
one packing search each: the rack natural a joker stands for takes its place (a run's
joker: the one item of its place; a set's: any missing suit, or, where the set must be
completed to four ([remi] rules 6 and 7, Rommé's ``set_joker_exchange_needs_four``),
all the missing suits at once), the meld is otherwise as it was and may still be
extended, and each freed joker joins the rack as a joker that must go into a *new*
meld in this very turn ([rommee] "Der Joker muss sofort wieder in einer neuen Meldung
ausgelegt werden"). Where the freed joker needs rack tiles ([remi] "mit zwei Steinen
vom eigenen Ständer", [american] read strictly) its new meld holds two or more rack
items. Jokers look alike, so a freed joker is any joker of a new meld; the search
counts the freed jokers apart, and a play leaves none of them. A freed joker is not a
placed item: it does not count towards ``placed`` or ``value`` (in a meld with rack
jokers too, the freed ones take the joker places worth least); the exchanged natural
counts what it is worth in its old meld. An exchange is chosen only when it scores
strictly better than the best play without one.

What is left out, and why:

* A freed joker never goes into a meld that lay on the table (the rules ask
  for a new one), and its new meld is made of rack items only: the extend-only
  tables are never taken apart to build it ([american] "Version 3" of the
  ruling, which lets table tiles join it, is a rearranging house rule).
* Going out: where the last item must be discarded (Remi, Rommé, American and
  International Rummikub, American Rummy) pass ``keep=1`` to keep that many
  items on the rack; the CLI's ``--keep``.  By default every item may be placed.
* Melds on the table are never joined (R6 between R3-R5 and R7-R9 extends only
  one of them): each meld belongs to the player who laid it.
* International Rummikub's Foot (14 tiles at once, laying off allowed before
  opening) and Rommé's Hand-Rommé waiver are round endings, not plays.
* Wiener Rummy lays nothing during play ([wiener] "Rommé ohne Auslegen"):
  ``solve`` answers with the best way to arrange the hand into melds (the
  melds a player shows when he knocks or calls Rommé); :func:`knock_decision`
  says whether he may.
"""

from __future__ import annotations

import gc
import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

from tabletop.engine import budget
from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Family, Item, Joker, Natural, format_items, natural
from tabletop.engine.melds import MeldKind, Reading
from tabletop.engine.partition import (
    ItemScore,
    LayOff,
    MeldPacking,
    best_split,
    can_be_melded,
    field_item,
    order_key,
)
from tabletop.engine.play import OBJECTIVES, Meld, Play, SolveError
from tabletop.engine.rearrange import solve_rearrangement

__all__ = [
    "OBJECTIVES",
    "KnockDecision",
    "Play",
    "RackSplit",
    "SolveError",
    "best_rack_split",
    "check_material",
    "knock_decision",
    "ranking",
    "solve",
    "table_arrangeable",
]

@dataclass(frozen=True)
class RackSplit:
    """A rack arranged into melds, and what is left over."""

    melds: tuple[Meld, ...]
    leftover: tuple[Item, ...]
    penalty: int
    """What the leftover counts (``variant.hand_value``)."""


@dataclass(frozen=True)
class KnockDecision:
    """[wiener] Whether a hand may knock ("fünf oder weniger Augen in schlechten
    Karten") or call Rommé (everything melded)."""

    split: RackSplit
    discard: Item | None
    """The item to discard first (when asked to choose one), else None."""
    deadwood: int
    knock_limit: int
    can_knock: bool
    can_call_rommee: bool


# --- public functions ------------------------------------------------------------
def solve(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]] = (),
    *,
    initial: bool = False,
    objective: str = "tiles",
    keep: int = 0,
    budget_s: float | None = None,
) -> Play:
    """The best legal play for ``rack`` on ``table`` (see the module docstring).

    ``initial``: the player has not opened, so the variant's initial-meld rule
    applies: the new melds, from the hand alone, must reach
    ``variant.initial_meld_required`` (Remi: with a run), and nothing may be laid
    off in that turn ([remi] "Gleichzeitig mit der Anfangsmeldung darf man keine
    Steine an die Meldungen anderer Spieler anlegen"; [rommee] "Hat ein Spieler
    seine Erstmeldung ausgelegt, so darf er ... anlegen").  If it cannot be
    reached nothing is placed and ``meets_initial`` is False.  Variants without
    an initial-meld rule (500 Rum, American Rummy) ignore ``initial``.

    ``objective``: ``tiles`` places the most items (ties: the most value),
    ``value`` the most value (ties: the most items).  ``keep``: items that must
    stay on the rack (1 to keep a discard for going out).

    ``budget_s``: the seconds the search may take (None: as long as it needs).  When they
    run out the answer is the best play found by then with ``optimal`` False: every search
    keeps its best play so far (the Sabra rearrangement the best its probes found), and
    the answer is never worse than the rack's own melds laid beside the table
    (:func:`_melds_from_the_rack`, found in :func:`fallback_seconds` more, or, with a
    table to lay off onto or rebuild, in the first quarter of the budget).
    """
    if budget_s is not None and not budget_s > 0:
        raise SolveError(f"the time budget is a positive number of seconds, not {budget_s!r}")
    collecting = gc.isenabled()
    # The searches' memos are millions of small acyclic tuples: a full collection among
    # them is a pause of a tenth of a second or more, which no deadline check can cut short.
    gc.disable()
    try:
        with budget.limit(budget_s):
            play = _solve(variant, rack, table, initial, objective, keep)
            settled = budget.settled()
        if not settled:
            return play
        # out of time: the best play found, unless the rack's own melds do better
        assert budget_s is not None
        fallback = _melds_from_the_rack(
            variant, rack, table, initial, keep, fallback_seconds(budget_s), objective
        )
        if ranking(fallback, objective) > ranking(play, objective):
            return fallback
        return replace(play, optimal=False)
    except budget.OutOfTime:
        assert budget_s is not None
        return _melds_from_the_rack(
            variant, rack, table, initial, keep, fallback_seconds(budget_s), objective
        )
    finally:
        if collecting:
            gc.enable()


def ranking(play: Play, objective: str) -> tuple[int, ...]:
    """How plays compare for ``objective`` (an opening first, where one is asked for)."""
    count = len(play.placed)
    if objective == "tiles":
        return (int(play.meets_initial), count, play.value)
    return (int(play.meets_initial), play.value, count)


FALLBACK_SHARE = 0.05
"""Of the budget, what the fallback may take on top of it."""
FALLBACK_LEAST_S = 0.04
"""The least the fallback may take, however small the budget: the rack's own melds take a
millisecond on a quiet machine, but a search that shares its core gets a fraction of the
clock (four 0.02 s searches at once on two busy cores: 4 of 20 answered nothing placed
with a twentieth of the budget alone, none with this)."""


def fallback_seconds(budget_s: float) -> float:
    """What the fallback may take on top of a spent ``budget_s``: a call ends by
    ``budget_s`` plus this, within the promise of 1.1 x the budget + 50 ms."""
    return max(budget_s * FALLBACK_SHARE, FALLBACK_LEAST_S)


def _melds_from_the_rack(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]],
    initial: bool,
    keep: int,
    seconds: float,
    objective: str = "value",
) -> Play:
    """The floor of an answer out of time: new melds from the rack alone beside the table
    as it lies (always a legal turn where melds are laid, and an opening when they reach
    the variant's initial meld), the best such play for ``objective`` found in ``seconds``
    (Räuber-Rommé's ``value``: the least left in hand); nothing placed when none is found
    in time or none opens."""
    table_melds = tuple(tuple(meld) for meld in table)
    opening = variant.initial_meld_required > 0 or variant.initial_meld_needs_run
    needs_opening = initial and opening and variant.table_rules.lays_out
    nothing = Play(table_melds, (), 0, meets_initial=not needs_opening, optimal=False)
    items = tuple(JOKER if isinstance(item, Joker) else item for item in rack)
    if not variant.table_rules.lays_out or not items:
        return nothing
    need = variant.initial_meld_required if needs_opening else 0
    need_run = needs_opening and variant.initial_meld_needs_run
    rules = variant.table_rules

    scorer = slot_scorer(objective)
    if rules.rearrange and rules.jokers_move_freely:

        def scorer(field: int, slot_value: int) -> int:
            worth = variant.hand_value(field_item(variant.family, field))
            return SCORE_SCALE + worth if objective == "tiles" else worth * SCORE_SCALE + 1

    try:
        with budget.limit(seconds):
            found = MeldPacking(variant, items, scorer, lead=SCORE_SCALE).solve(
                need, need_run, keep
            )
    except budget.OutOfTime:
        return nothing
    if found is None or not found.readings:
        return nothing
    readings = found.readings
    value = sum(variant.meld_value(reading) for reading in readings)
    if rules.rearrange and rules.jokers_move_freely:
        # Räuber-Rommé counts the placed cards as they would count left in the hand
        value = sum(variant.hand_value(JOKER if slot.is_joker else slot.item)
                    for reading in readings for slot in reading.slots)
    melds = tuple(reading.resolved_items() for reading in readings)
    placed = tuple(sorted((item for meld in melds for item in meld), key=order_key))
    placed = tuple(JOKER if isinstance(item, Joker) else item for item in placed)
    return Play((*table_melds, *melds), placed, value, meets_initial=True, optimal=False)


def _solve(
    variant: Variant,
    rack: Sequence[Item],
    table: Sequence[Sequence[Item]],
    initial: bool,
    objective: str,
    keep: int,
) -> Play:
    if objective not in OBJECTIVES:
        raise SolveError(f"unknown objective {objective!r} (known: {', '.join(OBJECTIVES)})")
    if keep < 0:
        raise SolveError(f"keep must be 0 or more, not {keep!r}")
    rack_items = tuple(JOKER if isinstance(item, Joker) else item for item in rack)
    table_melds = tuple(tuple(meld) for meld in table)
    rules = variant.table_rules
    check_material(variant, rack_items, table_melds)
    if rules.rearrange:
        if keep:
            raise SolveError(f"keep is not supported for {variant.id}")
        return solve_rearrangement(
            variant, rack_items, table_melds, initial=initial, objective=objective
        )
    if not rules.lays_out and table_melds:
        raise SolveError(
            f"{variant.id} lays nothing on the table during play, so there is no table to"
            f" play on: {' | '.join(format_items(m) for m in table_melds)!r}"
        )
    opening_rule = variant.initial_meld_required > 0 or variant.initial_meld_needs_run
    constrained = initial and opening_rule and rules.lays_out
    if constrained or not table_melds:
        # new melds from the rack alone: the packing search on counts
        return _new_melds_only(variant, rack_items, table_melds, constrained, objective, keep)
    left = budget.remaining()
    if left is None:
        return _extend(variant, rack_items, table_melds, objective, keep)
    # under a budget: first the best play of new melds alone (quick), the floor of the
    # answer should the search with the table run out of time
    floor = _melds_from_the_rack(
        variant, rack_items, table_melds, False, keep, left * FLOOR_SHARE, objective
    )
    floor = _laid_off_after(variant, floor, rack_items, table_melds, objective, keep,
                            left * LAY_OFF_SHARE)
    play = _extend(variant, rack_items, table_melds, objective, keep)
    if budget.settled() and ranking(floor, objective) > ranking(play, objective):
        return floor
    return play


FLOOR_SHARE = 0.25
"""Of what is left of a budget, what the floor of an extend-only answer may take."""
LAY_OFF_SHARE = 0.1
"""Of what was left of a budget, what laying the floor's leftovers off may take."""


def _laid_off_after(
    variant: Variant,
    floor: Play,
    rack_items: tuple[Item, ...],
    table_melds: tuple[Meld, ...],
    objective: str,
    keep: int,
    seconds: float,
) -> Play:
    """``floor`` (the rack's own melds beside the table) with what it leaves on the rack
    then played exactly: laid off onto the table, or into new melds of their own.  Two
    stages, so not optimal, but most of a turn that lays off is found in a few
    milliseconds, where the search over the whole rack may need a second."""
    leftover = Counter(rack_items)
    leftover.subtract(floor.placed)
    rest = tuple(sorted(leftover.elements(), key=order_key))
    if len(rest) <= keep:
        return floor
    try:
        with budget.limit(seconds):
            more = _extend(variant, rest, table_melds, objective, keep)
    except budget.OutOfTime:
        return floor
    if not more.placed:
        return floor
    new = floor.melds[len(table_melds):]
    placed = tuple(sorted((*floor.placed, *more.placed), key=order_key))
    # two stages together are never a proved optimum
    return Play((*more.melds, *new), placed, floor.value + more.value, meets_initial=True,
                optimal=False)


def _extend(
    variant: Variant,
    rack_items: tuple[Item, ...],
    table_melds: tuple[Meld, ...],
    objective: str,
    keep: int,
) -> Play:
    """The best play with a table to lay off onto, joker exchanges included: the packing
    search on counts with every lay-off onto each table meld as one more kind of move,
    once without exchanges and once for each choice of them."""
    scorer = slot_scorer(objective)
    best = _packed_lay_offs(variant, rack_items, table_melds, scorer, keep)
    if not variant.table_rules.exchange:
        return best[1]
    try:
        for exchanges in _exchange_choices(variant, table_melds, rack_items):
            tiles = [tile for exchange in exchanges for tile in exchange.tiles]
            if len(rack_items) - keep - len(tiles) < 0:
                continue
            exchanged = list(table_melds)
            for exchange in exchanges:
                exchanged[exchange.index] = exchange.meld
            left = list(rack_items)
            for tile in tiles:
                left.remove(tile)
            found = _packed_lay_offs(
                variant, tuple(left), tuple(exchanged), scorer, keep,
                freed=sum(exchange.freed for exchange in exchanges), exchanges=exchanges,
            )
            # an exchange is taken only when it does strictly better
            if found[0] > best[0]:
                best = found
    except budget.OutOfTime:
        budget.settle()  # the best play found before the time ran out
    return best[1]


def _packed_lay_offs(
    variant: Variant,
    rack_items: tuple[Item, ...],
    table_melds: tuple[Meld, ...],
    scorer: ItemScore,
    keep: int,
    *,
    freed: int = 0,
    exchanges: tuple[_Exchange, ...] = (),
) -> tuple[int, Play]:
    """The best play of new melds and lay-offs onto ``table_melds`` (after ``exchanges``,
    whose ``freed`` jokers must go into new melds), with its packing score; (-1, the
    table as it is) when the freed jokers find no new meld.  Out of time, the best found
    (the budget settled)."""
    rules = variant.table_rules
    anchors = _TableMelds(variant, table_melds)
    counts = Counter(rack_items)
    lay_offs: list[LayOff] = []
    for anchor in anchors.anchors:
        bundles = anchors.bundles_of(anchor, counts)
        lay_offs.extend(step.lay_off for step in bundles if step.lay_off is not None)
    packing = MeldPacking(
        variant, rack_items, scorer, lay_offs=lay_offs, tables=len(table_melds),
        freed=freed, freed_needs_rack_pair=rules.freed_with_hand_tiles, lead=SCORE_SCALE,
    )
    result = packing.solve(keep=keep)
    if result is None:
        return -1, Play(table_melds, (), 0, meets_initial=True)
    if not result.optimal:
        budget.settle()
    melds = list(table_melds)
    new: list[Meld] = []
    placed: list[Item] = [tile for exchange in exchanges for tile in exchange.tiles]
    value = sum(exchange.value for exchange in exchanges)
    for move in result.moves:
        if move.lay_off is not None:
            melds[move.lay_off.target] = move.reading.resolved_items()
            placed.extend(item for item, _ in move.lay_off.slots)
            value += sum(worth for _, worth in move.lay_off.slots)
            continue
        slot_values = [(slot.is_joker, variant.slot_value(move.reading, slot))
                       for slot in move.reading.slots]
        # the freed jokers take the joker places worth least
        freed_values = sorted(v for is_joker, v in slot_values if is_joker)[:move.freed]
        new.append(move.reading.resolved_items())
        laid = [JOKER if slot.is_joker else slot.item for slot in move.reading.slots]
        for _ in range(move.freed):
            laid.remove(JOKER)
        placed.extend(laid)
        value += sum(v for _, v in slot_values) - sum(freed_values)
    # the exchanged naturals score as slots of their melds (a scorer is linear in the value)
    per_item = scorer(0, 0)
    per_point = scorer(0, 1) - per_item
    gain = result.score + sum(
        len(exchange.tiles) * per_item + exchange.value * per_point for exchange in exchanges
    )
    play = Play(tuple(melds + new), tuple(sorted(placed, key=order_key)), value,
                meets_initial=True, optimal=result.optimal)
    return gain, play


SCORE_SCALE = 1 << 16
"""Weights the first criterion of an objective over the second in one integer score (the
second never reaches it: at most a few hundred points, or a few dozen items)."""


def slot_scorer(objective: str) -> ItemScore:
    """What one slot of a new meld scores for ``objective`` (the packing search's weights),
    given its slot value: ``tiles`` an item first, its value second; ``value`` the other
    way round."""
    if objective == "tiles":
        return lambda field, value: SCORE_SCALE + value
    return lambda field, value: value * SCORE_SCALE + 1


def _new_melds_only(
    variant: Variant,
    rack: tuple[Item, ...],
    table: tuple[Meld, ...],
    constrained: bool,
    objective: str,
    keep: int,
) -> Play:
    """The best play of new melds from the rack alone (no table to lay off onto, or an
    opening turn, which lays nothing off): :class:`partition.MeldPacking`."""
    packing = MeldPacking(variant, rack, slot_scorer(objective))
    need = variant.initial_meld_required if constrained else 0
    need_run = constrained and variant.initial_meld_needs_run
    result = packing.solve(need, need_run, keep)
    if result is None:
        return Play(table, (), 0, meets_initial=False)
    if not result.optimal:
        budget.settle()
    melds = tuple(reading.resolved_items() for reading in result.readings)
    placed = sorted(
        (JOKER if item.is_joker else item for meld in melds for item in meld), key=order_key
    )
    value = sum(variant.meld_value(reading) for reading in result.readings)
    return Play((*table, *melds), tuple(placed), value, meets_initial=True,
                optimal=result.optimal)


def best_rack_split(variant: Variant, rack: Sequence[Item]) -> RackSplit:
    """The rack split into melds with the least penalty left over (end-of-round
    scoring from a photo of a rack): ``partition.best_split`` with
    ``variant.hand_value``."""
    items = tuple(rack)
    check_material(variant, items, ())
    readings, leftover = best_split(items, variant)
    return RackSplit(
        tuple(reading.resolved_items() for reading in readings),
        leftover,
        variant.hand_total(leftover),
    )


def table_arrangeable(variant: Variant, items: Sequence[Item]) -> bool:
    """Whether all of ``items`` can be arranged into legal melds of ``variant``."""
    items = tuple(items)
    check_material(variant, items, ())
    return can_be_melded(items, variant)


def knock_decision(
    variant: Variant, hand: Sequence[Item], *, discard: bool = False
) -> KnockDecision:
    """[wiener] The split of ``hand`` with least deadwood, and whether it may knock
    ("Hat ein Spieler nur mehr fünf oder weniger Augen in schlechten Karten, so kann
    er klopfen") or call Rommé (every card in melds).

    ``discard=True``: the hand holds the drawn card too (eleven cards), and one is
    discarded first ("zehn Karten in Meldungen auslegt und seine elfte Karte
    ablegt"): the discard that leaves least deadwood is chosen.
    """
    limit = variant.knock_limit
    if limit is None:
        raise SolveError(f"{variant.id} has no knocking; knock_decision is for wiener")
    items = tuple(hand)
    check_material(variant, items, ())
    if discard and not items:
        raise SolveError("an empty hand has nothing to discard")
    options: list[tuple[Item | None, tuple[Item, ...]]] = []
    if discard:
        seen: set[Item] = set()
        for index, item in enumerate(items):
            if item not in seen:
                seen.add(item)
                options.append((item, items[:index] + items[index + 1 :]))
    else:
        options.append((None, items))
    best: tuple[tuple[int, int, int], KnockDecision] | None = None
    for thrown, kept in options:
        split = best_rack_split(variant, kept)
        # least deadwood; then fewest cards left; then throw the costliest card
        # (it would count against the player if he kept it)
        key = (split.penalty, len(split.leftover), -(variant.hand_value(thrown) if thrown else 0))
        if best is None or key < best[0]:
            decision = KnockDecision(
                split,
                thrown,
                split.penalty,
                limit,
                can_knock=split.penalty <= limit,
                can_call_rommee=not split.leftover,
            )
            best = (key, decision)
    assert best is not None
    return best[1]


# --- input checks --------------------------------------------------------------------
def check_material(variant: Variant, rack: Meld, table: tuple[Meld, ...]) -> None:
    """SolveError unless the rack and table are the variant's own material (family, copies,
    jokers) and every table meld is legal."""
    everything = [*rack, *(item for meld in table for item in meld)]
    for item in everything:
        if item.family is not None and item.family is not variant.family:
            kind = "tiles" if variant.family is Family.TILES else "cards"
            raise SolveError(f"{item} is not one of the {kind} of {variant.name}")
    jokers = sum(item.is_joker for item in everything)
    if jokers > variant.joker_count:
        raise SolveError(
            f"{jokers} jokers on the rack and table, but {variant.name} has"
            f" {variant.joker_count}: {format_items(everything)!r}"
        )
    counts = Counter(item for item in everything if not item.is_joker)
    for item, n in sorted(counts.items(), key=lambda pair: str(pair[0])):
        if n > variant.copies_of_each:
            raise SolveError(
                f"{item} is on the rack and table {n} times, but {variant.name} has"
                f" {variant.copies_of_each} of it"
            )
    for meld in table:
        analysis = variant.analyse(meld)
        if not analysis.valid:
            raise SolveError(
                f"the table meld {format_items(meld)!r} is not legal: {analysis.reason}"
            )


# --- joker exchanges ----------------------------------------------------------------
@dataclass(frozen=True)
class _Exchange:
    """Jokers taken from one table meld by laying the rack naturals they stand for."""

    index: int
    meld: Meld
    """The table meld after the exchange (then it may still be extended)."""
    tiles: tuple[Natural, ...]
    """Rack naturals laid into the meld."""
    freed: int
    """Jokers that come free."""
    value: int
    """What the laid naturals count in the meld."""


def _meld_exchanges(variant: Variant, index: int, meld: Meld) -> list[_Exchange]:
    """Every way to take jokers from one table meld, under every reading of it."""
    needs_four = variant.table_rules.set_exchange_needs_four
    family = variant.family
    found: dict[tuple[Meld, tuple[str, ...]], _Exchange] = {}
    for reading in variant.analyse(meld).readings:
        jokers = reading.joker_count
        if not jokers:
            continue
        options: list[tuple[Meld, tuple[Natural, ...], tuple[int, ...], int]] = []
        if reading.kind is MeldKind.RUN:
            # a run's joker stands for the one item of its place
            resolved = reading.resolved_items()
            places = [i for i, item in enumerate(resolved) if item.is_joker]
            for size in range(1, len(places) + 1):
                for chosen in itertools.combinations(places, size):
                    changed = list(resolved)
                    tiles: list[Natural] = []
                    for i in chosen:
                        joker = resolved[i]
                        assert isinstance(joker, Joker) and joker.stands_for is not None
                        changed[i] = joker.stands_for
                        tiles.append(joker.stands_for)
                    options.append((tuple(changed), tuple(tiles), chosen, size))
        else:
            # a set's joker stands for any missing suit ([rommee] "die ♣6 oder ♦6");
            # [remi] rules 6 and 7: only completing the set to four frees it
            naturals = reading.naturals()
            missing = [natural(family, reading.rank, s) for s in reading.missing_suits]
            choices: list[tuple[tuple[Natural, ...], int]]
            if needs_four:
                choices = [(tuple(missing), jokers)] if len(naturals) + len(missing) == 4 else []
            else:
                choices = [
                    (suits, freed)
                    for freed in range(1, jokers + 1)
                    for suits in itertools.combinations(missing, freed)
                ]
            for laid_set, freed in choices:
                changed_set: Meld = (*naturals, *laid_set, *([JOKER] * (jokers - freed)))
                places_laid = tuple(range(len(naturals), len(naturals) + len(laid_set)))
                options.append((changed_set, laid_set, places_laid, freed))
        for changed_meld, laid, places_laid, freed in options:
            readings = [
                r for r in variant.analyse(changed_meld).readings
                if r.kind is reading.kind and not r.reordered
            ]
            if not readings:
                continue
            value = max(
                sum(variant.slot_value(r, r.slots[i]) for i in places_laid) for r in readings
            )
            key = (changed_meld, tuple(sorted(map(str, laid))))
            old = found.get(key)
            if old is None or value > old.value:
                found[key] = _Exchange(index, changed_meld, laid, freed, value)
    return list(found.values())


def _exchange_choices(
    variant: Variant, table: tuple[Meld, ...], rack: tuple[Item, ...]
) -> Iterator[tuple[_Exchange, ...]]:
    """Every choice of exchanges on different table melds (at least one) that the
    rack's naturals pay for."""
    have: Counter[Item] = Counter(item for item in rack if not item.is_joker)
    per_meld: list[list[_Exchange | None]] = []
    for index, meld in enumerate(table):
        if any(item.is_joker for item in meld):
            options = [
                ex for ex in _meld_exchanges(variant, index, meld)
                if not Counter[Item](ex.tiles) - have
            ]
            if options:
                per_meld.append([None, *options])
    for combination in itertools.product(*per_meld):
        chosen = tuple(ex for ex in combination if ex is not None)
        if chosen and not Counter[Item](t for ex in chosen for t in ex.tiles) - have:
            yield chosen


# --- the extend-only search ----------------------------------------------------------
_Gain = tuple[int, int]
"""(items placed, value placed)."""


@dataclass(frozen=True)
class _Step:
    """One decision about the pivot: keep it, a new meld, or a bundle on meld ``target``."""

    gain: _Gain
    rest: tuple[Item, ...]
    used_items: tuple[Item, ...] = ()
    meld: Meld = ()
    target: int | None = None
    """Index of the table meld extended; None for a new meld or keeping the pivot."""
    is_run: bool = False
    freed: int = 0
    """Freed jokers the new meld takes (not counted in ``gain`` or ``used_items``)."""
    lay_off: LayOff | None = None
    """A bundle laid onto a table meld, as the packing search takes it."""


@dataclass
class _Anchor:
    """One reading of one table meld, as a place to lay items."""

    index: int
    reading: Reading
    naturals: frozenset[Natural] = field(default_factory=frozenset)
    """Naturals that could ever be laid onto it (for memo keys)."""


_BUNDLE_READINGS: dict[tuple[str, Meld], tuple[Reading, ...]] = {}
"""A table meld with rack items laid onto it, analysed (per variant)."""
_BUNDLE_READINGS_LIMIT = 200_000
_UNTRACKED: tuple[Item, ...] = ()
"""The items left beside a bundle, where no one asks what they are."""


class _TableMelds:
    """The table melds as places to lay rack items: each reading of each meld an anchor,
    and every legal bundle of rack items laid onto one."""

    def __init__(self, variant: Variant, table: tuple[Meld, ...]) -> None:
        self.variant = variant
        self.rules = variant.meld_rules
        self.family = variant.family
        self.table = table
        self.anchors: list[_Anchor] = []
        for index, meld in enumerate(table):
            for reading in variant.analyse(meld).readings:
                self.anchors.append(_Anchor(index, reading, self._reachable(reading)))
        self._vkey = repr(variant)

    def _reachable(self, reading: Reading) -> frozenset[Natural]:
        if reading.kind is MeldKind.SET:
            return frozenset(natural(self.family, reading.rank, s) for s in reading.missing_suits)
        suit = reading.suit
        assert suit is not None
        return frozenset(natural(self.family, rank, suit) for rank in range(1, 14))

    # -- bundles laid onto one table meld ----------------------------------------------
    def _readings(self, items: Meld) -> tuple[Reading, ...]:
        # kept between calls: a game's hints ask about much the same table again and again
        key = (self._vkey, items)
        cached = _BUNDLE_READINGS.get(key)
        if cached is None:
            if len(_BUNDLE_READINGS) >= _BUNDLE_READINGS_LIMIT:
                _BUNDLE_READINGS.clear()
            cached = self.variant.analyse(items).readings
            _BUNDLE_READINGS[key] = cached
        return cached

    def bundles_of(self, anchor: _Anchor, counts: Counter[Item]) -> Iterator[_Step]:
        """Every legal bundle of the items ``counts`` counts laid onto ``anchor`` (their
        ``rest`` not worked out)."""
        if anchor.reading.kind is MeldKind.SET:
            return self._set_bundles(anchor, JOKER, counts, counts[JOKER], _UNTRACKED)
        return self._run_bundles(anchor, JOKER, counts, counts[JOKER], _UNTRACKED)

    def bundles(self, anchor: _Anchor, remaining: tuple[Item, ...]) -> Iterator[_Step]:
        """Every legal bundle of rack items holding the pivot laid onto ``anchor``."""
        pivot = remaining[0]
        counts = Counter(remaining)
        jokers = counts[JOKER]
        if anchor.reading.kind is MeldKind.SET:
            yield from self._set_bundles(anchor, pivot, counts, jokers, remaining)
        else:
            yield from self._run_bundles(anchor, pivot, counts, jokers, remaining)

    def _finish(
        self,
        anchor: _Anchor,
        sequence: Meld,
        new_slots: Sequence[int],
        laid: Sequence[Item],
        remaining: tuple[Item, ...],
        kind: MeldKind,
    ) -> _Step | None:
        readings = [r for r in self._readings(sequence) if r.kind is kind and not r.reordered]
        if not readings:
            return None
        best: tuple[int, Reading] | None = None
        for reading in readings:
            value = sum(self.variant.slot_value(reading, reading.slots[i]) for i in new_slots)
            if best is None or value > best[0]:
                best = (value, reading)
        assert best is not None
        value, reading = best
        rest = list(remaining)
        if remaining is not _UNTRACKED:
            for item in laid:
                rest.remove(item)
        slots = tuple(
            (JOKER if slot.is_joker else slot.item, self.variant.slot_value(reading, slot))
            for slot in (reading.slots[i] for i in new_slots)
        )
        return _Step(
            (len(laid), value),
            tuple(rest),
            used_items=tuple(laid),
            meld=reading.resolved_items(),
            target=anchor.index,
            lay_off=LayOff(anchor.index, slots, reading),
        )

    def _set_bundles(
        self,
        anchor: _Anchor,
        pivot: Item,
        counts: Counter[Item],
        jokers: int,
        remaining: tuple[Item, ...],
    ) -> Iterator[_Step]:
        reading = anchor.reading
        old_naturals = list(reading.naturals())
        # a set's joker stands for any missing suit, so it is written bare here
        old = (*old_naturals, *([JOKER] * reading.joker_count))
        room = 4 - len(old)
        if room <= 0:
            return
        available = [
            n for n in (natural(self.family, reading.rank, s) for s in reading.missing_suits)
            if counts[n] > 0
        ]
        if not pivot.is_joker and pivot not in available:
            return
        for mask in range(1 << len(available)):
            chosen = [available[i] for i in range(len(available)) if mask >> i & 1]
            if not pivot.is_joker and pivot not in chosen:
                continue
            for extra in range(0, min(jokers, room - len(chosen)) + 1):
                laid = [*chosen, *([JOKER] * extra)]
                if not laid or len(laid) > room:
                    continue
                step = self._finish(
                    anchor,
                    (*old, *laid),
                    range(len(old), len(old) + len(laid)),
                    laid,
                    remaining,
                    MeldKind.SET,
                )
                if step is not None:
                    yield step

    def _run_bundles(
        self,
        anchor: _Anchor,
        pivot: Item,
        counts: Counter[Item],
        jokers: int,
        remaining: tuple[Item, ...],
    ) -> Iterator[_Step]:
        reading = anchor.reading
        suit = reading.suit
        assert suit is not None
        low = reading.slots[0].position
        high = reading.slots[-1].position
        old = reading.resolved_items()
        length = len(old)
        rules = self.rules
        max_length = rules.max_run_length

        def item_at(position: int) -> Natural:
            return natural(self.family, (position - 1) % 13 + 1, suit)

        def in_range(position: int) -> bool:
            if rules.ace_wrap:
                return True  # only the length limits a run round the corner
            return 1 <= position <= rules.max_position

        def fills(direction: int) -> Iterator[tuple[list[Item], Counter[Item], int]]:
            """Sequences of items laid beyond one end (nearest first), with the
            naturals and jokers they use."""
            used: Counter[Item] = Counter()

            def extend(
                position: int, placed: list[Item], jokers_used: int
            ) -> Iterator[tuple[list[Item], Counter[Item], int]]:
                yield list(placed), Counter(used), jokers_used
                if length + len(placed) >= max_length or not in_range(position):
                    return
                wanted = item_at(position)
                if used[wanted] < counts[wanted]:
                    used[wanted] += 1
                    placed.append(wanted)
                    yield from extend(position + direction, placed, jokers_used)
                    placed.pop()
                    used[wanted] -= 1
                if jokers_used < jokers:
                    placed.append(Joker(wanted))
                    yield from extend(position + direction, placed, jokers_used + 1)
                    placed.pop()

            yield from extend(low - 1 if direction < 0 else high + 1, [], 0)

        below_options = list(fills(-1))
        above_options = list(fills(+1))
        for below, used_below, jokers_below in below_options:
            for above, used_above, jokers_above in above_options:
                if not below and not above:
                    continue
                if length + len(below) + len(above) > max_length:
                    continue
                if jokers_below + jokers_above > jokers:
                    continue
                used = used_below + used_above
                if any(used[item] > counts[item] for item in used):
                    continue
                if not pivot.is_joker and used[pivot] == 0:
                    continue
                sequence = (*reversed(below), *old, *above)
                new_slots = [*range(len(below)), *range(len(below) + length, len(sequence))]
                laid = [JOKER if item.is_joker else item for item in (*below, *above)]
                step = self._finish(anchor, sequence, new_slots, laid, remaining, MeldKind.RUN)
                if step is not None:
                    yield step
