"""One result per distinct text (`search/copies.py`, issue 24 item 2): pure collapsing of
identical copies, the representative's choice, merging, and paging."""

from __future__ import annotations

from ctxd.search.copies import collapse_copies, copy_rank, copy_tier
from ctxd.search.merge import merge_overlaps
from ctxd.search.models import Copy, Hit, LineMatch, MatchSource

SEM, KW, LEX = MatchSource.SEMANTIC, MatchSource.KEYWORD, MatchSource.LEXICAL

BODY = "def backoff(n):\n    return 2 ** n"


def hit(path: str, start: int, score: float, *, text: str = BODY, src=SEM, cid: int = 1,
        repo: str = "r", symbol: str | None = "backoff", matches=()) -> Hit:
    end = start + text.count("\n")
    return Hit(repo, path, "python", start, end, score, (src,), symbol=symbol, snippet=text,
               checkpoint=cid, matches=tuple(matches))


def test_a_verbatim_copy_answers_once_at_the_source_naming_the_copy():
    source = hit("pkg/retry.py", 10, 0.7, cid=1)
    copy = hit("docs/snippets/retry.py", 1, 0.8, cid=2, src=KW,
               matches=[LineMatch(2, "    return 2 ** n", ((12, 13),))])
    (one,) = collapse_copies([copy, source])
    assert (one.path, one.start_line) == ("pkg/retry.py", 10)  # the source, not the copy
    assert one.score == 0.8  # the group's best
    assert one.sources == (SEM, KW)
    assert one.also_in == (Copy("r", "docs/snippets/retry.py", 1, 2),)
    # the copy's matching line, moved onto the source's lines
    assert one.matches == (LineMatch(11, "    return 2 ** n", ((12, 13),)),)


def test_different_texts_and_file_level_hits_stay_apart():
    a = hit("a.py", 1, 0.9, cid=1)
    b = hit("b.py", 1, 0.8, cid=2, text=BODY + "  # changed")
    # a lexical file-level hit: its snippet is one matching line, not the file's text
    lex1 = Hit("r", "c.py", "python", 3, 3, 0.5, (LEX,), snippet="import os")
    lex2 = Hit("r", "d.py", "python", 3, 3, 0.4, (LEX,), snippet="import os")
    out = collapse_copies([a, b, lex1, lex2])
    assert [h.path for h in out] == ["a.py", "b.py", "c.py", "d.py"]
    assert all(not h.also_in for h in out)


def test_the_representative_is_chosen_by_path_not_by_score():
    assert copy_tier("src/pkg/mod.py") == 0
    assert copy_tier("docs/snippets/mod.py") == 1
    assert copy_tier("examples/mod.py") == 1
    # the folders `path_kinds.is_example` knows: hybrid ranking and copies agree on them
    assert copy_tier("examples-ts/mod.ts") == copy_tier("demo_app/mod.py") == 1
    assert copy_tier("docs_src/body/tutorial001.py") == 1
    assert copy_tier("tests/fixtures/mod.py") == 2
    assert copy_tier("pkg/mod_test.go") == 2
    assert copy_tier("dist/esm/mod.js") == 3
    assert copy_tier("build/lib/pkg/mod.py") == 3
    assert copy_tier("vendor/github.com/x/mod.go") == 3
    assert copy_tier("pkg/mod copy.py") == 3
    # within a tier: shallower, then shorter
    assert copy_rank("r", "pkg/mod.py") < copy_rank("r", "pkg/compat/mod.py")
    assert copy_rank("r", "pkg/m.py") < copy_rank("r", "pkg/mod.py")
    # generated code is never the representative when a hand-written copy exists
    assert copy_rank("r", "gen.py", {("r", "gen.py")}) > copy_rank("r", "z/y/x/hand.py")
    hits = [hit("tests/fixtures/retry.py", 1, 0.99, cid=1), hit("pkg/retry.py", 5, 0.1, cid=2),
            hit("examples/retry.py", 1, 0.5, cid=3)]
    (one,) = collapse_copies(hits)
    assert one.path == "pkg/retry.py" and one.score == 0.99
    assert [c.path for c in one.also_in] == ["examples/retry.py", "tests/fixtures/retry.py"]


def test_copied_parts_of_one_definition_merge_into_one_result_naming_one_place():
    """Both parts of a long function and both parts of its copy: one result spanning the
    function, whose copy is named once, as one range."""
    first, second = "def long():\n    a = 1", "    b = 2\n    return a + b"
    hits = [hit("pkg/m.py", 1, 0.6, text=first, cid=1, symbol="long"),
            hit("pkg/m.py", 3, 0.5, text=second, cid=2, symbol="long"),
            hit("docs/m.py", 11, 0.7, text=first, cid=3, symbol="long"),
            hit("docs/m.py", 13, 0.4, text=second, cid=4, symbol="long")]
    (one,) = merge_overlaps(collapse_copies(hits))
    assert (one.path, one.start_line, one.end_line, one.score) == ("pkg/m.py", 1, 4, 0.7)
    assert one.also_in == (Copy("r", "docs/m.py", 11, 14),)


def test_a_copy_in_another_repository_is_named_with_its_repository():
    (one,) = collapse_copies([hit("app/x.py", 1, 0.5, repo="shop-2", cid=1),
                              hit("app/x.py", 1, 0.6, repo="shop", cid=2)])
    assert (one.repository, one.score) == ("shop", 0.6)
    assert one.also_in == (Copy("shop-2", "app/x.py", 1, 2),)


def test_pages_of_a_merged_mode_never_repeat_a_text_and_agree_with_each_other():
    """Keyword and semantic pages are cut from one ranking from the top: a text and its
    copies sit where the best of them ranks, on one page only."""
    from ctxd.server.search_cases import merged_page

    raw: list[Hit] = []
    for i in range(12):  # 12 distinct texts, each in a source file and a docs copy
        text = f"def f{i}():\n    return {i}"
        raw.append(hit(f"pkg/f{i}.py", 1, 1.0 - i * 0.05, text=text, cid=2 * i,
                       symbol=f"f{i}"))
        raw.append(hit(f"docs/f{i}.py", 1, 0.99 - i * 0.05, text=text, cid=2 * i + 1,
                       symbol=f"f{i}"))
    raw.sort(key=lambda h: -h.score)
    fetch = lambda k: raw[:k]  # noqa: E731 - the engine's ranking, cut at k
    pages = [merged_page(fetch, offset, 4) for offset in (0, 4, 8)]
    paths = [h.path for page in pages for h in page]
    assert paths == [f"pkg/f{i}.py" for i in range(12)]
    assert all(h.also_in == (Copy("r", h.path.replace("pkg/", "docs/"), 1, 2),)
               for page in pages for h in page)
