"""The ``tabletop`` command line (CONTRACT.md).

Start-up must stay fast: this module imports only the standard library at
the top; each command imports what it needs when it runs, and the rules
commands never touch torch, ultralytics or OpenCV.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
MAX_MELD_ITEMS = 14
"""No meld of any variant holds more (the longest run is 1..13..1)."""


class BadInput(ValueError):
    """Input the command cannot work with; reported on one line with exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One clear line, not argparse's usage block.
        raise BadInput(f"{message} (see '{self.prog} --help')")


def _emit(payload: Any, as_json: bool, text: str) -> None:
    if as_json:
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print(text)


# --- rules check -------------------------------------------------------------
def _reading_json(variant: Any, reading: Any) -> dict[str, Any]:
    return {
        "kind": reading.kind.value,
        "value": variant.meld_value(reading),
        "items": [str(item) for item in reading.resolved_items()],
    }


def check_meld_json(variant: Any, text: str) -> dict[str, Any]:
    """The JSON answer of ``rules check`` for one meld (CONTRACT.md)."""
    from engine.items import parse_items

    items = parse_items(text)
    if not items:
        raise BadInput("empty meld: give the items separated by spaces, e.g. 'R3 R4 R5'")
    if len(items) > MAX_MELD_ITEMS:
        raise BadInput(f"a meld has at most {MAX_MELD_ITEMS} items, not {len(items)}")
    analysis = variant.analyse(items)
    if not analysis.valid:
        return {
            "valid": False,
            "kind": None,
            "value": 0,
            "items": [str(item) for item in items],
            "reason": analysis.reason,
        }
    readings = sorted(analysis.readings, key=lambda r: -variant.meld_value(r))
    best = readings[0]
    answer: dict[str, Any] = {"valid": True, **_reading_json(variant, best), "reason": None}
    if len(readings) > 1:
        answer["readings"] = [_reading_json(variant, reading) for reading in readings]
        answer["note"] = "ambiguous: " + " or ".join(
            f"{reading.kind.value} {reading}" for reading in readings
        )
    elif best.reordered:
        answer["note"] = "the items are not in run order on the table; read as " + str(best)
    return answer


def _variant(args: argparse.Namespace) -> Any:
    from engine.variants import find_variant, parse_option_args

    return find_variant(args.variant, parse_option_args(args.option or []))


def cmd_rules_check(args: argparse.Namespace) -> int:
    variant = _variant(args)
    text = " ".join(args.meld)
    melds = text.split("|") if "|" in text else [text]
    for meld in melds:
        answer = check_meld_json(variant, meld)
        if answer["valid"]:
            line = f"valid {answer['kind']} worth {answer['value']}: {' '.join(answer['items'])}"
            if "note" in answer:
                line += f" ({answer['note']})"
        else:
            line = f"invalid: {' '.join(answer['items'])}: {answer['reason']}"
        _emit(answer, args.json, line)
    return EXIT_OK


# --- rules table -------------------------------------------------------------
def cmd_rules_table(args: argparse.Namespace) -> int:
    from engine.items import parse_melds
    from engine.state import TableState

    variant = _variant(args)
    state = TableState.from_melds(variant, parse_melds(" ".join(args.melds)))
    problems = state.problems()
    payload = {
        "valid": not problems,
        "melds": [check_meld_json(variant, " ".join(map(str, meld))) for meld in state.melds],
        "problems": [problem.to_json() for problem in problems],
    }
    text = "table is valid" if not problems else "\n".join(p.message for p in problems)
    _emit(payload, args.json, text)
    return EXIT_OK


# --- rules score -------------------------------------------------------------
def _load_json(path: str) -> Any:
    try:
        raw = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise BadInput(f"cannot read {path!r}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path!r} is not UTF-8 text") from None
    try:
        return json.loads(raw)
    except json.JSONDecodeError as error:
        raise BadInput(f"{path!r} is not valid JSON: {error.msg} at line {error.lineno}") from None


def format_round(result: Any) -> str:
    lines = []
    for name, score in result.scores.items():
        lines.append(f"{name:>12} {score:+6d}   " + "; ".join(result.details.get(name, [])))
    if result.doubled:
        lines.append("(all points doubled)")
    lines.extend(f"problem: {problem}" for problem in result.problems)
    return "\n".join(lines)


def cmd_rules_score(args: argparse.Namespace) -> int:
    from engine.rounds import round_from_json, score_round

    round_ = round_from_json(_load_json(args.file))
    result = score_round(round_)
    _emit({"variant": round_.variant.id, **result.to_json()}, args.json, format_round(result))
    return EXIT_OK


# --- rules variants ----------------------------------------------------------
def cmd_rules_variants(args: argparse.Namespace) -> int:
    from engine.variants import VARIANTS

    payload = []
    lines = []
    for variant_id, cls in VARIANTS.items():
        options = [
            {
                "name": spec.name,
                "default": spec.default,
                "help": spec.help,
                "choices": list(spec.choices) if spec.choices else None,
            }
            for spec in cls.option_specs
        ]
        payload.append({"id": variant_id, "name": cls.name, "options": options})
        lines.append(f"{variant_id:24} {cls.name}")
        lines.extend(f"{'':26}--option {o['name']}={o['default']}  {o['help']}" for o in options)
    _emit(payload, args.json, "\n".join(lines))
    return EXIT_OK


# --- solve --------------------------------------------------------------------
def cmd_solve(args: argparse.Namespace) -> int:
    from engine.items import parse_items, parse_melds
    from engine.solver import solve

    variant = _variant(args)
    rack = parse_items(args.rack)
    table = parse_melds(args.table) if args.table and args.table.strip() else ()
    play = solve(
        variant, rack, table, initial=args.initial, objective=args.objective, keep=args.keep
    )
    _emit(play.to_json(), args.json, str(play))
    return EXIT_OK


# --- demo ---------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from tabletop.demo import run_demo, run_demo_with_panel

    if args.panel:
        return run_demo_with_panel(speed=args.speed, video=args.video)
    return run_demo(as_json=args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tabletop", description="Rummy table assistant: rules, scores, camera.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    rules = commands.add_parser("rules", help="check melds and score rounds")
    rules_commands = rules.add_subparsers(dest="rules_command", required=True, parser_class=_Parser)

    def variant_args(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--variant", required=True, help="variant id, see 'tabletop rules variants'"
        )
        sub.add_argument(
            "--option", action="append", metavar="NAME=VALUE", help="a house-rule option"
        )
        sub.add_argument("--json", action="store_true", help="print JSON")

    check = rules_commands.add_parser("check", help="is a meld valid, what kind, what value")
    variant_args(check)
    check.add_argument("meld", nargs="+", help="the meld, e.g. R3 R4 JK R6 ('|' between melds)")
    check.set_defaults(handler=cmd_rules_check)

    table = rules_commands.add_parser("table", help="every problem of a whole table at once")
    variant_args(table)
    table.add_argument("melds", nargs="+", help="melds separated by '|'")
    table.set_defaults(handler=cmd_rules_table)

    score = rules_commands.add_parser(
        "score", help="score a finished round (JSON file, - for stdin)"
    )
    score.add_argument("file")
    score.add_argument("--json", action="store_true", help="print JSON")
    score.set_defaults(handler=cmd_rules_score)

    variants = rules_commands.add_parser("variants", help="list the variants and their options")
    variants.add_argument("--json", action="store_true")
    variants.set_defaults(handler=cmd_rules_variants)

    solve = commands.add_parser("solve", help="the best play for a rack (exact)")
    variant_args(solve)
    solve.add_argument("--rack", required=True, help="the rack, e.g. 'R3 R4 JK K7'")
    solve.add_argument("--table", default="", help="the melds on the table, separated by '|'")
    solve.add_argument("--initial", action="store_true", help="the player has not opened yet")
    solve.add_argument(
        "--objective",
        choices=("tiles", "value"),
        default="tiles",
        help="place the most items (tiles) or the most value",
    )
    solve.add_argument(
        "--keep",
        type=int,
        default=0,
        help="items to keep on the rack (1: keep a discard for going out)",
    )
    solve.set_defaults(handler=cmd_solve)

    demo = commands.add_parser("demo", help="score the bundled sample matches")
    demo.add_argument("--json", action="store_true")
    demo.add_argument(
        "--panel", action="store_true", help="serve the web panel and play the games on it"
    )
    demo.add_argument("--speed", type=float, default=4.0, help="pace of the games with --panel")
    demo.add_argument(
        "--video",
        action="store_true",
        help="with --panel: play the rendered videos through the camera pipeline (needs OpenCV)",
    )
    demo.set_defaults(handler=cmd_demo)

    # Other command groups live in their own modules, each with
    # register(commands, parser_class); they import heavy packages only in
    # their handlers, so `tabletop rules ...` stays fast.
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        module.register(commands, _Parser)
    return parser


COMMAND_MODULES: tuple[str, ...] = (
    "tabletop.commands_board",
    "tabletop.commands_vision",
    "tabletop.commands_panel",
    "tabletop.commands_live",
    "tabletop.commands_calibration",
)
"""Modules adding subcommands (tabletop/commands_*.py)."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return int(args.handler(args))
    except ValueError as error:
        # Every input error of the engine is a ValueError subclass quoting the input.
        print(f"tabletop: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as error:  # a bug, not bad input: one line, unless debugging
        if os.environ.get("TABLETOP_DEBUG"):
            raise
        print(f"tabletop: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
