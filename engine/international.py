"""International Rummikub: the 40 closed hands and round scoring.

Rule text: the "Internationales Rummikub" part of
rules/rummikub-sabra-american-international.de.txt, quoted as [international].

A *closed hand* is 14 tiles laid at once (the 15th is discarded).  Its type
comes from the table of 40 hands; the points from the column for the number of
jokers among the 14 tiles ("Keine Joker | Ein Joker | Zwei Joker").  How this
module reads the table:

* A joker stands for any tile, and the player picks the meaning that makes the
  hand qualify.  Jokers written with a meaning (``JK=R5``) are read afresh:
  the hand is judged as a whole, not as it happened to be laid.
* Melds follow the variant: sets of 3-4 distinct colours, runs of one colour
  with 12-13-1 allowed and 13-1-2 not.  A run 1..13..1 of 14 tiles is Royal.
* "Bei Blattarten, bei denen der Gesamtwert ... gezählt wird, zählen 1er 1
  Punkt": totals count a 1 as 1, a joker as the tile it stands for.
* "kein Spielstein höher als eine 9" (minor): every tile, jokers by meaning,
  is 1..9.  "kein Spielstein niedriger als 10 (1 zählt als hoch)" (major):
  every tile is 10..13 or 1.
* "Drei Farben", "Vier Farben": three (four) runs, each in another colour;
  "Zwei Farben": two to four runs using exactly two colours; "Einzige Farbe
  Folgen": two to four runs all of one colour.
* Mosaik and Welle are runs of *mixed* colours, each tile a different colour
  from its neighbours; they are not melds of the ordinary kind and are checked
  on their own.  Welle "einzige Farbe"/"zwei Farben" are two ordinary runs.
* "Sieben Paare": seven pairs of identical tiles; a joker pairs with any tile,
  and two jokers are a pair.
* Kleiner Blitz needs ``first_turn``, Grosser Blitz ``original_hand`` (the
  caller knows that "für den ersten Spieler nicht verfügbar" applies).
* "Wenn ein Blatt zu mehreren möglichen Arten passt, wird nur die höchste Art
  gewertet": the hand that pays most; between equal points the later row of
  the table, which within each group is the stricter hand (Piccolo 41 Folgen
  before Minor 51 Folgen, Stöcke major before Grand Gruppen).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tabletop.engine.base import (
    MeldContribution,
    PlayerRound,
    RoundInput,
    RoundResult,
    Variant,
    check_round,
)
from tabletop.engine.items import JOKER, Color, Item, Joker, Tile, format_items
from tabletop.engine.melds import ACE_HIGH_POSITION, MeldKind, Reading
from tabletop.engine.partition import meld_partitions

__all__ = [
    "HAND_TYPES",
    "ClosedHand",
    "ClosedHandError",
    "HandType",
    "classify_closed_hand",
    "closed_hand_types",
    "score_international",
    "settlement",
]

VARIANT_ID = "rummikub-international"
CLOSED_HAND_SIZE = 14


class ClosedHandError(ValueError):
    """Tiles that cannot be a closed hand at all (not 14, cards, three jokers, ...)."""


@dataclass(frozen=True)
class HandType:
    """One row of the table of closed hands."""

    number: int
    name: str
    points_by_jokers: tuple[int, int, int]
    """Points with no, one and two jokers among the 14 tiles."""
    description: str


# [international] the table "Art des Blatts | Keine Joker | Ein Joker | Zwei Joker"
HAND_TYPES: tuple[HandType, ...] = tuple(
    HandType(number, name, points, description)
    for number, (name, points, description) in enumerate(
        [
            ("Basic", (500, 400, 300), "14 tiles in sets and/or runs"),
            ("Hand minor", (800, 700, 600), "sets and/or runs, no tile higher than 9"),
            ("Hand minor 51", (1000, 900, 800), "sets and/or runs, no tile above 9, total <= 51"),
            ("Minor 51 Sätze", (1600, 1400, 1200), "sets only, total <= 51"),
            ("Minor 51 Folgen", (1600, 1400, 1200), "runs only, total <= 51"),
            ("Piccolo 41 ungerade", (800, 700, 600), "any 14 tiles, total <= 41"),
            ("Piccolo 41 Gruppen", (1400, 1200, 1000), "sets and/or runs, total <= 41"),
            ("Piccolo 41 Folgen", (1600, 1400, 1200), "runs only, total <= 41"),
            ("Piccolo 41 Sätze", (1600, 1400, 1200), "sets only, total <= 41"),
            ("Grand ungerade", (700, 600, 500), "any 14 tiles, none below 10 (1 high)"),
            ("Grand Gruppen", (1400, 1200, 1000), "sets and/or runs, none below 10 (1 high)"),
            ("Grand square", (1600, 1400, 1200), "eight tiles of one number, six any"),
            ("Vier Farben", (900, 800, 700), "four runs of four colours"),
            ("Vier Farben minor", (1000, 900, 800), "four runs of four colours, none above 9"),
            ("Vier Farben major", (1000, 900, 800), "four runs of four colours, none below 10"),
            ("Drei Farben", (700, 600, 500), "three runs of three colours"),
            ("Drei Farben minor", (900, 800, 700), "three runs of three colours, none above 9"),
            ("Drei Farben major", (900, 800, 700), "three runs of three colours, none below 10"),
            ("Zwei Farben", (1000, 900, 800), "two to four runs in exactly two colours"),
            ("Zwei Farben minor", (1400, 1200, 1000), "runs in two colours, none above 9"),
            ("Zwei Farben major", (1400, 1200, 1000), "runs in two colours, none below 10"),
            ("Einzige Farbe vereinzelt", (1600, 1400, 1200), "any 14 tiles of one colour"),
            ("Einzige Farbe Folgen", (2000, 1800, 1600), "two to four runs of one colour"),
            ("Royal", (2400, 2200, 2000), "one run 1..13..1 of 14 tiles"),
            ("Stöcke", (1000, 900, 800), "four sets"),
            ("Stöcke minor", (1400, 1200, 1000), "four sets, none above 9"),
            ("Stöcke major", (1400, 1200, 1000), "four sets, none below 10 (1 high)"),
            ("Mosaik", (1000, 900, 800), "one mixed run 1..13..1, neighbours differ in colour"),
            ("Kleine Welle", (1200, 1000, 900), "two mixed runs 1..7, neighbours differ"),
            ("Grosse Welle", (1200, 1000, 900), "two mixed runs 8..13..1, neighbours differ"),
            ("Kleine Welle: einzige Farbe", (2600, 2400, 2200), "two runs 1..7 of one colour"),
            ("Grosse Welle: einzige Farbe", (2600, 2400, 2200), "two runs 8..1 of one colour"),
            ("Kleine Welle: zwei Farben", (2200, 2000, 1800), "two runs 1..7 of two colours"),
            ("Grosse Welle: zwei Farben", (2200, 2000, 1800), "two runs 8..1 of two colours"),
            ("Sieben Paare", (1700, 1500, 1300), "seven pairs of identical tiles"),
            ("Sieben Paare minor", (2000, 1800, 1600), "seven pairs, none above 9"),
            ("Sieben Paare major", (2000, 1800, 1600), "seven pairs, none below 10 (1 high)"),
            ("Sieben Paare: einzige Farbe", (2200, 2000, 1800), "seven pairs of one colour"),
            ("Kleiner Blitz", (1600, 1400, 1200), "14 tiles in melds in the first turn"),
            ("Grosser Blitz", (2000, 1800, 1600), "14 tiles in melds from the original hand"),
        ],
        start=1,
    )
)
_BY_NUMBER = {hand.number: hand for hand in HAND_TYPES}

_HIGH_RANKS = frozenset({1, 10, 11, 12, 13})
"""Ranks "not lower than 10" where "1 zählt als hoch"."""

Arrangement = tuple[tuple[Item, ...], ...]


@dataclass(frozen=True)
class ClosedHand:
    """A closed hand found in 14 tiles."""

    number: int
    """1..40 as in the table."""
    name: str
    points: int
    """From the column for the number of jokers in the 14 tiles."""
    jokers: int
    melds: Arrangement | None
    """The arrangement that proves it (jokers written with their meaning); None for
    hands that are not an arrangement (Piccolo 41 ungerade, Grand ungerade, Grand
    square, Einzige Farbe vereinzelt)."""

    def to_json(self) -> dict[str, object]:
        return {
            "number": self.number,
            "name": self.name,
            "points": self.points,
            "jokers": self.jokers,
            "melds": None if self.melds is None else [format_items(m) for m in self.melds],
        }


# --- checking the 14 tiles ---------------------------------------------------
def _normalise(tiles: Sequence[Item], variant: Variant) -> tuple[Item, ...]:
    items = tuple(tiles)
    if len(items) != CLOSED_HAND_SIZE:
        raise ClosedHandError(
            f"a closed hand has exactly {CLOSED_HAND_SIZE} tiles (the 15th is discarded),"
            f" not {len(items)}: {format_items(items)!r}"
        )
    out: list[Item] = []
    for item in items:
        if isinstance(item, Joker):
            out.append(JOKER)  # the joker's meaning is chosen afresh for the whole hand
        elif isinstance(item, Tile):
            out.append(item)
        else:
            raise ClosedHandError(f"{item} is not a Rummikub tile: {format_items(items)!r}")
    jokers = out.count(JOKER)
    if jokers > variant.joker_count:
        raise ClosedHandError(
            f"there are only {variant.joker_count} jokers, not {jokers}: {format_items(items)!r}"
        )
    for tile, count in Counter(i for i in out if not i.is_joker).items():
        if count > variant.copies_of_each:
            raise ClosedHandError(
                f"there are only {variant.copies_of_each} of {tile}, not {count}:"
                f" {format_items(items)!r}"
            )
    return tuple(out)


def _tiles(items: Sequence[Item]) -> list[Tile]:
    return [item for item in items if isinstance(item, Tile)]


# --- hands made of melds -----------------------------------------------------
@dataclass(frozen=True)
class _Profile:
    """What the table asks of one split into melds."""

    readings: tuple[Reading, ...]

    @property
    def ranks(self) -> list[int]:
        return [slot.rank for reading in self.readings for slot in reading.slots]

    @property
    def total(self) -> int:
        return sum(self.ranks)  # a 1 counts 1, a joker as the tile it stands for

    @property
    def minor(self) -> bool:
        return max(self.ranks) <= 9

    @property
    def major(self) -> bool:
        return all(rank in _HIGH_RANKS for rank in self.ranks)

    @property
    def only_sets(self) -> bool:
        return all(r.kind is MeldKind.SET for r in self.readings)

    @property
    def only_runs(self) -> bool:
        return all(r.kind is MeldKind.RUN for r in self.readings)

    @property
    def run_colours(self) -> list[int | None]:
        return [r.suit for r in self.readings]

    def runs_in_colours(self, runs: int, colours: int) -> bool:
        """Only runs, ``runs`` of them, each in another colour."""
        return (
            self.only_runs and len(self.readings) == runs and len(set(self.run_colours)) == colours
        )

    def runs_in_exactly(self, colours: int) -> bool:
        """Two to four runs using exactly ``colours`` colours."""
        return (
            self.only_runs
            and 2 <= len(self.readings) <= 4
            and len(set(self.run_colours)) == colours
        )

    def two_runs_spanning(self, first: int, last: int) -> bool:
        return (
            self.only_runs
            and len(self.readings) == 2
            and all(
                r.slots[0].position == first and r.slots[-1].position == last for r in self.readings
            )
        )

    @property
    def arrangement(self) -> Arrangement:
        return tuple(reading.resolved_items() for reading in self.readings)


_MeldTest = Callable[[_Profile, bool, bool], bool]

# number -> test on a split (profile, first_turn, original_hand)
_MELD_HANDS: dict[int, _MeldTest] = {
    1: lambda p, f, o: True,
    2: lambda p, f, o: p.minor,
    3: lambda p, f, o: p.minor and p.total <= 51,
    4: lambda p, f, o: p.only_sets and p.total <= 51,
    5: lambda p, f, o: p.only_runs and p.total <= 51,
    7: lambda p, f, o: p.total <= 41,
    8: lambda p, f, o: p.only_runs and p.total <= 41,
    9: lambda p, f, o: p.only_sets and p.total <= 41,
    11: lambda p, f, o: p.major,
    13: lambda p, f, o: p.runs_in_colours(4, 4),
    14: lambda p, f, o: p.runs_in_colours(4, 4) and p.minor,
    15: lambda p, f, o: p.runs_in_colours(4, 4) and p.major,
    16: lambda p, f, o: p.runs_in_colours(3, 3),
    17: lambda p, f, o: p.runs_in_colours(3, 3) and p.minor,
    18: lambda p, f, o: p.runs_in_colours(3, 3) and p.major,
    19: lambda p, f, o: p.runs_in_exactly(2),
    20: lambda p, f, o: p.runs_in_exactly(2) and p.minor,
    21: lambda p, f, o: p.runs_in_exactly(2) and p.major,
    23: lambda p, f, o: p.runs_in_exactly(1),
    24: lambda p, f, o: p.only_runs and len(p.readings) == 1,  # 14 tiles: 1..13..1
    25: lambda p, f, o: p.only_sets and len(p.readings) == 4,
    26: lambda p, f, o: p.only_sets and len(p.readings) == 4 and p.minor,
    27: lambda p, f, o: p.only_sets and len(p.readings) == 4 and p.major,
    31: lambda p, f, o: p.two_runs_spanning(1, 7) and len(set(p.run_colours)) == 1,
    32: lambda p, f, o: p.two_runs_spanning(8, ACE_HIGH_POSITION) and len(set(p.run_colours)) == 1,
    33: lambda p, f, o: p.two_runs_spanning(1, 7) and len(set(p.run_colours)) == 2,
    34: lambda p, f, o: p.two_runs_spanning(8, ACE_HIGH_POSITION) and len(set(p.run_colours)) == 2,
    39: lambda p, f, o: f,
    40: lambda p, f, o: o,
}


# --- hands that are not melds ------------------------------------------------
def _piccolo_any(items: Sequence[Item]) -> bool:
    # [international] 6: "14 beliebige Spielsteine mit einem Gesamtwert von 41 oder
    # weniger"; a joker is best read as a 1
    return sum(t.number for t in _tiles(items)) + items.count(JOKER) <= 41


def _grand_any(items: Sequence[Item]) -> bool:
    # 10: "kein Spielstein niedriger als 10 (1 zählt als hoch)"
    return all(t.number in _HIGH_RANKS for t in _tiles(items))


def _grand_square(items: Sequence[Item]) -> bool:
    # 12: "Acht Spielsteine derselben Zahl - die anderen sechs sind beliebig"
    counts = Counter(t.number for t in _tiles(items))
    most = max(counts.values(), default=0)
    return most + items.count(JOKER) >= 8


def _one_colour_any(items: Sequence[Item]) -> bool:
    # 22: "Beliebige 14 Spielsteine einer Farbe"
    return len({t.color for t in _tiles(items)}) <= 1


def _seven_pairs(items: Sequence[Item]) -> Arrangement | None:
    """Seven pairs of identical tiles; a joker pairs with any tile, two jokers pair."""
    counts = Counter(_tiles(items))
    jokers = items.count(JOKER)
    pairs: list[tuple[Item, ...]] = []
    singles: list[Tile] = []
    for tile in sorted(counts, key=lambda t: (t.color.index, t.number)):
        pairs.extend([(tile, tile)] * (counts[tile] // 2))
        if counts[tile] % 2:
            singles.append(tile)
    if len(singles) > jokers:
        return None
    for tile in singles:
        pairs.append((tile, Joker(tile)))
    spare = jokers - len(singles)
    pairs.extend([(JOKER, JOKER)] * (spare // 2))
    return tuple(pairs) if len(pairs) == 7 else None


def _pairs_minor(items: Sequence[Item]) -> bool:
    return all(t.number <= 9 for t in _tiles(items))


def _mixed_runs(items: Sequence[Item], first: int, last: int, runs: int) -> Arrangement | None:
    """``runs`` mixed-colour runs over positions first..last, neighbours of different
    colours (Mosaik: one run 1..14; Kleine/Grosse Welle: two runs 1..7 / 8..14)."""
    positions = range(first, last + 1)
    by_position: dict[int, list[Tile]] = {p: [] for p in positions}
    for tile in _tiles(items):
        spots = [p for p in positions if (p - 1) % 13 + 1 == tile.number]
        if not spots:
            return None  # a tile outside the runs' numbers
        # a 1 in Mosaik may stand at either end; put it where there is room
        spot = next((p for p in spots if len(by_position[p]) < runs), None)
        if spot is None:
            return None
        by_position[spot].append(tile)
    # Every position holds ``runs`` tiles; the missing ones are jokers.  Try each way
    # of sharing a position's tiles between the runs, and the 1s between both ends.
    choices: list[list[tuple[Tile | None, ...]]] = []
    for p in positions:
        naturals: list[Tile | None] = list(by_position[p])
        naturals += [None] * (runs - len(naturals))
        choices.append(sorted(set(itertools.permutations(naturals)), key=str))
    ones_swaps = [False, True] if first == 1 and last == ACE_HIGH_POSITION else [False]
    for swap in ones_swaps:
        for pick in itertools.product(*choices):
            columns = list(pick)
            if swap:
                columns[0], columns[-1] = columns[-1], columns[0]
            lines = [[column[k] for column in columns] for k in range(runs)]
            if all(_neighbours_differ(line) for line in lines):
                return tuple(_resolve_mixed(line, first) for line in lines)
    return None


def _neighbours_differ(line: Sequence[Tile | None]) -> bool:
    return all(a is None or b is None or a.color != b.color for a, b in itertools.pairwise(line))


def _resolve_mixed(line: Sequence[Tile | None], first: int) -> tuple[Item, ...]:
    """The run with each joker given a colour unlike its neighbours."""
    out: list[Item] = []
    previous: Color | None = None
    for index, tile in enumerate(line):
        if tile is not None:
            out.append(tile)
            previous = tile.color
            continue
        following = line[index + 1] if index + 1 < len(line) else None
        avoid = {previous, following.color if following is not None else None}
        colour = next(c for c in Color if c not in avoid)
        number = (first + index - 1) % 13 + 1
        out.append(Joker(Tile(colour, number)))
        previous = colour
    return tuple(out)


# --- classification ------------------------------------------------------------
def _hand(number: int, jokers: int, melds: Arrangement | None) -> ClosedHand:
    row = _BY_NUMBER[number]
    return ClosedHand(number, row.name, row.points_by_jokers[jokers], jokers, melds)


def closed_hand_types(
    tiles: Sequence[Item],
    *,
    first_turn: bool = False,
    original_hand: bool = False,
    variant: Variant,
) -> list[ClosedHand]:
    """Every closed-hand type the 14 tiles qualify for, best-paying first.

    Raises ClosedHandError for tiles that cannot be a closed hand (not exactly
    14, more jokers or copies of a tile than the game has, playing cards).
    """
    items = _normalise(tiles, variant)
    jokers = items.count(JOKER)
    proofs: dict[int, Arrangement | None] = {}

    for split in meld_partitions(items, variant):
        profile = _Profile(split)
        for number, test in _MELD_HANDS.items():
            if number not in proofs and test(profile, first_turn, original_hand):
                proofs[number] = profile.arrangement
        if len(proofs) == len(_MELD_HANDS):
            break

    for number, simple in (
        (6, _piccolo_any),
        (10, _grand_any),
        (12, _grand_square),
        (22, _one_colour_any),
    ):
        if simple(items):
            proofs[number] = None

    pairs = _seven_pairs(items)
    if pairs is not None:
        proofs[35] = pairs
        if _pairs_minor(items):
            proofs[36] = pairs
        if _grand_any(items):
            proofs[37] = pairs
        if _one_colour_any(items):
            proofs[38] = pairs

    for number, first, last, runs in (
        (28, 1, ACE_HIGH_POSITION, 1),
        (29, 1, 7, 2),
        (30, 8, ACE_HIGH_POSITION, 2),
    ):
        mixed = _mixed_runs(items, first, last, runs)
        if mixed is not None:
            proofs[number] = mixed

    hands = [_hand(number, jokers, melds) for number, melds in proofs.items()]
    return sorted(hands, key=lambda hand: (-hand.points, -hand.number))


def classify_closed_hand(
    tiles: Sequence[Item],
    *,
    first_turn: bool = False,
    original_hand: bool = False,
    variant: Variant,
) -> ClosedHand | None:
    """The best-paying closed hand of the 14 tiles, None if they form none.

    [international] "Wenn ein Blatt zu mehreren möglichen Arten passt, wird nur
    die höchste Art gewertet."
    """
    hands = closed_hand_types(
        tiles, first_turn=first_turn, original_hand=original_hand, variant=variant
    )
    return hands[0] if hands else None


# --- round scoring ---------------------------------------------------------------
OPEN_POINTS = 100
OPEN_POINTS_NO_ONE_MELDED = 200
FOOT_POINTS = 200
FOOT_MINIMUM = 50
NEVER_MELDED_PENALTY = 100
TRUMP_BONUS = 50


def _laid_value(contribution: MeldContribution, variant: Variant) -> tuple[int, str | None]:
    """What the items a player laid into one meld count (face value, a joker as the
    tile it stands for, the reading that counts most), and a problem if any."""
    analysis = variant.analyse(contribution.meld)
    if not analysis.valid:
        value = sum(t.number for t in _tiles(contribution.own))
        return value, f"{format_items(contribution.meld)} is not a legal meld: {analysis.reason}"

    def own_value(reading: Reading) -> int:
        wanted = Counter(contribution.own)
        total = 0
        for slot in reading.slots:
            if wanted[slot.item] > 0:
                wanted[slot.item] -= 1
                total += variant.slot_value(reading, slot)
        return total

    return max(own_value(reading) for reading in analysis.readings), None


def _infer_win(winner: PlayerRound, variant: Variant) -> str:
    """The win type when the round does not say: laid all at once without adding to
    other melds and a closed hand -> closed; all at once otherwise -> foot; else open."""
    if not winner.all_at_once:
        return "open"
    if all(c.own == c.meld for c in winner.melds):
        try:
            if classify_closed_hand(winner.melded_items(), variant=variant) is not None:
                return "closed"
        except ClosedHandError:
            pass
    return "foot"


def score_international(round_: RoundInput) -> RoundResult:
    """Score one round of International Rummikub ([international] "Die Punkte werden
    wie folgt vergeben").

    * Open win 100, or 200 "wenn keiner der anderen Spieler gemeldet hat"; Foot 200
      (the 14 tiles must count at least 50); Closed the best closed hand of the
      winner's melded tiles.
    * Others who have melded lose what their unmelded tiles count (2-9 face value,
      1 and 10-13 count 10, a joker per the option joker_penalty, or the value the
      players counted, ``PlayerRound.hand_points``); others who have not melded
      lose 100, or after a Closed win what the winner gains.
    * A joker discarded as the winner's last tile doubles every score.
    * Option trump_bonus: 50 for a player who declared the trump's twin (doubled
      with everything else).
    * With the pool exhausted there is no winner and no one gains.

    A claimed Foot or Closed win that breaks its rule (under 50 points, no closed
    hand) is reported under ``problems`` and the round is scored as one without a
    winner: the claim wins nothing, and nobody is charged a winner's points.
    """
    check_round(round_)
    variant = round_.variant
    players = round_.players
    details: dict[str, list[str]] = {p.name: [] for p in players}
    problems: list[str] = []
    extras: dict[str, object] = {}

    winner = None if round_.pool_exhausted else round_.winner
    if winner is None and not round_.pool_exhausted:
        problems.append("no one went out and the pool is not marked exhausted; no winner")

    win_type: str | None = None
    win_points = 0
    hand: ClosedHand | None = None
    if winner is not None:
        win_type = winner.win or _infer_win(winner, variant)
        if winner.win is None:
            details[winner.name].append(f"win type not given; taken as {win_type}")
        if winner.holds_something:
            problems.append(f"{winner.name} went out but still holds {winner.rack_text()}")
        others = [p for p in players if p is not winner]
        if win_type == "open":
            if any(p.has_melded for p in others):
                win_points = OPEN_POINTS
                details[winner.name].append(f"Open win: {OPEN_POINTS}")
            else:
                win_points = OPEN_POINTS_NO_ONE_MELDED
                details[winner.name].append(
                    f"Open win, no one else has melded: {OPEN_POINTS_NO_ONE_MELDED}"
                )
        elif win_type == "foot":
            laid = winner.melded_items()
            value = 0
            for contribution in winner.melds:
                part, problem = _laid_value(contribution, variant)
                value += part
                if problem:
                    problems.append(f"{winner.name}: {problem}")
            if len(laid) != CLOSED_HAND_SIZE:
                problems.append(f"{winner.name}: a Foot win lays 14 tiles at once, not {len(laid)}")
            if value < FOOT_MINIMUM:
                problems.append(
                    f"{winner.name}: a Foot win needs at least {FOOT_MINIMUM} points in the"
                    f" 14 tiles, these count {value}; scored without a winner"
                )
                winner, win_type = None, None
            else:
                win_points = FOOT_POINTS
                details[winner.name].append(f"Foot win ({value} points laid): {FOOT_POINTS}")
        else:  # closed
            laid = winner.melded_items()
            if not all(c.own == c.meld for c in winner.melds):
                problems.append(
                    f"{winner.name}: a Closed win lays its own melds only"
                    ' ("ohne an die Meldungen der anderen Spieler anzulegen")'
                )
            try:
                hand = classify_closed_hand(
                    laid,
                    first_turn=winner.first_turn,
                    original_hand=winner.original_hand,
                    variant=variant,
                )
            except ClosedHandError as error:
                problems.append(f"{winner.name}: {error}")
                hand = None
            if hand is None:
                problems.append(
                    f"{winner.name}: {format_items(laid)!r} is not a closed hand;"
                    " scored without a winner"
                )
                winner, win_type = None, None
            else:
                win_points = hand.points
                joker_words = ("no joker", "one joker", "two jokers")[hand.jokers]
                details[winner.name].append(
                    f"Closed win: {hand.number}. {hand.name} ({joker_words}): {hand.points}"
                )
                extras["hand"] = hand.to_json()
    extras["win"] = win_type

    scores: dict[str, int] = {}
    for player in players:
        if player is winner:
            scores[player.name] = win_points
            continue
        if player.has_melded and player.hand_points is not None:
            penalty = player.hand_points
            details[player.name].append(f"unmelded counted {penalty} = -{penalty}")
        elif player.has_melded:
            values = [variant.hand_value(item) for item in player.hand]
            penalty = sum(values)
            if player.hand:
                sums = " + ".join(str(v) for v in values)
                details[player.name].append(
                    f"unmelded {format_items(player.hand)} = {sums} = -{penalty}"
                )
            else:
                details[player.name].append("has melded, nothing left: 0")
        elif win_type == "closed":
            penalty = win_points
            details[player.name].append(
                f"has not melded, loses what the Closed hand wins: -{penalty}"
            )
        else:
            penalty = NEVER_MELDED_PENALTY
            details[player.name].append(f"has not melded: -{NEVER_MELDED_PENALTY}")
        scores[player.name] = -penalty

    if variant.scoring_rules.trump_bonus:
        for player in players:
            if player.trump_declared:
                scores[player.name] += TRUMP_BONUS
                details[player.name].append(f"holds the trump's twin: +{TRUMP_BONUS}")

    doubled = bool(
        winner is not None and winner.last_discard is not None and winner.last_discard.is_joker
    )
    if doubled:
        assert winner is not None
        for player in players:
            scores[player.name] *= 2
            details[player.name].append(f"{winner.name} discarded a joker last: doubled")

    for player in players:
        details[player.name].append(f"round: {scores[player.name]:+d}")

    return RoundResult(
        scores=scores,
        winner=winner.name if winner is not None else None,
        details=details,
        problems=tuple(problems),
        doubled=doubled,
        extras=extras,
    )


def settlement(scores: Mapping[str, int]) -> dict[str, int]:
    """What each player receives (negative: pays) when everyone settles with everyone.

    [international] "Am Ende des Spiels zahlt jeder Spieler den anderen Spielern eine
    Summe, die sich aus dem Verhältnis der Differenz zwischen ihren Punktzahlen
    errechnet": each pair settles the difference of their scores, so player i nets
    sum over j of (s_i - s_j).  The nets add up to zero.
    """
    return {name: sum(score - other for other in scores.values()) for name, score in scores.items()}
