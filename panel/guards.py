"""What every request passes before the panel's routes see it.

* **Size**: a body over ``max_body_bytes`` is refused (413) before anything parses it,
  whether it says its length or streams it; nothing of it is kept.
* **Host**: only the names the panel serves under, and addresses written as numbers, are
  answered (400 otherwise), so a web page elsewhere cannot reach it through DNS
  rebinding (a name of its own that resolves to 127.0.0.1 or to this machine's address).
* **Origin**: a browser's write (POST, PUT, PATCH, DELETE) and a WebSocket must come from
  the panel's own pages (403 otherwise), even on this machine: another site open in the
  same browser cannot make changes.  "Own" is exact: the ``Origin`` must name the scheme,
  host and port the request came in on (its ``Host`` header), so a page served on another
  port of the same machine, or over https where the panel speaks http, is refused too.
  Programs that are not browsers send no ``Origin`` and no ``Sec-Fetch-Site`` and pass;
  they still need the token where one is set.

A pure ASGI middleware, so the limits hold before FastAPI reads a byte of the body.  It also
stamps each request's arrival (``request.state.arrived``, on the ``time.monotonic`` clock), the
moment a hint's budget counts from.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class RequestGuard:
    def __init__(self, app: ASGIApp, *, hosts: Collection[str], max_body_bytes: int) -> None:
        self.app = app
        self.hosts = frozenset(host.lower() for host in hosts)
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        scope.setdefault("state", {})["arrived"] = time.monotonic()
        headers = _headers(scope)
        host = _host_name(headers.get("host", ""))
        if host not in self.hosts and not _is_address(host):
            await _refuse(scope, send, 400, f"the panel does not serve the host {host!r}")
            return
        unsafe = kind == "websocket" or scope["method"] in UNSAFE_METHODS
        if unsafe and not _same_origin(headers, scope.get("scheme", "http")):
            await _refuse(scope, send, 403, "changes are taken only from the panel's own pages")
            return
        if kind == "websocket" or scope["method"] not in UNSAFE_METHODS:
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None:
            if not declared.isdigit():
                await _refuse(scope, send, 400, "a bad Content-Length")
                return
            if int(declared) > self.max_body_bytes:
                await _refuse(scope, send, 413, self._too_large())
                return
        body = await self._read_body(receive)
        if body is None:
            await _refuse(scope, send, 413, self._too_large())
            return
        await self.app(scope, _replay(body), send)

    def _too_large(self) -> str:
        return f"the request body is over {self.max_body_bytes} bytes"

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _same_origin(headers: dict[str, str], request_scheme: str) -> bool:
    """Whether a browser's request comes from a page of this very origin: the same
    scheme, host and port as the request itself."""
    origin = headers.get("origin")
    if origin is None:
        # Browsers send Sec-Fetch-Site with every request; "none" is a typed address
        return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    scheme = {"ws": "http", "wss": "https"}.get(request_scheme, request_scheme)
    own = _origin_parts(f"{scheme}://{headers.get('host', '')}")
    return own is not None and _origin_parts(origin) == own


def _origin_parts(origin: str) -> tuple[str, str, int] | None:
    """``scheme://host[:port]`` -> (scheme, host, port), the port filled in; None for
    anything that is not such an origin (``null``, a path, a bad port)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/"):
        return None
    if parts.username is not None or parts.query or parts.fragment:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def _headers(scope: Scope) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1")
            for key, value in scope.get("headers", ())}


def _host_name(host: str) -> str:
    """``name:port`` or ``[v6]:port`` -> the name alone, lower case."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _refuse(scope: Scope, send: Send, status: int, detail: str) -> None:
    if scope["type"] == "websocket":
        # before the handshake is accepted: the client sees the connection refused
        await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
        return
    body = json.dumps({"detail": detail}).encode()
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")],
    })
    await send({"type": "http.response.body", "body": body})
