"""Reciprocal rank fusion and overlap merging (pure), keyword terms, cursors."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from ctxd.indexer.errors import InvalidCursor
from ctxd.indexer.store.sqlite.keywords import match_expression
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.hybrid import fuse, merge_overlaps
from ctxd.search.keyword import keyword_terms
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
    from ctxd.indexer.store.sqlite.store import FileRecord, Store
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


# -- rank_hybrid: query-aware score fusion, lexical evidence, re-ranking ------------------

KW, ZO = MatchSource.KEYWORD, MatchSource.ZOEKT


def scored(path, a, b, src, score, symbol=None):
    return Hit("r", path, "python", a, b, score, (src,), symbol=symbol)


def test_identifier_queries_are_told_from_questions():
    from ctxd.search.hybrid import identifier_terms, is_identifier_query

    assert is_identifier_query("Retry.increment is_exhausted MaxRetryError")
    assert is_identifier_query("load_config_file")
    assert is_identifier_query("MAX_RETRIES")
    assert not is_identifier_query("where do we decide whether a session expired?")
    assert not is_identifier_query("how are column widths shrunk when the table is too wide")
    assert identifier_terms("does `parseHeader` call Retry.increment or retry?") == [
        "parseHeader", "Retry.increment"]


def test_a_question_does_not_let_bm25_on_common_words_outvote_the_vectors():
    from ctxd.search.hybrid import FusionOptions, rank_hybrid

    # The vectors clearly prefer expiry.py; BM25 prefers common.py (many common words).
    legs = {
        "semantic": [scored("expiry.py", 1, 9, SEM, 0.62), scored("common.py", 1, 9, SEM, 0.40),
                     scored("other.py", 1, 9, SEM, 0.38)],
        "keyword": [scored("common.py", 1, 9, KW, 14.0), scored("other.py", 1, 9, KW, 6.0),
                    scored("expiry.py", 1, 9, KW, 5.0)],
    }
    question = "where do we decide whether a session has expired?"
    assert rank_hybrid(question, legs)[0].path == "expiry.py"
    # Plain rank fusion with an equal-weight keyword leg lets BM25 win the tie-break.
    rrf = FusionOptions(method="rrf", keyword_weight=1.0, query_aware=False, rerank=False,
                        file_evidence=0.0)
    assert rank_hybrid(question, legs, rrf)[0].path == "common.py"


def test_identifier_query_trusts_the_keyword_leg():
    from ctxd.search.hybrid import FusionOptions, leg_weights

    o = FusionOptions(keyword_weight=0.6, question_factor=0.5)
    assert leg_weights("Retry.increment", o)["keyword"] == pytest.approx(0.6)
    assert leg_weights("how do retries back off?", o)["keyword"] == pytest.approx(0.3)


def test_score_fusion_normalises_each_leg():
    from ctxd.search.hybrid import fuse_scores, normalised

    assert normalised([4.0, 2.0, 1.0]) == [1.0, 0.5, 0.25]
    assert normalised([5.0]) == [1.0]
    assert normalised([0.5, -0.2]) == [1.0, 0.0]
    out = fuse_scores([[scored("a.py", 1, 2, SEM, 0.8), scored("b.py", 1, 2, SEM, 0.4)],
                       [scored("b.py", 1, 2, KW, 30.0), scored("a.py", 1, 2, KW, 15.0)]],
                      [1.0, 0.5])
    # a: 0.8/0.8 + 0.5 * 15/30 = 1.25; b: 0.4/0.8 + 0.5 * 30/30 = 1.0
    assert [(h.path, round(h.score, 3)) for h in out] == [("a.py", 1.25), ("b.py", 1.0)]
    assert out[0].sources == (SEM, KW)


def test_tests_stubs_and_changelogs_yield_to_the_implementation_unless_asked_for():
    from ctxd.search.hybrid import rank_hybrid

    legs = {"semantic": [scored("tests/test_retry.py", 1, 9, SEM, 0.70),
                         scored("pkg/retry.pyi", 1, 9, SEM, 0.69),
                         scored("CHANGES.rst", 1, 9, SEM, 0.68),
                         scored("pkg/retry.py", 1, 9, SEM, 0.66),
                         scored("pkg/other.py", 1, 9, SEM, 0.30)]}
    assert rank_hybrid("how long do we wait between retries", legs)[0].path == "pkg/retry.py"
    asked = rank_hybrid("which test checks the wait between retries", legs)
    assert asked[0].path == "tests/test_retry.py"
    assert rank_hybrid("which release changed the retry wait", legs)[0].path == "CHANGES.rst"


def test_tests_beside_the_code_yield_to_it_in_every_language():
    """Go, TypeScript, Java and Ruby keep tests by other names than Python's: the code
    still comes first."""
    from ctxd.search.hybrid import rank_hybrid

    for test, code in (("binding/binding_test.go", "binding/json.go"),
                       ("src/client.spec.ts", "src/client.ts"),
                       ("src/test/java/x/RetryTest.java", "src/main/java/x/Retry.java"),
                       ("spec/retry_spec.rb", "lib/retry.rb")):
        legs = {"semantic": [scored(test, 1, 9, SEM, 0.70), scored(code, 1, 9, SEM, 0.60)]}
        assert [h.path for h in rank_hybrid("where is the body decoded", legs)] == [code, test]
        asked = rank_hybrid("which test checks that the body is decoded", legs)
        assert asked[0].path == test
    # Rust keeps unit tests in the source file, in `mod tests`
    inline = replace(scored("src/de.rs", 700, 720, SEM, 0.70), symbol="tests.parses_a_struct")
    code = replace(scored("src/de.rs", 100, 140, SEM, 0.60), symbol="Deserializer.parse")
    out = rank_hybrid("where is the body decoded", {"semantic": [inline, code]})
    assert [h.symbol for h in out] == ["Deserializer.parse", "tests.parses_a_struct"]


def test_tests_go_before_the_code_they_test_when_they_are_the_subject():
    """'tests for X' wants the test file first, even when the code under test scores
    higher; a question that only names tests keeps the scores as they are."""
    from ctxd.search.explain_rank import explain_hit
    from ctxd.search.hybrid import FusionOptions, rank_hybrid

    legs = {"semantic": [scored("lua/lazy/core/handler/keys.lua", 1, 9, SEM, 0.70),
                         scored("tests/handlers/keys_spec.lua", 1, 9, SEM, 0.60)]}
    about = rank_hybrid("tests for keymap ids like <C-h>", legs)
    assert [h.path for h in about] == ["tests/handlers/keys_spec.lua",
                                       "lua/lazy/core/handler/keys.lua"]
    parts = explain_hit("tests for keymap ids like <C-h>", legs, about[0], FusionOptions())
    assert ("test, the question is about tests", 1.3) in [(p.feature, p.value) for p in parts]
    named = rank_hybrid("which test case checks keymap ids", legs)
    assert named[0].path == "lua/lazy/core/handler/keys.lua"
    off = rank_hybrid("tests for keymap ids", legs, FusionOptions(promote_tests=1.0))
    assert off[0].path == "lua/lazy/core/handler/keys.lua"


def test_examples_yield_to_the_library_code_unless_an_example_is_asked_for():
    from ctxd.search.hybrid import rank_hybrid

    legs = {"semantic": [scored("examples/cookies/index.js", 1, 9, SEM, 0.70),
                         scored("lib/response.js", 1, 9, SEM, 0.60)]}
    assert rank_hybrid("where are cookies signed", legs)[0].path == "lib/response.js"
    asked = rank_hybrid("show an example that signs cookies", legs)
    assert asked[0].path == "examples/cookies/index.js"
    how = rank_hybrid("how do I sign a cookie", legs)
    assert how[0].path == "examples/cookies/index.js"


def test_typescript_type_modules_yield_to_the_code_unless_types_are_asked_for():
    """ky's `source/types/hooks.ts` (types with long doc comments) against the class
    that runs the hooks."""
    from ctxd.search.hybrid import rank_hybrid

    legs = {"semantic": [scored("source/types/hooks.ts", 1, 9, SEM, 0.66),
                         scored("source/core/Ky.ts", 1, 9, SEM, 0.60)]}
    assert rank_hybrid("how are hooks run before a request", legs)[0].path == \
        "source/core/Ky.ts"
    for asked in ("what type does a beforeRequest hook have", "which options do hooks take"):
        assert rank_hybrid(asked, legs)[0].path == "source/types/hooks.ts", asked


def test_a_first_page_names_several_files():
    """One file's many matching sections (a long guide, a test file) leave room on the
    first page for the other files: at most three hits of a file in the first ten, the
    rest after them, scores still descending."""
    from ctxd.search.hybrid import FusionOptions, rank_hybrid

    legs = {"semantic": [scored("guide.py", 10 * i + 1, 10 * i + 5, SEM, 0.9 - 0.01 * i)
                         for i in range(8)]
            + [scored(f"m{i}.py", 1, 5, SEM, 0.5 - 0.01 * i) for i in range(4)]}
    out = rank_hybrid("how are sessions renewed", legs)
    assert [h.path for h in out[:10]] == ["guide.py"] * 3 + ["m0.py", "m1.py", "m2.py",
                                                                "m3.py"] + ["guide.py"] * 3
    assert [h.path for h in out].count("guide.py") == 8
    assert all(a.score > b.score for a, b in itertools.pairwise(out))
    off = rank_hybrid("how are sessions renewed", legs, FusionOptions(per_file_top=0))
    assert [h.path for h in off[:8]] == ["guide.py"] * 8


def test_several_strong_checkpoints_are_evidence_for_their_file():
    from ctxd.search.hybrid import file_evidence

    hits = [scored("one.py", 1, 5, SEM, 0.80), scored("many.py", 1, 5, SEM, 0.75),
            scored("many.py", 10, 15, SEM, 0.70), scored("many.py", 20, 25, SEM, 0.70)]
    out = sorted(file_evidence(hits, 0.1), key=lambda h: -h.score)
    assert out[0].path == "many.py" and out[0].score == pytest.approx(0.75 + 0.1 * 1.4)
    assert [h.score for h in out if h.path == "one.py"] == [0.80]


def test_lexical_evidence_is_file_level_and_names_its_engine():
    from ctxd.search.hybrid import FusionOptions, rank_hybrid
    from ctxd.search.models import LineMatch

    legs = {
        "semantic": [scored("a.py", 1, 10, SEM, 0.6), scored("a.py", 30, 40, SEM, 0.5),
                     scored("b.py", 1, 10, SEM, 0.58)],
        "lexical": [Hit("r", "b.py", "python", 4, 4, 9000.0, (ZO,),
                        matches=(LineMatch(4, "MAX_RETRIES = 3", ((1, 12),)),)),
                    Hit("zoekt-only", "c.go", "go", 7, 7, 500.0, (ZO,),
                        matches=(LineMatch(7, "MAX_RETRIES", ((1, 12),)),))],
    }
    out = rank_hybrid("MAX_RETRIES", legs, FusionOptions(rerank=False, file_evidence=0.0))
    assert out[0].path == "b.py" and out[0].sources == (SEM, ZO)
    # A repository only Zoekt knows still appears, with its path and line.
    only = next(h for h in out if h.repository == "zoekt-only")
    assert (only.path, only.start_line, only.sources) == ("c.go", 7, (ZO,))
    # The checkpoint of a.py holds no match line: no engine name is added to it.
    assert all(h.sources == (SEM,) for h in out if h.path == "a.py")


def test_rank_hybrid_works_with_any_leg_missing():
    from ctxd.search.hybrid import rank_hybrid

    assert rank_hybrid("anything", {}) == []
    only_kw = rank_hybrid("retry_after", {"keyword": [scored("a.py", 1, 3, KW, 2.0)]})
    assert [h.path for h in only_kw] == ["a.py"] and only_kw[0].sources == (KW,)


def test_checkpoints_without_vectors_get_imputed_semantic_evidence():
    from ctxd.search.hybrid import rank_hybrid

    # refund.py is not embedded yet: only the keyword leg can see it.
    legs = {"semantic": [scored("invoice.py", 1, 3, SEM, 0.21), scored("tax.py", 1, 3, SEM, 0.2)],
            "keyword": [scored("refund.py", 1, 2, KW, 8.0), scored("invoice.py", 1, 3, KW, 1.0)]}
    assert rank_hybrid("issue_refund order", legs)[0].path == "invoice.py"
    out = rank_hybrid("issue_refund order", legs, unembedded={("r", "refund.py", 1, 2)})
    assert out[0].path == "refund.py" and out[0].sources == (KW,)


def test_where_questions_prefer_code_to_prose_unless_they_name_the_docs():
    from ctxd.search.hybrid import rank_hybrid
    from ctxd.search.questions import asks_where_in_code

    assert asks_where_in_code("where is the retry delay computed?")
    assert asks_where_in_code("which function parses the header")
    assert not asks_where_in_code("how do I configure retries?")
    assert not asks_where_in_code("where do the docs explain retries?")
    legs = {"semantic": [scored("docs/retries.rst", 1, 9, SEM, 0.60),
                         scored("pkg/retry.py", 1, 9, SEM, 0.55)]}
    assert rank_hybrid("where is the retry delay computed?", legs)[0].path == "pkg/retry.py"
    assert rank_hybrid("how do I configure the retry delay?", legs)[0].path == "docs/retries.rst"


def test_how_to_questions_prefer_usage_docs_to_code():
    from ctxd.search.hybrid import FusionOptions, rank_hybrid
    from ctxd.search.questions import asks_how_to

    for q in ("how do I turn off colours?", "can I use my own certificates?",
              "I'm behind a proxy; is there a way to set it per host?",
              "how to strip the blank lines tags leave"):
        assert asks_how_to(q), q
    for q in ("where do I find the retry loop?",  # asks where in the code
              "how does the pool decide to block?", "which module prints versions?"):
        assert not asks_how_to(q), q
    legs = {"semantic": [scored("pkg/colour.py", 1, 9, SEM, 0.60),
                         scored("docs/usage.md", 1, 9, SEM, 0.50)]}
    assert rank_hybrid("how do I turn off colours?", legs)[0].path == "docs/usage.md"
    assert rank_hybrid("how are colours turned off?", legs)[0].path == "pkg/colour.py"
    off = FusionOptions(promote_prose_for_how_to=1.0)
    assert rank_hybrid("how do I turn off colours?", legs, off)[0].path == "pkg/colour.py"


def test_file_summaries_add_file_level_evidence_relative_to_the_best_file():
    from ctxd.search.hybrid import FusionOptions, add_summaries, rank_hybrid

    legs = {"semantic": [scored("session.py", 1, 9, SEM, 0.50), scored("help.py", 1, 9, SEM, 0.48)]}
    assert rank_hybrid("which module reports versions for a bug report?", legs)[0].path == \
        "session.py"
    legs["summary"] = [scored("help.py", 1, 1, SEM, 0.62), scored("session.py", 1, 1, SEM, 0.31)]
    out = rank_hybrid("which module reports versions for a bug report?", legs)
    assert out[0].path == "help.py"
    assert out[0].score == pytest.approx(0.48 / 0.50 + 0.1 * 1.0)  # the best summary's file
    # each hit of a file gains the same; a summary alone brings in no file
    hits = [scored("a.py", 1, 2, SEM, 1.0), scored("a.py", 10, 12, SEM, 0.5)]
    out = add_summaries(hits, [scored("a.py", 1, 1, SEM, 0.4), scored("z.py", 1, 1, SEM, 0.8)],
                        0.2)
    assert [(h.path, h.score) for h in out] == [("a.py", pytest.approx(1.1)),
                                                ("a.py", pytest.approx(0.6))]
    assert add_summaries(hits, [scored("a.py", 1, 1, SEM, 0.4)], 0.0) == hits
    off = FusionOptions(summary_weight=0.0)
    assert rank_hybrid("which module reports versions for a bug report?", legs, off)[0].path \
        == "session.py"


def test_parts_of_one_line_are_distinct_checkpoints_in_fusion():
    """Issue 15: a one-line file cut into 1,000 checkpoints all spanning line 1 must not
    collect 1,000 scores into one; each part is fused on its own, then merged (max)."""
    from dataclasses import replace

    from ctxd.search.hybrid import rank_hybrid

    parts = [replace(hit("logo.svg", 1, 1, MatchSource.SEMANTIC, 0.5), checkpoint=i)
             for i in range(1000)]
    real = replace(hit("zebra.py", 3, 9, MatchSource.SEMANTIC, 0.6), checkpoint=5000)
    kw = [replace(hit("zebra.py", 3, 9, MatchSource.KEYWORD, 9.0), checkpoint=5000)]
    ranked = rank_hybrid("checksum of a herd of zebras", {"semantic": [real, *parts],
                                                          "keyword": kw})
    assert ranked[0].path == "zebra.py"
    svg = [h for h in ranked if h.path == "logo.svg"]
    assert len(svg) == 1 and svg[0].score < ranked[0].score <= 3.0


def test_generated_code_gives_way_to_hand_written_code():
    from ctxd.search.hybrid import rank_hybrid

    legs = {"semantic": [hit("api/user_pb2.py", 1, 5, MatchSource.SEMANTIC, 0.80),
                         hit("api/user.py", 1, 5, MatchSource.SEMANTIC, 0.70)]}
    plain = rank_hybrid("user record fields", legs)
    assert plain[0].path == "api/user_pb2.py"
    demoted = rank_hybrid("user record fields", legs, generated={("r", "api/user_pb2.py")})
    assert demoted[0].path == "api/user.py"
