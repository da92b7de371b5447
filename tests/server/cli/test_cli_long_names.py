"""Odd names in `ctxd files` and `ctxd index` (issue 39, item 12).

Before: `ctxd files '**'` left out a file whose name holds a newline (which `*.py` listed:
`**` became `.*`, which stops at a newline), and the `failed` line of `ctxd index` printed
a path too long to open (thousands of characters) twice, once as the file and once in
the error. The index is built by the service with the fake embedder (a real SQLite file
under `CTXD_HOME`); the CLI runs through `CliRunner` against the same folder.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def service(isolated_env: Path) -> Iterator[Service]:
    svc = Service(load_settings({}), embedder=FakeEmbedder())
    yield svc
    svc.close()


def test_files_star_star_lists_a_name_holding_a_newline(tmp_path: Path, service: Service):
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "two\nlines.py").write_text("X = 1\n", encoding="utf-8")
    (repo / "plain.py").write_text("Y = 2\n", encoding="utf-8")
    service.index(repo)
    want = {"plain.py", "src/two\nlines.py"}
    for pattern in ("*.py", "**", "**/*.py", "src/**", "**/two*"):
        r = run("files", pattern, "--json")
        assert r.exit_code == 0, r.output
        got = {f["path"] for f in json.loads(r.output)["results"]}
        expected = {p for p in want if pattern != "src/**" or p.startswith("src/")}
        if pattern == "**/two*":
            expected = {"src/two\nlines.py"}
        assert got == expected, (pattern, got)


def deep_file(root: Path, levels: int = 25) -> str:
    """A file under a path longer than the system allows to open by name (PATH_MAX);
    made with relative steps. Its path relative to `root`."""
    names = [f"d{i:03d}" + "x" * 196 for i in range(levels)]
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        out = os.open("deep.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, b"def deep():\n    return 1\n")
        os.close(out)
    finally:
        os.close(fd)
    return "/".join([*names, "deep.py"])


def test_a_failed_file_with_a_very_long_path_is_one_short_line(tmp_path: Path,
                                                               service: Service):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "ok.py").write_text("OK = 1\n", encoding="utf-8")
    deep_file(repo)
    r = run("--no-daemon", "index", str(repo))
    assert r.exit_code == 0, r.output[-2000:]
    lines = r.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("failed"))
    failed = lines[at + 1]
    assert "d000" in failed and "File name too long" in failed, failed[:400]
    assert len(failed) <= 400, len(failed)
    assert max(len(line) for line in lines) <= 400
    # --json keeps the whole path, for scripts.
    r = run("--no-daemon", "index", str(repo), "--json")
    report = json.loads(r.output)
    # (How deep the walk gets before a path is too long depends on the temporary folder's
    # own length: over 4,000 characters here, 4,019 under pytest-xdist's longer folders.)
    assert any(len(f["file"]) > 3000 and "..." not in f["file"] and "d000" in f["file"]
               for f in report["files_failed"]), (
        [(len(f["file"]), f["file"][-60:], f.get("error", "")[:200])
         for f in report["files_failed"]], {k: v for k, v in report.items()
                                            if k != "files_failed"})
