"""The embedded lexical engine reuses a ranked answer only while the index is unchanged
(issue 9, item 29): a write through the same connection or another one is seen at once."""

from __future__ import annotations

import threading
from pathlib import Path

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lexical.query import parse
from tests.conftest import FakeEmbedder, RepoBuilder


def paths(store: Store, query: str) -> list[str]:
    return [f.path for f in EmbeddedLexical(store).search(query, context_lines=0).files]


def test_cached_answers_follow_writes_from_this_and_other_connections(tmp_path: Path):
    repo = RepoBuilder(tmp_path / "repo")
    repo.write("a.py", "def quokka():\n    return 1\n")
    db = tmp_path / "index.db"
    store = Store.open(db)
    try:
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions(), embed=False)
        assert paths(store, "quokka") == ["a.py"]
        assert paths(store, "quokka") == ["a.py"]  # served again (same generation)
        repo.write("b.py", "QUOKKA = quokka()\n")
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions(), embed=False)
        assert set(paths(store, "quokka")) == {"a.py", "b.py"}

        def write_elsewhere() -> None:  # another connection, as the watcher's thread
            other = Store.open(db)
            try:
                repo.remove("a.py")
                Indexer(other, FakeEmbedder()).index(repo.root, WalkOptions(), embed=False)
            finally:
                other.close()

        t = threading.Thread(target=write_elsewhere)
        t.start()
        t.join(timeout=60)
        assert paths(store, "quokka") == ["b.py"]
    finally:
        store.close()


def test_the_text_generation_moves_with_text_not_with_embeddings(tmp_path: Path):
    repo = RepoBuilder(tmp_path / "repo")
    repo.write("a.py", "def quokka():\n    return 1\n")
    store = Store.open(tmp_path / "index.db")
    try:
        indexer = Indexer(store, FakeEmbedder())
        indexer.index(repo.root, WalkOptions(), embed=False)
        written = store.text_generation()
        assert written > 0
        indexer.embed_pending()  # vectors only
        indexer.index(repo.root, WalkOptions())  # nothing changed
        assert store.text_generation() == written
        repo.remove("a.py")
        indexer.index(repo.root, WalkOptions())
        assert store.text_generation() > written
        removed = store.text_generation()
        repo.write("b.py", "x = 1\n")
        indexer.index(repo.root, WalkOptions())
        store.remove_repo(store.repos()[0].id)
        assert store.text_generation() > removed + 1
    finally:
        store.close()


def test_connections_share_answers_and_concurrent_askers_get_one_evaluation(tmp_path: Path):
    """Every thread has its own connection; the answer is computed once for all of them."""
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(30):
        repo.write(f"m{i}.py", f"def quokka_{i}():\n    return {i}\n")
    db = tmp_path / "index.db"
    store = Store.open(db)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions(), embed=False)
    store.close()
    barrier = threading.Barrier(6)
    answers: list[object] = []

    def ask() -> None:
        own = Store.open(db)
        try:
            barrier.wait(timeout=30)
            engine = EmbeddedLexical(own)
            result = engine.search("quokka", context_lines=0)
            assert result.file_count == 30
            answers.append(engine._ranked(parse("quokka"))[1])
        finally:
            own.close()

    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(answers) == 6
    assert all(a is answers[0] for a in answers)  # one ranked list, shared
