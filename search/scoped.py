"""Scoped semantic search: the repository, language and path filters applied before or
inside the nearest-neighbour search, not after it (issue 30).

Searching one repository is the default (the CLI searches the repository it runs in, `ctxd
serve` its project). Filtering the neighbours of an unscoped search afterwards asked for
more and more neighbours until enough passed: 10-40x the unscoped time for a small
repository. Here instead:

- `Scope` (one per filter and store generation, cached: a daemon's project scope is
  computed once per index change) holds, each computed when first asked, the filter as
  SQL (repositories and language, and the files a path glob matches when they are few,
  `PATH_FILES_MAX`, else a `LIKE` on its literal tail or head, `path_like`: a superset,
  the glob still checked on each hit), the repositories' share of the checkpoints, the
  sorted ids of the vectors it lets through, and (for an engine that chooses its plan by it:
  PostgreSQL) how many checkpoints pass, counted up to the engine's `exact_rows_max`,
  and, once searched again, their vectors when they are few (`HOLD_MAX`).
- `ranked_within(store, vector, scope, k, knn_fn)`: the k nearest vectors that pass,
  nearest first, from the daemon's matrix (`VectorMatrix.knn_within`: a product over the
  allowed rows, or a masked one), or from the store's engine (`IndexStore.nearest_in`:
  sqlite-vec's scan restricted to the allowed rowids; on PostgreSQL the scope's
  vectors ranked here once kept (`Scope.vectors`: a scope searched again, read once per
  store generation), else the database ranks a small scope's rows exactly
  (`exact_rows_max`) or walks pgvector's HNSW index with the filter and an iterative
  scan).
- `prefilter_first(store, scope, knn_fn)` says whether to do so at once: always where the
  engine filters inside its index (`filtered_index_scan`), else when the repositories
  hold less than `BROAD_SHARE` of the checkpoints. For a broad filter the first
  neighbours of an unscoped search nearly all pass, and the ids would cost more to read
  than they save: `search.semantic.rank_by_vector` tries one unscoped round first, and
  filters first only if that round does not fill the page.

Reads the store only.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import NEAREST_MAX, IndexStore
from ctxd.search.vectors import exact_ranking, knn, nearest_held

if TYPE_CHECKING:
    from ctxd.search.filters import SearchFilters
    from ctxd.search.semantic import KnnFn

__all__ = ["BROAD_SHARE", "PATH_FILES_MAX", "Scope", "can_prefilter", "path_like",
           "prefilter_first", "ranked_within", "scope_of"]

BROAD_SHARE = 0.3
"""A repository filter letting through at least this share of the checkpoints is searched
unscoped first (one round of post-filtering); narrower ones are filtered first."""
PATH_FILES_MAX = 5000
"""A path glob matching at most this many files is part of the SQL filter (as file ids);
a broader one is checked on each hit instead (most neighbours pass it anyway)."""
PATH_PAGE = 8192
"""The file paths read at a time to find what a path glob matches (a broad glob stops
once more than `PATH_FILES_MAX` matched: 50,000 paths cost 40 ms on PostgreSQL)."""
_PER_STORE = 32
"""Scopes kept per store connection (one store generation)."""
HOLD_MAX = 131_072
"""The vectors the process's scopes keep in memory, all together (`Scope.vectors`): 192 MiB
of 384-d float32 rows (the SQLite daemon's matrix holds every vector: 1.1 GB at 1M); a
5% repository of a 1M-checkpoint index fits, with others."""
HOLD_PER_SEARCH = 10_000
"""A scope is read into memory once it has been searched `count / HOLD_PER_SEARCH` times
(at least twice): the read costs about as much as that many searches."""


@dataclass(slots=True)
class Scope:
    """One filter of one store generation: its SQL and what it lets through, each computed
    once, when first asked."""

    filters: SearchFilters
    _sql: tuple[str, list[object], bool] | None = None
    _share: float | None = None
    _ids: npt.NDArray[np.int64] | None = None
    _rows: tuple[int, int] | None = None
    _vectors: tuple[npt.NDArray[np.int64], npt.NDArray[np.float32],
                    npt.NDArray[np.float32]] | None = None
    _held_count: int | None = None
    _uses: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def sql(self, store: IndexStore) -> tuple[str, list[object], bool]:
        """(`AND ...` on `checkpoints c` joined with `repos r`, its parameters, whether it
        holds the path glob, so that the rows it lets through nearly all pass the glob:
        as the ids of the files it matches, or, for a broader glob, as a `LIKE` that every
        path the glob matches also matches (`path_like`). Hits are checked against the
        glob in any case; without it in the SQL most of them are to be expected to fail.)"""
        with self._lock:
            if self._sql is None:
                where, params = _repos_and_language(store, self.filters)
                glob = self.filters.path_glob
                path_inside = not glob
                if glob:
                    files = _path_files(store, self.filters)
                    like = path_like(glob) if files is None else None
                    held = (store.dialect.in_values("c.file_id", files) if files is not None
                            else None if like is None
                            else store.dialect.like_nocase("c.path", like))
                    if held is not None:
                        where, params = f"{where} AND {held[0]}", [*params, *held[1]]
                        path_inside = True
                self._sql = (where, params, path_inside)
            return self._sql

    def share(self, store: IndexStore) -> float:
        """The repositories' share of the checkpoints (1.0 without a repository filter)."""
        with self._lock:
            if self._share is None:
                self._share = 1.0
                names = self.filters.repositories
                if names:
                    held = store.checkpoints_in_repos(names)
                    total = store.checkpoint_total()
                    self._share = held / total if total else 0.0
            return self._share

    def rows(self, store: IndexStore) -> tuple[int, int]:
        """(how many checkpoints pass the filter, counted up to one more than the store's
        `exact_rows_max`; that bound), for an engine that chooses its plan by them
        (PostgreSQL); (0, 0) where the engine has no such choice (sqlite-vec)."""
        where, params, _inside = self.sql(store)
        with self._lock:
            if self._rows is None:
                cap = store.exact_rows_max()
                self._rows = (store.checkpoints_where(where, params, cap + 1) if cap > 0
                              else 0, cap)
            return self._rows

    def vectors(self, store: IndexStore, room: int = 0) -> tuple[
            npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
        """(ids, float32 rows, their squared norms) of the vectors the filter lets through,
        kept for the searches that follow, on an engine that searches in the database
        (`exact_rows_max` > 0: PostgreSQL); None while they are not kept. Each call is a
        search of this scope: the first is left to the database (a one-shot search reads
        no more than its plan does); from the second, a scope of at most `room` (at most
        `HOLD_MAX`) checkpoints, counted once, is read once it has been searched
        `count / HOLD_PER_SEARCH` times (reading 50,000 vectors costs several searches'
        time), then ranked in memory by each search (a daemon's project scope: the store's
        generation, and so the scope, lives until the next write to the index)."""
        if self.rows(store)[1] <= 0:
            return None
        where, params, _inside = self.sql(store)
        with self._lock:
            self._uses += 1
            if self._vectors is not None or self._uses < 2:
                return self._vectors
            if self._held_count is None:
                self._held_count = store.checkpoints_where(where, params, HOLD_MAX + 1)
            count = self._held_count
            if not 0 < count <= min(HOLD_MAX, room) or self._uses * HOLD_PER_SEARCH < count:
                return None
            ids, rows = store.vectors_where(where, params)
            self._vectors = (ids, rows, np.einsum("ij,ij->i", rows, rows))
            return self._vectors

    def held(self) -> int:
        """How many vectors this scope keeps (`vectors`)."""
        held = self._vectors
        return 0 if held is None else len(held[0])

    def ids(self, store: IndexStore) -> npt.NDArray[np.int64]:
        """The sorted ids of the vectors of the checkpoints that pass the filter."""
        where, params, _inside = self.sql(store)
        with self._lock:
            if self._ids is None:
                found = store.vector_ids_where(where, params)
                ids = np.fromiter(found, dtype=np.int64, count=len(found))
                ids.sort()
                self._ids = ids
            return self._ids


_SCOPES: weakref.WeakKeyDictionary[IndexStore, tuple[object, dict[SearchFilters, Scope]]] = (
    weakref.WeakKeyDictionary())
_SHARED: dict[str, tuple[object, dict[SearchFilters, Scope]]] = {}
"""The scopes of stores whose generation is the database's (`IndexStore.scope_key`:
PostgreSQL), shared by every connection of the process to that store: the daemon's
worker threads each hold one, and a scope read, or kept, by one serves them all."""
_SHARED_STORES = 4
"""Stores whose scopes `_SHARED` keeps (a process searches one or two)."""
_LOCK = threading.Lock()


def scope_of(store: IndexStore, filters: SearchFilters) -> Scope:
    """The `Scope` of `filters` on `store` as it is now (cached while the store's
    generation stays: nothing was written since)."""
    generation = store.generation()
    key = store.scope_key
    with _LOCK:
        held = _SCOPES.get(store) if key is None else _SHARED.get(key)
        if held is not None and held[0] == generation and filters in held[1]:
            return held[1][filters]
        if held is None or held[0] != generation or len(held[1]) >= _PER_STORE:
            held = (generation, {})
            if key is None:
                _SCOPES[store] = held
            else:
                _SHARED.pop(key, None)
                while len(_SHARED) >= _SHARED_STORES:  # the least recently renewed goes
                    del _SHARED[next(iter(_SHARED))]
                _SHARED[key] = held
        scope = held[1][filters] = Scope(filters)
    return scope


def _held_elsewhere(scope: Scope) -> int:
    """The vectors the process's other scopes keep (`HOLD_MAX` bounds them all)."""
    with _LOCK:
        others = [s for _g, scopes in [*_SCOPES.values(), *_SHARED.values()]
                  for s in scopes.values() if s is not scope]
    return sum(s.held() for s in others)


def _repos_and_language(store: IndexStore, filters: SearchFilters) -> tuple[str, list[object]]:
    """`SearchFilters.sql` with the repositories as their ids, read once: a planner that
    sees `c.repo_id IN (3)` uses the checkpoints' repository index for a small repository
    (PostgreSQL's, given `r.name IN (...)` through a join, scanned every checkpoint)."""
    where, params = "", list[object]()
    if filters.repositories:
        names = list(filters.repositories)
        ids = store.repo_ids_named(names)
        where = f"AND c.repo_id IN ({','.join('?' * len(ids))})" if ids else "AND 1 = 0"
        params = list(ids)
    if filters.language:
        where += " AND lower(c.language) = lower(?)"
        params.append(filters.language)
    return where, params


def _path_files(store: IndexStore, filters: SearchFilters) -> list[int] | None:
    """The ids of the files (of the filter's repositories) whose path the glob matches,
    or None when there are more than `PATH_FILES_MAX`."""
    match = filters.path_matcher()
    found: list[int] = []
    after = 0
    while True:  # a page at a time: a broad glob stops reading early
        page = store.file_paths_in(list(filters.repositories), after=after,
                                   limit=PATH_PAGE)
        for fid, path in page:
            if match(path):
                found.append(fid)
                if len(found) > PATH_FILES_MAX:
                    return None
        if len(page) < PATH_PAGE:
            return found
        after = page[-1][0]


_GLOB_META = frozenset("*?[]\\")
"""The characters that make a glob more than a literal (`indexer.walk.patterns`)."""


def path_like(glob: str) -> str | None:
    """A `LIKE` pattern (`\\` escapes; to be matched ignoring case) that every
    repo-relative path matched by `glob` also matches, or None where it would let every
    path through: the glob's literal tail (`**/*.md`, `*_test.go`: the basename, so the
    path, ends with it) and its literal head where that holds a `/` (`docs/**`, `/src/*.py`:
    then only the whole path can match, and it starts with it). A superset, so the glob
    is still checked on each hit; it rarely turns one away (another case of letters)."""
    if glob.endswith("/"):  # directories only: no file matches
        return None
    body = glob.removeprefix("/")
    cut = [i for i, ch in enumerate(body) if ch in _GLOB_META]
    if not cut:
        tail, head = body, ""
    else:
        tail = body[cut[-1] + 1:]
        head = body[:cut[0]]
        if "/" not in head and not glob.startswith("/"):
            head = ""  # the basename may be the match: nothing fixes the path's start
    if not tail and not head:
        return None
    return f"{_like_escape(head)}%{_like_escape(tail)}"


def _like_escape(text: str) -> str:
    """`text` as a `LIKE` pattern matching itself (`\\` escapes)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def can_prefilter(knn_fn: KnnFn) -> bool:
    """Whether the neighbour source can search with the filter: the store's own search,
    or a matrix with `knn_within` (another `knn_fn` is post-filtered)."""
    return knn_fn is knn or _matrix_of(knn_fn) is not None


def prefilter_first(store: IndexStore, scope: Scope, knn_fn: KnnFn) -> bool:
    """Whether to search `scope` with the filter at once, rather than after one round of
    the unscoped search (see the module docstring): where the engine filters inside its
    index, or where the scope is narrow; never where its SQL filters nothing (a path glob
    matching more than `PATH_FILES_MAX` files, alone, without a literal head or tail:
    `path_like`)."""
    if not scope.sql(store)[0]:  # a broad path glob only: nothing to filter by in SQL
        return False
    return (knn_fn is knn and store.filtered_index_scan) or scope.share(store) < BROAD_SHARE


def _matrix_of(knn_fn: KnnFn) -> Any:
    """The matrix whose bound `knn` `knn_fn` is, if it offers `knn_within`."""
    owner = getattr(knn_fn, "__self__", None)
    return owner if callable(getattr(owner, "knn_within", None)) else None


def ranked_within(store: IndexStore, vector: list[float], scope: Scope, k: int,
                  knn_fn: KnnFn) -> list[tuple[int, float]]:
    """(vector id, L2 distance) of the `k` nearest vectors that `scope` lets through,
    nearest first (ties by id); fewer only when fewer pass."""
    matrix = _matrix_of(knn_fn)
    if matrix is not None:
        within: Callable[..., list[tuple[int, float]]] = matrix.knn_within
        return within(store, vector, k, scope.ids(store))
    held = scope.vectors(store, HOLD_MAX - _held_elsewhere(scope))
    if held is not None:  # kept: ranked here, exactly
        return nearest_held(*held, vector, k)
    where, params, _inside = scope.sql(store)
    if k > NEAREST_MAX:
        return store.scan_nearest(vector, where, params)[:k]
    ids, rows = store.nearest_in(vector, k, where, params, rows=scope.rows(store)[0] or None)
    if not len(ids):
        return []
    return exact_ranking(ids, rows, np.asarray(vector, dtype=np.float32), k)
