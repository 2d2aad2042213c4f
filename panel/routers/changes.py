"""Everything that changes a match: each change is a new event with who and when.

An item correction is also told to the live table when the panel runs beside
one (``panel.embed.start_panel`` puts its correction inbox on ``app.state``):
the watch loop pins the token to the physical item and the game takes the
corrected table, and only then is the ``item_corrected`` event logged, with
``live: true``.  A correction the live table refuses (the item is no longer
there as shown) is answered 422 and logged nowhere; one it does not answer in
time is answered 503.  Without a live table (a panel on its own, or the video
has ended) the correction only fixes the panel's view (``live: false``).
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from fastapi import APIRouter, HTTPException, Request, status

from live.corrections import Correction, CorrectionInbox, LiveTableGone
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
LIVE_CORRECTIONS = "live_corrections"
"""``app.state`` attribute set by ``panel.embed``: match id -> the live table's inbox."""
LIVE_ANSWER_S = 3.0
"""How long a correction waits for the watch loop (it answers between two frames)."""


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


def _live_inbox(request: Request, match_id: int) -> CorrectionInbox | None:
    inboxes = getattr(request.app.state, LIVE_CORRECTIONS, None) or {}
    inbox = inboxes.get(match_id)
    return inbox if isinstance(inbox, CorrectionInbox) else None


def _tell_live_table(inbox: CorrectionInbox | None, correction: Correction) -> bool:
    """Whether the live table took ``correction``; its CorrectionError (a ValueError,
    answered 422) passes through."""
    if inbox is None:
        return False
    future = inbox.submit(correction)
    try:
        future.result(timeout=LIVE_ANSWER_S)
    except LiveTableGone:
        return False
    except FutureTimeout:
        if future.cancel():  # not begun: it never will be, so nothing has changed
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                f"the live table did not answer within {LIVE_ANSWER_S:g} s;"
                f" {correction.describe()} was not made, try again",
            ) from None
        future.result()  # the loop is applying it right now
    return True


@router.post("/matches/{match_id}/corrections/item", response_model=Appended, status_code=CREATED)
def correct_item(
    match_id: MatchId, body: ItemFix, service: ServiceDep, request: Request
) -> dict[str, Any]:
    service.store.match(match_id)
    melds = service.state(match_id)["table"]["melds"]
    if body.meld >= len(melds) or body.index >= len(melds[body.meld]["meld"].split()):
        raise ValueError(f"the table has no item {body.index} in meld {body.meld}")
    fields = body.model_dump(exclude={"who"})
    fields["was"] = melds[body.meld]["meld"].split()[body.index]
    correction = Correction(body.meld, body.index, body.item, body.who, fields["was"])
    fields["live"] = _tell_live_table(_live_inbox(request, match_id), correction)
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
