"""Which language a file is in, and how to parse it.

`detect_language(path, text=None)` maps a repo-relative path (extension, well-known
file name, then a `#!` line when `text` is given) to a lowercase language id such as
`"python"`, `"cpp"` or `"markdown"`; `"text"` when unknown. The ids are the
lowercase Zoekt/linguist names (with `cpp`, `csharp`, `shell`, `rst` for the names
that hold symbols or spaces); `normalize_language` maps any alias a user may type in
`lang:` (`c++`, `golang`, `py`, `reStructuredText`, a go-enry name such as `"C++"`) to
the id, and `linguist_name` goes the other way.

`SYNTAX` holds the tree-sitter node-type tables that `indexer.chunk.syntax` uses to find
definitions, and `load_grammar(lang)` returns a `tree_sitter.Language` or None.
Grammars load offline only, in this order: the per-language wheel
(`tree_sitter_python`, ...), then a grammar that `tree_sitter_language_pack` already
has in its local cache. The language pack 1.x ships no grammars and downloads them on
first use; this module never asks it to (it only lists `downloaded_languages()`), so
nothing is ever fetched at run time. A language without a loadable grammar is chunked
by line windows.

The pipeline stores the id, and the search layer normalises `lang:` filters with
`normalize_language`. Pure, apart from the cached grammar imports.
"""

from __future__ import annotations

import importlib
import logging
import posixpath
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

import tree_sitter

logger = logging.getLogger(__name__)


class Family(StrEnum):
    """How the chunker treats a language."""

    CODE = "code"
    """Source code: definitions by tree-sitter when a grammar loads, else line windows."""
    MARKDOWN = "markdown"
    """Sections by ATX and setext headings."""
    RST = "rst"
    """Sections by reStructuredText underlined (and overlined) titles."""
    TEXT = "text"
    """Everything else: overlapping line windows sized in tokens."""


@dataclass(frozen=True, slots=True)
class LanguageInfo:
    """One language: its id, display name, family and where its grammar comes from."""

    id: str
    display: str
    """The go-enry/linguist name (what Zoekt reports in `FileMatch.Language`)."""
    family: Family = Family.TEXT
    grammar: tuple[str, str] | None = None
    """(module, function) of a per-language grammar wheel, e.g. ("tree_sitter_go", "language")."""
    pack_name: str | None = None
    """The grammar's name in tree-sitter-language-pack (used only if already cached locally)."""


@dataclass(frozen=True, slots=True)
class SyntaxTable:
    """Node types that make definitions in one tree-sitter grammar.

    `defs` maps a node type to the symbol kind it defines. Special node types handled
    in `indexer.chunk.extractors`: `variable_declarator`/`field_definition` (JS/TS: only when the
    value is a function), `type_spec`/`const_spec`/`var_spec` (Go), `type_definition`
    (C/C++), struct/enum specifiers (only with a body).
    """

    defs: Mapping[str, str]
    wrappers: frozenset[str] = frozenset()
    """Parents that belong to a definition's extent (decorators, `export`, `template<>`)."""
    attached: frozenset[str] = frozenset()
    """Siblings directly above a definition that belong to it (comments, attributes)."""
    method_containers: frozenset[str] = frozenset({"class", "struct", "interface", "trait", "impl"})
    """Kinds whose `function` children are reported as `method`."""


def _lang(
    id_: str,
    display: str,
    family: Family = Family.TEXT,
    grammar: tuple[str, str] | None = None,
    pack_name: str | None = None,
) -> LanguageInfo:
    return LanguageInfo(id_, display, family, grammar, pack_name)


# fmt: off
_CODE = Family.CODE
LANGUAGES: dict[str, LanguageInfo] = {
    info.id: info
    for info in (
        _lang("python", "Python", _CODE, ("tree_sitter_python", "language"), "python"),
        _lang(
            "javascript", "JavaScript", _CODE, ("tree_sitter_javascript", "language"), "javascript"
        ),
        _lang(
            "typescript", "TypeScript", _CODE,
            ("tree_sitter_typescript", "language_typescript"), "typescript",
        ),
        _lang("tsx", "TSX", _CODE, ("tree_sitter_typescript", "language_tsx"), "tsx"),
        _lang("go", "Go", _CODE, ("tree_sitter_go", "language"), "go"),
        _lang("rust", "Rust", _CODE, ("tree_sitter_rust", "language"), "rust"),
        _lang("java", "Java", _CODE, ("tree_sitter_java", "language"), "java"),
        _lang("c", "C", _CODE, ("tree_sitter_c", "language"), "c"),
        _lang("cpp", "C++", _CODE, ("tree_sitter_cpp", "language"), "cpp"),
        _lang("ruby", "Ruby", _CODE, ("tree_sitter_ruby", "language"), "ruby"),
        _lang("shell", "Shell", _CODE, ("tree_sitter_bash", "language"), "bash"),
        _lang("markdown", "Markdown", Family.MARKDOWN),
        _lang("rst", "reStructuredText", Family.RST),
        _lang("csharp", "C#", _CODE, ("tree_sitter_c_sharp", "language"), "csharp"),
        _lang("kotlin", "Kotlin", _CODE, ("tree_sitter_kotlin", "language"), "kotlin"),
        _lang("scala", "Scala", _CODE, ("tree_sitter_scala", "language"), "scala"),
        _lang("swift", "Swift", _CODE, ("tree_sitter_swift", "language"), "swift"),
        _lang("php", "PHP", _CODE, ("tree_sitter_php", "language_php"), "php"),
        _lang("perl", "Perl", _CODE),
        _lang("lua", "Lua", _CODE, ("tree_sitter_lua", "language"), "lua"),
        _lang("r", "R", _CODE),
        _lang("dart", "Dart", _CODE),
        _lang("elixir", "Elixir", _CODE, ("tree_sitter_elixir", "language"), "elixir"),
        _lang("erlang", "Erlang", _CODE),
        _lang("haskell", "Haskell", _CODE),
        _lang("ocaml", "OCaml", _CODE),
        _lang("clojure", "Clojure", _CODE),
        _lang("groovy", "Groovy", _CODE),
        _lang("objective-c", "Objective-C", _CODE),
        _lang("zig", "Zig", _CODE),
        _lang("cython", "Cython", _CODE),
        _lang("powershell", "PowerShell", _CODE),
        _lang("batchfile", "Batchfile", _CODE),
        _lang("vue", "Vue", _CODE),
        _lang("svelte", "Svelte", _CODE),
        _lang("sql", "SQL"),
        _lang("html", "HTML"),
        _lang("css", "CSS"),
        _lang("scss", "SCSS"),
        _lang("less", "Less"),
        _lang("xml", "XML"),
        _lang("json", "JSON"),
        _lang("yaml", "YAML"),
        _lang("toml", "TOML"),
        _lang("ini", "INI"),
        _lang("csv", "CSV"),
        _lang("protocol-buffer", "Protocol Buffer"),
        _lang("graphql", "GraphQL"),
        _lang("terraform", "HCL"),
        _lang("dockerfile", "Dockerfile"),
        _lang("makefile", "Makefile"),
        _lang("cmake", "CMake"),
        _lang("jinja", "Jinja"),
        _lang("asciidoc", "AsciiDoc"),
        _lang("tex", "TeX"),
        _lang("diff", "Diff"),
        _lang("text", "Text"),
    )
}

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hh": "cpp", ".hpp": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp", ".tpp": "cpp", ".cu": "cpp",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".ru": "ruby",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".ksh": "shell", ".bats": "shell",
    ".md": "markdown", ".markdown": "markdown", ".mdown": "markdown", ".mkd": "markdown",
    ".mdx": "markdown",
    ".rst": "rst", ".rest": "rst",
    ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
    ".php": "php", ".pl": "perl", ".pm": "perl", ".lua": "lua", ".r": "r", ".dart": "dart",
    ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml",
    ".mli": "ocaml", ".clj": "clojure", ".cljs": "clojure", ".groovy": "groovy",
    ".gradle": "groovy", ".m": "objective-c", ".mm": "objective-c", ".zig": "zig",
    ".pyx": "cython", ".pxd": "cython", ".ps1": "powershell", ".bat": "batchfile",
    ".cmd": "batchfile", ".vue": "vue", ".svelte": "svelte",
    ".sql": "sql",
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".css": "css", ".scss": "scss", ".less": "less",
    ".xml": "xml", ".xsd": "xml", ".xsl": "xml", ".svg": "xml", ".plist": "xml",
    ".json": "json", ".jsonc": "json", ".json5": "json", ".geojson": "json", ".ipynb": "json",
    ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml",
    ".ini": "ini", ".cfg": "ini", ".conf": "ini", ".properties": "ini",
    ".csv": "csv", ".tsv": "csv",
    ".proto": "protocol-buffer", ".graphql": "graphql", ".gql": "graphql",
    ".tf": "terraform", ".hcl": "terraform",
    ".cmake": "cmake", ".mk": "makefile",
    ".j2": "jinja", ".jinja": "jinja", ".jinja2": "jinja",
    ".adoc": "asciidoc", ".asciidoc": "asciidoc",
    ".tex": "tex", ".diff": "diff", ".patch": "diff",
    ".txt": "text", ".text": "text",
}

FILENAMES: dict[str, str] = {
    "makefile": "makefile", "gnumakefile": "makefile",
    "dockerfile": "dockerfile", "containerfile": "dockerfile",
    "cmakelists.txt": "cmake",
    "rakefile": "ruby", "gemfile": "ruby", "podfile": "ruby", "vagrantfile": "ruby",
    "guardfile": "ruby", "brewfile": "ruby",
    ".bashrc": "shell", ".bash_profile": "shell", ".zshrc": "shell", ".profile": "shell",
    "pipfile": "toml", "cargo.lock": "toml", "poetry.lock": "toml",
    "jenkinsfile": "groovy",
}

_SHEBANGS: dict[str, str] = {
    "python": "python", "python3": "python", "python2": "python", "pypy": "python",
    "pypy3": "python", "sh": "shell", "bash": "shell", "zsh": "shell", "ksh": "shell",
    "dash": "shell", "ruby": "ruby", "node": "javascript", "deno": "typescript",
    "perl": "perl", "php": "php", "lua": "lua",
}

ALIASES: dict[str, str] = {
    "c++": "cpp", "cplusplus": "cpp", "cxx": "cpp", "cc": "cpp", "hpp": "cpp",
    "c#": "csharp", "cs": "csharp",
    "golang": "go", "py": "python", "python3": "python", "js": "javascript", "node": "javascript",
    "jsx": "javascript", "ts": "typescript", "rs": "rust", "rb": "ruby",
    "sh": "shell", "bash": "shell", "zsh": "shell", "shellscript": "shell",
    "md": "markdown", "restructuredtext": "rst", "rest": "rst", "yml": "yaml",
    "txt": "text", "plain text": "text", "plaintext": "text", "hcl": "terraform",
    "objc": "objective-c", "objectivec": "objective-c", "proto": "protocol-buffer",
    "protobuf": "protocol-buffer", "make": "makefile", "docker": "dockerfile",
    "htm": "html", "bat": "batchfile", "ps1": "powershell", "jinja2": "jinja",
}

# fmt: on

_PY_COMMENTS = frozenset({"comment"})
_C_LIKE_COMMENTS = frozenset({"comment"})
_JS_DEFS: dict[str, str] = {
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "class_declaration": "class",
    "method_definition": "method",
    "variable_declarator": "function",
    "field_definition": "method",
    "assignment_expression": "function",
}
_TS_DEFS: dict[str, str] = {
    **_JS_DEFS,
    "abstract_class_declaration": "class",
    "abstract_method_signature": "method",
    "public_field_definition": "method",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "namespace",
    "module": "module",
}
del _TS_DEFS["field_definition"]
_JS_WRAPPERS = frozenset({"export_statement"})
_TS_WRAPPERS = frozenset({"export_statement", "ambient_declaration", "expression_statement"})
_JS_ATTACHED = frozenset({"comment", "decorator"})
_C_DEFS: dict[str, str] = {
    "function_definition": "function",
    "struct_specifier": "struct",
    "union_specifier": "struct",
    "enum_specifier": "enum",
    "type_definition": "type",
}

SYNTAX: dict[str, SyntaxTable] = {
    "python": SyntaxTable(
        defs={
            "function_definition": "function",
            "class_definition": "class",
            "type_alias_statement": "type",
        },
        wrappers=frozenset({"decorated_definition"}),
        attached=_PY_COMMENTS,
        method_containers=frozenset({"class"}),
    ),
    "javascript": SyntaxTable(
        defs=_JS_DEFS,
        wrappers=_JS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class"}),
    ),
    "typescript": SyntaxTable(
        defs=_TS_DEFS,
        wrappers=_TS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class", "interface"}),
    ),
    "tsx": SyntaxTable(
        defs=_TS_DEFS,
        wrappers=_TS_WRAPPERS,
        attached=_JS_ATTACHED,
        method_containers=frozenset({"class", "interface"}),
    ),
    "go": SyntaxTable(
        defs={
            "function_declaration": "function",
            "method_declaration": "method",
            "type_spec": "type",
            "type_alias": "type",
            "const_spec": "constant",
            "var_spec": "variable",
        },
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset(),
    ),
    "rust": SyntaxTable(
        defs={
            "function_item": "function",
            "function_signature_item": "function",
            "struct_item": "struct",
            "union_item": "struct",
            "enum_item": "enum",
            "trait_item": "trait",
            "impl_item": "impl",
            "mod_item": "module",
            "type_item": "type",
            "const_item": "constant",
            "static_item": "constant",
        },
        attached=frozenset({"line_comment", "block_comment", "attribute_item"}),
        method_containers=frozenset({"trait", "impl"}),
    ),
    "java": SyntaxTable(
        defs={
            "class_declaration": "class",
            "record_declaration": "class",
            "interface_declaration": "interface",
            "annotation_type_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "compact_constructor_declaration": "constructor",
        },
        attached=frozenset({"line_comment", "block_comment"}),
        method_containers=frozenset({"class", "interface", "enum"}),
    ),
    "c": SyntaxTable(
        defs=_C_DEFS,
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset(),
    ),
    "cpp": SyntaxTable(
        defs={
            **_C_DEFS,
            "class_specifier": "class",
            "namespace_definition": "namespace",
        },
        wrappers=frozenset({"template_declaration"}),
        attached=_C_LIKE_COMMENTS,
        method_containers=frozenset({"class", "struct"}),
    ),
    "ruby": SyntaxTable(
        defs={
            "class": "class",
            "module": "module",
            "method": "function",
            "singleton_method": "method",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "module"}),
    ),
    "shell": SyntaxTable(
        defs={"function_definition": "function"},
        attached=frozenset({"comment"}),
        method_containers=frozenset(),
    ),
    # The rules for the tables below: `indexer.chunk.extractors_more`.
    "csharp": SyntaxTable(
        defs={
            "class_declaration": "class",
            "record_declaration": "class",
            "struct_declaration": "struct",
            "interface_declaration": "interface",
            "enum_declaration": "enum",
            "method_declaration": "method",
            "constructor_declaration": "constructor",
            "property_declaration": "property",
            "variable_declarator": "constant",
            "delegate_declaration": "type",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "struct", "interface"}),
    ),
    "php": SyntaxTable(
        defs={
            "class_declaration": "class",
            "interface_declaration": "interface",
            "trait_declaration": "trait",
            "enum_declaration": "enum",
            "function_definition": "function",
            "method_declaration": "method",
            "const_element": "constant",
        },
        attached=frozenset({"comment"}),
        method_containers=frozenset({"class", "interface", "trait", "enum"}),
    ),
    "kotlin": SyntaxTable(
        defs={
            "class_declaration": "class",
            "object_declaration": "class",
            "companion_object": "class",
            "function_declaration": "function",
            "secondary_constructor": "constructor",
            "property_declaration": "property",
            "type_alias": "type",
        },
        attached=frozenset({"line_comment", "block_comment"}),
        method_containers=frozenset({"class", "interface", "enum"}),
    ),
    "swift": SyntaxTable(
        defs={
            "class_declaration": "class",
            "protocol_declaration": "interface",
            "function_declaration": "function",
            "protocol_function_declaration": "method",
            "init_declaration": "constructor",
            "property_declaration": "property",
            "protocol_property_declaration": "property",
            "typealias_declaration": "type",
        },
        attached=frozenset({"comment", "multiline_comment"}),
        method_containers=frozenset({"class", "struct", "enum", "interface", "extension"}),
    ),
    "scala": SyntaxTable(
        defs={
            "class_definition": "class",
            "object_definition": "class",
            "trait_definition": "trait",
            "enum_definition": "enum",
            "function_definition": "function",
            "function_declaration": "function",
            "val_definition": "constant",
            "var_definition": "variable",
            "type_definition": "type",
        },
        attached=frozenset({"comment", "block_comment"}),
        method_containers=frozenset({"class", "trait", "enum"}),
    ),
    "lua": SyntaxTable(
        defs={"function_declaration": "function"},
        attached=frozenset({"comment"}),
        method_containers=frozenset(),
    ),
    "elixir": SyntaxTable(
        defs={"call": "function"},
        attached=frozenset({"comment", "unary_operator"}),  # `@doc`, `@spec` above a `def`
        method_containers=frozenset(),
    ),
}

_CPP_HINTS = ("class ", "namespace ", "template<", "template <", "public:", "private:", "::")


def _language_from_shebang(text: str) -> str | None:
    if not text.startswith("#!"):
        return None
    first = text[2 : text.find("\n") if "\n" in text else len(text)].strip().split()
    if not first:
        return None
    prog = posixpath.basename(first[0])
    if prog == "env" and len(first) > 1:
        args = [a for a in first[1:] if not a.startswith("-")]
        prog = args[0] if args else ""
    prog = prog.rstrip("0123456789.") or prog
    return _SHEBANGS.get(prog) or _SHEBANGS.get(posixpath.basename(first[-1]))


def detect_language(path: str, text: str | None = None) -> str:
    """The language id of a file: by extension, then well-known name, then `#!` line.

    Args:
        path: repo-relative POSIX path (only the base name matters).
        text: the file's content, if read; refines `.h` (C or C++) and files without
            an extension (shebang).

    Returns:
        A key of `LANGUAGES` (e.g. `"python"`, `"cpp"`); `"text"` when unknown.
    """
    base = posixpath.basename(path)
    lower = base.lower()
    by_name = FILENAMES.get(lower)
    if by_name is not None:
        return by_name
    _, ext = posixpath.splitext(lower)
    lang = EXTENSIONS.get(ext)
    if lang is None and lower.startswith("dockerfile."):
        return "dockerfile"
    if lang == "c" and ext == ".h" and text is not None:
        head = text[:20000]
        if any(hint in head for hint in _CPP_HINTS):
            return "cpp"
    if lang is not None:
        return lang
    if text is not None:
        return _language_from_shebang(text) or "text"
    return "text"


def normalize_language(name: str) -> str | None:
    """The id for a language name or alias (`"C++"` -> `"cpp"`), None if unknown."""
    key = name.strip().lower()
    if key in LANGUAGES:
        return key
    if key in ALIASES:
        return ALIASES[key]
    for info in LANGUAGES.values():
        if info.display.lower() == key:
            return info.id
    return None


def linguist_name(language: str) -> str:
    """The go-enry/linguist display name of an id (`"cpp"` -> `"C++"`)."""
    info = LANGUAGES.get(language)
    return info.display if info is not None else language


def family(language: str) -> Family:
    """How the chunker treats this language id."""
    info = LANGUAGES.get(language)
    return info.family if info is not None else Family.TEXT


_grammar_lock = threading.Lock()
_grammars: dict[str, tree_sitter.Language | None] = {}
_grammar_sources: dict[str, str] = {}


def _from_wheel(info: LanguageInfo) -> tree_sitter.Language | None:
    if info.grammar is None:
        return None
    module_name, func = info.grammar
    try:
        module = importlib.import_module(module_name)
        return tree_sitter.Language(getattr(module, func)())
    except (ImportError, AttributeError, TypeError, ValueError) as exc:
        logger.debug("grammar wheel %s unavailable: %s", module_name, exc)
        return None


def _from_language_pack(info: LanguageInfo) -> tree_sitter.Language | None:
    """A grammar the language pack already has on disk; never triggers its download."""
    if info.pack_name is None:
        return None
    try:
        import tree_sitter_language_pack as pack
    except ImportError:
        return None
    try:
        if info.pack_name not in pack.downloaded_languages():
            return None
        language: tree_sitter.Language = pack.get_language(info.pack_name)
        return language
    except (pack.Error, OSError, ValueError) as exc:
        logger.debug("language pack grammar %s unavailable: %s", info.pack_name, exc)
        return None


def load_grammar(language: str) -> tree_sitter.Language | None:
    """The tree-sitter grammar for a language id, or None (cached; offline only)."""
    if language in _grammars:
        return _grammars[language]
    with _grammar_lock:
        if language in _grammars:
            return _grammars[language]
        info = LANGUAGES.get(language)
        grammar: tree_sitter.Language | None = None
        if info is not None and language in SYNTAX:
            grammar = _from_wheel(info)
            source = "wheel"
            if grammar is None:
                grammar = _from_language_pack(info)
                source = "tree-sitter-language-pack cache"
            if grammar is not None:
                _grammar_sources[language] = source
        _grammars[language] = grammar
        return grammar


PARSED_BEFORE_RECORD = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust",
                                  "java", "c", "cpp", "ruby", "shell"})
"""The languages ctxd parsed by tree-sitter before an index recorded which it parses
(`parsed_languages`): what an index without that record was chunked with."""


PARSE_REVISIONS: dict[str, int] = {"c": 2, "cpp": 2}
"""Languages whose files are now parsed otherwise than at first, and how many times that
changed (2: C and C++ files whose `#ifdef` branches broke the parse are read through their
first branches, `indexer.chunk.conditionals`): recorded as `c@2`, so that an index made
before re-chunks those files once."""


def parsed_languages() -> list[str]:
    """The languages whose files are cut by their syntax here (a table and a grammar that
    loads), sorted, each with its `PARSE_REVISIONS` suffix (`c@2`): what the pipeline
    records per repository, so that a later ctxd that parses more of them, or parses one
    of them otherwise, re-chunks those files (`indexer.pipeline`)."""
    return sorted(f"{lang}@{PARSE_REVISIONS[lang]}" if lang in PARSE_REVISIONS else lang
                  for lang in SYNTAX if load_grammar(lang) is not None)


def grammar_status() -> dict[str, str]:
    """For each language with a syntax table: where its grammar loads from, or "missing"."""
    out: dict[str, str] = {}
    for language in SYNTAX:
        grammar = load_grammar(language)
        out[language] = _grammar_sources.get(language, "missing") if grammar else "missing"
    return out
