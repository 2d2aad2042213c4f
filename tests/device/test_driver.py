"""The host driver against the pure-Python fake board over socket:// (quick),
and its port handling over loop:// with ports that record misuse.

The same behaviours with the real firmware are in test_emulated.py.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import serial  # type: ignore[import-untyped]
from serial.urlhandler import protocol_loop  # type: ignore[import-untyped]

from tabletop.device.driver import Board
from tabletop.device.emulator import wait_until
from tabletop.device.errors import (
    BadPortUrl,
    BoardDisconnected,
    BoardRejected,
    BoardTimeout,
    DeviceError,
)
from tabletop.device.fake import FakeBoard
from tabletop.device.protocol import ButtonEvent, seal


@pytest.fixture
def fake() -> Iterator[FakeBoard]:
    with FakeBoard() as board:
        yield board


@pytest.fixture
def board(fake: FakeBoard) -> Iterator[Board]:
    with Board(fake.url, reply_timeout_s=0.1) as host:
        host.wait_connected(3)
        yield host


class WatchedPort(protocol_loop.Serial):
    """loop:// that records what the driver must never do to a port: close it
    under a read, read it from two threads, or write to it once closed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.misuse: list[str] = []
        self.in_read = threading.Event()
        self.fail_with: BaseException | None = None
        self._reads = 0
        self._guard = threading.Lock()
        super().__init__(*args, **kwargs)

    def read(self, size: int = 1) -> bytes:
        with self._guard:
            self._reads += 1
            if self._reads > 1:
                self.misuse.append("read from two threads")
        self.in_read.set()
        try:
            if self.fail_with is not None:
                raise self.fail_with
            time.sleep(0.002)  # widen the window a close from another thread would hit
            return bytes(super().read(size))
        finally:
            with self._guard:
                self._reads -= 1

    def write(self, data: bytes) -> int:
        if not self.is_open:
            self.misuse.append("written after close")
        return int(super().write(data))

    def close(self) -> None:
        with self._guard:
            if self._reads:
                self.misuse.append("closed under a read")
        super().close()


@pytest.fixture
def watched_ports(monkeypatch: pytest.MonkeyPatch) -> list[WatchedPort]:
    """Every port the driver opens from now on, as a WatchedPort over loop://."""
    ports: list[WatchedPort] = []

    def open_watched(url: str, **settings: Any) -> WatchedPort:
        port = WatchedPort(None, **settings)
        port.port = url
        port.open()
        ports.append(port)
        return port

    monkeypatch.setattr(serial, "serial_for_url", open_watched)
    return ports


@contextlib.contextmanager
def thread_errors() -> Iterator[list[str]]:
    """What escapes any thread meanwhile (pytest only warns about it)."""
    seen: list[str] = []
    previous = threading.excepthook

    def record(args: threading.ExceptHookArgs) -> None:
        name = args.thread.name if args.thread is not None else "?"
        seen.append(f"{name}: {args.exc_type.__name__}: {args.exc_value}")

    threading.excepthook = record
    try:
        yield seen
    finally:
        threading.excepthook = previous


def test_handshake(board: Board) -> None:
    assert board.info is not None
    assert (board.info.model, board.info.protocol, board.info.seats, board.info.buttons) == (
        "TTB1", 1, 4, 7)


def test_display_state_reaches_board(board: Board, fake: FakeBoard) -> None:
    board.set_seat(2)
    board.set_flags(5)
    board.show(-7)
    board.set_brightness(15)
    assert wait_until(
        lambda: (fake.seat, fake.flags, fake.display, fake.brightness) == (2, 5, "  -7", 15), 1)
    status = board.status()
    assert (status.seat, status.flags, status.display) == (2, 5, "  -7")


def test_retries_until_answered(board: Board, fake: FakeBoard) -> None:
    fake.drop_replies = {"SEAT": 2}
    board.command("SEAT", "1")
    assert board.retransmissions == 2 and fake.seat == 1


def test_gives_up_after_retries(board: Board, fake: FakeBoard) -> None:
    fake.drop_replies = {"SEAT": 100}
    started = time.monotonic()
    with pytest.raises(BoardTimeout, match="SEAT"):
        board.command("SEAT", "1")
    assert time.monotonic() - started < 1.0


@pytest.mark.parametrize(("command", "argument", "code"),
                         [("SEAT", "7", "ARG"), ("FLAGS", "9", "ARG"), ("DANCE", "", "UNK")])
def test_board_errors_raise(board: Board, command: str, argument: str, code: str) -> None:
    with pytest.raises(BoardRejected, match=code):
        board.command(command, argument)


def test_events_once_in_order(board: Board, fake: FakeBoard) -> None:
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    for button in ("END", "UNDO", "OUT"):
        fake.press(button)
    # the fake resends unacknowledged events with each heartbeat: no doubles
    assert wait_until(lambda: len(seen) == 3, 2)
    time.sleep(0.6)
    assert [e.button for e in seen] == ["END", "UNDO", "OUT"]
    assert [e.number for e in seen] == [1, 2, 3]


def test_garbage_from_board_is_skipped(board: Board, fake: FakeBoard) -> None:
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    fake.send_raw(b"\x00\xff\xfenoise\n" + b"X" * 500 + b"\nOK 01 SEAT*00\n" + seal("EV 00")[:4])
    fake.press("END")
    assert wait_until(lambda: len(seen) == 1, 2)
    assert board.frame_errors >= 3 and board.connected


def test_hung_board_noticed_within_a_second_and_resumed(board: Board, fake: FakeBoard) -> None:
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    fake.press("END")
    assert wait_until(lambda: len(seen) == 1, 2)
    fake.hung = True
    started = time.monotonic()
    assert wait_until(lambda: not board.connected, 2)
    assert time.monotonic() - started < 1.0
    board.show(12)  # the game goes on: remembered, not raised
    with pytest.raises(BoardDisconnected):
        board.command("PING")
    fake.hung = False  # same boot: the host keeps its event count
    assert wait_until(lambda: board.connected, 3)
    assert wait_until(lambda: fake.display == "  12", 2)
    fake.press("UNDO")
    assert wait_until(lambda: len(seen) == 2, 2)
    assert [e.button for e in seen] == ["END", "UNDO"]


def test_replugged_board_is_resynchronised(board: Board, fake: FakeBoard) -> None:
    links: list[bool] = []
    board.on_link(links.append)
    board.set_seat(3)
    board.set_flags(1)
    fake.unplug()
    assert wait_until(lambda: not board.connected, 2)
    board.show(40)
    fake.replug(reboot=True)
    assert wait_until(lambda: board.connected, 3)
    assert wait_until(lambda: fake.display == "  40", 2)
    assert (fake.seat, fake.flags) == (3, 1)
    assert wait_until(lambda: links == [False, True], 1)
    assert board.reconnections == 1


def test_close_never_pulls_the_port_from_under_the_reader(
        watched_ports: list[WatchedPort]) -> None:
    """close() while the reader waits in read(): the reader closes the port
    itself once its read returns, and ends."""
    for _ in range(20):
        with thread_errors() as errors:
            board = Board("loop://").start()
            assert wait_until(lambda: bool(watched_ports) and watched_ports[-1].in_read.is_set(),
                              2)
            threads = list(board._threads)
            board.close()
        assert errors == []
        assert not any(thread.is_alive() for thread in threads)
    assert [port.misuse for port in watched_ports] == [[]] * len(watched_ports)
    assert not any(port.is_open for port in watched_ports)


def test_reopening_over_and_over_never_races_the_reader_or_the_writers(
        watched_ports: list[WatchedPort]) -> None:
    """Nothing answers on loop://, so every handshake fails at once and the
    supervisor drops and reopens the port while the reader reads it and
    another thread writes to it."""
    stray: list[BaseException] = []
    stop = threading.Event()

    def write_all_the_time(board: Board) -> None:
        while not stop.is_set():
            try:
                board._write(b"\n")
            except DeviceError:
                pass  # no port just now: what a writer may see
            except BaseException as error:
                stray.append(error)
                return
            # A lock hands off to no waiter: unpaced, this loop could hold the
            # port lock for whole switch intervals and starve the supervisor.
            time.sleep(0.0005)

    with thread_errors() as errors:
        board = Board("loop://", reply_timeout_s=0.01, retries=0, handshake_s=0,
                      reconnect_s=0).start()
        writer = threading.Thread(target=write_all_the_time, args=(board,))
        writer.start()
        try:
            assert wait_until(lambda: len(watched_ports) >= 40, 20)
        finally:
            threads = list(board._threads)
            board.close()
            stop.set()
            writer.join(timeout=2)
    assert errors == [] and stray == []
    assert not any(thread.is_alive() for thread in [*threads, writer])
    assert [port.misuse for port in watched_ports] == [[]] * len(watched_ports)
    assert not any(port.is_open for port in watched_ports)


def test_a_bug_under_the_reader_is_not_taken_for_a_lost_link(
        watched_ports: list[WatchedPort]) -> None:
    with thread_errors() as errors:
        board = Board("loop://").start()
        try:
            assert wait_until(lambda: bool(watched_ports) and watched_ports[0].in_read.is_set(), 2)
            watched_ports[0].fail_with = TypeError("a bug, not a port failure")
            reader = board._reader
            assert reader is not None
            reader.join(timeout=2)
            assert not reader.is_alive()
        finally:
            board.close()
    assert errors == ["board-reader: TypeError: a bug, not a port failure"]
    assert not any(port.is_open for port in watched_ports)


def test_closing_while_the_game_sends_and_buttons_come(fake: FakeBoard) -> None:
    def play(board: Board, stop: threading.Event, stray: list[BaseException]) -> None:
        shown = 0
        while not stop.is_set():
            try:
                board.show(shown % 100)  # never raises for link trouble
                board.command("PING")
            except DeviceError:
                pass  # closed under us: BoardDisconnected or BoardTimeout
            except BaseException as error:
                stray.append(error)
                return
            shown += 1

    for _ in range(3):
        stray: list[BaseException] = []
        stop = threading.Event()
        with thread_errors() as errors:
            board = Board(fake.url, reply_timeout_s=0.1).start()
            board.wait_connected(3)
            player = threading.Thread(target=play, args=(board, stop, stray))
            player.start()
            for button in ("END", "UNDO", "OUT"):
                fake.press(button)
            time.sleep(0.2)
            threads = list(board._threads)
            board.close()
            time.sleep(0.1)  # the game goes on a little after the board is closed
            stop.set()
            player.join(timeout=2)
        assert errors == [] and stray == []
        assert not any(thread.is_alive() for thread in [*threads, player])
        assert board._port is None


@pytest.mark.parametrize(
    "url, baudrate", [("bogus://x", 115200), ("loop://", -5)]
)
def test_a_port_that_cannot_be_one_is_refused_at_once(url: str, baudrate: int) -> None:
    # no thread is started to retry it for ever
    before = threading.active_count()
    with pytest.raises(BadPortUrl, match="cannot use board port"):
        Board(url, baudrate=baudrate)
    assert threading.active_count() == before


def test_commands_lost_on_a_deaf_line_are_sent_again(board: Board, fake: FakeBoard) -> None:
    board.show(7)
    assert wait_until(lambda: fake.display == "   7", 1)
    fake.deaf = True  # its heartbeats still come: the link looks up
    board.show(42)
    board.set_seat(2)
    time.sleep(0.5)  # sent, and lost
    assert board.connected and (fake.display, fake.seat) == ("   7", None)
    fake.deaf = False
    assert wait_until(lambda: (fake.display, fake.seat) == ("  42", 2), 2)
    assert board.resyncs >= 2


def test_the_games_thread_never_waits_on_a_deaf_line(board: Board, fake: FakeBoard) -> None:
    fake.deaf = True
    started = time.monotonic()
    for score in range(20):  # waiting for each answer would take 20 x 4 tries x 0.25 s
        board.show(score)
        board.set_seat(score % 4)
    assert time.monotonic() - started < 2.0
    assert fake.display != "  19"
    fake.deaf = False
    assert wait_until(lambda: (fake.display, fake.seat) == ("  19", 3), 2)


def test_a_board_that_forgot_its_state_is_put_right(board: Board, fake: FakeBoard) -> None:
    board.set_seat(1)
    board.set_flags(3)
    board.show("HELP")
    fake.seat, fake.flags, fake.display = None, 0, "  88"  # e.g. a glitch on the board
    assert wait_until(lambda: (fake.seat, fake.flags, fake.display) == (1, 3, "HELP"), 1.5)


def test_a_refused_value_is_not_sent_again_and_again(board: Board, fake: FakeBoard) -> None:
    board.set_seat(7)  # the board has four seats
    time.sleep(1.0)
    assert fake.commands.count("SEAT 7") == 1
    board.set_seat(3)
    assert wait_until(lambda: fake.seat == 3, 1)


def test_a_full_press_queue_is_reported() -> None:
    with FakeBoard(event_queue=4) as fake, Board(fake.url, reply_timeout_s=0.1) as host:
        seen: list[ButtonEvent] = []
        host.on_event(seen.append)
        host.wait_connected(3)
        fake.deaf = True  # no acknowledgement arrives
        for button in ("END", "UNDO", "OUT", "S0", "S1", "S2"):
            fake.press(button)
        fake.deaf = False
        assert wait_until(lambda: len(seen) == 4 and host.dropped_presses == 2, 2), (
            seen, host.dropped_presses)
        time.sleep(0.5)
        assert [e.button for e in seen] == ["END", "UNDO", "OUT", "S0"]
        assert host.dropped_presses == 2


def test_a_long_backlog_of_presses_arrives_in_order(board: Board, fake: FakeBoard) -> None:
    seen: list[ButtonEvent] = []
    board.on_event(seen.append)
    fake.deaf = True
    buttons = [("END", "UNDO", "OUT", "S0", "S1", "S2", "S3")[i % 7] for i in range(40)]
    for button in buttons:
        fake.press(button)
    fake.deaf = False
    assert wait_until(lambda: len(seen) == len(buttons), 5), len(seen)
    time.sleep(0.4)
    assert [e.button for e in seen] == buttons
    assert board.dropped_presses == 0
