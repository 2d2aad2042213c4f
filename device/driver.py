"""The host driver: one :class:`Board` per connected scoring board.

The transport is opened with ``serial.serial_for_url()``, so a real port
(``/dev/ttyACM0``), ``socket://host:port`` and ``loop://`` all work.  Three
background threads do the work, so the game never waits on the board:

* the reader reads bytes, decodes frames, answers waiting commands and
  acknowledges button events; it owns the open port: it is the only thread
  that reads it and the only one that closes it (the others ask it to);
* the supervisor asks the board for its STATUS every ``heartbeat_s`` (the
  host's heartbeat), declares the link lost when nothing valid came for
  ``link_timeout_s``, reopens the port and handshakes when the board is back,
  and sends again whatever the board shows differently from what the game set
  (found in the STATUS answers, or left unconfirmed by a failed command);
* the dispatcher calls the listeners (button events, link changes), so a
  listener may itself send commands.

The display setters (:meth:`Board.set_seat`, :meth:`set_flags`, :meth:`show`,
:meth:`set_brightness`) never wait and never raise for link trouble: they
remember the state and wake the supervisor, which sends it and keeps the board
showing it.  :meth:`command` waits for the answer and does raise.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import pkgutil
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import serial  # type: ignore[import-untyped]
import serial.urlhandler  # type: ignore[import-untyped]

from tabletop.device.errors import (
    BadPortUrl,
    BoardDisconnected,
    BoardRejected,
    BoardTimeout,
    DeviceError,
    FrameError,
    ProtocolError,
)
from tabletop.device.protocol import (
    BAUDRATE,
    ENQ,
    PROTOCOL_VERSION,
    Banner,
    BoardInfo,
    BoardStatus,
    ButtonEvent,
    ErrorReply,
    FrameDecoder,
    Heartbeat,
    Message,
    Reply,
    display_text,
    encode_command,
    parse_board_info,
    parse_status,
    seq16_after,
)

log = logging.getLogger("device.board")

EventListener = Callable[[ButtonEvent], None]
LinkListener = Callable[[bool], None]

STATE_COMMANDS = ("SEAT", "FLAGS", "SHOW", "BRIGHT")
"""The commands that set what the board shows: kept and reconciled."""


def _shown(command: str, argument: str) -> str:
    """``argument`` of ``command`` as STATUS reports the result."""
    if command == "SHOW":
        return argument.replace("_", " ").rjust(4)
    if command in ("FLAGS", "BRIGHT"):
        with contextlib.suppress(ValueError):
            return f"{int(argument, 16):X}"
    return argument


def _status_shows(status: BoardStatus) -> dict[str, str]:
    return {
        "SEAT": "-" if status.seat is None else f"{status.seat:X}",
        "FLAGS": f"{status.flags:X}",
        "SHOW": status.display.rjust(4),
        "BRIGHT": f"{status.brightness:X}",
    }


@dataclass
class _Waiter:
    seq: int
    command: str
    done: threading.Event
    answer: Reply | ErrorReply | None = None
    failure: DeviceError | None = None


PORT_FAILURES = (serial.SerialException, OSError)
"""What a port's read, write or close raises when the link goes.  Nothing else is
a lost link: no thread closes a port under another's read or write (the reader
closes it, and writers hold the port lock), so a TypeError, AttributeError or
ValueError from a port is a bug and is not caught."""

RELEASE_TIMEOUT_S = 2.0
"""How long a thread that drops the link waits for the reader to close the port."""


def _check_port(url: str, baudrate: int) -> None:
    """Refuse a port that pyserial could never open: a bad baud rate or an unknown
    ``scheme://`` (a plain device name is only known to be missing when opened)."""
    if isinstance(baudrate, bool) or not isinstance(baudrate, int) or baudrate <= 0:
        raise BadPortUrl(f"cannot use board port {url!r}: baud rate {baudrate!r}")
    scheme, sep, _ = url.partition("://")
    if sep:
        known = sorted(
            name.removeprefix("protocol_")
            for _, name, _ in pkgutil.iter_modules(serial.urlhandler.__path__)
            if name.startswith("protocol_")
        )
        if scheme not in known:
            raise BadPortUrl(
                f"cannot use board port {url!r}: no such kind of port"
                f" (known: {', '.join(f'{k}://' for k in known)})"
            )


class Board:
    """A scoring board behind a serial URL, kept connected in the background.

    ``start()`` returns at once; ``wait_connected()`` waits for the first
    handshake.  Use as a context manager to close it.
    """

    def __init__(
        self,
        url: str,
        *,
        baudrate: int = BAUDRATE,
        heartbeat_s: float = 0.25,
        link_timeout_s: float = 0.75,
        reply_timeout_s: float = 0.25,
        retries: int = 3,
        reconnect_s: float = 0.2,
        handshake_s: float = 2.5,
    ) -> None:
        # checked now, so a typo is one clear error rather than endless reconnecting
        _check_port(url, baudrate)
        self.url = url
        self.baudrate = baudrate
        self.heartbeat_s = heartbeat_s
        self.link_timeout_s = link_timeout_s
        self.reply_timeout_s = reply_timeout_s
        self.retries = retries
        self.reconnect_s = reconnect_s
        self.handshake_s = handshake_s
        self.info: BoardInfo | None = None
        self.frame_errors = 0
        """Bad lines from the board, logged and skipped."""
        self.retransmissions = 0
        self.reconnections = 0
        self.resyncs = 0
        """State commands sent again because the board did not show them."""
        self.dropped_presses = 0
        """Presses the board could not keep (its queue was full), from STATUS."""

        self._port: Any = None
        """The open port, for the reader to read and for writers under _port_lock;
        None from the moment the reader starts closing it."""
        self._port_lock = threading.Lock()
        self._port_changed = threading.Condition(self._port_lock)
        self._releasing = threading.Event()
        """Set (only while there is a port) to ask the reader to close it."""
        self._closing = 0
        """Ports taken from _port whose close() has not returned yet."""
        self._reader: threading.Thread | None = None
        self._state_lock = threading.RLock()
        self._decoder = FrameDecoder()
        self._waiters: dict[int, _Waiter] = {}
        self._next_seq = 0
        self._connected = threading.Event()
        self._handshaking = False
        self._closed = threading.Event()
        self._last_rx = 0.0
        self._last_uptime = 0
        self._expected_event: int | None = None
        self._desired: dict[str, str] = {}
        self._writes = 0
        """Frames written so far: orders each write against the STATUS polls."""
        self._sent_at: dict[str, int] = {}
        """State command -> the write number of its last frame."""
        self._set_at: dict[str, int] = {}
        """State command -> the frames written when the game last changed it: a STATUS
        written by then cannot show the change."""
        self._status_at: dict[int, int] = {}
        """STATUS sequence number -> the write number of its frame."""
        self._unconfirmed: set[str] = set()
        """State commands for the supervisor to send (again)."""
        self._fresh: set[str] = set()
        """Those of them the game has just set, not yet sent once (not a resync)."""
        self._background: dict[int, tuple[str, str]] = {}
        """Sequence number -> state command the supervisor sent without waiting."""
        self._rejected: dict[str, str] = {}
        """State command -> the argument the board refused: not sent again."""
        self._board_dropped = 0
        self._wake = threading.Event()
        self._event_listeners: list[EventListener] = []
        self._link_listeners: list[LinkListener] = []
        self._dispatch: queue.Queue[Callable[[], None] | None] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._ack_seen = threading.Condition()

    # --- life cycle ---------------------------------------------------------------
    def start(self) -> Board:
        if self._threads:
            return self
        for name, target in (
            ("reader", self._read_loop),
            ("supervisor", self._supervise),
            ("dispatcher", self._dispatch_loop),
        ):
            thread = threading.Thread(target=target, name=f"board-{name}", daemon=True)
            if name == "reader":
                self._reader = thread
            thread.start()
            self._threads.append(thread)
        return self

    def wait_connected(self, timeout: float) -> BoardInfo:
        if not self._connected.wait(timeout) or self.info is None:
            raise BoardTimeout(f"no board answered on {self.url!r} within {timeout:g} s")
        return self.info

    def close(self) -> None:
        self._closed.set()
        self._drop_link("closed", notify=False)
        self._dispatch.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout=2)
        reader = self._reader
        if reader is not None and reader.is_alive():
            log.warning("board: the reader of %s did not stop; its port is left to it", self.url)
        else:
            # never started, or ended by a bug: nobody else will close the port
            self._close_port()
        self._threads.clear()

    def __enter__(self) -> Board:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def on_event(self, listener: EventListener) -> None:
        """Call ``listener`` for each button press, once, in order."""
        self._event_listeners.append(listener)

    def on_link(self, listener: LinkListener) -> None:
        """Call ``listener(True/False)`` when the board comes or goes."""
        self._link_listeners.append(listener)

    # --- display state (never raises for link trouble) -------------------------
    def set_seat(self, seat: int | None) -> None:
        if seat is not None and not 0 <= seat <= 9:
            raise ValueError(f"seat {seat!r} is not 0..9 or None")
        self._set("SEAT", "-" if seat is None else str(seat))

    def set_flags(self, flags: int) -> None:
        if not 0 <= flags <= 7:
            raise ValueError(f"flags {flags!r} are not 0..7")
        self._set("FLAGS", str(flags))

    def show(self, value: int | str) -> None:
        self._set("SHOW", display_text(value))

    def set_brightness(self, level: int) -> None:
        if not 0 <= level <= 15:
            raise ValueError(f"brightness {level!r} is not 0..15")
        self._set("BRIGHT", f"{level:X}")

    @property
    def desired_state(self) -> dict[str, str]:
        with self._state_lock:
            return dict(self._desired)

    def _set(self, command: str, argument: str) -> None:
        """Keep what the game wants shown and leave the sending to the supervisor: the
        game's thread never waits on the link, however bad it is."""
        with self._state_lock:
            if self._desired.get(command) == argument:
                return
            self._desired[command] = argument
            self._set_at[command] = self._writes
            self._rejected.pop(command, None)
            self._unconfirmed.add(command)
            self._fresh.add(command)
        self._wake.set()

    # --- commands -------------------------------------------------------------------
    def command(self, command: str, argument: str = "") -> Reply:
        """Send a command, wait for its acknowledgement, retry on silence."""
        if not self.connected and not self._handshaking:
            raise BoardDisconnected(f"no board on {self.url!r}")
        with self._state_lock:
            seq = self._next_seq
            self._next_seq = (seq + 1) & 0xFF
            waiter = _Waiter(seq, command, threading.Event())
            self._waiters[seq] = waiter
        frame = encode_command(seq, command, argument)
        try:
            for attempt in range(self.retries + 1):
                if attempt:
                    self.retransmissions += 1
                self._write(frame, command, seq)
                if waiter.done.wait(self.reply_timeout_s):
                    break
            else:
                raise BoardTimeout(
                    f"no answer to {frame!r} after {self.retries + 1} tries on {self.url!r}"
                )
        finally:
            with self._state_lock:
                self._waiters.pop(seq, None)
        if waiter.failure is not None:
            raise waiter.failure
        answer = waiter.answer
        if isinstance(answer, ErrorReply):
            raise BoardRejected(f"{command} {argument}".strip(), answer.code)
        assert answer is not None
        return answer

    def ping(self) -> float:
        """Round trip of one PING in seconds."""
        started = time.perf_counter()
        self.command("PING")
        return time.perf_counter() - started

    def enquire(self, timeout: float = 0.5) -> float:
        """Round trip of the raw ENQ byte, answered by the board's interrupt
        handler without parsing: the floor under any framed command."""
        with self._ack_seen:
            before = self._decoder.acks
            started = time.perf_counter()
            self._write(ENQ)
            if not self._ack_seen.wait_for(lambda: self._decoder.acks > before, timeout):
                raise BoardTimeout(f"no ACK to ENQ within {timeout:g} s on {self.url!r}")
            return time.perf_counter() - started

    def status(self) -> BoardStatus:
        return parse_status(self.command("STATUS"))

    def _write(self, data: bytes, command: str = "", seq: int = 0) -> None:
        # The reader takes the port away under this lock before it closes it, so a
        # write never meets a port that is closing or closed.
        with self._port_lock:
            port = self._port
            if port is None or self._releasing.is_set():
                raise BoardDisconnected(f"no board on {self.url!r}")
            try:
                port.write(data)
            except PORT_FAILURES as error:
                raise BoardDisconnected(f"writing to {self.url!r} failed: {error}") from error
            # Numbered under the port lock: the order of the numbers is the order
            # on the wire, which is the order the board does the frames in.
            self._writes += 1
            if command == "STATUS":
                self._status_at[seq] = self._writes
            elif command in STATE_COMMANDS:
                self._sent_at[command] = self._writes

    # --- reader ---------------------------------------------------------------------
    def _read_loop(self) -> None:
        try:
            while not self._closed.is_set():
                # Polled, not awaited under _port_lock: a writer may hold that lock
                # blocked on a full buffer, which only this thread's reads drain.
                port = self._port
                if port is None:
                    self._closed.wait(0.01)
                else:
                    self._read_port(port)
        finally:
            self._close_port()

    def _read_port(self, port: Any) -> None:
        """Read ``port`` until it fails or another thread asks for it to be closed,
        then close it: as in pyserial's ``serial.threaded.ReaderThread``, the port is
        never closed under a read.

        Only ``_releasing`` stops the reads (close() sets it too): it is set under
        _port_lock, so no write is under way then and none starts after, and the
        reader can take the lock to close the port.  Stopping on anything else
        could leave a writer blocked on a buffer that nobody drains any more.
        """
        self._decoder = FrameDecoder()
        try:
            while not self._releasing.is_set():
                try:
                    data = port.read(max(1, port.in_waiting))
                except PORT_FAILURES as error:
                    self._drop_link(f"read failed: {error}")
                    return
                if data:
                    acks = self._decoder.acks
                    for message in self._decoder.feed(data):
                        self._handle(message)
                    if self._decoder.acks != acks:
                        with self._ack_seen:
                            self._ack_seen.notify_all()
        finally:
            self._close_port()

    def _handle(self, message: Message | FrameError) -> None:
        if isinstance(message, FrameError):
            self.frame_errors += 1
            log.warning("board: skipped a bad line: %s", message)
            return
        self._last_rx = time.monotonic()
        if isinstance(message, Reply | ErrorReply):
            if isinstance(message, Reply) and message.command == "PONG" and message.fields:
                with contextlib.suppress(ValueError):
                    self._last_uptime = int(message.fields[0], 16)
            if message.seq is None:
                log.warning("board: answered a garbled frame with %s", message.code)
                return
            if isinstance(message, Reply) and message.command == "STATUS":
                self._reconcile(message)
            with self._state_lock:
                background = self._background.pop(message.seq, None)
                if (background is not None and isinstance(message, ErrorReply)
                        and self._desired.get(background[0]) == background[1]):
                    self._rejected[background[0]] = background[1]
                    log.error("board: refused %s %s: %s", *background, message.code)
                waiter = self._waiters.get(message.seq)
            if waiter is not None and (
                isinstance(message, ErrorReply) or message.command == waiter.command
                or (waiter.command == "PING" and message.command == "PONG")
            ):
                waiter.answer = message
                waiter.done.set()
        elif isinstance(message, ButtonEvent):
            self._handle_event(message)
        elif isinstance(message, Heartbeat):
            self._last_uptime = message.uptime_ms
        elif isinstance(message, Banner) and self.connected:
            # the board restarted under us: handshake again, resend everything
            self._drop_link(f"board restarted (reset cause {message.info.reset_cause:#04x})")

    def _reconcile(self, reply: Reply) -> None:
        """Note what the board shows differently from what the game set, for the
        supervisor to send again."""
        try:
            status = parse_status(reply)
        except FrameError as error:
            log.warning("board: %s", error)
            return
        shown = _status_shows(status)
        with self._state_lock:
            asked_at = self._status_at.pop(reply.seq, None)
            if asked_at is None:
                return  # not ours, or an answer to an older STATUS with this number
            for command, argument in self._desired.items():
                if (self._sent_at.get(command, 0) > asked_at
                        or self._set_at.get(command, 0) >= asked_at):
                    # set or sent after this STATUS: its answer cannot show it yet (nor
                    # may it send again what the supervisor is about to send once)
                    continue
                if self._rejected.get(command) == argument:
                    continue
                if shown[command] != _shown(command, argument):
                    self._unconfirmed.add(command)
            dropped = (status.dropped_events - self._board_dropped) & 0xFFFF
            self._board_dropped = status.dropped_events
        if dropped:
            self.dropped_presses += dropped
            log.error("board: %d button press(es) lost: the board's queue was full "
                      "(%d unacknowledged)", dropped, status.pending_events)
        if self._unconfirmed:
            self._wake.set()

    def _send_unconfirmed(self) -> None:
        """Send the unconfirmed state commands once, without waiting: the next
        STATUS shows whether they arrived, and they go again if not."""
        with self._state_lock:
            commands = [c for c in STATE_COMMANDS if c in self._unconfirmed]
            fresh = self._fresh & set(commands)
            self._unconfirmed.clear()
            self._fresh -= fresh
        for index, command in enumerate(commands):
            with self._state_lock:
                argument = self._desired.get(command)
                if argument is None or self._rejected.get(command) == argument:
                    continue
                seq = self._next_seq
                self._next_seq = (seq + 1) & 0xFF
                self._background[seq] = (command, argument)
            try:
                self._write(encode_command(seq, command, argument), command, seq)
            except DeviceError:
                with self._state_lock:
                    self._unconfirmed.update(commands[index:])
                    self._fresh |= fresh & set(commands[index:])
                return
            if command not in fresh:
                self.resyncs += 1

    def _handle_event(self, event: ButtonEvent) -> None:
        with self._state_lock:
            expected = self._expected_event
            if expected is None:
                return  # before the handshake: it is resent afterwards
            if event.number == expected:
                expected = self._expected_event = (expected + 1) & 0xFFFF
                for event_listener in list(self._event_listeners):
                    self._dispatch.put(functools.partial(event_listener, event))
            elif seq16_after(event.number, expected):
                return  # an earlier one was lost: the board resends in order
            acknowledged = (expected - 1) & 0xFFFF
        # Fire and forget: the board resends until an ACK arrives, and every
        # copy (a duplicate included) is answered with an ACK again.
        with contextlib.suppress(DeviceError):
            self._write(encode_command(0xFF, "ACK", f"{acknowledged:04X}"))

    # --- supervisor -----------------------------------------------------------------
    def _supervise(self) -> None:
        last_poll = 0.0
        while not self._closed.is_set():
            if not self.connected:
                try:
                    self._connect()
                except (DeviceError, *PORT_FAILURES) as error:
                    log.debug("board: %s not ready: %s", self.url, error)
                    self._release_port()
                    self._closed.wait(self.reconnect_s)
                continue
            now = time.monotonic()
            if now - self._last_rx > self.link_timeout_s:
                self._drop_link(f"silent for {self.link_timeout_s:g} s")
                continue
            if now - last_poll >= self.heartbeat_s:
                # Our heartbeat; not waited for, so a dead board is noticed by
                # the silence check above, on time, whatever the retries.  Its
                # answer is the board's state, compared by the reader.
                last_poll = now
                with self._state_lock:
                    seq = self._next_seq
                    self._next_seq = (seq + 1) & 0xFF
                with contextlib.suppress(DeviceError):
                    self._write(encode_command(seq, "STATUS"), "STATUS", seq)
            self._send_unconfirmed()
            self._wake.wait(0.05)
            self._wake.clear()

    def _connect(self) -> None:
        if not self._release_port():
            # two handles on one device would split its bytes between them
            raise BoardDisconnected(f"the previous port on {self.url!r} is still open")
        port = serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=0.02)
        try:
            # before the reader has it: this reads, and only the reader may read
            port.reset_input_buffer()
        except PORT_FAILURES as error:
            log.debug("board: could not flush %s: %s", self.url, error)
        with self._port_lock:
            if self._closed.is_set():
                # close() has already released the port: this one would be left open
                port.close()
                raise BoardDisconnected(f"board on {self.url!r} closed")
            self._port = port
        self._handshaking = True
        try:
            # The boot banner is lost when the port opens (and a real Uno
            # resets then): keep asking until the board answers.
            deadline = time.monotonic() + self.handshake_s
            while True:
                try:
                    reply = self.command("HELLO")
                    break
                except BoardTimeout:
                    if time.monotonic() > deadline:
                        raise
            info = parse_board_info(reply.fields)
            if info.protocol != PROTOCOL_VERSION:
                raise ProtocolError(
                    f"board {info.model} speaks protocol {info.protocol}, "
                    f"not {PROTOCOL_VERSION}"
                )
            with self._state_lock:
                previous = self.info
                # Same run of the same board: same boot counter, uptime not
                # gone back, and the board's next number not before ours (it
                # made every event we have seen).
                same_boot = (
                    previous is not None
                    and self._expected_event is not None
                    and info.boot == previous.boot
                    and info.uptime_ms >= self._last_uptime
                    and not seq16_after(self._expected_event, info.next_event)
                )
                if not same_boot or self._expected_event is None:
                    # a fresh board: everything it still holds is new to us
                    self._expected_event = (
                        info.oldest_pending if info.oldest_pending is not None else info.next_event
                    )
                if not same_boot:
                    self._board_dropped = 0
                self.info = info
                self._last_uptime = info.uptime_ms
                expected = self._expected_event
                # Whatever the board shows now, it may have missed any of them.
                self._unconfirmed.update(self._desired)
            # Not waited for, as nothing after the handshake is: a lost ACK is
            # sent again at the next copy of the event, a lost state command
            # when a STATUS answer shows it missing.
            with contextlib.suppress(DeviceError):
                self._write(encode_command(0xFF, "ACK", f"{(expected - 1) & 0xFFFF:04X}"))
            self._send_unconfirmed()
            self._last_rx = time.monotonic()
        finally:
            self._handshaking = False
        if previous is not None:
            self.reconnections += 1
        log.info("board: %s %s on %s", info.model, info.firmware, self.url)
        self._connected.set()
        self._notify_link(True)

    def _release_port(self) -> bool:
        """Have the port closed; True once it is (or there was none).

        The reader closes it: asked here, it notices when its read returns (the
        port's read timeout is 0.02 s, so no cancel_read() is needed).  Another
        thread waits for that, at most RELEASE_TIMEOUT_S; the reader itself closes
        the port after this returns.
        """
        reader = self._reader
        if reader is None or not reader.is_alive():
            self._close_port()  # nobody reads it, so closing it here races with nothing
            return True
        with self._port_changed:
            if self._port is not None:
                self._releasing.set()
            if threading.current_thread() is reader:
                return self._port is None and not self._closing
            return self._port_changed.wait_for(
                lambda: self._port is None and not self._closing, RELEASE_TIMEOUT_S
            )

    def _close_port(self) -> None:
        """Close the port; only the reader calls this while it runs."""
        with self._port_changed:
            port, self._port = self._port, None
            self._releasing.clear()
            if port is None:
                return
            self._closing += 1
        try:
            # Outside the lock: a socket:// port sleeps 0.3 s in close(), and
            # writers must not wait for that to learn there is no port.
            port.close()
        except PORT_FAILURES as error:
            log.debug("board: closing %s failed: %s", self.url, error)
        finally:
            with self._port_changed:
                self._closing -= 1
                self._port_changed.notify_all()

    def _drop_link(self, reason: str, notify: bool = True) -> None:
        was_connected = self._connected.is_set()
        self._connected.clear()
        self._release_port()
        with self._state_lock:
            waiters = list(self._waiters.values())
        for waiter in waiters:
            waiter.failure = BoardDisconnected(f"board on {self.url!r} lost: {reason}")
            waiter.done.set()
        if was_connected and notify:
            log.warning("board: link lost (%s); the game goes on without it", reason)
            self._notify_link(False)

    def _notify_link(self, up: bool) -> None:
        for listener in list(self._link_listeners):
            self._dispatch.put(functools.partial(listener, up))

    def _dispatch_loop(self) -> None:
        while True:
            job = self._dispatch.get()
            if job is None:
                return
            try:
                job()
            except Exception:  # a listener's bug must not stop the board
                log.exception("board: listener failed")
