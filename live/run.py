"""``tabletop run``: Source -> Detector -> TableWatcher -> Game -> bus -> JSONL.

The heavy parts (OpenCV sources, the detection model, the watcher) are
imported only when a camera or video is watched.  ``scenario:FILE.json`` as
the source replays a scenario's snapshots and button presses with no camera
and no model: a demo and a test of everything after the watcher.

Corrections from the panel (:mod:`tabletop.live.corrections`) wait in the inbox that
goes with the bus; ``watch`` applies them between frames, in its own thread
like everything else that touches the watcher and the game: the watcher pins
the corrected label and hands back the corrected table with the items that now
read differently; the game first swaps those items wherever it remembers them
(an item laid in an earlier turn is in its start-of-turn table too, so the
correction is no play) and then takes the corrected table at once as a
committed snapshot.  The panel's buttons and the terminal's keys
(:mod:`tabletop.live.actions`: End turn, I'm out, Undo, the timer, Next round, a typed
rack) come through the same inbox and are applied there too.  When the source
ends the inbox is closed, so the panel stops waiting for an answer.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabletop.engine.variants import Variant
from tabletop.live.actions import apply_pending_actions
from tabletop.live.bus import Event, EventBus
from tabletop.live.corrections import Correction, Inbox, find_inbox
from tabletop.live.events import JsonlWriter
from tabletop.live.game import Game, GameOptions, ItemFix
from tabletop.live.scenario import apply_step, game_options, load_scenario
from tabletop.live.snapshot import TableSnapshot
from tabletop.live.status import StatusLine

if TYPE_CHECKING:
    from tabletop.vision.detector import DetectorSettings

log = logging.getLogger(__name__)

SCENARIO_PREFIX = "scenario:"


class RunError(ValueError):
    """A run that cannot start: bad players, an unreadable source, no model."""


@dataclass(frozen=True)
class RunSummary:
    events: int
    frames: int
    snapshots: int

    def to_json(self) -> dict[str, int]:
        return {"events": self.events, "frames": self.frames, "snapshots": self.snapshots}


def parse_players(text: str) -> tuple[str, ...]:
    players = tuple(name.strip() for name in text.split(","))
    if len(players) < 2 or not all(players):
        raise RunError(f"--players needs two or more names separated by commas, not {text!r}")
    if len(set(players)) != len(players):
        raise RunError(f"player names must differ: {text!r}")
    return players


def _frame_parts(frame: Any) -> tuple[float, Any]:
    """A source yields live.sources.Frame (t, image, index) or plain (t, image) pairs."""
    if hasattr(frame, "image") and hasattr(frame, "t"):
        return float(frame.t), frame.image
    t, image = frame
    return float(t), image


class FrameWriter:
    """The panel's camera view: the latest frame as a JPEG, at most twice a second (on the
    video's clock), replaced atomically so the panel never serves half a file."""

    def __init__(self, path: str | Path, every_s: float = 0.5) -> None:
        self.path = Path(path)
        self.every_s = every_s
        self.last_t = float("-inf")

    def __call__(self, t: float, image: Any) -> None:
        if t - self.last_t < self.every_s:
            return
        import cv2

        partial = self.path.with_suffix(".part.jpg")
        if cv2.imwrite(str(partial), image, [cv2.IMWRITE_JPEG_QUALITY, 80]):
            partial.replace(self.path)
            self.last_t = t


@dataclass(frozen=True)
class TableSetup:
    """How the run finds the table: ``tabletop run``'s ``--calibration``, ``--zones``,
    ``--table-mm``, ``--marker-mm`` and ``--no-markers`` (see :mod:`tabletop.live.table_view`)."""

    calibration: Path | None = None
    zones: Path | None = None
    table_mm: tuple[float, float] | None = None
    marker_mm: float = 60.0
    find_markers: bool = True

    def view(self, variant: Variant, players: int,
             notice: Callable[[str], object] | None = None) -> Any:
        """The :class:`tabletop.live.table_view.TableView` these settings describe; a calibration
        or zone file that cannot be read raises its one-line ``ValueError``."""
        from tabletop.calibration.auto import TableFinder
        from tabletop.calibration.table import TableCalibration
        from tabletop.calibration.zones import ZoneLayout
        from tabletop.live.table_view import TableView

        calibration = TableCalibration.load(self.calibration) if self.calibration else None
        zones = ZoneLayout.load(self.zones) if self.zones else None
        finder = (TableFinder(table_mm=self.table_mm, marker_mm=self.marker_mm)
                  if self.find_markers else None)
        return TableView(variant, players, calibration=calibration, zones=zones, finder=finder,
                         notice=notice)


class _Counted:
    """A detector that tells the status line how many items each frame held; the
    detector's other parts (``set_time``, ``look_again``) pass through."""

    def __init__(self, detector: Callable[[Any], Any], status: StatusLine) -> None:
        self.detector = detector
        self.status = status

    def __call__(self, image: Any) -> Any:
        detections = self.detector(image)
        self.status.on_frame(len(detections))
        return detections

    def __getattr__(self, name: str) -> Any:
        return getattr(self.detector, name)


def apply_correction(watcher: Any, game: Game, correction: Correction) -> Any:
    """A person's correction through the live table: ``watcher`` (a
    :class:`tabletop.live.watcher.TableWatcher`) pins it and reads the committed table again, the
    game swaps each item that now reads differently wherever it remembers it, then takes
    the corrected table.  Returns the watcher's :class:`tabletop.live.watcher.Corrected`; its
    CorrectionError (refused, nothing changed) passes through."""
    corrected = watcher.correct(correction)
    fixes = [ItemFix(c.before, c.after, c.row, c.index) for c in corrected.changes]
    game.correct_items(fixes, corrected.snapshot.t, who=correction.who)
    game.update(corrected.snapshot)
    return corrected


def keep_correction(corrected: Any, annotations: Path) -> bool:
    """Append what a person's correction teaches (the item's box in the frame of the
    table they corrected, and its label) to ``annotations`` for ``tabletop adapt
    --corrections``.  False, with a warning logged and the game untouched, when it
    cannot be kept (no frame, a full disk)."""
    if corrected.frame is None:
        return False
    adapting = importlib.import_module("tabletop.vision.adapt")
    item = adapting.CorrectedItem(corrected.frame, corrected.box, str(corrected.after),
                                  corrected.kind)
    try:
        adapting.corrections_to_jsonl([item], annotations)
    except (OSError, ValueError) as error:
        log.warning("the correction was applied but not kept for 'tabletop adapt': %s", error)
        return False
    return True


def watch(
    frames: Iterable[Any],
    detector: Callable[[Any], Any],
    watcher: Any,
    game: Game,
    between_frames: Callable[[Game, float], object] | None = None,
    on_frame: Callable[[float, Any], object] | None = None,
    corrections: Inbox | None = None,
    keep_corrections: Path | None = None,
    on_snapshot: Callable[[TableSnapshot], object] | None = None,
) -> tuple[int, int]:
    """Feed every frame through detector and watcher; each committed snapshot goes to
    the game (and, just before, to ``on_snapshot``: a replay's record of when each was
    committed), and ``between_frames`` (the board's queued button presses) runs after
    each frame, so the game is only ever touched from this loop.  ``corrections``
    (default: the inbox of the game's bus, if the panel or the keys made one): its
    corrections and actions are applied after each frame too, and it is closed when
    the frames end.  ``keep_corrections``: the annotations file each correction's item
    and frame are added to (:func:`keep_correction`).  Returns (frames, snapshots)."""
    inbox = find_inbox(game.events.bus) if corrections is None else corrections
    count = snapshots = 0

    def take(correction: Correction) -> None:
        nonlocal snapshots
        corrected = apply_correction(watcher, game, correction)
        snapshots += 1
        if keep_corrections is not None:
            keep_correction(corrected, keep_corrections)

    # an incremental detector decides by the frames' own clock (a replay's video time)
    set_time = getattr(detector, "set_time", None)
    with inbox.serving() if inbox is not None else contextlib.nullcontext():
        for frame in frames:
            t, image = _frame_parts(frame)
            count += 1
            if on_frame is not None:
                on_frame(t, image)
            if set_time is not None:
                set_time(t)
            snapshot = watcher.update(t, image, detector(image))
            take_camera_events = getattr(watcher, "take_camera_events", None)
            if take_camera_events is not None:
                for message in take_camera_events():
                    game.camera_event(t, message)
            if snapshot is not None:
                snapshots += 1
                if on_snapshot is not None:
                    on_snapshot(snapshot)
                game.update(snapshot)
            if between_frames is not None:
                between_frames(game, t)
            if inbox is not None:
                inbox.apply_pending(take, Correction)
                apply_pending_actions(inbox, game, t)
    return count, snapshots


def run(
    source: str,
    variant: Variant,
    players: Sequence[str],
    *,
    events_jsonl: str | Path | None = None,
    model: str | Path | None = None,
    detector_settings: DetectorSettings | None = None,
    bus: EventBus | None = None,
    options: GameOptions | None = None,
    detector: Callable[[Any], Any] | None = None,
    watcher: Any = None,
    on_event: Callable[[Event], None] | None = None,
    board_url: str | None = None,
    frame_path: str | Path | None = None,
    corrections: Inbox | None = None,
    table: TableSetup | None = None,
    status: StatusLine | None = None,
    reconnect_for_s: float = 120.0,
    on_source: Callable[[Any], object] | None = None,
    keep_corrections: Path | None = None,
    every_frame: bool = False,
    events_after: int = 0,
) -> RunSummary:
    """Watch ``source`` until it ends (headless); ``detector`` and ``watcher`` may be
    injected (tests), else the project's model and TableWatcher are used.
    ``corrections``: the panel's (default: the inbox ``start_panel`` made for ``bus``).
    ``detector_settings``: how the project's model runs (None: its defaults).
    ``table``: the calibration, zones and marker search the watcher is built with
    (:class:`tabletop.live.table_view.TableView`; default: look for the markers, else the whole
    frame).  ``status``: the terminal's status line, told of
    every frame, event, notice and the camera's state.  The source is opened before the
    model is loaded, so a camera that is not there fails at once; ``reconnect_for_s``:
    how long a camera or stream that dropped out is tried again before the run ends;
    ``on_source``: told each change of the camera's state (``live.sources.SourceStatus``,
    from the camera's thread), as the panel shows it; ``keep_corrections``: the
    annotations file the panel's corrections are kept in for ``tabletop adapt``
    (:func:`keep_correction`).  The project's model looks only where the table changed
    (:class:`tabletop.vision.incremental.IncrementalDetector`); ``every_frame`` runs it on every
    whole frame instead.  ``events_after``: the ``seq`` of the last event of the match
    a resumed run goes on with; its events are numbered on from there."""
    bus = bus or EventBus()
    published: list[int] = [0]

    def count(event: Event) -> None:
        published[0] += 1

    bus.subscribe(count)
    if status is not None:
        bus.subscribe(status.on_event)
    if on_event is not None:
        bus.subscribe(on_event)
    writer = JsonlWriter(events_jsonl) if events_jsonl is not None else None
    if writer is not None:
        bus.subscribe(writer)
    board = link = None
    if board_url is not None:
        # the board is optional: unplugged or absent, the game goes on and the driver
        # keeps trying to reach it
        from tabletop.device.driver import Board
        from tabletop.live.board_link import BoardLink

        board = Board(board_url)
        link = BoardLink(board, bus, players)

    def between_frames(game: Game, t: float) -> None:
        if link is not None:
            link.apply_pending(game, t)

    write_frame = FrameWriter(frame_path) if frame_path is not None else None

    try:
        if source.startswith(SCENARIO_PREFIX):
            # no camera, so nothing to correct: the panel only fixes its own display
            inbox = corrections if corrections is not None else find_inbox(bus)
            if inbox is not None:
                inbox.close()
            scenario = load_scenario(source[len(SCENARIO_PREFIX) :])
            # the scenario sets how its game is played; a resumed match's rounds go on
            played = game_options(scenario)
            if options is not None:
                played = replace(played, earlier_rounds=options.earlier_rounds)
            game = Game(variant, players, bus, options=played)
            game.events.seq = events_after
            for step in scenario.steps:
                apply_step(game, step)
                between_frames(game, step.t)
            snapshots = sum(1 for s in scenario.steps if hasattr(s, "melds"))
            return RunSummary(published[0], 0, snapshots)
        listeners = [f for f in (status.on_source if status else None, on_source) if f]

        def on_status(source_status: Any) -> None:
            for listener in listeners:
                listener(source_status)

        frames = importlib.import_module("tabletop.live.sources").open_source(
            source, on_status=on_status, reconnect_for_s=reconnect_for_s)
        if hasattr(frames, "open"):
            frames.open()  # a camera that is not there fails now, before the model loads
        try:
            if detector is None:
                # fails with ModelError (one line, exit 2) while no trained model exists
                detector = importlib.import_module("tabletop.vision.detector").Detector(
                    model, detector_settings)
                if not every_frame and getattr(detector, "reader", None) is not None:
                    detector = importlib.import_module(
                        "tabletop.vision.incremental").IncrementalDetector(detector)
            wired = detector
            if status is not None:
                detector = _Counted(detector, status)
            if watcher is None:
                watcher = (table or TableSetup()).view(
                    variant, len(players), status.notice if status is not None else None)
            if hasattr(watcher, "attach"):
                # a meld row's gap is looked at again before the meld is judged, and no
                # table is judged while the detector has a change to look at
                watcher.attach(wired)
            game = Game(variant, players, bus, options=options)
            game.events.seq = events_after
            count_frames, snapshots = watch(
                frames, detector, watcher, game, between_frames, write_frame, corrections,
                keep_corrections,
            )
        finally:
            frames.close()
        return RunSummary(published[0], count_frames, snapshots)
    finally:
        if writer is not None:
            writer.close()
        if link is not None:
            link.close()
        if board is not None:
            board.close()
