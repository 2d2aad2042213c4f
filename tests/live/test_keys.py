"""Keys at the terminal: typed on a real pseudo-terminal, they reach the game through the live
table's inbox as the panel's buttons do, and a refused one says why."""

from __future__ import annotations

import io
import os
import threading
import time
from collections.abc import Iterator

import pytest

from tabletop.engine.items import parse_items
from tabletop.engine.variants import find_variant
from tabletop.live.actions import apply_pending_actions
from tabletop.live.bus import EventBus
from tabletop.live.corrections import Inbox
from tabletop.live.game import Game
from tabletop.live.keys import KeyReader
from tabletop.live.snapshot import TableSnapshot
from tests.shared import json_events


class Loop:
    """A game and the loop thread that applies the inbox's actions, as a ``Pipeline`` does."""

    def __init__(self) -> None:
        self.bus = EventBus()
        self.events, _ = json_events(self.bus)
        self.game = Game(find_variant("sabra"), ("Ana", "Ben"), self.bus)
        self.inbox = Inbox()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with self.inbox.serving():
            t = 0.0
            while not self._stop.is_set():
                t += 0.1
                apply_pending_actions(self.inbox, self.game, t)
                time.sleep(0.01)

    def __enter__(self) -> Loop:
        self.game.update(TableSnapshot(0.0, melds=(parse_items("R10 R11 R12"),)))
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(2)

    def wait_for(self, kind: str, seat: int | None = None, timeout: float = 5.0
                 ) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events
                     if e["type"] == kind and (seat is None or e["seat"] == seat)]
            if found:
                return found[-1]
            time.sleep(0.01)
        raise AssertionError(f"no {kind} event in {[e['type'] for e in self.events]}")


@pytest.fixture
def terminal() -> Iterator[tuple[int, io.TextIOWrapper]]:
    """A pseudo-terminal: the keyboard's end and the program's standard input."""
    keyboard, program = os.openpty()
    stdin = os.fdopen(program, "r")
    try:
        yield keyboard, stdin
    finally:
        stdin.close()
        os.close(keyboard)


def test_keys_typed_at_a_terminal_end_the_turn_and_pause_the_timer(
        terminal: tuple[int, io.TextIOWrapper]) -> None:
    keyboard, stdin = terminal
    said: list[str] = []
    quit_pressed = threading.Event()
    assert KeyReader.available(stdin)
    with Loop() as loop:
        keys = KeyReader(loop.inbox, say=said.append, on_quit=quit_pressed.set,
                         stream=stdin).start()
        try:
            os.write(keyboard, b"e")
            loop.wait_for("turn_started", seat=1)  # Ana's turn ended: Ben's is on
            os.write(keyboard, b"p")
            assert loop.wait_for("timer_paused")["who"] == "keyboard"
            os.write(keyboard, b"p")
            loop.wait_for("timer_resumed")
            os.write(keyboard, b"n")  # no one went out: refused, and the reason said
            deadline = time.monotonic() + 5
            while not said and time.monotonic() < deadline:
                time.sleep(0.01)
            assert said == ["next round: the round has not ended: no one went out"]
            os.write(keyboard, b"xq")  # an unknown key does nothing; q quits
            assert quit_pressed.wait(5)
        finally:
            keys.stop()


def test_no_terminal_no_keys() -> None:
    read, write = os.pipe()
    with os.fdopen(read) as pipe:
        assert not KeyReader.available(pipe)
    os.close(write)
    assert not KeyReader.available(io.StringIO())
