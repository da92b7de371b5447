"""The keyword postings in memory (`search.keyword_index`) rank exactly as FTS5's bm25().

A real repository of generated Python files (a Zipf-like vocabulary, camelCase and
snake_case identifiers, comments) is indexed by the real pipeline into a real SQLite
file; every question is answered by plain FTS5 and by the postings path, and the pages
must be equal: the same checkpoints, in the same order, with the same scores.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.schema import fts_tokens
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.keyword import keyword_search
from ctxd.search.keyword_index import KeywordIndex, load_postings
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder

WORDS = ("retry backoff session cookie header parse render template token stream buffer cache "
         "console style colour colours table column width proxy redirect timeout pool "
         "connection adapter encode decode chunk response request error raise yield return "
         "exhausted increment markup segment progress spinner").split()

QUESTIONS = [
    "how does the retry backoff handle a timeout",
    "parse the header of a response",
    "colour colours",  # two words, one stem: FTS5 counts both phrases
    "Retry.increment is_exhausted",  # an identifier: a phrase stays with FTS5
    "render markup segment into a console",
    "which pool adapter keeps the connection",
    "zebra",  # in no file
    "progress spinner column width table",
    "parseHeader retry_session",
    "token stream buffer cache encode decode chunk",
]


def _files(root: Path, n: int = 120) -> None:
    rng = random.Random(7)
    weights = [1.0 / (i + 1) for i in range(len(WORDS))]
    repo = RepoBuilder(root)
    for f in range(n):
        lines = []
        for d in range(rng.randint(1, 4)):
            a, b = rng.choices(WORDS, weights, k=2)
            lines.append(f"def {a}_{b}_{d}(self):")
            for _ in range(rng.randint(1, 8)):
                words = " ".join(rng.choices(WORDS, weights, k=rng.randint(2, 9)))
                lines.append(f"    # {words}")
                lines.append(f"    return {a}{b.capitalize()}(self.{b})")
        if f % 9 == 0:
            lines.append("def is_exhausted(retry): return retry.increment() > 3")
        repo.write(f"pkg{f % 7}/mod_{f}.py", "\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    base = tmp_path_factory.mktemp("kwindex")
    _files(base / "repo")
    s = Store.open(base / "index.db")
    Indexer(s, FakeEmbedder()).index(base / "repo", WalkOptions(), embed=False)
    yield s
    s.close()


def _page(store: Store, question: str, **kw: object) -> list[tuple[int | None, float, str]]:
    return [(h.checkpoint, h.score, h.path)
            for h in keyword_search(store, question, limit=25, with_matches=False, **kw)]  # type: ignore[arg-type]


@pytest.mark.parametrize("min_df", [1, 3, 40])
def test_postings_rank_exactly_as_fts5(store: Store, min_df: int) -> None:
    postings = load_postings(store, min_df)
    assert postings.postings, "some terms must be held in memory"
    assert all(len(docs) >= min_df for docs, _ in postings.postings.values())
    for question in QUESTIONS:
        plain = _page(store, question)
        fast = _page(store, question, postings=postings)
        assert fast == plain, question
    assert _page(store, "retry backoff")  # the comparison is not of empty pages


def test_the_snapshot_reads_fts5s_own_counts(store: Store) -> None:
    postings = load_postings(store, 1)
    assert postings.rows == store.query("SELECT count(*) FROM checkpoints")[0][0]
    retry = fts_tokens("retries")
    assert retry == ("retri",)  # porter's stem, as FTS5 indexes it
    docs, _freq = postings.postings["retri"]
    assert len(docs) == store.query(
        "SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH 'retries'")[0][0]
    assert fts_tokens("is_exhausted") == ("is", "exhaust")


def test_the_index_rebuilds_after_the_text_changes(tmp_path: Path) -> None:
    _files(tmp_path / "repo", n=30)
    db = Store.open(tmp_path / "index.db")
    indexer = Indexer(db, FakeEmbedder())
    indexer.index(tmp_path / "repo", WalkOptions(), embed=False)
    index = KeywordIndex(above=0, min_df=2, spacing=0.0)
    assert index.current(db) is None  # the first build starts in the background
    index.wait()
    snap = index.current(db)
    assert snap is not None and snap.generation == db.text_generation()
    assert _page(db, "retry backoff", postings=snap) == _page(db, "retry backoff")

    RepoBuilder(tmp_path / "repo").write("late.py", "def retry_backoff(): return 'retry'\n")
    indexer.index(tmp_path / "repo", WalkOptions(), embed=False)
    assert index.current(db) is None  # stale: FTS5 answers until the rebuild is in
    index.wait()
    fresh = index.current(db)
    assert fresh is not None and fresh.generation == db.text_generation() and index.builds == 2
    page = _page(db, "retry backoff", postings=fresh)
    assert page == _page(db, "retry backoff") and "late.py" in {p for _, _, p in page}
    db.close()


def test_small_indexes_stay_with_fts5(store: Store) -> None:
    index = KeywordIndex(above=10**9)
    assert index.current(store) is None
    index.wait()
    assert index.current(store) is None and index.builds == 0


def test_the_service_answers_keyword_and_hybrid_the_same_with_postings(tmp_path: Path) -> None:
    _files(tmp_path / "repo", n=40)
    settings = load_settings({"home": str(tmp_path / "home")})
    plain = Service(settings, embedder=FakeEmbedder())
    held = Service(settings, embedder=FakeEmbedder(), long_lived=True)
    held.keywords = KeywordIndex(above=0, min_df=2)
    try:
        plain.index(tmp_path / "repo")
        assert held.postings(held.store()) is None
        assert held.keywords is not None
        held.keywords.wait()
        assert held.postings(held.store()) is not None
        memory = held.status()["memory"]
        assert memory["keyword_postings"]["state"] == "ready"
        assert memory["keyword_postings"]["bytes"] > 0
        assert "memory" not in plain.status()
        for mode in ("keyword", "hybrid"):
            for question in QUESTIONS[:4]:
                a = plain.search(question, mode=mode, limit=10).results
                b = held.search(question, mode=mode, limit=10).results
                assert [(h.path, h.start_line, h.score, h.matches) for h in a] == \
                    [(h.path, h.start_line, h.score, h.matches) for h in b], (mode, question)
    finally:
        plain.close()
        held.close()


def test_older_postings_see_rows_written_and_deleted_since(tmp_path: Path) -> None:
    """While a rebuild is due, the previous snapshot still answers: a file written since
    is found (FTS5 scores its rows), a file deleted since is gone."""
    repo = RepoBuilder(tmp_path / "repo")
    _files(tmp_path / "repo", n=30)
    repo.write("doomed.py", "def retry_backoff_pool():\n    return 'retry backoff pool'\n")
    db = Store.open(tmp_path / "index.db")
    indexer = Indexer(db, FakeEmbedder())
    indexer.index(repo.root, WalkOptions(), embed=False)
    old = load_postings(db, 2)
    question = "retry backoff pool"
    assert "doomed.py" in {p for _, _, p in _page(db, question, postings=old)}

    repo.remove("doomed.py")
    repo.write("fresh.py", "def retry_backoff_pool():\n    return 'retry backoff pool'\n" * 3)
    indexer.index(repo.root, WalkOptions(), embed=False)
    assert old.generation != db.text_generation()
    stale = _page(db, question, postings=old)
    exact = _page(db, question)
    assert {p for _, _, p in stale} == {p for _, _, p in exact}
    assert stale[0][2] == exact[0][2] == "fresh.py"
    assert "doomed.py" not in {p for _, _, p in stale}
    assert [s for _, s, _ in stale] == pytest.approx([s for _, s, _ in exact], rel=0.05)
    db.close()


def test_older_postings_see_an_edit_of_the_last_written_file(tmp_path: Path) -> None:
    """Rewriting the file whose checkpoints have the largest ids gives its new rows new
    ids (never the deleted ones), so the previous postings see them as written since."""
    repo = RepoBuilder(tmp_path / "repo")
    _files(tmp_path / "repo", n=20)
    db = Store.open(tmp_path / "index.db")
    indexer = Indexer(db, FakeEmbedder())
    indexer.index(repo.root, WalkOptions(), embed=False)
    repo.write("zz_last.py", "def cache_pool():\n    return 'cache pool'\n")
    indexer.index(repo.root, WalkOptions(), embed=False)
    top = db.query("SELECT max(id) FROM checkpoints")[0][0]
    old = load_postings(db, 2)
    assert old.top_rowid == top

    repo.write("zz_last.py", "def retry_backoff_pool():\n    return 'retry backoff pool'\n")
    indexer.index(repo.root, WalkOptions(), embed=False)
    assert db.query("SELECT min(id) FROM checkpoints WHERE path = 'zz_last.py'")[0][0] > top
    stale = _page(db, "retry backoff pool", postings=old)
    assert stale[0][2] == _page(db, "retry backoff pool")[0][2] == "zz_last.py"
    db.close()


def test_line_matches_added_after_the_fetch_equal_those_the_fetch_gives(store: Store) -> None:
    """Keyword pages fetch without line matches and add them to the last fetch's hits
    (`keyword_line_matches`): the hits must equal those `keyword_search` gives with them,
    from postings or FTS5, with filters or not."""
    from ctxd.search.filters import SearchFilters
    from ctxd.search.keyword import keyword_line_matches

    postings = load_postings(store, 3)
    for question in QUESTIONS:
        for held, filters in ((postings, None), (None, None),
                              (postings, SearchFilters(path_glob="pkg1/**"))):
            with_them = keyword_search(store, question, limit=25, filters=filters,
                                       postings=held)
            bare = keyword_search(store, question, limit=25, filters=filters, postings=held,
                                  with_matches=False)
            assert keyword_line_matches(store, question, bare, filters=filters,
                                        postings=held) == with_them, question
    assert any(h.matches for h in keyword_search(store, "retry backoff", limit=5))
