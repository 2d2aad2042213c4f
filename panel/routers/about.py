"""What the pages ask about the panel itself: its language and how another device joins."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, HTTPException
from fastapi.responses import Response
from pydantic import BaseModel

from tabletop.panel.dependencies import ReaderDep, SettingsDep
from tabletop.panel.join import join_url, qr_svg
from tabletop.panel.schemas import refusal

LANGUAGES = ("de", "en", "ro")
DEFAULT_LANGUAGE = "en"
Language = Literal["de", "en", "ro"]
router = APIRouter(
    prefix="/api",
    tags=["panel"],
    dependencies=[ReaderDep],
    responses={401: refusal("on the network: no token")},
)


class PanelOut(BaseModel):
    lang: Language
    """The language the pages start in: the panel's own (``--lang``), else the browser's."""
    languages: list[Language]
    on_network: bool


class JoinOut(BaseModel):
    url: str | None
    """The link a phone opens (with the token), None while the panel serves this machine only."""
    qr_svg: str | None
    qr_url: str | None
    """The same QR code as an image the page can show."""


def best_language(accept_language: str | None) -> Language:
    """The first of the browser's languages, by its q-values, that the panel speaks."""
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate((accept_language or "").split(",")[:32]):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().lower().split("-")[0]
        if primary in LANGUAGES and 0 < quality <= 1:
            ranked.append((-quality, position, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE  # type: ignore[return-value]


@router.get("/panel", response_model=PanelOut)
def panel(
    settings: SettingsDep,
    accept_language: Annotated[str | None, Header(max_length=500)] = None,
) -> PanelOut:
    return PanelOut(
        lang=settings.lang or best_language(accept_language),
        languages=list(LANGUAGES),  # type: ignore[arg-type]
        on_network=settings.on_network,
    )


@router.get("/join", response_model=JoinOut)
def join(settings: SettingsDep) -> JoinOut:
    url = join_url(settings.host, settings.port, settings.token)
    if url is None:
        return JoinOut(url=None, qr_svg=None, qr_url=None)
    return JoinOut(url=url, qr_svg=qr_svg(url), qr_url="/api/join.svg")


@router.get(
    "/join.svg",
    response_class=Response,
    responses={200: {"content": {"image/svg+xml": {}}}, 404: refusal("the panel is local only")},
)
def join_qr(settings: SettingsDep) -> Response:
    url = join_url(settings.host, settings.port, settings.token)
    if url is None:
        raise HTTPException(404, "the panel listens on this machine only: nothing to join")
    return Response(qr_svg(url), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})
