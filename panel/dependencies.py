"""FastAPI dependencies: the settings, the service and the token check."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Header, HTTPException, Path, Query, Request, status

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


def require_token(
    settings: SettingsDep,
    x_panel_token: Annotated[str | None, Header(max_length=200)] = None,
    token: Annotated[str | None, Query(max_length=200)] = None,
) -> None:
    """Every change needs the token when one is set (always when on the network)."""
    if not settings.token_required:
        return
    given = x_panel_token or token or ""
    expected = settings.token or ""
    if not expected or not secrets.compare_digest(given.encode(), expected.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "this change needs the panel token (header X-Panel-Token)",
        )


TokenDep = Depends(require_token)
