"""FastAPI dependencies: the settings, the service and the token check."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Cookie, Depends, Header, HTTPException, Path, Request, status

from tabletop.panel.service import PanelService
from tabletop.panel.settings import PanelSettings


def get_settings(request: Request) -> PanelSettings:
    settings: PanelSettings = request.app.state.settings
    return settings


def get_service(request: Request) -> PanelService:
    service: PanelService = request.app.state.service
    return service


MatchId = Annotated[int, Path(ge=1, le=2**31 - 1, description="the match's id")]
"""Bounded to what every database's INTEGER holds."""

SettingsDep = Annotated[PanelSettings, Depends(get_settings)]
ServiceDep = Annotated[PanelService, Depends(get_service)]


TOKEN_COOKIE = "tabletop_panel_token"
"""Set by the first page opened with ``?token=``; the browser sends it from then on, so the
token leaves the address bar (and the history) after that first visit."""


# The token is how a client is let in, not part of what it asks: kept out of the API's
# parameters (the /docs page says how to send it).
TokenHeader = Annotated[str | None, Header(max_length=200, include_in_schema=False)]
TokenCookie = Annotated[
    str | None, Cookie(alias=TOKEN_COOKIE, max_length=200, include_in_schema=False)
]


def token_matches(settings: PanelSettings, given: str | None) -> bool:
    expected = settings.token or ""
    return bool(expected) and secrets.compare_digest((given or "").encode(), expected.encode())


def require_token(
    settings: SettingsDep,
    x_panel_token: TokenHeader = None,
    cookie: TokenCookie = None,
) -> None:
    """Every change needs the token when one is set (always when on the network): in the
    header X-Panel-Token (programs) or the panel's cookie (its pages)."""
    if settings.token_required and not token_matches(settings, x_panel_token or cookie):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "this change needs the panel token (header X-Panel-Token)",
        )


def require_reader_token(
    settings: SettingsDep,
    x_panel_token: TokenHeader = None,
    cookie: TokenCookie = None,
) -> None:
    """On the network reading needs the token too: the scores are the players' own."""
    if settings.on_network and not token_matches(settings, x_panel_token or cookie):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "the panel on the network needs its token: open the link it printed",
        )


TokenDep = Depends(require_token)
ReaderDep = Depends(require_reader_token)
