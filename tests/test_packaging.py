"""The built wheel installs one top-level import name, `ctxd`, with every module of the
three folders under it (issue: a distribution must not claim `server`, `search` or
`indexer` in site-packages)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    build = tmp_path_factory.mktemp("build")
    # setuptools' PEP 517 backend, in this venv (no build isolation: nothing to download).
    code = (
        "import os, sys; from setuptools import build_meta as b; "
        f"os.chdir({str(ROOT)!r}); print(b.build_wheel({str(out)!r}))"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(build), "TMPDIR": str(build)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=240, cwd=build)
    assert done.returncode == 0, done.stderr[-2000:]
    return out / done.stdout.strip().splitlines()[-1]


def test_wheel_has_ctxd_as_its_only_top_level_name(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"ctxd"}
    top_level = [n for n in names if n.endswith(".dist-info/top_level.txt")]
    if top_level:
        text = zipfile.ZipFile(wheel).read(top_level[0]).decode()
        assert text.split() == ["ctxd"]


def test_wheel_carries_every_source_module(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        "ctxd/" + str(p.relative_to(ROOT)).replace("\\", "/")
        for folder in ("indexer", "search", "server")
        for p in (ROOT / folder).rglob("*.py")
    }
    assert expected - names == set()
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ctxd = ctxd.server.cli.main:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_wheel_carries_the_ui_page_files(wheel: Path) -> None:
    """`ctxd ui`'s script and stylesheet ship in the package (and nothing from tests/)."""
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"ctxd/server/ui/static/ui.js", "ctxd/server/ui/static/ui.css"} <= names
    assert not [n for n in names if n.endswith("axe.min.js")]


def test_wheel_carries_the_ranking_models_weights(wheel: Path) -> None:
    """`[search] fusion = "fitted"` reads `search/rank_model.json` (issue 42)."""
    assert "ctxd/search/rank_model.json" in set(zipfile.ZipFile(wheel).namelist())
