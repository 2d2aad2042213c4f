"""The panel's FastAPI application: ``create_app(settings)``."""

from __future__ import annotations

import html
import threading
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route

from tabletop.panel.guards import RequestGuard
from tabletop.panel.hints import HintPool, HintsBusy, start_workers
from tabletop.panel.routers import about, changes, live, matches, pages, players, rounds, rules
from tabletop.panel.schemas import Unprocessable, refusal
from tabletop.panel.service import PanelService, RoundConflict
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import EventStore, StorageUnavailable, StoreError

STATIC = Path(__file__).resolve().parent / "static"

_optimiser_warmed = threading.Event()


def _warm_optimiser() -> None:
    """Import the hint's integer programme in the background, once per process: until it
    is imported a hint's short budget cannot hold the import's half second, and hard
    positions are searched without it.  The hints search in worker processes
    (panel/hints.py): the server process they are forked from is started too, and
    imports it once for all of them."""
    if _optimiser_warmed.is_set():
        return
    _optimiser_warmed.set()

    def warm() -> None:
        from tabletop.engine.rearrange_ilp import prepare

        prepare()
        start_workers()

    threading.Thread(target=warm, name="optimiser-warm-up", daemon=True).start()


GUARD_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: refusal("a host name the panel does not serve (see panel/guards.py)"),
    403: refusal("a browser's change from a page that is not the panel's"),
    413: refusal("a body over the limit"),
    503: refusal("the database cannot be written now (the disk full, read-only): nothing saved"),
    422: {"description": "a body against the schema or the rules", "model": Unprocessable},
}


class InsecureSettings(ValueError):
    """Listening on the network without a token."""


def create_app(
    settings: PanelSettings | None = None, service: PanelService | None = None
) -> FastAPI:
    settings = settings or PanelSettings()
    if settings.on_network and not settings.token:
        raise InsecureSettings(
            f"the panel listens on {settings.host!r}, beyond this machine: set a token"
        )
    if service is None:
        service = PanelService(EventStore(settings.database_url), settings.turn_seconds,
                               HintPool(settings.hint_workers, settings.hint_waiting))
    # FastAPI's own /docs loads its scripts from a CDN; the panel's lists the API itself
    app = FastAPI(
        title="tabletop panel",
        version="1",
        docs_url=None,
        redoc_url=None,
        responses=GUARD_RESPONSES,
    )
    app.state.settings = settings
    app.state.service = service
    _warm_optimiser()

    @app.exception_handler(StoreError)
    async def _not_found(_request: Request, error: StoreError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=404)

    @app.exception_handler(StorageUnavailable)
    async def _storage_unavailable(_request: Request, error: StorageUnavailable) -> JSONResponse:
        # the database's own state, not the request's: nothing was written, and the same
        # request succeeds once the disk has room again; no traceback for the log
        return JSONResponse(
            {"detail": f"{error}; nothing was saved, try again once that is fixed"},
            status_code=503,
            headers={"Retry-After": "10"},
        )

    @app.exception_handler(HintsBusy)
    async def _hints_busy(_request: Request, busy: HintsBusy) -> JSONResponse:
        return JSONResponse({"detail": str(busy)}, status_code=503, headers={"Retry-After": "2"})

    @app.exception_handler(RoundConflict)
    async def _conflict(_request: Request, conflict: RoundConflict) -> JSONResponse:
        # a change that does not fit where the match stands (no players, over, live)
        return JSONResponse({"detail": str(conflict)}, status_code=409)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, error: StarletteHTTPException) -> Response:
        headers = dict(error.headers or {})
        if error.status_code == 405:
            # every method the path takes, across the routers that serve it
            methods: set[str] = set()
            for route in app.routes:
                if isinstance(route, Route) and route.matches(request.scope)[0] is not Match.NONE:
                    methods |= route.methods or set()
            headers["Allow"] = ", ".join(sorted(methods))
        return JSONResponse({"detail": error.detail}, error.status_code, headers=headers)

    @app.exception_handler(ValueError)
    async def _bad_value(_request: Request, error: ValueError) -> JSONResponse:
        # Engine errors (unknown option, a round that does not fit) quote the input.
        return JSONResponse({"detail": str(error)}, status_code=422)

    @app.middleware("http")
    async def _headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        # no page of the panel is meant to be shown inside another site's frame: a
        # framed panel could be clicked on under a disguise
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:;"
            " frame-ancestors 'none'",
        )
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    app.include_router(pages.router)
    app.include_router(matches.router)
    app.include_router(changes.router)
    app.include_router(live.router)
    app.include_router(rules.router)
    app.include_router(rounds.router)
    app.include_router(players.router)
    app.include_router(about.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    def api_docs() -> str:
        return api_page(app.openapi())

    # outermost: sizes, hosts and origins are checked before anything else runs
    app.add_middleware(
        RequestGuard, hosts=settings.served_names(), max_body_bytes=settings.max_body_bytes
    )
    return app


def api_page(schema: dict[str, Any]) -> str:
    """The API as one page of plain HTML (no script), from its OpenAPI description."""
    rows = []
    for path, operations in sorted(schema.get("paths", {}).items()):
        for method, operation in operations.items():
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            name = body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
            rows.append(
                f"<tr><td><code>{html.escape(method.upper())}</code></td>"
                f"<td><code>{html.escape(path)}</code></td>"
                f"<td>{html.escape(operation.get('summary', ''))}</td>"
                f"<td>{html.escape(name)}</td></tr>"
            )
    return (
        "<!doctype html><html lang='en'><meta charset='utf-8'><title>tabletop panel API</title>"
        "<body style='font: 1rem system-ui; margin: 1.5rem'><h1>tabletop panel API</h1>"
        "<p>The full description: <a href='/openapi.json'>/openapi.json</a>.  Changes need"
        " the header <code>X-Panel-Token</code> where the panel has a token.</p>"
        "<table><tr><th>method</th><th>path</th><th>what</th><th>body</th></tr>"
        + "".join(rows) + "</table></body></html>"
    )
