"""Language detection, lang: aliases, and offline grammar loading."""

from __future__ import annotations

import pytest

from ctxd.indexer.chunk.grammars import SYNTAX, grammar_status, load_grammar
from ctxd.indexer.chunk.languages import (
    LANGUAGES,
    Family,
    detect_language,
    family,
    linguist_name,
    normalize_language,
)

REQUIRED_GRAMMARS = [
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "rust",
    "java",
    "c",
    "cpp",
    "ruby",
    "csharp",
    "php",
    "kotlin",
    "swift",
    "scala",
    "lua",
    "elixir",
]


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("src/urllib3/util/retry.py", "python"),
        ("stubs/types.pyi", "python"),
        ("web/app.js", "javascript"),
        ("web/App.jsx", "javascript"),
        ("lib/esm/index.mjs", "javascript"),
        ("src/index.ts", "typescript"),
        ("src/App.tsx", "tsx"),
        ("cmd/server/main.go", "go"),
        ("src/lib.rs", "rust"),
        ("src/main/java/a/App.java", "java"),
        ("src/core.c", "c"),
        ("include/core.h", "c"),
        ("src/widget.cpp", "cpp"),
        ("src/widget.cc", "cpp"),
        ("include/widget.hpp", "cpp"),
        ("lib/tasks/build.rake", "ruby"),
        ("app/models/user.rb", "ruby"),
        ("README.md", "markdown"),
        ("docs/README.MD", "markdown"),
        ("docs/index.rst", "rst"),
        ("package.json", "json"),
        ("ci/.github/workflows/ci.yml", "yaml"),
        ("pyproject.toml", "toml"),
        ("scripts/install.sh", "shell"),
        ("site/index.html", "html"),
        ("site/style.css", "css"),
        ("db/schema.sql", "sql"),
        ("requirements.txt", "text"),
        ("LICENSE", "text"),
        ("data/blob.xyz", "text"),
        ("Makefile", "makefile"),
        ("docker/Dockerfile", "dockerfile"),
        ("Gemfile", "ruby"),
        ("CMakeLists.txt", "cmake"),
    ],
)
def test_detect_language_by_extension_and_name(path: str, language: str) -> None:
    assert detect_language(path) == language
    assert language in LANGUAGES


def test_detect_language_reads_shebang_of_files_without_extension() -> None:
    assert detect_language("bin/tool", "#!/usr/bin/env python3\nprint(1)\n") == "python"
    assert detect_language("bin/run", "#!/bin/bash\necho hi\n") == "shell"
    assert detect_language("bin/serve", "#!/usr/bin/env node\nconsole.log(1)\n") == "javascript"
    assert detect_language("bin/notes", "just words\n") == "text"


def test_detect_language_tells_cpp_headers_from_c_headers() -> None:
    assert detect_language("include/a.h", "int f(void);\nstruct s { int x; };\n") == "c"
    cpp_header = "namespace ns {\nclass Widget {\n public:\n  int size() const;\n};\n}\n"
    assert detect_language("include/w.h", cpp_header) == "cpp"


@pytest.mark.parametrize(
    ("name", "language"),
    [
        ("python", "python"),
        ("Python", "python"),
        ("py", "python"),
        ("C++", "cpp"),
        ("c++", "cpp"),
        ("cpp", "cpp"),
        ("golang", "go"),
        ("Go", "go"),
        ("reStructuredText", "rst"),
        ("md", "markdown"),
        ("ts", "typescript"),
        ("TSX", "tsx"),
        ("C#", "csharp"),
        ("sh", "shell"),
        ("Shell", "shell"),
    ],
)
def test_normalize_language_maps_aliases_and_linguist_names(name: str, language: str) -> None:
    assert normalize_language(name) == language


def test_normalize_language_returns_none_for_unknown_names() -> None:
    assert normalize_language("klingon") is None


def test_linguist_name_gives_zoekt_display_names() -> None:
    assert linguist_name("cpp") == "C++"
    assert linguist_name("python") == "Python"
    assert linguist_name("rst") == "reStructuredText"
    assert linguist_name("unknown-lang") == "unknown-lang"


def test_family_routes_docs_code_and_text() -> None:
    assert family("python") is Family.CODE
    assert family("markdown") is Family.MARKDOWN
    assert family("rst") is Family.RST
    assert family("json") is Family.TEXT
    assert family("no-such-language") is Family.TEXT


@pytest.mark.parametrize("language", REQUIRED_GRAMMARS)
def test_required_grammars_load_offline(language: str) -> None:
    grammar = load_grammar(language)
    assert grammar is not None, f"no grammar for {language}: install tree-sitter-{language} wheel"
    assert load_grammar(language) is grammar  # cached


@pytest.mark.parametrize("language", sorted(SYNTAX))
def test_syntax_tables_name_real_node_types(language: str) -> None:
    grammar = load_grammar(language)
    if grammar is None:
        pytest.skip(f"no grammar installed for {language}")
    table = SYNTAX[language]
    unknown = [t for t in table.defs if not grammar.id_for_node_kind(t, True)]
    unknown += [t for t in table.wrappers | table.attached if not grammar.id_for_node_kind(t, True)]
    assert unknown == []


def test_languages_without_grammar_load_none_without_downloading() -> None:
    assert load_grammar("haskell") is None
    assert load_grammar("markdown") is None
    assert load_grammar("no-such-language") is None


def test_grammar_status_reports_where_grammars_come_from() -> None:
    status = grammar_status()
    for language in REQUIRED_GRAMMARS:
        assert status[language] != "missing"
