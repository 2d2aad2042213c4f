"""Rounds scored by hand: a score sheet kept at the table, or a round the camera did not
see, entered on the panel and scored by the engine for the match's variant.

``POST /api/matches/{id}/rounds`` logs the next round (``round_scored``, ``manual``);
``POST .../rounds/preview`` answers what it would score and logs nothing;
``PUT .../rounds/{n}`` enters round ``n`` again (``score_edited`` with the engine's new
result).  A rule the entry breaks (a player not in the match, a rack given twice or not
at all, two players out, an unknown token, a match that is over) is answered 422 with
the reason; a match with no players yet, or a round not played, 409.  With the header
``Idempotency-Key``, a retry is answered with what was logged the first time.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Header, Path, status

from tabletop.panel.dependencies import MatchId, ReaderDep, ServiceDep, TokenDep
from tabletop.panel.schemas import (
    Appended,
    IdempotencyKey,
    RoundEntry,
    RoundPreview,
    RoundScored,
    refusal,
)

router = APIRouter(
    prefix="/api",
    tags=["rounds"],
    responses={
        401: refusal("the panel has a token and it was not given"),
        404: refusal("no such match"),
        409: refusal("the match has no players yet, or that round has not been played"),
    },
)
RoundNumber = Annotated[int, Path(ge=1, le=1000, description="the round, counted from 1")]
KeyHeader = Annotated[IdempotencyKey | None, Header()]


@router.post(
    "/matches/{match_id}/rounds",
    response_model=RoundScored,
    status_code=status.HTTP_201_CREATED,
    dependencies=[TokenDep],
)
def enter_round(
    match_id: MatchId, body: RoundEntry, service: ServiceDep, idempotency_key: KeyHeader = None
) -> dict[str, Any]:
    """Score the next round with the engine and log it."""
    service.store.match(match_id)
    stored, number, result = service.score_manual_round(
        match_id, body.model_dump(), key=idempotency_key
    )
    return {
        "id": stored.id,
        "type": stored.type,
        "recorded_at": stored.recorded_at,
        "round": number,
        "result": result,
    }


@router.post(
    "/matches/{match_id}/rounds/preview", response_model=RoundPreview, dependencies=[ReaderDep]
)
def preview_round(match_id: MatchId, body: RoundEntry, service: ServiceDep) -> dict[str, Any]:
    """What the engine would score for the next round; nothing is logged."""
    service.store.match(match_id)
    return {"result": service.preview_round(match_id, body.model_dump())}


@router.put(
    # digits only: PUT .../rounds/preview is a method the preview does not take (405)
    "/matches/{match_id}/rounds/{number:int}",
    response_model=Appended,
    status_code=status.HTTP_201_CREATED,
    dependencies=[TokenDep],
)
def reenter_round(
    match_id: MatchId,
    number: RoundNumber,
    body: RoundEntry,
    service: ServiceDep,
    idempotency_key: KeyHeader = None,
) -> dict[str, Any]:
    """Score an earlier round again from a new entry; it replaces the round's scores and
    winner."""
    service.store.match(match_id)
    stored = service.edit_round(match_id, number, body.model_dump(), key=idempotency_key)
    return {"id": stored.id, "type": stored.type, "recorded_at": stored.recorded_at}
