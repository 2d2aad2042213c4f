"""What each installed package imports, read from its source: data flows one way (frame ->
detections -> table -> engine -> events -> store -> panel and board), so each package
imports only those below it, the engine nothing else of the project, what runs at the table
(vision, live, panel) nothing of the studio where models are made, and nothing installed
imports the repository-only ``bench`` or ``tests``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.shared import REPO

LAYERS = {
    "engine": set(),
    "device": set(),
    "models": set(),
    "calibration": {"engine"},
    "vision": {"models"},
    "studio": {"engine", "calibration", "vision", "models"},
    "live": {"engine", "calibration", "vision", "device", "models"},
    "panel": {"engine", "live"},
    "tabletop": {"engine", "calibration", "vision", "studio", "device", "live", "panel", "models"},
}
"""Each package (its folder in the checkout) and the packages it may import."""
SHARED = {"tabletop.paths"}
"""Modules of the top package that any package may use (where the user's files live)."""


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every absolute module name a file imports, with ``importlib.import_module``'s too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def _package_of(module: str) -> str | None:
    """The project package a module name belongs to (None: not the project's)."""
    parts = module.split(".")
    if parts[0] in ("bench", "tests"):
        return parts[0]
    if parts[0] != "tabletop":
        return None
    if module in SHARED:
        return None
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "tabletop"


def _violations(package: str) -> list[str]:
    folder = REPO / package
    allowed = LAYERS[package] | {package}
    found = []
    for path in sorted(folder.rglob("*.py")):
        for line, module in _imports(path):
            target = _package_of(module)
            if target is not None and target not in allowed:
                found.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    return found


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_each_package_imports_only_the_layers_below_it(package: str) -> None:
    assert _violations(package) == []


@pytest.mark.parametrize(
    ("package", "source", "caught"),
    [
        ("engine", "from tabletop.live.game import Game\n", "imports tabletop.live.game"),
        ("panel", "import importlib\nimportlib.import_module('bench.replays')\n",
         "imports bench.replays"),
        ("vision", "from tabletop.panel import app\n", "imports tabletop.panel"),
        ("live", "import importlib\nimportlib.import_module('tabletop.studio.adapt')\n",
         "imports tabletop.studio.adapt"),
        ("vision", "from tabletop.engine import find_variant\n", "imports tabletop.engine"),
        ("tabletop", "from tests.shared import REPO\n", "imports tests.shared"),
    ],
)
def test_an_import_against_the_layers_is_caught(
    package: str, source: str, caught: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same check on a copy of one package's folder with one offending file added
    import tests.test_imports as checks

    (tmp_path / package).mkdir()
    (tmp_path / package / "offending.py").write_text(source, encoding="utf-8")
    monkeypatch.setattr(checks, "REPO", tmp_path)
    (found,) = checks._violations(package)
    assert found.startswith(f"{package}/offending.py:") and caught in found
