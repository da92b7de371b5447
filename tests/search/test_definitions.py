"""Definitions first (issue 42): what a query names, and how the ranking moves its
defining files (pure: hits in, hits out)."""

from __future__ import annotations

from ctxd.search.definitions import Definition, applies, definitions_first, named
from ctxd.search.models import Hit, MatchSource


def hit(path: str, score: float, start: int = 1, end: int = 10) -> Hit:
    return Hit(repository="r", path=path, language="python", start_line=start,
               end_line=end, score=score, sources=(MatchSource.SEMANTIC,))


def test_named_reads_identifiers_dotted_names_and_capitalised_words() -> None:
    assert named("Retry.increment is_exhausted MaxRetryError") == [
        ("increment", "Retry"), ("Retry", None), ("is_exhausted", None),
        ("MaxRetryError", None)]
    assert named("CliRunner invoke catch_exceptions") == [
        ("CliRunner", None), ("catch_exceptions", None)]
    assert named("`MAX_RETRIES`") == [("MAX_RETRIES", None)]
    assert named("EnvironBuilder") == [("EnvironBuilder", None)]
    assert named("wheel") == [("wheel", None)]
    assert named("how retries work") == []


def test_only_identifier_queries_get_the_rule() -> None:
    assert applies("Retry.increment is_exhausted")
    assert applies("EnvironBuilder")
    assert not applies("where is MaxRetryError raised when retries run out?")
    assert not applies("how are redirects followed")


def test_defining_files_go_first_most_names_first_then_in_ranked_order() -> None:
    ranked = [hit("a.py", 0.9), hit("tests/b.py", 0.5), hit("c.py", 0.4),
              hit("test.py", 0.2, 20, 40)]
    files = [Definition("r", "test.py", "python", 2, 25, 30),
             Definition("r", "c.py", "python", 1, 3, 5),
             Definition("r", "tests/b.py", "python", 1, 1, 2)]
    out = definitions_first(ranked, files)
    assert [h.path for h in out] == ["test.py", "tests/b.py", "c.py", "a.py"]
    assert out[0].score > out[1].score > out[2].score > out[3].score
    assert out[0].sources == (MatchSource.SEMANTIC,)  # what found it


def test_a_defining_file_no_leg_found_enters_on_its_definition() -> None:
    ranked = [hit("a.py", 0.9)]
    files = [Definition("r", "lib/test.py", "python", 1, 3, 4)]
    text = "import x\n\nclass EnvironBuilder:\n    pass\n"
    out = definitions_first(ranked, files, {("r", "lib/test.py"): text})
    assert [h.path for h in out] == ["lib/test.py", "a.py"]
    assert (out[0].start_line, out[0].end_line) == (3, 4)
    assert out[0].snippet == "class EnvironBuilder:\n    pass"
    assert out[0].sources == (MatchSource.SYMBOL,)


def test_no_definition_leaves_the_ranking_alone() -> None:
    ranked = [hit("a.py", 0.9), hit("b.py", 0.5)]
    assert definitions_first(ranked, []) == ranked


def test_ruby_predicate_and_bang_names_are_named_as_written() -> None:
    assert named("copy?") == [("copy?", None)] and applies("copy?")
    assert named("run!") == [("run!", None)] and applies("run!")
    assert named("Request.copy?")[:2] == [("copy?", "Request"), ("Request", None)]
    # a question's `?` after a name asks for the name too
    assert named("load_config_file?") == [("load_config_file?", None),
                                          ("load_config_file", None)]


def test_a_container_and_a_plain_member_name_the_member_inside_the_container() -> None:
    assert named("Stream printf") == [("printf", "Stream")] and applies("Stream printf")
    assert named("ERBTest engine") == [("engine", "ERBTest")]
    assert named("Request valid?") == [("valid?", "Request")]
    # ordinary questions stay out
    assert not applies("how does the stream printf")
    assert not applies("why does printf fail?")
    assert not applies("printing rows")


def test_a_name_quoted_in_backticks_because_it_holds_blanks_is_named_as_written() -> None:
    """Kotlin test functions (`` fun `default option`() ``) keep their backticks as symbols;
    the container written before the name narrows it; a code span in prose is not a name
    unless it holds blanks."""
    assert named("OptionTest.`default option`") == [("`default option`", "OptionTest"),
                                                    ("OptionTest", None)]
    assert named("OptionTest `two options`")[0] == ("`two options`", "OptionTest")
    assert applies("OptionTest.`default option`") and applies("`eager options`")
    assert named("how does `parse_args` work") == [("parse_args", None)]
