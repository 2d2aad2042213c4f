"""The players' profiles: every player of any match in the store with their record."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from tabletop.panel.dependencies import ReaderDep, ServiceDep
from tabletop.panel.schemas import PlayerOut, PlayerProfile, refusal

router = APIRouter(
    prefix="/api",
    tags=["players"],
    dependencies=[ReaderDep],
    responses={401: refusal("on the network: no token")},
)
PlayerName = Annotated[str, Path(min_length=1, max_length=40, description="as in the setup")]


@router.get("/players", response_model=list[PlayerOut])
def players(service: ServiceDep) -> list[dict[str, Any]]:
    """Every player, by name: matches, finished ones and wins, rounds, the average and
    the best round score (as the variants count them: penalty games negative)."""
    return service.players()


@router.get(
    # ":path": a name may hold "/" ("Ana/Ben"), sent as %2F, which reaches the router decoded
    "/players/{name:path}",
    response_model=PlayerProfile,
    responses={404: refusal("no match has a player of that name")},
)
def player(name: PlayerName, service: ServiceDep) -> dict[str, Any]:
    """One player's record and the matches they played, newest first."""
    return service.player(name)
