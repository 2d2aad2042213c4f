"""The ``tabletop`` command line (CONTRACT.md).

Start-up must stay fast: this module imports only the standard library at
the top; each command imports what it needs when it runs, and the rules
commands never touch torch, ultralytics or OpenCV.

Global options, before the command: ``--version``; ``-q`` (errors only),
``-v`` (info) or ``-vv`` (debug) set the level of the program's log lines
(``tabletop: warning: ...`` on stderr; warnings by default), and handlers
read the choice as ``args.verbosity`` (-1, 0, 1 or 2).

Exit status: 0 done, 2 bad input or a missing optional extra (the line names
the extra to install), 1 anything else (a bug, or a broken install).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
MAX_MELD_ITEMS = 14
"""No meld of any variant holds more (the longest run is 1..13..1)."""
MAX_ARGUMENT_CHARS = 10_000
"""Longer than any rack, table or option written out (216 items are under 1,000)."""
MAX_FILE_BYTES = 1_000_000
"""A round or scenario file; the largest real one is a few kilobytes."""
MAX_JSON_DEPTH = 32
DEFAULT_SOLVE_BUDGET_S = 30.0
"""Every position met in play is solved in milliseconds; this bounds made-up ones."""


class BadInput(ValueError):
    """Input the command cannot work with; reported on one line with exit 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One clear line, not argparse's usage block.
        raise BadInput(f"{message} (see '{self.prog} --help')")


# --- global options: version, verbosity, logging -------------------------------
def package_version() -> str:
    """The installed package's version (its metadata); ``unknown`` when not installed."""
    from importlib import metadata

    try:
        return metadata.version("tabletop")
    except metadata.PackageNotFoundError:
        return "unknown"


class _VersionAction(argparse.Action):
    """``--version``: reads the package metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"tabletop {package_version()}")
        parser.exit()


QUIET, NORMAL, VERBOSE, DEBUG = -1, 0, 1, 2
"""The values of ``args.verbosity``."""
LOG_LEVELS = {QUIET: logging.ERROR, NORMAL: logging.WARNING, VERBOSE: logging.INFO,
              DEBUG: logging.DEBUG}


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is when a line is logged."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:
        return sys.stderr


class _LineFormatter(logging.Formatter):
    """``tabletop: warning: message``, the level written like the error lines'."""

    def format(self, record: logging.LogRecord) -> str:
        return f"tabletop: {record.levelname.lower()}: {record.getMessage()}"


def setup_logging(verbosity: int) -> None:
    """Send the whole program's log lines to stderr at the level ``verbosity`` picks.
    Called again (as tests do), it replaces its own handler and nothing else."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        if isinstance(handler, _StderrHandler):
            root.removeHandler(handler)
    handler = _StderrHandler()
    handler.setFormatter(_LineFormatter())
    root.addHandler(handler)
    root.setLevel(LOG_LEVELS[verbosity])


# --- a missing module -----------------------------------------------------------
OPTIONAL_MODULES: dict[str, str] = {
    "ultralytics": "train",
    "torch": "train",
    "torchvision": "train",
    "onnx": "train",
    "onnxslim": "train",
    "rummikub_solver": "bench",
    "playwright": "dev",
    "httpx": "dev",
    "schemathesis": "dev",
}
"""Top-level module -> the extra of pyproject.toml that installs it."""
POSTGRESQL_DRIVERS = ("psycopg", "psycopg2")
"""What SQLAlchemy imports for a ``postgresql`` database URL."""


def missing_module_message(error: ImportError) -> tuple[str, int]:
    """The one line (without ``tabletop: error:``) and exit status for an import
    that failed: an optional extra's module names the extra (status 2), any
    other module asks for a reinstall (status 1)."""
    name = error.name or ""
    top = name.partition(".")[0]
    state = "is missing" if isinstance(error, ModuleNotFoundError) else "cannot be imported"
    if top in POSTGRESQL_DRIVERS:
        # psycopg2 is what a plain postgresql:// URL asks for in SQLAlchemy 2.0
        rewrite = " and write the URL as postgresql+psycopg://..." if top == "psycopg2" else ""
        return (f"a PostgreSQL database needs its driver (module {top!r} {state}): "
                f"pip install 'psycopg[binary]'{rewrite}"), EXIT_BAD_INPUT
    if top in OPTIONAL_MODULES:
        extra = OPTIONAL_MODULES[top]
        return (f"this needs the {extra!r} extra (module {top!r} {state}): "
                f"pip install 'tabletop[{extra}]'"), EXIT_BAD_INPUT
    what = f"module {name!r} {state}" if name else "an import failed"
    return (f"{what} ({error}): the installation is incomplete, reinstall tabletop "
            "(pip install . in its source folder)"), EXIT_INTERNAL


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
    from tabletop.engine.items import parse_items

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
    if analysis.hint is not None:
        answer["hint"] = analysis.hint
    return answer


def _variant(args: argparse.Namespace) -> Any:
    from tabletop.engine.variants import find_variant, parse_option_args

    return find_variant(args.variant, parse_option_args(args.option or []))


def cmd_rules_check(args: argparse.Namespace) -> int:
    variant = _variant(args)
    text = " ".join(args.meld)
    melds = text.split("|") if "|" in text else [text]
    for meld in melds:
        answer = check_meld_json(variant, meld)
        if answer["valid"]:
            line = f"valid {answer['kind']} worth {answer['value']}: {' '.join(answer['items'])}"
            if "hint" in answer:
                line += f" ({answer['hint']})"
            elif "note" in answer:
                line += f" ({answer['note']})"
        else:
            line = f"invalid: {' '.join(answer['items'])}: {answer['reason']}"
        _emit(answer, args.json, line)
    return EXIT_OK


# --- rules table -------------------------------------------------------------
def cmd_rules_table(args: argparse.Namespace) -> int:
    from tabletop.engine.items import parse_melds
    from tabletop.engine.state import TableState

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
        if path == "-":
            raw = sys.stdin.read(MAX_FILE_BYTES + 1)
        else:
            with open(path, encoding="utf-8") as file:
                raw = file.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        raise BadInput(f"cannot read {path!r}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path!r} is not UTF-8 text") from None
    if len(raw) > MAX_FILE_BYTES:
        raise BadInput(f"{path!r} is over {MAX_FILE_BYTES} characters; a round is a few thousand")
    return parse_json(raw, path)


def parse_json(raw: str, source: str) -> Any:
    """JSON as the standard defines it (no NaN or Infinity), nested at most MAX_JSON_DEPTH
    deep; BadInput naming ``source`` otherwise."""

    def no_constant(name: str) -> Any:
        raise BadInput(f"{source!r} holds {name}, which is not a JSON number")

    depth = deepest = 0
    in_string = escaped = False
    for char in raw:  # nesting is measured before parsing, which recurses
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    if deepest > MAX_JSON_DEPTH:
        raise BadInput(f"{source!r} nests {deepest} levels deep; at most {MAX_JSON_DEPTH}")
    try:
        return json.loads(raw, parse_constant=no_constant)
    except json.JSONDecodeError as error:
        raise BadInput(
            f"{source!r} is not valid JSON: {error.msg} at line {error.lineno}"
        ) from None


def format_round(result: Any) -> str:
    lines = []
    for name, score in result.scores.items():
        lines.append(f"{name:>12} {score:+6d}   " + "; ".join(result.details.get(name, [])))
    if result.doubled:
        lines.append("(all points doubled)")
    lines.extend(f"problem: {problem}" for problem in result.problems)
    return "\n".join(lines)


def cmd_rules_score(args: argparse.Namespace) -> int:
    from tabletop.engine.rounds import round_from_json, score_round

    round_ = round_from_json(_load_json(args.file))
    result = score_round(round_)
    _emit({"variant": round_.variant.id, **result.to_json()}, args.json, format_round(result))
    return EXIT_OK


# --- rules variants ----------------------------------------------------------
def cmd_rules_variants(args: argparse.Namespace) -> int:
    from tabletop.engine.variants import VARIANTS, find_variant

    payload = []
    lines = []
    for variant_id, cls in VARIANTS.items():
        fewest, most = find_variant(variant_id).player_range()
        options = [
            {
                "name": spec.name,
                "default": spec.default,
                "help": spec.help,
                "choices": list(spec.choices) if spec.choices else None,
            }
            for spec in cls.option_specs
        ]
        payload.append({"id": variant_id, "name": cls.name, "players": [fewest, most],
                        "options": options})
        counts = f"{fewest} or more" if most is None else f"{fewest} to {most}"
        lines.append(f"{variant_id:24} {cls.name}, {counts} players")
        lines.extend(f"{'':26}--option {o['name']}={o['default']}  {o['help']}" for o in options)
    _emit(payload, args.json, "\n".join(lines))
    return EXIT_OK


# --- solve --------------------------------------------------------------------
def _seconds(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds or 'none', not {text!r}") from None
    if not 0 < seconds <= 86_400:
        raise argparse.ArgumentTypeError(f"a number of seconds from 0 to 86400, not {text!r}")
    return seconds


def cmd_solve(args: argparse.Namespace) -> int:
    from tabletop.engine.items import parse_items, parse_melds
    from tabletop.engine.solver import solve

    variant = _variant(args)
    rack = parse_items(args.rack)
    table = parse_melds(args.table) if args.table and args.table.strip() else ()
    play = solve(
        variant, rack, table, initial=args.initial, objective=args.objective, keep=args.keep,
        budget_s=args.budget,
    )
    _emit(play.to_json(), args.json, str(play))
    return EXIT_OK


# --- demo ---------------------------------------------------------------------
def cmd_demo(args: argparse.Namespace) -> int:
    from tabletop.demo import run_demo_scripted, run_demo_video, run_demo_with_panel

    if args.panel:
        return run_demo_with_panel(
            speed=args.speed,
            scripted=args.scripted,
            port=args.port,
            wait_for_page=args.wait_for_page,
        )
    if args.scripted:
        return run_demo_scripted(as_json=args.json)
    return run_demo_video(as_json=args.json, quiet=getattr(args, "verbosity", 0) < 0)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tabletop", description="Rummy table assistant: rules, scores, camera.")
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=QUIET,
                          default=NORMAL, help="log errors only")
    loudness.add_argument("-v", "--verbose", dest="verbosity", action="count", default=NORMAL,
                          help="log what is being done (-vv: debugging detail too)")
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
    solve.add_argument(
        "--budget",
        type=_seconds,
        default=DEFAULT_SOLVE_BUDGET_S,
        metavar="SECONDS",
        help="time the search may take; when it runs out the answer says \"optimal\": false"
        f" (default {DEFAULT_SOLVE_BUDGET_S:g}; 'none' for no limit)",
    )
    solve.set_defaults(handler=cmd_solve)

    demo = commands.add_parser(
        "demo", help="play the bundled sample video through the camera pipeline and the model"
    )
    demo.add_argument("--json", action="store_true", help="print the events as JSON lines")
    demo.add_argument(
        "--scripted",
        action="store_true",
        help="play the scripted games and score the sample matches instead (no model)",
    )
    demo.add_argument(
        "--panel", action="store_true", help="serve the web panel and play the game on it"
    )
    demo.add_argument("--speed", type=float, default=1.0, help="pace of the game with --panel")
    from tabletop.commands_panel import port_number

    demo.add_argument(
        "--port", type=port_number, help="the panel's port with --panel (default 8765)"
    )
    demo.add_argument(
        "--wait-for-page", type=float, default=30.0, metavar="SECONDS",
        help="with --panel, start each game once a page shows it, at most this late"
        " (default 30; 0: at once)",
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
    "tabletop.commands_replay",
    "tabletop.commands_adapt",
)
"""Modules adding subcommands (tabletop/commands_*.py)."""


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the command line ``argv`` and answers its exit status.  Without ``argv`` it is
    the process's own command line (``tabletop``, ``python -m tabletop``), and the process
    ends with the status returned; then, where an OpenCV call is still stuck in a camera's
    thread, it ends here at once (:func:`_end_before_a_stuck_call_returns`)."""
    status = _command(argv)
    if argv is None:
        _end_before_a_stuck_call_returns(status)
    return status


def _end_before_a_stuck_call_returns(status: int) -> None:
    """Ends the process with ``status`` now where a camera's OpenCV call has not returned
    by the time it is due back (live/sources.py waits for it that long).  A call that
    returns while the interpreter finalises aborts the process ("terminate called without
    an active exception", status 134) after the command has said why it stops; ending
    before finalising leaves it no time to.  The streams are flushed first: what the
    command printed is out, and the files it wrote are closed by then."""
    sources = sys.modules.get("tabletop.live.sources")
    if sources is None or sources.backend_calls_returned():
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say on it
            stream.flush()
    os._exit(status)


def _command(argv: Sequence[str] | None) -> int:
    try:
        arguments = list(sys.argv[1:] if argv is None else argv)
        for argument in arguments:
            if len(argument) > MAX_ARGUMENT_CHARS:
                raise BadInput(
                    f"an argument of {len(argument)} characters ({argument[:40]!r}...) is longer"
                    f" than any rack, table or option ({MAX_ARGUMENT_CHARS})"
                )
        args = build_parser().parse_args(arguments)
        args.verbosity = min(args.verbosity, DEBUG)
        setup_logging(args.verbosity)
        return int(args.handler(args))
    except ValueError as error:
        # Every input error of the engine is a ValueError subclass quoting the input.
        print(f"tabletop: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as error:
        message, status = missing_module_message(error)
        if status == EXIT_INTERNAL and os.environ.get("TABLETOP_DEBUG"):
            raise
        print(f"tabletop: error: {message}", file=sys.stderr)
        return status
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
