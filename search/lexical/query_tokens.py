"""The tokens of Zoekt's query language, read as Zoekt's `query/parse.go` reads them.

`next_token(q, i)` gives the `Token` starting at `q[i]` (`Tok.TEXT`, a parenthesis, `-`,
`or`, or an atom prefix's kind from `PREFIXES`: `file`, `repo`, ...), or None at the end
or a newline: tokens are separated by spaces and tabs; `"..."` groups (and `\\x` inside
quotes stands for `x`); outside quotes a backslash escapes the next character and is kept
for the regex engine; `(` opens a group only when a blank follows inside it (`foo(bar)`
is a regex). `syntax_error` makes the `QueryError` every step of the parse raises, with
its 0-based position and a hint (`HINT_SYNTAX`, `HINT_REGEX`).

Used by `search.lexical.query` (the parser). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ctxd.indexer.errors import QueryError

__all__ = ["HINT_REGEX", "HINT_SYNTAX", "PREFIXES", "Tok", "Token", "next_token",
           "scan_token", "string_literal", "syntax_error"]

PREFIXES: dict[str, str] = {
    "archived:": "archived",
    "b:": "branch",
    "branch:": "branch",
    "c:": "content",
    "case:": "case",
    "content:": "content",
    "f:": "file",
    "file:": "file",
    "fork:": "fork",
    "public:": "public",
    "r:": "repo",
    "regex:": "text",
    "repo:": "repo",
    "lang:": "lang",
    "sym:": "sym",
    "t:": "type",
    "type:": "type",
    "meta.": "meta",
}
"""Atom prefixes (detected on the raw token, so quoting a prefix disables it)."""

HINT_SYNTAX = (
    "Zoekt syntax: words are ANDed, `or` between terms, `-term` negates, `(a or b)` groups; "
    "atoms: content: file: repo: lang: sym: case:yes|no|auto type:filename|repo. "
    'Quote text with spaces or a leading `-`: "-foo bar".'
)
HINT_REGEX = (
    "Terms are RE2 regular expressions: escape metacharacters such as ( ) [ ] . * + ? "
    'with a backslash (`foo\\(`), or inside quotes with a double backslash ("foo\\\\(").'
)


def syntax_error(message: str, position: int, hint: str = HINT_SYNTAX) -> QueryError:
    return QueryError(
        f"Query syntax error: {message} (at position {position})",
        hint=hint,
        details={"position": position},
    )


class Tok(StrEnum):
    TEXT = "text"
    PAREN_OPEN = "("
    PAREN_CLOSE = ")"
    NEGATE = "-"
    OR = "or"


@dataclass(frozen=True, slots=True)
class Token:
    kind: Tok | str
    """A `Tok`, or an atom prefix kind from PREFIXES ('file', 'repo', ...)."""
    text: str
    start: int
    end: int


def string_literal(q: str, i: int) -> tuple[str, int]:
    """Parse `"..."` starting at q[i] == '"'; returns (text, index after the closing quote)."""
    out: list[str] = []
    j = i + 1
    while j < len(q):
        c = q[j]
        if c == '"':
            return "".join(out), j + 1
        if c == "\\":
            if j + 1 >= len(q):
                raise syntax_error("missing character after \\ in quoted string", j)
            out.append(q[j + 1])
            j += 2
            continue
        out.append(c)
        j += 1
    raise syntax_error("unterminated quoted string", i, 'Close the quote: "..."')


def next_token(q: str, i: int) -> Token | None:
    """The token starting at q[i] (no leading blanks), or None at the end or a newline."""
    if i >= len(q):
        return None
    if q[i] == "-":
        return Token(Tok.NEGATE, "-", i, i + 1)
    value, j, found_space, quoted = scan_token(q, i)
    if not value:
        return None
    if found_space and value[0] == "(":
        return Token(Tok.PAREN_OPEN, "(", i, i + 1)
    raw = q[i:j]
    if value == "(" and not quoted:
        return Token(Tok.PAREN_OPEN, "(", i, j)
    if value == ")" and not quoted:
        return Token(Tok.PAREN_CLOSE, ")", i, j)
    if value == "or" and raw == "or":
        return Token(Tok.OR, "or", i, j)
    for prefix, kind in PREFIXES.items():
        if raw.startswith(prefix):
            return Token(kind, value[len(prefix) :], i, j)
    return Token(Tok.TEXT, value, i, j)


def scan_token(q: str, i: int) -> tuple[str, int, bool, bool]:
    """Read one token's text from q[i]: (text, end index, blank inside parens?, quoted?)."""
    text: list[str] = []
    depth = 0
    found_space = quoted = False
    j = i
    while j < len(q):
        c = q[j]
        if c == ")" and depth == 0:
            if not text:
                text.append(")")
                j += 1
            break
        if c in " \t\n":
            found_space = depth > 0
            break
        if c == '"':
            lit, j = string_literal(q, j)
            text.append(lit)
            quoted = True
            continue
        if c == "\\":
            if j + 1 >= len(q):
                raise syntax_error("lone \\ at end of query", j, "Escape it as \\\\ or remove it.")
            text.append(q[j : j + 2])
            j += 2
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        text.append(c)
        j += 1
    return "".join(text), j, found_space, quoted
