"""A version the question names picks that version's page (`search.versions`), and
questions about the project as a whole, or what it requires, are answered by its prose
(`search.questions`). Pure: strings and hits in, order out."""

from __future__ import annotations

from ctxd.search.explain_rank import explain_hit
from ctxd.search.hybrid import FusionOptions, rank_hybrid
from ctxd.search.models import Hit, MatchSource
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
