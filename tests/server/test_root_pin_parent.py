"""A root replaced by one of the user's own other folders (issue 39, item 7).

Before: someone who can write the folder holding a repository (no sticky bit) renamed one
of the user's other folders there into the repository's place; the root pin took any
folder of the same user for "a fresh clone", so `cat` served the private folder and the
watcher re-indexed it (dropping the real files). Now a folder of another identity under a
parent other users can write is refused (`root_moved`) until the user indexes the path
again with `--force` (`force: true`), which is the confirmation; under a private or sticky
parent a re-created folder of the user's is still the repository again.

Real folders, a real SQLite index (fake embedder), `ctxd` in a real process for `cat` and
`status`, and a real watcher (inotify).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ctxd.indexer.walk.rootpin import RootMoved
from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher
from tests.conftest import FakeEmbedder, RepoBuilder

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]
MARKER = "zanzibar_private_notes_marker"
FAST = WatchOptions(debounce_ms=50, rescan_seconds=0, force_polling=False)
TIMEOUT = 30.0


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ctxd-home"


@pytest.fixture
def service(home: Path) -> Iterator[Service]:
    settings = replace(load_settings({"home": str(home)}), watch=FAST)
    svc = Service(settings, embedder=FakeEmbedder())
    yield svc
    svc.close()


def setup(service: Service, parent: Path, mode: int) -> tuple[RepoBuilder, RepoBuilder]:
    """A repository and one of the user's private folders side by side in `parent`."""
    parent.mkdir()
    parent.chmod(mode)
    repo = RepoBuilder(parent / "proj")
    repo.write("app.py", "def start():\n    return 1\n")
    private = RepoBuilder(parent / "notes")
    private.write("diary.py", f"NOTE = {MARKER!r}\n")
    service.index(repo.root)
    return repo, private


def swap_in(repo: RepoBuilder, private: RepoBuilder) -> None:
    """What a user who can write the parent does: `mv proj x && mv notes proj`."""
    repo.root.rename(repo.root.with_name("proj.away"))
    private.root.rename(repo.root)


def ctxd(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "false"}
    return subprocess.run([*CLI, "--no-daemon", *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def stored_paths(service: Service) -> list[str]:
    return sorted(r[0] for r in service.store().query("SELECT path FROM files"))


def test_your_own_folder_swapped_in_under_an_open_parent_is_refused(service, tmp_path, home):
    repo, private = setup(service, tmp_path / "shared", 0o777)
    swap_in(repo, private)

    with pytest.raises(RootMoved) as exc:
        service.file_content("proj", "diary.py")
    assert "other users can write" in exc.value.message and str(tmp_path / "shared") in (
        exc.value.message)
    cat = ctxd(home, "cat", "proj", "diary.py")
    assert cat.returncode != 0 and MARKER not in cat.stdout + cat.stderr
    assert "no longer the folder that was indexed" in cat.stderr
    status = json.loads(ctxd(home, "status", "--json").stdout)
    assert "other users can write" in status["repositories"][0]["root_moved"]
    # The watcher's kind of run (partial, by the stored path) refuses; nothing dropped.
    with pytest.raises(RootMoved):
        service.index(repo.root, only_paths=["app.py", "diary.py"])
    assert stored_paths(service) == ["app.py"]

    # A plain re-index (a routine refresh) does not take it either: it would drop the
    # repository's files for the private folder's.
    with pytest.raises(RootMoved) as exc:
        service.index(repo.root)
    assert "--force" in (exc.value.hint or "")
    again = ctxd(home, "index", str(repo.root))
    assert again.returncode != 0 and "--force" in again.stderr, again.stderr
    assert stored_paths(service) == ["app.py"]
    # The user confirms (`--force`, `force: true`): the folder there is pinned.
    service.index(repo.root, force=True)
    assert "root_moved" not in service.repos()[0]
    assert MARKER in service.file_content("proj", "diary.py").content


@pytest.mark.parametrize("mode", [0o755, 0o1777], ids=["private", "sticky"])
def test_a_re_created_folder_under_a_private_or_sticky_parent_is_still_the_repository(
        service, tmp_path, mode):
    repo, private = setup(service, tmp_path / "parent", mode)
    swap_in(repo, private)
    assert "root_moved" not in service.repos()[0]
    assert MARKER in service.file_content("proj", "diary.py").content


def test_the_watcher_never_re_indexes_a_folder_swapped_in_under_an_open_parent(
        service, tmp_path):
    repo, private = setup(service, tmp_path / "shared", 0o777)
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2)
    watcher.start()
    try:
        assert watcher.wait_ready(TIMEOUT) and watcher.wait_idle(TIMEOUT)
        swap_in(repo, private)
        (repo.root / "more.py").write_text("MORE = 1\n", encoding="utf-8")

        def refused() -> bool:
            state = watcher.health()["repos"].get("proj") or {}
            return "other users can write" in (state.get("error") or "")

        assert watcher.wait_for(refused, TIMEOUT)
        assert watcher.wait_idle(TIMEOUT)
        assert stored_paths(service) == ["app.py"]
        assert MARKER not in json.dumps(service.store().query("SELECT content FROM file_text"))
    finally:
        watcher.stop()
