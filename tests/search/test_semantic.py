"""Semantic search over a real store (each engine: sqlite-vec, pgvector): filters, paging,
and the in-memory matrix agreeing with the store's own search through appends and
deletions."""

from __future__ import annotations

import numpy as np
import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.filters import SearchFilters
from ctxd.search.semantic import VectorMatrix, semantic_search


@pytest.fixture
def indexed(repo, isolated_env, fake_embedder, store_url):
    repo.write("net/retry.py", "def retry(call):\n    '''retry a failed network call'''\n")
    repo.write("ui/color.py", "def color(r, g, b):\n    '''closest palette colour'''\n")
    repo.write("docs/net.md", "# Network\n\nHow retry and backoff work on the network.\n")
    store = open_store(isolated_env / "index.db", StoreOptions(url=store_url))
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    yield store, repo
    store.close()


def keys(hits):
    return [(h.path, h.start_line, h.score) for h in hits]


def test_nearest_first_with_filters(indexed, fake_embedder):
    store, _ = indexed
    hits = semantic_search(store, fake_embedder, "retry network call")
    assert hits[0].path == "net/retry.py"
    assert hits[0].sources[0].value == "semantic"
    md = semantic_search(store, fake_embedder, "retry", filters=SearchFilters(language="markdown"))
    assert {h.path for h in md} == {"docs/net.md"}
    ui = semantic_search(store, fake_embedder, "retry", filters=SearchFilters(path_glob="ui/**"))
    assert {h.path for h in ui} == {"ui/color.py"}
    none = semantic_search(store, fake_embedder, "retry",
                           filters=SearchFilters(repositories=("other",)))
    assert none == []


def test_paging_is_a_partition(indexed, fake_embedder):
    store, _ = indexed
    full = semantic_search(store, fake_embedder, "retry", limit=10)
    pages = [semantic_search(store, fake_embedder, "retry", limit=1, offset=i) for i in range(3)]
    assert keys([p[0] for p in pages]) == keys(full[:3])


def test_matrix_agrees_with_sqlite_vec_across_appends_and_deletes(indexed, fake_embedder):
    store, repo = indexed
    matrix = VectorMatrix()
    q = "retry palette network colour"
    assert keys(semantic_search(store, fake_embedder, q, matrix=matrix)) == keys(
        semantic_search(store, fake_embedder, q))
    repo.write("net/more.py", "def backoff():\n    '''wait before the next network retry'''\n")
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    assert keys(semantic_search(store, fake_embedder, q, matrix=matrix)) == keys(
        semantic_search(store, fake_embedder, q))
    repo.remove("net/retry.py")
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    got = semantic_search(store, fake_embedder, q, matrix=matrix)
    assert "net/retry.py" not in {h.path for h in got}
    assert keys(got) == keys(semantic_search(store, fake_embedder, q))


def test_matrix_never_holds_a_vector_twice_when_a_writer_appends_during_refresh(
    indexed, fake_embedder, monkeypatch
):
    """A writer appending between the state read and the row read must not make the next
    refresh load those rows again."""
    store, repo = indexed
    matrix = VectorMatrix()
    real_state = store.vector_state
    stale = real_state()
    repo.write("net/late.py", "def late():\n    '''arrives while the matrix loads'''\n")
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    monkeypatch.setattr(store, "vector_state", lambda: stale)  # read before the append
    matrix.refresh(store)
    monkeypatch.setattr(store, "vector_state", real_state)
    matrix.refresh(store)
    ids = [rowid for rowid, _d in matrix.knn(store, [1.0] + [0.0] * 63, 100)]
    assert len(ids) == len(set(ids)) == real_state()[0]


class NearlyUnitEmbedder:
    """FakeEmbedder's vectors scaled off unit length by a few parts in a thousand, as a
    bf16 model's are (norms 0.998-1.003 measured on all-MiniLM-L6-v2 in bf16)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.dimension, self.max_tokens = inner.name, inner.dimension, inner.max_tokens

    def embed(self, texts):
        out = self.inner.embed(texts)
        scale = 1.0 + 0.003 * ((np.arange(len(texts)) % 3) - 1)
        return (out * scale[:, None]).astype(np.float32)

    def count_tokens(self, texts):
        return self.inner.count_tokens(texts)


def test_matrix_scores_like_sqlite_vec_when_vectors_are_not_exactly_unit_length(
        repo, isolated_env, fake_embedder, store_url):
    embedder = NearlyUnitEmbedder(fake_embedder)
    for i in range(12):
        repo.write(f"m{i}.py", f"def f{i}():\n    '''retry {'network ' * (i % 4)}colour {i}'''\n")
    store = open_store(isolated_env / "index.db", StoreOptions(url=store_url))
    try:
        Indexer(store, embedder).index(repo.root, WalkOptions())
        q = "retry network colour"
        assert keys(semantic_search(store, embedder, q, matrix=VectorMatrix(), limit=12)) == keys(
            semantic_search(store, embedder, q, limit=12))
    finally:
        store.close()


def test_an_unfiltered_page_asks_the_index_for_its_own_neighbours_only(indexed, fake_embedder):
    """Without a filter every neighbour carries a checkpoint: the first round asks for the
    page's `limit`, not 4x more (pgvector's HNSW paid 160-200 ms for hybrid's 400 at 1M);
    a vector whose checkpoints are gone (until its collection) takes a second round."""
    from ctxd.search.semantic import knn, rank_by_vector

    store, repo = indexed
    asked: list[int] = []

    def counted(st, vector, k):  # the store's own search, its k recorded
        asked.append(k)
        return knn(st, vector, k)

    vector = fake_embedder.embed(["retry network call"])[0].tolist()
    deep = rank_by_vector(store, vector, filters=SearchFilters(), limit=50)
    page = rank_by_vector(store, vector, filters=SearchFilters(), limit=2, knn_fn=counted)
    assert keys(page) == keys(deep[:2]) and asked == [2]
    asked.clear()
    rank_by_vector(store, vector, filters=SearchFilters(language="python"), limit=2,
                   knn_fn=counted)
    assert asked[0] == 50  # a filter still asks for more than the page at first
    # The nearest file goes; its vector stays until collected: the page is still full.
    (repo.root / "net/retry.py").unlink()
    Indexer(store, fake_embedder).index(repo.root, WalkOptions())
    gone = {(h.path, h.start_line) for h in deep if h.path == "net/retry.py"}
    assert gone
    asked.clear()
    page = rank_by_vector(store, vector, filters=SearchFilters(), limit=2, knn_fn=counted)
    assert len(page) == 2 and not gone & {(h.path, h.start_line) for h in page}
    assert keys(page) == keys([h for h in deep if h.path != "net/retry.py"][:2])
