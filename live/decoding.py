"""Decoding a still table under the rules: the most probable legal reading of every item.

The reader gives each item a distribution over its kind's labels; the table adds
what the game knows.  :func:`decode_table` chooses one label per item so that

* every meld row reads as a legal meld of the variant,
* no label is used more often than the material has copies (each tile or card
  ``copies_of_each`` times, the jokers ``joker_count`` times), and
* an item that has not moved since the last committed table, and whose own
  evidence has not turned against the label it had (:func:`_holds`), keeps it
  unless a reading is :data:`KEEP_COST` more probable without it (the rules do not
  trade it away for a small gain, or lose a reading they made, when other items
  change around it),

and among those labellings takes the jointly most probable one: the least total
cost, an item's cost for a label being ``-log`` of its probability.

It is exact within stated bounds.  Each row's labellings are enumerated best first
(:func:`ranked_labellings`: a heap over the candidates' index vectors, each vector
reached from exactly one parent, so every labelling comes once and in order of
cost), and its legal ones are kept up to :data:`ILLEGAL_COST` above the row's most
probable reading, which is kept too, at that cost more, as the *illegal* option.
The rows and the items outside rows (each its own option list) are then joined by a
branch and bound over the copy counts: a copy over the limit costs
:data:`EXTRA_COPY_COST`, so an impossible reading is still a reading, reported.

A row is committed illegal only when no legal reading lies within
:data:`ILLEGAL_COST` of its best reading: then its items keep their most probable
labels and, where that reading is doubtful (an item below :data:`SURE_SHARE`, or a
legal reading within :data:`REPORT_COST`), a :class:`ReadingProblem` names it with
those legal readings, never silently made legal.  A confidently read illegal meld is the
players' play, which the rules judge at the turn's end.

A label a person gave (a correction) is an item's only candidate.

Nothing here knows about frames or tracks: items are keys with label shares.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter, OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from tabletop.engine.items import parse_item
from tabletop.engine.variants import Variant

FLOOR = 1e-4
"""The least probability a candidate counts with (as the tracker floors evidence)."""
MIN_SHARE = 0.001
"""Candidates below this share are not considered (the floor is far below it)."""
MAX_CANDIDATES = 5
"""Candidates per item, best first: the reader's top five."""
ILLEGAL_COST = math.log(200.0)
"""How much less probable (log) than a row's best reading a legal reading may be and
still be read: a legal reading 200 times less probable beats an illegal one."""
KEEP_COST = math.log(10.0)
"""What it costs (log) an item that has not moved to take another label than it had
in the last committed table."""
KEEP_DROP = 0.5
"""An item whose old label is no longer its most probable is held to it only while
that label keeps this share of the share it had when committed."""

EXTRA_COPY_COST = 12.0
"""What each copy beyond the material costs (log): more than any reading's doubt, so
only an impossible reading of the evidence keeps one."""
SURE_SHARE = 0.9
"""An item read at least this surely makes no doubt: an illegal row of such items is
the players' play, not a reading problem."""
MIN_ROW = 3
"""Rows of fewer items are no melds yet (a meld being laid): they need not be legal."""
MAX_POPS = 3000
"""Labellings a row's enumeration looks at, at most."""
MAX_LEGAL = 6
"""Legal readings kept per row for the copy search."""
MAX_NODES = 50_000
"""The copy search's bound; past it, the best complete labelling found is taken."""
ALTERNATIVES_SHOWN = 3
REPORT_COST = math.log(10_000.0)
"""How much less probable than a row's best reading a legal reading may be and still be
named as an alternative when the row is committed illegal."""


@dataclass(frozen=True)
class ReadingProblem:
    """A row or item the rules could not read as legal and possible: what was read, why,
    and the likeliest legal readings (each with how many times less probable it is)."""

    code: str
    """``illegal_meld`` or ``too_many_copies``."""
    message: str
    items: tuple[str, ...]
    alternatives: tuple[tuple[str, float], ...] = ()
    """Legal readings of the row and their odds against the reading committed (>= 1)."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Decoding:
    labels: dict[int, str]
    """The chosen label of every item."""
    problems: tuple[ReadingProblem, ...]
    changed: frozenset[int] = field(default_factory=frozenset)
    """Items whose chosen label is not their most probable one (the rules or the
    copy counts moved them)."""


# --- one row -------------------------------------------------------------------------
@dataclass(frozen=True)
class Kept:
    """What the last committed table read an item as, and that label's share then."""

    label: str
    share: float = 1.0


def _holds(shares: Mapping[str, float], kept: Kept) -> bool:
    """Whether an item that lay still is held to its old label: unless its own evidence
    turned against it (another label now its most probable and the old one's share
    fallen below :data:`KEEP_DROP` of what it was: a joker exchanged in place, a card
    laid over another), where it follows the evidence."""
    now = shares.get(kept.label, 0.0)
    return now >= max(shares.values(), default=0.0) or now >= KEEP_DROP * kept.share


def _options(shares: Mapping[str, float], kept: Kept | None) -> list[tuple[str, float]]:
    """(label, cost) candidates of one item, cheapest first."""
    held = kept.label if kept is not None and _holds(shares, kept) else None
    ranked = sorted(((label, p) for label, p in shares.items() if label != "none"),
                    key=lambda kv: (-kv[1], kv[0]))
    chosen = [(label, p) for label, p in ranked if p >= MIN_SHARE][:MAX_CANDIDATES]
    chosen = chosen or ranked[:1]
    options = []
    for label, p in chosen:
        cost = -math.log(max(p, FLOOR))
        if held is not None and label != held:
            cost += KEEP_COST
        options.append((label, cost))
    if held is not None and held not in dict(options):
        # the rules read it so before: the label stays a candidate however faint
        options.append((held, -math.log(max(shares.get(held, 0.0), FLOOR))))
    return sorted(options, key=lambda kv: (kv[1], kv[0]))


def ranked_labellings(options: Sequence[Sequence[tuple[str, float]]]
                      ) -> Iterator[tuple[float, tuple[str, ...]]]:
    """Every labelling of a row, (cost, labels), cheapest first: each item's options
    must be sorted by cost.  A vector's parent is it with its last raised index lowered
    by one; children raise an index at or after that one, so each vector comes once."""
    if not options or any(not o for o in options):
        return
    first = tuple(0 for _ in options)
    heap: list[tuple[float, tuple[int, ...], int]] = [
        (sum(o[0][1] for o in options), first, 0)]
    while heap:
        cost, vector, last = heapq.heappop(heap)
        yield cost, tuple(options[i][v][0] for i, v in enumerate(vector))
        for position in range(last, len(options)):
            index = vector[position] + 1
            if index >= len(options[position]):
                continue
            child = (*vector[:position], index, *vector[position + 1:])
            step = options[position][index][1] - options[position][index - 1][1]
            heapq.heappush(heap, (cost + step, child, position))


class LegalityCache:
    """``variant.analyse(...).valid`` of label tuples, remembered (a still table is
    decoded frame after frame with the same rows); the oldest forgotten past ``size``
    (a few MB), so a long game's memory stays flat."""

    def __init__(self, variant: Variant, size: int = 50_000) -> None:
        self.variant = variant
        self.size = size
        self._known: OrderedDict[tuple[str, ...], bool] = OrderedDict()

    def __call__(self, labels: tuple[str, ...]) -> bool:
        known = self._known.get(labels)
        if known is None:
            try:
                known = self.variant.analyse([parse_item(label) for label in labels]).valid
            except ValueError:
                known = False
            self._known[labels] = known
            if len(self._known) > self.size:
                self._known.popitem(last=False)
        return known


@dataclass(frozen=True)
class _Choice:
    labels: tuple[str, ...]
    cost: float
    legal: bool


def _row_choices(options: Sequence[Sequence[tuple[str, float]]], legal: LegalityCache
                 ) -> tuple[list[_Choice], _Choice, list[_Choice]]:
    """A row's legal readings within :data:`ILLEGAL_COST` of its best (at most
    :data:`MAX_LEGAL`, cheapest first), its best reading as the illegal option, and,
    when there is no legal reading that near, the legal readings within
    :data:`REPORT_COST` (at most :data:`ALTERNATIVES_SHOWN`) to name."""
    found: list[_Choice] = []
    farther: list[_Choice] = []
    best: _Choice | None = None
    start = 0.0
    for pops, (cost, labels) in enumerate(ranked_labellings(options)):
        if best is None:
            start = cost
            best = _Choice(labels, cost + ILLEGAL_COST, False)
        if pops >= MAX_POPS or cost > start + (REPORT_COST if not found else ILLEGAL_COST):
            break
        if legal(labels):
            if cost <= best.cost:
                found.append(_Choice(labels, cost, True))
                if len(found) >= MAX_LEGAL:
                    break
            else:
                farther.append(_Choice(labels, cost, True))
                if len(farther) >= ALTERNATIVES_SHOWN:
                    break
    assert best is not None
    return found, best, farther


# --- the table -----------------------------------------------------------------------
def _limit(variant: Variant, label: str) -> int:
    return variant.joker_count if label == "JK" else variant.copies_of_each


def _search(groups: Sequence[Sequence[_Choice]], limit: Mapping[str, int]
            ) -> tuple[int, ...]:
    """The cheapest choice per group with each extra copy costing
    :data:`EXTRA_COPY_COST` (branch and bound, groups with the most at stake first)."""
    order = sorted(range(len(groups)), key=lambda g: (
        -(groups[g][1].cost - groups[g][0].cost) if len(groups[g]) > 1 else math.inf))
    best_rest = [0.0] * (len(order) + 1)
    for depth in range(len(order) - 1, -1, -1):
        best_rest[depth] = best_rest[depth + 1] + groups[order[depth]][0].cost
    greedy = tuple(0 for _ in groups)
    counts: Counter[str] = Counter()
    for g, choices in enumerate(groups):
        counts.update(choices[greedy[g]].labels)
    extra = sum(max(0, n - limit.get(label, 1)) for label, n in counts.items())
    if extra == 0:
        return greedy
    incumbent = (best_rest[0] + extra * EXTRA_COPY_COST, greedy)
    chosen = [0] * len(groups)
    used: Counter[str] = Counter()
    nodes = 0

    def extra_copies(labels: tuple[str, ...]) -> int:
        added: Counter[str] = Counter(labels)
        return sum(max(0, used[label] + n - limit.get(label, 1))
                   - max(0, used[label] - limit.get(label, 1))
                   for label, n in added.items())

    def visit(depth: int, cost: float) -> None:
        nonlocal incumbent, nodes
        nodes += 1
        if cost + best_rest[depth] >= incumbent[0] - 1e-12 or nodes > MAX_NODES:
            return
        if depth == len(order):
            incumbent = (cost, tuple(chosen))
            return
        g = order[depth]
        for index, choice in enumerate(groups[g]):
            step = choice.cost + extra_copies(choice.labels) * EXTRA_COPY_COST
            chosen[g] = index
            used.update(choice.labels)
            visit(depth + 1, cost + step)
            used.subtract(choice.labels)

    visit(0, 0.0)
    return incumbent[1]


def _odds(cost: float) -> float:
    return math.exp(min(cost, 700.0))


def decode_table(variant: Variant, shares: Mapping[int, Mapping[str, float]],
                 rows: Sequence[Sequence[int]], *,
                 fixed: Mapping[int, str] | None = None,
                 kept: Mapping[int, Kept] | None = None,
                 legal: LegalityCache | None = None) -> Decoding:
    """The most probable legal, possible labelling of the items in ``shares`` (key ->
    label -> probability); ``rows``: the meld rows, keys in table order (rows shorter
    than :data:`MIN_ROW` and items in no row need not form melds); ``fixed``: labels
    people gave; ``kept``: labels of items that have not moved since the last commit."""
    legal = legal or LegalityCache(variant)
    fixed = {k: v for k, v in (fixed or {}).items() if k in shares}
    kept = kept or {}
    options = {key: [(fixed[key], 0.0)] if key in fixed else _options(s, kept.get(key))
               for key, s in shares.items()}
    best_label = {key: max(((lab, p) for lab, p in s.items() if lab != "none"),
                           key=lambda kv: (kv[1], kv[0]), default=(options[key][0][0], 0.0))[0]
                  for key, s in shares.items()}
    in_rows: set[int] = set()
    groups: list[list[_Choice]] = []
    members: list[tuple[int, ...]] = []
    row_info: list[list[_Choice] | None] = []
    for row in rows:
        keys = tuple(k for k in row if k in shares)
        if not keys:
            continue
        in_rows.update(keys)
        if len(keys) < MIN_ROW:
            groups.append([_Choice(tuple(lab for lab, _ in combo), sum(c for _, c in combo), True)
                           for combo in itertools.islice(
                               itertools.product(*(options[k] for k in keys)), 64)])
            groups[-1].sort(key=lambda c: c.cost)
            members.append(keys)
            row_info.append(None)
            continue
        found, illegal, farther = _row_choices([options[k] for k in keys], legal)
        groups.append(sorted([*found, illegal], key=lambda c: c.cost))
        members.append(keys)
        row_info.append(sorted([*found, *farther], key=lambda c: c.cost))
    for key in shares:
        if key not in in_rows:
            groups.append([_Choice((lab,), cost, True) for lab, cost in options[key]])
            members.append((key,))
            row_info.append(None)
    limit = {lab: _limit(variant, lab) for group in groups for c in group for lab in c.labels}
    picked = _search(groups, limit)
    labels: dict[int, str] = {}
    for keys, group, index in zip(members, groups, picked, strict=True):
        labels.update(zip(keys, group[index].labels, strict=True))
    problems: list[ReadingProblem] = []
    for keys, group, index, info in zip(members, groups, picked, row_info, strict=True):
        choice = group[index]
        if info is None or choice.legal:
            continue
        doubtful = bool(info) or any(
            key not in fixed and shares[key].get(labels[key], 0.0) < SURE_SHARE for key in keys)
        if not doubtful:
            continue
        read = " ".join(choice.labels)
        alternatives = tuple((" ".join(c.labels), _odds(c.cost - (choice.cost - ILLEGAL_COST)))
                             for c in info[:ALTERNATIVES_SHOWN])
        if alternatives:
            shown = "; ".join(f"{text} (1/{odds:.0f} as likely)" for text, odds in alternatives)
            why = f"the legal readings are less likely: {shown}"
        else:
            why = "no legal reading among the likely labels of its items"
        problems.append(ReadingProblem(
            "illegal_meld", f"meld {read!r} reads as no legal {variant.name} meld; {why}",
            choice.labels, alternatives))
    counts = Counter(labels.values())
    for label, count in sorted(counts.items()):
        if count > _limit(variant, label):
            problems.append(ReadingProblem(
                "too_many_copies",
                f"{count} copies of {label} seen but {variant.name} has "
                f"{_limit(variant, label)}", (label,) * count))
    changed = frozenset(key for key, label in labels.items() if label != best_label[key])
    return Decoding(labels, tuple(problems), changed)
