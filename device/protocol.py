"""The scoring board's wire protocol: framing and parsing, no I/O.

See device/PROTOCOL.md for the full description.  In short, every frame is
one line of printable ASCII ending in ``\\n``, with a CRC-8 of its text::

    host  -> board   SS CMD[ ARG]*CC        SS: sequence number (2 hex digits)
    board -> host    OK SS CMD[ FIELDS]*CC  acknowledgement of command SS
                     ER SS|-- CODE*CC       error (-- when SS could not be read)
                     EV NNNN BUTTON*CC      button event NNNN (16-bit counter)
                     HB UUUUUUUU NNNN PP*CC heartbeat: uptime ms, next event, pending
                     HI FIELDS*CC           boot banner (same fields as HELLO)

:class:`FrameDecoder` turns a byte stream into messages; garbage, partial
and overlong lines come out as :class:`~device.errors.FrameError` values in
the same list, so a caller logs them and carries on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tabletop.device.errors import BadDisplayText, ChecksumError, FrameError, OverlongFrame

PROTOCOL_VERSION = 1
BAUDRATE = 115200
MAX_COMMAND_LINE = 40
"""The firmware's line buffer: longer host lines are answered ``ER -- LONG``."""
MAX_BOARD_LINE = 96
"""No board frame is longer; a longer line is noise and is discarded."""
ENQ = b"\x05"
"""Outside a frame, the board answers this byte at once with ACK (0x06)."""
ACK = b"\x06"

BUTTONS: tuple[str, ...] = ("END", "UNDO", "OUT", "S0", "S1", "S2", "S3")
"""Button names in EV frames, in the firmware's order."""
FLAG_MELD = 0x01
FLAG_WARNING = 0x02
FLAG_ROUND_OVER = 0x04
DISPLAY_DIGITS = 4
DISPLAY_CHARACTERS = frozenset("0123456789-EHLP ")
"""What the MAX7219's Code-B font can show (space is a blank digit)."""
ERROR_CODES = {
    "SYN": "not a frame (no '*CC' or no sequence number)",
    "CRC": "checksum mismatch",
    "LONG": "line longer than the board's buffer",
    "BYTE": "non-printable or lost bytes in the line",
    "UNK": "unknown command",
    "ARG": "bad argument",
}


def crc8(data: bytes) -> int:
    """CRC-8 with polynomial 0x07 and initial value 0 (CRC-8/SMBUS)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def seal(text: str) -> bytes:
    """``text`` as a frame: ``text*CC\\n``."""
    body = text.encode("ascii")
    return body + b"*%02X\n" % crc8(body)


def encode_command(seq: int, command: str, argument: str = "") -> bytes:
    """The frame of host command ``command`` with sequence number ``seq``."""
    if not 0 <= seq <= 0xFF:
        raise ValueError(f"sequence number {seq!r} is not in 0..255")
    if not command.isascii() or not command.isalpha() or not command.isupper():
        raise ValueError(f"command {command!r} is not an upper-case word")
    if argument and (not argument.isascii() or not argument.isprintable() or " " in argument):
        raise ValueError(f"argument {argument!r} is not one printable ASCII word")
    frame = seal(f"{seq:02X} {command}" + (f" {argument}" if argument else ""))
    if len(frame) - 1 > MAX_COMMAND_LINE:
        raise ValueError(f"frame {frame!r} is longer than {MAX_COMMAND_LINE} characters")
    return frame


def seq16_after(a: int, b: int) -> bool:
    """Is 16-bit counter ``a`` later than ``b`` (serial-number arithmetic)?"""
    return 0 < ((a - b) & 0xFFFF) < 0x8000


# --- messages from the board ----------------------------------------------------
@dataclass(frozen=True)
class BoardInfo:
    """What the board says about itself in its banner and HELLO answer."""

    model: str
    firmware: str
    protocol: int
    seats: int
    buttons: int
    boot: int
    """Boot counter kept in EEPROM: another value means the board restarted."""
    uptime_ms: int
    next_event: int
    oldest_pending: int | None
    """The oldest button event not yet acknowledged, or None."""
    reset_cause: int
    """MCUSR at boot: 1 power-on, 2 reset pin, 4 brown-out, 8 watchdog."""


@dataclass(frozen=True)
class BoardStatus:
    """The board's answer to STATUS."""

    seat: int | None
    flags: int
    display: str
    brightness: int
    pending_events: int
    dropped_events: int
    errors: int


@dataclass(frozen=True)
class Reply:
    """``OK``: the board did command ``seq``."""

    seq: int
    command: str
    fields: tuple[str, ...]


@dataclass(frozen=True)
class ErrorReply:
    """``ER``: the board could not do a frame; ``seq`` None when unreadable."""

    seq: int | None
    code: str


@dataclass(frozen=True)
class ButtonEvent:
    """A debounced button press; ``number`` counts presses since boot."""

    number: int
    button: str


@dataclass(frozen=True)
class Heartbeat:
    uptime_ms: int
    next_event: int
    pending: int


@dataclass(frozen=True)
class Banner:
    """The board has just booted."""

    info: BoardInfo


Message = Reply | ErrorReply | ButtonEvent | Heartbeat | Banner


def _hex(text: str, digits: int, line: bytes, what: str) -> int:
    if len(text) != digits or any(c not in "0123456789ABCDEFabcdef" for c in text):
        raise FrameError(f"{what} {text!r} is not {digits} hex digits in {line!r}", line)
    return int(text, 16)


def parse_board_info(fields: Sequence[str], line: bytes = b"") -> BoardInfo:
    """The fields of ``HI`` or of ``OK SS HELLO`` (after the command word)."""
    if len(fields) != 10:
        raise FrameError(f"board info needs 10 fields, not {len(fields)}: {line!r}", line)
    model, firmware, protocol, seats, buttons, boot, uptime, next_event, oldest, cause = fields
    if not protocol.isdigit():
        raise FrameError(f"protocol version {protocol!r} is not a number in {line!r}", line)
    return BoardInfo(
        model=model,
        firmware=firmware,
        protocol=int(protocol),
        seats=_hex(seats, 1, line, "seat count"),
        buttons=_hex(buttons, 1, line, "button count"),
        boot=_hex(boot, 4, line, "boot counter"),
        uptime_ms=_hex(uptime, 8, line, "uptime"),
        next_event=_hex(next_event, 4, line, "event counter"),
        oldest_pending=None if oldest == "-" else _hex(oldest, 4, line, "event counter"),
        reset_cause=_hex(cause, 2, line, "reset cause"),
    )


def parse_status(reply: Reply) -> BoardStatus:
    line = repr(reply).encode()
    if reply.command != "STATUS" or len(reply.fields) != 7:
        raise FrameError(f"not a STATUS answer: {reply!r}", line)
    seat, flags, display, brightness, pending, dropped, errors = reply.fields
    return BoardStatus(
        seat=None if seat == "-" else _hex(seat, 1, line, "seat"),
        flags=_hex(flags, 1, line, "flags"),
        display=display.replace("_", " "),
        brightness=_hex(brightness, 1, line, "brightness"),
        pending_events=_hex(pending, 2, line, "pending count"),
        dropped_events=_hex(dropped, 4, line, "dropped count"),
        errors=_hex(errors, 4, line, "error count"),
    )


def parse_frame(line: bytes) -> Message:
    """One line from the board, without its newline, as a message."""
    text = line.rstrip(b"\r")
    if len(text) < 4 or text[-3:-2] != b"*":
        raise FrameError(f"not a frame (no '*CC' at the end): {line!r}", line)
    body, crc_text = text[:-3], text[-2:]
    if not body.isascii() or not all(32 <= byte < 127 for byte in body):
        raise FrameError(f"non-printable bytes in {line!r}", line)
    try:
        crc = int(crc_text, 16)
    except ValueError:
        raise FrameError(f"checksum {crc_text!r} is not hex in {line!r}", line) from None
    if crc8(body) != crc:
        raise ChecksumError(f"checksum {crc:02X} != {crc8(body):02X} in {line!r}", line)
    kind, *fields = body.decode("ascii").split(" ")
    if kind == "OK" and len(fields) >= 2:
        return Reply(_hex(fields[0], 2, line, "sequence number"), fields[1], tuple(fields[2:]))
    if kind == "ER" and len(fields) == 2:
        seq = None if fields[0] == "--" else _hex(fields[0], 2, line, "sequence number")
        return ErrorReply(seq, fields[1])
    if kind == "EV" and len(fields) == 2:
        if fields[1] not in BUTTONS:
            raise FrameError(f"unknown button {fields[1]!r} in {line!r}", line)
        return ButtonEvent(_hex(fields[0], 4, line, "event number"), fields[1])
    if kind == "HB" and len(fields) == 3:
        return Heartbeat(
            _hex(fields[0], 8, line, "uptime"),
            _hex(fields[1], 4, line, "event counter"),
            _hex(fields[2], 2, line, "pending count"),
        )
    if kind == "HI":
        return Banner(parse_board_info(fields, line))
    raise FrameError(f"unknown frame {body!r}", line)


class FrameDecoder:
    """Splits the board's byte stream into messages; keeps partial lines.

    ``feed`` never raises for bad input: a bad line becomes a FrameError in
    the returned list, a line longer than MAX_BOARD_LINE is dropped up to its
    newline, and the stray ACK bytes of the ENQ probe are counted and skipped.
    """

    def __init__(self, max_line: int = MAX_BOARD_LINE) -> None:
        self._buffer = bytearray()
        self._max_line = max_line
        self._discarding = False
        self.acks = 0

    def feed(self, data: bytes) -> list[Message | FrameError]:
        out: list[Message | FrameError] = []
        if ACK in data:
            self.acks += data.count(ACK)
            data = data.replace(ACK, b"")
        start = 0
        while True:
            newline = data.find(b"\n", start)
            chunk = data[start:] if newline < 0 else data[start:newline]
            if not self._discarding:
                self._buffer += chunk
                if len(self._buffer) > self._max_line:
                    out.append(
                        OverlongFrame(
                            f"line longer than {self._max_line} bytes: "
                            f"{bytes(self._buffer[:24])!r}...",
                            bytes(self._buffer[:24]),
                        )
                    )
                    self._buffer.clear()
                    self._discarding = True
            if newline < 0:
                return out
            if not self._discarding and self._buffer.strip():
                try:
                    out.append(parse_frame(bytes(self._buffer)))
                except FrameError as error:
                    out.append(error)
            self._buffer.clear()
            self._discarding = False
            start = newline + 1


def display_text(value: int | str) -> str:
    """What SHOW sends for ``value``: at most 4 Code-B characters, right-aligned
    by the board, blanks written as '_'."""
    text = str(value)
    if len(text) > DISPLAY_DIGITS or any(c not in DISPLAY_CHARACTERS for c in text):
        raise BadDisplayText(
            f"{value!r} does not fit the {DISPLAY_DIGITS}-digit display "
            f"(characters {''.join(sorted(DISPLAY_CHARACTERS)).strip()!r} and blank)"
        )
    return text.replace(" ", "_")
