"""The real firmware (device/firmware/board.c) in simavr, driven by the host.

Each test starts the runner (device/simavr_runner) on the built .elf and talks
to it through the pty, as to a board on USB: LEDs are read from the pins,
the display from the bytes shifted into the MAX7219, buttons are pins driven
low.  scripts/test installs the toolchain; where it is missing the tests fail
naming the packages to install.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import serial  # type: ignore[import-untyped]

from tabletop.device.adapter import BoardAction, BoardAdapter, BoardState
from tabletop.device.driver import Board
from tabletop.device.emulator import EmulatedBoard, FaultyLink, wait_until
from tabletop.device.protocol import (
    BUTTONS,
    ButtonEvent,
    ErrorReply,
    FrameDecoder,
    Reply,
    encode_command,
)
from tests.shared import scaled

pytestmark = pytest.mark.usefixtures("emulator_built")


@pytest.fixture
def emulator() -> Iterator[EmulatedBoard]:
    with EmulatedBoard() as emulated:
        yield emulated


@pytest.fixture
def board(emulator: EmulatedBoard) -> Iterator[Board]:
    with Board(str(emulator.link)) as host:
        host.wait_connected(5)
        yield host


class RawPort:
    """The pty without the driver: to send what no driver would."""

    def __init__(self, path: str) -> None:
        self.port = serial.serial_for_url(path, baudrate=115200, timeout=0.05)
        self.decoder = FrameDecoder()

    def read_until(self, wanted: type, seconds: float = 2.0) -> list[object]:
        seen: list[object] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for message in self.decoder.feed(self.port.read(4096)):
                seen.append(message)
                if isinstance(message, wanted):
                    return seen
        return seen

    def errors(self, data: bytes) -> list[str]:
        self.port.write(data + encode_command(0x42, "PING"))
        seen = self.read_until(Reply)
        assert isinstance(seen[-1], Reply) and seen[-1].command == "PONG", seen
        return [m.code for m in seen if isinstance(m, ErrorReply)]


def test_handshake(board: Board) -> None:
    info = board.info
    assert info is not None
    assert (info.model, info.firmware, info.protocol, info.seats, info.buttons) == (
        "TTB1", "1.1", 1, 4, 7)
    assert info.reset_cause & 0x01  # power-on
    assert info.next_event == 1 and info.oldest_pending is None


@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
def test_seat_led(board: Board, emulator: EmulatedBoard, seat: int | None) -> None:
    board.set_seat(seat)
    expected = [] if seat is None else [seat]
    assert emulator.wait_for(lambda: emulator.lit_seats() == expected, 1)


@pytest.mark.parametrize(
    ("flags", "lit"),
    [(0, (False, False, False)), (1, (True, False, False)), (2, (False, True, False)),
     (4, (False, False, True)), (7, (True, True, True))],
)
def test_status_leds(board: Board, emulator: EmulatedBoard, flags: int,
                     lit: tuple[bool, bool, bool]) -> None:
    board.set_flags(flags)
    assert emulator.wait_for(lambda: tuple(emulator.lit_flags().values()) == lit, 1)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(42, "  42"), (-999, "-999"), (8888, "8888"), ("HELP", "HELP"), ("", "    ")],
)
def test_display(board: Board, emulator: EmulatedBoard, value: int | str, shown: str) -> None:
    board.show(value)
    assert emulator.wait_display(shown), emulator.display()
    assert board.status().display == shown


def test_brightness_and_status(board: Board, emulator: EmulatedBoard) -> None:
    board.set_brightness(3)
    assert emulator.wait_for(lambda: emulator.intensity == 3, 1)
    board.set_seat(2)
    board.set_flags(5)
    assert emulator.wait_for(  # sent in the background
        lambda: emulator.lit_seats() == [2]
        and tuple(emulator.lit_flags().values()) == (True, False, True), 1)
    status = board.status()
    assert (status.seat, status.flags, status.brightness, status.pending_events) == (2, 5, 3, 0)


@pytest.mark.parametrize(
    ("command", "argument", "code"),
    [("SEAT", "4", "ARG"), ("SEAT", "", "ARG"), ("FLAGS", "8", "ARG"), ("SHOW", "ABCD", "ARG"),
     ("SHOW", "12345", "ARG"), ("ACK", "12", "ARG"), ("DANCE", "", "UNK"),
     ("PING", "1", "UNK")],
)
def test_bad_commands_answered_with_errors(board: Board, command: str, argument: str,
                                           code: str) -> None:
    from tabletop.device.errors import BoardRejected

    with pytest.raises(BoardRejected, match=code):
        board.command(command, argument)
    assert board.ping() < 0.5  # and the board goes on


def test_buttons_become_game_actions(board: Board, emulator: EmulatedBoard) -> None:
    actions: list[BoardAction] = []
    adapter = BoardAdapter(board, actions.append)
    adapter.update(BoardState(seats=3, current_seat=1, scores=(0, 15, 0), initial_meld=True))
    assert emulator.wait_display("  15") and emulator.lit_seats() == [1]
    for button in ("END", "UNDO", "OUT", "S3"):
        emulator.press(button)
        time.sleep(0.1)
    assert wait_until(lambda: len(actions) == 4, 3)
    time.sleep(0.6)  # heartbeats resend unacknowledged events: none doubled
    assert actions == [BoardAction("end_turn"), BoardAction("undo"), BoardAction("out"),
                       BoardAction("seat", 3)]
    assert board.status().pending_events == 0


def test_bounce_shorter_than_debounce_is_ignored(board: Board, emulator: EmulatedBoard) -> None:
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    for _ in range(5):
        emulator.press("END", hold_ms=5)  # contact bounce, 5 ms < 20 ms
        time.sleep(0.02)
    time.sleep(0.3)
    assert seen == []
    emulator.press("END", hold_ms=50)
    assert wait_until(lambda: len(seen) == 1, 2)


def test_garbage_answered_and_stream_recovers(emulator: EmulatedBoard) -> None:
    raw = RawPort(str(emulator.link))
    good = encode_command(1, "SEAT", "1")
    assert raw.errors(b"\x00\xff\x13\x11junk\n") == ["BYTE"]
    assert raw.errors(b"Z" * 200 + b"\n") == ["LONG"]
    assert raw.errors(good[:-3] + b"00\n") == ["CRC"]  # a wrong checksum
    assert raw.errors(b"hello world\n") == ["SYN"]
    # a partial line runs into the next frame: both are lost as one bad line,
    # answered with an error; the host's retry of the frame then goes through
    raw.port.write(good[:6] + encode_command(0x42, "PING"))
    assert [m for m in raw.read_until(ErrorReply) if isinstance(m, ErrorReply)] == [
        ErrorReply(None, "CRC")]
    assert raw.errors(b"\r\n\n") == []  # empty lines are ignored
    raw.port.write(good)
    assert emulator.wait_for(lambda: emulator.lit_seats() == [1], 1)


def test_flood_of_random_bytes(emulator: EmulatedBoard) -> None:
    import random

    raw = RawPort(str(emulator.link))
    noise = random.Random(7).randbytes(20_000).replace(b"\x05", b"")
    started = time.monotonic()
    raw.port.write(noise + b"\n")
    raw.port.write(encode_command(2, "PING"))
    seen = raw.read_until(Reply, seconds=8)
    assert isinstance(seen[-1], Reply) and seen[-1].seq == 2, seen[-5:]
    assert time.monotonic() - started < 8
    assert emulator.running


def test_unplug_and_replug_mid_game(board: Board, emulator: EmulatedBoard) -> None:
    actions: list[BoardAction] = []
    links: list[bool] = []
    board.on_link(links.append)
    adapter = BoardAdapter(board, actions.append)
    adapter.update(BoardState(seats=4, current_seat=0, scores=(7, 0, 0, 0)))
    emulator.press("END")
    assert wait_until(lambda: len(actions) == 1, 2)

    emulator.kill()  # unplugged
    assert wait_until(lambda: not board.connected, 1.0)
    # the game goes on: the turn passes, a warning comes up
    adapter.update(BoardState(seats=4, current_seat=2, scores=(7, 0, 31, 0), warning=True))

    emulator.start()  # replugged: a fresh board, blank, counting events from 1 again
    assert wait_until(lambda: board.connected, 3)
    assert emulator.wait_display("  31", 2)
    assert emulator.lit_seats() == [2]
    assert emulator.lit_flags() == {"meld": False, "warning": True, "round_over": False}
    emulator.press("UNDO")  # event number 1 of the new boot: not taken for a duplicate
    assert wait_until(lambda: len(actions) == 2, 2)
    assert actions == [BoardAction("end_turn"), BoardAction("undo")]
    assert wait_until(lambda: links == [False, True], 1)


def test_hung_board_noticed_and_resumed(board: Board, emulator: EmulatedBoard) -> None:
    assert emulator._process is not None
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    emulator.press("S0")
    assert wait_until(lambda: len(seen) == 1, 2)
    os.kill(emulator._process.pid, signal.SIGSTOP)  # the board stops answering
    try:
        started = time.monotonic()
        assert wait_until(lambda: not board.connected, 2)
        assert time.monotonic() - started < 1.0
        board.show(5)
    finally:
        os.kill(emulator._process.pid, signal.SIGCONT)
    assert wait_until(lambda: board.connected, 3)
    assert emulator.wait_display("   5", 2)
    emulator.press("S1")  # same boot: counting goes on, nothing lost or doubled
    assert wait_until(lambda: len(seen) == 2, 2)
    time.sleep(0.4)
    assert [(e.number, e.button) for e in seen] == [(1, "S0"), (2, "S1")]


def test_presses_while_host_away_are_delivered_later(emulator: EmulatedBoard) -> None:
    with Board(str(emulator.link)) as first:
        first.wait_connected(5)
        first.show(1)
    # host gone; the board keeps the presses until someone acknowledges them
    emulator.press("OUT")
    time.sleep(0.1)
    emulator.press("UNDO")
    time.sleep(0.1)
    seen: list[ButtonEvent] = []
    with Board(str(emulator.link)) as second:
        second.on_event(seen.append)
        second.wait_connected(5)
        assert wait_until(lambda: len(seen) == 2, 2)
        time.sleep(0.4)
        assert [e.button for e in seen] == ["OUT", "UNDO"]
        assert second.status().pending_events == 0


def test_board_shows_host_lost(emulator: EmulatedBoard) -> None:
    with Board(str(emulator.link)) as host:
        host.wait_connected(5)
        host.show(77)
        assert emulator.wait_display("  77")
    # no host for 2 s: the display says so
    assert emulator.wait_display("----", 4)
    with Board(str(emulator.link)) as host:
        host.wait_connected(5)
        assert emulator.wait_display("  77", 2)  # the board's own state comes back


@pytest.fixture
def faulty(emulator: EmulatedBoard) -> Iterator[FaultyLink]:
    assert emulator.pty is not None
    with FaultyLink(emulator.pty, seed=11) as link:
        yield link


@pytest.fixture
def far_board(faulty: FaultyLink) -> Iterator[Board]:
    """The host behind the faulty line."""
    with Board(faulty.path) as host:
        host.wait_connected(5)
        yield host


def _set_at_once(*setters: Callable[[], None]) -> list[threading.Thread]:
    """The game's setters, each from its own thread, as a game and a timer would."""
    threads = [threading.Thread(target=setter) for setter in setters]
    for thread in threads:
        thread.start()
    return threads


def _board_shows(emulator: EmulatedBoard, text: str, seat: int | None) -> Callable[[], bool]:
    seats = [] if seat is None else [seat]
    return lambda: emulator.display() == text and emulator.lit_seats() == seats


@pytest.mark.parametrize("fault", ["mute_host", "flood"])
def test_commands_lost_to_a_bad_host_line_are_sent_again(
    far_board: Board, emulator: EmulatedBoard, faulty: FaultyLink, fault: str
) -> None:
    far_board.show(7)
    far_board.set_seat(0)
    assert emulator.wait_for(_board_shows(emulator, "   7", 0), 2)
    setattr(faulty, fault, True)  # the board's heartbeats still reach the host
    threads = _set_at_once(lambda: far_board.show(42), lambda: far_board.set_seat(2))
    time.sleep(1.2)
    setattr(faulty, fault, False)
    assert far_board.connected
    assert emulator.wait_for(_board_shows(emulator, "  42", 2), 2), (
        emulator.display(), emulator.lit_seats())
    for thread in threads:
        thread.join(timeout=2)


# 0 s apart: every press reaches the simulation in one step, as when it lags the test's
# clock on a loaded machine; a button pressed again waits for its last press to end
@pytest.mark.parametrize("apart_s", [0.1, 0.0])
def test_presses_beyond_the_old_queue_wait_for_the_host(emulator: EmulatedBoard,
                                                        apart_s: float) -> None:
    buttons = [BUTTONS[i % len(BUTTONS)] for i in range(20)]
    for button in buttons:  # no host: nothing is acknowledged
        emulator.press(button, hold_ms=40)
        time.sleep(apart_s)
    seen: list[ButtonEvent] = []
    with Board(str(emulator.link)) as host:
        host.on_event(seen.append)
        host.wait_connected(scaled(5))
        # the emulated board replays 20 presses in real time: slower on a loaded machine
        assert wait_until(lambda: len(seen) == len(buttons), scaled(5)), len(seen)
        time.sleep(0.5)
        assert [e.button for e in seen] == buttons
        status = host.status()
        assert (status.pending_events, status.dropped_events) == (0, 0)
        assert host.dropped_presses == 0


@dataclass
class StressRun:
    pressed: list[str]
    seen: list[ButtonEvent]
    settle_s: list[float]
    """After each bad spell: seconds until the board showed the game's state again."""
    dropped: int
    reconnections: int


def stress(emulator: EmulatedBoard, seed: int) -> StressRun:
    """Presses all the time while the line goes through noise, host silence and a
    garbage flood, with the game changing the display in every spell."""
    assert emulator.pty is not None
    rng = random.Random(seed)
    seen: list[ButtonEvent] = []
    pressed: list[str] = []
    stop = threading.Event()
    # Not S3: its pin is PC5, and simavr drives a pulled-up input high again
    # whenever the firmware writes PORTC (a seat LED changes), cutting a press
    # short; a real port keeps an input that a button holds to ground low.
    buttons = [b for b in BUTTONS if b != "S3"]

    def press_all_the_time() -> None:
        while not stop.is_set():
            # never the same twice running: should the simulation lag behind the
            # wall clock, two presses of one button could merge into one
            button = rng.choice([b for b in buttons if not pressed or b != pressed[-1]])
            emulator.press(button, hold_ms=40)
            pressed.append(button)
            time.sleep(0.12)  # released and debounced before the next

    settle: list[float] = []
    with FaultyLink(emulator.pty, seed=seed) as line, Board(line.path) as host:
        host.on_event(seen.append)
        host.wait_connected(5)
        presser = threading.Thread(target=press_all_the_time)
        presser.start()
        try:
            spells: list[tuple[str, float, int, int]] = [
                ("noise", 2.5, 101, 1),
                ("mute_host", 1.2, 202, 2),  # longer than the host's link timeout
                ("flood", 1.5, 303, 3),
                ("cut", 1.5, 404, 0),  # both ways: the host drops the link and reconnects
            ]
            for fault, seconds, score, seat in spells:
                if fault == "noise":
                    line.flip = line.drop = 0.03
                elif fault == "cut":
                    line.drop = 1.0
                else:
                    setattr(line, fault, True)
                ends = time.monotonic() + seconds
                setters = _set_at_once(lambda s=score: host.show(s),  # type: ignore[misc]
                                       lambda s=seat: host.set_seat(s))  # type: ignore[misc]
                time.sleep(max(0.0, ends - time.monotonic()))
                line.clean()
                recovered = time.monotonic()
                emulator.wait_for(_board_shows(emulator, f"{score:4d}", seat), 5)
                settle.append(time.monotonic() - recovered)
                for thread in setters:
                    thread.join(timeout=2)
        finally:
            stop.set()
            presser.join(timeout=2)
        wait_until(lambda: len(seen) >= len(pressed), 8)
        time.sleep(0.6)  # late copies of the last events: none may be delivered twice
        dropped, reconnections = host.dropped_presses, host.reconnections
    return StressRun(pressed, list(seen), settle, dropped, reconnections)


@pytest.mark.parametrize("seed", [1, 2])
def test_stress_noise_silence_and_floods(emulator: EmulatedBoard, seed: int) -> None:
    run = stress(emulator, seed)
    assert [e.button for e in run.seen] == run.pressed, (len(run.seen), len(run.pressed))
    numbers = [e.number for e in run.seen]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers)))
    assert run.dropped == 0
    assert max(run.settle_s) < 2.0, run.settle_s
    assert run.reconnections >= 1  # the cut was long enough to drop the link
