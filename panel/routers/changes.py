"""Everything that changes a match: each change is a new event with who and when."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, status

from panel.dependencies import MatchId, ServiceDep, TokenDep
from panel.schemas import (
    Appended,
    CalibrationIn,
    EventIn,
    ItemFix,
    MatchCreate,
    MatchOut,
    ScoreEdit,
    SetupIn,
    UndoIn,
)
from panel.store import StoredEvent

router = APIRouter(prefix="/api", tags=["changes"], dependencies=[TokenDep])
CREATED = status.HTTP_201_CREATED


def _appended(stored: StoredEvent) -> dict[str, Any]:
    return {"id": stored.id, "type": stored.type, "recorded_at": stored.recorded_at}


@router.post("/matches", response_model=MatchOut, status_code=CREATED)
def create_match(body: MatchCreate, service: ServiceDep) -> dict[str, Any]:
    return service.store.create_match(body.name).to_json()


@router.post("/matches/{match_id}/setup", response_model=Appended, status_code=CREATED)
def setup(match_id: MatchId, body: SetupIn, service: ServiceDep) -> dict[str, Any]:
    fields = body.model_dump(exclude={"who"})
    return _appended(service.correction(match_id, "setup", body.who, **fields))


@router.post("/matches/{match_id}/calibration", response_model=Appended, status_code=CREATED)
def calibration(match_id: MatchId, body: CalibrationIn, service: ServiceDep) -> dict[str, Any]:
    fields = body.model_dump(exclude={"who"})
    return _appended(service.correction(match_id, "calibration", body.who, **fields))


@router.post("/matches/{match_id}/corrections/item", response_model=Appended, status_code=CREATED)
def correct_item(match_id: MatchId, body: ItemFix, service: ServiceDep) -> dict[str, Any]:
    service.store.match(match_id)
    melds = service.state(match_id)["table"]["melds"]
    if body.meld >= len(melds) or body.index >= len(melds[body.meld]["meld"].split()):
        raise ValueError(f"the table has no item {body.index} in meld {body.meld}")
    fields = body.model_dump(exclude={"who"})
    fields["was"] = melds[body.meld]["meld"].split()[body.index]
    return _appended(service.correction(match_id, "item_corrected", body.who, **fields))


@router.post("/matches/{match_id}/corrections/score", response_model=Appended, status_code=CREATED)
def edit_score(match_id: MatchId, body: ScoreEdit, service: ServiceDep) -> dict[str, Any]:
    service.store.match(match_id)
    state = service.state(match_id)
    if body.round > len(state["rounds"]):
        raise ValueError(f"round {body.round} has not been played ({len(state['rounds'])} so far)")
    unknown = sorted(set(body.scores) - set(state["setup"]["players"]))
    if unknown:
        raise ValueError(f"not players of this match: {unknown}")
    fields = body.model_dump(exclude={"who"})
    return _appended(service.correction(match_id, "score_edited", body.who, **fields))


@router.post("/matches/{match_id}/undo", response_model=Appended, status_code=CREATED)
def undo(match_id: MatchId, body: UndoIn, service: ServiceDep) -> dict[str, Any]:
    return _appended(service.undo_last(match_id, body.who))


@router.post("/matches/{match_id}/events", response_model=Appended, status_code=CREATED)
def publish(match_id: MatchId, body: EventIn, service: ServiceDep) -> dict[str, Any]:
    """A game event from a game running elsewhere (the same shape as on the bus)."""
    return _appended(service.record(match_id, body.model_dump(exclude_none=False)))
