"""Reciprocal rank fusion and overlap merging (pure), keyword terms, cursors."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import InvalidCursor
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.hybrid import fuse, merge_overlaps
from ctxd.search.keyword import keyword_terms, match_expression
from ctxd.search.models import Hit, MatchSource

SEM, LEX = MatchSource.SEMANTIC, MatchSource.LEXICAL


def hit(path, a, b, src, score=0.0, snippet=""):
    return Hit("r", path, "python", a, b, score, (src,), snippet=snippet)


def test_rrf_rewards_agreement():
    sem = [hit("a.py", 1, 10, SEM), hit("b.py", 1, 10, SEM)]
    lex = [hit("b.py", 1, 10, LEX), hit("c.py", 1, 10, LEX)]
    out = fuse([sem, lex], k=60)
    assert [h.path for h in out] == ["b.py", "a.py", "c.py"]
    assert out[0].sources == (SEM, LEX)
    assert out[0].score == pytest.approx(1 / 62 + 1 / 61)  # k=60 as passed


def test_overlapping_ranges_in_one_file_merge():
    sem = [hit("a.py", 1, 10, SEM, snippet="\n".join(f"l{i}" for i in range(1, 11)))]
    lex = [hit("a.py", 8, 14, LEX, snippet="\n".join(f"l{i}" for i in range(8, 15)))]
    (m,) = fuse([sem, lex])
    assert (m.start_line, m.end_line) == (1, 14)
    assert m.sources == (SEM, LEX)
    assert m.snippet.split("\n") == [f"l{i}" for i in range(1, 15)]


def test_disjoint_ranges_stay_apart_and_ties_are_stable():
    hits = [hit("a.py", 20, 30, SEM, 1.0), hit("a.py", 1, 5, SEM, 1.0)]
    assert len(merge_overlaps(hits)) == 2
    out = fuse([[hit("b.py", 1, 2, SEM)], [hit("a.py", 1, 2, LEX)]])
    assert [h.path for h in out] == ["a.py", "b.py"]


def test_keyword_terms_keep_identifiers_and_drop_stopwords():
    terms = keyword_terms("How does Retry.increment decide is_exhausted for a getCharSize?")
    assert "how" not in terms and "does" not in terms
    assert {"retry", "increment", "is_exhausted", "exhausted", "getcharsize", "char"} <= set(terms)
    assert match_expression(['a"b']) == '"a""b"'


def test_cursor_round_trip_and_mismatch():
    params = {"query": "x", "mode": "hybrid"}
    c = encode_cursor(params, 10, 5)
    assert decode_cursor(c, params) == (10, 5)
    with pytest.raises(InvalidCursor, match="different query"):
        decode_cursor(c, {"query": "y", "mode": "hybrid"})
    with pytest.raises(InvalidCursor):
        decode_cursor("not-a-cursor!", params)


def test_keyword_line_matches_find_word_forms_with_columns():
    from ctxd.search.keyword import line_matches, term_pattern

    words = term_pattern(["redirect", "session"])
    got = line_matches("def resolve_redirects(self):\n    pass\n    Session.redirects", 10, words)
    assert [(m.line, m.ranges) for m in got] == [(10, ((13, 22),)), (12, ((5, 12), (13, 22)))]


def test_fusion_keeps_the_lexical_legs_line_matches():
    from ctxd.search.models import LineMatch

    m = LineMatch(3, "retry()", ((1, 6),))
    sem = [hit("a.py", 1, 10, SEM)]
    lex = [Hit("r", "a.py", "python", 1, 10, 1.0, (LEX,), matches=(m,))]
    (out,) = fuse([sem, lex])
    assert out.matches == (m,) and out.sources == (SEM, LEX)


def test_terms_in_most_documents_are_dropped_only_in_large_indexes(isolated_env, monkeypatch):
    from ctxd.indexer.models import Chunk
    from ctxd.indexer.store import FileRecord, Store
    from ctxd.search import keyword

    store = Store.open(isolated_env / "index.db")
    repo = store.upsert_repo("/r", {}, "2026-01-01T00:00:00Z")
    for i in range(10):
        text = "common word here" + (" rare" if i == 0 else "")
        store.replace_file(repo.id, FileRecord(f"f{i}.txt", 1, 1, str(i), "text", 1), text,
                           [(Chunk(1, 1, text), f"h{i}")], [], "2026-01-01T00:00:00Z")
    assert keyword.informative_terms(store, ["common", "rare"]) == ["common", "rare"]
    monkeypatch.setattr(keyword, "PRUNE_ABOVE_CHECKPOINTS", 5)
    assert keyword.informative_terms(store, ["common", "rare"]) == ["rare"]
    assert keyword.informative_terms(store, ["common", "word"]) in (["common"], ["word"])
    hits = keyword.keyword_search(store, "common rare")
    assert hits[0].path == "f0.txt"
    store.close()
