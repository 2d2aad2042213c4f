"""`pip install .` (not only an editable checkout): one package, tabletop, with its models.

The wheel is built from this checkout and installed into a folder of its own; the
installed copy is then run from elsewhere, so nothing of the checkout is on its path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.shared import scaled

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "vision", "live", "panel", "device", "calibration", "models")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(REPO)],
        check=True, capture_output=True, timeout=scaled(600),
    )
    (built,) = out.glob("tabletop-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True, timeout=scaled(300),
    )
    return target


def test_the_wheel_holds_one_top_level_package(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names if not name.startswith("tabletop-")}
    assert tops == {"tabletop"}
    for package in PACKAGES:
        assert f"tabletop/{package}/__init__.py" in names
    assert "tabletop/models/tabletop.onnx" in names
    assert "tabletop/models/tabletop.reader.onnx" in names
    # the rule explanations the panel serves
    for texts in ("de", "en", "ro", "quotes"):
        assert f"tabletop/panel/texts/{texts}.json" in names
    # each module once: the links in a checkout's tabletop/ folder are not copied twice
    assert len(names) == len(set(names))
    assert not [name for name in names if name.startswith(("tests/", "bench/"))]


def run_installed(site: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=scaled(120))


def test_the_installed_copy_runs_from_its_own_folder(installed: Path, tmp_path: Path) -> None:
    where = run_installed(installed, tmp_path, "-c",
                          "import tabletop.engine.rearrange as r, tabletop.vision.detector as d;"
                          "print(r.__file__); print(d.DEFAULT_MODELS[0])")
    assert where.returncode == 0, where.stderr
    module, model = where.stdout.split()
    assert Path(module).is_relative_to(installed)
    assert Path(model).is_relative_to(installed) and Path(model).is_file()

    # the compiled rearrangement core answers a Sabra position
    solved = run_installed(installed, tmp_path, "-m", "tabletop", "solve", "--variant", "sabra",
                           "--rack", "R10 R11 R12 K1", "--table", "R7 R8 R9", "--json")
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["placed"] == ["R10", "R11", "R12"]


def test_the_installed_copy_reads_a_photo_with_its_shipped_model(
    installed: Path, tmp_path: Path
) -> None:
    photo = REPO / "tabletop" / "samples" / "videos" / "sabra.mp4"
    frame = tmp_path / "frame.png"
    # the sample game's last frame: melds on the table
    grab = run_installed(installed, tmp_path, "-c",
                         "import cv2, sys; video = cv2.VideoCapture(sys.argv[1]); last = None\n"
                         "while (got := video.read())[0]: last = got[1]\n"
                         "cv2.imwrite(sys.argv[2], last)", str(photo), str(frame))
    assert grab.returncode == 0 and frame.is_file(), grab.stderr
    detected = run_installed(installed, tmp_path, "-m", "tabletop", "detect", str(frame), "--json")
    assert detected.returncode == 0, detected.stderr
    assert json.loads(detected.stdout)["detections"]
