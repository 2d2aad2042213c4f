"""Round scoring for the tile games: Sabra and American Rummikub, and Remi.

``SCORERS`` maps a variant id to its scorer; :func:`tabletop.engine.rounds.score_round`
dispatches through it.  International Rummikub is scored in
:mod:`tabletop.engine.international`, imported only when such a round is scored.

Rule texts are quoted by short tags, as in :mod:`tabletop.engine.variants`:
``[sabra]``, ``[american]`` = rules/rummikub-sabra-american-international.de.txt,
``[remi]`` = rules/remi-romanian-tile-rummy.de.txt.

Sabra and American Rummikub are zero-sum: the losers lose their rack value
and the winner gains it all.  Remi scores what each player melded, less what
is left on the rack, with bonuses for the winner.

Things that break the rules but still leave a round that can be scored (an
invalid meld, a winner still holding tiles) are reported in
``RoundResult.problems``; only rounds that cannot be scored at all raise
:class:`tabletop.engine.rounds.RoundError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tabletop.engine.base import (
    MeldContribution,
    PlayerRound,
    RoundInput,
    RoundResult,
    Variant,
    check_round,
)
from tabletop.engine.items import Color, Item, Joker, Tile, format_items
from tabletop.engine.melds import MeldKind, Reading, Slot

__all__ = [
    "MeldValue",
    "score_remi",
    "score_rummikub",
    "value_contribution",
]

REMI_WIN_BONUS = 100  # [remi] "Der Gewinner bekommt 100 Punkte"
REMI_ALL_AT_ONCE_BONUS = 100  # [remi] "Zusatzprämie von 100 Punkten"
REMI_TRUMP_BONUS = 25  # [remi] "erhält er 25 Extrapunkte"
REMI_UNMELDED_FIXED = 200  # [remi] "verliert 200 Punkte"
REMI_UNMELDED_BASE = 100  # [remi] Varianten: "100 Punkte und den Punktwert der Steine"
REMI_ALL_AT_ONCE_TILES = 14  # [remi] "alle 14 Steine auf einmal"


def _signed(points: int) -> str:
    return f"+{points}" if points > 0 else str(points)


def _rack_line(player: PlayerRound, total: int) -> str:
    return f"rack {player.rack_text()}: {_signed(-total)}"


def _foreign_items(variant: Variant, player: PlayerRound) -> list[str]:
    """Problems for cards among a tile game's items (a misread, most likely)."""
    problems = []
    for item in (*player.hand, *player.melded_items()):
        if item.family is not None and item.family is not variant.family:
            problems.append(f"{player.name}: {item} is not one of this game's tiles")
    return problems


def _winner_hand_problem(player: PlayerRound) -> list[str]:
    if player.holds_something:
        return [
            f"{player.name} went out but still holds {player.rack_text()}"
            " (the rack is not counted)"
        ]
    return []


def _missing_end_problem(round_: RoundInput) -> list[str]:
    if round_.winner is None and not round_.pool_exhausted:
        return ["no one went out and the pool is not marked exhausted; scored as an exhausted pool"]
    return []


# --- Sabra and American Rummikub ----------------------------------------------
def score_rummikub(round_: RoundInput) -> RoundResult:
    """Score a round of Sabra or American Rummikub (zero-sum).

    [sabra] "Der Gesamtwert ihrer noch übrigen Spielsteine wird ihnen als Minus
    angerechnet und der Gewinner erhält die Gesamtsumme aller Punkte der
    Verlierer als Plus gutgeschrieben."  Rack values come from
    ``variant.hand_value`` (face value, 1 counts 1, a joker 30 or 25 by the
    ``joker_penalty`` option), or are the value the players counted
    (``PlayerRound.hand_points``).

    Pool exhausted with no one out [sabra], and [american] by the text's own
    suggestion: the lowest rack wins, every other player loses the difference
    to it and the winner gains the sum of the differences.

    Ties for the lowest rack are not covered by the text.  Here the tied
    players share the gain equally; where it does not divide, the leftover
    points go to the tied player earliest in seating order (the order of
    ``round_.players``), so the round still sums to zero.  With a tie
    ``RoundResult.winner`` is None and ``extras["winners"]`` names the tied
    players.

    Melds are not scored in these games and not checked here.
    """
    check_round(round_)
    variant = round_.variant
    problems: list[str] = []
    for player in round_.players:
        problems.extend(_foreign_items(variant, player))
    winner = round_.winner
    if winner is not None:
        problems.extend(_winner_hand_problem(winner))
        return _rummikub_went_out(round_, winner, problems)
    problems.extend(_missing_end_problem(round_))
    return _rummikub_pool_exhausted(round_, problems)


def _rummikub_went_out(round_: RoundInput, winner: PlayerRound, problems: list[str]) -> RoundResult:
    variant = round_.variant
    scores: dict[str, int] = {}
    details: dict[str, list[str]] = {}
    gained = 0
    winner_lines = ["went out"]
    for player in round_.players:
        if player is winner:
            continue
        rack = player.rack_value(variant)
        scores[player.name] = -rack
        details[player.name] = (
            [_rack_line(player, rack)] if player.holds_something else ["rack empty: 0"]
        )
        winner_lines.append(f"from {player.name}: {_signed(rack)}")
        gained += rack
    scores[winner.name] = gained
    details[winner.name] = winner_lines
    ordered = {player.name: scores[player.name] for player in round_.players}
    return RoundResult(ordered, winner.name, details, tuple(problems))


def _rummikub_pool_exhausted(round_: RoundInput, problems: list[str]) -> RoundResult:
    variant = round_.variant
    racks = {player.name: player.rack_value(variant) for player in round_.players}
    lowest = min(racks.values())
    tied = [player.name for player in round_.players if racks[player.name] == lowest]
    scores: dict[str, int] = {}
    details: dict[str, list[str]] = {}
    differences: list[tuple[str, int]] = []
    for player in round_.players:
        rack = racks[player.name]
        hand = player.rack_text()
        if player.name in tied:
            details[player.name] = [f"rack {hand}: {rack}, the lowest"]
            continue
        difference = rack - lowest
        scores[player.name] = -difference
        differences.append((player.name, difference))
        details[player.name] = [
            f"rack {hand}: {rack}, {difference} over the lowest {lowest}: {_signed(-difference)}"
        ]
    gain = sum(difference for _, difference in differences)
    share, leftover = divmod(gain, len(tied))
    for index, name in enumerate(tied):
        if len(tied) == 1:
            details[name].extend(f"from {loser}: {_signed(d)}" for loser, d in differences)
            scores[name] = gain
            continue
        scores[name] = share
        details[name].append(f"share of {gain} between {', '.join(tied)}: {_signed(share)}")
        if index == 0 and leftover:
            # Not in the text: the leftover goes to the tied player earliest in seating order.
            scores[name] += leftover
            details[name].append(f"leftover of the share, earliest in seating: +{leftover}")
    ordered = {player.name: scores[player.name] for player in round_.players}
    winner = tied[0] if len(tied) == 1 else None
    extras = {"winners": tied, "lowest_rack": lowest}
    return RoundResult(ordered, winner, details, tuple(problems), extras=extras)


# --- valuing a meld contribution (Remi) -----------------------------------------
@dataclass(frozen=True)
class MeldValue:
    """What one player's part of one meld scores, and how."""

    points: int
    line: str
    """A readable line for ``RoundResult.details`` (``melded R12 R13 R1: +30``)."""
    problems: tuple[str, ...] = ()


def _assign_own(reading: Reading, own: Sequence[Item]) -> list[tuple[Item, Slot, Item]] | None:
    """Match each own item to a distinct slot of the reading, or None if impossible.

    Returns (own item, slot, resolved item) triples in the order of ``own``.
    Natural items match the same tile; a declared joker (``JK=R5``) matches a
    joker slot standing for that tile; a bare ``JK`` the first joker slot still
    free, in table order.
    """
    resolved = reading.resolved_items()
    free = list(range(len(reading.slots)))
    chosen: dict[int, int] = {}
    # Declared jokers and naturals first, so a bare JK cannot take their slot.
    order = sorted(range(len(own)), key=lambda i: own[i] == Joker())
    for own_index in order:
        item = own[own_index]
        for slot_index in free:
            slot, meaning = reading.slots[slot_index], resolved[slot_index]
            if item.is_joker:
                if not slot.is_joker:
                    continue
                assert isinstance(item, Joker) and isinstance(meaning, Joker)
                if item.stands_for is not None and item.stands_for != meaning.stands_for:
                    continue
            elif slot.item != item:
                continue
            chosen[own_index] = slot_index
            free.remove(slot_index)
            break
        else:
            return None
    return [(own[i], reading.slots[chosen[i]], resolved[chosen[i]]) for i in range(len(own))]


def _rank_slot(item: Item) -> tuple[Reading, Slot] | None:
    """A one-item low run holding ``item``: values an item of an invalid meld by its rank.

    None for a bare joker, whose rank is unknown outside a meld.
    """
    target = item.stands_for if isinstance(item, Joker) else item
    if target is None:
        return None
    slot = Slot(item, target.rank, target.rank, target.suit_index)
    return Reading(MeldKind.RUN, (slot,), target.family), slot


def _item_points(variant: Variant, reading: Reading, slot: Slot, taken: bool) -> int:
    if slot.is_joker and taken:
        # [remi] "der Spieler, der ihn später genommen hat, bekommt nur die Punkte für den
        # Stein ..., die der Joly jetzt repräsentiert"
        return variant.slot_value(reading, slot)
    return variant.melded_score(reading, slot)


def value_contribution(variant: Variant, contribution: MeldContribution) -> MeldValue:
    """Score one player's part of one meld with the variant's melded values.

    The whole meld is analysed, so each own item is valued in its context
    (a lone 1 laid on R12 R13 counts 10 in Remi).  Where the meld reads in
    several ways, the readings that hold the own items are kept and the one
    worth most to this player counts (the player declares it).  A joker
    scores ``melded_score`` (50 in Remi) unless it is one of the
    ``taken_jokers``, which score as the tile they stand for; with several
    jokers in ``own``, the first ``taken_jokers`` of them (in the order of
    ``own``) are the taken ones.  An invalid meld, or own items not in it,
    is a problem: the items then count by rank alone (a 1 as a low 1, a
    taken joker as the tile it is declared to be, else 0).
    """
    meld, own = contribution.meld, contribution.own
    problems: list[str] = []
    joker_positions = [i for i, item in enumerate(own) if item.is_joker]
    taken_count = contribution.taken_jokers
    if taken_count > len(joker_positions):
        problems.append(
            f"{format_items(own)}: {taken_count} taken jokers but only"
            f" {len(joker_positions)} jokers laid"
        )
        taken_count = len(joker_positions)
    taken = set(joker_positions[:taken_count])

    analysis = variant.analyse(meld)
    best: tuple[int, list[str]] | None = None
    for reading in analysis.readings:
        assignment = _assign_own(reading, own)
        if assignment is None:
            continue
        points = 0
        notes = []
        for index, (_item, slot, meaning) in enumerate(assignment):
            points += _item_points(variant, reading, slot, index in taken)
            if index in taken:
                assert isinstance(meaning, Joker)
                notes.append(f"taken joker as {meaning.stands_for}")
        if best is None or points > best[0]:
            best = (points, notes)

    if best is None:
        if not analysis.valid:
            problems.append(f"{format_items(meld)}: {analysis.reason}")
        else:
            problems.append(f"{format_items(own)} do not all lie in {format_items(meld)}")
        points = 0
        notes = []
        for index, item in enumerate(own):
            ranked = _rank_slot(item)
            if item.is_joker and index not in taken:
                # A first-melded joker's value needs no context (Remi: always 50);
                # a bare one is placed as a 5 only to have a slot to ask about.
                ranked = ranked or _rank_slot(Joker(Tile(Color.K, 5)))
                assert ranked is not None
                points += variant.melded_score(*ranked)
            elif ranked is None:
                notes.append("taken joker of unknown meaning: 0")
            else:
                points += variant.slot_value(*ranked)
        notes.append("valued by rank")
        best = (points, notes)

    points, notes = best
    where = "" if tuple(own) == tuple(meld) else f" on {format_items(meld)}"
    extra = f" ({'; '.join(notes)})" if notes else ""
    line = f"melded {format_items(own)}{where}{extra}: {_signed(points)}"
    return MeldValue(points, line, tuple(problems))


# --- Remi -----------------------------------------------------------------------
def score_remi(round_: RoundInput) -> RoundResult:
    """Score a round of Remi (Romanian tile rummy) [remi, Die Wertung].

    - The winner gets 100 plus the value of every tile they melded; every
      other player the value of their melded tiles minus their rack.
      Values as in the initial-meld table ("2 bis 9 ... 5 Punkte", 10-13 10,
      a 1 5 in 1-2-3, 10 in 12-13-1, 25 in a set of ones); a melded joker +50
      for the player who first melded it, -25 on the rack, and a joker taken
      by exchange counts for the taker as the tile it now stands for
      (``MeldContribution.taken_jokers``).  Own parts of other players'
      melds count for the player who laid them (see :func:`value_contribution`).
      A rack given as counted points (``PlayerRound.hand_points``) counts that
      value; the melded tiles still come from the melds.
    - A player who never melded loses 200, the rack does not matter; option
      ``unmelded_penalty="rack"``: 100 plus the rack.  This applies to a
      round without a winner as well: the text's no-winner paragraph restates
      the usual scoring minus the winner's 100, and the 200 is as much a part
      of the usual scoring as the joker's +50 / -25.
    - Going out with all 14 tiles at once, not having melded before
      (``PlayerRound.all_at_once``): +100 more.
    - The player who declared the tile matching the face-up trump: +25.
    - Variant "indem man einen Joly ablegt und vorher alle seine Steine
      gemeldet hat" (option ``joker_out_doubles``, on by default): the
      winner's round score, bonuses included, is doubled and
      ``RoundResult.doubled`` is set.
    - Pool exhausted, no winner: everybody scores melded minus rack, no 100.

    A winner still holding tiles is a problem; their rack is not counted.
    """
    check_round(round_)
    variant = round_.variant
    winner = round_.winner
    problems: list[str] = []
    problems.extend(_missing_end_problem(round_))
    declared = [player.name for player in round_.players if player.trump_declared]
    if len(declared) > 1:
        problems.append(
            f"{' and '.join(declared)} all declared the trump tile; only one copy is left to hold"
        )
    scores: dict[str, int] = {}
    details: dict[str, list[str]] = {}
    doubled = False
    for player in round_.players:
        problems.extend(_foreign_items(variant, player))
        lines: list[str] = []
        total = 0
        is_winner = player is winner
        if player.all_at_once and not is_winner:
            problems.append(f"{player.name}: all_at_once is only scored for the winner")
        if is_winner:
            problems.extend(_winner_hand_problem(player))
            total += REMI_WIN_BONUS
            lines.append(f"won: +{REMI_WIN_BONUS}")
            if player.all_at_once:
                melded = len(player.melded_items())
                if melded != REMI_ALL_AT_ONCE_TILES:
                    problems.append(
                        f"{player.name} went out all at once with {melded} tiles,"
                        f" not {REMI_ALL_AT_ONCE_TILES}"
                    )
                total += REMI_ALL_AT_ONCE_BONUS
                lines.append(f"all at once, not melded before: +{REMI_ALL_AT_ONCE_BONUS}")
            if not player.has_melded:
                problems.append(f"{player.name} went out without melding anything")
        for contribution in player.melds:
            if not contribution.own:
                continue
            value = value_contribution(variant, contribution)
            total += value.points
            lines.append(value.line)
            problems.extend(f"{player.name}: {p}" for p in value.problems)
        if not is_winner:
            rack = player.rack_value(variant)
            if not player.has_melded:
                if variant.scoring_rules.unmelded_penalty == "rack":
                    total -= REMI_UNMELDED_BASE + rack
                    lines.append(f"never melded: -{REMI_UNMELDED_BASE}")
                    if player.holds_something:
                        lines.append(_rack_line(player, rack))
                else:
                    total -= REMI_UNMELDED_FIXED
                    held = player.holds_something
                    hand = f" (rack {player.rack_text()} not counted)" if held else ""
                    lines.append(f"never melded: -{REMI_UNMELDED_FIXED}{hand}")
            elif player.holds_something:
                total -= rack
                lines.append(_rack_line(player, rack))
        if player.trump_declared:
            total += REMI_TRUMP_BONUS
            lines.append(f"declared the trump tile: +{REMI_TRUMP_BONUS}")
        if (
            is_winner
            and player.last_discard is not None
            and player.last_discard.is_joker
            and variant.scoring_rules.joker_out_doubles
        ):
            doubled = True
            lines.append(
                f"went out discarding a joker, doubled: 2 x {total} = {_signed(2 * total)}"
            )
            total *= 2
        scores[player.name] = total
        details[player.name] = lines
    return RoundResult(
        scores,
        None if winner is None else winner.name,
        details,
        tuple(problems),
        doubled=doubled,
    )
