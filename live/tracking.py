"""Tracking: each physical item keeps one id across frames, its label decided by evidence.

``Tracker.update(detections, t) -> detections`` (the pipeline's stage form)
returns the same detections with ``track_ids`` set.  Matching is greedy on a
score of box overlap (IoU) and centre distance, kind by kind; a track is
*confirmed* after ``confirm_frames`` hits and kept through ``keep_lost_s`` of
not being seen (a hand over it), then dropped.

Its label is the one with the most *evidence*: each label's log-probability
summed over the frames the item was detected lying still (a moving item's crop
is blurred), from the reader's distributions (``Detections.alternatives``).  A
probability is floored at ``evidence_floor``, so one bad frame costs a label a
bounded amount; a label missing from a frame's distribution (its top labels)
counts with half the least listed probability (:data:`UNLISTED_SHARE`).
Older frames fade (``evidence_decay`` a frame; 1 sums them all alike): the view
of an item lying still changes too (a card laid over its index, a joker
exchanged in place), and the reading then follows in a few frames rather than
in as many as the item lay there.  Detections without distributions (the
oracle, hand-made ones) vote instead: the label with the most
confidence-weighted votes wins, old votes fading (``vote_decay`` a frame).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tabletop.vision.detections import NONE_LABEL, Detections, iou_matrix
from tabletop.vision.labels import Kind

FloatArray = npt.NDArray[np.float64]


@dataclass
class Track:
    track_id: int
    kind: Kind
    box: FloatArray
    first_t: float
    last_t: float
    hits: int = 1
    confirmed: bool = False
    votes: dict[str, float] = field(default_factory=dict)
    """Confidence-weighted votes for the top labels, old ones fading: the label where
    there is no evidence."""
    evidence: dict[str, float] = field(default_factory=dict)
    """Per label, its floored log-probabilities summed over the frames the item was
    seen still, older ones fading (see the module's docstring); empty until one such
    frame came with the reader's distribution."""
    evidence_weight: float = 0.0
    """What the frames the evidence sums weigh together: each 1 when added, then
    fading as the evidence does (with no fading, their number)."""
    unlisted_evidence: float = 0.0
    """The evidence a label listed in none of those frames would have (see
    :data:`UNLISTED_SHARE`): what a label new to the track starts from."""
    still_since: float = 0.0
    """When the item last moved more than the tracker's ``still_px``."""
    anchor: tuple[float, float] = (0.0, 0.0)
    """Its centre when it came to rest; movement is measured from here, so slow creep counts."""

    @property
    def centre(self) -> tuple[float, float]:
        return (float(self.box[0] + self.box[2]) / 2, float(self.box[1] + self.box[3]) / 2)

    @property
    def size(self) -> tuple[float, float]:
        return (float(self.box[2] - self.box[0]), float(self.box[3] - self.box[1]))

    @property
    def label(self) -> str:
        """The label with the most evidence, or without evidence the most votes."""
        weights = self.evidence or self.votes
        return max(weights.items(), key=lambda kv: (kv[1], kv[0]))[0]

    def shares(self) -> dict[str, float]:
        """Each label's probability, largest first: the per-frame distributions'
        normalised product (a softmax of the evidence), or without evidence each
        label's share of the votes."""
        if self.evidence:
            best = max(self.evidence.values())
            weights = {k: math.exp(v - best) for k, v in self.evidence.items()}
        else:
            weights = self.votes
        total = sum(weights.values()) or 1.0
        return dict(sorted(((k, v / total) for k, v in weights.items()),
                           key=lambda kv: -kv[1]))

    def frame_shares(self) -> dict[str, float]:
        """Each label's probability as one frame of the item gives it, largest first: the
        normalised geometric mean of its frames' distributions (a softmax of the mean
        evidence), or without evidence each label's share of the votes.  The frames of
        an item lying still see it alike, so their product (:meth:`shares`) overstates
        how sure they are together; this is what the rules weigh against each other."""
        if not self.evidence or self.evidence_weight <= 0.0:
            return self.shares()
        mean = {k: v / self.evidence_weight for k, v in self.evidence.items()}
        best = max(mean.values())
        weights = {k: math.exp(v - best) for k, v in mean.items()}
        total = sum(weights.values())
        return dict(sorted(((k, v / total) for k, v in weights.items()),
                           key=lambda kv: -kv[1]))

    @property
    def confidence(self) -> float:
        return self.shares()[self.label]

    def lost(self, t: float) -> bool:
        return self.last_t < t


EVIDENCE_FLOOR = 1e-4
"""The least probability a frame gives a label in a track's evidence."""
UNLISTED_SHARE = 0.5
"""A frame's distribution lists the reader's most probable labels (its top five); a
label it leaves out had at most the least listed one's probability, and counts with
this share of it (never under the floor).  With the floor instead, an R7 tile that
the reader read R1 with R7 fifth or sixth lost its second-best standing in the
frames that cut it, and the rules could no longer read the run it completes."""
EVIDENCE_DECAY = 0.85
"""How much of a track's evidence each later still frame keeps, as much as the votes
keep.  A card index of the rendered Rommé game (tests/test_live_video.py) read 9S at
about 0.8 for 15 still frames, then 9C at about 0.7 as its view changed: it reads 9C
from the 5th such frame on, as by votes; summed without fading it still read 9S 15
frames later, and the table held a false meld."""


class Tracker:
    def __init__(self, *, confirm_frames: int = 3, keep_lost_s: float = 0.6,
                 min_iou: float = 0.2, max_centre_shift: float = 0.6, vote_decay: float = 0.85,
                 still_px: float = 3.0, smoothing: float = 0.5, fps_hint: float = 10.0,
                 evidence_floor: float = EVIDENCE_FLOOR,
                 evidence_decay: float = EVIDENCE_DECAY) -> None:
        """``max_centre_shift``: the farthest a match may move, in box diagonals, per frame.
        ``smoothing``: share of the old box kept (detector jitter averaged away).
        ``evidence_floor`` and ``evidence_decay``: see the module's docstring."""
        if not 0.0 < evidence_floor < 1.0:
            raise ValueError(f"evidence floor must be in (0, 1), not {evidence_floor!r}")
        if not 0.0 < evidence_decay <= 1.0:
            raise ValueError(f"evidence decay must be in (0, 1], not {evidence_decay!r}")
        self.confirm_frames = confirm_frames
        self.keep_lost_s = keep_lost_s
        self.min_iou = min_iou
        self.max_centre_shift = max_centre_shift
        self.vote_decay = vote_decay
        self.evidence_floor = evidence_floor
        self.evidence_decay = evidence_decay
        self.still_px = still_px
        self.smoothing = smoothing
        self.fps_hint = fps_hint
        self.tracks: dict[int, Track] = {}
        self._next_id = 1
        self._frame = 0
        self.t = 0.0
        self.births = 0
        self.deaths = 0
        self.last_change_t = float("-inf")
        """When a confirmed track last appeared, vanished or changed its label."""
        self._logs: dict[int, tuple[Mapping[str, float], dict[str, float], float]] = {}
        self._logs_now: dict[int, tuple[Mapping[str, float], dict[str, float], float]] = {}
        """The log-probabilities of the last frame's readings (and this frame's), by the
        reading's identity: the object is kept with them, so an id is never another's."""

    # --- the stage -------------------------------------------------------------
    def update(self, detections: Detections, t: float | None = None) -> Detections:
        t = float(self._frame / self.fps_hint) if t is None else float(t)
        self._frame += 1
        self.t = t
        ids = np.zeros(len(detections), np.int64)
        taken: set[int] = set()
        self._logs_now = {}
        for kind in sorted(set(detections.kinds)):
            rows = [i for i, k in enumerate(detections.kinds) if k == kind]
            tracks = [tr for tr in self.tracks.values() if tr.kind == kind]
            pairs = self._pairs(detections.boxes[rows], tracks)
            used_rows: set[int] = set()
            for _, r, c in pairs:
                if r in used_rows or tracks[c].track_id in taken:
                    continue
                used_rows.add(r)
                track = tracks[c]
                taken.add(track.track_id)
                i = rows[r]
                self._hit(track, detections, i, t)
                ids[i] = track.track_id
            for r, i in enumerate(rows):
                if r not in used_rows:
                    track = self._new(detections, i, t)
                    ids[i] = track.track_id
        for track in list(self.tracks.values()):
            if track.track_id in taken or (track.last_t == t and track.hits == 1):
                continue
            if t - track.last_t > self.keep_lost_s or not track.confirmed:
                # an unconfirmed track is a flicker; drop it at once
                del self.tracks[track.track_id]
                if track.confirmed:
                    self.deaths += 1
                    self.last_change_t = t
        self._logs = self._logs_now
        return detections.with_track_ids(ids)

    def _pairs(self, boxes: FloatArray, tracks: list[Track]) -> list[tuple[float, int, int]]:
        if not len(boxes) or not tracks:
            return []
        old = np.array([tr.box for tr in tracks])
        iou = iou_matrix(boxes, old)
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        old_centres = (old[:, :2] + old[:, 2:]) / 2
        diag = np.hypot(old[:, 2] - old[:, 0], old[:, 3] - old[:, 1])
        shift = np.linalg.norm(centres[:, None, :] - old_centres[None, :, :], axis=2) / diag[None]
        pairs = []
        for r, c in zip(*np.nonzero((iou >= self.min_iou) | (shift <= self.max_centre_shift)),
                        strict=True):
            # overlap first; centre distance breaks ties and catches small fast boxes
            score = float(iou[r, c]) + 0.5 * max(0.0, 1.0 - float(shift[r, c]))
            pairs.append((score, int(r), int(c)))
        pairs.sort(key=lambda p: -p[0])
        return pairs

    def _new(self, detections: Detections, i: int, t: float) -> Track:
        track = Track(self._next_id, detections.kinds[i], detections.boxes[i].copy(), t, t,
                      votes={detections.labels[i]: float(detections.confidences[i]) + 1e-6},
                      still_since=t)
        track.anchor = track.centre
        # a new item has not moved yet: the tracker counts it still from here
        self._add_evidence(track, detections, i)
        self._next_id += 1
        if self.confirm_frames <= 1:
            track.confirmed = True
            self.births += 1
            self.last_change_t = t
        self.tracks[track.track_id] = track
        return track

    def _hit(self, track: Track, detections: Detections, i: int, t: float) -> None:
        old_label = track.label
        a = self.smoothing
        track.box = a * track.box + (1 - a) * detections.boxes[i]
        for label in track.votes:
            track.votes[label] *= self.vote_decay
        label = detections.labels[i]
        track.votes[label] = track.votes.get(label, 0.0) + float(detections.confidences[i]) + 1e-6
        track.hits += 1
        track.last_t = t
        cx, cy = track.centre
        if np.hypot(cx - track.anchor[0], cy - track.anchor[1]) > self.still_px:
            track.anchor = (cx, cy)
            track.still_since = t
        else:
            self._add_evidence(track, detections, i)
        if not track.confirmed and track.hits >= self.confirm_frames:
            track.confirmed = True
            self.births += 1
            self.last_change_t = t
        elif track.confirmed and track.label != old_label:
            self.last_change_t = t

    def _add_evidence(self, track: Track, detections: Detections, i: int) -> None:
        """Add item ``i``'s distribution, if it has one, to ``track``'s evidence."""
        if detections.alternatives is None:
            return
        decay = self.evidence_decay
        distribution = detections.alternatives[i]
        known = self._logs.get(id(distribution))
        if known is not None and known[0] is distribution:
            # a still table's detector gives the same reading frame after frame
            seen, unlisted = known[1], known[2]
        else:
            seen = _log_probabilities(distribution, self.evidence_floor)
            unlisted = math.log(max(self.evidence_floor, UNLISTED_SHARE * min(
                (p for label, p in distribution.items() if label != NONE_LABEL),
                default=0.0)))
        self._logs_now[id(distribution)] = (distribution, seen, unlisted)
        evidence = track.evidence
        for label in evidence:
            evidence[label] = decay * evidence[label] + seen.get(label, unlisted)
        for label in seen.keys() - evidence.keys():
            # a label new to the track was unlisted in every frame summed before
            evidence[label] = decay * track.unlisted_evidence + seen[label]
        track.unlisted_evidence = decay * track.unlisted_evidence + unlisted
        track.evidence_weight = decay * track.evidence_weight + 1.0

    # --- reading ---------------------------------------------------------------
    def confirmed(self) -> list[Track]:
        return sorted((tr for tr in self.tracks.values() if tr.confirmed),
                      key=lambda tr: tr.track_id)

    def missing(self, grace: float = 0.0) -> list[Track]:
        """Confirmed tracks not seen for more than ``grace`` seconds (under a hand, or gone).

        A grace of a few frames keeps one missed detection of an item lying still from
        counting as a hand over the table."""
        return [tr for tr in self.confirmed() if self.t - tr.last_t > grace + 1e-9]

    def last_activity_t(self) -> float:
        """When a confirmed item last appeared, vanished, moved or changed label."""
        moved = max((tr.still_since for tr in self.confirmed()), default=float("-inf"))
        return max(moved, self.last_change_t)


def _log_probabilities(distribution: Mapping[str, float], floor: float) -> dict[str, float]:
    """A distribution's labels (not ``none``) with their floored log-probabilities."""
    return {label: math.log(max(p, floor)) for label, p in distribution.items()
            if label != NONE_LABEL}


def id_switches(truth_ids: Iterable[Iterable[int]], track_ids: Iterable[Iterable[int]]) -> int:
    """How often a true item's track id changed between frames (a tracker quality figure)."""
    last: dict[int, int] = {}
    switches = 0
    for truths, tracks in zip(truth_ids, track_ids, strict=True):
        for truth, track in zip(truths, tracks, strict=True):
            if truth in last and last[truth] != track:
                switches += 1
            last[truth] = track
    return switches
