"""An "example" question is answered by example code, not by prose for the word alone
(`search.questions.wants_prose`, `search.path_kinds.is_example`, `search.hybrid`); a
version that is a folder of the code (`presenter/v3/`) is an API's version, which moves
no page (`search.versions.release_versions`). Pure: strings and hits in, order out."""

from __future__ import annotations

from ctxd.search.explain_rank import explain_hit
from ctxd.search.hybrid import FusionOptions, demotes_example, rank_hybrid, rerank
from ctxd.search.models import Hit, MatchSource
from ctxd.search.path_kinds import is_docs_code, is_example
from ctxd.search.questions import asks_how_to, asks_task, wants_prose
from ctxd.search.rank_features import candidates
from ctxd.search.rank_model import load_model, score_candidates
from ctxd.search.versions import release_versions

SEM = MatchSource.SEMANTIC


def scored(path: str, score: float, language: str = "markdown") -> Hit:
    return Hit("r", path, language, 1, 9, score, (SEM,))


def test_example_programs_by_folder_and_by_name() -> None:
    for path in ("_examples/graceful/main.go", "chi/_examples/versions/presenter/v3/a.go",
                 "middleware/client_ip_example_test.go", "example_test.go",
                 "cmd/example_server.go", "src/demo-app.js", "src/routing_example.rs",
                 "examples/cookies/index.js", "docs_src/cors/tutorial001.py"):
        assert is_example(path), path
    for path in ("src/example.cpp", "lib/examples.js", "demo.py", "testing/example.go",
                 "src/counterexample.py", "src/sample.py", "_internal/x.go"):
        assert not is_example(path), path
    assert is_docs_code("docs_src/cors/tutorial001.py")
    assert not is_docs_code("_examples/graceful/main.go")


def test_the_word_example_does_not_ask_for_prose() -> None:
    for q in ("example program that uses option groups and positional arguments",
              "example of versioned API responses with v1, v2 and v3 presenters",
              "sample app that reads its configuration from a JSON file"):
        assert not wants_prose(q), q
        assert not asks_how_to(q), q
    assert not asks_how_to("example of enabling CORS for a frontend on another origin")
    # naming the documentation still does, and so does a usage question
    assert wants_prose("example in the docs of enabling CORS")
    assert wants_prose("how do I use option groups, is there an example?")


def test_an_example_question_puts_the_example_program_before_the_readme() -> None:
    legs = {"semantic": [scored("README.md", 0.80),
                         scored("examples/groups/main.cpp", 0.78, "cpp"),
                         scored("include/options.hpp", 0.70, "cpp")]}
    q = "example program that uses option groups and positional arguments"
    assert rank_hybrid(q, legs)[0].path == "examples/groups/main.cpp"
    model = load_model()
    assert model is not None
    fitted = sorted(score_candidates(model, candidates(q, legs)), key=lambda h: -h.score)
    assert fitted[0].path == "examples/groups/main.cpp"


def test_a_task_lets_an_example_program_answer_but_not_the_docs_snippets() -> None:
    q = "shut down the HTTP server gracefully"
    assert asks_task(q)
    assert not demotes_example("_examples/graceful/main.go", False, True)
    assert demotes_example("docs_src/graceful/tutorial001.py", False, True)
    assert demotes_example("_examples/graceful/main.go", False, False)
    assert not demotes_example("_examples/README.md", False, False)  # a page, not code
    hits = [scored("_examples/graceful/main.go", 0.8, "go"),
            scored("middleware/timeout.go", 0.7, "go")]
    best = max(rerank(q, hits, FusionOptions()), key=lambda h: h.score)
    assert best.path == "_examples/graceful/main.go"
    # a behaviour question still puts the library's code before the example's
    best = max(rerank("how is a request's deadline enforced", hits, FusionOptions()),
               key=lambda h: h.score)
    assert best.path == "middleware/timeout.go"


def test_a_version_that_is_a_folder_of_the_code_moves_no_page() -> None:
    assert release_versions(((1,), (2,), (3,)), ["presenter/v3/article.go", "main.go"]) == (
        (1,), (2,))
    assert release_versions(((5,),), ["Source/Session.swift"]) == ((5,),)
    assert release_versions((), ["api/v2/users.go"]) == ()
    q = "example of versioned API responses with v1, v2 and v3 presenters"
    legs = {"semantic": [scored("_examples/versions/presenter/v3/article.go", 0.76, "go"),
                         scored("_examples/versions/presenter/v1/article.go", 0.74, "go"),
                         scored("_examples/versions/presenter/v2/article.go", 0.73, "go"),
                         scored("_examples/versions/main.go", 0.78, "go"),
                         scored("docs/v2/migrating.md", 0.5)]}
    ranked = rank_hybrid(q, legs)
    assert ranked[0].path == "_examples/versions/main.go"
    # no factor on code, nor on the page: v2 is the API's (a folder of the code)
    for hit in ranked:
        parts = explain_hit(q, legs, hit, FusionOptions())
        assert not [p for p in parts if "version" in p.feature], (hit.path, parts)


def test_a_release_version_still_moves_pages_only() -> None:
    legs = {"semantic": [scored("Documentation/Alamofire 4.0 Migration Guide.md", 0.80),
                         scored("Documentation/Alamofire 5.0 Migration Guide.md", 0.70),
                         scored("Source/v5/Session.swift", 0.60, "swift")]}
    q = "what were the breaking API changes in Alamofire 4"
    # the code names 5 in a folder: 5 is not a release the question could mean, 4 is
    ranked = rank_hybrid(q, legs)
    assert ranked[0].path == "Documentation/Alamofire 4.0 Migration Guide.md"
    code = next(h for h in ranked if h.path.endswith(".swift"))
    assert not [p for p in explain_hit(q, legs, code, FusionOptions())
                if "version" in p.feature]


def test_a_translated_changelog_is_a_changelog() -> None:
    from ctxd.search.path_kinds import is_changelog

    for path in ("CHANGELOG_CN.md", "CHANGELOG.zh-CN.md", "docs/HISTORY_ja.md", "CHANGES",
                 "CHANGELOG.md", "release_notes.md"):
        assert is_changelog(path), path
    for path in ("history.py", "src/changes.py", "src/changes_cn.py", "news_feed.md",
                 "src/history_ja.ts"):
        assert not is_changelog(path), path


def test_a_changelog_named_in_chinese_or_japanese_asks_about_history() -> None:
    from ctxd.search.questions import asks_for_history

    for q in ("版本更新记录", "vConsole 的更新日志在哪里", "変更履歴", "릴리스 노트"):
        assert asks_for_history(q), q
    for q in ("设置开关按钮的位置", "如何编写一个插件"):
        assert not asks_for_history(q), q


def test_an_example_question_does_not_demote_gos_testable_examples_as_tests() -> None:
    hits = [scored("middleware/client_ip_example_test.go", 0.8, "go"),
            scored("middleware/client_ip.go", 0.7, "go"),
            scored("middleware/client_ip_test.go", 0.75, "go")]

    def best(q: str) -> str:
        return max(rerank(q, hits, FusionOptions()), key=lambda h: h.score).path

    assert best("example of reading the client IP behind a proxy") == (
        "middleware/client_ip_example_test.go")
    # not asked for an example: a test like any other, after the code
    assert best("how is the client IP read behind a proxy") == "middleware/client_ip.go"
