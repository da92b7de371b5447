"""What a question asks for (`search.questions`): one word list per kind."""

from __future__ import annotations

from ctxd.search.questions import (
    asks_about_tests,
    asks_for_examples,
    asks_for_history,
    asks_for_tests,
    asks_for_types,
    asks_how_to,
    asks_task,
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


def test_tests_as_the_subject_of_a_question_are_told_from_a_question_naming_testing() -> None:
    for q in ("tests for keymap ids like <C-h>", "tests that the retry policy retries",
              "unit tests for cookie domain and path matching", "Tests of version ranges",
              "test that the public API surface has not changed",
              "where are the tests for the parser", "which tests cover redirects"):
        assert asks_about_tests(q), q
        assert asks_for_tests(q), q
    for q in ("testing my plugs without starting a web server",
              "mock a getter's value in a component test",
              "in tests, where are all store actions replaced by spies",
              "how do I test my app with the TestClient?", "the contest results",
              "where are the retry tests"):
        assert not asks_about_tests(q), q


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


# -- a how-to however phrased (issue 42), and what is not one ------------------------------

HOW_TO = (
    "how do I run a task after returning the response",
    "How can I turn off colours?",
    "what's the recommended way to split my API into several modules?",
    "what is the best way to set a cookie on the response",
    "the simplest way to retry a failed upload",
    "I want to update only some fields of an item with PATCH",
    "I'd like to stream a large file to the client",
    "i need to send a client certificate",
    "need to protect routes with HTTP basic username and password",
    "want to log every request the pool makes",
    "is there a way to set the timeout per host?",
    "Is there any option to keep the trailing newline?",
    "any way to test async code with an async client instead of the test client?",
    "is it possible to read a custom header in an endpoint?",
    "should I reuse one session for many requests?",
    "can we share one pool between threads?",
    "could you show me how to validate that a query string has a maximum length",
    "what should I do to accept an uploaded file from a form",
    "the app runs behind a proxy with a path prefix, what do I configure?",
    "how can a parameter in the URL path be restricted to a few predefined values",
    "where do I change the response status code inside the function",
    "where should I put the settings of my app?",
    "steps to debug my application in the editor",
    "ways to set the title and version shown in the API docs",
    "tutorial for connecting to a SQL database",
    "guide to splitting a bigger application into several files",
    "how to strip the blank lines tags leave",
)
NOT_HOW_TO = (
    "where is the retry delay computed?",
    "which function parses the header",
    "where do I find the retry loop?",  # the place in the code
    "where do we decide whether a session expired?",
    "how does the pool decide to block?",
    "how are dates serialized to JSON strings",
    "how is the bearer token taken from the Authorization header",
    "how can a path operation return 201 for a new item",  # a task (asks_task)
    "how long do we pause before the third attempt after two failures",
    "going through a proxy: when do we open a raw tunnel",
    "which module prints the TLS library version",
    "how are flags inherited from parent commands",
    "I want to know where the redirect limit is enforced",  # asks where in the code
    "serve a directory of images and CSS files",  # a task, not a how-to in words
    "Retry.increment is_exhausted",
    "jsonable_encoder",
)


def test_a_how_to_is_known_however_phrased() -> None:
    for q in HOW_TO:
        assert asks_how_to(q), q
        assert wants_prose(q), q
        assert not asks_where_in_code(q), q
    for q in NOT_HOW_TO:
        assert not asks_how_to(q), q


TASKS = (
    "serve a directory of images and CSS files",
    "Return a 404 error to the client when an item does not exist",
    "return 404 when the item is missing",
    "allow my React frontend on another domain to call the API",
    "apply a dependency to every route of the whole application",
    "open a websocket connection and exchange messages with the browser",
    "set up logging for every request",
    "turn off colours in the output",
    "adding a middleware that measures the processing time of every request",
    "receiving username and password as form fields instead of JSON",
    "making an endpoint answer with 201 Created",
    "stream events to the browser",  # an object with no determiner: a common task verb
    "Accept JSON requests that send no Content-Type header",
    "how can a path operation return 201 for a new item but 200 for an update?",
)
NOT_TASKS = (
    "background thread that keeps redrawing a region of the terminal",
    "pretty printer: keep a nested container on one line if it fits",
    "calling a template macro: bind positional arguments, then keywords",
    "exporting console output as HTML: where is the export driven",
    "cross-host redirects in the pool manager",
    "some servers send deflate data without the zlib wrapper",
    "work out which language a snippet is written in",
    "figure out how many bytes remain to be sent",
    "string of bytes left to decode",
    "where are query strings parsed",
    "where do I find the retry loop?",
    "how are path parameters deserialized",
    "HTTPBasic credentials decoded",
    "Query user",
    "Retry.increment is_exhausted",
    "jsonable_encoder",
    "convert a datetime; where is that implemented?",
    "",
)


def test_a_task_is_known_by_the_place_of_its_verb_not_by_a_list_of_verbs() -> None:
    for q in TASKS:
        assert asks_task(q), q
        assert wants_prose(q), q  # the page that shows it is not put after the code
    for q in NOT_TASKS:
        assert not asks_task(q), q
    # a made-up verb is a verb by its place, before a determiner
    assert asks_task("frobnicate the widgets before the first render")
    assert not asks_task("frobnicate widgets before the first render")
    # where in the code wins over a task's form
    assert not wants_prose("read the config file: where is that done?")
