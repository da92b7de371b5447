"""Git's own files planted by a hostile repository (issue 31, item 2): `.git/index`,
`.git/HEAD` or a linked worktree's `commondir` made a FIFO, `.git/index` a symlink to
`/dev/zero` or a sparse gigabyte. ctxd reads git's files without git; each must be read
only when it is a regular file, within a size cap, and never block.

Each case runs a real `ctxd` process; a run that blocks is killed by the subprocess
timeout, which is what fails the test (no timing is asserted).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from ctxd.indexer.walk.gitindex import tracked_paths
from ctxd.indexer.walk.gitrefs import branch_rows, git_layout
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.indexer.walk.test_gitrefs import git

CLI = [sys.executable, "-m", "ctxd.server.cli.main", "--no-daemon"]
HANG = 60  # seconds: far beyond what any of these runs takes; a blocked run is killed


@pytest.fixture
def repo(tmp_path: Path) -> RepoBuilder:
    r = RepoBuilder(tmp_path / "repo")
    r.write("app.py", "def start():\n    return 1\n")
    r.write(".gitignore", "*.log\n")
    git(r.root, "init", "-q", "-b", "main")
    git(r.root, "add", "-A")
    git(r.root, "commit", "-qm", "first")
    return r


def ctxd(home: Path, *args: str, cap: int | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "false"}

    def limit() -> None:
        if cap is not None:
            resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))

    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env,
                          timeout=HANG, check=False, preexec_fn=limit)


def make_fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


def dry_run(home: Path, root: Path, cap: int | None = None) -> dict:
    proc = ctxd(home, "index", "--dry-run", "--json", str(root), cap=cap)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_a_fifo_as_the_git_index_does_not_block_a_dry_run(repo, tmp_path):
    make_fifo(repo.root / ".git" / "index")
    stats = dry_run(tmp_path / "home", repo.root)
    assert stats["files_indexed"] == 2  # app.py, .gitignore: read as if git tracked nothing


def test_a_fifo_as_a_worktrees_commondir_does_not_block_a_dry_run(repo, tmp_path):
    linked = tmp_path / "linked"
    git(repo.root, "worktree", "add", "-q", str(linked))
    admin = repo.root / ".git" / "worktrees" / "linked"
    make_fifo(admin / "commondir")
    stats = dry_run(tmp_path / "home", linked)
    assert stats["files_indexed"] == 2


@pytest.mark.parametrize("plant", ["dev_zero", "sparse"])
def test_a_git_index_that_never_ends_is_not_read(repo, tmp_path, plant):
    """`.git/index` a link to `/dev/zero` (1.1 GB peak before) or a sparse file of almost
    1 GiB behind a valid header: not read at all. The address space is capped at 1 GiB so
    that reading it fails the run instead of taking the machine's memory."""
    index = repo.root / ".git" / "index"
    index.unlink()
    if plant == "dev_zero":
        index.symlink_to("/dev/zero")
    else:
        with open(index, "wb") as f:
            f.write(b"DIRC" + (2).to_bytes(4, "big") + (1).to_bytes(4, "big"))
            f.truncate((1 << 30) - 1)
    assert tracked_paths(git_layout(repo.root)) is None  # type: ignore[arg-type]
    stats = dry_run(tmp_path / "home", repo.root, cap=1 << 30)
    assert stats["files_indexed"] == 2


def test_a_fifo_as_head_blocks_neither_repos_nor_cat(repo, tmp_path):
    home = tmp_path / "home"
    svc = Service(load_settings({"home": str(home)}), embedder=FakeEmbedder())
    try:
        svc.index(repo.root)
    finally:
        svc.close()
    make_fifo(repo.root / ".git" / "HEAD")

    repos = ctxd(home, "repos", "--json")
    assert repos.returncode == 0, repos.stderr
    (row,) = json.loads(repos.stdout)["repositories"]
    assert row["name"] == "repo" and row["branches"] == []
    cat = ctxd(home, "cat", "repo", "app.py")
    assert cat.returncode == 0, cat.stderr
    assert "def start" in cat.stdout
    assert ctxd(tmp_path / "home2", "index", "--dry-run", str(repo.root)).returncode == 0
    assert branch_rows(repo.root) == []


def test_a_fifo_as_package_json_does_not_block_a_dry_run(tmp_path):
    """Found beside item 2: the build-output rule reads a `package.json` (which folders
    it names as build output) with a plain open; a FIFO there hung the walk too."""
    repo = RepoBuilder(tmp_path / "web")
    repo.write("dist/app.js", "export const x = 1;\n")
    os.mkfifo(repo.root / "package.json")
    stats = dry_run(tmp_path / "home", repo.root)
    assert stats["files_indexed"] == 1
