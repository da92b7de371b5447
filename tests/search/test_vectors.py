"""The vector index seam (`search.vectors`) over a real store: the exact matrix equals
sqlite-vec to the last bit, the int8 pass finds the exact neighbours on a fixed seed
(recall asserted above a floor), appends and deletions reach the matrices, and float16
rows stay within their stated error."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from ctxd.indexer.store.sqlite.store import Store, serialize_vector
from ctxd.search.vectors import (
    ExactMatrix,
    Int8Matrix,
    StoreIndex,
    VectorIndex,
    dots,
)
from tests.vector_data import clustered_unit_vectors, queries_near

N = 40_000


@pytest.fixture(scope="module")
def vectors() -> np.ndarray:
    return clustered_unit_vectors(N, topics=400, seed=18)


@pytest.fixture(scope="module")
def filled(tmp_path_factory, vectors):
    """A closed store holding `vectors`, written once for the module."""
    path = tmp_path_factory.mktemp("vectors") / "v.db"
    s = Store.open(path)
    s.ensure_model("synthetic", vectors.shape[1])
    add(s, vectors, 0)
    s.close()
    return path


@pytest.fixture
def store(tmp_path, filled):
    """This test's own store with the N vectors (a copy of `filled`: tests may write)."""
    path = tmp_path / "v.db"
    path.touch(mode=0o600)
    path.write_bytes(filled.read_bytes())
    s = Store.open(path)
    yield s
    s.close()


def add(store: Store, rows: np.ndarray, first: int) -> None:
    store.add_embeddings([(f"h{first + i}", serialize_vector(v.tolist()))
                          for i, v in enumerate(rows)])


def test_every_index_is_a_vector_index():
    indexes: list[VectorIndex] = [StoreIndex(), ExactMatrix(), Int8Matrix()]
    assert all(callable(i.knn) for i in indexes)


def test_exact_matrix_equals_sqlite_vec(store, vectors):
    matrix = ExactMatrix()
    for q in queries_near(vectors, 5, seed=3):
        assert matrix.knn(store, q.tolist(), 20) == StoreIndex().knn(store, q.tolist(), 20)
    assert len(matrix) == N


def test_the_matrix_ranks_through_the_models_thread_pool_as_sqlite_vec_does(store, vectors):
    """With torch loaded (a daemon: the model's), the matrix's product runs in torch's
    thread pool, not in numpy's OpenBLAS one (two pools on two cores slowed the next
    embedding ~20x); the ranking stays sqlite-vec's, and `dots` numpy's products."""
    import torch  # noqa: F401  (loaded, as in a daemon)

    rows = vectors[:500].copy()
    v = vectors[7].copy()
    assert np.allclose(dots(rows, v), rows @ v, atol=1e-5)
    frozen = rows.copy()
    frozen.flags.writeable = False  # torch.from_numpy would warn: numpy takes it
    assert np.array_equal(dots(frozen, v), frozen @ v)
    half = rows.astype(np.float16)
    assert np.array_equal(dots(half, v), (half @ v.astype(np.float16)).astype(np.float32))
    assert dots(rows, v).dtype == np.float32
    matrix = ExactMatrix()
    within = np.arange(1, N + 1, 3, dtype=np.int64)
    allowed = set(within.tolist())
    for q in queries_near(vectors, 5, seed=4):
        assert "torch" in sys.modules
        assert matrix.knn(store, q.tolist(), 20) == StoreIndex().knn(store, q.tolist(), 20)
        assert matrix.knn_within(store, q.tolist(), 10, within) == [
            (i, d) for i, d in StoreIndex().knn(store, q.tolist(), 200) if i in allowed][:10]


@pytest.mark.parametrize("make", [ExactMatrix, lambda: Int8Matrix(rerank=200, exact_below=0)])
def test_appends_and_deletions_reach_the_matrix(store, vectors, make):
    matrix = make()
    target = -vectors[7]  # far from every stored row: only its own row can find it
    assert matrix.knn(store, target.tolist(), 1)[0][1] > 1.0
    add(store, target[None, :], N)
    nearest = matrix.knn(store, target.tolist(), 1)
    assert nearest[0][1] == pytest.approx(0.0, abs=1e-3)
    # No checkpoint carries these hashes: every vector is an orphan.
    store.gc_embeddings()
    assert matrix.knn(store, target.tolist(), 1) == []


def test_float16_rows_stay_within_their_error(store, vectors):
    compact, full = ExactMatrix(np.float16), ExactMatrix()
    q = queries_near(vectors, 1, seed=6)[0].tolist()
    truth = dict(full.knn(store, q, 50))
    got = compact.knn(store, q, 50)
    assert len({i for i, _ in got} & set(truth)) >= 48
    assert all(abs(d - truth[i]) < 1e-3 for i, d in got if i in truth)
    assert compact.nbytes < 0.6 * full.nbytes


def test_int8_recall_against_exact_on_a_fixed_seed(store, vectors):
    """int8 coarse pass + float16 re-score of 1-2% of 40,000 rows: recall@10 and @100
    against the exact matrix, asserted above a floor; distances within float16's error.
    (On real MiniLM vectors of eval-dev the same pass measured 0.999: docs/BENCHMARKS.md.)"""
    exact = ExactMatrix()
    int8 = Int8Matrix(rerank=400, exact_below=0)
    recall10, recall100 = [], []
    for q in queries_near(vectors, 40, seed=4).tolist():
        truth = exact.knn(store, q, 100)
        got = int8.knn(store, q, 100)
        recall100.append(len({i for i, _ in got} & {i for i, _ in truth}) / 100)
        top10 = int8.knn(store, q, 10)
        recall10.append(len({i for i, _ in top10} & {i for i, _ in truth[:10]}) / 10)
        same = dict(truth)
        assert all(abs(d - same[i]) < 1e-3 for i, d in got if i in same)
    assert int8.coarse
    assert np.mean(recall10) >= 0.99, np.mean(recall10)
    assert np.mean(recall100) >= 0.97, np.mean(recall100)


def test_int8_below_the_threshold_is_exact_and_switches_above_it(store, vectors):
    q = queries_near(vectors, 1, seed=5)[0].tolist()
    small = Int8Matrix(exact_below=N + 1)
    assert small.knn(store, q, 50) == StoreIndex().knn(store, q, 50)
    assert not small.coarse
    add(store, vectors[:1] * -1, N)  # the index grows past the threshold: reloaded compact
    got = small.knn(store, q, 50)
    assert small.coarse and len(small) == N + 1
    truth = dict(ExactMatrix().knn(store, q, 50))
    assert len({i for i, _ in got} & set(truth)) >= 49


def test_appends_and_deletions_reach_the_int8_rows(store, vectors):
    int8 = Int8Matrix(rerank=200, exact_below=0)
    target = -vectors[7]  # far from every stored row: only its own int8 row can find it
    assert int8.knn(store, target.tolist(), 1)[0][1] > 1.0
    add(store, np.stack([target, -vectors[8]]), N)
    nearest = int8.knn(store, target.tolist(), 1)
    assert nearest[0][1] == pytest.approx(0.0, abs=1e-3)
    assert len(int8) == N + 2
    store.gc_embeddings()  # no checkpoint carries these hashes: every vector is an orphan
    assert int8.knn(store, target.tolist(), 1) == []


def test_the_matrix_reads_the_vector_count_only_after_a_commit(store, vectors, tmp_path):
    """A refresh on an unchanged connection costs one PRAGMA, not a count of every vector;
    a commit by another connection is still seen by the next query."""
    matrix = Int8Matrix(exact_below=0)
    q = queries_near(vectors, 1, seed=9)[0].tolist()
    matrix.knn(store, q, 5)
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    matrix.knn(store, q, 5)
    assert not [s for s in statements if "count(*)" in s]
    other = Store.open(store.path)
    target = -vectors[11]
    add(other, target[None, :], N)
    other.close()
    assert matrix.knn(store, target.tolist(), 1)[0][1] == pytest.approx(0.0, abs=1e-3)
    assert [s for s in statements if "count(*)" in s]
    store.db.set_trace_callback(None)
