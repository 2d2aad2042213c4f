"""The run's status line and closing summary, as a person reads them on a terminal or in a log."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from tabletop.engine.events import event_from_json
from tabletop.live.status import WIDTH, StatusLine

PLAYERS = ("Ana", "Ben")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Terminal(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@dataclass(frozen=True)
class SourceState:
    state: str
    message: str


def played(status: StatusLine, clock: Clock) -> None:
    for _ in range(11):  # 10 frames a second for a second
        status.on_frame(7)
        clock.now += 0.1
    status.on_event(event_from_json({"seq": 1, "t": 0.0, "type": "turn_started", "seat": 0,
                                     "round": 1, "turn": 1}))
    status.on_event(event_from_json({"seq": 2, "t": 3.1, "type": "meld_laid", "seat": 0,
                                     "meld": "R10 R11 R12"}))
    status.on_event(event_from_json({"seq": 3, "t": 4.0, "type": "warning", "seat": 0,
                                     "message": "R10 R11 is not a legal meld",
                                     "items": ["R10", "R11"]}))


def test_the_line_tells_rate_items_turn_warnings_and_the_last_event() -> None:
    clock = Clock()
    out = Terminal(tty=False)
    status = StatusLine(PLAYERS, out, clock=clock)
    played(status, clock)
    assert status.fps() == pytest.approx(10.0)
    line = status.text()
    assert line.startswith("10.0 fps | 7 items | Ana's turn | 1 warning | last: WARNING R10")
    # the warning also got a line of its own, once
    assert out.getvalue().count("tabletop: WARNING R10 R11 is not a legal meld") == 1


@pytest.mark.parametrize("tty, drawn", [(True, "\r\x1b[2K10.0 fps"), (False, "10.0 fps")])
def test_redrawn_in_place_on_a_terminal_and_as_lines_elsewhere(tty: bool, drawn: str) -> None:
    clock = Clock()
    out = Terminal(tty=tty)
    status = StatusLine(PLAYERS, out, clock=clock)
    played(status, clock)
    out.seek(0)
    out.truncate()
    status.draw()
    status.draw()  # too soon: not drawn again
    assert out.getvalue().count("fps") == 1
    assert out.getvalue().startswith(drawn)
    assert out.getvalue().endswith("\n") is not tty


def test_a_camera_that_drops_out_is_shown_until_it_is_back() -> None:
    clock = Clock()
    out = Terminal(tty=False)
    status = StatusLine(PLAYERS, out, clock=clock)
    status.on_source(SourceState("opening", "opening camera 0"))
    status.on_source(SourceState("live", "camera 0 is live (1280x720)"))
    assert out.getvalue() == ""  # the start is not news; a failed one is the error line
    status.on_source(SourceState("reconnecting", "camera 0 dropped out; retrying in 0.5 s"))
    assert "camera reconnecting" in status.text()
    assert "tabletop: camera 0 dropped out; retrying in 0.5 s\n" in out.getvalue()
    status.on_source(SourceState("live", "camera 0 is back"))
    assert "camera" not in status.text()
    assert out.getvalue().endswith("tabletop: camera 0 is back\n")


def test_long_lines_are_cut_to_one_terminal_line() -> None:
    status = StatusLine(PLAYERS, Terminal(tty=True), clock=Clock())
    status.on_event(event_from_json({"seq": 1, "t": 0.0, "type": "meld_laid", "seat": 0,
                                     "meld": " ".join(["R1"] * 100)}))
    assert len(status.text()) == WIDTH


def test_the_summary_gives_frames_rounds_winner_and_totals() -> None:
    clock = Clock()
    status = StatusLine(PLAYERS, Terminal(tty=False), clock=clock)
    played(status, clock)
    status.on_event(event_from_json({"seq": 4, "t": 30.0, "type": "round_scored", "seat": None,
                                     "round": 1, "scores": {"Ana": 15, "Ben": -15},
                                     "winner": "Ana", "totals": {"Ana": 15, "Ben": -15}}))
    clock.now += 9.9
    summary = status.summary().splitlines()
    assert summary == [
        "11 frames in 11 s (1.0 fps), 4 events, 1 warning, 1 round scored",
        "round 1 (Ana won): Ana +15, Ben -15",
        "totals: Ana 15, Ben -15",
    ]
