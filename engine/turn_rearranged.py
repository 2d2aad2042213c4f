"""Judging a turn on a table that may be rebuilt (Sabra, Räuber-Rommé).

See :func:`tabletop.engine.turns.check_turn` for the rules and the choices made where the
texts are silent.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from tabletop.engine.base import Variant
from tabletop.engine.items import JOKER, Item, Joker, Natural, format_items, natural
from tabletop.engine.melds import MeldKind, Reading
from tabletop.engine.turn_common import (
    SEARCH_LIMIT,
    Bag,
    Meld,
    Occurrence,
    TurnCheck,
    TurnProblem,
    count_jokers,
    describe_meaning,
    expand,
    item_bag,
    joker_meaning,
    joker_slots,
    meanings_compatible,
    meld_key,
    natural_bag,
    plural,
)


@dataclass(frozen=True)
class _Exchange:
    """A joker freed by laying the tile(s) it stood for."""

    tiles: tuple[Natural, ...]
    occurrence: Occurrence | None
    """Where the freed joker lies after the turn (None: gone from the table)."""


@dataclass(frozen=True)
class _MeldOutcome:
    """One explanation of what became of one before-meld holding jokers."""

    meld: int
    host: int | None
    """The after-meld that still holds the meld's other items (official rule)."""
    exchanges: tuple[_Exchange, ...]
    problems: tuple[TurnProblem, ...]


@dataclass(frozen=True)
class _JokerVerdict:
    problems: tuple[TurnProblem, ...]
    exchanges: tuple[tuple[int | None, _Exchange], ...]
    """(host meld or None, exchange) for every freed joker."""

    @property
    def reserved(self) -> Bag:
        """Laid tiles spent on exchanges."""
        spent: Bag = Counter(tile for _, ex in self.exchanges for tile in ex.tiles)
        return spent

    @property
    def freed_missing(self) -> int:
        return sum(ex.occurrence is None for _, ex in self.exchanges)


class RearrangeJudge:
    def __init__(
        self,
        variant: Variant,
        before: tuple[Meld, ...],
        after: tuple[Meld, ...],
        laid: Meld,
        opened: bool,
    ) -> None:
        self.variant = variant
        self.rules = variant.table_rules
        self.before = before
        self.after = after
        self.laid = laid
        self.opened = opened
        self.laid_bag = item_bag(laid)
        self.after_bags = [item_bag(meld) for meld in after]
        self.analyses_after = [variant.analyse(meld) for meld in after]
        self._readings_cache: dict[tuple[str, int], list[Reading | None]] = {}
        self._steps = 0
        """Joker explanations judged so far (see SEARCH_LIMIT)."""

    # -- readings --------------------------------------------------------------
    def readings(self, side: str, index: int) -> list[Reading | None]:
        key = (side, index)
        if key not in self._readings_cache:
            meld = self.before[index] if side == "before" else self.after[index]
            analysis = (
                self.analyses_after[index] if side == "after" else self.variant.analyse(meld)
            )
            self._readings_cache[key] = list(analysis.readings) or [None]
        return self._readings_cache[key]

    # -- the whole check ---------------------------------------------------------
    def check(self) -> TurnCheck:
        problems: list[TurnProblem] = []
        missing, extra = self.conservation()
        if not self.laid:
            problems.append(
                TurnProblem(
                    "nothing_laid",
                    "at least one item from the rack must be laid"
                    " (\"mindestens ein Spielstein von seinem Blatt hinzugefügt\")",
                    (),
                )
            )
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
        verdict = self.joker_verdict(missing_jokers=missing[JOKER])
        initial_value: int | None = None
        if not self.opened:
            initial_value, opening_problems = self.opening(verdict.reserved)
            problems.extend(opening_problems)
        problems.extend(verdict.problems)

        # A joker freed by exchange and taken to the rack is reported as such,
        # not a second time as a missing item.
        missing[JOKER] -= min(missing[JOKER], verdict.freed_missing)
        missing = +missing
        conservation: list[TurnProblem] = []
        if missing:
            conservation.append(
                TurnProblem(
                    "item_missing",
                    f"{format_items(expand(missing))} lay on the table or were laid but are not"
                    " on the table after the turn: nothing may go back to the rack",
                    expand(missing),
                )
            )
        if extra:
            conservation.append(
                TurnProblem(
                    "item_from_nowhere",
                    f"{format_items(expand(extra))} are on the table after the turn but neither"
                    " lay there before nor were laid from the rack",
                    expand(extra),
                )
            )
        problems = conservation + problems
        valid = not problems
        penalty = 0 if valid else self.rules.invalid_turn_penalty
        return TurnCheck(
            valid=valid,
            problems=tuple(problems),
            initial_value=initial_value,
            exchanged_jokers=tuple(tile for _, ex in verdict.exchanges for tile in ex.tiles),
            restored_table=self.before,
            penalty_draw=penalty,
        )

    def conservation(self) -> tuple[Bag, Bag]:
        """(items gone from the table, items come from nowhere)."""
        had = item_bag([i for m in self.before for i in m]) + self.laid_bag
        has = item_bag([i for m in self.after for i in m])
        return had - has, has - had

    # -- the initial meld ---------------------------------------------------------
    def opening(self, reserved: Bag) -> tuple[int, list[TurnProblem]]:
        """The value of the melds laid from the hand alone, and what is wrong with it.

        [sabra] "Die erste Meldung ... muss aus einer oder mehreren Meldungen
        bestehen, die ausschließlich aus dem Blatt des Spielers stammen".  The
        opening melds are the after-melds made of laid items only; which ones
        is chosen to be worth the most (identical tiles are interchangeable).
        """
        problems: list[TurnProblem] = []
        available = self.laid_bag - reserved
        if self.rules.rearrange_on_opening_turn:
            pure = self.best_pure_melds(available)
        else:
            pure = []
            unchanged = Counter(meld_key(meld) for meld in self.after)
            kept: Counter[tuple[str, ...]] = Counter()
            for meld in self.before:
                key = meld_key(meld)
                if unchanged[key] > kept[key]:
                    kept[key] += 1
                else:
                    problems.append(
                        TurnProblem(
                            "table_changed_before_opening",
                            f"{format_items(meld)} was changed in the turn of the initial meld:"
                            " the table may be rearranged only once the player has opened",
                            tuple(meld),
                        )
                    )
            remaining = Counter(available)
            for index, meld in enumerate(self.after):
                key = meld_key(meld)
                if kept[key]:
                    kept[key] -= 1
                    continue
                bag = self.after_bags[index]
                if bag <= remaining:
                    remaining -= bag
                    if self.analyses_after[index].valid:
                        pure.append(index)
                else:
                    foreign = bag - remaining
                    problems.append(
                        TurnProblem(
                            "not_from_hand",
                            f"{format_items(meld)} uses {format_items(expand(foreign))} from the"
                            " table: the initial meld must come from the hand alone"
                            " (\"ausschließlich aus dem Blatt\")",
                            expand(foreign),
                        )
                    )
        melds = [self.after[i] for i in pure]
        result = self.variant.check_initial_meld(melds)
        if not result.meets:
            what = "; ".join(p for p in result.problems) or "the initial meld is too low"
            shown = ", ".join(format_items(m) for m in melds) or "no meld from the hand alone"
            problems.append(
                TurnProblem(
                    "initial_too_low",
                    f"{what} ({shown})",
                    tuple(item for m in melds for item in m),
                )
            )
        return result.value, problems

    def best_pure_melds(self, available: Bag) -> list[int]:
        """The after-melds made of laid items only that are worth most together."""
        candidates = []
        for index, analysis in enumerate(self.analyses_after):
            if analysis.valid and self.after_bags[index] <= available:
                value = max(self.variant.meld_value(r) for r in analysis.readings)
                candidates.append((value, index))
        candidates.sort(reverse=True)
        best: tuple[int, list[int]] = (-1, [])
        steps = 0

        def search(start: int, left: Bag, chosen: list[int], value: int) -> None:
            nonlocal best, steps
            steps += 1
            if value > best[0]:
                best = (value, list(chosen))
            if steps > SEARCH_LIMIT:
                return
            bound = value + sum(v for v, _ in candidates[start:])
            if bound <= best[0]:
                return
            for pos in range(start, len(candidates)):
                v, index = candidates[pos]
                bag = self.after_bags[index]
                if bag <= left:
                    chosen.append(index)
                    search(pos + 1, left - bag, chosen, value + v)
                    chosen.pop()

        search(0, available, [], 0)
        return sorted(best[1])

    # -- jokers ---------------------------------------------------------------------
    def joker_verdict(self, missing_jokers: int) -> _JokerVerdict:
        """The explanation of the table's jokers with the fewest problems.

        Jokers look alike, so which joker on the table now is which joker of
        before is searched for: meld by meld, each before-meld's jokers go to
        jokers on the table now (or, at most ``missing_jokers`` of them, off the
        table), with branch and bound on the problems found so far.
        """
        if self.rules.jokers_move_freely:
            # The opening turn cannot touch them either: there the table must stay as it
            # was (rearrange_on_opening_turn is off wherever jokers move freely).
            return _JokerVerdict((), ())
        melds = [m for m, meld in enumerate(self.before) if count_jokers(meld)]
        if not melds:
            return _JokerVerdict((), ())
        occurrences = [
            (a, k) for a, meld in enumerate(self.after) for k in range(count_jokers(meld))
        ]
        best: _JokerVerdict | None = None

        def done() -> bool:
            return best is not None and (not best.problems or self._steps > SEARCH_LIMIT)

        def descend(
            i: int,
            assignment: dict[tuple[int, int], Occurrence | None],
            outcomes: list[_MeldOutcome],
            found: int,
        ) -> None:
            nonlocal best
            if best is not None and found >= len(best.problems):
                return
            if i == len(melds):
                self._steps += 1
                verdict = self.judge_combination(tuple(outcomes), assignment)
                if best is None or len(verdict.problems) < len(best.problems):
                    best = verdict
                return
            m = melds[i]
            taken = {occ for occ in assignment.values() if occ is not None}
            gone = sum(occ is None for occ in assignment.values())
            for choice in self.occurrence_choices(m, occurrences, taken, missing_jokers - gone):
                local = {(m, k): occ for k, occ in enumerate(choice)}
                ranked = sorted(self.meld_outcomes(m, local), key=lambda o: len(o.problems))
                for outcome in ranked:
                    self._steps += 1
                    outcomes.append(outcome)
                    descend(i + 1, {**assignment, **local}, outcomes, found + len(outcome.problems))
                    outcomes.pop()
                    if done():
                        return

        descend(0, {}, [], 0)
        assert best is not None
        return best

    def occurrence_choices(
        self, m: int, occurrences: list[Occurrence], taken: set[Occurrence], may_go: int
    ) -> Iterator[tuple[Occurrence | None, ...]]:
        """Where the jokers of before-meld ``m`` may be now: distinct free jokers on the
        table, those in melds still holding the meld's other items first, or (at most
        ``may_go`` of them) gone from the table."""
        naturals = natural_bag(self.before[m])
        free = [occ for occ in occurrences if occ not in taken]
        free.sort(key=lambda occ: not naturals <= self.after_bags[occ[0]])
        options: list[Occurrence | None] = [*free, None]
        for choice in itertools.product(options, repeat=count_jokers(self.before[m])):
            placed = [occ for occ in choice if occ is not None]
            if len(set(placed)) == len(placed) and len(choice) - len(placed) <= may_go:
                yield choice

    def meld_outcomes(
        self, m: int, assignment: dict[tuple[int, int], Occurrence | None]
    ) -> Iterator[_MeldOutcome]:
        meld = self.before[m]
        jokers = count_jokers(meld)
        occurrences = [assignment[(m, k)] for k in range(jokers)]
        if self.rules.split_joker_melds:
            yield from self.dutch_outcomes(m, occurrences)
            return
        naturals = natural_bag(meld)
        hosts = [a for a, bag in enumerate(self.after_bags) if naturals <= bag]
        if not hosts:
            yield _MeldOutcome(
                m,
                None,
                (),
                (
                    TurnProblem(
                        "joker_split",
                        f"{format_items(meld)} holds a joker, so it may be extended but not split"
                        " or have items removed (\"weder Spielsteine entfernt werden\")",
                        tuple(meld),
                    ),
                ),
            )
            return
        for a in hosts:
            for old in self.readings("before", m):
                for new in self.readings("after", a):
                    yield from self.strict_outcomes(m, a, old, new, occurrences)

    def strict_outcomes(
        self,
        m: int,
        a: int,
        old: Reading | None,
        new: Reading | None,
        occurrences: list[Occurrence | None],
    ) -> Iterator[_MeldOutcome]:
        """Official Sabra: each joker of before-meld ``m`` stays in host ``a`` meaning
        the same, or is exchanged for the tile it stood for, laid into ``a``."""
        meld = self.before[m]
        host = self.after[a]
        naturals = natural_bag(meld)
        host_bag = self.after_bags[a]
        choices: list[list[tuple[_Exchange | None, TurnProblem | None]]] = []
        for k, occurrence in enumerate(occurrences):
            before_meaning = joker_meaning(old, k)
            if (
                occurrence is not None
                and occurrence[0] == a
                and meanings_compatible(before_meaning, joker_meaning(new, occurrence[1]))
            ):
                choices.append([(None, None)])
                continue
            options: list[tuple[_Exchange | None, TurnProblem | None]] = []
            for tiles in self.exchange_tiles(old, k, naturals, host_bag):
                options.append((_Exchange(tiles, occurrence), None))
            if not options:
                options.append((None, self.unexchanged_problem(m, a, old, new, k, occurrence)))
            choices.append(options)
        for combination in itertools.product(*choices):
            exchanges = tuple(ex for ex, _ in combination if ex is not None)
            problems = [p for _, p in combination if p is not None]
            needs_both = self.rules.set_joker_needs_both
            if needs_both and old is not None and old.kind is MeldKind.SET and exchanges:
                # [sabra Varianten] "die Spielsteine beider fehlenden Farben zu der Gruppe
                # hinzugefügt werden müssen, um den Joker an sich nehmen zu können":
                # the set it leaves must be complete.
                kept_jokers = len(occurrences) - len(exchanges)
                suits = {
                    n.suit_index
                    for n in host
                    if not isinstance(n, Joker) and n.rank == old.rank
                }
                if len(suits) + kept_jokers < 4:
                    problems.append(
                        TurnProblem(
                            "joker_exchange_incomplete",
                            f"the joker of {format_items(meld)} may be taken only by adding both"
                            f" missing colours; {format_items(host)} is not complete",
                            tuple(host),
                        )
                    )
            yield _MeldOutcome(m, a, exchanges, tuple(problems))

    def exchange_tiles(
        self, old: Reading | None, k: int, naturals: Bag, host_bag: Bag
    ) -> list[tuple[Natural, ...]]:
        """Ways to free the k-th joker of a before-meld: the laid tiles that take its
        place in the host (host_bag None: anywhere on the table, Dutch rule)."""
        if old is None:
            return []
        slots = joker_slots(old)
        if k >= len(slots):
            return []
        slot = slots[k]
        assert slot is not None

        def laid_into_host(tile: Natural) -> bool:
            return self.laid_bag[tile] >= 1 and host_bag[tile] > naturals[tile]

        if old.kind is MeldKind.RUN:
            meaning = joker_meaning(old, k)
            assert meaning is not None
            return [(tile,) for tile in sorted(meaning, key=str) if laid_into_host(tile)]
        # [sabra] "kann der Joker durch einen passenden Spielstein jeder der fehlenden
        # Farben ersetzt werden" -- whatever colour the joker was declared as.
        missing = [natural(old.family, old.rank, s) for s in old.missing_suits]
        added = [tile for tile in missing if laid_into_host(tile)]
        if self.rules.set_joker_needs_both:
            if self.rules.split_joker_melds and len(added) < len(missing) - (old.joker_count - 1):
                # the set may be split under the Dutch rule, so completeness is read
                # as: every missing colour but the other jokers' was laid
                return []
            return [tuple(added)] if added else []
        return [(tile,) for tile in added]

    def unexchanged_problem(
        self,
        m: int,
        a: int,
        old: Reading | None,
        new: Reading | None,
        k: int,
        occurrence: Occurrence | None,
    ) -> TurnProblem | None:
        """What is wrong when the k-th joker of before-meld ``m`` (host ``a``) was
        neither kept as it was nor exchanged (official rule)."""
        if occurrence is None:
            return None  # gone from the table: reported by conservation
        meld = self.before[m]
        meaning = describe_meaning(joker_meaning(old, k))
        where = self.after[occurrence[0]]
        if occurrence[0] != a:
            return TurnProblem(
                "joker_split",
                f"the joker of {format_items(meld)} was moved to {format_items(where)} without"
                f" laying the {meaning} it stands for in its place",
                tuple(meld),
            )
        return TurnProblem(
            "joker_meaning_changed",
            f"the joker of {format_items(meld)} stood for {meaning} and in {format_items(where)}"
            f" stands for {describe_meaning(joker_meaning(new, occurrence[1]))}: a meld holding"
            " a joker may"
            " not be rearranged (\"noch darf die Zusammenstellung neu geordnet werden\")",
            tuple(where),
        )

    def dutch_outcomes(
        self, m: int, occurrences: list[Occurrence | None]
    ) -> Iterator[_MeldOutcome]:
        """Dutch Sabra: the meld may be split; each joker must stand for the same tile
        wherever it lies, unless the tile it stood for was laid from the hand."""
        meld = self.before[m]
        table_after: Bag = sum(self.after_bags, Counter())
        for old in self.readings("before", m):
            choices: list[list[tuple[_Exchange | None, TurnProblem | None]]] = []
            for k, occurrence in enumerate(occurrences):
                before_meaning = joker_meaning(old, k)
                options: list[tuple[_Exchange | None, TurnProblem | None]] = []
                if occurrence is not None and any(
                    meanings_compatible(before_meaning, joker_meaning(new, occurrence[1]))
                    for new in self.readings("after", occurrence[0])
                ):
                    options.append((None, None))
                else:
                    # The meld may have been split, so the laid tile need not join
                    # the joker's old companions: anywhere on the table will do.
                    for tiles in self.exchange_tiles(old, k, Counter(), table_after):
                        options.append((_Exchange(tiles, occurrence), None))
                if not options:
                    problem = None
                    if occurrence is not None:
                        where = self.after[occurrence[0]]
                        problem = TurnProblem(
                            "joker_meaning_changed",
                            f"the joker of {format_items(meld)} stood for"
                            f" {describe_meaning(before_meaning)} and in {format_items(where)}"
                            " stands for"
                            " something else: a joker keeps what it stands for (\"immer für"
                            " denselben Spielstein\") unless that tile is laid from the hand",
                            tuple(where),
                        )
                    options.append((None, problem))
                choices.append(options)
            for combination in itertools.product(*choices):
                exchanges = tuple(ex for ex, _ in combination if ex is not None)
                problems = tuple(p for _, p in combination if p is not None)
                yield _MeldOutcome(m, None, exchanges, problems)

    def judge_combination(
        self,
        outcomes: tuple[_MeldOutcome, ...],
        assignment: dict[tuple[int, int], Occurrence | None],
    ) -> _JokerVerdict:
        problems: list[TurnProblem] = []
        for outcome in outcomes:
            problems.extend(outcome.problems)
        # Two melds holding jokers kept whole in one after-meld must both fit in it.
        demand: dict[int, Bag] = {}
        for outcome in outcomes:
            if outcome.host is None:
                continue
            need = demand.setdefault(outcome.host, Counter())
            need.update(natural_bag(self.before[outcome.meld]))
            for ex in outcome.exchanges:
                need.update(ex.tiles)
            if not need <= self.after_bags[outcome.host]:
                meld = self.before[outcome.meld]
                problems.append(
                    TurnProblem(
                        "joker_split",
                        f"{format_items(meld)} holds a joker, so it may be extended but not split",
                        tuple(meld),
                    )
                )
        exchanges = tuple((o.host, ex) for o in outcomes for ex in o.exchanges)
        spent: Bag = Counter(tile for _, ex in exchanges for tile in ex.tiles)
        overspent = spent - self.laid_bag
        if overspent:
            problems.append(
                TurnProblem(
                    "not_from_hand",
                    f"{format_items(expand(overspent))} would have to free more jokers than"
                    " were laid from the rack",
                    expand(overspent),
                )
            )
        table_jokers = {occ for occ in assignment.values() if occ is not None}
        for host, ex in exchanges:
            problem = self.freed_joker_problem(host, ex, exchanges, table_jokers)
            if problem is not None:
                problems.append(problem)
        return _JokerVerdict(tuple(problems), exchanges)

    def freed_joker_problem(
        self,
        host: int | None,
        exchange: _Exchange,
        exchanges: tuple[tuple[int | None, _Exchange], ...],
        table_jokers: set[Occurrence],
    ) -> TurnProblem | None:
        tiles = format_items(exchange.tiles)
        if exchange.occurrence is None:
            # [sabra] "Ein Joker, der auf diese Weise frei wird, kann nicht in das Blatt
            # des Spielers zur späteren Verwendung aufgenommen werden."
            return TurnProblem(
                "freed_joker_unused",
                f"the joker freed by {tiles} must be played again in the same turn;"
                " it may not go to the rack",
                (*exchange.tiles, JOKER),
            )
        x = exchange.occurrence[0]
        meld = self.after[x]
        if host == x:
            # [sabra] "durch den echten Spielstein ersetzt und den Joker dann in einer
            # anderen Zusammenstellung auf dem Tisch verwendet": putting it back at the
            # other end of its own meld is the move the rule forbids.
            return TurnProblem(
                "freed_joker_same_meld",
                f"the joker freed by {tiles} must be used in another meld, not put back"
                f" into {format_items(meld)}",
                tuple(meld),
            )
        rule = self.rules.freed_joker
        if rule == "anywhere":  # Goliath 1994: "sofort, innerhalb desselben Spielzuges"
            return None
        if rule in ("new_group", "with_hand"):
            # Lemada 1999: "als Teil einer neuen Gruppe"; the stricter readings
            # include this one.
            for old in self.before:
                naturals = natural_bag(old)
                if naturals and naturals <= self.after_bags[x]:
                    return TurnProblem(
                        "freed_joker_not_new_group",
                        f"the joker freed by {tiles} must go into a new group, but"
                        f" {format_items(meld)} extends {format_items(old)}",
                        tuple(meld),
                    )
        if rule == "new_group":
            return None
        from_hand = self.laid_in_meld(x, exchanges, table_jokers)
        if rule == "with_hand":
            # Pressman 1987/1998: "zusammen mit 2 oder mehr Spielsteinen aus seinem Blatt"
            if len(from_hand) < 2:
                return TurnProblem(
                    "freed_joker_without_hand_tiles",
                    f"the joker freed by {tiles} must form a new group with two or more tiles"
                    f" from the rack; {format_items(meld)} holds"
                    f" {plural(len(from_hand), 'laid tile')}",
                    tuple(meld),
                )
            return None
        # hand_only: "eine neue Gruppe ..., die nur aus dem Joker und zwei oder mehr
        # Spielsteinen aus dem Blatt ... besteht"; table tiles may join it afterwards.
        if not self.hand_group_exists(from_hand):
            return TurnProblem(
                "freed_joker_not_hand_group",
                f"the joker freed by {tiles} must first form a legal group with two or more"
                f" tiles from the rack alone; in {format_items(meld)} the laid tiles"
                f" {format_items(from_hand) or '(none)'} and the joker do not",
                tuple(meld),
            )
        return None

    def laid_in_meld(
        self,
        x: int,
        exchanges: tuple[tuple[int | None, _Exchange], ...],
        table_jokers: set[Occurrence],
    ) -> tuple[Item, ...]:
        """The items of after-meld ``x`` that can have come from the rack, leaving out
        laid tiles spent on an exchange in another meld."""
        reserved: Bag = Counter()
        for host, ex in exchanges:
            if host != x:
                reserved.update(ex.tiles)
        available = self.laid_bag - reserved
        items: list[Item] = []
        used: Bag = Counter()
        for k_item in self.after[x]:
            if k_item.is_joker:
                continue
            if used[k_item] < available[k_item]:
                used[k_item] += 1
                items.append(k_item)
        own_jokers = count_jokers(self.after[x]) - sum(occ[0] == x for occ in table_jokers)
        items.extend([JOKER] * max(0, min(own_jokers, self.laid_bag[JOKER])))
        return tuple(items)

    def hand_group_exists(self, from_hand: tuple[Item, ...]) -> bool:
        """Whether the freed joker and two or more of these laid items make a legal meld."""
        seen: set[tuple[str, ...]] = set()
        for size in range(2, len(from_hand) + 1):
            for subset in itertools.combinations(from_hand, size):
                key = meld_key(subset)
                if key in seen:
                    continue
                seen.add(key)
                if self.variant.analyse((*subset, JOKER)).valid:
                    return True
                if len(seen) > SEARCH_LIMIT:
                    return False
        return False
