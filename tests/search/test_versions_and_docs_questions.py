"""A version the question names picks that version's page (`search.versions`);
questions about the project as a whole, or what it requires, are answered by its prose
(`search.questions`); a name without a symbol table's definition is defined by the line
that declares it (`search.definitions.shaped_definitions`). Pure: strings and hits in,
order out."""

from __future__ import annotations

from ctxd.search.definitions import definitions_first, shaped_definitions
from ctxd.search.explain_rank import explain_hit
from ctxd.search.hybrid import FusionOptions, rank_hybrid
from ctxd.search.models import Hit, LineMatch, MatchSource
from ctxd.search.questions import asks_for_history, wants_prose
from ctxd.search.versions import path_versions, query_versions, version_match

SEM = MatchSource.SEMANTIC


def scored(path: str, score: float, language: str = "markdown") -> Hit:
    return Hit("r", path, language, 1, 9, score, (SEM,))


def test_versions_are_read_from_questions_but_not_counts_or_status_codes() -> None:
    assert query_versions("what were the breaking API changes in Alamofire 5") == ((5,),)
    assert query_versions("what changed in plug 1.19") == ((1, 19),)
    assert query_versions("what changed when upgrading from Guzzle 6 to 7") == ((6,), (7,))
    assert query_versions("migrating from v4 to v5") == ((4,), (5,))
    assert query_versions("is version 2 of the API still served") == ((2,),)
    for q in ("take only the first 3 results", "return 404 when an item is missing",
              "copy 3 to 4 items", "decode base64 input", "serve HTTP/2 and http2 frames"):
        assert query_versions(q) == (), q


def test_versions_in_paths_stand_apart_from_names() -> None:
    assert path_versions("Documentation/Alamofire 5.0 Migration Guide.md") == ((5, 0),)
    assert path_versions("docs/content/manual/v1.5-1.7/manual.yml") == ((1, 5), (1, 7))
    assert path_versions("api/v2/users.go") == ((2,),)
    for p in ("src/http2.py", "src/base64.c", "docs_src/tutorial001_py310.py",
              "tests/test_2.py"):
        assert path_versions(p) == (), p
    assert version_match(((5,),), "Alamofire 5.0 Migration Guide.md") is True
    assert version_match(((5,),), "Alamofire 4.0 Migration Guide.md") is False
    assert version_match(((5,),), "CHANGELOG.md") is None
    assert version_match((), "Alamofire 4.0 Migration Guide.md") is None


def test_the_named_versions_page_goes_before_the_other_versions_pages() -> None:
    legs = {"semantic": [scored("Documentation/Alamofire 4.0 Migration Guide.md", 0.80),
                         scored("Documentation/Alamofire 3.0 Migration Guide.md", 0.78),
                         scored("Documentation/Alamofire 5.0 Migration Guide.md", 0.70),
                         scored("Source/Session.swift", 0.60, "swift")]}
    q = "what were the breaking API changes in Alamofire 5"
    ranked = rank_hybrid(q, legs)
    assert ranked[0].path == "Documentation/Alamofire 5.0 Migration Guide.md"
    parts = explain_hit(q, legs, ranked[0], FusionOptions())
    assert ("its path names a version the question names", 1.3) in [
        (p.feature, p.value) for p in parts]
    # a question naming no version keeps the order; so does the factor turned off
    assert rank_hybrid("what were the breaking API changes", legs)[0].path.endswith(
        "4.0 Migration Guide.md")
    off = FusionOptions(promote_named_version=1.0, demote_other_version=1.0)
    assert rank_hybrid(q, legs, off)[0].path.endswith("4.0 Migration Guide.md")


def test_questions_about_the_project_as_a_whole_want_its_prose() -> None:
    for q in ("which extensions ship with sinatra-contrib and what does each one add?",
              "list of attacks rack-protection defends against",
              "why use pinia instead of Vuex",
              "minimum iOS and Swift versions required",
              "which Python versions are supported"):
        assert wants_prose(q), q
    for q in ("how does the pool pick the next connection",
              "where are database migrations applied",
              "the list of handlers is sorted where?"):
        assert not wants_prose(q), q


def test_what_a_release_requires_is_not_its_history_but_what_changed_is() -> None:
    for q in ("minimum iOS and Swift versions required",
              "what is the minimum Python version?", "which Python versions are supported"):
        assert not asks_for_history(q), q
    for q in ("what were the breaking API changes in Alamofire 5",
              "what changed in plug 1.19", "migrating from v4 to v5",
              "which version deprecated the flag"):
        assert asks_for_history(q), q
    assert not asks_for_history("where are database migrations applied")


def lexical(path: str, *lines: str, language: str = "dart") -> Hit:
    return Hit("r", path, language, 1, 1, 1.0, (MatchSource.LEXICAL,),
               matches=tuple(LineMatch(i, t) for i, t in enumerate(lines, 1)))


def test_a_line_that_declares_the_name_is_its_definition_without_a_symbol_table() -> None:
    """Dart has no symbol table here: the lexical leg's line `bool wasParsed(String name)`
    declares the name; calls, uses as a type, `throw X(`, `return x(` and prose do not."""
    legs = [lexical("lib/src/parser.dart", "} on ArgParserException catch (error) {",
                    "throw ArgParserException(", "return wasParsed(name);"),
            lexical("test/args_test.dart", "group('.wasParsed()', () {",
                    "expect(results.wasParsed('fast'), isTrue);"),
            lexical("README.md", "call the wasParsed() method", language="markdown"),
            lexical("lib/src/arg_results.dart", "/// Whether", "  bool wasParsed(String name) {"),
            lexical("lib/src/arg_parser_exception.dart",
                    "class ArgParserException extends FormatException {")]
    found = shaped_definitions("wasParsed", legs)
    assert [(d.path, d.line) for d in found] == [("lib/src/arg_results.dart", 2)]
    assert [d.path for d in shaped_definitions("ArgParserException", legs)] == [
        "lib/src/arg_parser_exception.dart"]
    ranked = definitions_first([lexical(h.path) for h in legs], found)
    assert ranked[0].path == "lib/src/arg_results.dart"
    # keyword-introduced definitions of other languages; a question is no identifier query
    other = [lexical("lua/m.lua", "function M.setup(opts)", language="lua"),
             lexical("x.go", "func (c *Client) Dial(addr string) error {", language="go"),
             lexical("Log.cs", "public interface ILogEventEnricher", language="csharp"),
             lexical("Stack.cs", "class EnricherStack : IEnumerable<ILogEventEnricher>",
                     "readonly ILogEventEnricher? _top;", language="csharp")]
    assert [d.path for d in shaped_definitions("setup", other)] == ["lua/m.lua"]
    assert [d.path for d in shaped_definitions("Dial", other)] == ["x.go"]
    assert [d.path for d in shaped_definitions("ILogEventEnricher", other)] == ["Log.cs"]
    assert shaped_definitions("how is the setup of a plugin done", other) == []


def test_a_name_declared_in_many_files_is_common() -> None:
    many = [lexical(f"lib/m{i}.dart", "  void run() {") for i in range(7)]
    assert shaped_definitions("run", many) == []
