"""``tabletop board``: find scoring boards, show their status, test them.

    tabletop board find [--probe]            serial ports that may be a board
    tabletop board status --port PORT        handshake and STATUS
    tabletop board test --port PORT          light every LED, count on the display

PORT is anything ``serial.serial_for_url`` opens: /dev/ttyACM0, COM3,
socket://host:port, loop://.  Imports pyserial and device only when run.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable
from typing import Any

EXIT_NO_BOARD = 1
EXIT_BAD_INPUT = 2


def _no_board(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """A board that does not answer is neither bad input nor a bug: one line, exit 1
    (a port name that cannot be a port is bad input: exit 2)."""

    @functools.wraps(handler)
    def wrapped(args: argparse.Namespace) -> int:
        from tabletop.device.errors import BadPortUrl, DeviceError

        try:
            return handler(args)
        except BadPortUrl as error:
            print(f"tabletop: board: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except DeviceError as error:
            print(f"tabletop: board: {error}", file=sys.stderr)
            return EXIT_NO_BOARD

    return wrapped


def _open(port: str, timeout: float) -> Any:
    from tabletop.device.driver import Board

    board = Board(port).start()
    try:
        board.wait_connected(timeout)
    except Exception:
        board.close()
        raise
    return board


def _info_json(info: Any) -> dict[str, Any]:
    return {
        "model": info.model,
        "firmware": info.firmware,
        "protocol": info.protocol,
        "seats": info.seats,
        "buttons": info.buttons,
        "boot": info.boot,
        "uptime_ms": info.uptime_ms,
    }


def cmd_find(args: argparse.Namespace) -> int:
    from serial.tools import list_ports  # type: ignore[import-untyped]

    from tabletop.device.errors import DeviceError

    found = []
    for port in sorted(list_ports.comports(), key=lambda p: p.device):
        entry: dict[str, Any] = {"port": port.device, "description": port.description}
        if args.probe:
            try:
                board = _open(port.device, args.timeout)
            except (DeviceError, OSError) as error:
                entry["board"] = None
                entry["error"] = str(error)
            else:
                entry["board"] = _info_json(board.info)
                board.close()
        found.append(entry)
    if args.json:
        print(json.dumps(found))
    elif not found:
        print("no serial ports found")
    for entry in [] if args.json else found:
        line = f"{entry['port']:20} {entry['description']}"
        if entry.get("board"):
            line += f"  -> board {entry['board']['model']} firmware {entry['board']['firmware']}"
        elif "error" in entry:
            line += "  -> no board"
        print(line)
    return 0


@_no_board
def cmd_status(args: argparse.Namespace) -> int:
    board = _open(args.port, args.timeout)
    try:
        status = board.status()
        round_trip = board.ping()
        payload = {
            **_info_json(board.info),
            "seat": status.seat,
            "flags": status.flags,
            "display": status.display,
            "brightness": status.brightness,
            "pending_events": status.pending_events,
            "dropped_events": status.dropped_events,
            "errors": status.errors,
            "ping_ms": round(round_trip * 1000, 2),
        }
    finally:
        board.close()
    if args.json:
        print(json.dumps(payload))
    else:
        for key, value in payload.items():
            print(f"{key:>15}: {value}")
    return 0


@_no_board
def cmd_test(args: argparse.Namespace) -> int:
    board = _open(args.port, args.timeout)
    try:
        seats = board.info.seats if board.info else 4
        steps: list[tuple[str, str]] = []
        for seat in range(seats):
            steps.append(("SEAT", str(seat)))
            steps.append(("SHOW", f"P{seat + 1}"))
        for flag in (1, 2, 4, 7):
            steps.append(("FLAGS", str(flag)))
        steps.extend(("SHOW", str(digit) * 4) for digit in range(10))
        steps.extend([("SHOW", "HELP"), ("SEAT", "-"), ("FLAGS", "0"), ("SHOW", "")])
        for command, argument in steps:
            board.command(command, argument)
            if not args.quiet:
                print(f"{command} {argument}".strip())
            time.sleep(args.step)
    finally:
        board.close()
    print("test pattern done")
    return 0


def register(commands: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    board = commands.add_parser("board", help="the optional scoring board (USB serial)")
    board_commands = board.add_subparsers(
        dest="board_command", required=True, parser_class=parser_class
    )

    def common(sub: argparse.ArgumentParser, port: bool = True) -> None:
        if port:
            sub.add_argument("--port", required=True, help="serial port or pyserial URL")
        sub.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for it")
        sub.add_argument("--json", action="store_true", help="print JSON")

    find = board_commands.add_parser("find", help="list serial ports that may be boards")
    common(find, port=False)
    find.add_argument("--probe", action="store_true", help="handshake with each port")
    find.set_defaults(handler=cmd_find)

    status = board_commands.add_parser("status", help="what a board says about itself")
    common(status)
    status.set_defaults(handler=cmd_status)

    test = board_commands.add_parser("test", help="send a test pattern to a board")
    common(test)
    test.add_argument("--step", type=float, default=0.2, help="seconds between steps")
    test.add_argument("--quiet", action="store_true", help="print only the end")
    test.set_defaults(handler=cmd_test)
