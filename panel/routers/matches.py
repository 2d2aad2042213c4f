"""Reading matches: list, state, events, export, variants."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from tabletop.engine.variants import VARIANTS
from tabletop.panel.dependencies import MatchId, ReaderDep, ServiceDep, SettingsDep
from tabletop.panel.schemas import MatchOut, MatchSummary, refusal

router = APIRouter(
    prefix="/api",
    tags=["matches"],
    dependencies=[ReaderDep],
    responses={401: refusal("on the network: no token"), 404: refusal("no such match")},
)


@router.get("/matches", response_model=list[MatchSummary])
def list_matches(service: ServiceDep) -> list[dict[str, Any]]:
    """Every match with where it stands: live ones first, then open ones, then finished
    ones, each newest activity first."""
    return service.overview()


@router.get("/matches/current", response_model=MatchOut)
def current_match(service: ServiceDep, settings: SettingsDep) -> dict[str, Any]:
    return service.current_match(settings.match_id).to_json()


@router.get("/matches/{match_id}/state")
def match_state(match_id: MatchId, service: ServiceDep) -> dict[str, Any]:
    return service.state(match_id)


@router.get("/matches/{match_id}/events")
def match_events(
    match_id: MatchId,
    service: ServiceDep,
    after: Annotated[int, Query(ge=0, le=2**62)] = 0,
) -> list[dict[str, Any]]:
    service.store.match(match_id)
    return [stored.to_json() for stored in service.store.events(match_id, after)]


@router.get("/matches/{match_id}/export.json")
def export_json(match_id: MatchId, service: ServiceDep) -> dict[str, Any]:
    return service.export_json(match_id)


@router.get("/matches/{match_id}/export.csv", response_class=Response)
def export_csv(
    match_id: MatchId,
    service: ServiceDep,
    table: Annotated[Literal["rounds", "events"], Query()] = "rounds",
) -> Response:
    service.store.match(match_id)
    return Response(
        service.export_csv(match_id, table),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="match-{match_id}-{table}.csv"'},
    )


@router.get("/variants")
def variants() -> list[dict[str, Any]]:
    return [
        {
            "id": variant_id,
            "name": cls.name,
            "round_entry": cls.round_entry.to_json(),
            "options": [
                {
                    "name": spec.name,
                    "default": spec.default,
                    "help": spec.help,
                    "choices": list(spec.choices) if spec.choices else None,
                }
                for spec in cls.option_specs
            ],
        }
        for variant_id, cls in VARIANTS.items()
    ]
