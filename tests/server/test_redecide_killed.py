"""A full run killed with SIGKILL part-way leaves the next run re-deciding what it did not
reach (`indexer.pipeline.REDECIDE_KEYS`, recorded only once a run has gone through).

A real process indexes a repository whose text rules have changed (a configured
`walk.lexical_only_patterns` dropped: 120 files become code, with symbols and a code graph)
and stops, in its own progress callback, at a known point: in the walk, or in the second
pass that chunks what the walk wrote. The test kills it there with SIGKILL (no sleep: it
waits for the line the callback prints). The killed run must have kept the old rules on
record, and the next run must leave the index equal to a clean index of the tree under the
new rules: files, roles, text, checkpoints, symbols and the code graph, no half of a file
(`bench.torture.snapshot`); `ctxd callers` then lists a caller in every file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.torture import _rows as rows
from bench.torture import snapshot
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

FILES = 120
CHILD = """
import sys
from pathlib import Path
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder

phase, at = sys.argv[2], int(sys.argv[3])

def progress(p):
    if p.phase == phase and p.done >= at:
        print(f"paused in {p.phase} at {p.done}", flush=True)
        sys.stdin.readline()  # here until the test kills this process

service = Service(load_settings({}), embedder=FakeEmbedder())
service.index(Path(sys.argv[1]), progress=progress)
print("finished", flush=True)
"""


def write_config(path: Path, patterns: list[str]) -> None:
    path.write_text(f"[walk]\nlexical_only_patterns = {json.dumps(patterns)}\n",
                    encoding="utf-8")


def index(root: Path) -> None:
    service = Service(load_settings({}), embedder=FakeEmbedder())
    try:
        assert not service.index(root).stopped
    finally:
        service.close()


def killed_index(root: Path, phase: str, at: int) -> str:
    """Index `root` in a process of its own, SIGKILLed once its progress reaches `at` files
    of `phase`; returns what it printed."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root), phase, str(at)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parents[2])  # `tests` importable
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the event: the run is paused at its known point
        assert line.startswith("paused in"), line + proc.communicate(timeout=120)[1]
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL, (out, err)
    return line + out


@pytest.fixture
def tree(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "app")
    repo.write("app/core.py", "def target(value):\n    return value + 1\n")
    for n in range(FILES):
        repo.write(f"pkg/m{n:03d}.py",
                   "from app.core import target\n\n\n"
                   f"def use_{n}(x):\n    return target(x * {n})\n")
    config = tmp_path / "config.toml"
    monkeypatch.setenv("CTXD_CONFIG", str(config))
    write_config(config, ["pkg/**"])  # an older configuration: pkg/ greppable only
    index(repo.root)
    write_config(config, [])  # now pkg/ is code
    monkeypatch.chdir(repo.root)
    return repo


@pytest.mark.parametrize(("phase", "at"), [("walk", 25), ("chunk", 25)])
def test_a_run_killed_part_way_leaves_the_rest_to_be_decided_again(
    tree: RepoBuilder, isolated_env: Path, tmp_path: Path, phase: str, at: int,
) -> None:
    db = isolated_env / "index.db"
    killed_index(tree.root, phase, at)
    options = json.loads(str(rows(db, "SELECT options FROM repos")[0][0]))
    assert options["lexical_only_patterns"] == ["pkg/**"]  # not recorded: not gone through
    still_old = rows(db, "SELECT count(*) FROM files f WHERE f.path LIKE 'pkg/%' AND NOT "
                         "EXISTS (SELECT 1 FROM symbols s WHERE s.file_id = f.id)")[0][0]
    assert isinstance(still_old, int) and still_old > 0  # the kill landed part-way

    index(tree.root)  # the next full run

    clean_home = tmp_path / "clean-home"
    os.environ["CTXD_HOME"] = str(clean_home)
    try:
        index(tree.root)
    finally:
        os.environ["CTXD_HOME"] = str(isolated_env)
    got, want = snapshot(db), snapshot(clean_home / "index.db")
    for key in want:
        assert got[key] == want[key], key
    callers = json.loads(run("callers", "target", "--json").stdout)["callers"]
    assert len(callers) == FILES
