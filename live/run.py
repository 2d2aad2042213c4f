"""``tabletop run``: Source -> Detector -> TableWatcher -> Game -> bus -> JSONL.

The heavy parts (OpenCV sources, the detection model, the watcher) are
imported only when a camera or video is watched.  ``scenario:FILE.json`` as
the source replays a scenario's snapshots and button presses with no camera
and no model: a demo and a test of everything after the watcher.

Corrections from the panel (:mod:`tabletop.live.corrections`) wait in the inbox that
goes with the bus; the pipeline (:class:`tabletop.live.pipeline.Pipeline`) applies them
between frames, in its own thread like everything else that touches the watcher and the
game: the watcher pins the corrected label and hands back the corrected table with the
items that now read differently; the game first swaps those items wherever it remembers
them (an item laid in an earlier turn is in its start-of-turn table too, so the
correction is no play) and then takes the corrected table at once as a committed
snapshot. The panel's buttons and the terminal's keys (:mod:`tabletop.live.actions`: End
turn, I'm out, Undo, the timer, Next round, a typed rack) come through the same inbox
and are applied there too. When the source ends the inbox is closed, so the panel stops
waiting for an answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabletop.engine.scenario import TableStep
from tabletop.engine.variants import Variant
from tabletop.live.bus import Event, EventBus
from tabletop.live.corrections import Inbox, find_inbox
from tabletop.live.events import JsonlWriter
from tabletop.live.game import Game, GameOptions
from tabletop.live.pipeline import Pipeline
from tabletop.live.scenario import apply_step, game_options, load_scenario
from tabletop.live.stages import Detector, Opening, Watcher
from tabletop.live.status import StatusLine

if TYPE_CHECKING:
    from tabletop.vision.detector import DetectorSettings

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
             notice: Callable[[str], object] | None = None,
             too_far: Callable[[float], object] | None = None) -> Any:
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
                         notice=notice, too_far=too_far)


@dataclass(frozen=True)
class Reading:
    """How a camera's or video's frames become a table: the stages before the game.

    ``detector`` and ``watcher`` may be given (tests, benches), else the project's model
    (``model``, run as ``settings`` say; None: the shipped model and its defaults) and
    a :class:`tabletop.live.table_view.TableView` made from ``table`` (default: look for
    the markers, else the whole frame) are used.  The model looks only where the table
    changed (:class:`tabletop.vision.incremental.IncrementalDetector`); ``every_frame``
    runs it on every whole frame instead.  ``reconnect_for_s``: how long a camera or
    stream that dropped out is tried again before the run ends."""

    model: str | Path | None = None
    settings: DetectorSettings | None = None
    detector: Detector | None = None
    watcher: Watcher | None = None
    table: TableSetup | None = None
    every_frame: bool = False
    reconnect_for_s: float = 120.0


@dataclass(frozen=True)
class Listeners:
    """Who hears the game and sees the camera: the stages after it.

    ``bus``: the game's events go there (default: a bus of the run's own) and from it to
    ``on_event``, the JSON-lines file ``events_jsonl``, the terminal's ``status`` line
    (told of every frame, event, notice and the camera's state too) and the scoring
    board at ``board_url``; ``frame_path``: the panel's camera view, written at most
    twice a second; ``on_source``: told each change of the camera's state
    (``live.sources.SourceStatus``, from the camera's thread), as the panel shows it;
    ``on_too_far``: told once that card indices are left unread as too small (their
    median length, pixels), as the panel shows it."""

    bus: EventBus | None = None
    on_event: Callable[[Event], None] | None = None
    events_jsonl: str | Path | None = None
    status: StatusLine | None = None
    board_url: str | None = None
    frame_path: str | Path | None = None
    on_source: Callable[[Any], object] | None = None
    on_too_far: Callable[[float], object] | None = None


def run(
    source: str,
    variant: Variant,
    players: Sequence[str],
    *,
    reading: Reading | None = None,
    listeners: Listeners | None = None,
    options: GameOptions | None = None,
    corrections: Inbox | None = None,
    keep_corrections: Path | None = None,
    events_after: int = 0,
) -> RunSummary:
    """Watch ``source`` until it ends (headless): its frames read as ``reading`` says, the
    game played by ``options``, its events told to ``listeners``.  The source is opened
    before the model is loaded, so a camera that is not there fails at once.
    ``corrections``: the panel's (default: the inbox ``start_panel`` made for the bus);
    ``keep_corrections``: the annotations file the panel's corrections are kept in for
    ``tabletop adapt`` (:func:`keep_correction`).  ``events_after``: the ``seq`` of the
    last event of the match a resumed run goes on with; its events are numbered on from
    there."""
    reading = reading or Reading()
    listeners = listeners or Listeners()
    detector, watcher = reading.detector, reading.watcher
    status, on_event, on_source = listeners.status, listeners.on_event, listeners.on_source
    events_jsonl, board_url, frame_path = (
        listeners.events_jsonl, listeners.board_url, listeners.frame_path)
    bus = listeners.bus or EventBus()
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
            snapshots = sum(1 for s in scenario.steps if isinstance(s, TableStep))
            return RunSummary(published[0], 0, snapshots)
        told = [f for f in (status.on_source if status else None, on_source) if f]

        def on_status(source_status: Any) -> None:
            for listener in told:
                listener(source_status)

        # OpenCV and the model load only when a camera or video is watched
        from tabletop.live.sources import open_source

        frames = open_source(source, on_status=on_status,
                             reconnect_for_s=reading.reconnect_for_s)
        # closed on every way out, a failed open too: its threads stop and release
        # the capture before the process ends (an OpenCV call that returns while the
        # interpreter finalises aborts the process)
        try:
            if isinstance(frames, Opening):
                frames.open()  # a camera that is not there fails now, before the model loads
            if detector is None:
                from tabletop.vision.detector import Detector as ModelDetector
                from tabletop.vision.incremental import IncrementalDetector

                # fails with ModelError (one line, exit 2) while no trained model exists
                found = ModelDetector(reading.model, reading.settings)
                detector = (found if reading.every_frame or found.reader is None
                            else IncrementalDetector(found))
            if watcher is None:
                watcher = (reading.table or TableSetup()).view(
                    variant, len(players), status.notice if status is not None else None,
                    listeners.on_too_far)
            game = Game(variant, players, bus, options=options)
            game.events.seq = events_after
            watched = Pipeline(
                frames, detector, watcher, game, between_frames=between_frames,
                on_frame=write_frame, corrections=corrections, keep_corrections=keep_corrections,
                on_detections=(lambda found: status.on_frame(len(found))) if status else None,
            ).run()
        finally:
            frames.close()
        return RunSummary(published[0], watched.frames, watched.snapshots)
    finally:
        if writer is not None:
            writer.close()
        if link is not None:
            link.close()
        if board is not None:
            board.close()
