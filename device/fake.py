"""A pure-Python stand-in for the firmware, for quick unit tests.

It speaks the same protocol as device/firmware/board.c over a TCP socket on
127.0.0.1, so the host opens it as ``socket://127.0.0.1:PORT`` through the
same ``serial_for_url`` path as a real port.  It adds what the emulator makes
awkward: dropping a given number of answers (to see retries), hanging, and
rebooting on demand.  The real firmware's tests are in
tests/device/test_emulated.py; this never replaces them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

from tabletop.device.protocol import BUTTONS, crc8, seal, seq16_after

LINE_MAX = 40
EVENT_QUEUE = 255
EVENT_WINDOW = 8


class FakeBoard:
    def __init__(
        self, heartbeat_s: float = 0.25, boot: int = 1, event_queue: int = EVENT_QUEUE
    ) -> None:
        self.heartbeat_s = heartbeat_s
        self.boot = boot
        self.event_queue = event_queue
        self.seat: int | None = None
        self.flags = 0
        self.display = "    "
        self.brightness = 8
        self.drop_replies: dict[str, int] = {}
        """Command -> answer nothing to this many of the next ones (a lossy line)."""
        self.hung = False
        self.deaf = False
        """Lose every byte from the host (its line is cut) but keep talking."""
        self.dropped = 0
        self.commands: list[str] = []
        self._events: list[tuple[int, str]] = []
        self._next_event = 1
        self._started = time.monotonic()
        self._lock = threading.Lock()
        self._server = socket.create_server(("127.0.0.1", 0))
        self._server.settimeout(0.05)
        self.url = f"socket://127.0.0.1:{self._server.getsockname()[1]}"
        self._connection: socket.socket | None = None
        self._plugged = True
        self._unplugging = False
        """Asks the serving thread, the only one that reads the connection, to close it."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="fake-board", daemon=True)
        self._thread.start()

    # --- test controls -------------------------------------------------------------
    def press(self, button: str) -> None:
        if button not in BUTTONS:
            raise ValueError(f"no button {button!r}")
        with self._lock:
            if len(self._events) >= self.event_queue:
                self.dropped += 1
                return
            self._events.append((self._next_event, button))
            if len(self._events) <= EVENT_WINDOW:
                self._send(f"EV {self._next_event:04X} {button}")
            self._next_event = (self._next_event + 1) & 0xFFFF

    def unplug(self) -> None:
        with self._lock:
            self._plugged = False
            self._unplugging = self._connection is not None

    def replug(self, reboot: bool = True) -> None:
        with self._lock:
            if reboot:  # RAM is gone: state, unacknowledged events, uptime
                self.boot += 1
                self.seat, self.flags, self.display = None, 0, "    "
                self._events.clear()
                self._next_event = 1
                self.dropped = 0
                self._started = time.monotonic()
            self._plugged = True

    def send_raw(self, data: bytes) -> None:
        with self._lock:
            if self._connection is not None and not self._unplugging:
                with contextlib.suppress(OSError):
                    self._connection.sendall(data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        with self._lock:
            self._drop_connection()
        self._server.close()

    def __enter__(self) -> FakeBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- the board --------------------------------------------------------------------
    def _uptime(self) -> int:
        return int((time.monotonic() - self._started) * 1000) & 0xFFFFFFFF

    def _drop_connection(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()
            self._connection = None

    def _send(self, text: str) -> None:
        if self._connection is not None and not self._unplugging and not self.hung:
            with contextlib.suppress(OSError):
                self._connection.sendall(seal(text))

    def _serve(self) -> None:
        buffer = b""
        last_heartbeat = 0.0
        while not self._stop.is_set():
            with self._lock:
                if self._unplugging:
                    self._unplugging = False
                    self._drop_connection()
                connection = self._connection
            if connection is None:
                try:
                    connection, _ = self._server.accept()
                except TimeoutError:
                    continue
                with self._lock:
                    if not self._plugged:
                        connection.close()
                        continue
                    connection.settimeout(0.02)
                    self._connection = connection
                    buffer = b""
            try:
                data = connection.recv(4096)
                if not data:
                    with self._lock:
                        self._drop_connection()
                    continue
            except TimeoutError:
                data = b""
            except OSError:
                with self._lock:
                    self._drop_connection()
                continue
            if self.deaf:
                data = b""
            buffer += data
            *lines, buffer = buffer.split(b"\n")
            with self._lock:
                for line in lines:
                    if not self.hung:
                        self._line(line.rstrip(b"\r"))
                if len(buffer) > LINE_MAX:
                    buffer = b""
                    self._send("ER -- LONG")
                now = time.monotonic()
                if now - last_heartbeat >= self.heartbeat_s:
                    last_heartbeat = now
                    self._send(f"HB {self._uptime():08X} {self._next_event:04X} "
                               f"{len(self._events):02X}")
                    for number, button in self._events[:EVENT_WINDOW]:
                        self._send(f"EV {number:04X} {button}")

    def _hello_fields(self) -> str:
        oldest = f"{self._events[0][0]:04X}" if self._events else "-"
        return (f"TTB1 1.1 1 4 7 {self.boot:04X} {self._uptime():08X} "
                f"{self._next_event:04X} {oldest} 01")

    def _line(self, line: bytes) -> None:
        if not line:
            return
        if len(line) > LINE_MAX:
            return self._send("ER -- LONG")
        if any(not 32 <= byte < 127 for byte in line):
            return self._send("ER -- BYTE")
        if len(line) < 6 or line[-3:-2] != b"*":
            return self._send("ER -- SYN")
        body = line[:-3]
        try:
            crc = int(line[-2:], 16)
        except ValueError:
            crc = -1
        if crc != crc8(body):
            return self._send("ER -- CRC")
        text = body.decode()
        try:
            seq = int(text[:2], 16)
        except ValueError:
            return self._send("ER -- SYN")
        if text[2:3] != " ":
            return self._send("ER -- SYN")
        command, _, argument = text[3:].partition(" ")
        self.commands.append(f"{command} {argument}".strip())
        if self.drop_replies.get(command, 0) > 0:
            self.drop_replies[command] -= 1
            return
        ok = f"OK {seq:02X} {command}"
        if command == "HELLO":
            self._send(f"{ok} {self._hello_fields()}")
        elif command == "PING":
            self._send(f"OK {seq:02X} PONG {self._uptime():08X}")
        elif command == "SEAT" and argument in ("-", "0", "1", "2", "3"):
            self.seat = None if argument == "-" else int(argument)
            self._send(ok)
        elif command == "FLAGS" and argument in list("01234567"):
            self.flags = int(argument)
            self._send(ok)
        elif command == "SHOW" and len(argument) <= 4 and all(
            c in "0123456789-EHLP_" for c in argument
        ):
            self.display = argument.replace("_", " ").rjust(4)
            self._send(ok)
        elif command == "BRIGHT" and len(argument) == 1 and argument in "0123456789ABCDEF":
            self.brightness = int(argument, 16)
            self._send(ok)
        elif command == "ACK" and len(argument) == 4:
            upto = int(argument, 16)
            before = len(self._events)
            self._events = [e for e in self._events if seq16_after(e[0], upto)]
            done = before - len(self._events)
            oldest = f"{self._events[0][0]:04X}" if self._events else "-"
            self._send(f"{ok} {oldest}")
            if done:  # the window slides, as in the firmware
                for number, button in self._events[max(0, EVENT_WINDOW - done):EVENT_WINDOW]:
                    self._send(f"EV {number:04X} {button}")
        elif command == "STATUS":
            seat = "-" if self.seat is None else str(self.seat)
            self._send(f"{ok} {seat} {self.flags:X} {self.display.replace(' ', '_')} "
                       f"{self.brightness:X} {len(self._events):02X} "
                       f"{self.dropped & 0xFFFF:04X} 0000")
        elif command in {"SEAT", "FLAGS", "SHOW", "BRIGHT", "ACK"}:
            self._send(f"ER {seq:02X} ARG")
        else:
            self._send(f"ER {seq:02X} UNK")
