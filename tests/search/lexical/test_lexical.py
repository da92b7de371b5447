"""The embedded lexical engine (search/lexical/engine.py) on small real indexes."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import QueryError, ValidationError
from ctxd.indexer.models import Symbol
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lexical.files import file_pattern_regex, glob_to_regex
from ctxd.search.lexical.rank import merge_windows
from ctxd.search.lexical.sql import (
    c_and,
    c_not,
    c_or,
    c_true,
    content_cond,
    path_cond,
    render_cond,
)
from ctxd.search.models import Block, LexicalResult
from tests.search.conftest import IndexBuilder

APP = """\
import os

def load_config(path):
    with open(path) as fh:
        return fh.read()

class ConfigError(Exception):
    pass

def main():
    cfg = load_config("app.toml")
    print(cfg)
"""

UTIL = """\
# helpers without the word we look for
def helper():
    return 42
"""

NOTES = """\
Remember: load_config reads the file.
Nothing else here.
"""


def lines_of(result: LexicalResult) -> dict[str, list[int]]:
    return {fm.path: [m.line for m in fm.matches] for fm in result.files}


@pytest.fixture
def engine(index: IndexBuilder) -> EmbeddedLexical:
    index.add_repo("app", {"src/app.py": APP, "src/util.py": UTIL, "NOTES.md": NOTES})
    return EmbeddedLexical(index.store)


# -- basic matching ---------------------------------------------------------------------------


def test_literal_reports_every_matching_line_with_columns(engine: EmbeddedLexical) -> None:
    result = engine.search("load_config", context_lines=0)
    assert lines_of(result) == {"src/app.py": [3, 11], "NOTES.md": [1]}
    first = result.files[0]
    assert first.path == "src/app.py"
    assert first.matches[0].text == "def load_config(path):"
    assert first.matches[0].ranges == ((5, 16),)
    assert result.file_count == 2
    assert result.match_count == 3
    assert not result.partial


def test_columns_count_characters_not_bytes(index: IndexBuilder) -> None:
    index.add_repo("u", {"a.txt": "héllo wörld and wörld\n"})
    fm = EmbeddedLexical(index.store).search("wörld").files[0]
    assert fm.matches[0].ranges == ((7, 12), (17, 22))


def test_regex_match_spanning_lines_is_split_per_line(index: IndexBuilder) -> None:
    index.add_repo("m", {"a.txt": "alpha begin\nmiddle\nend omega\n"})
    fm = EmbeddedLexical(index.store).search(r"c:begin[^x]*end", context_lines=0).files[0]
    assert [(m.line, m.ranges) for m in fm.matches] == [
        (1, ((7, 12),)),
        (2, ((1, 7),)),
        (3, ((1, 4),)),
    ]


def test_caret_and_dollar_match_at_line_boundaries(engine: EmbeddedLexical) -> None:
    result = engine.search(r"c:^def\ \w+\(\):$", context_lines=0)
    assert lines_of(result) == {"src/app.py": [10], "src/util.py": [2]}


def test_case_auto_is_insensitive_for_lowercase_and_sensitive_for_uppercase(
    index: IndexBuilder,
) -> None:
    index.add_repo("c", {"a.txt": "Cart\ncart\nCART\n"})
    eng = EmbeddedLexical(index.store)
    assert lines_of(eng.search("c:cart")) == {"a.txt": [1, 2, 3]}
    assert lines_of(eng.search("c:Cart")) == {"a.txt": [1]}
    assert lines_of(eng.search("case:no c:Cart")) == {"a.txt": [1, 2, 3]}
    assert lines_of(eng.search("case:yes c:cart")) == {"a.txt": [2]}


def test_no_results_is_an_empty_result(engine: EmbeddedLexical) -> None:
    result = engine.search("zzqqnotpresent")
    assert result.files == [] and result.file_count == 0 and result.match_count == 0


# -- combining -------------------------------------------------------------------------------


def test_and_needs_every_term_in_the_file_and_reports_lines_of_each(
    engine: EmbeddedLexical,
) -> None:
    result = engine.search("load_config print", context_lines=0)
    assert lines_of(result) == {"src/app.py": [3, 11, 12]}


def test_or_reports_files_matching_either_side(engine: EmbeddedLexical) -> None:
    result = engine.search("helper or ConfigError", context_lines=0)
    assert lines_of(result) == {"src/app.py": [7], "src/util.py": [1, 2]}


def test_negation_excludes_files_by_content_or_path(engine: EmbeddedLexical) -> None:
    assert set(lines_of(engine.search("load_config -print"))) == {"NOTES.md"}
    assert set(lines_of(engine.search("def -app"))) == {"src/util.py"}  # path src/app.py


def test_negated_atoms_contribute_no_lines(engine: EmbeddedLexical) -> None:
    result = engine.search("(load_config or -zzz) content:print", context_lines=0)
    assert lines_of(result) == {"src/app.py": [3, 11, 12]}


def test_bare_term_matching_only_the_path_gives_a_file_without_lines(
    engine: EmbeddedLexical,
) -> None:
    result = engine.search("util", context_lines=0)
    assert [(fm.path, fm.matches) for fm in result.files] == [("src/util.py", ())]
    assert result.match_count == 1  # as Zoekt: one file-name match
    assert engine.search("c:util").files == []


def test_file_atom_selects_by_path_and_reports_the_other_terms(engine: EmbeddedLexical) -> None:
    result = engine.search("f:app\\.py$ def", context_lines=0)
    assert lines_of(result) == {"src/app.py": [3, 10]}


def test_file_only_query_returns_files_without_reading_text(engine: EmbeddedLexical) -> None:
    result = engine.search(r"f:\.py$")
    assert sorted(fm.path for fm in result.files) == ["src/app.py", "src/util.py"]
    assert all(fm.matches == () for fm in result.files)


def test_pattern_matching_only_empty_strings_selects_files_without_lines(
    engine: EmbeddedLexical,
) -> None:
    result = engine.search("c:Z*", max_files=10)
    assert result.file_count == 3
    assert all(fm.matches == () for fm in result.files)


# -- filters ---------------------------------------------------------------------------------


def test_repo_filter_is_an_unanchored_case_sensitive_regex(index: IndexBuilder) -> None:
    index.add_repo("shop", {"a.txt": "needle one\n"})
    index.add_repo("workshop", {"b.txt": "needle two\n"})
    eng = EmbeddedLexical(index.store)
    assert {fm.repository for fm in eng.search("repo:shop needle").files} == {"shop", "workshop"}
    assert {fm.repository for fm in eng.search("r:^shop$ needle").files} == {"shop"}
    assert eng.search("repo:SHOP needle").files == []
    assert {fm.repository for fm in eng.search("-repo:^shop$ needle").files} == {"workshop"}


def test_repos_argument_restricts_and_notes_unknown_names(index: IndexBuilder) -> None:
    index.add_repo("one", {"a.txt": "needle\n"})
    index.add_repo("two", {"a.txt": "needle\n"})
    eng = EmbeddedLexical(index.store)
    result = eng.search("needle", repos=["two", "nope"])
    assert [fm.repository for fm in result.files] == ["two"]
    assert any("nope" in n for n in result.notes)


def test_lang_filter_accepts_names_and_aliases_in_any_case(index: IndexBuilder) -> None:
    index.add_repo("l", {"a.py": "token = 1\n", "b.go": "var token = 1\n", "c.md": "token\n"})
    eng = EmbeddedLexical(index.store)
    for query in ("lang:python token", "lang:py token", "lang:Python token"):
        assert [fm.path for fm in eng.search(query).files] == ["a.py"]
    assert [fm.path for fm in eng.search("lang:golang token").files] == ["b.go"]
    assert {fm.path for fm in eng.search("-lang:markdown token").files} == {"a.py", "b.go"}


def test_unknown_language_matches_nothing_and_says_so(engine: EmbeddedLexical) -> None:
    result = engine.search("lang:klingon def")
    assert result.files == []
    assert any("lang:klingon" in n for n in result.notes)


def test_branch_filters_match_nothing_on_plain_directories(engine: EmbeddedLexical) -> None:
    assert engine.search("b:main def").files == []
    assert engine.search("archived:no load_config").file_count == 2


# -- symbols ---------------------------------------------------------------------------------


def test_sym_reports_definition_lines_only(engine: EmbeddedLexical) -> None:
    result = engine.search("sym:load_config", context_lines=0)
    assert lines_of(result) == {"src/app.py": [3]}
    assert result.files[0].matches[0].ranges == ((5, 16),)


def test_sym_regex_marks_the_matched_part_of_each_name(engine: EmbeddedLexical) -> None:
    result = engine.search("sym:^(load|main)", context_lines=0)
    fm = result.files[0]
    assert [(m.line, m.ranges) for m in fm.matches] == [(3, ((5, 9),)), (10, ((5, 9),))]


def test_sym_uses_the_symbol_table_not_the_text(index: IndexBuilder) -> None:
    index.add_repo(
        "s",
        {"a.txt": "one\ntwo Widget here\n"},
        symbols={"a.txt": [Symbol("Widget", "class", 2, 2)]},
    )
    eng = EmbeddedLexical(index.store)
    assert lines_of(eng.search("sym:Widget")) == {"a.txt": [2]}
    assert eng.search("sym:one").files == []


# -- result shapes -----------------------------------------------------------------------------


def test_type_filename_returns_matching_files_without_lines(engine: EmbeddedLexical) -> None:
    result = engine.search("type:filename load_config")
    assert sorted(fm.path for fm in result.files) == ["NOTES.md", "src/app.py"]
    assert all(fm.matches == () and fm.blocks == () for fm in result.files)


def test_type_repo_returns_one_entry_per_repository(index: IndexBuilder) -> None:
    index.add_repo("alpha", {"a.txt": "needle\n", "b.txt": "needle\n"})
    index.add_repo("beta", {"a.txt": "needle\n"})
    index.add_repo("gamma", {"a.txt": "hay\n"})
    result = EmbeddedLexical(index.store).search("type:repo needle")
    assert [(fm.repository, fm.path, fm.score) for fm in result.files] == [
        ("alpha", "", 2.0),
        ("beta", "", 1.0),
    ]
    assert any("type:repo" in n for n in result.notes)


def test_nested_type_repo_restricts_to_the_selected_repositories(index: IndexBuilder) -> None:
    index.add_repo("alpha", {"a.txt": "marker\n", "b.txt": "needle\n"})
    index.add_repo("beta", {"a.txt": "needle\n"})
    result = EmbeddedLexical(index.store).search("needle (type:repo marker)")
    assert [(fm.repository, fm.path) for fm in result.files] == [("alpha", "b.txt")]


# -- context ---------------------------------------------------------------------------------


def test_context_windows_merge_when_they_overlap_or_touch(index: IndexBuilder) -> None:
    text = "".join(f"line {i}{' hit' if i in (3, 5, 12) else ''}\n" for i in range(1, 16))
    index.add_repo("ctx", {"a.txt": text})
    fm = EmbeddedLexical(index.store).search("c:hit", context_lines=1).files[0]
    assert [(b.start_line, len(b.lines)) for b in fm.blocks] == [(2, 5), (11, 3)]
    assert fm.blocks[0].lines[0] == "line 2"
    assert fm.blocks[1] == Block(11, ("line 11", "line 12 hit", "line 13"))


def test_context_is_clipped_at_file_edges_and_zero_context_keeps_match_lines(
    index: IndexBuilder,
) -> None:
    index.add_repo("edge", {"a.txt": "hit first\nb\nc\nhit last"})
    eng = EmbeddedLexical(index.store)
    fm = eng.search("c:hit", context_lines=5).files[0]
    assert fm.blocks == (Block(1, ("hit first", "b", "c", "hit last")),)
    fm = eng.search("c:hit", context_lines=0).files[0]
    assert fm.blocks == (Block(1, ("hit first",)), Block(4, ("hit last",)))


def test_merge_windows_is_pure() -> None:
    assert merge_windows([5, 7], 1, 100) == [(4, 8)]
    assert merge_windows([5, 8], 1, 100) == [(4, 9)]  # touching windows join
    assert merge_windows([5, 9], 1, 100) == [(4, 6), (8, 10)]
    assert merge_windows([1, 100], 3, 100) == [(1, 4), (97, 100)]


# -- ranking and paging ------------------------------------------------------------------------


def test_definition_outranks_mentions(engine: EmbeddedLexical) -> None:
    result = engine.search("load_config")
    assert result.files[0].path == "src/app.py"
    assert result.files[0].score > result.files[1].score


def test_ties_are_ordered_by_repository_then_path(index: IndexBuilder) -> None:
    index.add_repo("b-repo", {"z.txt": "needle\n", "a.txt": "needle\n"})
    index.add_repo("a-repo", {"m.txt": "needle\n"})
    result = EmbeddedLexical(index.store).search("needle")
    assert [(fm.repository, fm.path) for fm in result.files] == [
        ("a-repo", "m.txt"),
        ("b-repo", "a.txt"),
        ("b-repo", "z.txt"),
    ]
    assert len({fm.score for fm in result.files}) == 1


def test_ties_put_source_before_tests_before_prose_on_every_page(index: IndexBuilder) -> None:
    """A changelog and a test that name an identifier as often as the code that assigns it
    come after that code (Zoekt's builder orders tests last); pages keep the one order."""
    files = {"CHANGES.md": "- max_redirects is now 30\n",
             "docs/api.rst": "max_redirects = 30\n",
             "tests/test_session.py": "s.max_redirects = 30\n",
             "src/app/zz_session.py": "self.max_redirects = 30\n",
             "src/app/aa_client.py": "max_redirects = 30\n"}
    index.add_repo("r", files)
    eng = EmbeddedLexical(index.store)
    ranked = [fm.path for fm in eng.search("max_redirects").files]
    assert ranked == ["src/app/aa_client.py", "src/app/zz_session.py", "tests/test_session.py",
                      "CHANGES.md", "docs/api.rst"]
    assert len({fm.score for fm in eng.search("max_redirects").files}) == 1
    paged = [fm.path for offset in range(0, 5, 2)
             for fm in eng.search("max_redirects", max_files=2, offset=offset).files]
    assert paged == ranked


def test_more_matched_atoms_rank_higher(index: IndexBuilder) -> None:
    index.add_repo("r", {"both.txt": "alpha beta\n", "one.txt": "alpha gamma beta2\n"})
    result = EmbeddedLexical(index.store).search("alpha or gamma")
    assert [fm.path for fm in result.files] == ["one.txt", "both.txt"]


def test_offset_and_max_files_page_while_counting_everything(index: IndexBuilder) -> None:
    index.add_repo("p", {f"f{i:02}.txt": "needle\n" for i in range(7)})
    eng = EmbeddedLexical(index.store)
    page1 = eng.search("needle", max_files=3)
    page2 = eng.search("needle", max_files=3, offset=3)
    page3 = eng.search("needle", max_files=3, offset=6)
    assert [f.path for f in page1.files] == ["f00.txt", "f01.txt", "f02.txt"]
    assert [f.path for f in page2.files] == ["f03.txt", "f04.txt", "f05.txt"]
    assert [f.path for f in page3.files] == ["f06.txt"]
    assert page1.file_count == page3.file_count == 7


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_files": 0}, "max_files"),
        ({"context_lines": -1}, "context_lines"),
        ({"offset": -2}, "offset"),
    ],
)
def test_bad_limits_are_validation_errors(
    engine: EmbeddedLexical, kwargs: dict[str, int], field: str
) -> None:
    limits = {"max_files": 30, "context_lines": 3, "offset": 0, **kwargs}
    with pytest.raises(ValidationError) as info:
        engine.search(
            "def",
            max_files=limits["max_files"],
            context_lines=limits["context_lines"],
            offset=limits["offset"],
        )
    assert info.value.details["field"] == field


def test_syntax_errors_surface_as_query_errors(engine: EmbeddedLexical) -> None:
    with pytest.raises(QueryError) as info:
        engine.search("foo(")
    assert info.value.details["position"] == 0


# -- candidates, scans and explain -------------------------------------------------------------


def test_query_without_trigram_scans_all_files_and_says_so(engine: EmbeddedLexical) -> None:
    result = engine.search("c:fh", context_lines=0)
    assert lines_of(result) == {"src/app.py": [4, 5]}
    assert not result.partial
    assert any("bounded scan" in n and "3+ characters" in n for n in result.notes)


def test_bounded_scan_stops_at_the_byte_limit_and_is_partial(index: IndexBuilder) -> None:
    index.add_repo("big", {f"f{i}.txt": f"ab {i}\n" + "x" * 200 for i in range(10)})
    eng = EmbeddedLexical(index.store, scan_limit_bytes=500)
    result = eng.search("c:ab")
    assert result.partial
    assert 0 < result.file_count < 10
    assert any("partial" in n for n in result.notes)


def test_match_limit_stops_evaluation_and_is_partial(index: IndexBuilder) -> None:
    index.add_repo("many", {f"f{i}.txt": "needle\n" * 5 for i in range(10)})
    result = EmbeddedLexical(index.store, match_limit=12).search("needle")
    assert result.partial
    assert result.file_count == 3  # 15 matching lines once the third file is done
    assert any("stopped after 12 matching lines" in n for n in result.notes)


def test_literal_queries_read_only_candidate_files(sqlite_index: IndexBuilder) -> None:
    index = sqlite_index
    files = {f"f{i:03}.txt": f"common text {i}\n" for i in range(50)}
    files["hit.txt"] = "common text and the rare_marker\n"
    index.add_repo("cand", files)
    statements: list[str] = []
    db = index.store.db  # type: ignore[attr-defined]  # SQLite's own statements
    db.set_trace_callback(statements.append)
    result = EmbeddedLexical(index.store).search("rare_marker")
    db.set_trace_callback(None)
    assert [fm.path for fm in result.files] == ["hit.txt"]
    reads = [s for s in statements if "content FROM file_text" in s]
    assert reads and all(s.count(",") <= 1 for s in reads)  # one rowid per read
    assert not any("LIKE" in s.upper().split("WHERE", 1)[-1] for s in statements)


def test_explain_shows_atoms_trigrams_sql_and_match(engine: EmbeddedLexical) -> None:
    text = engine.explain("lang:python load_config -f:test")
    assert "parsed: and(lang:python, any:'load_config'/i, not(path:'test'/i))" in text
    assert "trigrams: 'loa', 'oad'" in text
    if engine.store.engine == "sqlite":
        assert "file_text MATCH ?" in text
        assert 'FTS MATCH: "load_config"' in text
    else:  # pg_trgm's GIN index answers ILIKE
        assert "file_text WHERE content ILIKE ?" in text
        assert "pg_trgm (GIN on file_text.content)" in text and "ILIKE ?) ['%load" in text
    assert "lower(f.language) IN (?)" in text
    assert "bounded scan" not in text


def test_explain_announces_a_bounded_scan(engine: EmbeddedLexical) -> None:
    text = engine.explain(r"c:\w+")
    assert "<none: no literal of 3+ characters>" in text
    assert "bounded scan" in text


# -- conditions (pure) -------------------------------------------------------------------------


def test_content_condition_is_an_fts_match_exact_only_for_plain_lowercase_text() -> None:
    assert content_cond("needle", False).exact
    assert not content_cond("Needle", True).exact
    assert not content_cond("nee.le", False).exact
    assert content_cond("ab", False).op == "true"
    sql, params = render_cond(content_cond('say "hi"', False))
    assert sql == "f.id IN (SELECT rowid FROM file_text WHERE file_text MATCH ?)"
    assert params == ['"say ""hi"""']


def test_conditions_merge_fts_and_negate_only_exact_parts() -> None:
    both = c_and([content_cond("alpha", False), content_cond("beta", False)])
    assert both.op == "fts"
    assert render_cond(both)[1] == ['("alpha" AND "beta")']
    assert c_not(content_cond("foo.bar", False)).op == "true"  # inexact: cannot negate
    assert c_not(path_cond("test", False)).op == "not"
    assert c_or([c_true(), path_cond("x", False)]).op == "true"
    either = c_or([path_cond("abc", False), path_cond("abd", True)])
    assert either.op == "or" and len(either.children) == 2 and either.exact
    assert render_cond(either) == (
        "(instr(lower(f.path), ?) > 0 OR instr(f.path, ?) > 0)", ["abc", "abd"]
    )


def test_path_condition_uses_instr_with_bound_text() -> None:
    sql, params = render_cond(path_cond("Src/App", True))
    assert sql == "instr(f.path, ?) > 0" and params == ["Src/App"]
    sql, params = render_cond(path_cond(r"src/.*\.py$", False))
    assert params == ["src/", ".py"]


# -- file search -----------------------------------------------------------------------------


def test_search_files_by_glob_regex_and_substring(index: IndexBuilder) -> None:
    index.add_repo(
        "g", {"src/app.py": "", "src/sub/test_app.py": "", "README.md": "", "docs/app.md": ""}
    )
    eng = EmbeddedLexical(index.store)
    assert [f.path for f in eng.search_files("*.py").files] == ["src/app.py", "src/sub/test_app.py"]
    assert [f.path for f in eng.search_files("src/**/test_*.py").files] == ["src/sub/test_app.py"]
    assert [f.path for f in eng.search_files(r"^docs/.*\.md$").files] == ["docs/app.md"]
    # Base-name starts rank first (shorter paths first among equals), inner matches later.
    assert [f.path for f in eng.search_files("app").files] == [
        "src/app.py",
        "docs/app.md",
        "src/sub/test_app.py",
    ]
    assert [f.path for f in eng.search_files("readme").files] == ["README.md"]
    assert eng.search_files("README", repos=["other"]).files == []


def test_file_pattern_kinds() -> None:
    assert file_pattern_regex("*.py")[1] == "glob"
    assert file_pattern_regex(r"test_.*\.py$")[1] == "regex"
    assert file_pattern_regex("a.b")[1] == "substring"
    assert glob_to_regex("src/**/*.py") == r"^src/(?:.*/)?[^/]*\.py$"
    with pytest.raises(QueryError):
        file_pattern_regex("  ")
    with pytest.raises(QueryError):
        file_pattern_regex("foo(")
