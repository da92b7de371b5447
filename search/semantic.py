"""Semantic search: a question's embedding against the checkpoint vectors.

`semantic_search(store, embedder, query, filters, limit, offset)` embeds the query,
asks the vector index for the nearest distinct texts (vectors are keyed by content hash;
the store's own search, sqlite-vec or pgvector, or the daemon's matrix: `search.vectors`),
expands each to the checkpoints that carry that text, and returns `Hit`s with cosine
scores. The repository, path and language filters are applied inside the neighbour
search where the source can (`search.scoped`: a scoped search costs no more than an
unscoped one), else afterwards, widening the search until the page is full or the index
is exhausted, so a selective filter never returns an empty page by accident.

Reads the store only; knows nothing of rendering.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np

from ctxd.indexer.embedder import Embedder
from ctxd.indexer.store.protocol import NEAREST_MAX, IndexStore
from ctxd.search.filters import SearchFilters
from ctxd.search.models import Hit, MatchSource
from ctxd.search.scoped import can_prefilter, prefilter_first, ranked_within, scope_of
from ctxd.search.vectors import VectorIndex, VectorMatrix, exact_ranking, knn

__all__ = ["KnnFn", "VectorIndex", "VectorMatrix", "filtered_scan", "knn", "rank_by_vector",
           "semantic_search", "summary_hits"]


KnnFn = Callable[[IndexStore, list[float], int], list[tuple[int, float]]]
"""A `VectorIndex.knn` (`search.vectors`)."""


KNN_MAX = NEAREST_MAX
"""The store's largest k; past it, `filtered_scan` ranks the filtered rows exactly."""


def filtered_scan(
    store: IndexStore, vector: list[float], filters: SearchFilters
) -> list[tuple[int, float]]:
    """Exact distances for every vector of the checkpoints that pass the SQL filters."""
    where, params = filters.sql()
    return store.scan_nearest(vector, where, params)


def _checkpoints_for(
    store: IndexStore, rowids: list[int], filters: SearchFilters
) -> dict[int, list[tuple[object, ...]]]:
    where, params = filters.sql()
    rows = store.vector_checkpoints(rowids, where, params)
    out: dict[int, list[tuple[object, ...]]] = {}
    for row in rows:
        out.setdefault(int(row[0]), []).append(row[1:])
    return out


def semantic_search(
    store: IndexStore,
    embedder: Embedder,
    query: str,
    *,
    filters: SearchFilters | None = None,
    limit: int = 10,
    offset: int = 0,
    matrix: VectorIndex | None = None,
) -> list[Hit]:
    """The `limit` checkpoints nearest to `query` after `offset`, best first.

    Scores are cosine similarities (vectors are unit length, so cos = 1 - d^2/2).
    With `matrix`, neighbours come from the in-memory matrix instead of the store.
    """
    if not store.has_vectors():
        return []
    filters = filters or SearchFilters()
    vector = embedder.embed([query])[0].tolist()
    return rank_by_vector(store, vector, filters=filters, limit=limit, offset=offset,
                          knn_fn=matrix.knn if matrix is not None else knn)


def rank_by_vector(
    store: IndexStore,
    vector: list[float],
    *,
    filters: SearchFilters,
    limit: int,
    offset: int = 0,
    knn_fn: KnnFn = knn,
) -> list[Hit]:
    """Nearest checkpoints to an already-embedded query (see `semantic_search`).

    A search restricted by repository, language or path filters before or inside the
    nearest-neighbour search (`search.scoped`), so that it costs no more than an unscoped
    one: a broad filter (most checkpoints) after one unscoped round that fills the page.
    Otherwise (no filter, or a `knn_fn` that cannot filter) asks for 4x more neighbours
    until `want` hits pass the filters or the vector index runs out (it answered fewer
    than asked). Not a count read beforehand: a writer may add vectors between that read
    and the search (an in-memory matrix refreshes itself), and a search that stopped at
    the old count would lose filtered-in neighbours to the new vectors."""
    want = offset + limit
    path_ok = filters.path_matcher()
    restricted = bool(filters.repositories or filters.path_glob or filters.language)
    scope = scope_of(store, filters) if restricted and can_prefilter(knn_fn) else None
    if scope is None or not prefilter_first(store, scope, knn_fn):
        hits, done = _post_filtered(store, vector, filters, path_ok, want, knn_fn,
                                    rounds=1 if scope is not None else None,
                                    first_k=max(50, want * 4) if restricted else want)
        if done:
            return hits[offset:want]
    assert scope is not None
    # Pre-filtered: each neighbour carries at least one checkpoint that passes (the path
    # too when the scope's SQL holds it), so `want` neighbours fill the page unless a writer
    # removed some meanwhile, or a broad path glob is checked on the hits.
    k = want if scope.sql(store)[2] else max(50, want * 4)
    while True:
        neighbours = ranked_within(store, vector, scope, k, knn_fn)
        hits = _hits(store, neighbours, filters, path_ok)
        if len(hits) >= want or len(neighbours) < k:
            return hits[offset:want]
        k *= 4


def _post_filtered(
    store: IndexStore, vector: list[float], filters: SearchFilters,
    path_ok: Callable[[str], bool], want: int, knn_fn: KnnFn, rounds: int | None,
    first_k: int,
) -> tuple[list[Hit], bool]:
    """The neighbours of the unscoped search, filtered afterwards, from `first_k`, 4x more
    each round; (hits, whether they are final: the page is full or the index ran out). With
    `rounds`, gives up (not final) after that many. Without a filter `first_k` is `want`:
    every neighbour carries at least one checkpoint (a vector no checkpoint holds any more,
    before its collection, takes a second round), and asking for 4x more cost the HNSW
    index 160-200 ms instead of ~10 ms at 1M (docs/BENCHMARKS.md, issue 30 item 4)."""
    k = first_k
    while True:
        exhausted = False
        if k > KNN_MAX and knn_fn is knn:
            neighbours = filtered_scan(store, vector, filters)  # every filtered-in row
            exhausted = True
        else:
            neighbours = knn_fn(store, vector, k) if k else []
            exhausted = len(neighbours) < k or k == 0
        hits = _hits(store, neighbours, filters, path_ok)
        if len(hits) >= want or exhausted:
            return hits, True
        if rounds is not None:
            rounds -= 1
            if rounds <= 0:
                return hits, False
        k = max(k * 4, 50)


def _hits(store: IndexStore, neighbours: list[tuple[int, float]], filters: SearchFilters,
          path_ok: Callable[[str], bool]) -> list[Hit]:
    """The checkpoints of `neighbours` (vector id, distance) that pass the filters, in the
    neighbours' order (then by repository, path and line)."""
    rows = _checkpoints_for(store, [i for i, _d in neighbours], filters) if neighbours else {}
    hits: list[Hit] = []
    for rowid, dist in neighbours:
        score = 1.0 - dist * dist / 2.0
        for repo, path, lang, start, end, symbol, text, cid in rows.get(rowid, []):
            if not path_ok(str(path)):
                continue
            hits.append(
                Hit(
                    repository=str(repo),
                    path=str(path),
                    language=str(lang),
                    start_line=int(start),  # type: ignore[call-overload]
                    end_line=int(end),  # type: ignore[call-overload]
                    score=round(score, 4),
                    sources=(MatchSource.SEMANTIC,),
                    symbol=None if symbol is None else str(symbol),
                    snippet=str(text),
                    checkpoint=int(cid),  # type: ignore[call-overload]
                )
            )
    return hits


def summary_hits(
    store: IndexStore, vector: list[float], files: Collection[tuple[str, str]]
) -> list[Hit]:
    """How near each of `files` ((repository, path)) is to the query by its summary
    (`indexer.chunk.summary`): one file-level hit per file with an embedded summary, cosine
    score, best first. Hybrid search asks this for its candidate files only."""
    if not files or not store.has_vectors():
        return []
    paths = sorted({p for _r, p in files})
    rows = [
        row for row in store.summary_vectors(paths)
        if (str(row[0]), str(row[1])) in files
    ]
    if not rows:
        return []
    mat = np.frombuffer(b"".join(bytes(r[3]) for r in rows), dtype=np.float32).reshape(
        len(rows), -1)
    ranked = exact_ranking(np.arange(len(rows), dtype=np.int64), mat,
                           np.asarray(vector, dtype=np.float32))
    return [
        Hit(repository=str(rows[i][0]), path=str(rows[i][1]), language=str(rows[i][2]),
            start_line=1, end_line=1, score=round(1.0 - dist * dist / 2.0, 4),
            sources=(MatchSource.SEMANTIC,))
        for i, dist in ranked
    ]
