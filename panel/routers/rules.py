"""Help with the rules: the best play for a rack on the match's table (a hint), and each
variant's options and warnings explained in the players' language.

The hint runs the exact optimiser (:func:`tabletop.engine.solver.solve`, in one of the
hint pool's worker processes) on the table as the panel's state has it, within the time
the request allows, waiting for a worker included (panel/hints.py); nothing is stored.  Whether
the seat's player still has to open is the replay's (``state["opened"]``, panel/state.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal, NoReturn

from fastapi import APIRouter, HTTPException, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from tabletop.engine.items import Item, format_items, parse_items
from tabletop.engine.variants import VARIANTS, Variant, find_variant
from tabletop.panel.dependencies import MatchId, ReaderDep, ServiceDep
from tabletop.panel.schemas import refusal
from tabletop.panel.texts import Language, rule_texts

router = APIRouter(
    prefix="/api",
    tags=["rules"],
    dependencies=[ReaderDep],
    responses={401: refusal("on the network: no token")},
)

UNPROCESSABLE = 422
"""A body that fits the schema but not the match (the status's name changed in Starlette)."""
MAX_BUDGET_S = 5.0
"""A hint answers within this (the search's own budget; its fallback adds a twentieth)."""
RackText = Annotated[
    str,
    StringConstraints(max_length=600),
    Field(description="contract tokens separated by spaces, e.g. 'R3 R4 JK'"),
]
"""Checked by the engine's parser, so an unknown token is refused with one line naming it;
600 characters hold any rack many times over."""


class HintIn(BaseModel):
    """What to find the best play for.  ``rack`` null: the rack shown for ``seat`` in the
    counting phase.  ``initial`` null: whether the seat's player has not opened this round
    (false without a seat).  ``keep``: items that must stay on the rack (1 keeps a discard
    for going out where the last item is discarded; tables that may only be extended)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    rack: RackText | None = None
    seat: Annotated[int, Field(ge=0, le=7)] | None = None
    initial: bool | None = None
    objective: Literal["tiles", "value"] = "tiles"
    budget_s: Annotated[float, Field(gt=0, le=MAX_BUDGET_S)] = 1.0
    keep: Annotated[int, Field(ge=0, le=3)] = 0


class HintOut(BaseModel):
    melds: list[str]
    """The whole table after the play."""
    placed: list[str]
    """Items from the rack (a joker as bare JK)."""
    value: int
    meets_initial: bool
    optimal: bool
    """False: the budget ran out first, and a better play may exist."""
    table: list[str]
    """The table before the play."""
    new: list[int]
    """Indices into ``melds`` of the melds that are new or changed."""
    initial: bool
    """Whether the play had to be an opening."""
    rack: list[str]
    """The rack the play was found for."""
    seat: int | None


class OptionRules(BaseModel):
    name: str
    default: str | int | bool
    choices: list[str | int | bool] | None
    label: str
    help: str
    quote: str | None
    """The rule text's own German sentence, or null for a pure house rule."""
    choice_labels: dict[str, str] | None
    """A label per choice, where the choices are words."""


class WarningRules(BaseModel):
    title: str
    explanation: str
    quote: str | None


class VariantRules(BaseModel):
    id: str
    name: str
    lang: str
    source: str | None
    """The German rule text the quotes are from: ``rules/<file>.de.txt``."""
    options: list[OptionRules]
    warnings: dict[str, WarningRules]


@router.post(
    "/matches/{match_id}/hint",
    response_model=HintOut,
    responses={404: refusal("no such match"),
               503: refusal("every worker busy with other hints: ask again in a moment")},
    summary="the best play for a rack on the match's table",
)
def hint(match_id: MatchId, body: HintIn, service: ServiceDep,
         request: Request) -> dict[str, Any]:
    with service.hints.slot(body.budget_s, request.state.arrived) as deadline:
        state = service.state(match_id)
        setup = state["setup"]
        players: list[str] = list(setup["players"])
        if body.seat is not None and body.seat >= len(players):
            _refuse(f"seat {body.seat} is not a seat of {len(players)} players")
        try:
            variant = find_variant(setup["variant"], setup["options"])
            rack = _rack(body, state, players)
            table = tuple(parse_items(meld["meld"]) for meld in state["table"]["melds"])
        except ValueError as error:
            _refuse(str(error))
        if body.initial is not None:
            initial = body.initial
        elif body.seat is None:
            initial = False
        else:
            initial = body.seat not in state["opened"]
        try:
            # in a worker process: the search holds no lock of the server's threads
            play = service.hints.solve(
                deadline, variant, rack, table, initial=initial, objective=body.objective,
                keep=body.keep,
            )
        except ValueError as error:  # SolveError: a rack or table no game can hold
            _refuse(str(error))
    return {
        **play.to_json(),
        "table": [format_items(meld) for meld in table],
        "new": changed_melds(table, play.melds),
        "initial": initial and _has_opening_rule(variant),
        "rack": [str(item) for item in rack],
        "seat": body.seat,
    }


@router.get(
    "/variants/{variant_id}/rules",
    response_model=VariantRules,
    summary="a variant's options and warnings explained",
)
def variant_rules(
    variant_id: Annotated[Literal[tuple(VARIANTS)], Path()],  # type: ignore[valid-type]
    lang: Annotated[Literal["de", "en", "ro"], Query()] = "en",
) -> dict[str, Any]:
    language: Language = lang
    texts = rule_texts()
    cls = VARIANTS[variant_id]
    options = []
    for spec in cls.option_specs:
        text = texts.option(variant_id, spec.name, language)
        options.append({
            "name": spec.name,
            "default": spec.default,
            "choices": list(spec.choices) if spec.choices else None,
            "label": text.label if text else spec.name,
            "help": text.help if text else spec.help,
            "quote": text.quote if text else None,
            "choice_labels": dict(text.choices) if text and text.choices else None,
        })
    warnings = {}
    for code in texts.warning_codes:
        warning = texts.warning(variant_id, code, language)
        if warning is not None:
            warnings[code] = {
                "title": warning.title,
                "explanation": warning.explanation,
                "quote": warning.quote,
            }
    return {
        "id": variant_id,
        "name": cls.name,
        "lang": language,
        "source": texts.source(variant_id),
        "options": options,
        "warnings": warnings,
    }


# --- the hint's parts ----------------------------------------------------------------
def _refuse(reason: str) -> NoReturn:
    raise HTTPException(UNPROCESSABLE, (reason.splitlines() or [reason])[0])


def _rack(body: HintIn, state: dict[str, Any], players: list[str]) -> tuple[Item, ...]:
    if body.rack is not None:
        return parse_items(body.rack)
    if body.seat is None:
        raise ValueError("give the rack, or a seat whose rack is shown in the counting phase")
    shown = {rack["seat"]: rack for rack in state["racks"]}
    if body.seat not in shown:
        raise ValueError(
            "no rack is shown: racks are shown once a player has gone out; give the rack"
        )
    items = shown[body.seat]["items"]
    if items is None:
        raise ValueError(f"{players[body.seat]}'s rack is not shown yet; give the rack")
    return parse_items(" ".join(items)) if items else ()


def _has_opening_rule(variant: Variant) -> bool:
    return (
        variant.initial_meld_required > 0 or variant.initial_meld_needs_run
    ) and variant.table_rules.lays_out


def changed_melds(
    table: Sequence[Sequence[Item]], melds: Sequence[Sequence[Item]]
) -> list[int]:
    """Indices of ``melds`` that are not one of ``table``'s melds as it lay (each table
    meld matches once; a joker is a joker whatever it was written to stand for)."""
    left = [_meld_key(meld) for meld in table]
    changed = []
    for index, meld in enumerate(melds):
        key = _meld_key(meld)
        if key in left:
            left.remove(key)
        else:
            changed.append(index)
    return changed


def _meld_key(meld: Sequence[Item]) -> tuple[str, ...]:
    return tuple(sorted("JK" if item.is_joker else str(item) for item in meld))
