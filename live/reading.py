"""Reading the table: when to commit (stillness, no hand) and which labels to believe.

*When.*  A hand is not a detected class.  It shows as motion in the table
region (``MotionMeter``: the share of pixels that changed since the last
frame, on a small grey copy) and as tracked items vanishing under it.  A
snapshot is committed only when, for ``still_s`` seconds, the motion stayed
below ``motion_threshold``, no confirmed item moved, none is missing (under
a hand, or gone but not yet dropped) and none appeared, vanished or changed
label (``StillnessRule``).

*What.*  What the detector saw of each item (its track's shares: the
reader's distributions multiplied over the frames, or votes for the top
labels where there are none) is weighed together with the rules
(``resolve_labels``): within a meld, each item's candidates are its labels
with a fair share, plus, for an item known by votes alone, the classic
confusions (a tile's 6 and 9) that votes cannot name; the combination
scoring best wins, where a combination that reads as a legal meld gets a
bonus, so a 6 that makes a run beats a 9 that does not.
No label may be used more often than the variant has copies (jokers: its
joker count); an item over the limit takes its next candidate if that is
possible.  A reading that stays impossible is kept as read and reported in
``Reading.problems``, never hidden or silently changed.

A label a person gave (a correction on the panel, pinned by the watcher) is
``fixed``: it is that item's only candidate, so the other items of its meld
are chosen knowing it (a pinned 9 is never traded for a 6 that would make a
run of its neighbours' second choices), and the copy limit moves other items,
never a fixed one.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from engine.items import Item, parse_item
from engine.variants import Variant

Image = npt.NDArray[np.uint8]


class MotionMeter:
    """Share of the table region's pixels that changed since the previous frame."""

    def __init__(self, *, width: int = 160, pixel_threshold: int = 18,
                 region: npt.NDArray[np.float64] | None = None) -> None:
        """``region``: the table polygon in image pixels (None: the whole frame)."""
        self.width = width
        self.pixel_threshold = pixel_threshold
        self.region = region
        self._previous: Image | None = None
        self._mask: npt.NDArray[np.bool_] | None = None

    def update(self, frame: Image | None) -> float:
        if frame is None:
            return 0.0
        h, w = frame.shape[:2]
        scale = self.width / w
        small = cv2.resize(frame, (self.width, max(1, round(h * scale))),
                           interpolation=cv2.INTER_AREA)
        grey = small if small.ndim == 2 else cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        grey = cv2.GaussianBlur(grey, (5, 5), 0)
        if self._mask is None or self._mask.shape != grey.shape:
            mask = np.ones(grey.shape, np.uint8)
            if self.region is not None:
                mask[:] = 0
                cv2.fillPoly(mask, [np.round(np.asarray(self.region) * scale).astype(np.int32)], 1)
            self._mask = mask.astype(bool)
        previous, self._previous = self._previous, grey
        if previous is None or previous.shape != grey.shape:
            return 0.0
        changed = (cv2.absdiff(grey, previous) > self.pixel_threshold) & self._mask
        return float(changed.sum()) / max(1, int(self._mask.sum()))


@dataclass
class StillnessRule:
    still_s: float = 0.4
    motion_threshold: float = 0.004
    since: float | None = None
    """Since when the scene has been still, or None while it is not."""
    previous_t: float | None = None
    """The time of the frame before this one."""

    def update(self, t: float, motion: float, *, missing: int, last_change_t: float) -> bool:
        """Whether the scene has been still for ``still_s`` at time ``t``.

        ``motion`` compares this frame with the one before, so a calm frame says the
        scene already stood as it is at the frame before: stillness is counted from
        there.  On a slow machine (a frame every 0.2-0.3 s) that is a frame sooner.
        ``last_change_t``: when an item last came, went, moved or changed label.
        """
        calm = motion <= self.motion_threshold and missing == 0
        previous_t, self.previous_t = self.previous_t, t
        if not calm:
            self.since = None
            return False
        if self.since is None:
            self.since = previous_t if previous_t is not None else t
        since = max(self.since, last_change_t)
        return t - since >= self.still_s - 1e-9


# --- labels ---------------------------------------------------------------------
VALID_MELD_BONUS = 5.0
"""Log-odds a legal meld is worth: beats a rival label only ~150 times less voted."""
CONFUSION_PRIOR = 0.05
"""Share given to a classic confusion the detector did not vote for (shares from
votes only: a reader's distribution gives the confusion its own probability)."""
MIN_SHARE = 0.08
MAX_COMBINATIONS = 512


def _confusions(label: str) -> tuple[str, ...]:
    """Labels the detector mistakes for ``label``: an upside-down tile 6 and 9."""
    if len(label) >= 2 and label[0] in "KBOR" and label[1:] in ("6", "9"):
        return (label[0] + ("9" if label[1:] == "6" else "6"),)
    return ()


def candidates(shares: Mapping[str, float], *, min_share: float = MIN_SHARE,
               limit: int = 3, from_distributions: bool = False) -> list[tuple[str, float]]:
    """An item's possible labels with their shares, best first.

    ``from_distributions``: the shares come from the reader's distributions, which
    give every likely label its probability; otherwise (votes for top labels) the
    classic confusions of the best label join with at least ``CONFUSION_PRIOR``."""
    ranked = sorted(shares.items(), key=lambda kv: -kv[1])
    chosen = [(lab, s) for lab, s in ranked if s >= min_share][:limit] or ranked[:1]
    if from_distributions:
        return chosen
    for extra in _confusions(ranked[0][0]):
        if extra not in dict(chosen):
            chosen.append((extra, max(shares.get(extra, 0.0), CONFUSION_PRIOR)))
    return chosen


@dataclass(frozen=True)
class Reading:
    labels: dict[int, str]  # track id -> chosen label
    problems: tuple[str, ...]


def _item(label: str) -> Item:
    return parse_item(label)


def _meld_valid(variant: Variant, labels: Sequence[str]) -> bool:
    try:
        return variant.analyse([_item(lab) for lab in labels]).valid
    except ValueError:
        return False


def resolve_labels(variant: Variant, shares: Mapping[int, Mapping[str, float]],
                   melds: Sequence[Sequence[int]],
                   fixed: Mapping[int, str] | None = None,
                   from_distributions: AbstractSet[int] = frozenset()) -> Reading:
    """Labels for every track in ``shares``; ``melds`` are rows of track ids in table order.

    ``fixed``: labels people gave, by track id; each is its item's label whatever the
    votes say (ids not in ``shares``, items not seen now, are ignored).
    ``from_distributions``: the track ids whose shares come from the reader's
    distributions (see :func:`candidates`)."""
    fixed = {key: label for key, label in (fixed or {}).items() if key in shares}
    labels: dict[int, str] = {key: max(s.items(), key=lambda kv: kv[1])[0]
                              for key, s in shares.items()}
    labels.update(fixed)
    options: dict[int, list[tuple[str, float]]] = {
        k: [(fixed[k], 1.0)] if k in fixed
        else candidates(s, from_distributions=k in from_distributions)
        for k, s in shares.items()}
    problems: list[str] = []
    for meld in melds:
        if len(meld) < 2:
            continue
        choice_lists = [options[k] for k in meld]
        size = math.prod(len(c) for c in choice_lists)
        if size > MAX_COMBINATIONS:
            # too many: keep the top two candidates of each item
            choice_lists = [c[:2] for c in choice_lists]
        best: tuple[float, tuple[str, ...]] | None = None
        for combo in itertools.product(*choice_lists):
            names = tuple(lab for lab, _ in combo)
            score = sum(math.log(max(s, 1e-6)) for _, s in combo)
            if _meld_valid(variant, names):
                score += VALID_MELD_BONUS
            if best is None or score > best[0] + 1e-12:
                best = (score, names)
        assert best is not None
        for key, lab in zip(meld, best[1], strict=True):
            labels[key] = lab
    problems.extend(_enforce_copies(variant, labels, options, shares, melds, set(fixed)))
    return Reading(labels, tuple(problems))


def _limit(variant: Variant, label: str) -> int:
    return variant.joker_count if label == "JK" else variant.copies_of_each


def _enforce_copies(variant: Variant, labels: dict[int, str],
                    options: Mapping[int, list[tuple[str, float]]],
                    shares: Mapping[int, Mapping[str, float]],
                    melds: Sequence[Sequence[int]], fixed: set[int]) -> list[str]:
    problems: list[str] = []
    meld_of = {k: tuple(m) for m in melds for k in m}
    for label, count in sorted(Counter(labels.values()).items()):
        extra = count - _limit(variant, label)
        if extra <= 0:
            continue
        # the least voted give way first; a label a person gave never does
        holders = sorted((k for k, lab in labels.items() if lab == label and k not in fixed),
                         key=lambda k: shares[k].get(label, 0.0))
        if len(holders) < extra:  # people gave this label more often than it exists
            problems.append(
                f"{count} copies of {label} seen but {variant.name} has "
                f"{_limit(variant, label)}")
            continue
        for key in holders[:extra]:
            moved = False
            for alternative, _ in options[key]:
                if alternative == label:
                    continue
                used = sum(1 for lab in labels.values() if lab == alternative)
                if used >= _limit(variant, alternative):
                    continue
                meld = meld_of.get(key)
                if meld is not None and _meld_valid(variant, [labels[m] for m in meld]):
                    trial = [alternative if m == key else labels[m] for m in meld]
                    if not _meld_valid(variant, trial):
                        continue  # would break a legal meld: rather report
                labels[key] = alternative
                moved = True
                break
            if not moved:
                problems.append(
                    f"{count} copies of {label} seen but {variant.name} has "
                    f"{_limit(variant, label)}")
                break
    return problems
