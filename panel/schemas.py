"""Request and response bodies; every input is validated here before it becomes an event."""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    field_validator,
    model_validator,
)

from tabletop.engine.events import EVENT_TYPES, EventError
from tabletop.engine.items import parse_items
from tabletop.engine.rounds import MAX_HAND_POINTS
from tabletop.engine.variants import VARIANTS, find_variant
from tabletop.live.actions import ActionKind
from tabletop.panel.events import PANEL_KINDS
from tabletop.panel.state import posted_event

_TRIMMED = r"^\S(.*\S)?$"
"""No space at either end, so the schema promises exactly what the panel takes."""
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    """Names are shown and stored as written: no control characters (PostgreSQL does not
    even store NUL), said in one line."""
    found = _CONTROLS.search(text)
    if found is not None:
        raise ValueError(
            f"a name has no control characters, but this one has {found.group()!r}"
            f" at {found.start() + 1}"
        )
    return text


_SHOWN = r"[^\s\x00-\x1f\x7f-\x9f]"
Name = Annotated[
    str,
    StringConstraints(min_length=1, max_length=40, pattern=_TRIMMED),
    AfterValidator(_printable),
    # the schema promises both checks in one pattern (the message above is the clearer)
    Field(json_schema_extra={"pattern": f"^{_SHOWN}([^\\x00-\\x1f\\x7f-\\x9f]*{_SHOWN})?$"}),
]
Who = Name


def _match_name(text: str) -> str:
    name = _printable(text.strip())
    if not name:
        raise ValueError("a match's name is not blank")
    return name


MatchName = Annotated[
    str,
    StringConstraints(min_length=1, max_length=80),
    AfterValidator(_match_name),
    Field(json_schema_extra={
        "pattern": f"^\\s*{_SHOWN}([^\\x00-\\x1f\\x7f-\\x9f]*{_SHOWN})?\\s*$"
    }),
]
"""Spaces at either end are dropped."""
_TILE = "[RBOKrbok](1[0-3]|[1-9])"
_CARD = "(10|[2-9AJQKajqk])[SHDCshdc]"
Token = Annotated[
    str, StringConstraints(pattern=f"^([Jj][Kk](=({_TILE}|{_CARD}))?|{_TILE}|{_CARD})$")
]
"""One item in the notation of CONTRACT.md."""
OptionValue = Annotated[str, StringConstraints(max_length=20)] | int | bool
EventType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,63}$")]
IdempotencyKey = Annotated[
    str, StringConstraints(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$")
]
"""A client's id for an event: printable ASCII, no spaces."""


EVENT_MAX_BYTES = 32 * 1024
"""An event from elsewhere, as JSON; the largest the game writes (a table of 40 melds with
their boxes) is a few kilobytes, and every viewer is sent the state it is part of."""
EVENT_MAX_DEPTH = 8


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)


class MatchCreate(_Strict):
    name: MatchName


class MatchOut(BaseModel):
    id: int
    name: str
    created_at: float


class MatchSummary(MatchOut):
    """A match in the list: where it stands, from its events."""

    updated_at: float
    """When its newest event was written (its creation when it has none)."""
    status: Literal["live", "open", "finished"]
    """live: a live table plays it now; finished: it is over; open: neither."""
    variant: str
    variant_name: str
    players: list[str]
    rounds: int
    winner: str | None
    totals: dict[str, int]
    """As the players count them: penalty games (``penalty``) in penalty points, fewest best."""
    penalty: bool


class SetupIn(_Strict):
    who: Who
    variant: Literal[tuple(VARIANTS)]  # type: ignore[valid-type]
    options: dict[Annotated[str, StringConstraints(max_length=40)], OptionValue] = {}
    players: Annotated[
        list[Name], Field(min_length=2, max_length=8, json_schema_extra={"uniqueItems": True})
    ]
    dealer: Annotated[int, Field(ge=0, le=7)] = 0
    rounds_limit: Annotated[int, Field(ge=1, le=1000)] | None = None
    target: Annotated[int, Field(ge=1, le=100000)] | None = None
    turn_seconds: Annotated[int, Field(ge=5, le=3600)] = 120

    @field_validator("players")
    @classmethod
    def _distinct(cls, players: list[str]) -> list[str]:
        if len(set(players)) != len(players):
            raise ValueError(f"player names must differ: {players}")
        return players

    @model_validator(mode="after")
    def _fits_variant(self) -> SetupIn:
        find_variant(self.variant, self.options)  # an unknown option raises OptionError
        if self.dealer >= len(self.players):
            raise ValueError(f"dealer {self.dealer} is not a seat of {len(self.players)} players")
        return self


class CalibrationIn(_Strict):
    who: Who
    status: Literal["none", "ok", "stale", "failed"]
    note: Annotated[str, StringConstraints(max_length=200)] | None = None


class ItemFix(_Strict):
    """The item at ``index`` of table meld ``meld`` is really ``item``."""

    who: Who
    meld: Annotated[int, Field(ge=0, le=200)]
    index: Annotated[int, Field(ge=0, le=13)]
    item: Token

    @field_validator("item")
    @classmethod
    def _one_item(cls, token: str) -> str:
        items = parse_items(token)
        if len(items) != 1:
            raise ValueError(f"one item token, not {token!r}")
        return str(items[0])


class ScoreEdit(_Strict):
    who: Who
    round: Annotated[int, Field(ge=1, le=1000)]
    scores: dict[Name, Annotated[int, Field(ge=-100000, le=100000)]]


ItemsText = Annotated[str, StringConstraints(max_length=1000)]
"""Contract tokens separated by spaces (melds: ``|`` between them); checked by the engine,
which names the token it does not know."""


class RoundPlayerIn(_Strict):
    """One player's end of a round typed in: the rack as its items (``hand``) or as the
    points the players counted (``points``), and, where the variant scores them, what
    the player laid (``melds``)."""

    name: Name
    out: bool = False
    hand: ItemsText | None = None
    points: Annotated[int, Field(ge=0, le=MAX_HAND_POINTS)] | None = None
    melds: ItemsText | None = None
    all_at_once: bool = False
    knocked: bool = False
    trump_declared: bool = False
    win: Literal["open", "foot", "closed"] | None = None
    first_turn: bool = False
    original_hand: bool = False
    last_discard: Token | None = None
    """The item discarded to go out (a joker doubles in Remi and International)."""


class RoundEntry(_Strict):
    """A round scored by hand: every player still in the match once, in any order."""

    who: Who
    players: Annotated[list[RoundPlayerIn], Field(min_length=2, max_length=8)]
    pool_exhausted: bool = False
    trump: Token | None = None


class RoundResultOut(BaseModel):
    """The engine's score of a round (``RoundResult.to_json()``): points gained per
    player (penalty games negative), the winner, the lines that explain each score, what
    breaks the rules without stopping the scoring, and the variant's own results."""

    model_config = ConfigDict(extra="allow")

    scores: dict[str, int]
    winner: str | None
    doubled: bool
    details: dict[str, list[str]]
    problems: list[str]


class RoundPreview(BaseModel):
    result: RoundResultOut


class PlayerOut(BaseModel):
    """A player's record over every match of the store: the rounds of point games
    (higher is better) and those of penalty games (penalty points, fewer is better) apart."""

    name: str
    matches: int
    finished: int
    wins: int
    rounds: int
    """Every round played, of either kind."""
    average_per_round: float
    """Over the rounds of point games (0 when none)."""
    best_round: int | None
    penalty_rounds: int
    penalty_average_per_round: float | None
    fewest_penalty_points: int | None
    last_played: float


class PlayedMatch(BaseModel):
    match_id: int
    name: str
    variant: str
    variant_name: str
    total: int
    """As the players count it: penalty points where ``penalty``."""
    penalty: bool
    won: bool
    finished: bool
    created_at: float


class PlayerProfile(PlayerOut):
    matches_played: list[PlayedMatch]
    """Newest first."""


class UndoIn(_Strict):
    who: Who


class ActionIn(_Strict):
    """A button pressed on the panel for the live table (see :mod:`tabletop.live.actions`):
    ``seat`` names the player where the kind takes one, ``items`` is the rack
    typed for ``hand`` (contract tokens separated by spaces)."""

    who: Who
    kind: ActionKind
    seat: Annotated[int, Field(ge=0, le=7)] | None = None
    items: Annotated[str, StringConstraints(strip_whitespace=True, max_length=200)] | None = None


class ActionDone(BaseModel):
    """What the live table did: the phase and the seat on turn after it, and the events
    it published (warnings included)."""

    kind: str
    phase: str
    seat: int
    events: list[dict[str, Any]]


class EventIn(BaseModel):
    """A game event as CONTRACT.md writes it (from a game running in another process)."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False, strict=True)

    type: EventType
    seq: Annotated[int, Field(ge=0)] | None = None
    t: Annotated[float, Field(ge=0, le=1e9)] | None = None
    seat: Annotated[int, Field(ge=0, le=7)] | None = None

    @field_validator("type")
    @classmethod
    def _not_a_correction(cls, kind: str) -> str:
        if kind in PANEL_KINDS:
            raise ValueError(f"{kind!r} events are made by the panel's own endpoints")
        return kind

    @model_validator(mode="after")
    def _contract_fields(self) -> EventIn:
        """The fields CONTRACT.md fixes for its event types have their types."""
        extra = self.model_extra or {}
        _check_json(extra, "the event", 1)
        size = len(json.dumps(extra, ensure_ascii=False))
        if size > EVENT_MAX_BYTES:
            raise ValueError(f"the event is {size} bytes of JSON, over {EVENT_MAX_BYTES}")
        if self.type == "table":
            _MeldList.validate_python(extra.get("melds"))
        elif self.type == "round_scored":
            _Scores.validate_python(extra.get("scores"))
        elif self.type == "warning":
            _Message.validate_python(extra.get("message"))
        if self.type in EVENT_TYPES:
            # what the panel folds must read as the game's event (seq and t may be left out)
            try:
                posted_event({"seq": self.seq, "t": self.t, "type": self.type,
                              "seat": self.seat, **extra}, 1)
            except EventError as error:
                raise ValueError(str(error)) from None
        return self


def _check_json(value: Any, where: str, depth: int) -> None:
    """Finite numbers only (JSON has no NaN or Infinity, though Python's parser takes them)
    and no nesting deeper than EVENT_MAX_DEPTH."""
    if depth > EVENT_MAX_DEPTH:
        raise ValueError(f"{where} nests deeper than {EVENT_MAX_DEPTH} levels")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} holds {value!r}, which is not a JSON number")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_json(item, f"{where}[{key!r}]", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]", depth + 1)


_MeldList: TypeAdapter[list[str]] = TypeAdapter(
    Annotated[list[Annotated[str, StringConstraints(max_length=200)]], Field(max_length=200)]
)
_Scores = TypeAdapter(dict[Name, Annotated[int, Field(ge=-100000, le=100000)]])
_Message: TypeAdapter[str] = TypeAdapter(Annotated[str, StringConstraints(max_length=500)])


class Refusal(BaseModel):
    """Why a request was refused."""

    detail: str


def refusal(why: str) -> dict[str, Any]:
    """An OpenAPI response entry for a status the panel answers with a Refusal."""
    return {"description": why, "model": Refusal}


class Unprocessable(BaseModel):
    """A body that breaks the schema (FastAPI's list of errors) or the rules (one line)."""

    detail: str | list[dict[str, Any]]


class Appended(BaseModel):
    id: int
    type: str
    recorded_at: float


class RoundScored(Appended):
    round: int
    result: RoundResultOut
