"""``tabletop demo``: replay the bundled sample matches through the engine.

Each sample is a match as a score keeper would note it: per round, what each
player laid and what they still held.  The demo checks every meld, scores
every round with the variant's rules and keeps the match standings, printing
the arithmetic so a person can follow it.  (When the camera pipeline lands,
the demo will play a rendered video instead; these samples stay as tests.)
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from engine.match import Match
from engine.rounds import RoundInput, RoundResult, round_from_json, score_round
from engine.variants import find_variant

SAMPLES = ("remi-evening.json", "rommee-club.json", "sabra-kitchen.json")


def load_sample(name: str) -> dict[str, Any]:
    text = resources.files("tabletop").joinpath("samples", name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def play_sample(data: dict[str, Any]) -> tuple[Match, list[tuple[RoundInput, RoundResult]]]:
    """Score every round of a sample and record it in a match."""
    variant = find_variant(data["variant"], data.get("options") or {})
    match = Match(
        variant,
        tuple(data["players"]),
        rounds_limit=data.get("rounds_limit"),
        target=data.get("target"),
    )
    results = []
    for raw in data["rounds"]:
        round_ = round_from_json(raw, variant)
        result = score_round(round_)
        match.record(result)
        results.append((round_, result))
    return match, results


def _print_match(
    data: dict[str, Any], match: Match, results: list[tuple[RoundInput, RoundResult]]
) -> None:
    penalty = match.variant.penalty_scoring
    print(f"== {data['title']} [{match.variant.id}]")
    for number, (round_, result) in enumerate(results, start=1):
        header = f"-- round {number}"
        if round_.pool_exhausted:
            header += ": the pool ran out"
            if result.winner:
                header += f", {result.winner} holds the least"
        elif result.winner:
            header += f": {result.winner} went out"
        if result.doubled:
            header += " (all points doubled)"
        print(header)
        for name, score in result.scores.items():
            shown = f"{-score:5d}" if penalty else f"{score:+5d}"
            print(f"   {name:<6} {shown}  " + "; ".join(result.details.get(name, [])))
        for problem in result.problems:
            print(f"   problem: {problem}")
    unit = "penalty points" if penalty else "points"
    print(f"-- standings after {match.rounds_played} rounds ({unit}):")
    for place, (name, total) in enumerate(match.standings(), start=1):
        print(f"   {place}. {name:<6} {(-total if penalty else total):5d}")
    if match.over:
        print(f"   winner: {match.winner or 'a draw'}")
    print()


def run_demo(as_json: bool = False) -> int:
    outputs = []
    for name in SAMPLES:
        data = load_sample(name)
        match, results = play_sample(data)
        if as_json:
            outputs.append(
                {
                    "sample": name,
                    "rounds": [result.to_json() for _, result in results],
                    "match": match.to_json(),
                }
            )
        else:
            _print_match(data, match, results)
    if as_json:
        print(json.dumps(outputs, ensure_ascii=False))
    return 0
