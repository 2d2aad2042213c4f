"""The board protocol's framing and parsing (device/protocol.py, PROTOCOL.md)."""

from __future__ import annotations

import pytest

from tabletop.device.errors import BadDisplayText, ChecksumError, FrameError, OverlongFrame
from tabletop.device.protocol import (
    Banner,
    ButtonEvent,
    ErrorReply,
    FrameDecoder,
    Heartbeat,
    Reply,
    crc8,
    display_text,
    encode_command,
    parse_frame,
    parse_status,
    seal,
    seq16_after,
)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"", 0x00),
        # the published check value of CRC-8/SMBUS (poly 0x07, init 0)
        (b"123456789", 0xF4),
        (b"\x01", 0x07),
    ],
)
def test_crc8(data: bytes, expected: int) -> None:
    assert crc8(data) == expected


@pytest.mark.parametrize(
    ("seq", "command", "argument", "text"),
    [
        (0x01, "HELLO", "", b"01 HELLO"),
        (0xAB, "SEAT", "2", b"AB SEAT 2"),
        (0x00, "SHOW", "-12", b"00 SHOW -12"),
        (0xFF, "ACK", "00FF", b"FF ACK 00FF"),
    ],
)
def test_encode_command(seq: int, command: str, argument: str, text: bytes) -> None:
    frame = encode_command(seq, command, argument)
    assert frame == text + b"*%02X\n" % crc8(text)


@pytest.mark.parametrize(
    ("seq", "command", "argument"),
    [(256, "PING", ""), (-1, "PING", ""), (1, "ping", ""), (1, "SHOW", "1 2"),
     (1, "SHOW", "x" * 40)],
)
def test_encode_command_rejects(seq: int, command: str, argument: str) -> None:
    with pytest.raises(ValueError):
        encode_command(seq, command, argument)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("OK 05 SEAT", Reply(5, "SEAT", ())),
        ("OK 1F PONG 0000012C", Reply(0x1F, "PONG", ("0000012C",))),
        ("ER 07 UNK", ErrorReply(7, "UNK")),
        ("ER -- CRC", ErrorReply(None, "CRC")),
        ("EV 0010 UNDO", ButtonEvent(16, "UNDO")),
        ("HB 000003E8 0002 01", Heartbeat(1000, 2, 1)),
    ],
)
def test_parse_frame(text: str, message: object) -> None:
    assert parse_frame(seal(text)[:-1]) == message


def test_parse_banner() -> None:
    message = parse_frame(seal("HI TTB1 1.0 1 4 7 0003 0000000A 0001 - 08")[:-1])
    assert isinstance(message, Banner)
    assert message.info.boot == 3 and message.info.reset_cause == 8  # watchdog reset
    assert message.info.oldest_pending is None and message.info.seats == 4


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"OK 05 SEAT*00", ChecksumError),
        (b"OK 05 SEAT", FrameError),
        (b"\x00\xffOK*00", FrameError),
        (seal("EV 0001 JUMP")[:-1], FrameError),  # no such button
        (seal("EV 1 END")[:-1], FrameError),  # the counter has four digits
        (seal("XX 01")[:-1], FrameError),
    ],
)
def test_parse_frame_rejects(line: bytes, error: type[Exception]) -> None:
    with pytest.raises(error, match="'"):  # the message quotes the line
        parse_frame(line)


def test_status() -> None:
    status = parse_status(Reply(1, "STATUS", ("2", "5", "__42", "8", "01", "0000", "0003")))
    assert (status.seat, status.flags, status.display, status.errors) == (2, 5, "  42", 3)


def test_decoder_joins_partial_lines_and_survives_garbage() -> None:
    decoder = FrameDecoder()
    frame = seal("EV 0001 END")
    out = decoder.feed(b"\xff\x00garbage\n" + frame[:5])
    assert len(out) == 1 and isinstance(out[0], FrameError)
    assert decoder.feed(frame[5:] + seal("OK 01 SEAT")) == [
        ButtonEvent(1, "END"), Reply(1, "SEAT", ())]


def test_decoder_discards_overlong_line_until_newline() -> None:
    decoder = FrameDecoder(max_line=20)
    out = decoder.feed(b"A" * 25)
    assert len(out) == 1 and isinstance(out[0], OverlongFrame)
    # the rest of that line is dropped, the next one is read
    assert decoder.feed(b"B" * 100 + b"*00\n" + seal("OK 02 FLAGS")) == [Reply(2, "FLAGS", ())]


def test_decoder_counts_enq_answers() -> None:
    decoder = FrameDecoder()
    assert decoder.feed(b"\x06" + seal("ER -- SYN") + b"\x06") == [ErrorReply(None, "SYN")]
    assert decoder.acks == 2


@pytest.mark.parametrize(
    ("value", "sent"),
    [(42, "42"), (-999, "-999"), ("HELP", "HELP"), ("", ""), (" 1 ", "_1_"), (0, "0")],
)
def test_display_text(value: int | str, sent: str) -> None:
    assert display_text(value) == sent


@pytest.mark.parametrize("value", [10000, -1000, "ABCD", "1.5", "hello"])
def test_display_text_rejects(value: int | str) -> None:
    with pytest.raises(BadDisplayText, match=repr(value).replace("(", r"\(")[:3]):
        display_text(value)


@pytest.mark.parametrize(
    ("a", "b", "after"),
    [(2, 1, True), (1, 2, False), (1, 1, False), (0, 0xFFFF, True), (0xFFFF, 0, False)],
)
def test_seq16_after_wraps(a: int, b: int, after: bool) -> None:
    assert seq16_after(a, b) is after
