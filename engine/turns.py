"""Checking one player's turn: the table before and after it, and what he laid.

:func:`check_turn` compares the table before and after the turn with the
items laid from the hand and reports *every* rule broken, so a panel can show
all of them at once.  The table is judged by its end state only: what the
player did in between cannot be seen, so wherever the end state can be
explained by a legal sequence of moves (identical items are interchangeable,
jokers look alike, an ambiguous meld may be read any legal way) the turn is
accepted.

**Tables that may be rearranged.**  Sabra Rummikub and Räuber-Rommé let a
player take the melds on the table apart and build new ones, as long as at the
end of the turn

* every item that lay on the table still lies there, together with at least
  one item from the player's rack ("mindestens ein Spielstein von seinem Blatt
  hinzugefügt"),
* every meld is legal ("alle Zusammenstellungen auf dem Tisch müssen
  regelgerechte Sätze und Folgen sein"),
* a player who had not opened laid his initial meld from the hand alone
  ("ausschließlich aus dem Blatt"), and
* the jokers were treated as the variant allows.

Joker rules, [sabra] = rules/rummikub-sabra-american-international.de.txt:

* Official Sabra (``dutch=False``): "An eine Meldung, die einen Joker enthält,
  können weitere Spielsteine angelegt werden, aber es dürfen weder Spielsteine
  entfernt werden, noch darf die Zusammenstellung neu geordnet werden".  A
  joker leaves its meld only when the player lays "den Spielstein ..., der für
  den auf dem Tisch liegenden Joker steht" in its place; the freed joker must
  be played again in the same turn, where the option ``freed_joker`` says.
* Dutch Sabra (``dutch=True``): melds with jokers may be split, "vorausgesetzt,
  dass der Joker immer für denselben Spielstein steht".
* Räuber-Rommé [raeuber]: "ausliegende Joker [können] dabei neue Verwendungen
  finden ..., ohne zunächst im eigentlichen Sinne ausgetauscht worden zu sein",
  so jokers are recombined as freely as any other card.

**Tables whose melds may only be extended** (Remi, American and International
Rummikub, Rommé, 500 Rum, American Rummy).  Every meld that lay on the table
must still lie there whole, in an after-meld of its own: a run extended at its
ends, a set completed ([remi] "Man kann seine eigenen oder die Meldungen
anderer Spieler verlängern, indem man Steine hinzufügt"; [rum500] "Die vierte
Karte desselben Ranges kann zu einer Dreiergruppe hinzugefügt werden, oder
zusätzliche aufeinanderfolgende Karten derselben Farbe ... an beiden Enden").
A joker keeps its place and what it stands for ([remi] "nicht möglich, den
Joly so umzulegen"; [rum500] "Dies kann anschließend nicht mehr geändert
werden") unless the variant lets the item it stands for take its place
([remi] rules 5-7, [rommee] "Austauschen eines Jokers", [american]); the freed
joker then goes at once into a new meld.  Every other after-meld is new and
made of laid items (and freed jokers, and under American Rummy's Borgen cards
borrowed from one's own long meld).  Before the initial meld nothing is laid
off and no joker taken; in Remi and American Rummikub no discard is taken
either.  Wiener Rummy ("Rommé ohne Auslegen") lays nothing on the table during
play at all.
"""


from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from tabletop.engine.base import Variant
from tabletop.engine.items import Card, Item, Joker, Tile, format_items
from tabletop.engine.turn_common import (
    TurnCheck,
    TurnError,
    TurnProblem,
    plural,
    table_conserved,
)
from tabletop.engine.turn_extended import ExtendJudge
from tabletop.engine.turn_rearranged import RearrangeJudge

__all__ = ["TurnCheck", "TurnError", "TurnProblem", "check_turn", "table_conserved"]


def check_turn(
    variant: Variant,
    before: Sequence[Sequence[Item]],
    after: Sequence[Sequence[Item]],
    laid: Sequence[Item],
    *,
    opened: bool,
    discard_taken: Item | Sequence[Item] | None = None,
    borrowing: bool = False,
    own_melds: Collection[int] = (),
    rack_size: int | None = None,
) -> TurnCheck:
    """Check one player's turn.

    ``before``: the melds on the table at the start of the turn; ``after``: at
    its end; ``laid``: every item the player put on the table from his hand,
    including items just taken from the discard pile and melded at once;
    ``opened``: the player made his initial meld in an earlier turn.

    The keywords matter only where the table is never rearranged:

    * ``discard_taken``: what the player took from the discard pile this turn,
      deepest first (a single item: the top discard); None or empty: he drew
      from the stock.
    * ``borrowing``: American Rummy's agreed "Borgen"; ``own_melds`` are the
      indices into ``before`` of the player's own melds, the only ones he may
      borrow from.
    * ``rack_size``: items on the rack at the start of the turn, before drawing
      (Remi: "Wenn man nur noch einen oder zwei Steine hat, darf man keinen
      Stein der Reihe der abgelegten Steine aufnehmen").

    Rearranging variants (``sabra``, ``raeuber``), where the rule text is
    silent, follow what a demanding table expects:

    * The initial meld is the set of after-melds made of laid items only,
      chosen to be worth the most.  With ``rearrange_on_opening_turn`` (Sabra's
      default) other laid items may also go onto the table in that turn;
      without it, and always in Räuber-Rommé, the melds on the table must stay
      as they were.  Hand-Rommé's waiver of the minimum is not applied: it
      depends on the whole hand going down, which this check does not see.
    * Under ``freed_joker="with_hand"`` the joker's group must also be new
      (the stricter readings include the Lemada one); the exchanged tile does
      not count as one of its hand tiles.
    * With ``set_joker_needs_both`` the set a joker leaves must be complete
      with four items (two jokers: three colours plus the joker that stays).

    Extend-only variants (``remi``, ``rummikub-american``,
    ``rummikub-international``, ``rommee``, ``rum500``, ``american-rummy``):
    every before-meld must lie whole in an after-meld of its own, extended at
    its ends (runs) or completed (sets), each joker where it stood and standing
    for what it stood for unless exchanged as the variant allows; every other
    after-meld is new and made of laid items (and freed jokers).  Where the
    texts are silent:

    * Laying nothing is a legal turn here (draw and discard); before the
      initial meld, laying off and exchanging wait for a later turn.
    * [american] "in einer 'neuen' eigenen Kombination" is read strictly: the
      freed joker goes into a new meld with two or more items from the rack,
      as [remi] rule 5 says outright.  [rommee] asks only for a new meld.
    * A set's joker is freed by any one missing colour in American and
      International Rummikub (as in Sabra) and in Rommé, but only by completing
      the set to four in Remi (rules 6 and 7) and in Rommé under the option
      ``set_joker_exchange_needs_four`` (DSkV).
    * [international] Foot: a player who has not opened and lays 14 tiles at
      once may lay off on other melds; the 14 tiles must count 50.
    * Closed International hands that are not melds (Mosaik, seven pairs) are
      judged by :mod:`tabletop.engine.international`, not here.
    * Wiener Rummy lays nothing on the table during play: any change is a
      problem (``no_laying_out``).

    An invalid turn is undone: ``restored_table`` is the table before it.
    Only Sabra names a penalty draw.  A run whose joker lies out of place is read as
    the run it can form and never makes a turn invalid; where the variant's text makes
    the joker's place matter, ``hints`` asks to move it.
    """
    before_melds = tuple(tuple(meld) for meld in before)
    after_melds = tuple(tuple(meld) for meld in after)
    taken: tuple[Item, ...]
    if discard_taken is None:
        taken = ()
    elif isinstance(discard_taken, (Tile, Card, Joker)):
        taken = (discard_taken,)
    else:
        taken = tuple(discard_taken)
    own = frozenset(own_melds)
    for index in own:
        if not 0 <= index < len(before_melds):
            raise TurnError(
                f"own_melds names meld {index!r}, but the table before the turn holds"
                f" {plural(len(before_melds), 'meld')}"
            )
    rules = variant.table_rules
    if borrowing and not rules.borrowing:
        raise TurnError(f"borrowing (Borgen) is not a rule of {variant.id!r}")
    if taken and not rules.discard_pile:
        raise TurnError(
            f"{variant.id!r} is played without a discard pile, so nothing can be taken"
            f" from it ({format_items(taken)!r})"
        )
    hints = _joker_place_hints(variant, before_melds, after_melds)
    if rules.rearrange:
        check = RearrangeJudge(variant, before_melds, after_melds, tuple(laid), opened).check()
        problems = _rearranged_discard_problems(variant, taken, tuple(laid))
        if problems:
            check = replace(
                check,
                valid=False,
                problems=(*check.problems, *problems),
                penalty_draw=rules.invalid_turn_penalty,
            )
        return replace(check, hints=hints)
    check = ExtendJudge(
        variant, before_melds, after_melds, tuple(laid), opened, taken, borrowing, own, rack_size
    ).check()
    return replace(check, hints=hints)


def _joker_place_hints(
    variant: Variant, before: tuple[tuple[Item, ...], ...], after: tuple[tuple[Item, ...], ...]
) -> tuple[TurnProblem, ...]:
    """A "move the joker" hint for each meld of this turn whose joker lies out of place;
    a meld that lay so before the turn was advised then and is not named again."""
    already = {tuple(map(str, meld)) for meld in before}
    hints = []
    for meld in after:
        if tuple(map(str, meld)) in already:
            continue
        hint = variant.analyse(meld).hint
        if hint is not None:
            hints.append(TurnProblem("joker_out_of_place", hint, meld))
    return tuple(hints)


def _rearranged_discard_problems(
    variant: Variant, taken: tuple[Item, ...], laid: tuple[Item, ...]
) -> list[TurnProblem]:
    """Räuber-Rommé keeps Rommé's discard pile ("Ansonsten gelten alle Regeln des Spiels mit
    Auslegen"): only its top card may be taken, and under ``discard_must_meld`` it must
    be laid at once."""
    if not taken:
        return []
    problems = []
    if len(taken) > 1:
        problems.append(
            TurnProblem(
                "discard_below_top",
                f"{format_items(taken)}: only the top discard may be taken in {variant.name}",
                taken,
            )
        )
    top = taken[-1]
    if variant.table_rules.discard_must_meld and top not in laid:
        problems.append(
            TurnProblem(
                "discard_not_melded",
                f"{top} taken from the discard pile must be laid at once",
                (top,),
            )
        )
    return problems
