"""How phones at the table reach the panel: its address on the local network and a QR code.

A panel bound to ``0.0.0.0`` listens everywhere, but no phone can open
``http://0.0.0.0:8765/``: the address to print is the one this machine has on
the network its default route leaves by (a UDP ``connect`` picks it without
sending a packet).  The link carries the token once; the page turns it into a
cookie and drops it from the address (panel/routers/pages.py).
"""

from __future__ import annotations

import io
import ipaddress
import socket
from typing import TextIO

import segno

UNSPECIFIED = ("0.0.0.0", "::", "")
_ROUTE_PROBE = ("192.0.2.1", 9)
"""TEST-NET-1 (RFC 5737): never routed anywhere, only used to pick the outgoing address."""


def lan_address(host: str) -> str | None:
    """The address other devices reach a panel listening on ``host`` at; None when it
    listens on this machine only."""
    if host == "localhost":
        return None
    if host not in UNSPECIFIED:
        try:
            if ipaddress.ip_address(host).is_loopback:
                return None
        except ValueError:
            pass  # a host name: phones reach it by that name
        return host
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(_ROUTE_PROBE)
            address = str(probe.getsockname()[0])
        except OSError:
            address = ""
    if address and not address.startswith("0."):
        return address
    return socket.gethostname()  # no route out: the machine's name is the best left


def join_url(host: str, port: int, token: str | None) -> str | None:
    """The link to open on a phone (with the token, once), or None on localhost only."""
    address = lan_address(host)
    if address is None:
        return None
    if ":" in address:  # an IPv6 literal goes in brackets in a URL
        address = f"[{address}]"
    return f"http://{address}:{port}/" + (f"?token={token}" if token else "")


def _code(url: str) -> segno.QRCode:
    # M: 15 % of the modules may be lost (a glare on a phone screen) and the code stays small
    return segno.make(url, error="m", micro=False)


def qr_svg(url: str) -> str:
    """A standalone SVG document of ``url``'s QR code, black on white with its quiet zone."""
    out = io.BytesIO()
    _code(url).save(out, kind="svg", scale=8, dark="#000", light="#fff", xmldecl=False,
                    title="tabletop panel")
    return out.getvalue().decode()


def qr_matrix(url: str) -> list[list[bool]]:
    """The code's modules, row by row, quiet zone included (True: dark)."""
    return [[bool(module) for module in row] for row in _code(url).matrix_iter(border=4)]


def print_qr(url: str, out: TextIO) -> None:
    """The QR code in a terminal, two modules a character in half blocks.  Drawn for light
    text on a dark background, as most terminals are: the light modules are the blocks."""
    rows = qr_matrix(url)
    if len(rows) % 2:
        rows.append([False] * len(rows[0]))
    glyphs = {(False, False): "█", (True, False): "▄", (False, True): "▀", (True, True): " "}
    for top, bottom in zip(rows[::2], rows[1::2], strict=True):
        out.write("".join(glyphs[(a, b)] for a, b in zip(top, bottom, strict=True)) + "\n")
    out.flush()
