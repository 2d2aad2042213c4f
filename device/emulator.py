"""The real firmware, running in simavr, as a board the tests can plug in.

:class:`EmulatedBoard` starts ``device/simavr_runner/runner`` on
``device/firmware/board.elf``, reads the runner's output all the time (pin
changes, SPI bytes, the pty's name), keeps a symlink to the current pty at a
fixed path (as udev's /dev/serial/by-id links do for a real board, so the
host reconnects to the same name after a "replug"), and can press buttons.

Build both first with :func:`build` (``make`` in the two folders).
"""

from __future__ import annotations

import contextlib
import os
import random
import select
import shutil
import subprocess
import tempfile
import threading
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import IO

from tabletop.device.errors import DeviceError

DEVICE_DIR = Path(__file__).resolve().parent
FIRMWARE_DIR = DEVICE_DIR / "firmware"
RUNNER_DIR = DEVICE_DIR / "simavr_runner"
FIRMWARE = FIRMWARE_DIR / "board.elf"
RUNNER = RUNNER_DIR / "runner"

SEAT_PINS = ("C0", "C1", "C2", "C3")
MELD_PIN, WARNING_PIN, ROUND_OVER_PIN = "B0", "B1", "C4"
LOAD_PIN = "B2"
BUTTON_PINS = {
    "END": "D2", "UNDO": "D3", "OUT": "D4", "S0": "D5", "S1": "D6", "S2": "D7", "S3": "C5",
}
CODE_B = "0123456789-EHLP "
"""The MAX7219's Code-B font: register value -> character."""


class EmulatorError(DeviceError):
    """The emulator could not be built, started or driven."""


def toolchain_missing() -> str | None:
    """Why the emulated board cannot be built here, or None if it can."""
    for tool in ("avr-gcc", "avr-objcopy", "make", "cc"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (apt-get install gcc-avr avr-libc binutils-avr make)"
    if not Path("/usr/include/simavr/sim_avr.h").exists():
        return "simavr's headers are not installed (apt-get install simavr libsimavr-dev)"
    return None


def build(timeout: float = 120) -> None:
    """Build the firmware and the runner (``make``: quick when up to date)."""
    for folder in (FIRMWARE_DIR, RUNNER_DIR):
        result = subprocess.run(
            ["make", "-s", "-C", str(folder)],
            capture_output=True, text=True, timeout=timeout, check=False,
        )
        if result.returncode:
            raise EmulatorError(f"make in {folder} failed:\n{result.stdout}{result.stderr}")


class EmulatedBoard:
    """One simavr process running the firmware; restartable ("replug")."""

    def __init__(self, link: Path | None = None, firmware: Path = FIRMWARE) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if link is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="tabletop-board-")
            link = Path(self._tmp.name) / "board"
        self.link = link
        """A stable path to the current pty; give it to the host as the port."""
        self.firmware = firmware
        self.pty: str | None = None
        self.pins: dict[str, int] = {}
        self.digits: dict[int, int] = {}
        """MAX7219 registers 1..4 as the chip would hold them."""
        self.intensity: int | None = None
        self.lines: list[str] = []
        self._process: subprocess.Popen[str] | None = None
        self._changed = threading.Condition()
        self._spi: list[int] = []
        self._reader: threading.Thread | None = None

    # --- process ------------------------------------------------------------------
    def start(self, timeout: float = 10) -> EmulatedBoard:
        if not RUNNER.exists() or not self.firmware.exists():
            raise EmulatorError(f"build first: {RUNNER} or {self.firmware} is missing")
        self.pty = None
        self.pins.clear()
        self.digits.clear()
        process = subprocess.Popen(
            [str(RUNNER), str(self.firmware)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, bufsize=1,
        )
        self._process = process
        assert process.stdout is not None
        self._reader = threading.Thread(
            target=self._read, args=(process.stdout,), name="simavr-output", daemon=True
        )
        self._reader.start()
        if not self.wait_for(lambda: self.pty is not None, timeout):
            self.kill()
            raise EmulatorError(f"the runner printed no pty within {timeout:g} s: {self.lines}")
        assert self.pty is not None
        tmp_link = self.link.with_name(self.link.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp_link.unlink()
        os.symlink(self.pty, tmp_link)
        os.replace(tmp_link, self.link)  # atomic: the host never sees no link mid-way
        return self

    def kill(self) -> None:
        """Pull the plug: the process dies, the pty goes away."""
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=5)
            for stream in (process.stdin, process.stdout):
                with contextlib.suppress(OSError):
                    if stream is not None:
                        stream.close()
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        if self._reader is not None:
            self._reader.join(timeout=2)

    def close(self) -> None:
        self.kill()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> EmulatedBoard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    # --- inputs -------------------------------------------------------------------
    def press(self, button: str, hold_ms: int = 60) -> None:
        """Hold a button down for ``hold_ms`` of simulated time."""
        if button not in BUTTON_PINS:
            raise EmulatorError(f"no button {button!r}; there are {sorted(BUTTON_PINS)}")
        self._send(f"PRESS {BUTTON_PINS[button]} {hold_ms}")

    def set_pin(self, pin: str, level: int) -> None:
        self._send(f"SET {pin} {level}")

    def _send(self, line: str) -> None:
        process = self._process
        if process is None or process.stdin is None:
            raise EmulatorError("the emulated board is not running")
        try:
            process.stdin.write(line + "\n")
            process.stdin.flush()
        except OSError as error:
            raise EmulatorError(f"the runner is gone: {error}") from error

    # --- outputs ------------------------------------------------------------------
    def _read(self, stream: IO[str]) -> None:
        # read all the time: a full pipe would stall the simulation
        for raw in stream:
            line = raw.strip()
            with self._changed:
                self.lines.append(line)
                del self.lines[:-200]
                kind, _, rest = line.partition(" ")
                if kind == "READY":
                    self.pty = rest
                elif kind == "PIN":
                    pin, _, level = rest.partition(" ")
                    self.pins[pin] = int(level)
                    if pin == LOAD_PIN:
                        if level == "0":
                            self._spi = []
                        elif len(self._spi) == 2:  # LOAD rising edge latches
                            self._latch(*self._spi)
                elif kind == "SPI":
                    self._spi.append(int(rest, 16))
                self._changed.notify_all()

    def _latch(self, register: int, value: int) -> None:
        if 1 <= register <= 4:
            self.digits[register] = value
        elif register == 0x0A:
            self.intensity = value

    def wait_for(self, condition: Callable[[], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(condition, timeout)

    def lit_seats(self) -> list[int]:
        return [seat for seat, pin in enumerate(SEAT_PINS) if self.pins.get(pin) == 1]

    def lit_flags(self) -> dict[str, bool]:
        return {
            "meld": self.pins.get(MELD_PIN) == 1,
            "warning": self.pins.get(WARNING_PIN) == 1,
            "round_over": self.pins.get(ROUND_OVER_PIN) == 1,
        }

    def display(self) -> str:
        """The four digits as the MAX7219 shows them ('?' where unwritten)."""
        return "".join(
            CODE_B[self.digits[r] & 0x0F] if r in self.digits else "?" for r in range(1, 5)
        )

    def wait_display(self, text: str, timeout: float = 2) -> bool:
        return self.wait_for(lambda: self.display() == text, timeout)


def wait_until(condition: Callable[[], bool], timeout: float, step: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


class FaultyLink:
    """A serial line with faults between the host and an emulated board.

    The host opens :attr:`path` (a pty this proxy owns) instead of the board's
    pty; bytes are copied both ways, and while the knobs say so they are
    flipped (XOR with a random non-zero mask: one corrupted byte, as line noise
    does), dropped, held back in the host-to-board direction (``mute_host``) or
    buried in random bytes sent to the board (``flood``).  The same seed gives
    the same faults for the same bytes.
    """

    def __init__(self, board_pty: str, seed: int = 0) -> None:
        self.flip = 0.0
        """Chance per byte, both directions, that the byte arrives corrupted."""
        self.drop = 0.0
        """Chance per byte, both directions, that it is lost."""
        self.mute_host = False
        self.flood = False
        self.to_board = 0
        self.to_host = 0
        """Bytes copied (after faults), so a test can see both directions move."""
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._master, self._slave = os.openpty()
        # The proxy keeps the host's end open itself, so the host may close and
        # reopen it (a reconnect) without the master end failing meanwhile.
        tty.setraw(self._slave)
        os.set_blocking(self._master, False)
        self.path = os.ttyname(self._slave)
        self._board = os.open(board_pty, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self._board)
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._host_to_board, name="link-to-board", daemon=True),
            threading.Thread(target=self._board_to_host, name="link-to-host", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def clean(self) -> None:
        self.flip = self.drop = 0.0
        self.mute_host = self.flood = False

    def close(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2)
        for fd in (self._master, self._slave, self._board):
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> FaultyLink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _damage(self, data: bytes) -> bytes:
        if not self.flip and not self.drop:
            return data
        out = bytearray()
        with self._rng_lock:
            for byte in data:
                if self._rng.random() < self.drop:
                    continue
                if self._rng.random() < self.flip:
                    byte ^= self._rng.randrange(1, 256)
                out.append(byte)
        return bytes(out)

    def _garbage(self, size: int) -> bytes:
        with self._rng_lock:
            return self._rng.randbytes(size)

    def _host_to_board(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._master], [], [], 0.01)
            data = b""
            if ready:
                with contextlib.suppress(BlockingIOError, OSError):
                    data = os.read(self._master, 4096)
            if self.mute_host:
                continue
            data = self._damage(data)
            if self.flood:
                # about the line's own rate (11.5 kB/s): more would only queue up
                data = self._garbage(100) + data
            if data:
                try:
                    os.write(self._board, data)  # blocking: the board's UART paces it
                except OSError:
                    return
                self.to_board += len(data)

    def _board_to_host(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._board], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self._board, 4096)
            except OSError:
                return
            data = self._damage(data)
            if data:
                # a host that does not read loses bytes, as behind a real USB bridge
                with contextlib.suppress(BlockingIOError, OSError):
                    self.to_host += os.write(self._master, data)
