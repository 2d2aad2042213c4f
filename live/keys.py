"""Keys at the terminal for the panel's buttons, when ``tabletop run`` runs interactively.

=====  ===========================================
key    action (:mod:`tabletop.live.actions`)
=====  ===========================================
e      End turn
o      I'm out (the player on turn)
u      Undo
p      Pause the turn timer; again: resume it
n      Next round (score the racks laid open)
q      Quit: stop watching (as Ctrl-C)
=====  ===========================================

A thread of its own reads single key presses (the terminal in cbreak mode,
restored on stop) and submits each as an :class:`tabletop.live.actions.Action` to the
live table's inbox, the same one the panel uses, so the game is still touched
only by the pipeline's loop.  A refused press (no turn on, nothing to undo) is
reported through ``say`` with the game's reason.  Without a terminal on
standard input (a pipe, a service) nothing is read.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, Any

from tabletop.live.actions import Action
from tabletop.live.corrections import Inbox

KEYS: dict[str, str] = {
    "e": "end_turn",
    "o": "out",
    "u": "undo",
    "n": "next_round",
}
HELP = "keys: e end turn, o I'm out, u undo, p pause/resume timer, n next round, q quit"


class KeyReader:
    def __init__(self, inbox: Inbox, *, say: Callable[[str], object],
                 on_quit: Callable[[], object], stream: IO[str] | None = None,
                 who: str = "keyboard") -> None:
        self.inbox = inbox
        self.say = say
        self.on_quit = on_quit
        self.stream = stream if stream is not None else sys.stdin
        self.who = who
        self.paused = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved: Any = None

    @staticmethod
    def available(stream: IO[str] | None = None) -> bool:
        stream = stream if stream is not None else sys.stdin
        try:
            return stream.isatty()
        except (AttributeError, ValueError):
            return False

    def press(self, key: str) -> Future[object] | None:
        """Submit the action of ``key``; None for a key that means nothing."""
        key = key.lower()
        if key == "q":
            self.on_quit()
            return None
        if key == "p":
            kind = "resume_timer" if self.paused else "pause_timer"
            self.paused = not self.paused
        elif key in KEYS:
            kind = KEYS[key]
        else:
            return None
        future = self.inbox.submit(Action(kind, self.who))
        future.add_done_callback(lambda done: self._answered(kind, done))
        return future

    def _answered(self, kind: str, future: Future[object]) -> None:
        error = future.exception()
        if error is not None:
            if kind in ("pause_timer", "resume_timer"):
                self.paused = kind == "resume_timer"
            self.say(f"{kind.replace('_', ' ')}: {error}")

    def start(self) -> KeyReader:
        fd = self.stream.fileno()
        with contextlib.suppress(ImportError, OSError):
            import termios
            import tty

            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
        self._thread = threading.Thread(target=self._read, args=(fd,), name="tabletop-keys",
                                        daemon=True)
        self._thread.start()
        return self

    def _read(self, fd: int) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.2)
            if not ready:
                continue
            data = os.read(fd, 16)
            if not data:
                return
            for key in data.decode(errors="ignore"):
                self.press(key)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        if self._saved is not None:
            import termios

            with contextlib.suppress(OSError):
                termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved)
            self._saved = None
