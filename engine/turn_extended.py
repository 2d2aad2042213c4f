"""Judging a turn on a table whose melds may only be extended (Remi, American and
International Rummikub, Rommé, 500 Rum, American Rummy; Wiener Rummy lays nothing).

See :func:`tabletop.engine.turns.check_turn` for the rules and the choices made where the
texts are silent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Item, Natural, format_items
from tabletop.engine.melds import MeldKind, Reading
from tabletop.engine.turn_common import (
    SEARCH_LIMIT,
    Bag,
    Meld,
    TurnCheck,
    TurnProblem,
    bare,
    count_jokers,
    expand,
    item_bag,
    meld_key,
    natural_bag,
    plural,
    table_difference,
)

# --- variants whose melds may only be extended ----------------------------------------
FOOT_TILES = 14
"""[international] Foot: "indem Sie 14 Spielsteine auf einmal auslegen"."""

FOOT_MINIMUM = 50
"""[international] "Ihre 14 Spielsteine müssen mindestens 50 Punkte ergeben"."""


@dataclass(frozen=True)
class _Hosting:
    """How one before-meld lies in the after-meld that holds it now."""

    meld: int
    host: int
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[Natural, ...], ...]
    """The laid tiles that freed each joker of the meld."""
    added: Bag
    """Items laid onto the meld (exchange tiles included)."""
    added_jokers: int
    """Jokers lying in the host beyond the meld's own."""
    borrowed: Bag
    """Items taken out of the meld under American Rummy's Borgen."""
    added_value: int
    """What the items laid onto the meld count (International Foot)."""


@dataclass(frozen=True)
class _Structure:
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[Natural, ...], ...]
    added_jokers: int
    added_value: int


_UNMATCHED_COST = 100
"""A before-meld with no host costs more than any host with problems."""


class ExtendJudge:
    """Checks a turn where the melds on the table may be extended but never rebuilt."""

    def __init__(
        self,
        variant: Variant,
        before: tuple[Meld, ...],
        after: tuple[Meld, ...],
        laid: Meld,
        opened: bool,
        discard_taken: tuple[Item, ...],
        borrowing: bool,
        own_melds: frozenset[int],
        rack_size: int | None,
    ) -> None:
        self.variant = variant
        self.rules = variant.table_rules
        self.before = before
        self.after = after
        self.laid = laid
        self.opened = opened or not self.rules.opening
        self.discard_taken = discard_taken
        self.borrowing = borrowing
        self.own_melds = own_melds
        self.rack_size = rack_size
        self.laid_bag = item_bag(laid)
        self.before_bags = [item_bag(meld) for meld in before]
        self.after_bags = [item_bag(meld) for meld in after]
        self.analyses_after = [variant.analyse(meld) for meld in after]
        self._readings: dict[Meld, tuple[Reading, ...]] = {}
        self._steps = 0

    def readings(self, meld: Meld) -> tuple[Reading, ...]:
        if meld not in self._readings:
            self._readings[meld] = self.variant.analyse(meld).readings
        return self._readings[meld]

    @property
    def foot(self) -> bool:
        # [international] Foot: "Einige Ihrer 14 Spielsteine werden als Ihre eigenen Sätze
        # und Folgen kombiniert; andere ... an Meldungen der anderen Spieler angelegt"
        return (
            self.rules.foot
            and not self.opened
            and len(self.laid) == FOOT_TILES
        )

    # -- the whole check -------------------------------------------------------------
    def check(self) -> TurnCheck:
        if not self.rules.lays_out:
            return self.finish(self.wiener_problems(), [], None, ())
        missing, extra = table_difference(self.before, self.after, self.laid)
        problems: list[TurnProblem] = []
        for meld, analysis in zip(self.after, self.analyses_after, strict=True):
            if not analysis.valid:
                problems.append(
                    TurnProblem(
                        "invalid_meld",
                        f"{format_items(meld) or '(empty meld)'} is not a legal meld:"
                        f" {analysis.reason}",
                        tuple(meld),
                    )
                )
        hostings, unmatched = self.match()
        for hosting in hostings:
            problems.extend(hosting.problems)
        problems.extend(self.unmatched_problems(unmatched, hostings))
        hosts = {h.host for h in hostings}
        new = [a for a in range(len(self.after)) if a not in hosts]
        initial_value: int | None = None
        if not self.opened:
            initial_value, opening_problems = self.opening(hostings, new)
            problems.extend(opening_problems)
        joker_problems, freed_gone = self.freed_jokers(hostings, new, missing[JOKER])
        problems.extend(joker_problems)
        problems.extend(self.borrowed_problems(hostings, new))
        problems.extend(self.discard_problems(hostings, new))
        missing[JOKER] -= min(missing[JOKER], freed_gone)
        exchanged = tuple(t for h in hostings for ex in h.exchanges for t in ex)
        return self.finish(problems, self.conservation_problems(+missing, extra),
                           initial_value, exchanged)

    def finish(
        self,
        problems: list[TurnProblem],
        conservation: list[TurnProblem],
        initial_value: int | None,
        exchanged: tuple[Natural, ...],
    ) -> TurnCheck:
        problems = conservation + problems
        return TurnCheck(
            valid=not problems,
            problems=tuple(problems),
            initial_value=initial_value,
            exchanged_jokers=exchanged,
            restored_table=self.before,
            # none of these texts names a penalty: the items go back where they were
            penalty_draw=0,
        )

    @staticmethod
    def conservation_problems(missing: Bag, extra: Bag) -> list[TurnProblem]:
        out: list[TurnProblem] = []
        if missing:
            out.append(
                TurnProblem(
                    "item_missing",
                    f"{format_items(expand(missing))} lay on the table or were laid but are not"
                    " on the table after the turn: melded items may not go back to the hand",
                    expand(missing),
                )
            )
        if extra:
            out.append(
                TurnProblem(
                    "item_from_nowhere",
                    f"{format_items(expand(extra))} are on the table after the turn but neither"
                    " lay there before nor were laid from the hand",
                    expand(extra),
                )
            )
        return out

    def wiener_problems(self) -> list[TurnProblem]:
        """[wiener] Rommé ohne Auslegen: nothing goes on the table during play; the
        hands are laid down only when the round ends (Rommé-Ruf or Klopfen), which
        round scoring judges, and "Ein Anlegen an Figuren anderer Spieler ist nicht
        gestattet"."""
        changed = Counter(meld_key(m) for m in self.before) != Counter(
            meld_key(m) for m in self.after
        )
        if not self.laid and not changed:
            return []
        items = tuple(self.laid) or tuple(i for m in self.after for i in m)
        return [
            TurnProblem(
                "no_laying_out",
                f"{format_items(items)}: in Wiener Rummy (\"Rommé ohne Auslegen\") nothing is"
                " laid on the table during play, the hand goes down only at Rommé or Klopfen",
                items,
            )
        ]

    # -- which after-meld holds which before-meld -------------------------------------
    def match(self) -> tuple[list[_Hosting], list[int]]:
        """Give every before-meld its own after-meld (no two share one), with the
        fewest problems; identical melds make this a small assignment search."""
        candidates: list[list[_Hosting]] = []
        for m in range(len(self.before)):
            options = [h for a in range(len(self.after)) if (h := self.hosting(m, a)) is not None]
            options.sort(key=lambda h: len(h.problems))
            candidates.append(options)
        order = sorted(range(len(self.before)), key=lambda m: len(candidates[m]))
        best: tuple[int, list[_Hosting], list[int]] | None = None

        def descend(i: int, used: set[int], chosen: list[_Hosting], unmatched: list[int],
                    cost: int) -> None:
            nonlocal best
            self._steps += 1
            if best is not None and (cost >= best[0] or self._steps > SEARCH_LIMIT):
                return
            if i == len(order):
                best = (cost, list(chosen), list(unmatched))
                return
            m = order[i]
            for hosting in candidates[m]:
                if hosting.host in used:
                    continue
                used.add(hosting.host)
                chosen.append(hosting)
                descend(i + 1, used, chosen, unmatched, cost + len(hosting.problems))
                chosen.pop()
                used.discard(hosting.host)
            unmatched.append(m)
            descend(i + 1, used, chosen, unmatched, cost + _UNMATCHED_COST)
            unmatched.pop()

        descend(0, set(), [], [], 0)
        assert best is not None
        return sorted(best[1], key=lambda h: h.meld), sorted(best[2])

    def unmatched_problems(
        self, unmatched: list[int], hostings: list[_Hosting]
    ) -> Iterator[TurnProblem]:
        host_of = {h.host: h.meld for h in hostings}
        for m in unmatched:
            meld = self.before[m]
            naturals = natural_bag(meld)
            joined = [
                a
                for a, bag in enumerate(self.after_bags)
                if a in host_of and naturals + natural_bag(self.before[host_of[a]]) <= bag
            ]
            if joined:
                other = self.before[host_of[joined[0]]]
                where = self.after[joined[0]]
                yield TurnProblem(
                    "melds_joined",
                    f"{format_items(meld)} and {format_items(other)} were joined into"
                    f" {format_items(where)}: melds on the table may only be extended, not"
                    " combined",
                    tuple(meld),
                )
                continue
            places = [
                format_items(self.after[a])
                for a, bag in enumerate(self.after_bags)
                if bag & naturals
            ]
            lies = "; its items now lie in " + ", ".join(places) if places else ""
            borrow = (
                " (Borgen takes cards only from one's own meld of more than three cards)"
                if self.borrowing
                else ""
            )
            yield TurnProblem(
                "meld_split",
                f"{format_items(meld)} was split or had items removed{lies}: melds on the"
                f" table may only be extended at their ends, never taken apart{borrow}",
                tuple(meld),
            )

    def hosting(self, m: int, a: int) -> _Hosting | None:
        """How before-meld ``m`` lies in after-meld ``a``; None if ``a`` cannot hold it
        (some of its naturals are not there and may not be borrowed)."""
        meld = self.before[m]
        naturals = natural_bag(meld)
        removed = naturals - self.after_bags[a]
        problems: list[TurnProblem] = []
        kept_meld = meld
        if removed:
            if not (self.borrowing and m in self.own_melds) or removed == naturals:
                return None
            remaining: list[Item] = []
            taken: Bag = Counter(removed)
            for item in meld:
                if taken[item]:
                    taken[item] -= 1
                else:
                    remaining.append(item)
            kept_meld = tuple(remaining)
            # [american-rummy] Borgen "nur dann erlaubt, wenn die Figur, von der die Karte
            # 'ausgeliehen' wird, aus mehr als drei Karten besteht"; what is left must
            # still be a meld
            if len(meld) <= 3 or not self.variant.analyse(kept_meld).valid:
                problems.append(
                    TurnProblem(
                        "borrowing_not_allowed",
                        f"{format_items(expand(removed))} cannot be borrowed from"
                        f" {format_items(meld)}: only from a meld of more than three cards"
                        " that stays a legal meld",
                        tuple(meld),
                    )
                )
        added = self.after_bags[a] - item_bag(kept_meld)
        structure = self.structure(kept_meld, a)
        problems.extend(structure.problems)
        return _Hosting(
            meld=m,
            host=a,
            problems=tuple(problems),
            exchanges=structure.exchanges,
            added=added,
            added_jokers=structure.added_jokers,
            borrowed=removed,
            added_value=structure.added_value,
        )

    def structure(self, meld: Meld, a: int) -> _Structure:
        """The best reading of ``meld`` inside after-meld ``a``: its items where they
        were, each joker standing for what it stood for, or exchanged."""
        host = self.after[a]
        jokers_before = count_jokers(meld)
        jokers_after = count_jokers(host)
        old_readings = self.readings(meld)
        new_readings = self.analyses_after[a].readings
        if not old_readings or not new_readings:
            # an illegal meld is reported as such and cannot say what its jokers stand
            # for, so nothing can have been exchanged in it: a joker gone is a joker taken
            problems = (
                (self.joker_removed_problem(meld, host),) if jokers_after < jokers_before else ()
            )
            return _Structure(problems, (), max(0, jokers_after - jokers_before), 0)
        best: _Structure | None = None
        for old in old_readings:
            for new in new_readings:
                outcome = self.reading_pair(meld, host, old, new)
                if outcome is not None and (
                    best is None or len(outcome.problems) < len(best.problems)
                ):
                    best = outcome
        if best is not None:
            return best
        return _Structure(
            (
                TurnProblem(
                    "joker_meaning_changed",
                    f"{format_items(meld)} cannot be read inside {format_items(host)} as it"
                    " lay: a meld may be extended but not rebuilt, and a joker keeps what it"
                    " stands for",
                    tuple(host),
                ),
            ),
            (),
            max(0, jokers_after - jokers_before),
            0,
        )

    def reading_pair(
        self, meld: Meld, host: Meld, old: Reading, new: Reading
    ) -> _Structure | None:
        """``old`` (the meld's reading) inside ``new`` (the host's); None if the two do
        not fit (a set became a run, another rank or suit, items moved)."""
        if old.kind is not new.kind:
            return None
        if old.kind is MeldKind.SET:
            if old.rank != new.rank:
                return None
            return self.set_pair(meld, host, old, new)
        if old.suit != new.suit:
            return None
        return self.run_pair(meld, host, old, new)

    def run_pair(self, meld: Meld, host: Meld, old: Reading, new: Reading) -> _Structure | None:
        position_of = {slot.item: slot.position for slot in new.slots if not slot.is_joker}
        if any(s.item not in position_of for s in old.slots if not s.is_joker):
            return None
        # the meld's items keep their places: one shift for all (an ace low before the
        # turn may be counted 13 higher where runs go round the corner)
        offsets = {position_of[s.item] - s.position for s in old.slots if not s.is_joker}
        if len(offsets) != 1:
            return None
        offset = offsets.pop()
        by_position = {slot.position: slot for slot in new.slots}
        old_positions = {slot.position + offset for slot in old.slots}
        joker_positions = {slot.position + offset for slot in old.slots if slot.is_joker}
        replaced: list[Natural] = []
        vacated: list[int] = []
        for p in sorted(joker_positions):
            slot = by_position.get(p)
            if slot is None:
                vacated.append(p)
            elif not slot.is_joker:
                replaced.append(slot.item)  # type: ignore[arg-type]
        added_positions = [
            slot.position
            for slot in new.slots
            if slot.is_joker and slot.position not in joker_positions
        ]
        problems: list[TurnProblem] = []
        exchanges: tuple[tuple[Natural, ...], ...] = ()
        moved = len(vacated)
        if self.rules.exchange:
            exchanges = tuple((tile,) for tile in replaced)
        else:
            moved += len(replaced)
        paired = min(moved, len(added_positions))
        if paired:
            # [remi] "nicht möglich, den Joly so umzulegen, dass er eine blaue 8 ersetzt";
            # [rum500] "er darf den Joker nicht in eine 5 [verwandeln]"
            problems.append(
                TurnProblem(
                    "joker_meaning_changed",
                    f"a joker of {format_items(meld)} was moved inside {format_items(host)}:"
                    " a joker keeps the place and item it stands for",
                    tuple(host),
                )
            )
        unpaired = moved - paired
        if unpaired:
            gone_replaced = (
                min(unpaired, len(replaced)) if not self.rules.exchange else 0
            )
            if gone_replaced:
                problems.append(self.no_exchange_problem(meld, host, tuple(replaced)))
            if unpaired - gone_replaced:
                problems.append(self.joker_removed_problem(meld, host))
        added_value = sum(
            self.variant.slot_value(new, slot)
            for slot in new.slots
            if slot.position not in old_positions or slot.item in replaced
        )
        return _Structure(tuple(problems), exchanges, len(added_positions) - paired, added_value)

    def set_pair(self, meld: Meld, host: Meld, old: Reading, new: Reading) -> _Structure:
        jokers_before = old.joker_count
        jokers_after = new.joker_count
        added_naturals = expand(natural_bag(host) - natural_bag(meld))
        per_slot = self.variant.slot_value(new, new.slots[0])
        added_value = per_slot * max(0, len(host) - len(meld) + (jokers_before - jokers_after))
        if jokers_after >= jokers_before:
            return _Structure((), (), jokers_after - jokers_before, added_value)
        freed = jokers_before - jokers_after
        if not self.rules.exchange:
            problem = (
                self.no_exchange_problem(meld, host, added_naturals)
                if added_naturals
                else self.joker_removed_problem(meld, host)
            )
            return _Structure((problem,), (), 0, added_value)
        if len(added_naturals) < freed:
            return _Structure((self.joker_removed_problem(meld, host),), (), 0, added_value)
        if self.rules.set_exchange_needs_four and new.natural_count < 4:
            # [remi] rule 7: "dann darf man diesen Stein an den Satz anlegen ..., aber man
            # darf den Joly nicht nehmen"; [rommee] DSkV: "erst dann ausgetauscht werden
            # darf, wenn der Satz mit vier Karten gleichen Ranges komplettiert wird"
            return _Structure(
                (
                    TurnProblem(
                        "joker_exchange_incomplete",
                        f"the joker of {format_items(meld)} may be taken only when the set is"
                        f" completed to four; {format_items(host)} is not",
                        tuple(host),
                    ),
                ),
                (),
                0,
                added_value,
            )
        tiles: list[tuple[Natural, ...]] = [(t,) for t in added_naturals[: freed - 1]]  # type: ignore[misc]
        tiles.append(tuple(added_naturals[freed - 1 :]))  # type: ignore[arg-type]
        return _Structure((), tuple(tiles), 0, added_value)

    def no_exchange_problem(
        self, meld: Meld, host: Meld, tiles: tuple[Item, ...]
    ) -> TurnProblem:
        # [rum500] "Ein Spieler, der einen Joker verschmilzt, muss klarstellen, welchen Rang
        # er darstellt. Dies kann anschließend nicht mehr geändert werden."
        return TurnProblem(
            "joker_exchange_not_allowed",
            f"{format_items(tiles)} took the place of the joker in {format_items(meld)}:"
            f" in {self.variant.name} a melded joker stays where it is",
            tuple(host),
        )

    @staticmethod
    def joker_removed_problem(meld: Meld, host: Meld) -> TurnProblem:
        return TurnProblem(
            "joker_split",
            f"a joker was taken out of {format_items(meld)} (now {format_items(host)}) without"
            " laying the item it stands for: melds may only be extended",
            tuple(meld),
        )

    # -- the initial meld -------------------------------------------------------------
    def opening(self, hostings: list[_Hosting], new: list[int]) -> tuple[int, list[TurnProblem]]:
        """The opening is the new melds, all laid from the hand; laying off and
        exchanging jokers wait for a later turn ([remi] "Diese Möglichkeiten hat man
        erst dann, wenn man nach seiner Anfangsmeldung wieder an der Reihe ist";
        [rommee] "erst nach Auslage der Erstmeldung"; [american] "Nachdem Sie Ihre
        Anfangskombination ... gelegt haben")."""
        problems: list[TurnProblem] = []
        foot = self.foot
        for hosting in hostings:
            meld = self.before[hosting.meld]
            host = self.after[hosting.host]
            if hosting.exchanges:
                tiles = tuple(t for ex in hosting.exchanges for t in ex)
                problems.append(
                    TurnProblem(
                        "exchange_before_opening",
                        f"{format_items(tiles)} exchanged a joker of {format_items(meld)}"
                        " before the initial meld was made: jokers may be taken only in a"
                        " later turn",
                        tiles,
                    )
                )
            spent: Bag = Counter(t for ex in hosting.exchanges for t in ex)
            laid_off = hosting.added - spent
            if laid_off and not foot:
                problems.append(
                    TurnProblem(
                        "laid_off_before_opening",
                        f"{format_items(expand(laid_off))} laid off on {format_items(meld)}"
                        f" (now {format_items(host)}) before the initial meld was made:"
                        " laying off is allowed only in a later turn",
                        expand(laid_off),
                    )
                )
        melds = [self.after[a] for a in new if self.analyses_after[a].valid]
        result = self.variant.check_initial_meld(melds)
        value = result.value
        if foot:
            value += sum(h.added_value for h in hostings)
            if value < FOOT_MINIMUM:
                problems.append(
                    TurnProblem(
                        "initial_too_low",
                        f"a Foot needs the 14 tiles ({format_items(self.laid)}) to count at"
                        f" least {FOOT_MINIMUM}, not {value}",
                        tuple(self.laid),
                    )
                )
            return value, problems
        if new and not result.meets:
            what = "; ".join(result.problems) or "the initial meld is too low"
            shown = ", ".join(format_items(m) for m in melds) or "no legal meld"
            problems.append(
                TurnProblem(
                    "initial_too_low",
                    f"{what} ({shown})",
                    tuple(item for a in new for item in self.after[a]),
                )
            )
        return value, problems

    # -- freed jokers -------------------------------------------------------------------
    def freed_jokers(
        self, hostings: list[_Hosting], new: list[int], missing_jokers: int
    ) -> tuple[list[TurnProblem], int]:
        """Where the jokers freed by exchange went.  Jokers look alike, so jokers laid
        from the hand are taken to be the ones added to old melds, and freed ones the
        ones in new melds, wherever that explains the table."""
        freed = sum(len(h.exchanges) for h in hostings)
        if not freed:
            return [], 0
        problems: list[TurnProblem] = []
        tiles = tuple(t for h in hostings for ex in h.exchanges for t in ex)
        gone = min(freed, missing_jokers)
        if gone:
            # [rommee] "darf nicht in das eigene Blatt aufgenommen werden"
            problems.append(
                TurnProblem(
                    "freed_joker_unused",
                    f"the joker freed by {format_items(tiles)} must be melded again at once;"
                    " it may not go to the hand",
                    (*tiles, JOKER),
                )
            )
        on_table = freed - gone
        added_to_old = sum(h.added_jokers for h in hostings)
        in_old = min(on_table, max(0, added_to_old - self.laid_bag[JOKER]))
        if in_old:
            same = [h for h in hostings if h.exchanges and h.added_jokers]
            host = self.after[(same or [h for h in hostings if h.added_jokers])[0].host]
            if same:
                problems.append(
                    TurnProblem(
                        "freed_joker_same_meld",
                        f"the joker freed by {format_items(tiles)} was put back into"
                        f" {format_items(host)}: it must go into a new meld",
                        tuple(host),
                    )
                )
            else:
                problems.append(
                    TurnProblem(
                        "freed_joker_not_new_group",
                        f"the joker freed by {format_items(tiles)} was added to"
                        f" {format_items(host)}, a meld that lay on the table: it must go"
                        " into a new meld (\"in einer neuen Meldung\")",
                        tuple(host),
                    )
                )
        in_new = on_table - in_old
        if in_new and self.rules.freed_with_hand_tiles:
            # [remi] "vorausgesetzt, man gebraucht ihn sofort mit zwei Steinen vom eigenen
            # Ständer, um einen neuen Satz oder eine neue Folge zu melden"
            capacity = sum(
                min(count_jokers(self.after[a]), max(0, len(self.after[a]) - 2)) for a in new
            )
            if capacity < in_new:
                shown = [self.after[a] for a in new if count_jokers(self.after[a])]
                items = tuple(i for m in shown for i in m) or (JOKER,)
                problems.append(
                    TurnProblem(
                        "freed_joker_without_hand_tiles",
                        f"each joker freed by {format_items(tiles)} must form a new meld with"
                        f" two or more tiles from the rack; {format_items(items)} does not",
                        items,
                    )
                )
        return problems, gone

    # -- Borgen (American Rummy) --------------------------------------------------------
    def borrowed_problems(self, hostings: list[_Hosting], new: list[int]) -> list[TurnProblem]:
        borrowed: Bag = sum((h.borrowed for h in hostings), Counter())
        if not borrowed:
            return []
        # [american-rummy] "zur Bildung neuer Kombinationen mit Karten aus seinem Blatt"
        in_new: Bag = Counter()
        for a in new:
            share = borrowed & self.after_bags[a]
            if share and self.after_bags[a] - share:
                in_new += share
        stray = borrowed - in_new
        if not stray:
            return []
        return [
            TurnProblem(
                "borrowed_not_in_new_meld",
                f"{format_items(expand(stray))} borrowed from a meld must form a new meld"
                " together with cards from the hand",
                expand(stray),
            )
        ]

    # -- the discard pile ---------------------------------------------------------------
    def discard_problems(self, hostings: list[_Hosting], new: list[int]) -> list[TurnProblem]:
        if not self.discard_taken:
            return []
        problems: list[TurnProblem] = []
        taken = self.discard_taken
        deepest = taken[0]
        new_bag: Bag = sum((self.after_bags[a] for a in new), Counter())
        laid_off: Bag = sum((h.added for h in hostings), Counter())
        in_new = new_bag[bare(deepest)] >= 1 and self.laid_bag[bare(deepest)] >= 1
        melded = in_new or (laid_off[bare(deepest)] >= 1 and self.laid_bag[bare(deepest)] >= 1)
        rules = self.rules
        short = rules.short_rack_takes_no_discard
        if self.rack_size is not None and self.rack_size <= short:
            problems.append(
                TurnProblem(
                    "discard_with_short_rack",
                    f"{format_items(taken)} taken from the discards with only"
                    f" {plural(self.rack_size, 'tile')} on the rack: such a player draws"
                    " from the wall",
                    taken,
                )
            )
        if not self.opened and rules.discard_before_opening != "allowed":
            if rules.discard_before_opening == "forbidden" or len(taken) > 1:
                why = rules.discard_before_opening_rule
                code = "discard_used_for_opening" if in_new else "discard_taken_before_opening"
                problems.append(
                    TurnProblem(
                        code,
                        f"{format_items(taken)} taken from the discards before the initial"
                        f" meld: until then a player draws from the stock"
                        + (f" ({why})" if why else ""),
                        taken,
                    )
                )
            elif not in_new:
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{format_items(taken)} taken from the discards to open must be used"
                        " at once in the initial meld",
                        taken,
                    )
                )
            return problems
        if len(taken) > 1:
            if rules.deeper_discard == "never":
                problems.append(
                    TurnProblem(
                        "discard_below_top",
                        f"{format_items(taken)}: only the top discard may be taken in"
                        f" {self.variant.name}",
                        taken,
                    )
                )
            elif rules.deeper_discard == "new_meld" and not in_new:
                # [remi] rule 4: "darf man diesen Stein aufnehmen und die Meldung machen"
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{deepest} was taken from deep in the discards and must complete a"
                        " new meld with tiles from the rack at once",
                        (deepest,),
                    )
                )
            elif rules.deeper_discard == "melded" and not melded:
                # [rum500] "Sie können eine Karte von unten im Ablagestapel nur nehmen, wenn:
                # Sie die Karte sofort verschmelzen"
                problems.append(
                    TurnProblem(
                        "discard_not_melded",
                        f"{deepest} was taken from below the top of the discard pile and must"
                        " be melded at once, in a new meld or laid off",
                        (deepest,),
                    )
                )
        elif rules.discard_must_meld and not melded:
            # [rommee] "nur dann die oberste Karte des Abwurfstapels aufnehmen darf, wenn er
            # sie sofort in einer Meldung auslegt"
            problems.append(
                TurnProblem(
                    "discard_not_melded",
                    f"{deepest} taken from the discard pile must be laid at once",
                    (deepest,),
                )
            )
        return problems
