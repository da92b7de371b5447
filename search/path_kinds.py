"""What a file is, by its path: tests and what they carry, type stubs, examples,
changelogs, prose.

One rule for every step that tells code from tests: hybrid ranking demotes tests unless
the question asks for them (`search.hybrid.rerank`), the lexical engine puts them after
the source among equal scores (`search.lexical.engine`), and identical copies prefer the
source over a test's copy (`search.copies.copy_tier`). The rule follows each language's
own conventions, so a repository where tests sit beside the code (Go's `x_test.go`,
JavaScript's `x.test.ts`, Java's `XTest.java`) ranks its code first like a Python one:

- folders: `test`, `tests`, `testing`, `testdata`, `__tests__`, `spec`, `e2e`, fixtures,
  mocks, fakes, stubs, dummies, and names built on them (`unit_tests`, `test-utils`,
  `Foo.Tests`, `UnitTests`, `AppUITests`, `androidTest`);
- files: `test_x.py`, `test.c`, `x_test.go` (and `.py`, `.cc`, `.rs`, `.dart`, ...),
  `x_spec.rb`, `x.test.ts`, `x.spec.js`, `x_unittest.cc`, `XTest.java`, `XTests.swift`,
  `XIT.java`, `XSpec.scala`, `conftest.py`; and type stubs (`.pyi`, `.d.ts`).

Folder names ignore case; the CamelCase file suffixes (`Test`, `Tests`, `IT`, `Spec`)
need their capital, so `Latest.java` and `contest.go` stay code; a page of prose is not a
test by its name (`async-tests.md` is a guide), only by its folder. `tests.py` is not a test
by its name alone: Django's apps keep their tests there, but Jinja's `tests.py` is the
library's own module of template tests. Tests kept inside a source file are known by
their definition's name instead (`is_test_symbol`: Rust's `mod tests`).

Code in folders of examples, samples and demos (`is_example`) uses the library rather
than being it: hybrid ranking puts it after the library's code unless the question asks
for an example or a usage (`search.questions.asks_for_examples`).
"""

from __future__ import annotations

import functools
import re

from ctxd.indexer.walk.translations import language_code

__all__ = ["EXAMPLE_WORDS", "is_changelog", "is_example", "is_locale_data", "is_prose",
           "is_stub", "is_test_or_stub", "is_test_symbol", "is_type_declarations"]

_PROSE = re.compile(r"\.(md|mdx|markdown|rst|txt|adoc|asciidoc|rdoc|textile|org|pod)$",
                    re.IGNORECASE)


_DOCS_DATA = re.compile(r"(^|/)(docs?|manual|man)/.*\.(ya?ml|json)$", re.IGNORECASE)
"""YAML / JSON in a documentation folder: a manual written as data (jq's
`docs/content/manual/manual.yml`, embedded when mostly prose) is a page, not code."""


def is_prose(path: str) -> bool:
    """Documentation pages (`.md`, `.rst`, `.txt`, `.adoc`, ..., YAML / JSON under `docs/`),
    not code or data."""
    return bool(_PROSE.search(path)) or bool(_DOCS_DATA.search(path))

_TEST_DIRS = frozenset({
    "test", "tests", "testing", "testdata", "test_data", "testsuite", "testsuites",
    "testutil", "testutils", "testlib", "testhelpers", "__tests__", "__mocks__",
    "__fixtures__", "__snapshots__", "spec", "specs", "e2e", "fixture", "fixtures",
    "mock", "mocks", "fake", "fakes", "stub", "stubs"})
"""Folders of tests and of what they carry (lower case)."""

_TEST_DIR = re.compile(r"^tests?[_.-]|[_.-]tests?$|^dummy|^mock[_-]", re.IGNORECASE)
"""Folders named after tests: `test_utils`, `tests-e2e`, `unit_tests`, `Foo.Tests`,
`dummyserver`, `mock-server`."""

_CAMEL_TEST_DIR = re.compile(r"[A-Za-z0-9]Tests?$")
"""`UnitTests`, `IntegrationTests`, `AppUITests`, `androidTest` (a capital T: `contests`
stays)."""

_TEST_FILE = re.compile(
    r"^(test_|tests_)[^/]*$|^test\.[a-z0-9]+$"  # test_retry.py, cJSON's test.c
    r"|[_-](tests?|unittests?)\.[a-z0-9]+$|_spec\.[a-z0-9]+$"  # x_test.go, x_unittest.cc, x_spec.rb
    r"|\.(test|spec|tests|e2e)\.[a-z0-9]+$"  # client.test.ts, app.spec.js
    r"|^(conftest|testcase|testutils?|test_?helpers?)\.[a-z0-9]+$",
    re.IGNORECASE)
_CAMEL_TEST_FILE = re.compile(
    r"[a-z0-9](Test|Tests|TestCase|IT|Spec|Specs)\."
    r"(java|kt|kts|scala|groovy|cs|fs|vb|php|swift|m|mm|dart|cpp|cc|h|ts|js)$")
"""`RetryTest.java`, `RetryTests.swift`, `RetryIT.java`, `RetrySpec.scala`."""


_STUBS = (".pyi", ".d.ts", ".d.mts", ".d.cts")


def is_stub(path: str) -> bool:
    """A type stub: Python's `.pyi`, TypeScript's declaration files (`.d.ts`)."""
    return path.endswith(_STUBS)


@functools.lru_cache(maxsize=1 << 16)
def is_test_or_stub(path: str) -> bool:
    """Tests and test support (the module docstring's folders and files) and type stubs
    (Python's `.pyi`, TypeScript's declaration files `.d.ts`: types without the code), by
    a repository-relative path (`/` separated)."""
    *folders, name = path.split("/")
    if name.endswith(_STUBS) or (not is_prose(name) and (
            _TEST_FILE.search(name) or _CAMEL_TEST_FILE.search(name))):
        return True
    return any(f.lower() in _TEST_DIRS or _TEST_DIR.search(f) or _CAMEL_TEST_DIR.search(f)
               for f in folders)


def is_test_symbol(symbol: str | None) -> bool:
    """A definition inside a module of tests kept in a source file: Rust's `#[cfg(test)]
    mod tests` (`tests`, `tests.parses_a_tuple`), as the chunker names it."""
    return symbol is not None and symbol.split(".", 1)[0] in ("tests", "test")


EXAMPLE_WORDS = r"examples?|samples?|demos?|snippets?|tutorials?|cookbook"
"""Words for code written to be read, as folder names and in questions
(`search.questions.asks_for_examples`)."""
_EXAMPLE_DIR = re.compile(
    rf"^[_.]?({EXAMPLE_WORDS}|recipes|playground)"
    r"([_.-].*)?$|^docs?[_.-](src|source|examples?|snippets?|code)$", re.IGNORECASE)
"""Folders of code written to be read and copied (`examples`, `examples-ts`, `demo_app`,
`samples`, `snippets`, `cookbook`, Go's `_examples` that the go tool skips, and the
documentation's own code: `docs_src`, `doc-examples`; not `doc/` itself, which may be a
package that makes documentation)."""
_EXAMPLE_FILE = re.compile(
    r"^(examples?|demo)[_-][^/]+\.[a-z0-9]+$|[_-](examples?|demo)\.[a-z0-9]+$"
    r"|(^|_)example_test\.go$", re.IGNORECASE)
"""Example programs by their file's name, a word joined to the example's subject:
`example_server.go`, `demo-app.js`, `routing_example.rs`, and Go's testable examples
(`example_test.go`, `client_ip_example_test.go`), which the package's documentation shows.
Not a bare `example.go`, `examples.js` or `demo.py`: in a package they are as often the
library's own module (Go's `testing/example.go` runs examples), nor `sample`."""


_DOCS_CODE_DIR = re.compile(r"^docs?[_.-](src|source|examples?|snippets?|code)$", re.IGNORECASE)


@functools.lru_cache(maxsize=1 << 16)
def is_docs_code(path: str) -> bool:
    """Code in the documentation's own folders of code (`docs_src`, `doc-examples`): the
    snippets a page shows, which the page explains."""
    return any(_DOCS_CODE_DIR.match(f) for f in path.split("/")[:-1])


@functools.lru_cache(maxsize=1 << 16)
def is_example(path: str) -> bool:
    """Code in a folder of examples, samples, demos or snippets, or an example program by
    its name (`_EXAMPLE_FILE`): it uses the library's code, it is not where the library
    does it."""
    *folders, name = path.split("/")
    return bool(_EXAMPLE_FILE.search(name)) or any(_EXAMPLE_DIR.match(f) for f in folders)


_TS = (".ts", ".tsx", ".mts", ".cts")
_TYPE_DIRS = frozenset({"types", "typings", "@types", "interfaces"})
_TYPE_FILES = re.compile(
    r"^(types?|typings|interfaces)\.[mc]?tsx?$|\.(types?|interfaces?)\.[mc]?tsx?$")


@functools.lru_cache(maxsize=1 << 16)
def is_type_declarations(path: str) -> bool:
    """TypeScript modules of type declarations by their conventional place:
    `types.ts`, `x.types.ts`, `interfaces.ts`, anything under `types/`, `typings/` or
    `@types/`. They say what the code's values look like (with the doc comments a
    question's words often match), not what the code does. TypeScript only: Rust's
    `types.rs` or Python's `types.py` are code; declaration files (`.d.ts`) are stubs
    (`is_test_or_stub`)."""
    *folders, name = path.split("/")
    if not name.endswith(_TS) or name.endswith(_STUBS):
        return False
    return bool(_TYPE_FILES.search(name)) or any(f in _TYPE_DIRS for f in folders)


_CHANGELOG = re.compile(
    r"(^|/)(changes|changelog|history|news|releases?|release[_-]?notes)"
    r"(([._-][a-z]{2}(?:[-_][a-z]{2,4})?)?"  # a translation: CHANGELOG_CN.md, NEWS.zh-CN.md
    r"\.(md|markdown|mdx|rst|txt|adoc|asciidoc|org|rdoc))?$", re.IGNORECASE)


def is_changelog(path: str) -> bool:
    """`CHANGES.rst`, `CHANGELOG.md`, `HISTORY.md`, `NEWS`, `release-notes.md`, ... and their
    translations (`CHANGELOG_CN.md`, `CHANGELOG.zh-CN.md`): pages, not a module that
    happens to be called `history.py`."""
    return bool(_CHANGELOG.search(path))


_LOCALE_FOLDERS = frozenset({"locale", "locales", "i18n", "l10n", "lang", "langs",
                             "languages", "translations", "nls"})
"""Folders that hold one file per language."""
_LOCALE_NAME = re.compile(r"[a-z]{2,3}(?:[-_][a-z0-9]{2,4}){0,2}", re.IGNORECASE)
"""A locale's name: `fo`, `tl-ph`, `es-do`, `sr-cyrl`, `zh_Hant_TW` (more than the
languages `language_code` knows: locale folders hold any)."""
_NOT_LOCALES = frozenset({"all", "api", "app", "cli", "lib", "mod", "new", "old", "src",
                          "run", "get", "set", "use", "fmt", "map", "ids", "key", "keys"})


def is_locale_data(path: str) -> bool:
    """A language's strings and formats written as code, one file per language in a
    locale folder: dayjs's `src/locale/ru.js`, `locales/en-gb.ts`, `i18n/zh_CN.py` (not a
    page: translated docs are `indexer.walk.translations`' business). Many near-identical
    files that answer only a question about that language."""
    *folders, name = path.split("/")
    if is_prose(path) or "." not in name or not any(
            f.lower() in _LOCALE_FOLDERS for f in folders):
        return False
    stem = name.split(".", 1)[0]
    return language_code(stem) is not None or (
        bool(_LOCALE_NAME.fullmatch(stem)) and stem.lower() not in _NOT_LOCALES)
