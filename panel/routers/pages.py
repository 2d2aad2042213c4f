"""The pages (one static page that shows a view per path) and the camera frame."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

from tabletop.panel.dependencies import SettingsDep

STATIC = Path(__file__).resolve().parent.parent / "static"
router = APIRouter(tags=["pages"])
VIEWS = ("", "table", "history", "setup")


def _page() -> FileResponse:
    return FileResponse(STATIC / "index.html", media_type="text/html")


# Fixed routes, no path parameter: nothing a client sends names a file.
for _view in VIEWS:
    router.add_api_route(f"/{_view}", _page, methods=["GET"], include_in_schema=False)


@router.get(
    "/api/frame.jpg",
    response_class=FileResponse,
    responses={200: {"content": {"image/jpeg": {}}}, 404: {}},
)
def camera_frame(settings: SettingsDep) -> FileResponse:
    """The latest camera frame, when the live table writes one (the path is a setting)."""
    path = settings.frame_path
    if path is None or not path.is_file():
        raise HTTPException(404, "no camera frame")
    return FileResponse(path, media_type="image/jpeg", headers={"Cache-Control": "no-store"})
