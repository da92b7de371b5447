"""What a question asks for (`search.questions`): one word list per kind."""

from __future__ import annotations

from ctxd.search.questions import (
    asks_for_examples,
    asks_for_history,
    asks_for_tests,
    asks_for_types,
    asks_how_to,
    asks_where_in_code,
    wants_prose,
)


def test_tests_and_type_stubs_are_asked_for_by_name() -> None:
    for q in ("where are the retry tests", "which fixtures build the app",
              "the .pyi stubs of the session", "where is Options declared in index.d.ts",
              "the typings of the hooks"):
        assert asks_for_tests(q), q
    for q in ("how are hooks run before a request", "where is the latest release parsed",
              "contest scoring", "what does the type of a hook say"):
        assert not asks_for_tests(q), q


def test_the_documentation_named_turns_a_where_question_to_prose() -> None:
    assert asks_where_in_code("where is the timeout enforced")
    for q in ("where do the docs explain timeouts", "where in the guides is the proxy set",
              "which tutorials cover the router"):
        assert not asks_where_in_code(q), q
    # prose answers questions naming its pages, code answers where-questions
    assert wants_prose("is there a getting started page for the CLI")
    assert wants_prose("what does the changelog say about 2.0")
    assert not wants_prose("how does the pool decide to block")
    assert not wants_prose("my token disappeared; where is that decided?")


def test_how_to_examples_and_history() -> None:
    assert asks_how_to("how do I turn off colours?")
    assert not asks_how_to("how do I find where the retry loop is? which function runs it")
    assert asks_for_examples("show me a sample of the router")
    assert not asks_for_examples("where is the router built")
    assert asks_for_history("which version deprecated the flag")
    assert not asks_for_history("how is the flag parsed")


def test_types_interfaces_and_options_are_asked_for_by_name() -> None:
    for q in ("what type does a beforeRequest hook have", "which options does retry take",
              "where is the Hooks interface declared", "the fields of the response schema"):
        assert asks_for_types(q), q
    for q in ("how are hooks run before a request", "where is the timeout enforced"):
        assert not asks_for_types(q), q
