"""Which paths are tests, stubs and changelogs, in each language's own conventions."""

from __future__ import annotations

import pytest

from ctxd.search.path_kinds import (
    is_changelog,
    is_example,
    is_test_or_stub,
    is_test_symbol,
    is_type_declarations,
)
from ctxd.search.questions import asks_for_examples

TESTS = [
    # Python
    "tests/test_retry.py", "test/unit/retry.py", "src/pkg/test_retry.py",
    "pkg/retry_test.py", "conftest.py", "tests/conftest.py", "pkg/testutils.py",
    "dummyserver/server.py", "src/pkg/_vendor/typing.pyi", "pkg/retry.pyi",
    "unit_tests/retry.py", "integration-tests/flow.py", "test.c",
    # Go: tests beside the code, and their data
    "retry_test.go", "binding/binding_test.go", "internal/testdata/golden.go",
    "internal/testutil/server.go",
    # JavaScript / TypeScript
    "lib/router.test.js", "src/client.spec.ts", "src/__tests__/client.ts",
    "src/__mocks__/fs.js", "e2e/login.ts", "src/app.e2e.ts", "spec/router_spec.js",
    "test-utils/render.tsx", "index.d.ts", "types/options.d.mts", "dist/cjs/index.d.cts",
    # Ruby
    "spec/models/user_spec.rb", "lib/user_spec.rb",
    # Java, Kotlin, Scala, C#, Swift, PHP
    "src/test/java/org/x/RetryTest.java", "src/main/java/org/x/RetryIT.java",
    "RetryTests.kt", "core/src/RetrySpec.scala", "Foo.Tests/RetryTests.cs",
    "Tests/AppTests/RouterTests.swift", "UnitTests/Router.cs", "src/RetryTest.php",
    "AppUITests/LaunchScreen.swift", "app/src/androidTest/java/x/Flow.kt",
    # C / C++ / Rust / Dart
    "base/strings_unittest.cc", "net/url_test.cc", "tests/parse.rs", "lib/src/x_test.dart",
    "src/test_parser.c",
    # mocks, fakes, fixtures, stubs
    "pkg/mocks/store.go", "fakes/clock.py", "tests/fixtures/app.py", "stubs/os.pyi",
    "mock-server/index.js",
]

CODE = [
    "retry.go", "binding/binding.go", "src/pkg/retry.py", "lib/router.js",
    "src/client.ts", "src/main/java/org/x/Retry.java", "src/main/java/org/x/Latest.java",
    "contest/solve.go", "contests/a.py", "attest.go", "src/protest.rs", "latest.py",
    "manifest.json", "docs/testing.md", "README.md",
    "src/requests/sessions.py", "jinja2/src/jinja2/lexer.py", "api/openapi-spec.yaml",
    "src/Contest.java", "pkg/specification.go", "render/json.go", "src/latest/index.ts",
    "src/types/options.ts", "lib/add.ts", "src/hooks/d.ts",
    "CONTEST/solve.c", "Latest/Feed.swift", "src/jinja2/tests.py",
    "docs/en/docs/advanced/async-tests.md", "docs/_llm-test.md",
]


@pytest.mark.parametrize("path", TESTS)
def test_tests_and_their_support_are_tests_in_every_language(path: str) -> None:
    assert is_test_or_stub(path)


@pytest.mark.parametrize("path", CODE)
def test_code_that_merely_spells_test_is_not_a_test(path: str) -> None:
    assert not is_test_or_stub(path)


def test_changelogs() -> None:
    for path in ("CHANGES.rst", "docs/CHANGELOG.md", "HISTORY.md", "NEWS", "releases.txt",
                 "docs/en/docs/release-notes.md", "RELEASE_NOTES.md"):
        assert is_changelog(path)
    for path in ("src/changes.py", "prompt/history.py", "docs/history_of_x.md",
                 "news/feed.go"):
        assert not is_changelog(path)


def test_tests_inside_a_source_file_are_known_by_their_module() -> None:
    for symbol in ("tests", "tests.parses_a_tuple", "test.round_trip"):
        assert is_test_symbol(symbol)
    for symbol in (None, "", "Router.route", "testing_mode", "attest", "Retry.tests"):
        assert not is_test_symbol(symbol)


def test_typescript_modules_of_types_by_their_place() -> None:
    for path in ("source/types/hooks.ts", "src/types.ts", "src/api.types.ts",
                 "src/@types/env.ts", "lib/typings/index.mts", "src/interfaces.ts",
                 "app/models/user.interface.ts", "ui/types/props.tsx"):
        assert is_type_declarations(path), path
    for path in ("source/core/Ky.ts", "crates/ignore/src/types.rs", "stdlib/types.py",
                 "src/types.js", "index.d.ts", "types/index.d.ts", "src/typesafe.ts",
                 "src/prototypes.ts"):
        assert not is_type_declarations(path), path


def test_examples_and_demos_are_code_written_to_be_read() -> None:
    for path in ("examples/cookies/index.js", "examples-ts/app.ts", "src/demo_app/main.py",
                 "samples/Hello.java", "docs/snippets/retry.py", "cookbook/auth.rb",
                 "docs_src/handling_errors/tutorial004.py", "doc-examples/a.go"):
        assert is_example(path)
    for path in ("lib/examples.js", "src/sample.py", "example.go", "demo.py",
                 "doc/man_docs.go", "docs/conf.py"):
        assert not is_example(path)
    assert asks_for_examples("show me an example of signing cookies")
    assert asks_for_examples("a usage of the router with two prefixes")
    assert not asks_for_examples("where are cookies signed")
    assert not asks_for_examples("where is the response model used to filter the data")
