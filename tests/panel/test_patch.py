"""The live scoreboard's patches (panel/patch.py, and the page's static/patch.js): a patch
turns the state a page holds into the newest, in Python and in Chromium alike, and stays
small for the changes a match goes through."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from tabletop.panel import patch
from tests.panel.test_viewers import serve
from tests.shared import needs

KEYS = ["a", "b", "", "0", "-", "c/d", "e~f", "~1", "__proto__", "Ana"]
LEAVES = [0, 1, -3, 2.5, 1.0, True, False, None, "", "a", "b/c", "~x", "Ana"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice(LEAVES)
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {rng.choice(KEYS): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _changed(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """``value`` after one change of the kinds a state goes through: an item put at the
    head or the end of a list, taken off either, one at the head with the last falling
    off (the feed), a member added, removed or changed, a value replaced."""
    value = copy.deepcopy(value)
    if isinstance(value, list) and value and rng.random() < 0.8:
        kind = rng.randrange(6)
        if kind == 0:
            value.insert(0, _value(rng, depth + 1))
        elif kind == 1:
            value.append(_value(rng, depth + 1))
        elif kind == 2:
            value.pop(0)
        elif kind == 3:
            value.pop()
        elif kind == 4:
            place = rng.randrange(len(value))
            value[place] = _changed(rng, value[place], depth + 1)
        else:
            value = [_value(rng, depth + 1), *value[:-1]]
        return value
    if isinstance(value, dict) and value and rng.random() < 0.8:
        key, kind = rng.choice(list(value)), rng.randrange(3)
        if kind == 0:
            del value[key]
        elif kind == 1:
            value[key] = _changed(rng, value[key], depth + 1)
        else:
            value[rng.choice(KEYS)] = _value(rng, depth + 1)
        return value
    return _value(rng, depth)


def _pairs(count: int, seed: int) -> list[tuple[Any, Any]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        old = {"state": _value(rng)}  # a document is an object, as the state is
        new = old
        for _ in range(rng.randint(1, 4)):
            new = _changed(rng, new)
        pairs.append((old, new))
    return pairs


def _same(a: Any, b: Any) -> bool:
    """Equal as a page sees JSON: true is not 1, 1 is 1.0; members in any order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    return bool(a == b)


def test_a_patch_turns_the_old_state_into_the_new_and_leaves_the_old_alone() -> None:
    for old, new in _pairs(3000, seed=47):
        before = json.dumps(old)
        ops = patch.diff(old, new)
        assert _same(patch.apply(old, ops), new), (old, new, ops)
        assert json.dumps(old) == before
        if json.dumps(old) == json.dumps(new):
            assert ops == []


def test_the_changes_of_a_match_are_a_few_operations() -> None:
    state: dict[str, Any] = {
        "rounds": [{"round": n, "scores": {"Ana": n, "Ben": -n}} for n in range(1, 31)],
        "feed": [{"id": n, "type": "table"} for n in range(40, 28, -1)],
        "match": {"totals": {"Ana": 465, "Ben": -465}, "over": False}, "last_id": 40}
    after = copy.deepcopy(state)
    added = {"round": 31, "scores": {"Ana": 31, "Ben": -31}}
    after["rounds"].append(added)
    after["feed"] = [{"id": 41, "type": "round_scored"}, *after["feed"][:-1]]
    after["match"]["totals"] = {"Ana": 496, "Ben": -496}
    after["last_id"] = 41
    assert patch.diff(state, after) == [
        {"op": "add", "path": "/rounds/-", "value": added},
        {"op": "add", "path": "/feed/0", "value": {"id": 41, "type": "round_scored"}},
        {"op": "remove", "path": "/feed/12"},
        {"op": "replace", "path": "/match/totals", "value": {"Ana": 496, "Ben": -496}},
        {"op": "replace", "path": "/last_id", "value": 41},
    ]
    # an undo takes the round back off the end
    assert patch.diff(after, {**after, "rounds": state["rounds"]})[0] == {
        "op": "remove", "path": "/rounds/30"}
    # true and 1 are different values on a page
    assert patch.diff({"over": 1}, {"over": True}) == [
        {"op": "replace", "path": "/over", "value": True}]


@pytest.mark.parametrize("ops", [
    [{"op": "replace", "path": "/missing", "value": 1}],
    [{"op": "remove", "path": "/list/3"}],
    [{"op": "add", "path": "/list/01", "value": 1}],
    [{"op": "add", "path": "/missing/x", "value": 1}],
    [{"op": "move", "from": "/list", "path": "/other"}],
    [{"op": "add", "path": "list", "value": 1}],
    [{"op": "replace", "path": "/list/0"}],
])
def test_a_patch_that_does_not_fit_is_refused(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(patch.PatchError):
        patch.apply({"list": [1, 2]}, ops)


@needs("chromium")
def test_the_page_applies_a_patch_as_the_server_works_it_out(
    browser: Any, tmp_path: Path
) -> None:
    cases = [{"old": old, "new": new, "ops": patch.diff(old, new)}
             for old, new in _pairs(600, seed=7)]
    with serve(tmp_path) as served:
        page = browser.new_page()
        page.goto(served.base + "/")
        results = _in_page(page, cases)
        refused = page.evaluate(
            """async () => {
              const { applyPatch, PatchError } = await import("/static/patch.js");
              try { applyPatch({ list: [1] }, [{ op: "remove", path: "/list/1" }]); }
              catch (error) { return error instanceof PatchError; }
              return false;
            }""")
    for case, (text, untouched) in zip(cases, results, strict=True):
        assert _same(json.loads(text), case["new"]), case
        assert untouched, case
    assert refused


def _in_page(page: Any, cases: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each case's patch applied by the page's patch.js: the result as JSON text, and
    whether the state it was given is as it was."""
    # as text: JSON.parse makes a member named "__proto__" a member, as on a page
    return list(page.evaluate(
        """async (text) => {
          const { applyPatch } = await import("/static/patch.js");
          return JSON.parse(text).map(({ old, ops }) => {
            const before = JSON.stringify(old);
            const text = JSON.stringify(applyPatch(old, ops));
            return [text, JSON.stringify(old) === before];
          });
        }""",
        json.dumps(cases),
    ))
