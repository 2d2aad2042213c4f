"""Reading the table: when to commit (stillness, no hand) and which labels to believe.

*When.*  A hand is not a detected class.  It shows as motion in the table
region (``MotionMeter``: the share of pixels that changed since the last
frame, on a small grey copy) and as tracked items vanishing under it.  A
snapshot is committed only when, for ``still_s`` seconds, the motion stayed
below ``motion_threshold``, no confirmed item moved, none is missing (under
a hand, or gone but not yet dropped) and none appeared, vanished or changed
label (``StillnessRule``).

*What.*  What the detector saw of each item (its track's shares: the
reader's distributions over the frames it lay still, or votes for the top labels
where there are none) is decoded with the rules (``resolve_labels``, through
:func:`tabletop.live.decoding.decode_table`): the most probable labelling of the whole table
in which every meld row is legal, no label is used more often than the material
has copies, and an item that has not moved keeps its label unless the evidence
against it is strong.  An item known by votes alone also gets the classic
confusions (a tile's 6 and 9) that votes cannot name.  A row with no legal reading
of reasonable probability is kept as read and, where that reading is doubtful,
reported in ``Reading.problems`` with its likeliest legal readings, never silently
made legal; so is a label seen more often than it exists.

A label a person gave (a correction on the panel, pinned by the watcher) is
``fixed``: it is that item's only candidate, so the other items of its meld
are chosen knowing it (a pinned 9 is never traded for a 6 that would make a
run of its neighbours' second choices), and the copy limit moves other items,
never a fixed one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

from tabletop.engine.variants import Variant
from tabletop.live.decoding import MIN_SHARE, Kept, LegalityCache, ReadingProblem, decode_table
from tabletop.vision.incremental import small_grey

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
        scale = self.width / frame.shape[1]
        grey = small_grey(frame, self.width)
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
CONFUSION_PRIOR = 0.05
"""Share given to a classic confusion the detector did not vote for (shares from
votes only: a reader's distribution gives the confusion its own probability)."""


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
    reading_problems: tuple[ReadingProblem, ...] = ()
    """The same problems with what was read and the alternatives."""


def resolve_labels(variant: Variant, shares: Mapping[int, Mapping[str, float]],
                   melds: Sequence[Sequence[int]],
                   fixed: Mapping[int, str] | None = None,
                   from_distributions: AbstractSet[int] = frozenset(),
                   kept: Mapping[int, Kept] | None = None,
                   legal: LegalityCache | None = None) -> Reading:
    """Labels for every track in ``shares``; ``melds`` are rows of track ids in table order
    (:func:`tabletop.live.decoding.decode_table` chooses them).

    ``fixed``: labels people gave, by track id; each is its item's label whatever the
    evidence says (ids not in ``shares``, items not seen now, are ignored).
    ``from_distributions``: the track ids whose shares come from the reader's
    distributions; the others (votes for top labels) get the classic confusions of
    their best label (see :func:`candidates`).  ``kept``: the labels (and their
    shares then) the last committed table gave the items that have not moved since."""
    widened = {key: s if key in from_distributions else dict(candidates(s, min_share=0.0,
                                                                         limit=len(s) or 1))
               for key, s in shares.items()}
    decoding = decode_table(variant, widened, melds, fixed=fixed, kept=kept, legal=legal)
    return Reading(decoding.labels, tuple(map(str, decoding.problems)), decoding.problems)
