"""Syntax colouring for the page, server-side (Pygments), one HTML string per line.

`highlight_lines(text, language, path)` lexes `text` and returns its lines as HTML: every
piece of text escaped, each token a `<span class="...">` with Pygments' short class names
(`k` keyword, `n` name, `s` string, ...; `static/ui.css` colours them), never a span
across a line end, so a caller can number, select and mark lines one by one. `marks`
wraps column ranges of a line in `<mark>` (a lexical match, a query word).

Pure functions over text: no file access, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from html import escape

from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.token import STANDARD_TYPES, Error, Text, Whitespace, _TokenType
from pygments.util import ClassNotFound

MAX_HIGHLIGHT_CHARS = 2_000_000
"""Longer texts are shown plain (escaped, not coloured): lexing costs ~0.1 s per 1,000
lines, and a file past this is data more than code."""

ALIASES = {"shell": "bash", "tsx": "tsx", "jsx": "jsx", "csharp": "csharp", "hcl": "terraform",
           "batchfile": "batch", "protocol-buffer": "protobuf", "svelte": "html",
           "csv": "text", "asciidoc": "text"}
"""ctxd's language ids that Pygments knows by another name (or not at all: plain text)."""

WARM_LANGUAGES = ("python", "javascript", "typescript", "go", "rust", "java", "c", "cpp",
                  "markdown", "json", "yaml", "toml", "bash", "html", "css")
"""Lexers made at the server's start (`warm`): a lexer's first use imports its module and
compiles its rules (~50 ms for Python), which the first search or file view would pay."""

UNSTYLED = frozenset({"", "p", "w", "err", "x", "g"})
"""Token classes the stylesheet leaves plain: no span for them (a 5,000-line file is
~35k spans otherwise, a third of them punctuation)."""

IDENTIFIER_CLASSES = frozenset({"n", "nf", "nc", "nx", "na", "nn", "fm", "nv", "py", "no",
                                "ne", "nd", "nl", "nt", "vi", "vc", "vg"})
"""Token classes the page links to their definition (names, not keywords or builtins)."""


LEXER_OPTIONS = {"stripnl": False, "ensurenl": False}


def lexer_for(language: str, path: str) -> Lexer:
    """A Pygments lexer for ctxd's `language` id, else by the file's name, else plain.

    One lexer per language id (a lexer keeps no state between texts), and per file name
    for the ids Pygments does not know: `get_lexer_for_filename` tries every lexer's
    patterns (~80 ms the first time), so it runs once per name."""
    return _by_language(language) or _by_file_name(path.rsplit("/", 1)[-1])


@lru_cache(maxsize=256)
def _by_language(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(ALIASES.get(language, language), **LEXER_OPTIONS)
    except ClassNotFound:
        return None


@lru_cache(maxsize=1024)
def _by_file_name(name: str) -> Lexer:
    try:
        return get_lexer_for_filename(name, **LEXER_OPTIONS)
    except ClassNotFound:
        return TextLexer(**LEXER_OPTIONS)


def warm(languages: Iterable[str] = WARM_LANGUAGES) -> None:
    """Make the common languages' lexers and colour a line with each, so a page's first
    search or file view does not pay for the imports and the rules' compilation."""
    for language in languages:
        highlight_lines("x = 1", language, "")


@lru_cache(maxsize=512)
def css_class(ttype: _TokenType) -> str:
    """The short class of a token type (its nearest ancestor that has one)."""
    t: _TokenType | None = ttype
    while t is not None:
        name = STANDARD_TYPES.get(t)
        if name is not None:
            return str(name)
        t = t.parent
    return ""


def highlight_lines(text: str, language: str, path: str) -> list[str]:
    """`text`'s lines as coloured, escaped HTML (no line ends; as many items as lines,
    a final newline adds none)."""
    return list(iter_highlighted(text, language, path))


SNIPPET_CHARS = 8_000
"""Texts up to this long (a search hit's lines) are kept coloured by `highlight_snippet`."""


def highlight_snippet(text: str, language: str, path: str) -> list[str]:
    """`highlight_lines` for a search hit's few lines, remembered: the same lines come back
    in the next page, a refined query and the copies of a file (`_snippets` holds ~2,000
    of them, at most ~16 MB)."""
    if len(text) > SNIPPET_CHARS:
        return highlight_lines(text, language, path)
    lexer = _by_language(language)
    return list(_snippets(text, language, "" if lexer is not None else path.rsplit("/", 1)[-1]))


@lru_cache(maxsize=2048)
def _snippets(text: str, language: str, name: str) -> tuple[str, ...]:
    return tuple(iter_highlighted(text, language, name))


def iter_highlighted(text: str, language: str, path: str) -> Iterator[str]:
    """`highlight_lines`, one line at a time as the lexer gets there (the file view sends
    the first lines while the rest are lexed)."""
    if len(text) > MAX_HIGHLIGHT_CHARS:
        yield from plain_lines(text)
        return
    if text.endswith("\n"):
        text = text[:-1]
    want = text.count("\n") + 1
    made = 0
    for line in _lexed_lines(text, language, path):
        if made == want:
            return
        yield line
        made += 1
    yield from [""] * (want - made)


def plain_lines(text: str) -> Iterator[str]:
    """`text`'s lines escaped, not coloured (as many as `iter_highlighted` makes)."""
    if text.endswith("\n"):
        text = text[:-1]
    return (escape(line, quote=False) for line in text.split("\n"))


class _Line:
    """One line's HTML in the making: neighbouring tokens of one class share a span."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.cls = ""
        self.run = ""

    def flush(self) -> None:
        if self.run:
            piece = escape(self.run, quote=False)
            self.parts.append(piece if self.cls in UNSTYLED else
                              f'<span class="{self.cls}">{piece}</span>')
        self.cls, self.run = "", ""

    def add(self, cls: str, part: str) -> None:
        if cls == self.cls or (cls in UNSTYLED and self.cls in UNSTYLED):
            self.run += part
        else:
            self.flush()
            self.cls, self.run = cls, part

    def take(self) -> str:
        self.flush()
        out = "".join(self.parts)
        self.parts = []
        return out


def _lexed_lines(text: str, language: str, path: str) -> Iterator[str]:
    line = _Line()
    plain = (Text, Whitespace, Error)
    for ttype, value in lexer_for(language, path).get_tokens(text):
        cls = "" if ttype in plain else css_class(ttype)
        named = cls in IDENTIFIER_CLASSES  # each name its own span: a click names one
        if named:
            line.flush()
        for i, part in enumerate(value.split("\n")):
            if i:
                yield line.take()
            if part:
                line.add(cls, part)
        if named:
            line.flush()
    yield line.take()


TAG = re.compile(r"(<[^>]*>)")
ENTITY = re.compile(r"&(?:amp|lt|gt|quot|#x27);")


def marks(line_html: str, ranges: Sequence[tuple[int, int]]) -> str:
    """`line_html` (from `highlight_lines`) with the text columns in `ranges` (0-based,
    end exclusive, over the plain text) wrapped in `<mark>`; tags are left whole."""
    if not ranges:
        return line_html
    marked = {c for a, b in ranges for c in range(max(0, a), min(b, len(line_html)))}
    out: list[str] = []
    col = 0
    inside = False

    for piece in TAG.split(line_html):
        if not piece:
            continue
        if piece.startswith("<"):
            if inside:  # close around tags so the marks nest properly
                out.append("</mark>")
                inside = False
            out.append(piece)
            continue
        for char in _chars(piece):
            want = col in marked
            if want != inside:
                out.append("<mark>" if want else "</mark>")
                inside = want
            out.append(char)
            col += 1
    if inside:
        out.append("</mark>")
    return "".join(out)


def _chars(escaped: str) -> Iterable[str]:
    """The characters of escaped text, each entity as one."""
    pos = 0
    for m in ENTITY.finditer(escaped):
        yield from escaped[pos:m.start()]
        yield m.group(0)
        pos = m.end()
    yield from escaped[pos:]


def word_ranges(line: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """Where the query's `words` occur in `line` (case-insensitive), as column ranges."""
    out: list[tuple[int, int]] = []
    low = line.lower()
    for w in words:
        start = low.find(w)
        while start >= 0:
            out.append((start, start + len(w)))
            start = low.find(w, start + len(w))
    return out


def query_words(query: str) -> list[str]:
    """The words of a query worth marking in a hit (2+ letters, lower case)."""
    return sorted({w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", query)},
                  key=len, reverse=True)[:12]
