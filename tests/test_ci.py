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
