"""Round scoring for the card games: 500 Rum, American Rummy, Rommé, Räuber-Rommé, Wiener.

Each variant's ``score_round`` hook (:mod:`tabletop.engine.variants`) calls its function
here, ``RoundInput -> RoundResult``.  Scores are points gained
(higher is better), so the penalty-point games give negative numbers.

Rule texts are quoted by tag: ``[rum500]`` = rules/rum500.de.txt,
``[american-rummy]`` = rules/american-rummy.de.txt, ``[rommee]``,
``[raeuber]`` and ``[wiener]`` = rules/rommee-raeuber-wiener.de.txt.

Choices where the texts are silent (a demanding player's reading):

* A meld that is not legal, or a contribution whose ``own`` items are not part
  of its ``meld``, is reported in ``problems`` and its cards count as still
  held in the hand: an illegal meld would have had to be taken back.
* An item that cannot exist in the game (a tile, a joker in a game without
  jokers, one copy too many) is reported; a card still counts its value, a
  tile or a joker the game does not have counts nothing.
* A player who went out but still holds cards is reported.  In Rommé and
  American Rummy the winner's hand is not scored (the others' penalties do
  not depend on it); in 500 Rum and Wiener everyone's hand counts anyway.
* Rommé and Wiener: the texts do not say what happens when the stock runs
  out.  Everyone then loses the value of their hand (Wiener: their
  deadwood), nothing is doubled and no chips change hands.
* American Rummy cannot end by an exhausted stock ("wird der Talon ...
  umgedreht und mit diesen Karten weitergespielt"): such a round is reported
  and scores nothing, as does a round in which no one went out.
* A hand given as the points the players counted (``PlayerRound.hand_points``)
  counts that value instead of its cards' sum; the cards of a rejected meld
  are added to it.  Wiener's deadwood is then the count as given: the best
  laying-out of the hand cannot be looked for without its cards.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from tabletop.engine.base import MeldContribution, PlayerRound, RoundInput, RoundResult, Variant
from tabletop.engine.items import JOKER, Family, Item, format_items
from tabletop.engine.melds import Reading
from tabletop.engine.partition import best_split

__all__ = [
    "WienerHand",
    "score_american_rummy",
    "score_rommee",
    "score_rum500",
    "score_wiener",
    "wiener_hand",
]

WIENER_HAND_SIZE = 10
"""[wiener] "Jeder Spieler erhält zehn Karten": ten cards each when the round is counted."""
WIENER_SEARCH_LIMIT = 2 * WIENER_HAND_SIZE
"""The most cards the least-deadwood laying-out is looked for in.  The search grows
steeply with the cards (40 take seconds); a hand this far over ten is a misreading,
reported, and counted as laid out."""


# --- bookkeeping --------------------------------------------------------------
class _Sheet:
    """The score sheet of one round while it is being filled in."""

    def __init__(self, round_: RoundInput) -> None:
        self.round = round_
        self.details: dict[str, list[str]] = {player.name: [] for player in round_.players}
        self.scores: dict[str, int] = {player.name: 0 for player in round_.players}
        self._problems: list[str] = []

    def note(self, name: str, line: str) -> None:
        self.details[name].append(line)

    def problem(self, line: str) -> None:
        self._problems.append(line)

    def result(
        self, *, doubled: bool = False, extras: dict[str, object] | None = None
    ) -> RoundResult:
        winner = self.round.winner
        return RoundResult(
            scores=dict(self.scores),
            winner=winner.name if winner is not None else None,
            details=self.details,
            problems=tuple(dict.fromkeys(self._problems)),
            doubled=doubled,
            extras=dict(extras or {}),
        )


def _key(item: Item) -> Item:
    """Items as counted on the table: a joker is a joker whatever it stands for."""
    return JOKER if item.is_joker else item


def _contains(whole: Iterable[Item], part: Iterable[Item]) -> bool:
    """Whether the multiset ``part`` lies within ``whole`` (jokers compared bare)."""
    return not Counter(map(_key, part)) - Counter(map(_key, whole))


def _without(whole: Sequence[Item], part: Iterable[Item]) -> tuple[Item, ...]:
    """``whole`` with one copy of each item of ``part`` taken out (part must lie within)."""
    left = list(whole)
    for item in part:
        index = next(i for i, other in enumerate(left) if _key(other) == _key(item))
        del left[index]
    return tuple(left)


def _card_value(variant: Variant, item: Item) -> int:
    """An item's value in the hand; nothing for what the game does not have (reported elsewhere)."""
    if item.family not in (None, Family.CARDS):
        return 0
    if item.is_joker and variant.joker_count == 0:
        return 0
    return variant.hand_value(item)


def _priced(variant: Variant, items: Sequence[Item]) -> tuple[int, str]:
    """Total value of ``items`` and a line showing the sum (``"7S=7 JK=20 -> 27"``)."""
    values = [_card_value(variant, item) for item in items]
    if not items:
        return 0, "nothing"
    parts = " ".join(f"{item}={value}" for item, value in zip(items, values, strict=True))
    return sum(values), f"{parts} -> {sum(values)}"


@dataclass(frozen=True)
class _Held:
    """What a player still holds at the end: the hand (its cards or its counted points)
    and the cards of melds that were not accepted."""

    value: int
    line: str
    """The sum shown (``"7S=7 JK=20 -> 27"``, ``"counted 12 7S=7 -> 19"``, ``"nothing"``)."""
    shown: str
    """What is held, for a problem (``""``: nothing)."""


def _counted(variant: Variant, points: int, items: Sequence[Item]) -> tuple[int, str]:
    """A hand's value as the players counted it plus ``items`` (the cards of rejected
    melds), and the line showing the sum (``"counted 12"``, ``"counted 12 7S=7 -> 19"``)."""
    values = [_card_value(variant, item) for item in items]
    total = points + sum(values)
    if not items:
        return total, f"counted {points}"
    parts = " ".join(f"{item}={value}" for item, value in zip(items, values, strict=True))
    return total, f"counted {points} {parts} -> {total}"


def _held(variant: Variant, player: PlayerRound, rejected: Sequence[Item]) -> _Held:
    points = player.hand_points
    if points is None:
        items = (*player.hand, *rejected)
        value, line = _priced(variant, items)
        return _Held(value, line, format_items(items))
    total, line = _counted(variant, points, rejected)
    shown = " ".join(
        part for part in (f"counted {points}" if points else "", format_items(rejected)) if part
    )
    return _Held(total, line, shown)


def check_material(
    sheet: _Sheet, variant: Variant, cards: dict[str, tuple[Item, ...]]
) -> None:
    """Report items the game does not have: tiles, jokers too many, copies too many."""
    naturals: Counter[Item] = Counter()
    holders: dict[Item, list[str]] = {}
    jokers = 0
    for name, items in cards.items():
        for item in items:
            if item.family not in (None, Family.CARDS):
                sheet.problem(f"{name}: {item} is not a playing card")
                continue
            if item.is_joker:
                jokers += 1
                continue
            naturals[item] += 1
            holders.setdefault(item, []).append(name)
    seen = "a joker was seen" if jokers == 1 else f"{jokers} jokers were seen"
    if jokers and variant.joker_count == 0:
        sheet.problem(f"{variant.name} is played without jokers, but {seen}")
    elif jokers > variant.joker_count:
        sheet.problem(f"{seen}, but {variant.name} has only {variant.joker_count}")
    copies = variant.copies_of_each
    for item, count in naturals.items():
        if count > copies:
            who = ", ".join(dict.fromkeys(holders[item]))
            allowed = "one" if copies == 1 else f"only {copies}"
            sheet.problem(f"{count} copies of {item} ({who}), but the game has {allowed}")


@dataclass(frozen=True)
class _Checked:
    """One player's melds, sorted into accepted (with the reading they count by) and rejected."""

    accepted: tuple[tuple[MeldContribution, Reading, bool], ...]
    """Contribution, the reading it is valued in, and whether that reading was one of several."""
    rejected: tuple[Item, ...]
    """Cards of rejected contributions: they count as still held."""


def _check_melds(
    problem: Callable[[str], None],
    variant: Variant,
    player: PlayerRound,
    value: Callable[[Reading], int],
    *,
    lay_offs: bool = True,
) -> _Checked:
    """Validate a player's contributions.  ``value`` picks among readings (greatest wins).

    Where a meld reads several ways the player would have declared one
    [rum500] "muss klarstellen, welchen Rang er darstellt"; the scorer takes
    the one worth most, the same for everyone sharing that meld.
    """
    accepted: list[tuple[MeldContribution, Reading, bool]] = []
    rejected: list[Item] = []
    for contribution in player.melds:
        meld, own = contribution.meld, contribution.own
        if not own:
            continue
        if not _contains(meld, own):
            problem(
                f"{player.name}: {format_items(own)} is not part of the meld {format_items(meld)}"
            )
            rejected.extend(own)
            continue
        if not lay_offs and len(own) != len(meld):
            # [wiener] "Ein Anlegen an Figuren anderer Spieler ist nicht gestattet."
            problem(
                f"{player.name}: laid {format_items(own)} on {format_items(meld)}, but laying off"
                f" on another player's meld is not allowed in {variant.name}"
            )
            rejected.extend(own)
            continue
        analysis = variant.analyse(meld)
        if not analysis.valid:
            problem(f"{player.name}: {format_items(meld)} is not a legal meld: {analysis.reason}")
            rejected.extend(own)
            continue
        reading = max(analysis.readings, key=value)
        accepted.append((contribution, reading, analysis.ambiguous))
    return _Checked(tuple(accepted), tuple(rejected))


def _describe_contribution(contribution: MeldContribution) -> str:
    if len(contribution.own) == len(contribution.meld):
        return f"melded {format_items(contribution.meld)}"
    return f"laid off {format_items(contribution.own)} on {format_items(contribution.meld)}"


def _own_slots(reading: Reading, own: Sequence[Item]) -> list[int]:
    """Indexes of the reading's slots that hold ``own`` (own must lie within the meld)."""
    taken: list[int] = []
    for item in own:
        exact = [
            i for i, slot in enumerate(reading.slots) if i not in taken and slot.item == item
        ]
        loose = [
            i
            for i, slot in enumerate(reading.slots)
            if i not in taken and _key(slot.item) == _key(item)
        ]
        taken.append((exact or loose)[0])
    return taken


def _total_melded(variant: Variant, reading: Reading) -> int:
    return sum(variant.melded_score(reading, slot) for slot in reading.slots)


def _report_flags(sheet: _Sheet, round_: RoundInput) -> None:
    """Flags that only the player who went out can carry, and a round with no end."""
    for player in round_.players:
        if player.all_at_once and not player.out:
            sheet.problem(f"{player.name}: laid everything at once but did not go out")
        if player.knocked and not player.out:
            sheet.problem(f"{player.name}: knocked but is not marked as the one who went out")
    if round_.winner is None and not round_.pool_exhausted:
        sheet.problem("no one went out and the stock is not marked exhausted")


def _hand_meld_stands(sheet: _Sheet, round_: RoundInput, winner: PlayerRound, what: str) -> bool:
    """Whether a declared Hand-Rommé or Hand-Rummy counts: no one else may have melded before
    ([rommee] "bevor irgendein anderer Spieler Karten gemeldet hat", [american-rummy] "In
    diesem Falle dürfen vorher keine Figuren herausgelegt worden sein").  Laying off on
    another player's meld shows that someone had.  A claim that does not stand is reported
    and doubles nothing."""
    others = [p.name for p in round_.players if p is not winner and p.has_melded]
    lay_offs = [c for c in winner.melds if c.own and len(c.own) != len(c.meld)]
    if others:
        sheet.problem(
            f"{winner.name}: {what} is declared, but {', '.join(others)} had melded before,"
            " so nothing is doubled"
        )
        return False
    if lay_offs:
        sheet.problem(
            f"{winner.name}: {what} is declared, but {winner.name} laid off on melds of others,"
            " so nothing is doubled"
        )
        return False
    return True


# --- 500 Rum ------------------------------------------------------------------
def score_rum500(round_: RoundInput) -> RoundResult:
    """[rum500] "Alle Spieler zählen den Gesamtwert der Karten, die sie verschmolzen haben,
    und subtrahieren den Wert der Karten, die sie in ihren Händen gelassen haben."

    Melded cards, lay-offs on others' melds included, are valued as they lie
    in their meld: an ace low in A-2-3 counts 1 (5 with ``values=5-10-15``),
    elsewhere 15; a joker always 15.  The same when the stock ran out.
    """
    variant = round_.variant
    sheet = _Sheet(round_)
    _report_flags(sheet, round_)
    check_material(
        sheet,
        variant,
        {p.name: (*p.melded_items(), *p.hand) for p in round_.players},
    )
    for player in round_.players:
        checked = _check_melds(sheet.problem, variant, player, lambda r: _total_melded(variant, r))
        melded = 0
        for contribution, reading, ambiguous in checked.accepted:
            slots = [reading.slots[i] for i in _own_slots(reading, contribution.own)]
            values = [variant.melded_score(reading, slot) for slot in slots]
            parts = " ".join(f"{slot.item}={v}" for slot, v in zip(slots, values, strict=True))
            read_as = f" (read as {reading})" if ambiguous else ""
            sheet.note(
                player.name,
                f"{_describe_contribution(contribution)}{read_as}: {parts} -> +{sum(values)}",
            )
            melded += sum(values)
        if player.out and player.holds_something:
            sheet.problem(f"{player.name} went out but still holds {player.rack_text()}")
        held = _held(variant, player, checked.rejected)
        penalty = held.value
        sheet.note(player.name, f"left in hand: {held.line}")
        score = melded - penalty
        sheet.note(player.name, f"round: {melded} - {penalty} = {score}")
        sheet.scores[player.name] = score
    return sheet.result()


# --- American Rummy -----------------------------------------------------------
def _open_sheet(round_: RoundInput) -> tuple[_Sheet, dict[str, _Held]]:
    """A score sheet with the round's flags and material checked, and what each player
    still holds: the hand plus the cards of any illegal meld (it would be taken back)."""
    variant = round_.variant
    sheet = _Sheet(round_)
    _report_flags(sheet, round_)
    check_material(
        sheet,
        variant,
        {p.name: (*p.melded_items(), *p.hand) for p in round_.players},
    )
    held: dict[str, _Held] = {}
    for player in round_.players:
        checked = _check_melds(sheet.problem, variant, player, variant.meld_value)
        held[player.name] = _held(variant, player, checked.rejected)
    return sheet, held


def score_american_rummy(round_: RoundInput) -> RoundResult:
    """[american-rummy] "Der Gewinner (Rummy-Rufer) erhält von allen Spielern die Summe der
    Punktebewertung jener Karten, die der Verlierer beim Ausmachen des Spieles noch in der
    Hand hat."

    Zero-sum: the winner gets +sum, each loser minus their own hand;
    ``extras["collected"]`` holds the winner's collected points (what the match
    counts towards its target).  "Bei Hand-Rummy werden alle Punkte doppelt
    gerechnet": the winner's ``all_at_once`` flag doubles everything.
    """
    sheet, held = _open_sheet(round_)
    winner = round_.winner
    if round_.pool_exhausted:
        sheet.problem(
            "American Rummy does not end when the stock runs out: the discards are turned over"
            " and play goes on; nothing is scored"
        )
    if winner is None:
        for player in round_.players:
            sheet.note(player.name, "no one went out: 0")
        return sheet.result(extras={"collected": {}})

    doubled = winner.all_at_once and _hand_meld_stands(sheet, round_, winner, "Hand-Rummy")
    factor = 2 if doubled else 1
    if held[winner.name].shown:
        sheet.problem(f"{winner.name} went out but still holds {held[winner.name].shown}")
    collected = 0
    for player in round_.players:
        if player is winner:
            continue
        value = held[player.name].value
        loss = factor * value
        sheet.scores[player.name] = -loss
        sheet.note(player.name, f"left in hand: {held[player.name].line}")
        sheet.note(
            player.name,
            f"pays {winner.name} {value} x2 (Hand-Rummy) = {loss}" if doubled
            else f"pays {winner.name} {value}",
        )
        sheet.note(winner.name, f"collects {loss} from {player.name}")
        collected += loss
    sheet.scores[winner.name] = collected
    sheet.note(
        winner.name,
        f"went out{' with Hand-Rummy (all points doubled)' if doubled else ''}:"
        f" collects {collected}",
    )
    return sheet.result(doubled=doubled, extras={"collected": {winner.name: collected}})


# --- Rommé and Räuber-Rommé ---------------------------------------------------
def score_rommee(round_: RoundInput) -> RoundResult:
    """[rommee] "Alle übrigen Spieler erhalten so viele Schlechtpunkte, wie sie noch an Augen in
    der Hand halten."  Hand-Rommé ("alle seine Karten auf einmal auslegen, bevor irgendein
    anderer Spieler Karten gemeldet hat", the winner's ``all_at_once``): "Die Schlechtpunkte
    der übrigen Spieler werden in diesem Spiel doppelt gezählt."

    The winner scores 0.  When the stock ran out (not in the text) everyone
    loses their hand's value, undoubled.
    """
    sheet, held = _open_sheet(round_)
    winner = round_.winner
    doubled = (
        winner is not None
        and winner.all_at_once
        and _hand_meld_stands(sheet, round_, winner, "Hand-Rommé")
    )
    factor = 2 if doubled else 1
    for player in round_.players:
        if player is winner:
            if held[player.name].shown:
                sheet.problem(f"{player.name} went out but still holds {held[player.name].shown}")
            sheet.note(player.name, f"went out{' with Hand-Rommé' if doubled else ''}: 0")
            continue
        value = held[player.name].value
        penalty = factor * value
        sheet.scores[player.name] = -penalty
        sheet.note(player.name, f"left in hand: {held[player.name].line}")
        if doubled:
            sheet.note(player.name, f"Hand-Rommé doubles: {value} x2 = {penalty} penalty points")
        else:
            sheet.note(player.name, f"{penalty} penalty points")
    return sheet.result(doubled=doubled)


# --- Wiener Rummy -------------------------------------------------------------
@dataclass(frozen=True)
class WienerHand:
    """A Wiener hand laid out for counting: its melds and its deadwood ("schlechte Karten")."""

    melds: tuple[tuple[Item, ...], ...]
    deadwood: tuple[Item, ...]
    deadwood_value: int
    computed: bool
    """The melds were found by the scorer: the player gave none, or his leftovers fit into
    melds."""
    counted: int | None = None
    """The deadwood's value as the player counted it (``PlayerRound.hand_points``), part
    of ``deadwood_value``; ``deadwood`` then holds only the cards of rejected melds."""

    @property
    def shown(self) -> str:
        """The deadwood for a problem: its cards, or the count given."""
        cards = format_items(self.deadwood)
        if self.counted is None:
            return cards
        return " ".join(part for part in (f"counted {self.counted}", cards) if part)


def wiener_hand(
    variant: Variant, player: PlayerRound, problem: Callable[[str], None] | None = None
) -> WienerHand:
    """Lay out one Wiener hand and count its deadwood.

    With melds given, they are used as the player laid them (each must be a
    legal meld of the player's own cards, [wiener] "Ein Anlegen an Figuren
    anderer Spieler ist nicht gestattet"); the deadwood is the rest of the
    hand.  ``hand`` may hold all ten cards (melded ones included) or only the
    rest: if every melded card is in ``hand`` they are taken out of it,
    otherwise ``hand`` is the rest.  Bad cards are only "derjenigen Karten, die
    nicht in Figuren untergebracht werden können": without melds, or where the
    rest still fits into melds (a leftover run, a joker that joins the player's
    own set), the split of all his cards that leaves the least deadwood counts
    (looked for in at most WIENER_SEARCH_LIMIT cards).  A deadwood given as
    counted (``hand_points``) is taken as it is, plus the cards of melds that
    are not accepted: without the cards there is no better laying-out to look
    for.  ``problem`` receives what is wrong.
    """
    report = problem if problem is not None else (lambda line: None)

    def cost(item: Item) -> int:
        return _card_value(variant, item)

    if player.hand_points is not None:
        checked = _check_melds(report, variant, player, variant.meld_value, lay_offs=False)
        melds = tuple(contribution.meld for contribution, _, _ in checked.accepted)
        value = player.hand_points + sum(map(cost, checked.rejected))
        return WienerHand(
            melds, checked.rejected, value, computed=False, counted=player.hand_points
        )
    cards = len(_wiener_cards(player))
    searched = cards <= WIENER_SEARCH_LIMIT
    if not searched:
        report(
            f"{player.name}: {cards} cards are too many to look for the best melds in"
            f" (at most {WIENER_SEARCH_LIMIT}); counted as laid out"
        )
    elif not player.has_melded:
        readings, leftover = best_split(player.hand, variant, cost)
        melds = tuple(reading.resolved_items() for reading in readings)
        return WienerHand(melds, leftover, sum(map(cost, leftover)), computed=True)
    checked = _check_melds(report, variant, player, variant.meld_value, lay_offs=False)
    melded = [item for c in player.melds for item in c.own]
    rest = _without(player.hand, melded) if _contains(player.hand, melded) else player.hand
    deadwood = (*rest, *checked.rejected)
    melds = tuple(contribution.meld for contribution, _, _ in checked.accepted)
    given = WienerHand(melds, deadwood, sum(map(cost, deadwood)), computed=False)
    if not deadwood or not searched:
        return given
    # Bad cards are only those "die nicht in Figuren untergebracht werden können": where the
    # leftovers fit into melds (among themselves, or joining the player's own), the hand
    # laid out best counts.
    readings, leftover = best_split(_wiener_cards(player), variant, cost)
    least = sum(map(cost, leftover))
    if least >= given.deadwood_value:
        return given
    best_melds = tuple(reading.resolved_items() for reading in readings)
    return WienerHand(best_melds, leftover, least, computed=True)


def _wiener_cards(player: PlayerRound) -> tuple[Item, ...]:
    """All the cards a Wiener player holds, each once."""
    melded = player.melded_items()
    if _contains(player.hand, melded):
        return player.hand
    return (*melded, *player.hand)


def score_wiener(round_: RoundInput) -> RoundResult:
    """[wiener] "Sodann legen alle übrigen Spieler ihre Figuren aus und zählen ... die
    Augensumme ihrer schlechten Karten": every player's score is minus their deadwood.

    The Rommé caller (out, not knocked) must have no deadwood; a knocker at
    most ``knock_limit`` ("fünf oder weniger Augen").  Klopfgeld: "erhält der
    Klopfer bzw. Rommé-Rufer von allen übrigen ... einen Chip" ->
    ``extras["chips"]`` (+n-1 for the winner, -1 for each other player; all 0
    when no one went out).  Elimination at 101 and buying back are the
    match's business.
    """
    variant = round_.variant
    sheet = _Sheet(round_)
    _report_flags(sheet, round_)
    cards = {p.name: _wiener_cards(p) for p in round_.players}
    check_material(sheet, variant, cards)
    for player in round_.players:
        if player.hand_points is None and len(cards[player.name]) != WIENER_HAND_SIZE:
            sheet.problem(
                f"{player.name} shows {len(cards[player.name])} cards, but a Wiener hand is counted"
                f" with {WIENER_HAND_SIZE}"
            )
    winner = round_.winner
    knock_limit = variant.knock_limit or 0
    for player in round_.players:
        hand = wiener_hand(variant, player, sheet.problem)
        how = "best melds" if hand.computed else "melds"
        melds = " | ".join(format_items(meld) for meld in hand.melds) or "none"
        sheet.note(player.name, f"{how}: {melds}")
        if hand.counted is None:
            _, line = _priced(variant, hand.deadwood)
        else:
            _, line = _counted(variant, hand.counted, hand.deadwood)
        sheet.note(player.name, f"deadwood: {line}")
        if player is winner and not player.knocked and hand.deadwood_value:
            sheet.problem(
                f"{player.name} called Rommé but has deadwood {hand.shown}"
                f" ({hand.deadwood_value})"
            )
        if player is winner and player.knocked and hand.deadwood_value > knock_limit:
            sheet.problem(
                f"{player.name} knocked with {hand.deadwood_value} in deadwood"
                f" ({hand.shown}), but may knock only with {knock_limit} or less"
            )
        sheet.scores[player.name] = -hand.deadwood_value
        sheet.note(player.name, f"{hand.deadwood_value} penalty points")
    chips = {player.name: 0 for player in round_.players}
    if winner is not None:
        for player in round_.players:
            if player is not winner:
                chips[player.name] = -1
                chips[winner.name] += 1
        word = "knocked" if winner.knocked else "called Rommé"
        sheet.note(
            winner.name, f"{word}: one chip from each other player, +{chips[winner.name]}"
        )
        for player in round_.players:
            if player is not winner:
                sheet.note(player.name, f"pays {winner.name} one chip")
    return sheet.result(extras={"chips": chips})
