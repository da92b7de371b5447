"""The keyword leg gives the same answers on both engines: FTS5's `bm25()` on SQLite and
ctxd's BM25 over PostgreSQL's full text rank a real tree's checkpoints identically (same
words after the porter stemmer, same column weights, same statistics): the same ten
checkpoints in the same order, with the same scores, numbers and versions (`8.5.0`: a
phrase of its numbers) included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.filters import SearchFilters
from ctxd.search.keyword import keyword_search

QUESTIONS = (
    "parse command line options", "prompt the user for a password", "echo colored output",
    "group of commands", "default value from an environment variable", "progress bar",
    "file path type", "confirm before continuing", "format the help text",
    "invoke a subcommand", "get_terminal_size", "BadParameter",
    "changed in version 8.0", "deprecated since 8.5.0", "wrap at 80 columns",
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real package's source (the installed `click`)."""
    import click

    src = Path(click.__file__).parent
    dst = tmp_path_factory.mktemp("tree") / "click"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def test_bm25_on_postgresql_ranks_like_fts5(tree: Path, tmp_path: Path, pg_url: str,
                                           fake_embedder) -> None:
    stores = [open_store(tmp_path / "index.db", StoreOptions()),
              open_store(tmp_path / "unused.db", StoreOptions(url=pg_url))]
    try:
        for store in stores:
            Indexer(store, fake_embedder).index(tree, WalkOptions(), embed=False)
        for question in QUESTIONS:
            sqlite, pg = ([(h.path, h.start_line, h.score) for h in keyword_search(
                store, question, limit=10, with_matches=False)] for store in stores)
            assert len(sqlite) == 10, question
            assert [k[:2] for k in pg] == [k[:2] for k in sqlite], question
            assert [k[2] for k in pg] == pytest.approx([k[2] for k in sqlite], rel=1e-4)
        only = SearchFilters(path_glob="_*.py", language="python")
        for store in stores:
            hits = keyword_search(store, "terminal width", filters=only, limit=5)
            assert hits and all(h.path.startswith("_") for h in hits)
    finally:
        for store in stores:
            store.close()


def test_bounded_scoring_finds_the_same_page_as_scoring_every_row(
        tree: Path, tmp_path: Path, pg_url: str, fake_embedder,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With at most 100 rows scored per pass, the rarest terms' rows are scored first and
    the rows that cannot reach the page are left out: the page stays the one scoring every
    matching row gives, for questions matching three times as many rows."""
    from ctxd.indexer.store.pg import keywords as pg_keywords
    from ctxd.search.keyword import keyword_terms

    store = open_store(tmp_path / "unused.db", StoreOptions(url=pg_url))
    try:
        Indexer(store, fake_embedder).index(tree, WalkOptions(), embed=False)
        terms_of = {q: keyword_terms(q) for q in QUESTIONS}
        full = {q: store.keyword_scores(t)[:10] for q, t in terms_of.items()}
        monkeypatch.setattr(pg_keywords, "SCORED_ROWS", 100)
        pruned = 0
        for question, terms in terms_of.items():
            page = store.keyword_scores(terms, limit=10)
            assert [i for i, _s in page] == [i for i, _s in full[question]], question
            assert [s for _i, s in page] == pytest.approx([s for _i, s in full[question]])
            lexemes = store._lexemes(terms)  # type: ignore[attr-defined]
            matching = store.query("SELECT count(*) FROM checkpoints WHERE words @@ ?::tsquery",
                                   [pg_keywords.any_of([x for x in lexemes.values() if x])])
            pruned += matching[0][0] > 3 * 100
        assert pruned >= 3
    finally:
        store.close()
