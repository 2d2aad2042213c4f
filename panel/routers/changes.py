"""Everything that changes a match: each change is a new event with who and when.

An item correction is also told to the live table when the panel runs beside
one (``panel.embed.start_panel`` puts its inbox in the service's
``live_inboxes``): the pipeline's loop pins the token to the physical item and the
game takes the corrected table, and only then is the ``item_corrected`` event
logged, with ``live: true``.  A correction the live table refuses (the item is
no longer there as shown) is answered 422 and logged nowhere; one it does not
answer in time is answered 503.  Without a live table (a panel on its own, or
the video has ended) the correction only fixes the panel's view (``live:
false``).

A game action (``POST /api/matches/{id}/actions``: end the turn, go out,
undo, pause or resume the timer, score the round, type a rack) goes the same
way and is answered with what the game did; the game's events reach the log
through the bus as any others.  Refused by the game: 422 with its reason; no
answer in time: 503; no live table: 409, as there is no game to act on.
"""

from __future__ import annotations

from concurrent.futures import TimeoutError as FutureTimeout
from typing import Annotated, Any

from fastapi import APIRouter, Header, HTTPException, status

from tabletop.live.actions import Action
from tabletop.live.corrections import Correction, Inbox, LiveTableGone, Request
from tabletop.panel.dependencies import MatchId, ServiceDep, TokenDep
from tabletop.panel.events import CalibrationNoted, ItemCorrected, MatchSetUp, ScoreEdited
from tabletop.panel.schemas import (
    ActionDone,
    ActionIn,
    Appended,
    CalibrationIn,
    EventIn,
    IdempotencyKey,
    ItemFix,
    MatchCreate,
    MatchOut,
    ScoreEdit,
    SetupIn,
    UndoIn,
    refusal,
)
from tabletop.panel.store import StoredEvent

router = APIRouter(
    prefix="/api",
    tags=["changes"],
    dependencies=[TokenDep],
    responses={
        401: refusal("the panel has a token and it was not given"),
        404: refusal("no such match"),
    },
)
LIVE_TABLE_RESPONSES: dict[int | str, dict[str, Any]] = {
    409: refusal("no live table plays this match"),
    503: refusal("the live table did not answer in time"),
}
CREATED = status.HTTP_201_CREATED
LIVE_ANSWER_S = 3.0
"""How long a request waits for the pipeline's loop (it answers between two frames)."""


def _appended(stored: StoredEvent) -> dict[str, Any]:
    return {"id": stored.id, "type": stored.type, "recorded_at": stored.recorded_at}


@router.post("/matches", response_model=MatchOut, status_code=CREATED)
def create_match(body: MatchCreate, service: ServiceDep) -> dict[str, Any]:
    return service.store.create_match(body.name).to_json()


@router.post(
    "/matches/{match_id}/close",
    response_model=Appended,
    status_code=CREATED,
    responses={409: refusal("the match is over already, or a live table plays it")},
)
def close_match(match_id: MatchId, body: UndoIn, service: ServiceDep) -> dict[str, Any]:
    """End the match where it stands: the one leading wins (a tie: no winner)."""
    return _appended(service.close_match(match_id, body.who))


@router.delete(
    # digits only: DELETE /api/matches/current is a method that path does not take (405)
    "/matches/{match_id:int}",
    response_model=MatchOut,
    responses={409: refusal("a live table plays the match")},
)
def delete_match(match_id: MatchId, body: UndoIn, service: ServiceDep) -> dict[str, Any]:
    """Take the match out of the list, the players' records and the pages (its events
    stay in the append-only log)."""
    return service.delete_match(match_id, body.who).to_json()


@router.post(
    "/matches/{match_id}/rematch",
    response_model=MatchOut,
    status_code=CREATED,
    responses={409: refusal("the match has no players")},
)
def rematch(match_id: MatchId, body: UndoIn, service: ServiceDep) -> dict[str, Any]:
    """A new match of the same game, options and players, the next dealer dealing first."""
    return service.rematch(match_id, body.who).to_json()


@router.post("/matches/{match_id}/setup", response_model=Appended, status_code=CREATED)
def setup(match_id: MatchId, body: SetupIn, service: ServiceDep) -> dict[str, Any]:
    setup = MatchSetUp(
        who=body.who, variant=body.variant, options=body.options, players=tuple(body.players),
        dealer=body.dealer, rounds_limit=body.rounds_limit, target=body.target,
        turn_seconds=body.turn_seconds,
    )
    return _appended(service.log(match_id, setup))


@router.post("/matches/{match_id}/calibration", response_model=Appended, status_code=CREATED)
def calibration(match_id: MatchId, body: CalibrationIn, service: ServiceDep) -> dict[str, Any]:
    noted = CalibrationNoted(who=body.who, status=body.status, note=body.note)
    return _appended(service.log(match_id, noted))


def _ask_live_table(inbox: Inbox, request: Request) -> object:
    """The live table's answer to ``request``.  Its refusal (a ValueError, answered 422)
    and LiveTableGone pass through; no answer in time is answered 503."""
    future = inbox.submit(request)
    try:
        return future.result(timeout=LIVE_ANSWER_S)
    except FutureTimeout:
        if future.cancel():  # not begun: it never will be, so nothing has changed
            raise HTTPException(
                status.HTTP_503_SERVICE_UNAVAILABLE,
                f"the live table did not answer within {LIVE_ANSWER_S:g} s;"
                f" {request.describe()} was not made, try again",
            ) from None
        return future.result()  # the loop is applying it right now


def _tell_live_table(inbox: Inbox | None, correction: Correction) -> bool:
    """Whether the live table took ``correction`` (False: there is none)."""
    if inbox is None:
        return False
    try:
        _ask_live_table(inbox, correction)
    except LiveTableGone:
        return False
    return True


@router.post(
    "/matches/{match_id}/corrections/item",
    response_model=Appended,
    status_code=CREATED,
    responses=LIVE_TABLE_RESPONSES,
)
def correct_item(match_id: MatchId, body: ItemFix, service: ServiceDep) -> dict[str, Any]:
    service.store.match(match_id)
    melds = service.state(match_id)["table"]["melds"]
    if body.meld >= len(melds) or body.index >= len(melds[body.meld]["meld"].split()):
        raise HTTPException(
            status.HTTP_409_CONFLICT, f"the table has no item {body.index} in meld {body.meld}"
        )
    was = melds[body.meld]["meld"].split()[body.index]
    correction = Correction(body.meld, body.index, body.item, body.who, was)
    live = _tell_live_table(service.live_inbox(match_id), correction)
    corrected = ItemCorrected(who=body.who, meld=body.meld, index=body.index, item=body.item,
                              was=was, live=live)
    return _appended(service.log(match_id, corrected))


@router.post("/matches/{match_id}/actions", response_model=ActionDone,
             responses=LIVE_TABLE_RESPONSES)
def act(match_id: MatchId, body: ActionIn, service: ServiceDep) -> object:
    service.store.match(match_id)
    action = Action(body.kind, body.who, body.seat, body.items)
    inbox = service.live_inbox(match_id)
    why = f"match {match_id} is not being played at a watched table"
    if inbox is not None:
        try:
            return _ask_live_table(inbox, action)
        except LiveTableGone as gone:
            why = str(gone)
    raise HTTPException(
        status.HTTP_409_CONFLICT, f"no live table: {why}; {action.describe()} was not made"
    )


@router.post(
    "/matches/{match_id}/corrections/score",
    response_model=Appended,
    status_code=CREATED,
    responses={409: refusal("no such round or players")},
)
def edit_score(match_id: MatchId, body: ScoreEdit, service: ServiceDep) -> dict[str, Any]:
    service.store.match(match_id)
    state = service.state(match_id)
    if body.round > len(state["rounds"]):
        raise HTTPException(
            status.HTTP_409_CONFLICT,
            f"round {body.round} has not been played ({len(state['rounds'])} so far)",
        )
    unknown = sorted(set(body.scores) - set(state["setup"]["players"]))
    if unknown:
        raise HTTPException(status.HTTP_409_CONFLICT, f"not players of this match: {unknown}")
    edit = ScoreEdited(who=body.who, round=body.round, scores=body.scores)
    return _appended(service.log(match_id, edit))


@router.post("/matches/{match_id}/undo", response_model=Appended, status_code=CREATED)
def undo(match_id: MatchId, body: UndoIn, service: ServiceDep) -> dict[str, Any]:
    return _appended(service.undo_last(match_id, body.who))


@router.post("/matches/{match_id}/events", response_model=Appended, status_code=CREATED)
def publish(
    match_id: MatchId,
    body: EventIn,
    service: ServiceDep,
    idempotency_key: Annotated[IdempotencyKey | None, Header()] = None,
) -> dict[str, Any]:
    """A game event from a game running elsewhere (the same shape as on the bus).

    With the header ``Idempotency-Key`` (the client's id for the event), sending it again,
    as a client does when an answer was lost, is answered with the stored event and
    stores nothing."""
    stored = service.record(match_id, body.model_dump(exclude_none=False), key=idempotency_key)
    return _appended(stored)
