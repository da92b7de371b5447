"""Nearest-neighbour search over the checkpoint vectors, behind one small interface.

`VectorIndex` is what semantic search asks: `knn(store, vector, k)` -> (embedding rowid,
L2 distance) of the k nearest vectors, nearest first. Three implementations:

- `StoreIndex` (`knn`): the store's own search, whatever its engine
  (`IndexStore.nearest`: sqlite-vec's brute-force scan of the vectors on disk, or
  pgvector's HNSW index in PostgreSQL), re-ranked exactly here; nothing held in memory.
  One-shot CLI searches, and every search over a PostgreSQL store.
- `ExactMatrix`: every vector in an in-memory float32 matrix, one matrix product a query.
- `Int8Matrix` (the daemon's, `VectorMatrix`): below `exact_below` vectors the exact
  matrix; above it int8 rows for a coarse product and float16 rows for the re-score
  (its recall is in docs/BENCHMARKS.md). The service sets `exact_below` from
  `search.quantized_above`.

Every path ends in `exact_ranking`, so the distances a daemon (below `exact_below`) and
a one-shot search report are equal to the last bit for the rows both return; above it
the daemon's are those of the float16 rows (within ~1e-3). The matrices hold every vector
in memory: they are for a SQLite store, whose vectors are this machine's; over a shared
PostgreSQL store the service asks the database (`StoreIndex`). Reads the store only.
"""

from __future__ import annotations

import sys
import threading
import weakref
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import IndexStore

__all__ = ["ExactMatrix", "Int8Matrix", "StoreIndex", "VectorIndex", "VectorMatrix",
           "exact_ranking", "int8_nearest", "knn", "nearest_held"]


class VectorIndex(Protocol):
    """Anything that answers k-nearest-neighbour queries over the store's vectors."""

    def knn(self, store: IndexStore, vector: list[float], k: int) -> list[tuple[int, float]]:
        """(embedding rowid, L2 distance) of the k nearest vectors, nearest first
        (ties by rowid)."""
        ...


def exact_ranking(
    ids: npt.NDArray[np.int64], rows: npt.NDArray[np.floating], vector: npt.NDArray[np.float32],
    k: int | None = None,
) -> list[tuple[int, float]]:
    """(rowid, L2 distance) of the given candidate vectors, nearest first (ties by rowid);
    the first `k` only when given.

    Every neighbour source finishes here, so a daemon (matrix) and a one-shot search
    (sqlite-vec) give the same distances to the last bit: each row's distance depends on
    that row and the query only.
    """
    diff = rows.astype(np.float32, copy=False) - vector
    dist = np.sqrt((diff * diff).sum(axis=1))
    if k is not None and k < len(ids):
        keep = np.flatnonzero(dist <= np.partition(dist, k - 1)[k - 1])  # ties at the cut stay
        ids, dist = ids[keep], dist[keep]
    order = np.lexsort((ids, dist))[:k]
    return [(int(ids[i]), float(dist[i])) for i in order]


def knn(store: IndexStore, vector: list[float], k: int) -> list[tuple[int, float]]:
    """(embedding rowid, L2 distance) of the k nearest vectors, by the store's own search
    (`IndexStore.nearest`: sqlite-vec's scan, pgvector's HNSW index), scored by
    `exact_ranking` like the matrix's."""
    ids, mat = store.nearest(vector, k)
    if not len(ids):
        return []
    return exact_ranking(ids, mat, np.asarray(vector, dtype=np.float32), k)


class StoreIndex:
    """The vectors in the store, searched by its engine per query (no memory held)."""

    knn = staticmethod(knn)
    """`semantic.knn` itself, so `rank_by_vector` knows it (its filtered scan past the
    store's largest k)."""


class ExactMatrix:
    """Every vector in memory, for long-lived processes (the daemon, batch search).

    sqlite-vec's KNN is a brute-force scan (docs/ARCHITECTURE.md, "Vector search"); a
    float32 matrix product over the same rows is several times faster (docs/BENCHMARKS.md,
    "Semantic, hybrid and symbol latency at scale"). `knn` refreshes the matrix from the
    store first: rows past the largest rowid it holds are appended (into spare capacity,
    so an append never copies the whole matrix); if vectors were deleted since (the
    store's generation moved), it reloads. Loading streams the rows in batches into one
    preallocated array: the peak is the matrix itself, not a copy of every blob.

    `dtype=np.float16` halves the memory; distances are then those of the float16 rows
    (within ~1e-3 of sqlite-vec's), no longer equal to the last bit.
    """

    def __init__(self, dtype: type[np.floating] = np.float32) -> None:
        self._dtype = np.dtype(dtype)
        self._ids = np.empty(0, dtype=np.int64)
        self._rows: npt.NDArray[np.floating] = np.empty((0, 0), dtype=self._dtype)
        self._sq = np.empty(0, dtype=np.float32)
        """Squared norms of the rows: stored vectors are only nearly unit length (a bf16
        model), so distances are computed exactly, as sqlite-vec computes them."""
        self._n = 0
        """Rows in use; the arrays' capacity may be larger."""
        self._top = 0
        """Largest rowid held (taken from the rows actually loaded, never from a count
        read earlier: a writer may append between the two reads)."""
        self._generation: int | None = None
        self._ascending = True
        """Whether the rowids held are in increasing order (rows are loaded and appended in
        rowid order, so always on SQLite): `knn_within` then finds rows by binary search."""
        self._lock = threading.Lock()
        self._seen: weakref.WeakKeyDictionary[IndexStore, tuple[int, int]] = (
            weakref.WeakKeyDictionary())
        """Each connection's `Store.generation()` when it last refreshed: while it stays,
        nothing was committed, and the vector count (a b-tree count: ~10 ms at 1M
        vectors) need not be read again."""

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        """Memory held by the matrix (capacity included)."""
        return int(self._ids.nbytes + self._rows.nbytes + self._sq.nbytes)

    def refresh(self, store: IndexStore) -> None:
        seen = store.generation()
        with self._lock:
            if self._seen.get(store) == seen:
                return
        count, top, generation = store.vector_state()
        self._fit(count)
        with self._lock:
            if generation != self._generation or top > self._top:
                appending = generation == self._generation and self._n > 0
                if not appending:
                    self._reset(count)
                for ids, mat in store.vector_batches(self._top if appending else 0):
                    self._append(ids, mat.astype(self._dtype, copy=False))
                self._generation = generation
            self._seen[store] = seen

    def _fit(self, count: int) -> None:
        """Choose the form of the rows for `count` vectors (a hook for subclasses)."""

    def _reset(self, capacity: int) -> None:
        self._n = self._top = 0
        self._ascending = True
        self._ids = np.empty(capacity, dtype=np.int64)
        self._rows = np.empty((capacity, 0), dtype=self._dtype)
        self._sq = np.empty(capacity, dtype=np.float32)

    def _grow(self, need: int, dim: int) -> None:
        """Capacity for `need` rows of `dim`; new arrays (readers keep their views)."""
        cap = len(self._ids)
        if need <= cap and self._rows.shape[1] == dim:
            return
        cap = max(need, cap + cap // 4, 1024) if need > cap else cap
        ids = np.empty(cap, dtype=np.int64)
        rows = np.empty((cap, dim), dtype=self._dtype)
        sq = np.empty(cap, dtype=np.float32)
        n = self._n
        ids[:n], sq[:n] = self._ids[:n], self._sq[:n]
        if n:
            rows[:n] = self._rows[:n]
        self._ids, self._rows, self._sq = ids, rows, sq

    def _append(self, ids: npt.NDArray[np.int64], mat: npt.NDArray[np.floating]) -> None:
        if not len(ids):
            return
        n, m = self._n, len(ids)
        self._ascending = self._ascending and bool(
            (n == 0 or ids[0] > self._ids[n - 1]) and (m < 2 or np.all(ids[1:] > ids[:-1])))
        self._grow(n + m, mat.shape[1])
        self._ids[n:n + m] = ids
        self._rows[n:n + m] = mat
        exact = mat.astype(np.float32, copy=False)
        self._sq[n:n + m] = np.einsum("ij,ij->i", exact, exact)
        self._n = n + m
        self._top = max(self._top, int(ids.max()))

    def _snapshot(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.floating],
                                 npt.NDArray[np.float32]]:
        with self._lock:
            n = self._n
            return self._ids[:n], self._rows[:n], self._sq[:n]

    def knn(self, store: IndexStore, vector: list[float], k: int) -> list[tuple[int, float]]:
        """(rowid, L2 distance) of the k nearest vectors, like `knn`."""
        self.refresh(store)
        ids, rows, sq = self._snapshot()
        return _exact_knn(ids, rows, sq, vector, k)

    def knn_within(self, store: IndexStore, vector: list[float], k: int,
                   within: npt.NDArray[np.int64]) -> list[tuple[int, float]]:
        """(rowid, L2 distance) of the k nearest vectors among those whose rowid is in
        `within` (sorted; rowids the matrix lacks are ignored): the filter of a scoped
        search applied before the ranking (`search.scoped`), so its cost is that of an
        unscoped search at most, and less the fewer rows pass."""
        self.refresh(store)
        with self._lock:
            n, ascending = self._n, self._ascending
            ids, rows, sq = self._ids[:n], self._rows[:n], self._sq[:n]
        return _exact_knn_at(ids, rows, sq, vector, k, held_rows(ids, within, ascending))


def _exact_knn(
    ids: npt.NDArray[np.int64], rows: npt.NDArray[np.floating], sq: npt.NDArray[np.float32],
    vector: list[float], k: int,
) -> list[tuple[int, float]]:
    """The k nearest of one snapshot of a matrix (`ExactMatrix.knn`)."""
    if not len(ids) or k <= 0:
        return []
    v = np.asarray(vector, dtype=np.float32)
    # |r - v|^2 = |r|^2 + |v|^2 - 2 r.v (one matrix product; exact for any norms)
    d2 = sq - 2.0 * dots(rows, v) + float(v @ v)
    k = min(k, len(ids))
    top = np.argpartition(d2, k - 1)[:k]
    return exact_ranking(ids[top], rows[top], v)


def dots(rows: npt.NDArray[np.floating], v: npt.NDArray[np.float32]
         ) -> npt.NDArray[np.float32]:
    """Each row's dot product with `v`, as float32: by torch where this process has loaded
    it (the model's), else by numpy. Both run on two threads of their own pools, and
    two pools on two cores take turns badly: after numpy's OpenBLAS product its threads
    spin, and the next query's embedding (torch's OpenMP threads) waited on them, 1 ms an
    operation instead of 0.05: hybrid questions on the eval-dev index took 100 ms, not
    12 (docs/BENCHMARKS.md). One pool, torch's, does both."""
    torch = sys.modules.get("torch")
    if torch is not None and getattr(getattr(torch, "__spec__", None), "_initializing", False):
        torch = None  # another thread is importing it (the watcher loading the model): numpy
    if torch is None or rows.dtype != np.float32 or not rows.flags.writeable:
        return (rows @ v.astype(rows.dtype)).astype(np.float32, copy=False)
    with torch.inference_mode():
        out: npt.NDArray[np.float32] = torch.mv(torch.from_numpy(rows),
                                                torch.from_numpy(v)).numpy()
    return out


def nearest_held(
    ids: npt.NDArray[np.int64], rows: npt.NDArray[np.floating], sq: npt.NDArray[np.float32],
    vector: list[float], k: int,
) -> list[tuple[int, float]]:
    """(id, L2 distance) of the k nearest of rows held in memory (`sq`: their squared
    norms), nearest first: one matrix product, then `exact_ranking` of the k found, as
    `ExactMatrix.knn` does (a small scope's vectors kept by `search.scoped`)."""
    return _exact_knn(ids, rows, sq, vector, k)


def held_rows(held: npt.NDArray[np.int64], within: npt.NDArray[np.int64],
              ascending: bool) -> npt.NDArray[np.intp]:
    """Positions (ascending) in `held` of the rowids of `within` (sorted) that it holds."""
    if not len(held) or not len(within):
        return np.empty(0, dtype=np.intp)
    if not ascending:
        return np.flatnonzero(np.isin(held, within))
    pos = np.searchsorted(held, within)
    inside = pos < len(held)
    pos = pos[inside]
    found: npt.NDArray[np.intp] = pos[held[pos] == within[inside]]
    return found


SUBSET_SHARE = 8
"""`knn_within` gathers the allowed rows when they are at most 1/8 of the matrix (the
product over them alone is cheaper); above that it computes every row and masks."""


def _exact_knn_at(
    ids: npt.NDArray[np.int64], rows: npt.NDArray[np.floating], sq: npt.NDArray[np.float32],
    vector: list[float], k: int, pos: npt.NDArray[np.intp],
) -> list[tuple[int, float]]:
    """`_exact_knn` over the rows at `pos` only (distances the same, row for row)."""
    if not len(pos) or k <= 0:
        return []
    v = np.asarray(vector, dtype=np.float32)
    k = min(k, len(pos))
    if len(pos) * SUBSET_SHARE <= len(ids):
        sub = rows[pos].astype(np.float32, copy=False)
        d2 = sq[pos] - 2.0 * dots(sub, v) + float(v @ v)
        top = np.argpartition(d2, k - 1)[:k]
        return exact_ranking(ids[pos][top], sub[top], v)
    d2 = np.full(len(ids), np.inf, dtype=np.float32)
    d2[pos] = (sq - 2.0 * dots(rows, v) + float(v @ v))[pos]
    top = np.argpartition(d2, k - 1)[:k]
    return exact_ranking(ids[top], rows[top], v)


class Int8Matrix(ExactMatrix):
    """The daemon's vectors for large indexes: an int8 coarse pass, a float16 re-score.

    Below `exact_below` vectors it is `ExactMatrix` (float32 rows, distances equal to
    sqlite-vec's to the last bit). From there on the rows are held twice, compactly:
    int8 with one scale per row (symmetric), and float16 for the re-score. A query
    computes every row's approximate dot product with one int8 product (torch's
    `_weight_int8pack_mm`, bfloat16 query and scales), keeps the `rerank` largest (at
    least 8 x k) and ranks those by their float16 rows with `exact_ranking`: distances
    within ~1e-3 of sqlite-vec's. At 1M 384-d vectors: 1.1 GB instead of 1.5 GB of
    float32 rows plus sign codes, and the coarse product 14.8 ms against the float32
    one's 72.2 ms (`bench/bench_int8.py`); recall against the exact product is measured
    in docs/BENCHMARKS.md (issue 18) and asserted on a fixed seed in the tests. Appends
    write the new rows' int8 form into spare capacity, like the rows themselves.
    """

    def __init__(self, *, rerank: int = 1000, exact_below: int = 200_000) -> None:
        super().__init__(np.float32)
        self.rerank = rerank
        self.exact_below = exact_below
        self._int8 = np.empty((0, 0), dtype=np.int8)
        self._scales = np.empty(0, dtype=np.float32)
        self._scales16: tuple[int, object] = (-1, None)
        """(rows, their scales as a bfloat16 tensor): made once after each load or append."""

    @property
    def coarse(self) -> bool:
        """Whether the rows are held for the int8 pass (float16) rather than exactly."""
        return self._dtype == np.float16

    @property
    def nbytes(self) -> int:
        return super().nbytes + int(self._int8.nbytes + self._scales.nbytes)

    def _fit(self, count: int) -> None:
        with self._lock:
            if (count >= self.exact_below) != self.coarse:  # crossed: reload in the other form
                self._dtype = np.dtype(np.float16 if count >= self.exact_below else np.float32)
                self._generation = None

    def _reset(self, capacity: int) -> None:
        super()._reset(capacity)
        self._int8 = np.empty((0, 0), dtype=np.int8)
        self._scales = np.empty(0, dtype=np.float32)
        self._scales16 = (-1, None)

    def _grow(self, need: int, dim: int) -> None:
        super()._grow(need, dim)
        if not self.coarse or self._int8.shape == (len(self._ids), dim):
            return
        int8 = np.empty((len(self._ids), dim), dtype=np.int8)
        scales = np.empty(len(self._ids), dtype=np.float32)
        n = self._n
        if n and self._int8.shape[1] == dim:
            int8[:n], scales[:n] = self._int8[:n], self._scales[:n]
        self._int8, self._scales = int8, scales

    def _append(self, ids: npt.NDArray[np.int64], mat: npt.NDArray[np.floating]) -> None:
        n = self._n
        super()._append(ids, mat)
        if self.coarse and self._n > n:
            exact = mat.astype(np.float32)
            scales = np.maximum(np.abs(exact).max(axis=1), 1e-12) / 127.0
            self._int8[n:self._n] = np.rint(exact / scales[:, None])
            self._scales[n:self._n] = scales
            self._scales16 = (-1, None)

    def knn(self, store: IndexStore, vector: list[float], k: int) -> list[tuple[int, float]]:
        self.refresh(store)
        with self._lock:  # one consistent view: a reload may swap every array
            n = self._n
            ids, rows, sq = self._ids[:n], self._rows[:n], self._sq[:n]
            int8, coarse = self._int8[:n], self.coarse
            if coarse and self._scales16[0] != n:
                self._scales16 = (n, bfloat16(self._scales[:n]))
            scales = self._scales16[1]
        want = max(self.rerank, 8 * k)
        if not coarse or want * 4 >= n or k <= 0:
            return _exact_knn(ids, rows, sq, vector, k)  # same snapshot: one refresh
        v = np.asarray(vector, dtype=np.float32)
        candidates = int8_nearest(int8, scales, v, want)
        return exact_ranking(ids[candidates], rows[candidates], v, k)


    def knn_within(self, store: IndexStore, vector: list[float], k: int,
                   within: npt.NDArray[np.int64]) -> list[tuple[int, float]]:
        """`ExactMatrix.knn_within`; held for the int8 pass (coarse), the allowed rows are
        ranked by their float16 rows when few (exact over them: as good as the unscoped
        search or better), else by the int8 pass over every row with the others masked
        out, then re-scored, like `knn`."""
        self.refresh(store)
        with self._lock:
            n, ascending = self._n, self._ascending
            ids, rows, sq = self._ids[:n], self._rows[:n], self._sq[:n]
            int8, coarse = self._int8[:n], self.coarse
            if coarse and self._scales16[0] != n:
                self._scales16 = (n, bfloat16(self._scales[:n]))
            scales = self._scales16[1]
        pos = held_rows(ids, within, ascending)
        want = max(self.rerank, 8 * k)
        if not coarse or k <= 0 or len(pos) * SUBSET_SHARE <= n or want * 4 >= len(pos):
            return _exact_knn_at(ids, rows, sq, vector, k, pos)
        allowed = np.zeros(n, dtype=bool)
        allowed[pos] = True
        v = np.asarray(vector, dtype=np.float32)
        candidates = int8_nearest(int8, scales, v, want, allowed)
        return exact_ranking(ids[candidates], rows[candidates], v, k)


def bfloat16(values: npt.NDArray[np.float32]) -> object:
    """`values` as a torch bfloat16 tensor (torch is imported here: only long-lived
    processes, which hold the model and so torch, get this far)."""
    import torch

    return torch.from_numpy(np.ascontiguousarray(values, dtype=np.float32)).to(torch.bfloat16)


def int8_nearest(int8: npt.NDArray[np.int8], scales: object, vector: npt.NDArray[np.float32],
                 want: int, allowed: npt.NDArray[np.bool_] | None = None
                 ) -> npt.NDArray[np.int64]:
    """Indexes of the `want` rows with the largest approximate dot product with `vector`:
    `int8[i] * scales[i]` (scales: a `bfloat16` tensor) by torch's int8 weight-only
    product, bfloat16 in and out, and torch's top-k on that output (2.5 ms against numpy
    argpartition's 6.5 ms at 1M rows, `bench/bench_int8.py`), among the `allowed` rows
    only when given. Stored vectors are unit
    length to ~1e-3, below the bfloat16 output's own rounding, so the largest dot
    products are the nearest rows;
    the caller re-scores the candidates exactly."""
    import torch

    with torch.inference_mode():
        dots = torch.ops.aten._weight_int8pack_mm(
            bfloat16(vector[None, :]), torch.from_numpy(int8), scales)[0]
        if allowed is not None:  # a scoped search: only these rows may be candidates
            dots[torch.from_numpy(~allowed)] = -torch.inf
            want = min(want, int(allowed.sum()))
        found: npt.NDArray[np.int64] = torch.topk(dots, want, sorted=False).indices.numpy()
    return found


VectorMatrix = Int8Matrix
"""The daemon's in-memory vector index."""
