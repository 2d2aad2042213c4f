"""The host driver against the pure-Python fake board over socket:// (quick).

The same behaviours with the real firmware are in test_device_emulated.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from device.driver import Board
from device.emulator import wait_until
from device.errors import BoardDisconnected, BoardRejected, BoardTimeout
from device.fake import FakeBoard
from device.protocol import ButtonEvent, seal


@pytest.fixture
def fake() -> Iterator[FakeBoard]:
    with FakeBoard() as board:
        yield board


@pytest.fixture
def board(fake: FakeBoard) -> Iterator[Board]:
    with Board(fake.url, reply_timeout_s=0.1) as host:
        host.wait_connected(3)
        yield host


def test_handshake(board: Board) -> None:
    assert board.info is not None
    assert (board.info.model, board.info.protocol, board.info.seats, board.info.buttons) == (
        "TTB1", 1, 4, 7)


def test_display_state_reaches_board(board: Board, fake: FakeBoard) -> None:
    board.set_seat(2)
    board.set_flags(5)
    board.show(-7)
    board.set_brightness(15)
    assert (fake.seat, fake.flags, fake.display, fake.brightness) == (2, 5, "  -7", 15)
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


def test_a_port_closed_under_the_reader_drops_the_link_and_comes_back(
        board: Board, fake: FakeBoard) -> None:
    """pyserial's socket:// port raises ValueError when its socket is closed while
    the reader waits on it (a race seen in CI); the reader must live on."""
    port = board._port
    assert port is not None
    port._socket.close()  # type: ignore[attr-defined]
    assert wait_until(lambda: not board.connected or board.reconnections >= 1, 2)
    assert wait_until(lambda: board.connected, 3)
    assert all(thread.is_alive() for thread in board._threads)
    board.show(7)
    assert wait_until(lambda: fake.display == "   7", 2)
