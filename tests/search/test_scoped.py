"""Scoped semantic search filters before or inside the neighbour search (`search.scoped`,
issue 30) and answers what filtering afterwards answered.

A real store of each engine holds three repositories: `big` (98% of the checkpoints),
`five` (about 5%... here 100 of 2,080) and `one` (20 of 2,080, 1%), with clustered
vectors, Python and Markdown files in turn. The reference is the post-filter: the
neighbours of an unscoped exact search, 4x more each round until the page is full (a
neighbour source that cannot filter, as `rank_by_vector` did for every source before).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ctxd.indexer.models import Chunk
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import FileRecord, serialize_vector
from ctxd.search import scoped
from ctxd.search.filters import SearchFilters
from ctxd.search.semantic import knn, rank_by_vector
from ctxd.search.vectors import ExactMatrix, Int8Matrix
from tests.vector_data import clustered_unit_vectors, queries_near

REPOS = (("big", 98), ("five", 5), ("one", 1))
"""(name, files of 20 checkpoints)."""
NOW = "2026-01-01T00:00:00Z"


@pytest.fixture
def three_repos(tmp_path: Path, store_url: str) -> Iterator[tuple[IndexStore, np.ndarray]]:
    store = open_store(tmp_path / "index.db", StoreOptions(url=store_url))
    store.ensure_model("synthetic", 384)
    f = 0
    for name, files in REPOS:
        repo = store.upsert_repo(f"/r/{name}", {}, NOW)
        with store.transaction():
            for i in range(files):
                md = f % 2 == 1
                lines = [f"line {c} of file {f}" for c in range(20)]
                store.replace_file(
                    repo.id, FileRecord(f"pkg{i % 3}/m{i}.{'md' if md else 'py'}", 100, 1,
                                        f"x{f}", "markdown" if md else "python", 20),
                    "\n".join(lines),
                    [(Chunk(c + 1, c + 1, lines[c]), f"h{f}-{c}") for c in range(20)], [], NOW)
                f += 1
    hashes = [str(r[0]) for r in store.query("SELECT hash FROM checkpoints ORDER BY id")]
    order = np.random.default_rng(3).permutation(len(hashes))  # repositories interleave
    vecs = clustered_unit_vectors(len(hashes), 384, topics=50, seed=5)
    store.add_embeddings([(hashes[i], serialize_vector(vecs[i].tolist())) for i in order])
    yield store, queries_near(vecs, 4, seed=9)
    store.close()


def post_filtered(store: IndexStore, vector: list[float], filters: SearchFilters,
                  limit: int, offset: int = 0) -> list[tuple[str, str, int, float]]:
    """The old way: an exact unscoped search, its neighbours filtered afterwards."""
    matrix = ExactMatrix()
    hits = rank_by_vector(store, vector, filters=filters, limit=limit, offset=offset,
                          knn_fn=lambda s, v, k: matrix.knn(s, v, k))
    return answers(hits)


def answers(hits: list) -> list[tuple[str, str, int, float]]:  # type: ignore[type-arg]
    return [(h.repository, h.path, h.start_line, h.score) for h in hits]


CASES = [
    SearchFilters(repositories=("one",)),
    SearchFilters(repositories=("five",)),
    SearchFilters(repositories=("five",), language="markdown"),
    SearchFilters(repositories=("one", "five"), path_glob="pkg0/**"),
    SearchFilters(path_glob="**/m3.md"),
    SearchFilters(language="python"),
    SearchFilters(repositories=("big",)),
]


@pytest.mark.parametrize("filters", CASES, ids=lambda f: repr(f)[13:-1])
def test_scoped_search_answers_what_the_post_filter_answered(three_repos, filters):
    store, queries = three_repos
    sources = {"store": knn, "exact matrix": ExactMatrix().knn, "int8 matrix": Int8Matrix().knn}
    for q in queries:
        v = q.tolist()
        want = post_filtered(store, v, filters, 10)
        assert want, filters
        for name, fn in sources.items():
            got = answers(rank_by_vector(store, v, filters=filters, limit=10, knn_fn=fn))
            assert got == want, (name, filters)
    # a deeper page, past the first neighbours the scoped search asked for
    v = queries[0].tolist()
    assert answers(rank_by_vector(store, v, filters=filters, limit=7, offset=12)) == \
        post_filtered(store, v, filters, 7, 12)


def test_a_narrow_scope_is_searched_with_its_filter(three_repos):
    """The 1% repository is searched inside the neighbour search: the store's
    `nearest_in` and the matrix's `knn_within` return only vectors of its checkpoints,
    the nearest of them, whichever engine."""
    store, queries = three_repos
    filters = SearchFilters(repositories=("one",))
    scope = scoped.scope_of(store, filters)
    assert scope.share(store) == pytest.approx(20 / 2080)
    assert scoped.prefilter_first(store, scope, knn)
    allowed = scope.ids(store)
    assert len(allowed) == 20
    v = queries[0].tolist()
    where, params, _path_inside = scope.sql(store)
    ids, _rows = store.nearest_in(v, 5, where, params)
    assert set(ids.tolist()) <= set(allowed.tolist()) and len(ids) == 5
    exact = ExactMatrix().knn_within(store, v, 5, allowed)
    assert sorted(ids.tolist()) == sorted(i for i, _d in exact)
    assert scoped.ranked_within(store, v, scope, 5, knn) == exact
    # every vector of the scope when k is larger than it
    assert len(scoped.ranked_within(store, v, scope, 50, knn)) == 20


def test_a_scope_is_read_again_after_a_write(three_repos):
    store, _queries = three_repos
    filters = SearchFilters(repositories=("one",))
    before = scoped.scope_of(store, filters)
    assert scoped.scope_of(store, filters) is before
    share = before.share(store)
    repo = next(r for r in store.repos() if r.name == "one")
    store.replace_file(repo.id, FileRecord("extra.py", 10, 1, "y", "python", 1), "x = 1",
                       [(Chunk(1, 1, "x = 1"), "h-extra")], [], NOW)
    after = scoped.scope_of(store, filters)
    assert after is not before
    assert after.share(store) > share


def test_the_int8_pass_keeps_to_the_scope(three_repos):
    """Held for the int8 pass (a large index: forced here), a scoped search ranks only
    allowed rows: the few by their float16 rows, the many (98%) by the masked int8 pass."""
    store, queries = three_repos
    matrix = Int8Matrix(rerank=64, exact_below=100)
    exact = ExactMatrix()
    for name in ("one", "big"):
        allowed = scoped.scope_of(store, SearchFilters(repositories=(name,))).ids(store)
        for q in queries:
            got = matrix.knn_within(store, q.tolist(), 10, allowed)
            assert matrix.coarse and len(got) == 10
            assert {i for i, _d in got} <= set(allowed.tolist())
            best = {i for i, _d in exact.knn_within(store, q.tolist(), 10, allowed)}
            assert len(best & {i for i, _d in got}) >= 8, name


@pytest.mark.parametrize("filters", [
    SearchFilters(repositories=("one",)), SearchFilters(repositories=("five",), language="python"),
    SearchFilters(repositories=("big",))], ids=["one", "five-python", "big"])
def test_either_plan_of_the_engine_finds_the_scope_s_nearest(three_repos, filters):
    """`nearest_in` given the scope's count (`Scope.rows`: PostgreSQL ranks a small scope's
    rows exactly) and without it (PostgreSQL walks its HNSW index with the filter checked
    on each tuple: approximate; sqlite-vec scans either way) returns vectors of the scope
    only, the nearest of them; a small scope's vectors are kept by the search layer."""
    store, queries = three_repos
    name = filters.repositories[0]
    scope = scoped.scope_of(store, filters)
    where, params, _inside = scope.sql(store)
    allowed = scope.ids(store)
    counted, cap = scope.rows(store)
    assert cap == store.exact_rows_max()
    assert counted == (min(len(allowed), cap + 1) if cap else 0)
    if cap:  # kept in memory from its second search (this small one), ranked here
        assert scope.vectors(store, scoped.HOLD_MAX) is None
        held, _vecs, _sq = scope.vectors(store, scoped.HOLD_MAX)
        assert sorted(held.tolist()) == allowed.tolist() and scope.held() == len(allowed)
    else:  # sqlite-vec: the daemon's matrix holds every vector instead
        assert scope.vectors(store, scoped.HOLD_MAX) is None
    exact_plans = (counted, len(allowed)) if len(allowed) <= cap else ()
    for q in queries:
        v = q.tolist()
        best = [i for i, _d in ExactMatrix().knn_within(store, v, 10, allowed)]
        for rows in exact_plans:  # ranked exactly: the exact answer
            ids, _vecs = store.nearest_in(v, 10, where, params, rows=rows)
            assert sorted(ids.tolist()) == sorted(best), (name, rows)
        # the index walked with the filter (sqlite-vec: its exact scan again): HNSW's
        # approximate neighbours, all inside the scope
        ids, _vecs = store.nearest_in(v, 10, where, params, rows=None)
        assert len(ids) == 10 and set(ids.tolist()) <= set(allowed.tolist())
        if filters.language is None:  # a condition naming the repositories' table
            named, _vecs = store.nearest_in(v, 10, "AND r.name = ?", [name], rows=None)
            assert len(named) == 10 and set(named.tolist()) <= set(allowed.tolist())
        if store.exact_rows_max():
            assert len(set(ids.tolist()) & set(best)) >= 7, name  # seen: 9 or 10
        else:
            assert sorted(ids.tolist()) == sorted(best)


@pytest.mark.parametrize("pipelined", [True, False], ids=["pipeline", "libpq-13"])
def test_the_walk_s_relaxed_order_stays_with_the_walk(three_repos, monkeypatch, pipelined):
    """PostgreSQL walks its HNSW index for a large scope in pgvector's relaxed order (the
    rows are ranked exactly afterwards): the scope's vectors only, ten of them; the
    connection's setting is strict order again after it, after a walk that failed too,
    and inside a transaction; in one pipeline, or statement by statement where libpq has
    no pipelines."""
    store, queries = three_repos
    if not store.exact_rows_max():
        pytest.skip("sqlite-vec scans: no HNSW walk")
    import psycopg

    monkeypatch.setattr(psycopg.Pipeline, "is_supported", classmethod(lambda _cls: pipelined))
    scope = scoped.scope_of(store, SearchFilters(repositories=("five",)))
    where, params, _inside = scope.sql(store)
    allowed = set(scope.ids(store).tolist())

    def order() -> str:
        return str(store.query("SHOW hnsw.iterative_scan")[0][0])

    v = queries[0].tolist()
    ids, _vecs = store.nearest_in(v, 10, where, params, rows=None)
    assert len(ids) == 10 and set(ids.tolist()) <= allowed
    assert order() == "strict_order"
    with pytest.raises(Exception, match="nope"):
        store.nearest_in(v, 10, "AND c.nope = ?", [1], rows=None)
    assert order() == "strict_order"
    with store.read_snapshot():
        ids, _vecs = store.nearest_in(v, 10, where, params, rows=None)
        assert len(ids) == 10 and order() == "strict_order"
    assert order() == "strict_order"


def test_a_path_glob_too_broad_for_sql_alone_is_checked_on_the_hits(three_repos, monkeypatch):
    """A glob matching more files than `PATH_FILES_MAX`, with no literal tail or head to
    narrow the paths by (`path_like`), leaves the scope's SQL empty: the search is not
    'filtered' by a condition that lets everything through (on PostgreSQL that walked
    the HNSW index with a check on every tuple: 2x the unscoped search), it takes
    unscoped rounds with the glob checked on each hit, and answers the same."""
    store, queries = three_repos
    monkeypatch.setattr(scoped, "PATH_FILES_MAX", 3)
    monkeypatch.setattr(scoped, "PATH_PAGE", 5)  # the paths read a page at a time
    filters = SearchFilters(path_glob="**/m1*")
    scope = scoped.scope_of(store, filters)
    assert scope.sql(store) == ("", [], False)
    assert not scoped.prefilter_first(store, scope, knn)
    for q in queries:
        v = q.tolist()
        assert answers(rank_by_vector(store, v, filters=filters, limit=10)) == \
            post_filtered(store, v, filters, 10)


@pytest.mark.parametrize("glob", ["**/*.md", "pkg1/**", "/pkg2/*.py"])
def test_a_broad_path_glob_with_a_literal_tail_or_head_is_searched_with_it(
        three_repos, monkeypatch, glob):
    """A glob matching more files than `PATH_FILES_MAX` but with a literal tail (`*.md`)
    or a head holding a `/` (`pkg1/**`) narrows the scope's SQL by a `LIKE` ignoring
    case that every path it matches also matches: PostgreSQL walks its index with it
    (asking the page's own neighbours, not 50 unscoped ones: 1.75x the unscoped search at
    1M), and the glob itself still decides each hit: a file `UPPER.MD`, nearest to every
    query, passes the `LIKE` but not `**/*.md`. Answers are the post-filter's."""
    store, queries = three_repos
    big = next(r for r in store.repos() if r.name == "big")
    with store.transaction():
        for name in ("pkg1/UPPER.MD", "pkg2/UPPER.PY"):
            store.replace_file(big.id, FileRecord(name, 10, 1, name, "markdown", 4), "a\nb\nc\nd",
                               [(Chunk(c + 1, c + 1, "abcd"[c]), f"{name}-{c}")
                                for c in range(4)], [], NOW)
    store.add_embeddings([(f"{name}-{c}", serialize_vector(queries[c].tolist()))
                          for name in ("pkg1/UPPER.MD", "pkg2/UPPER.PY") for c in range(4)])
    monkeypatch.setattr(scoped, "PATH_FILES_MAX", 3)
    monkeypatch.setattr(scoped, "PATH_PAGE", 7)
    match = SearchFilters(path_glob=glob).path_matcher()
    decoys = {"**/*.md": "pkg1/UPPER.MD", "/pkg2/*.py": "pkg2/UPPER.PY"}
    if glob in decoys:  # let through by the SQL, turned away by the glob
        assert like_regex(str(scoped.path_like(glob))).fullmatch(decoys[glob])
        assert not match(decoys[glob])
    for filters in (SearchFilters(path_glob=glob),
                    SearchFilters(repositories=("big", "five"), path_glob=glob)):
        scope = scoped.scope_of(store, filters)
        where, params, inside = scope.sql(store)
        assert "c.path" in where and scoped.path_like(glob) in params and inside, where
        # an engine filtering inside its index searches with it at once; sqlite-vec
        # tries one unscoped round first (most neighbours pass a broad glob)
        assert scoped.prefilter_first(store, scope, knn) == store.filtered_index_scan
        for q in queries:
            v = q.tolist()
            got = answers(rank_by_vector(store, v, filters=filters, limit=10))
            assert got == post_filtered(store, v, filters, 10), (glob, filters)
            assert all(match(p) for _r, p, _l, _s in got)
        v = queries[1].tolist()
        assert answers(rank_by_vector(store, v, filters=filters, limit=7, offset=12)) == \
            post_filtered(store, v, filters, 7, 12)


def like_regex(like: str) -> re.Pattern[str]:
    """A `LIKE` pattern (`\\` escapes), ignoring case, as a regular expression."""
    out = [re.escape(t[1]) if len(t) == 2 else ".*" if t == "%" else "." if t == "_"
           else re.escape(t) for t in re.findall(r"\\.|.", like, re.DOTALL)]
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


@pytest.mark.parametrize("glob, like", [
    ("**/*.md", "%.md"), ("*.md", "%.md"), ("*_test.go", "%\\_test.go"), ("docs/**", "docs/%"),
    ("/src/*.py", "src/%.py"), ("src/**/*.py", "src/%.py"), ("README.md", "%README.md"),
    ("pkg*/m[13]*", None), ("**/m1*", None), ("vendor/", None), ("/**", None),
    ("100%/*", "100\\%/%")])
def test_path_like_is_a_superset_of_the_glob(glob, like):
    """`path_like`: every path the glob matches (its basename or the whole path) matches
    the `LIKE` pattern, ignoring case; None where it would not narrow."""
    assert scoped.path_like(glob) == like
    if like is None:
        return
    rx = like_regex(like)
    match = SearchFilters(path_glob=glob).path_matcher()
    paths = ["a.md", "x/y/a.md", "docs/a.py", "docs/x/y.txt", "src/a.py", "src/x/y.py",
             "a/src/b.py", "README.md", "x/README.md", "a_test.go", "x/b_test.go",
             "100%/a", "A.MD", "vendor/a.py", "m1.py", "pkg1/m3.md"]
    assert any(match(path) for path in paths), glob
    for path in paths:
        if match(path):
            assert rx.fullmatch(path), (glob, path)


def test_kept_scope_vectors_are_bounded_and_answer_the_same(three_repos, monkeypatch):
    """On PostgreSQL a scope searched again keeps its vectors (`Scope.vectors`) once it
    has been searched `count / HOLD_PER_SEARCH` times, while all the scopes of the store
    keep at most `HOLD_MAX`; answers stay the post-filter's throughout."""
    store, queries = three_repos
    if not store.exact_rows_max():
        pytest.skip("sqlite-vec: a long-lived process holds the whole matrix instead")
    monkeypatch.setattr(scoped, "_SHARED", {})  # nothing kept by the tests before
    monkeypatch.setattr(scoped, "HOLD_MAX", 150)
    monkeypatch.setattr(scoped, "HOLD_PER_SEARCH", 40)
    five, one = SearchFilters(repositories=("five",)), SearchFilters(repositories=("one",))
    big, five_md = SearchFilters(repositories=("big",)), SearchFilters(
        repositories=("five",), language="markdown")

    def search(filters: SearchFilters, q: int) -> int:
        v = queries[q % len(queries)].tolist()
        got = answers(rank_by_vector(store, v, filters=filters, limit=10))
        assert got == post_filtered(store, v, filters, 10), filters
        return scoped.scope_of(store, filters).held()

    assert [search(five, q) for q in range(4)] == [0, 0, 100, 100]  # 100 rows: 3rd search
    assert [search(one, q) for q in range(3)] == [0, 20, 20]  # 20 rows: the 2nd
    assert [search(big, q) for q in range(3)] == [0, 0, 0]  # 1,960 rows: more than HOLD_MAX
    assert [search(five_md, q) for q in range(3)] == [0, 0, 0]  # 40 rows: no room left


def test_connections_of_one_postgresql_store_share_their_scopes(three_repos, tmp_path, store_url):
    """A daemon's worker threads each hold a connection: on PostgreSQL (the generation is
    the database's) they share one scope per filter, and so the vectors it keeps; on
    SQLite each connection has its own (its generation is its own)."""
    store, _queries = three_repos
    other = open_store(tmp_path / "index.db", StoreOptions(url=store_url))
    try:
        filters = SearchFilters(repositories=("one",))
        shared = scoped.scope_of(store, filters) is scoped.scope_of(other, filters)
        assert shared == bool(store_url) == (store.scope_key is not None)
    finally:
        other.close()
