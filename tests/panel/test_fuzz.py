"""The panel's OpenAPI schema fuzzed with schemathesis (bounded: a few dozen examples per
operation), every check of schemathesis on: no server error, every status and body as
documented, schema-valid requests taken (or refused for the state of the match, 409; a
setup's variant options and dealer, 422: see schemathesis.toml) and schema-invalid ones
refused.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from hypothesis import HealthCheck, settings

from tabletop.panel.app import create_app
from tabletop.panel.events import MatchSetUp
from tabletop.panel.settings import PanelSettings

_folder = Path(tempfile.mkdtemp(prefix="tabletop-fuzz-"))
# schemathesis calls the app as "testserver", a name the panel must be told it serves under
_app = create_app(PanelSettings(database_url=f"sqlite:///{_folder / 'fuzz.db'}",
                                allowed_hosts=["testserver"]))
# One match with a setup and a round, so that match ids 1 and the corrections have a target.
_service = _app.state.service
_match = _service.current_match()
_service.log(_match.id, MatchSetUp(who="fuzz", variant="sabra", players=("Ana", "Ben")))
_service.record(
    _match.id, {"type": "round_scored", "seq": 1, "seat": None, "scores": {"Ana": 3, "Ben": -3}}
)
schema = schemathesis.openapi.from_asgi("/openapi.json", _app)


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_api_never_fails_on_generated_input(case: schemathesis.Case) -> None:
    case.call_and_validate()
