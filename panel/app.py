"""The panel's FastAPI application: ``create_app(settings)``."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from tabletop.panel.routers import changes, live, matches, pages
from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings
from tabletop.panel.store import EventStore, StoreError

STATIC = Path(__file__).resolve().parent / "static"


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
        service = PanelService(EventStore(settings.database_url), settings.turn_seconds)
    app = FastAPI(title="tabletop panel", version="1")
    app.state.settings = settings
    app.state.service = service

    @app.exception_handler(StoreError)
    async def _not_found(_request: Request, error: StoreError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=404)

    @app.exception_handler(ValueError)
    async def _bad_value(_request: Request, error: ValueError) -> JSONResponse:
        # Engine errors (unknown option, a round that does not fit) quote the input.
        return JSONResponse({"detail": str(error)}, status_code=422)

    @app.middleware("http")
    async def _headers(request: Request, call_next):  # type: ignore[no-untyped-def]
        response = await call_next(request)
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data:; connect-src 'self' ws: wss:",
        )
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    app.include_router(pages.router)
    app.include_router(matches.router)
    app.include_router(changes.router)
    app.include_router(live.router)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
