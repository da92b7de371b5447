"""A code file's summary: one extra text embedded per file, as evidence for the whole file.

`file_summary(path, language, text, symbols)` writes what a reader skims first: the
path, the module docstring (or the file's leading comment), each top-level class or
type with the first paragraph of its docstring, and the names of the top-level
functions and of the classes' methods. A question about what a module is *for* ("which
module prints the versions for a bug report?") matches that better than any one of its
checkpoints. Hybrid search adds the summary's similarity, relative to the best
candidate file's, to every hit of the file (`search.hybrid`, `summary_weight`).

Files without definitions (prose, configuration, data) have no summary: on eval-dev,
summaries of prose files (their headings) lowered the ranking (docs/BENCHMARKS.md).

Pure: text and symbols in, a string out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxd.indexer.models import Symbol

MODULE_DOC_CHARS = 400
"""The module docstring's first paragraph is cut to this many characters."""
CLASS_DOC_CHARS = 150
"""A class's docstring's first paragraph is cut to this many characters."""
TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "impl"})
FUNCTION_KINDS = frozenset({"function", "method"})
_DEFINITION_KINDS = TYPE_KINDS | FUNCTION_KINDS

_QUOTES = re.compile(r'^[rRbBuU]{0,2}("""|\'\'\'|"|\')')
_HASH_COMMENTS = frozenset({"python", "cython", "ruby", "shell", "perl", "r", "elixir",
                            "powershell", "yaml", "toml", "makefile", "cmake", "dockerfile",
                            "terraform", "graphql"})
"""Languages whose comments start with `#` (elsewhere `#` starts an attribute,
`#include`, a preprocessor line...)."""
_DASH_COMMENTS = frozenset({"sql", "lua", "haskell"})
_SLASH = r"//+!?|/\*+!?|\*+/?"
_LICENSE = re.compile(r"\b(copyright|licen[cs]e[ds]?|spdx)\b", re.IGNORECASE)


def _comment_marker(language: str) -> re.Pattern[str]:
    """The start of a comment line in `language`."""
    if language in _HASH_COMMENTS:
        marker = r"#+"
    elif language in _DASH_COMMENTS:
        marker = r"--+"
    else:
        marker = _SLASH
    return re.compile(rf"^\s*({marker})\s?")


def first_paragraph(text: str, chars: int) -> str:
    """The first paragraph of a docstring or comment, on one line, cut to `chars`."""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(para.split())[:chars]


def string_at(lines: Sequence[str], start: int) -> str:
    """The string literal that starts the statement at or after 0-based line `start`
    (blank lines skipped): a docstring, or ""."""
    i = start
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        return ""
    first = lines[i].strip()
    m = _QUOTES.match(first)
    if not m:
        return ""
    quote = m.group(1)
    body = first[m.end():]
    if quote in body:
        return body[: body.index(quote)]
    if len(quote) == 1:
        return ""
    out = [body]
    for line in lines[i + 1 : i + 60]:
        if quote in line:
            out.append(line[: line.index(quote)])
            break
        out.append(line)
    return "\n".join(out)


def comment_block(language: str, lines: Sequence[str], first: int, step: int) -> str:
    """The run of comment lines from 0-based `first`, walking by `step` (-1 upwards)."""
    marker = _comment_marker(language)
    out: list[str] = []
    i = first
    while 0 <= i < len(lines) and lines[i].strip() and marker.match(lines[i]):
        out.append(marker.sub("", lines[i], count=1).rstrip("*/ "))
        i += step
    return "\n".join(reversed(out) if step < 0 else out)


def module_doc(language: str, lines: Sequence[str]) -> str:
    """A Python module's docstring; elsewhere the file's leading comment, unless it is a
    licence header."""
    if language == "python":  # after the shebang, coding line and comments
        i = 0
        while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith("#")):
            i += 1
        return string_at(lines, i)
    # Skip blank lines, a shebang and Rust's inner attributes (`#![...]`).
    first = next((n for n, t in enumerate(lines) if t.strip() and not t.startswith("#!")), 0)
    doc = comment_block(language, lines, first, 1)
    return "" if _LICENSE.search(doc) else doc


def definition_doc(language: str, lines: Sequence[str], symbol: Symbol) -> str:
    """A Python definition's docstring (after its signature); elsewhere the comment right
    above it (decorators and annotations skipped)."""
    line = symbol.line - 1
    if language == "python":
        end = line
        # A signature may span lines; it ends at the first line ending with ':'.
        while end < min(line + 12, len(lines) - 1) and not lines[end].rstrip().endswith(":"):
            end += 1
        return string_at(lines, end + 1)
    i = line - 1
    while i >= 0 and lines[i].lstrip().startswith(("@", "#[")):  # decorators, attributes
        i -= 1
    return comment_block(language, lines, i, -1)


def file_summary(path: str, language: str, text: str, symbols: Sequence[Symbol]) -> str | None:
    """The summary embedded for a code file, or None for a file without definitions."""
    defs = sorted((s for s in symbols if s.kind in _DEFINITION_KINDS),
                  key=lambda s: (s.line, s.name))
    if not defs:
        return None
    lines = text.split("\n")
    parts = [f"file {path}"]
    if doc := first_paragraph(module_doc(language, lines), MODULE_DOC_CHARS):
        parts.append(doc)
    types = {s.name for s in defs if s.kind in TYPE_KINDS and s.container is None}
    names: list[str] = []
    listed: set[str] = set()
    for s in defs:
        if s.container is None and s.kind in TYPE_KINDS:
            if s.name in listed:
                continue  # a type and its `impl` block(s), say
            listed.add(s.name)
            doc = first_paragraph(definition_doc(language, lines, s), CLASS_DOC_CHARS)
            parts.append(f"class {s.name}: {doc}" if doc else f"class {s.name}")
        elif s.kind not in FUNCTION_KINDS:
            continue  # a nested type
        elif s.container is None:
            names.append(f"def {s.name}")
        elif s.container in types and not s.name.startswith("__"):
            names.append(f"{s.container}.{s.name}")
    if names:
        parts.append("; ".join(names))
    return "\n".join(parts)
