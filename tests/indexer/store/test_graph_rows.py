"""The code graph's rows in both stores: written with the file in one transaction, read
back by file and by import key, replaced with the file, gone with the file and with the
repository."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.models import Chunk
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import GraphRow
from ctxd.indexer.store.sqlite.store import FileRecord, Summary

NOW = "2026-11-28T00:00:00Z"


@pytest.fixture
def store(tmp_path: Path, store_url: str) -> Iterator[IndexStore]:
    with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as st:
        yield st


def put(store: IndexStore, repo_id: int, path: str, data: bytes, keys: tuple[str, ...]) -> int:
    record = FileRecord(path, 2, 1, f"h-{path}-{data!r}", "python", 1)
    return store.replace_file(repo_id, record, "x\n", [(Chunk(1, 1, "x"), f"c-{path}")], [],
                              NOW, Summary("", ""), GraphRow(data, keys))


def test_graph_rows_live_and_die_with_their_file(store, tmp_path):
    repo = store.upsert_repo(str(tmp_path / "r"), {}, NOW)
    other = store.upsert_repo(str(tmp_path / "o"), {}, NOW)
    a = put(store, repo.id, "a.py", b"\x00graph-a", ("models", "Session"))
    b = put(store, repo.id, "b.py", b"graph-b", ("util",))
    c = put(store, other.id, "c.py", b"graph-c", ("models",))
    assert store.graph_data([a, b, c, 999]) == {a: b"\x00graph-a", b: b"graph-b",
                                                c: b"graph-c"}
    assert store.graph_linked(repo.id, ["models", "nothing"]) == [a]
    assert store.graph_linked(other.id, ["models"]) == [c]
    assert store.graph_linked(repo.id, []) == []
    assert store.graph_links(repo.id, ["util", "models", "Session", "nothing"]) == [
        ("Session", a), ("models", a), ("util", b)]
    assert store.graph_links(other.id, ["models", "util"]) == [("models", c)]
    assert store.graph_links(repo.id, None) == [("Session", a), ("models", a), ("util", b)]
    assert store.graph_links(None, ["models", "util", "nothing"]) == [  # every repository's
        ("models", min(a, c)), ("models", max(a, c)), ("util", b)]
    assert store.graph_links(None, []) == []
    a2 = put(store, repo.id, "a.py", b"graph-a2", ("Session",))  # replaced whole
    assert store.graph_data([a2]) == {a2: b"graph-a2"}
    assert store.graph_linked(repo.id, ["models"]) == []
    assert store.graph_linked(repo.id, ["Session"]) == [a2]
    store.delete_files(repo.id, ["a.py"])
    assert store.graph_linked(repo.id, ["Session"]) == [] and store.graph_data([a2]) == {}
    store.remove_repo(repo.id)
    assert store.graph_data([b]) == {} and store.graph_linked(other.id, ["models"]) == [c]


def test_a_failed_write_leaves_no_graph_row(store, tmp_path):
    repo = store.upsert_repo(str(tmp_path / "r"), {}, NOW)
    with pytest.raises(RuntimeError), store.transaction():
        put(store, repo.id, "a.py", b"graph", ("k",))
        raise RuntimeError("crash")
    assert store.graph_linked(repo.id, ["k"]) == []


def test_a_full_run_backfills_the_graphs_of_files_indexed_before_it(tmp_path):
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions
    from tests.conftest import FakeEmbedder, RepoBuilder

    repo = RepoBuilder(tmp_path / "r")
    repo.write("a.py", "def f():\n    return g()\n\n\ndef g():\n    return 1\n")
    repo.write("b.py", "def broken(:\n")  # no parse: an empty graph, not a retry each run
    repo.write("notes.md", "# Notes\n")
    with Store.open(tmp_path / "index.db") as store:
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
        rid = store.repos()[0].id
        assert store.files_without_graph(rid, ["python"]) == []
        with store.transaction():  # as an index made before the graph existed
            store.db.execute("DELETE FROM graph")
            store.db.execute("DELETE FROM graph_links")
        assert [p for _i, p, _l in store.files_without_graph(rid, ["python"])] == [
            "a.py", "b.py"]
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
        assert store.files_without_graph(rid, ["python"]) == []


def test_refs_says_when_the_file_has_no_graph_yet(tmp_path):
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.sqlite.store import Store
    from ctxd.indexer.walk.walker import WalkOptions
    from ctxd.search.graph import queries
    from ctxd.search.graph.naming import name_definition
    from tests.conftest import FakeEmbedder, RepoBuilder

    repo = RepoBuilder(tmp_path / "r")
    repo.write("a.py", "def f():\n    return 1\n\n\ndef g():\n    return f()\n")
    with Store.open(tmp_path / "index.db") as store:
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
        with store.transaction():
            store.db.execute("DELETE FROM graph")
        refs = queries.references(store, name_definition(store, "f"))
        assert refs.usages == [] and "run `ctxd index`" in refs.note
