"""What an RE2 pattern requires of a text: literal substrings for trigram lookup, and its case.

The embedded lexical engine (`search/lexical/engine.py`) cannot run a regular expression
over every file. Like Google Code Search and Zoekt, it first asks the trigram index
for the files that contain the literal text any match must contain, then verifies
the regex on those candidates only. This module computes that literal requirement:

- `required_literals(pattern)` -> a `LitQuery`: a boolean formula (`Lit`, `AllOf`,
  `AnyOf`, or `MatchAll` when nothing usable is required) whose literals have at
  least 3 characters (the trigram index cannot look up shorter text). Literals are
  ASCII-lowercased, because the FTS5 trigram index is case-insensitive.
- `literal_text(pattern)` -> the text, when the whole pattern is a plain literal
  (`foo`, `a\\.b`, `(abc)`), else None: such patterns are exact substring searches.
- `has_uppercase(pattern)` -> Zoekt's `case:auto` signal: an ASCII uppercase letter
  in a literal, or as an endpoint of a character-class range (so `[A-Z]` and `\\w`
  count, `[^A-Z]` and `\\S` do not), exactly as Zoekt's `LowerRegexp` comparison.
- `check_pattern(pattern)` -> the RE2 compile error, if any (Go-only restrictions
  such as `\\C` included), used by the query parser.
- `to_fts_match(lq)` -> the FTS5 `MATCH` expression, user text quoted.
- `quote_meta(text)` -> a regex matching `text` literally (Go's `regexp.QuoteMeta`).

It walks the tree of a small, lenient RE2 parser (`search.lexical.regex_syntax`) that
only has to be right about structure (groups, alternation, repetition, classes,
escapes); validity is decided by RE2 itself. Whenever the parser meets something it
does not model, the answer is `MatchAll` (no requirement): a weaker filter, never a
wrong one. Pure functions; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import re2

from ctxd.indexer.store.text_formula import (
    MATCH_ALL,
    AllOf,
    AnyOf,
    Lit,
    LitQuery,
    MatchAll,
    fts_quote,
    to_fts_match,
)
from ctxd.search.lexical.regex_syntax import (
    Alt,
    AnyChar,
    Char,
    Class,
    Concat,
    Empty,
    Node,
    Repeat,
    go_unsupported,
    parse_regex,
)

__all__ = ["MATCH_ALL", "AllOf", "AnyOf", "Lit", "LitQuery", "MatchAll", "all_of", "any_of",
           "check_pattern", "describe", "fold_ascii", "fts_quote", "has_uppercase",
           "literal_text", "literals_of", "quote_meta", "required_literals", "to_fts_match",
           "trigrams"]

MIN_LITERAL = 3
"""The trigram index finds only text of at least this many characters."""
MAX_CLASS = 10
"""A character class with at most this many characters is expanded (`[ab]cd` -> acd|bcd)."""
MAX_SET = 32
"""The largest set of alternative strings tracked for one sub-pattern."""


# -- the literal formula (its types live with the store's dialects) ------------------


def all_of(children: Iterable[LitQuery]) -> LitQuery:
    """AND, flattened: `MatchAll` children vanish; no children -> `MatchAll`."""
    out: list[LitQuery] = []
    for c in children:
        parts = c.children if isinstance(c, AllOf) else (c,)
        for p in parts:
            if not isinstance(p, MatchAll) and p not in out:
                out.append(p)
    if not out:
        return MATCH_ALL
    return out[0] if len(out) == 1 else AllOf(tuple(out))


def any_of(children: Iterable[LitQuery]) -> LitQuery:
    """OR, flattened: one `MatchAll` child makes the whole `MatchAll`."""
    out: list[LitQuery] = []
    for c in children:
        if isinstance(c, MatchAll):
            return MATCH_ALL
        for p in c.children if isinstance(c, AnyOf) else (c,):
            if p not in out:
                out.append(p)
    if not out:
        return MATCH_ALL
    return out[0] if len(out) == 1 else AnyOf(tuple(out))


def literals_of(lq: LitQuery) -> list[str]:
    """Every literal in the formula, in order, without repeats."""
    if isinstance(lq, Lit):
        return [lq.text]
    if isinstance(lq, MatchAll):
        return []
    out: list[str] = []
    for c in lq.children:
        out.extend(t for t in literals_of(c) if t not in out)
    return out


def describe(lq: LitQuery) -> str:
    """A readable form of the formula, e.g. `"def " AND ("abc" OR "abd")`."""
    if isinstance(lq, MatchAll):
        return "<none: no literal of 3+ characters>"
    text = to_fts_match(lq)
    assert text is not None
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def trigrams(text: str) -> list[str]:
    """The distinct trigrams of a literal, in order of first occurrence."""
    out: list[str] = []
    for i in range(len(text) - 2):
        g = text[i : i + 3]
        if g not in out:
            out.append(g)
    return out


def quote_meta(text: str) -> str:
    """A regex matching exactly `text` (Go's `regexp.QuoteMeta`)."""
    return "".join("\\" + c if c in _RE2_META else c for c in text)


_RE2_META = frozenset("\\.+*?()|[]{}^$")


def fold_ascii(text: str) -> str:
    """Lowercase ASCII letters only (what both RE2 `(?i)` and SQLite `lower()` agree on)."""
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


# -- questions about a pattern ------------------------------------------------------


def check_pattern(pattern: str) -> str | None:
    """The reason `pattern` is not a valid (Go/RE2) regular expression, or None."""
    options = re2.Options()
    options.log_errors = False
    try:
        re2.compile(pattern, options)
    except re2.error as e:
        msg = e.args[0] if e.args else str(e)
        return msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)
    return go_unsupported(pattern)


def literal_text(pattern: str) -> str | None:
    """The text matched, when `pattern` is a plain literal (no operators, no flags)."""
    node = parse_regex(pattern)
    if isinstance(node, Char):
        return node.char
    if isinstance(node, Concat) and node.items and all(isinstance(n, Char) for n in node.items):
        return "".join(n.char for n in node.items if isinstance(n, Char))
    return None


def has_uppercase(pattern: str) -> bool:
    """Zoekt's `case:auto` test: is an ASCII uppercase letter part of the pattern?"""
    node = parse_regex(pattern)
    if node is None:  # rough fallback: an unescaped A-Z anywhere
        return bool(re.search(r"(?<!\\)[A-Z]", pattern))
    return _upper(node)


def _is_upper(code: int) -> bool:
    return ord("A") <= code <= ord("Z")


def _upper(node: Node) -> bool:
    if isinstance(node, Char):
        return len(node.char) == 1 and _is_upper(ord(node.char))
    if isinstance(node, Class):
        return any(_is_upper(lo) or _is_upper(hi) for lo, hi in node.ranges)
    if isinstance(node, Concat | Alt):
        return any(_upper(n) for n in node.items)
    if isinstance(node, Repeat):
        return _upper(node.item)
    return False


def required_literals(pattern: str) -> LitQuery:
    """The literal substrings (>= 3 characters) that any match of `pattern` contains."""
    node = parse_regex(pattern)
    if node is None:
        return MATCH_ALL
    exact, req = _info(node)
    return _from_exact(exact) if exact is not None else req


def _from_exact(exact: frozenset[str]) -> LitQuery:
    """A formula for 'one of these exact strings occurs'."""
    if not exact or any(len(s) < MIN_LITERAL for s in exact):
        return MATCH_ALL
    # 'abc' OR 'xabcy' is implied by 'abc' alone: keep the minimal strings.
    keep = [s for s in exact if not any(o != s and o in s for o in exact)]
    return any_of(Lit(s) for s in sorted(keep))


def _info(node: Node) -> tuple[frozenset[str] | None, LitQuery]:
    """(the exact set of strings matched when small and known, else a requirement)."""
    if isinstance(node, Char):
        return frozenset({fold_ascii(node.char)}), MATCH_ALL
    if isinstance(node, Empty):
        return frozenset({""}), MATCH_ALL
    if isinstance(node, AnyChar):
        return None, MATCH_ALL
    if isinstance(node, Class):
        if node.big or sum(hi - lo + 1 for lo, hi in node.ranges) > MAX_CLASS:
            return None, MATCH_ALL
        chars = {fold_ascii(chr(c)) for lo, hi in node.ranges for c in range(lo, hi + 1)}
        return (frozenset(chars), MATCH_ALL) if chars else (None, MATCH_ALL)
    if isinstance(node, Concat):
        return _concat_info(node.items)
    if isinstance(node, Alt):
        infos = [_info(n) for n in node.items]
        if all(e is not None for e, _ in infos):
            union = frozenset(s for e, _ in infos if e is not None for s in e)
            if len(union) <= MAX_SET:
                return union, MATCH_ALL
        return None, any_of(_from_exact(e) if e is not None else r for e, r in infos)
    return _repeat_info(node)


def _concat_info(items: tuple[Node, ...]) -> tuple[frozenset[str] | None, LitQuery]:
    parts: list[LitQuery] = []
    cur: frozenset[str] = frozenset({""})
    all_exact = True
    for item in items:
        exact, req = _info(item)
        if exact is not None and len(cur) * len(exact) <= MAX_SET:
            cur = frozenset(a + b for a in cur for b in exact)
            continue
        all_exact = False
        parts.append(_from_exact(cur))
        if exact is not None:
            cur = exact
        else:
            parts.append(req)
            cur = frozenset({""})
    if all_exact:
        return cur, MATCH_ALL
    parts.append(_from_exact(cur))
    return None, all_of(parts)


def _repeat_info(node: Repeat) -> tuple[frozenset[str] | None, LitQuery]:
    exact, req = _info(node.item)
    if node.min == 0:
        if node.max == 1 and exact is not None and len(exact) < MAX_SET:
            return exact | {""}, MATCH_ALL
        return None, MATCH_ALL
    if exact is not None and node.max == node.min and len(exact) ** node.min <= MAX_SET:
        out: frozenset[str] = frozenset({""})
        for _ in range(node.min):
            out = frozenset(a + b for a in out for b in exact)
        return out, MATCH_ALL
    return None, _from_exact(exact) if exact is not None else req
