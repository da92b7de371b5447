"""The embedded lexical engine reuses a ranked answer only while the index is unchanged
(issue 9, item 29): a write through the same connection or another one is seen at once."""

from __future__ import annotations

import threading
from pathlib import Path

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store import Store
from ctxd.indexer.walker import WalkOptions
from ctxd.search.lexical import EmbeddedLexical
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
