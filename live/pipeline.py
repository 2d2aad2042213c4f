"""The live pipeline, assembled in one place: frames -> detector -> watcher -> game -> bus.

:class:`Pipeline` holds the stages (:mod:`tabletop.live.stages`) and runs them: each frame
goes through the detector and the watcher, each committed snapshot to the game, whose
events go out on its bus to whoever subscribed (the JSONL writer, the store, the panel,
the board, the status line).  Between frames it presses the buttons that are due (a
rendered game's scripted presses), runs ``between_frames`` (the board's queued presses)
and applies the corrections and actions waiting in the inbox, so the game is only ever
touched from the pipeline's own thread.  ``tabletop run``, the replays of rendered games,
the benches and the tests all build one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabletop.engine.scenario import Press
from tabletop.live.actions import apply_pending_actions
from tabletop.live.corrections import Correction, Inbox, find_inbox
from tabletop.live.game import Game, ItemFix
from tabletop.live.scenario import apply_step
from tabletop.live.snapshot import TableSnapshot
from tabletop.live.stages import Attaching, CameraEvents, Clocked, Detector, Settling, Watcher

if TYPE_CHECKING:
    from tabletop.live.watcher import Corrected
    from tabletop.vision.detections import Detections

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Watched:
    """What a run of the pipeline went through."""

    frames: int
    snapshots: int
    """Committed tables the game took (corrections included)."""
    committed: tuple[float, ...]
    """The time of each snapshot the watcher committed, in order."""


class _SettlingOnly:
    """A detector's word on settling without its second look."""

    def __init__(self, detector: Settling) -> None:
        self.settling = detector.settling


@dataclass
class Pipeline:
    """frames -> detector -> watcher -> game, run by :meth:`run` until the frames end.

    ``presses``: button presses (``engine.scenario.Press``) pressed at their video times,
    after the frame that reaches them.  ``between_frames(game, t)`` runs after each frame.
    ``on_frame(t, image)`` sees each frame first, ``on_detections`` what the detector
    found in it (the status line counts them), ``on_snapshot`` each committed table
    just before the game takes it.  ``corrections``: the inbox whose corrections and
    actions are applied between frames (default: the one that goes with the game's bus,
    if the panel or the keys made one); it is closed when the frames end.
    ``keep_corrections``: the annotations file each correction is kept in for
    ``tabletop adapt``.  ``second_look``: a watcher that attaches to the detector
    (:class:`~tabletop.live.stages.Attaching`) gets its second look at a meld's gap as
    well as its word on settling; without it, only the word on settling."""

    frames: Iterable[Any]
    detector: Detector
    watcher: Watcher
    game: Game
    presses: Sequence[Press] = ()
    between_frames: Callable[[Game, float], object] | None = None
    on_frame: Callable[[float, Any], object] | None = None
    on_detections: Callable[[Detections], object] | None = None
    on_snapshot: Callable[[TableSnapshot], object] | None = None
    corrections: Inbox | None = None
    keep_corrections: Path | None = None
    second_look: bool = True
    _pending: list[Press] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._pending = sorted(self.presses, key=lambda press: press.t)
        if isinstance(self.watcher, Attaching):
            if self.second_look:
                self.watcher.attach(self.detector)
            elif isinstance(self.detector, Settling):
                self.watcher.attach(_SettlingOnly(self.detector))

    def run(self) -> Watched:
        """Feed every frame through; returns what went through."""
        game, watcher, detector = self.game, self.watcher, self.detector
        inbox = find_inbox(game.events.bus) if self.corrections is None else self.corrections
        # an incremental detector decides by the frames' own clock (a replay's video time)
        clocked = detector if isinstance(detector, Clocked) else None
        camera = watcher if isinstance(watcher, CameraEvents) else None
        count = snapshots = 0
        committed: list[float] = []

        def take(correction: Correction) -> None:
            nonlocal snapshots
            corrected = apply_correction(watcher, game, correction)
            snapshots += 1
            if self.keep_corrections is not None:
                keep_correction(corrected, self.keep_corrections)

        with inbox.serving() if inbox is not None else contextlib.nullcontext():
            for frame in self.frames:
                t, image = frame_parts(frame)
                count += 1
                if self.on_frame is not None:
                    self.on_frame(t, image)
                if clocked is not None:
                    clocked.set_time(t)
                detections = detector(image)
                if self.on_detections is not None:
                    self.on_detections(detections)
                snapshot = watcher.update(t, image, detections)
                if camera is not None:
                    for message in camera.take_camera_events():
                        game.camera_event(t, message)
                if snapshot is not None:
                    snapshots += 1
                    committed.append(snapshot.t)
                    if self.on_snapshot is not None:
                        self.on_snapshot(snapshot)
                    game.update(snapshot)
                while self._pending and self._pending[0].t <= t + 1e-9:
                    apply_step(game, self._pending.pop(0))
                if self.between_frames is not None:
                    self.between_frames(game, t)
                if inbox is not None:
                    inbox.apply_pending(take, Correction)
                    apply_pending_actions(inbox, game, t)
        return Watched(count, snapshots, tuple(committed))


def frame_parts(frame: Any) -> tuple[float, Any]:
    """(t, image) of a source's frame, or of a (t, image) pair."""
    if hasattr(frame, "image") and hasattr(frame, "t"):
        return float(frame.t), frame.image
    t, image = frame
    return float(t), image


def apply_correction(watcher: Any, game: Game, correction: Correction) -> Corrected:
    """A person's correction through the live table: ``watcher`` (a
    :class:`tabletop.live.watcher.TableWatcher`) pins it and reads the committed table again, the
    game swaps each item that now reads differently wherever it remembers it, then takes
    the corrected table.  Returns the watcher's :class:`tabletop.live.watcher.Corrected`; its
    CorrectionError (refused, nothing changed) passes through."""
    corrected: Corrected = watcher.correct(correction)
    fixes = [ItemFix(c.before, c.after, c.row, c.index) for c in corrected.changes]
    game.correct_items(fixes, corrected.snapshot.t, who=correction.who)
    game.update(corrected.snapshot)
    return corrected


def keep_correction(corrected: Corrected, annotations: Path) -> bool:
    """Append what a person's correction teaches (the item's box in the frame of the
    table they corrected, and its label) to ``annotations`` for ``tabletop adapt
    --corrections``.  False, with a warning logged and the game untouched, when it
    cannot be kept (no frame, a full disk)."""
    if corrected.frame is None:
        return False
    from tabletop.vision.corrections import CorrectedItem, corrections_to_jsonl

    item = CorrectedItem(corrected.frame, corrected.box, str(corrected.after), corrected.kind)
    try:
        corrections_to_jsonl([item], annotations)
    except (OSError, ValueError) as error:
        _log.warning("the correction was applied but not kept for 'tabletop adapt': %s", error)
        return False
    return True


__all__ = ["Pipeline", "Watched", "apply_correction", "frame_parts", "keep_correction"]
