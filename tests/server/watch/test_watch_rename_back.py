"""A quick rename of a repository and back never stops the watcher for good (issue 39,
item 8).

Before: when a batch (or setting up a watch) failed because the root was away, whether
to look again later (`gone`) was decided by one `isdir` read right after the failure; a
root already renamed back by then was marked "not gone", with an error, and never watched
again until the process restarted. Now every repository the watcher stopped at is looked
at again on the next refresh.

A real watcher (inotify) over a real SQLite index (fake embedder); the renames come from a
separate process that renames the root away and back as fast as it can, touching a file
in it now and then so that batches run while it does.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher
from tests.conftest import FakeEmbedder, RepoBuilder

FAST = WatchOptions(debounce_ms=20, rescan_seconds=0, force_polling=False)
TIMEOUT = 30.0

FLIPPER = """
import os, sys, time
root, seconds = sys.argv[1], float(sys.argv[2])
away = root + ".away"
end = time.monotonic() + seconds
n = 0
while time.monotonic() < end:
    n += 1
    if n % 50 == 0:
        with open(os.path.join(root, "touched.py"), "w") as f:
            f.write(f"N = {n}\\n")
    os.rename(root, away)
    os.rename(away, root)
print(n)
"""


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    settings = replace(load_settings({"home": str(tmp_path / "ctxd-home")}), watch=FAST)
    svc = Service(settings, embedder=FakeEmbedder())
    yield svc
    svc.close()


def stored(service: Service) -> set[str]:
    return {r[0] for r in service.store().query("SELECT path FROM files")}


def test_a_root_renamed_away_and_back_is_watched_again(service: Service, tmp_path: Path):
    repo = RepoBuilder(tmp_path / "proj")
    repo.write("app.py", "def start():\n    return 1\n")
    service.index(repo.root)
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2)
    watcher.start()
    try:
        assert watcher.wait_ready(TIMEOUT) and watcher.wait_idle(TIMEOUT)
        for _round in range(5):
            flips = subprocess.run([sys.executable, "-c", FLIPPER, str(repo.root), "1.5"],
                                   capture_output=True, text=True, timeout=60, check=True)
            assert int(flips.stdout) > 100
            assert repo.root.is_dir()
            # Whatever the watcher saw meanwhile, it comes back to the repository.
            assert watcher.wait_for(
                lambda: (watcher.health()["repos"].get("proj") or {}).get("error") is None,
                TIMEOUT), watcher.health()["repos"]["proj"].get("error")
        repo.write("after.py", "AFTER = 1\n")
        assert watcher.wait_for(lambda: "after.py" in stored(service), TIMEOUT), (
            watcher.health()["repos"])
    finally:
        watcher.stop()
