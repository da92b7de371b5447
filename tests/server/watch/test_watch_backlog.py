"""An edit in a small repository must not wait behind another repository's bulk
embedding (issue 9, item 15), and the watch status must tell the truth about that backlog.

Real repositories, a real SQLite index, the real embedding model (so the backlog takes
real seconds), a real inotify watcher; every wait is on the watcher's condition.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from ctxd.indexer.embedder import SentenceTransformerEmbedder
from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.mcp.budget import freshness_line, select_freshness
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher
from tests.conftest import RepoBuilder
from tests.server.mcp.test_stdio_disconnect import write_big_repo

pytestmark = pytest.mark.model

TIMEOUT = 1200.0
"""A safety net for each wait (every wait is on an event): generous for a busy machine."""
FAST = WatchOptions(debounce_ms=50, rescan_seconds=0, force_polling=False)


@pytest.mark.timeout(3600)
def test_small_repo_edit_lands_while_a_big_repo_embeds(
    tmp_path: Path, real_embedder: SentenceTransformerEmbedder
):
    settings = replace(load_settings({"home": str(tmp_path / "home")}), watch=FAST)
    service = Service(settings, embedder=real_embedder)
    big = write_big_repo(tmp_path / "big", files=60)
    small = RepoBuilder(tmp_path / "small")
    small.write("app.py", "def start_engine(speed):\n    return speed * 2\n")
    service.index(small.root)
    service.index(big, embed=False)  # an interrupted run: text written, embeddings to do
    store = service.store()
    big_id = next(r.id for r in store.repos() if r.name == "big")
    backlog = store.count_pending(big_id)
    assert backlog > 150
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2).start()
    service.watcher = watcher  # as `ctxd serve --watch` does
    try:
        assert watcher.wait_ready(TIMEOUT)

        def big_health() -> dict[str, object]:
            return dict(watcher.health()["repos"]["big"])

        assert watcher.wait_for(lambda: bool(big_health()["embedding"]), TIMEOUT)
        health = big_health()
        assert 0 < int(str(health["embedding_backlog"])) <= backlog
        small.write("app.py", "def start_engine(speed):\n    return zebracorn_turbo(speed)\n")

        def edit_indexed() -> bool:
            rows = service.store().query(
                "SELECT 1 FROM file_text JOIN files f ON f.id = file_text.rowid "
                "WHERE file_text MATCH ?", ['"zebracorn_turbo"'])
            return bool(rows)

        assert watcher.wait_for(edit_indexed, TIMEOUT)
        left = service.store().count_pending(big_id)
        assert left > 0, "the edit waited for the whole backlog"
        lexical = service.lexical("zebracorn_turbo")
        assert [f.path for f in lexical.result.files] == ["app.py"]
        # The status tells the truth: the big repository still has a backlog, and the
        # freshness every search answer carries says so.
        assert int(str(big_health()["embedding_backlog"])) > 0
        fresh = {f["repository"]: f for f in service.freshness()}
        assert fresh["big"]["embedding_backlog"] > 0
        assert fresh["small"].get("embedding_backlog", 0) <= 1  # the edit's new checkpoint
        line = freshness_line(select_freshness(service.freshness()))
        assert "checkpoints still to embed: semantic search does not see them yet" in line
        assert watcher.wait_for(lambda: watcher.idle, TIMEOUT)
        assert service.store().count_pending(big_id) == 0
        assert big_health()["embedding_backlog"] == 0
        assert service.search("zebracorn turbo engine", mode="semantic",
                             repositories=["small"]).results[0].path == "app.py"
    finally:
        watcher.stop()
        service.close()


def test_freshness_reports_the_backlog_a_watcher_in_another_process_publishes(
    tmp_path: Path, repo: RepoBuilder, fake_embedder
) -> None:
    """The daemon's watcher is not this Service's: its backlog arrives through the status
    file it publishes while it holds the watch lock (as `ctxd status` reads it)."""
    from ctxd.server.watch_state import status_path, watch_lock, write_status

    repo.write("a.py", "def a():\n    return 1\n")
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=fake_embedder)
    lock = watch_lock(service.settings)
    try:
        service.index(repo.root)
        name = repo.root.name
        lock.acquire(wait=0)  # stands for the other process's live watcher
        write_status(status_path(service.settings), {"running": True, "repos": {
            name: {"name": name, "pending": 0, "embedding_backlog": 42}}})
        row = next(r for r in service.freshness() if r["repository"] == name)
        assert row["embedding_backlog"] == 42
        lock.release()  # the watcher is gone: its file is no longer believed
        row = next(r for r in service.freshness() if r["repository"] == name)
        assert "embedding_backlog" not in row
    finally:
        lock.release()
        service.close()
