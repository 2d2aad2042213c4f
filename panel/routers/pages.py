"""The pages (one static page that shows a view per path) and the camera frame.

A page opened with ``?token=`` (the link or QR code the panel prints) sets the token as a
cookie and sends the browser on to the same page without it, so the token is neither
kept in the address bar nor in the history; on the network a page opened with neither
the token nor the cookie says how to get in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Cookie, HTTPException, Query, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from tabletop.panel.dependencies import TOKEN_COOKIE, ReaderDep, SettingsDep, token_matches

STATIC = Path(__file__).resolve().parent.parent / "static"
router = APIRouter(tags=["pages"])
VIEWS = ("", "table", "history", "setup", "matches", "players", "round", "tv")
LOCKED = """<!doctype html><html lang="en"><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tabletop panel</title><body style="font: 1.2rem system-ui; margin: 2rem">
<h1>tabletop</h1><p>{why}</p></body></html>"""


def _page(
    request: Request,
    settings: SettingsDep,
    token: Annotated[str | None, Query(max_length=200)] = None,
    cookie: Annotated[str | None, Cookie(alias=TOKEN_COOKIE, max_length=200)] = None,
) -> Response:
    if token is not None:
        if not token_matches(settings, token):
            return HTMLResponse(LOCKED.format(why="This link's token is not the panel's."), 401)
        query = request.url.remove_query_params("token").query
        response = RedirectResponse(request.url.path + (f"?{query}" if query else ""), 303)
        response.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/",
                            secure=request.url.scheme == "https")
        return response
    if settings.on_network and not token_matches(settings, cookie):
        why = "Open the panel with the link (or QR code) that tabletop printed: it holds the token."
        return HTMLResponse(LOCKED.format(why=why), 401)
    return FileResponse(STATIC / "index.html", media_type="text/html")


# Fixed routes, no path parameter: nothing a client sends names a file.
for _view in VIEWS:
    router.add_api_route(f"/{_view}", _page, methods=["GET"], include_in_schema=False)


@router.get("/manifest.webmanifest", include_in_schema=False)
def manifest() -> FileResponse:
    """What a phone needs to install the panel as an app."""
    return FileResponse(STATIC / "manifest.webmanifest", media_type="application/manifest+json")


@router.get("/sw.js", include_in_schema=False)
def service_worker() -> FileResponse:
    """The service worker, from the root so that its scope is the whole panel; never cached,
    so a new version of the page is picked up at the next visit."""
    return FileResponse(
        STATIC / "sw.js",
        media_type="text/javascript",
        headers={"Cache-Control": "no-cache", "Service-Worker-Allowed": "/"},
    )


@router.get(
    "/api/frame.jpg",
    response_class=FileResponse,
    responses={200: {"content": {"image/jpeg": {}}}, 404: {}},
    dependencies=[ReaderDep],
)
def camera_frame(settings: SettingsDep) -> FileResponse:
    """The latest camera frame, when the live table writes one (the path is a setting)."""
    path = settings.frame_path
    if path is None or not path.is_file():
        raise HTTPException(404, "no camera frame")
    return FileResponse(path, media_type="image/jpeg", headers={"Cache-Control": "no-store"})
