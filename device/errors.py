"""The scoring board's exception tree.

Everything the board package raises is a :class:`DeviceError`, so a caller
that only wants "the board did not work" catches one class.  Errors about bad
input (a garbled frame, a display text the board cannot show) are also
``ValueError`` and quote the input; errors about the link are also the
matching built-in (``TimeoutError``, ``ConnectionError``).
"""

from __future__ import annotations


class DeviceError(Exception):
    """Base of every error of the scoring board package."""


class FrameError(DeviceError, ValueError):
    """A line from the board that is not a valid frame (quoted in the message)."""

    def __init__(self, message: str, line: bytes = b"") -> None:
        super().__init__(message)
        self.line = line


class ChecksumError(FrameError):
    """The frame's CRC-8 does not match its text."""


class OverlongFrame(FrameError):
    """A line longer than the protocol allows; it was discarded up to its newline."""


class BadDisplayText(DeviceError, ValueError):
    """Text or a number the board's four-digit display cannot show."""


class ProtocolError(DeviceError):
    """The board answered, but not as the protocol says (e.g. another version)."""


class BoardRejected(DeviceError):
    """The board answered a command with an error (``ER seq CODE``)."""

    def __init__(self, command: str, code: str) -> None:
        super().__init__(f"board rejected {command!r}: {code}")
        self.command = command
        self.code = code


class BoardTimeout(DeviceError, TimeoutError):
    """No answer in time, after every retry."""


class BadPortUrl(DeviceError, ValueError):
    """A port name or URL that pyserial cannot take (an unknown ``scheme://``, a bad
    baud rate); quoted in the message."""


class BoardDisconnected(DeviceError, ConnectionError):
    """The board is not connected (unplugged, hung, or not yet found)."""
