"""The graph helper process (`indexer.graph.worker`): the rows it makes are the rows made
in-process, a dead helper costs nothing but the helper, and a full run that hands its
graphs to it stores the same graphs as one that does not."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from ctxd.indexer import pipeline
from ctxd.indexer.checkpoints import _graph_row
from ctxd.indexer.chunk.syntax import ParsedSource, parse_source
from ctxd.indexer.graph import FileGraph, decode
from ctxd.indexer.graph.worker import (
    MAX_BEHIND,
    GraphWorker,
    Pending,
    Row,
    close_all,
    cores,
    job_of,
    row_of,
    shared_worker,
)
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions

FILES = {
    "python": "from a import b\n\nclass C(b.Base):\n    def f(self, s: 'Session'):\n"
              "        x = Session()\n        return x.get(self.url).json()\n",
    "typescript": "import { Observable } from './o';\nexport class A extends B {\n"
                  "  run(): void { this.x.pipe(map((v) => v.y)).subscribe(); }\n}\n",
    "go": "package p\n\nimport \"fmt\"\n\nfunc (s *S) Run() { fmt.Println(s.cfg.Name) }\n",
    "rust": "use std::fmt;\nfn main() { let v = Vec::new(); v.iter().map(|x| x.len()); }\n",
}


def parsed(language: str, text: str) -> ParsedSource:
    got = parse_source(language, text)
    assert got is not None
    return got


def in_process(language: str, text: str) -> tuple[bytes, tuple[str, ...]]:
    row = _graph_row("pkg/mod.py", language, parsed(language, text))
    return row.data, row.keys


@pytest.fixture(scope="module")
def worker() -> Iterator[GraphWorker]:
    w = GraphWorker()
    assert w.wait_ready(60), "the graph helper did not start"
    yield w
    w.close()


def test_the_helper_makes_the_rows_made_in_process(worker: GraphWorker) -> None:
    pending = {lang: worker.submit(lang, parsed(lang, text), "pkg/mod.py")
               for lang, text in FILES.items()}
    for lang, text in FILES.items():
        got = pending[lang]
        assert got is not None
        data, keys = got.row()
        want = in_process(lang, text)
        assert decode(data) == decode(want[0]) and keys == want[1]
        assert (data, keys) == row_of(*job_of(lang, parsed(lang, text), "pkg/mod.py"))


def test_a_helper_far_behind_leaves_the_next_files_to_the_pipeline(
        worker: GraphWorker) -> None:
    job = parsed("python", FILES["python"])
    os.kill(worker._proc.pid, signal.SIGSTOP)  # a helper that gets no CPU
    try:
        got = [worker.submit("python", job, "pkg/mod.py") for _ in range(MAX_BEHIND + 2)]
    finally:
        os.kill(worker._proc.pid, signal.SIGCONT)
    assert all(g is not None for g in got[:MAX_BEHIND])
    assert got[MAX_BEHIND:] == [None, None]  # made in-process instead of waited for
    want = row_of(*job_of("python", job, "pkg/mod.py"))
    assert all(g.row() == want for g in got[:MAX_BEHIND] if g is not None)


def test_a_dead_helper_leaves_the_graphs_to_the_pipeline() -> None:
    w = GraphWorker()
    assert w.wait_ready(60)
    w._proc.kill()
    w._reader.join(30)  # its answers end with it
    assert not w.ready
    with pytest.raises(ChildProcessError):  # reaped at once, no zombie until close()
        os.waitpid(w._proc.pid, os.WNOHANG)
    job = parsed("python", FILES["python"])
    assert w.submit("python", job, "pkg/mod.py") is None  # made in-process
    w.close()
    assert w._proc.returncode is not None


def test_a_job_the_helper_never_answers_is_made_in_process() -> None:
    w = GraphWorker()
    assert w.wait_ready(60)
    job = parsed("python", FILES["python"])
    got = w.submit("python", job, "pkg/mod.py")
    assert got is not None
    w._proc.kill()  # before or after it answers: either way the row is the same
    assert got.row() == row_of(*job_of("python", job, "pkg/mod.py"))
    w.close()


ONE_CORE = pytest.mark.skipif(cores() < 2, reason="one core: no shared graph helper")


@ONE_CORE
@pytest.mark.parametrize("text_first", [True, False], ids=["text-first", "chunk-as-walked"])
def test_a_full_run_with_the_helper_stores_the_same_graphs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_embedder,
        text_first: bool) -> None:
    """Both of phase 1's ways: chunking after the walk (SQLite), and chunking each file as
    the walk reads it (a store without `TextFirst`, PostgreSQL's way)."""
    root = tmp_path / "repo"
    for k in range(6):
        for lang, ext in (("python", "py"), ("typescript", "ts"), ("go", "go")):
            (root / f"m{k}").mkdir(parents=True, exist_ok=True)
            (root / f"m{k}" / f"f.{ext}").write_text(FILES[lang].replace("run", f"run{k}"))
    monkeypatch.setattr(pipeline, "GRAPH_HELPER_FILES", 4)  # a helper for this small run
    close_all()  # a fresh helper: its jobs are this run's
    helper = shared_worker()
    assert helper is not None and helper.wait_ready(60)  # ready before the chunking
    graphs = {}
    for side in ("helper", "in-process"):
        if side == "in-process":
            close_all()
            monkeypatch.setattr(pipeline, "shared_worker", lambda: None)
        store = Store.open(tmp_path / f"{side}.db")
        try:
            Indexer(store, fake_embedder, text_first=text_first).index(root, WalkOptions())
            if side == "helper":
                assert helper._next > 0  # graphs went to the helper (the rest: here)
            graphs[side] = {
                path: (decode(data), keys) for path, data, keys in store.query(
                    "SELECT f.path, g.data, (SELECT group_concat(key, ',') FROM "
                    "(SELECT key FROM graph_links l WHERE l.file_id = g.file_id ORDER BY key))"
                    " FROM graph g JOIN files f ON f.id = g.file_id")}
        finally:
            store.close()
    close_all()
    assert len(graphs["helper"]) == 18
    assert graphs["helper"] == graphs["in-process"]


@ONE_CORE
def test_a_forked_childs_copy_of_the_helper_is_left_alone() -> None:
    """A forked process inherits its parent's helper object but none of its threads: it
    must not use it, and starts its own."""
    close_all()
    inherited = shared_worker()
    assert inherited is not None and inherited.wait_ready(60)
    inherited._owner = -1  # what the child sees: a helper of another process
    try:
        assert not inherited.ready
        assert inherited.submit("python", parsed("python", FILES["python"]),
                                        "pkg/mod.py") is None
        own = shared_worker()
        assert own is not None and own is not inherited and own.wait_ready(60)
        close_all()
        assert own._proc.returncode is not None
    finally:
        inherited._owner = os.getpid()
        inherited.close()


def stored_graphs(store: IndexStore, root: Path) -> dict[str, tuple[object, list[str]]]:
    """Path -> (decoded graph, its link keys) of a repository, through the store's API."""
    names = store.repo_ids()
    repo_id = names.get(root.name, names.get(str(root.resolve()), -1))
    assert repo_id >= 0, names
    ids = {f.id: path for path, f in store.stored_files(repo_id).items()}
    keys: dict[int, list[str]] = {}
    for key, file_id in store.graph_links(repo_id, None):
        keys.setdefault(file_id, []).append(key)
    return {ids[i]: (decode(data), sorted(keys.get(i, [])))
            for i, data in store.graph_data(list(ids)).items()}


@ONE_CORE
def test_a_postgresql_run_with_the_helper_stores_the_same_graphs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_embedder, pg_url: str) -> None:
    """PostgreSQL chunks each file as the walk reads it: the helper takes over from the
    `GRAPH_HELPER_FILES`th file; two copies of one tree, with and without it."""
    roots = [tmp_path / "with", tmp_path / "without"]
    for root in roots:
        for k in range(6):
            for lang, ext in (("python", "py"), ("typescript", "ts"), ("go", "go")):
                (root / f"m{k}").mkdir(parents=True, exist_ok=True)
                (root / f"m{k}" / f"f.{ext}").write_text(FILES[lang].replace("run", f"r{k}"))
    monkeypatch.setattr(pipeline, "GRAPH_HELPER_FILES", 4)
    close_all()
    helper = shared_worker()
    assert helper is not None and helper.wait_ready(60)
    with open_store(tmp_path / "index.db", StoreOptions(url=pg_url)) as store:
        Indexer(store, fake_embedder).index(roots[0], WalkOptions())
        assert helper._next > 0
        close_all()
        monkeypatch.setattr(pipeline, "shared_worker", lambda: None)
        Indexer(store, fake_embedder).index(roots[1], WalkOptions())
        with_helper, without = (stored_graphs(store, r) for r in roots)
    assert len(with_helper) == 18 and with_helper == without


def test_a_graph_that_fails_everywhere_is_an_empty_graph_not_a_lost_batch() -> None:
    """The row is taken when the file's batch is written: a graph that fails in the helper
    and again in-process gives the file an empty graph (as `graph_of` does in-process)."""
    failed: Future[Row] = Future()
    failed.set_exception(RuntimeError("the helper said: TypeError"))
    data, keys = Pending(failed, ("klingon", [], b"x")).row()  # no grammar: fails here too
    assert decode(data) == FileGraph("klingon") and keys == ()
