"""Honest freshness (issue 15, item 6): the watcher's lag runs from when a change could be
noticed (its event, or the scan that found it), not from the file's mtime; a start with
nothing changed leaves `indexed_at` alone; files the index refuses (binary) are not
reported as changed by every rescan.

Real files with old mtimes (`os.utime` to 2020, `shutil.copytree` like `cp -p`), real
watchers (inotify and polling), a real SQLite index; the `FakeEmbedder` keeps embedding
instant. Waits are on the watcher's condition, never fixed sleeps.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ctxd.server.service import Service
from ctxd.server.watch.status import read_watch_status
from ctxd.server.watch.watcher import Watcher
from tests.conftest import RepoBuilder
from tests.server.watch.test_watch import FAST, TIMEOUT, fts, make_service, paths, seed, start

OLD = 1577836800  # 2020-01-01T00:00:00Z
A_MINUTE_MS = 60_000


def age(root: Path) -> None:
    """Give every file and folder under `root` an mtime in 2020 (like `tar x`, `cp -p`)."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + dirnames:
            os.utime(os.path.join(dirpath, name), (OLD, OLD))


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    s = make_service(tmp_path / "ctxd-home")
    yield s
    s.close()


def indexed_at(service: Service) -> str | None:
    (row,) = service.store().repos()
    return row.indexed_at


def test_old_mtimes_found_by_the_startup_scan_show_the_scan_lag(service, repo, caplog):
    seed(repo)
    service.index(repo.root)
    repo.write("vendored/old.py", "def fossil_handler():\n    return 'trilobite'\n")
    age(repo.root / "vendored")
    with caplog.at_level(logging.INFO, logger="ctxd.server.watch"):
        watcher = start(service)
        try:
            assert "vendored/old.py" in paths(service)
            (result,) = watcher.results
            assert result.trigger == "rescan" and result.changed == 1
            assert result.lag_ms is not None and result.lag_ms < A_MINUTE_MS
            health = watcher.health()["repos"]["repo"]
            assert health["lag_ms"] is not None and health["lag_ms"] < A_MINUTE_MS
            assert watcher.wait_for(
                lambda: (read_watch_status(service.settings) or {}).get("repos", {})
                .get("repo", {}).get("last_update") is not None, TIMEOUT)
            lag = read_watch_status(service.settings)["repos"]["repo"]["lag_ms"]
            assert lag is not None and lag < A_MINUTE_MS
        finally:
            watcher.stop()
    logged = [r.getMessage() for r in caplog.records if "(lag " in r.getMessage()]
    assert logged and all(int(m.rsplit("(lag ", 1)[1].split()[0]) < A_MINUTE_MS
                          for m in logged)


def test_tree_copied_with_its_old_mtimes_while_watching_shows_a_small_lag(
        service, repo, tmp_path):
    seed(repo)
    service.index(repo.root)
    source = RepoBuilder(tmp_path / "archive")
    source.write("lib/zebra.py", "def zebra_checksum(herd):\n    return sum(herd)\n")
    age(source.root)
    watcher = start(service)
    try:
        shutil.copytree(source.root / "lib", repo.root / "lib")  # keeps mtimes, as cp -p
        assert watcher.wait_for(lambda: "lib/zebra.py" in fts(service, "zebra_checksum"),
                                TIMEOUT)
        assert watcher.wait_for(lambda: watcher.idle, TIMEOUT)
        result = watcher.results[-1]
        assert result.lag_ms is not None and result.lag_ms < A_MINUTE_MS
        assert watcher.health()["repos"]["repo"]["lag_ms"] < A_MINUTE_MS
    finally:
        watcher.stop()


def test_old_mtimes_found_by_a_poll_show_the_poll_lag(service, repo):
    seed(repo)
    service.index(repo.root)
    watcher = Watcher(service, replace(FAST, force_polling=True),
                      repo_poll_seconds=0.2, poll_seconds=0.2)
    watcher.start()
    try:
        assert watcher.wait_ready(TIMEOUT) and watcher.wait_idle(TIMEOUT)
        repo.write("extracted/tarball.py", "ARCHIVED = 'okapi_from_a_tarball'\n")
        age(repo.root / "extracted")
        assert watcher.wait_for(lambda: "extracted/tarball.py" in paths(service), TIMEOUT)
        assert watcher.wait_for(lambda: watcher.idle, TIMEOUT)
        result = watcher.results[-1]
        assert result.trigger == "poll"
        assert result.lag_ms is not None and result.lag_ms < A_MINUTE_MS
    finally:
        watcher.stop()


def test_a_start_with_nothing_changed_keeps_indexed_at_and_reports_no_binary(service, repo):
    seed(repo)
    repo.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    age(repo.root)
    service.index(repo.root)
    before = indexed_at(service)
    assert before is not None and "assets/logo.png" not in paths(service)
    for _ in range(2):  # a daemon started twice: every start rescans
        watcher = start(service)
        try:
            watcher.request_rescan()
            assert watcher.wait_for(lambda w=watcher: w.idle, TIMEOUT)
            assert list(watcher.results) == []  # the PNG is no change
            assert watcher.batches == 0
        finally:
            watcher.stop()
        assert indexed_at(service) == before
        assert (service.store().repos()[0].index_started_at) is None


def test_a_real_change_beside_a_binary_reports_only_the_change(service, repo):
    seed(repo)
    service.index(repo.root)
    before = indexed_at(service)
    repo.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(64))
    repo.write("src/app.py", "def start_engine(speed):\n    return speed * 3\n")
    watcher = start(service)
    try:
        (result,) = watcher.results
        assert result.changed == 1 and result.paths == ("src/app.py",)
    finally:
        watcher.stop()
    assert indexed_at(service) is not None and indexed_at(service) >= (before or "")


def test_a_partial_run_that_changes_nothing_keeps_indexed_at(service, repo):
    seed(repo)
    repo.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(64))
    service.index(repo.root)
    before = indexed_at(service)
    stats = service.index(repo.root, only_paths=["src/app.py", "assets/logo.png"])
    assert stats.files_updated == 0 and indexed_at(service) == before
    assert service.store().repos()[0].index_started_at is None
    repo.write("src/app.py", "def start_engine(speed):\n    return speed * 5\n")
    service.index(repo.root, only_paths=["src/app.py"])
    assert (indexed_at(service) or "") >= (before or "")
    assert "src/app.py" in fts(service, "speed * 5")
