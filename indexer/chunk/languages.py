"""Which language a file is in.

`detect_language(path, text=None)` maps a repo-relative path (extension, well-known
file name, then a `#!` line when `text` is given) to a lowercase language id such as
`"python"`, `"cpp"` or `"markdown"`; `"text"` when unknown. The ids are the
lowercase Zoekt/linguist names (with `cpp`, `csharp`, `shell`, `rst` for the names
that hold symbols or spaces); `normalize_language` maps any alias a user may type in
`lang:` (`c++`, `golang`, `py`, `reStructuredText`, a go-enry name such as `"C++"`) to
the id, and `linguist_name` goes the other way. `LANGUAGES` says per id how the chunker
treats it (`Family`) and where its grammar comes from; how a language is parsed (the
grammars and their node-type tables) is `indexer.chunk.grammars`.

The pipeline stores the id, and the search layer normalises `lang:` filters with
`normalize_language`. Pure.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from enum import StrEnum


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

