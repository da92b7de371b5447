"""Keyword pages over many identical copies: the same pages as the plain algorithm.

A page collapses identical copies (`search.copies`), so over a store where every text has
many copies `merged_page` asks the keyword leg for more rows again and again. The page now
ranks once and reads each row once (`search.keyword._Page`, `keyword_index.Ranked`),
skips merging fetches whose distinct texts cannot fill it, and adds line matches once the
copies collapsed; these tests check the pages against the plain algorithm (every fetch
ranked, read and merged from scratch, line matches on every raw hit), on both engines.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ctxd.search.copies import collapse_copies, distinct_texts
from ctxd.search.keyword import keyword_search, line_matches, term_pattern
from ctxd.search.keyword_index import KeywordIndex, Ranked
from ctxd.search.merge import by_score, merge_ranked
from ctxd.search.models import Hit, MatchSource
from ctxd.server.config import load_settings
from ctxd.server.search_cases import merged_page
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


def reference_page(fetch: Callable[[int], list[Hit]], offset: int, n: int) -> list[Hit]:
    """`merged_page` as it was: every fetch merged, its raw hits complete."""
    want = offset + 2 * n
    while True:
        hits = fetch(want)
        merged = by_score(collapse_copies(merge_ranked(collapse_copies(hits))))
        if len(merged) >= offset + n or len(hits) < want:
            return merged[offset : offset + n]
        want *= 2


def test_ranked_reads_further_in_the_same_order() -> None:
    rng = np.random.default_rng(3)
    ids = np.sort(rng.choice(100_000, 5_000, replace=False))
    scores = rng.integers(1, 40, len(ids)).astype(np.float64) / 8  # many ties
    order = sorted(zip(ids.tolist(), scores.tolist(), strict=True), key=lambda p: (-p[1], p[0]))
    ranked = Ranked(ids, scores)
    for k in (1, 3, 22, 7, 500, 44, 4_999, 5_000, 9_000, 2):
        assert ranked.top(k) == order[:k], k
        assert Ranked(ids, scores).top(k) == order[:k], k


def _copied_hits(seed: int) -> list[Hit]:
    """Raw keyword hits, best first: 9 texts, each in 5-40 files (some starting at another
    line), a few of them adjacent parts of one definition (they merge)."""
    rng = random.Random(seed)
    texts = [f"def retry_{t}(self):\n    # backoff {t} retry\n    return Retry{t}()\n"
             f"    # timeout {'retry ' * t}" for t in range(9)]
    hits = []
    cid = 0
    for t, text in enumerate(texts):
        for c in range(rng.randint(5, 40)):
            start = 1 if c % 3 else 10 + c
            cid += 1
            score = round(9.0 - t * 0.5 - rng.choice((0.0, 0.001, 0.002)), 4)
            hits.append(Hit("repo", f"pkg{c}/v{t}/mod.py", "python", start, start + 3, score,
                            (MatchSource.KEYWORD,), f"retry_{t}", text, checkpoint=cid))
            if c % 7 == 0:  # the definition's next part, right below
                cid += 1
                hits.append(Hit("repo", f"pkg{c}/v{t}/mod.py", "python", start + 4, start + 5,
                                score - 1, (MatchSource.KEYWORD,), f"retry_{t}",
                                f"    return {t}\n# retry", checkpoint=cid))
    return sorted(hits, key=lambda h: (-h.score, h.checkpoint))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_merged_page_over_copies_is_the_reference_page(seed: int) -> None:
    hits = _copied_hits(seed)
    assert distinct_texts(hits) < len(hits) / 4  # copies: a page asks for many rows
    words = term_pattern(["retry", "timeout"])
    asked: list[int] = []

    def raw(k: int) -> list[Hit]:
        asked.append(k)
        return hits[:k]

    def complete(k: int) -> list[Hit]:
        return [replace(h, matches=line_matches(h.snippet, h.start_line, words))
                for h in hits[:k]]

    def finish(found: list[Hit]) -> list[Hit]:
        return [replace(h, matches=line_matches(h.snippet, h.start_line, words))
                for h in found]

    for offset, n in ((0, 11), (0, 4), (3, 5), (8, 11)):
        page = merged_page(raw, offset, n, finish)
        assert page == reference_page(complete, offset, n), (offset, n)
        assert page and all(h.matches for h in page)
    assert any(h.also_in for h in merged_page(raw, 0, 11, finish))


def _copied_repo(root: Path) -> None:
    """A few real-looking modules, each copied into many folders (some copies start with
    blank lines, so the same checkpoints start at other lines)."""
    repo = RepoBuilder(root)
    modules = {
        "retry.py": "def retry_backoff(session, timeout):\n    # retry with backoff\n"
                    "    return session.retry(timeout=timeout)\n",
        "header.py": "def parse_header(response):\n    # parse the header of a response\n"
                     "    return response.headers.get('retry-after')\n",
        "pool.py": "class ConnectionPool:\n    def get(self, timeout):\n"
                   "        # a connection from the pool, retry on timeout\n"
                   "        return self.queue.get(timeout=timeout)\n",
        "render.py": "def render_markup(console, markup):\n    # render markup into the console\n"
                     "    return console.render(markup)\n",
    }
    for c in range(24):
        for name, text in modules.items():
            header = "\n\n\n" if c % 5 == 0 else ""  # the same checkpoint, 3 lines down
            repo.write(f"copies{c}/lib/{name}", header + text)


QUESTIONS = ("retry with backoff on timeout", "parse the header of a response",
             "connection pool timeout", "render markup", "zebra")


def test_keyword_pages_over_copies_on_both_engines(tmp_path: Path, store_url: str) -> None:
    _copied_repo(tmp_path / "repo")
    settings = load_settings({"home": str(tmp_path / "home"), "store.url": store_url})
    svc = Service(settings, embedder=FakeEmbedder(), long_lived=True)
    svc.keywords = KeywordIndex(above=0, min_df=2)  # the postings, as at scale
    try:
        svc.index(tmp_path / "repo")
        store = svc.store()
        svc.postings(store)
        svc.keywords.wait()
        assert svc.postings(store) is not None
        for question in QUESTIONS:
            def complete(k: int, q: str = question) -> list[Hit]:
                return keyword_search(store, q, limit=k)

            for n in (3, 10):
                page = svc.search(question, mode="keyword", limit=n).results
                expected = reference_page(complete, 0, n + 1)[:n]
                assert page == expected, (question, n)
        page = svc.search("retry with backoff on timeout", mode="keyword", limit=3).results
        assert page and len(page[0].also_in) >= 20 and page[0].matches
        assert page[0].start_line == 4  # copies0, the representative, starts lower
    finally:
        svc.close()


@pytest.mark.parametrize("min_df", [1, 3, 40])
def test_postgresql_postings_rank_as_its_sql(tmp_path: Path, pg_url: str, min_df: int) -> None:
    """The common words' postings read from a PostgreSQL store score exactly as the store's
    own SQL does: the same checkpoints, order and scores on every question."""
    from ctxd.indexer.pipeline import Indexer
    from ctxd.indexer.store.location import StoreOptions
    from ctxd.indexer.store.open import open_store
    from ctxd.indexer.walk.walker import WalkOptions
    from ctxd.search.keyword_index import load_postings
    from tests.search.test_keyword_index import QUESTIONS as MORE
    from tests.search.test_keyword_index import _files

    _files(tmp_path / "repo", n=60)
    store = open_store(tmp_path / "unused.db", StoreOptions(url=pg_url))
    try:
        Indexer(store, FakeEmbedder()).index(tmp_path / "repo", WalkOptions(), embed=False)
        postings = load_postings(store, min_df)
        assert postings is not None and postings.postings and postings.bm25 == "postgresql"
        assert all(len(docs) >= min_df for docs, _ in postings.postings.values())
        for question in (*MORE, *QUESTIONS):
            plain, fast = ([(h.checkpoint, h.score, h.path) for h in keyword_search(
                store, question, limit=25, with_matches=False, postings=p)]
                for p in (None, postings))
            assert fast == plain, question
        assert keyword_search(store, "retry backoff", postings=postings)
    finally:
        store.close()
