"""An edit is searchable (text, symbols, code graph) while the model is still busy with a
batch of the embedding backlog (issue 38: "after an edit, callers reflect it as soon as
the file is searchable again"): the watcher runs the model on a helper thread and applies
the edited file's phase 1 meanwhile; the batch's vectors land afterwards.

Real repositories, a real SQLite index and a real watcher. The model stands in as an
embedder that blocks in `embed` until the test lets it go (a batch that takes seconds on
a busy machine); every wait is on an event.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.watch.test_watch import FAST, TIMEOUT


class HeldEmbedder(FakeEmbedder):
    """The fake model, held inside `embed` until `go` is set (`entered` says it is)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.go = threading.Event()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.go.is_set():
            self.entered.set()
            self.go.wait(TIMEOUT)
        return super().embed(texts)


@pytest.fixture
def held() -> Iterator[HeldEmbedder]:
    emb = HeldEmbedder()
    yield emb
    emb.go.set()


def test_an_edit_lands_while_the_model_embeds_a_backlog(
    tmp_path: Path, repo: RepoBuilder, held: HeldEmbedder
) -> None:
    settings = replace(load_settings({"home": str(tmp_path / "home")}), watch=FAST)
    service = Service(settings, embedder=held)
    repo.write("engine.py", "def start_engine(speed):\n    return speed * 2\n")
    repo.write("run.py", "def main():\n    return None\n")
    for i in range(80):  # a backlog of several embedder batches
        repo.write(f"mod/m{i:02d}.py", f"def work_{i}(x):\n    return x + {i}\n")
    service.index(repo.root, embed=False)
    store = service.store()
    repo_id = next(r.id for r in store.repos())
    backlog = store.count_pending(repo_id)
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2).start()
    try:
        assert watcher.wait_ready(TIMEOUT)
        assert held.entered.wait(TIMEOUT), "the watcher never started on the backlog"
        repo.write("run.py", "from engine import start_engine\n\n\n"
                             "def main():\n    return start_engine(3)\n")

        def callers() -> list[str]:
            calls = service.calls("start_engine", repositories=[repo.root.name])
            return [e.definition.qualified_name for e in calls.edges if e.definition]

        assert watcher.wait_for(lambda: callers() == ["main"], TIMEOUT), (
            "the edit waited for the model's batch")
        assert not held.go.is_set()
        lexical = service.lexical("\"return start_engine\"")
        assert [f.path for f in lexical.result.files] == ["run.py"]
        held.go.set()
        assert watcher.wait_idle(TIMEOUT)
        assert service.store().count_pending(repo_id) == 0
        assert backlog > 0
        hits = service.search("start engine main", mode="semantic").results
        assert "run.py" in [h.path for h in hits]
    finally:
        held.go.set()
        watcher.stop()
        service.close()


def test_the_model_waits_for_another_writer_before_it_runs(
    tmp_path: Path, repo: RepoBuilder, held: HeldEmbedder
) -> None:
    """While another writer holds the index (a long `ctxd index`), the backlog's batches
    are not computed only to be thrown away at their commit: after the batch the model
    was running when the writer came, each retry waits for the lock before the model
    runs; everything is embedded once the lock is free."""
    settings = replace(load_settings({"home": str(tmp_path / "home")}), watch=FAST)
    service = Service(settings, embedder=held)
    for i in range(80):
        repo.write(f"mod/m{i:02d}.py", f"def work_{i}(x):\n    return x + {i}\n")
    service.index(repo.root, embed=False)
    repo_id = next(r.id for r in service.store().repos())
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2,
                      lock_wait_seconds=0.05).start()
    other = service.write_lock(str(repo.root))  # stands for another process's writer
    try:
        assert watcher.wait_ready(TIMEOUT)
        assert held.entered.wait(TIMEOUT)  # the model runs a batch of the backlog
        other.acquire(wait=0)
        calls = len(held.calls)
        held.go.set()  # that batch ends; its commit finds the lock held
        state = watcher._watched.repos[str(repo.root)]  # (the watcher's own record)
        retries: list[float] = []

        def retried_twice() -> bool:
            if state.retry_at and (not retries or retries[-1] != state.retry_at):
                retries.append(state.retry_at)
            return len(retries) >= 3

        assert watcher.wait_for(retried_twice, TIMEOUT)
        assert len(held.calls) == calls + 1, "the model ran while another writer held it"
        other.release()
        assert watcher.wait_idle(TIMEOUT)
        assert service.store().count_pending(repo_id) == 0
    finally:
        other.release()
        watcher.stop()
        service.close()


def test_another_writer_never_waits_for_the_model(
    tmp_path: Path, repo: RepoBuilder, held: HeldEmbedder
) -> None:
    """`ctxd index` through a daemon whose watcher embeds a backlog waited for the whole
    backlog (the pass held the write lock and yielded to the watcher's own batches only:
    more than 300 s on fastapi at load 7); the lock is now held per commit, never while
    the model runs."""
    settings = replace(load_settings({"home": str(tmp_path / "home")}), watch=FAST)
    service = Service(settings, embedder=held)
    for i in range(80):
        repo.write(f"mod/m{i:02d}.py", f"def work_{i}(x):\n    return x + {i}\n")
    service.index(repo.root, embed=False)
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2).start()
    try:
        assert watcher.wait_ready(TIMEOUT)
        assert held.entered.wait(TIMEOUT)  # the model runs a batch of the backlog
        repo.write("new.py", "def fresh():\n    return 1\n")
        stats = service.index(repo.root, embed=False, lock_wait=TIMEOUT / 3)
        assert stats.files_updated >= 1 and not held.go.is_set()
    finally:
        held.go.set()
        watcher.stop()
        service.close()
