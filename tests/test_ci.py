"""CI (`.ci/run`) installs with the README's command, runs the README's test command, then
keeps lint and types clean (ruff, mypy --strict through `.ci/typecheck`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def commands(path: Path) -> list[str]:
    return [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]


def test_ci_runs_the_readme_install_and_test_commands_then_ruff_and_mypy():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.S)
    install = next(ln for b in blocks for ln in b.splitlines() if "pip install" in ln)
    test = next(ln for b in blocks for ln in b.splitlines() if "-m pytest" in ln)
    run = commands(ROOT / ".ci" / "run")
    assert install.strip() in run
    at = run.index(test.strip())
    rest = run[at + 1:]
    assert any(ln.startswith(".venv/bin/ruff check") for ln in rest)
    assert "bash .ci/typecheck" in rest


def test_typecheck_runs_mypy_over_the_installed_names():
    script = (ROOT / ".ci" / "typecheck").read_text(encoding="utf-8")
    assert "-m mypy" in script and "-p ctxd" in script
    assert re.search(r"strict\s*=\s*true", (ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_live_zoekt_tests_skip_without_the_shared_fixtures(tmp_path):
    """A clean clone has no `../shared`: with zoekt-index and zoekt-webserver on PATH, the
    live-Zoekt tests skip with the reason instead of failing on the missing fixture
    repositories (the binaries here are stand-ins that are never run)."""
    import os
    import subprocess
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("zoekt-index", "zoekt-webserver"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
        tool.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               CTXD_ZOEKT_FIXTURES=str(tmp_path / "no-shared" / "zoekt-fixtures"))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "tests/server/test_hybrid_search.py::test_hybrid_against_a_live_zoekt_webserver"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout and "fixture repositories not found" in run.stdout
