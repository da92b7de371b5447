"""Zoekt query text: escaping user text and paths into safe Zoekt query atoms.

Provides the pure string functions that build or clean Zoekt queries (section numbers
refer to docs/contracts/zoekt-api.md): `escape_regex` (Go's `regexp.QuoteMeta`),
`quote_term` and `quote_literal` (one tokenizer-proof token), `literal_content_query`
(a literal, contents only), `exact_file_query` (one path of one repository),
`normalize_query` (newlines out of user text) and `query_error_hint` (a next step for
a Zoekt parse error).

Invariants: no I/O; a quoted token never carries a raw newline and matches its text
literally, so user text cannot change the query's structure.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "escape_regex",
    "exact_file_query",
    "literal_content_query",
    "normalize_query",
    "query_error_hint",
    "quote_literal",
    "quote_term",
]

_RE2_META = frozenset("\\.+*?()|[]{}^$")
_CONTROL = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\f": "\\f", "\v": "\\v"}


def escape_regex(text: str) -> str:
    """An RE2 pattern matching exactly `text` (Go's `regexp.QuoteMeta`, §6.6).

    Control characters become their escapes (`\\n`, `\\t`, ...) so that the pattern
    never carries a raw newline, which Zoekt's tokenizer rejects.
    """
    out: list[str] = []
    for ch in text:
        if ch in _RE2_META:
            out.append("\\" + ch)
        else:
            out.append(_CONTROL.get(ch, ch))
    return "".join(out)


def quote_term(value: str) -> str:
    """Protect `value` from Zoekt's tokenizer: one token, passed to the regex unchanged.

    Wraps it in double quotes and escapes `\\` and `"` inside (§6.6). Put a field prefix
    in front: `"f:" + quote_term("^src/")`.
    """
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def quote_literal(text: str) -> str:
    """A quoted query token that matches `text` literally (no regex, no tokenizer traps).

    `quote_literal('a.b("x")')` is `"a\\\\.b\\\\(\\"x\\"\\\\)"`; prefix it with `c:` for a
    content-only search, `sym:` for a symbol name.
    """
    return quote_term(escape_regex(text))


def scoped_query(
    query: str, repositories: Sequence[str] = (), language: str | None = None
) -> str:
    """`query` restricted to exact repository names and a language.

    The query is parenthesised first, so a top-level `or` in it cannot capture the scope:
    `a or b` scoped to `shop` is `( a or b ) repo:"^shop$" lang:"python"`, not
    `a or (b repo:...)`. Every parenthesis stands apart from its contents: in Zoekt's
    grammar `(` groups only when a blank comes before its `)`, so `(repo:"^shop$")` would
    be one regex atom over paths and contents (it never matched: issue 15).
    """
    parts = []
    if repositories:
        names = [f"repo:{quote_term(f'^{escape_regex(r)}$')}" for r in repositories]
        parts.append(names[0] if len(names) == 1 else f"( {' or '.join(names)} )")
    if language:
        parts.append("lang:" + quote_term(language))
    return f"( {query} ) {' '.join(parts)}" if parts else query


def literal_content_query(text: str) -> str:
    """A query for the literal `text` in file contents only (paths excluded, §7.8)."""
    return "c:" + quote_literal(text)


def exact_file_query(repository: str, path: str) -> str:
    """The query that selects exactly one path of one repository, case-sensitively (§7.1).

    No `b:` atom: plain-directory repositories have no branches and any `b:` would
    exclude them; branches are chosen client-side from `FileMatch.Branches`.
    """
    repo_re = "^" + escape_regex(repository) + "$"
    path_re = "^" + escape_regex(path) + "$"
    return f"r:{quote_term(repo_re)} f:{quote_term(path_re)} case:yes"


def normalize_query(query: str) -> str:
    """Make user text safe for Zoekt's tokenizer: newlines become spaces, ends trimmed.

    A newline outside quotes is a parse error in Zoekt and a carriage return becomes
    part of a token (§6.1); everything else is passed through unchanged.
    """
    return query.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").strip()


def query_error_hint(message: str) -> str:
    """A next step for a Zoekt query parse error (after zoekt-mcp-tools-research §6)."""
    low = message.lower()
    if "missing query" in low:
        return "Pass a non-empty query, e.g. `lang:python def main` or `sym:Handler`."
    if "regexp" in low:
        return (
            "Terms are RE2 regular expressions: escape ( ) [ ] { } . * + ? | ^ $ \\ with a "
            'backslash (`foo\\(`), or quote them (`"foo\\\\("`). There is no /regex/ syntax '
            "and no look-around or back-references."
        )
    if "unknown" in low or "argument" in low or "meta field" in low:
        return (
            "Valid fields: repo: (r:), file: (f:), content: (c:), lang:, sym:, branch: (b:), "
            "case:yes|no|auto, type:filematch|filename|repo."
        )
    return (
        "Check quotes and parentheses: `(a or b)` needs spaces inside the parentheses, "
        "`or` needs a term on both sides, and a term starting with `-` must be quoted."
    )
