"""What ``tabletop run`` tells the person at the terminal while it watches, and at the end.

One status line on standard error: frames per second, items seen, whose turn it
is, the last event and the warnings so far, and the camera's state when it is
not simply live.  On a terminal the line is redrawn in place a few times a second;
into a file or a pipe a line is written every ``every_s`` seconds instead, so a
long video is never silent.  Notices (the table found, a camera dropping out)
are printed as lines of their own, once.  ``summary`` is the closing report.

Every method may be called from any thread (events come from the pipeline's loop,
the camera's state from its grabber thread, the redraw from a ticker thread);
one lock guards the state.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from tabletop.engine import events as ev
from tabletop.live.bus import Event
from tabletop.live.events import describe_event

WIDTH = 118
"""The status line is cut to this, so one line stays one line on a usual terminal."""


@dataclass
class RunTally:
    """What a run did, for its closing summary."""

    frames: int = 0
    events: int = 0
    warnings: int = 0
    rounds: list[ev.RoundScored] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    winner: str | None = None
    started: float = field(default_factory=time.monotonic)


class StatusLine:
    def __init__(self, players: Sequence[str], stream: IO[str], *,
                 interactive: bool | None = None, every_s: float | None = None,
                 event_notices: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``event_notices``: warnings and scored rounds get a line of their own (off where
        the caller prints every event readably already)."""
        self.players = tuple(players)
        self.event_notices = event_notices
        self.stream = stream
        self.interactive = stream.isatty() if interactive is None else interactive
        self.every_s = every_s if every_s is not None else (0.25 if self.interactive else 5.0)
        self.tally = RunTally(started=clock())
        self._clock = clock
        self._lock = threading.RLock()
        self._frame_times: deque[float] = deque(maxlen=30)
        self._items = 0
        self._turn = ""
        self._last = ""
        self._source = ""
        self._source_was_live = False
        self._shown = False
        self._last_draw = float("-inf")
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    # --- inputs ---------------------------------------------------------------
    def on_frame(self, items: int) -> None:
        with self._lock:
            self.tally.frames += 1
            self._frame_times.append(self._clock())
            self._items = items

    def on_event(self, event: Event) -> None:
        with self._lock:
            self.tally.events += 1
            match event:
                case ev.TurnStarted(seat=seat):
                    self._turn = self._name(seat)
                case ev.GameWarning():
                    self.tally.warnings += 1
                case ev.RoundScored(totals=totals):
                    self.tally.rounds.append(event)
                    self.tally.totals = dict(totals or {})
                    self._turn = ""
                case ev.MatchOver(winner=winner):
                    self.tally.winner = winner
            line = describe_event(event, self.players)
            if line:
                self._last = line
        if self.event_notices and isinstance(event, (ev.RoundScored, ev.MatchOver,
                                                     ev.GameWarning)):
            self.notice(line or event.kind)

    def on_source(self, status: Any) -> None:
        """The camera's state (``live.sources.SourceStatus``): shown unless it is live.
        Nothing is said before it first went live: a source that cannot be opened is
        the command's one-line error, not a status."""
        state = getattr(status, "state", str(status))
        message = getattr(status, "message", "")
        with self._lock:
            if state == "live":
                was_live, self._source_was_live = self._source_was_live, True
                self._source = ""
                if not was_live:
                    return
            elif not self._source_was_live:
                return
            else:
                self._source = f"camera {state}"
        if message:
            self.notice(message)

    def notice(self, text: str) -> None:
        """A line of its own, above the status line."""
        self.write_above(f"tabletop: {text}")

    def write_above(self, line: str, stream: IO[str] | None = None) -> None:
        """``line`` on ``stream`` (default: the status line's), the status line cleared
        first so the two never run into each other on one terminal."""
        with self._lock:
            self._clear()
            self._shown = False
            out = stream or self.stream
            out.write(line + "\n")
            out.flush()

    # --- drawing -----------------------------------------------------------------
    def fps(self) -> float:
        with self._lock:
            times = self._frame_times
            if len(times) < 2 or times[-1] <= times[0]:
                return 0.0
            return (len(times) - 1) / (times[-1] - times[0])

    def text(self) -> str:
        with self._lock:
            parts = [f"{self.fps():4.1f} fps", f"{self._items} items"]
            if self._turn:
                parts.append(f"{self._turn}'s turn")
            if self._source:
                parts.append(self._source)
            if self.tally.warnings:
                parts.append(f"{self.tally.warnings} warning{'s' * (self.tally.warnings != 1)}")
            if self._last:
                parts.append(f"last: {self._last}")
            line = " | ".join(parts)
        return line if len(line) <= WIDTH else line[: WIDTH - 1] + "…"

    def draw(self, force: bool = False) -> None:
        """Redraw, at most every ``every_s``; nothing before the first frame."""
        with self._lock:
            if not self._frame_times:
                return
            now = self._clock()
            if not force and now - self._last_draw < self.every_s:
                return
            self._last_draw = now
            if self.interactive:
                self.stream.write("\r\x1b[2K" + self.text())
                self._shown = True
            else:
                self.stream.write(self.text() + "\n")
            self.stream.flush()

    def _clear(self) -> None:
        if self.interactive and self._shown:
            self.stream.write("\r\x1b[2K")

    def start(self) -> StatusLine:
        """Redraw from a thread of its own too, so a stalled camera still shows."""
        def tick() -> None:
            while not self._stop.wait(self.every_s):
                self.draw()

        self._ticker = threading.Thread(target=tick, name="tabletop-status", daemon=True)
        self._ticker.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(2.0)
        with self._lock:
            self._clear()
            self._shown = False
            self.stream.flush()

    # --- the end ---------------------------------------------------------------------
    def summary(self) -> str:
        with self._lock:
            tally = self.tally
            seconds = max(1e-9, self._clock() - tally.started)
            warnings, rounds = tally.warnings, len(tally.rounds)
            lines = [f"{tally.frames} frames in {seconds:.0f} s ({tally.frames / seconds:.1f} fps),"
                     f" {tally.events} events, {warnings} warning{'s' * (warnings != 1)},"
                     f" {rounds} round{'s' * (rounds != 1)} scored"]
            for event in tally.rounds:
                scores = ", ".join(f"{n} {v:+d}" for n, v in event.scores.items())
                won = f" ({event.winner} won)" if event.winner else ""
                lines.append(f"round {'?' if event.round is None else event.round}{won}: {scores}")
            if tally.totals:
                lines.append("totals: " + ", ".join(f"{n} {v}" for n, v in tally.totals.items()))
            if tally.winner:
                lines.append(f"match over: {tally.winner} wins")
        return "\n".join(lines)

    def _name(self, seat: Any) -> str:
        return self.players[seat] if isinstance(seat, int) and 0 <= seat < len(self.players) else ""
