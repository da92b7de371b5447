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

It parses RE2 syntax with a small, lenient parser that only has to be right about
structure (groups, alternation, repetition, classes, escapes); validity is decided
by RE2 itself. Whenever the parser meets something it does not model, the answer
is `MatchAll` (no requirement): a weaker filter, never a wrong one. Pure functions;
no I/O. Just past 600 lines: one parser and the analyses that walk its tree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

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
MAX_CODEPOINT = 0x10FFFF


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


# -- a lenient RE2 syntax tree ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Char:
    char: str


@dataclass(frozen=True, slots=True)
class _Class:
    ranges: tuple[tuple[int, int], ...]
    """Normalized (sorted, merged) code point ranges, negation applied."""
    big: bool = False
    """Approximated (Unicode tables): never expanded into alternatives."""


@dataclass(frozen=True, slots=True)
class _AnyChar:
    pass


@dataclass(frozen=True, slots=True)
class _Empty:
    """Matches the empty string: anchors, `\\b`, flag groups, empty branches."""


@dataclass(frozen=True, slots=True)
class _Concat:
    items: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Alt:
    items: tuple[_Node, ...]


@dataclass(frozen=True, slots=True)
class _Repeat:
    item: _Node
    min: int
    max: int | None


_Node = _Char | _Class | _AnyChar | _Empty | _Concat | _Alt | _Repeat


class _Unmodelled(Exception):
    """The parser met syntax it does not model: fall back to 'no requirement'."""


class _GoUnsupported(Exception):
    """Valid for RE2 in C++ but rejected by Go's regexp (which Zoekt uses)."""


def _normalize(ranges: Iterable[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return tuple(out)


def _negate(ranges: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CODEPOINT:
        out.append((nxt, MAX_CODEPOINT))
    return tuple(out)


def _r(a: str, b: str | None = None) -> tuple[int, int]:
    return (ord(a), ord(b if b is not None else a))


_PERL: dict[str, tuple[tuple[int, int], ...]] = {
    "d": (_r("0", "9"),),
    "s": (_r("\t", "\n"), _r("\f", "\r"), _r(" ")),
    "w": (_r("0", "9"), _r("A", "Z"), _r("_"), _r("a", "z")),
}

_POSIX: dict[str, tuple[tuple[int, int], ...]] = {
    "alnum": (_r("0", "9"), _r("A", "Z"), _r("a", "z")),
    "alpha": (_r("A", "Z"), _r("a", "z")),
    "ascii": ((0, 0x7F),),
    "blank": (_r("\t"), _r(" ")),
    "cntrl": ((0, 0x1F), (0x7F, 0x7F)),
    "digit": (_r("0", "9"),),
    "graph": ((0x21, 0x7E),),
    "lower": (_r("a", "z"),),
    "print": ((0x20, 0x7E),),
    "punct": ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)),
    "space": (_r("\t", "\r"), _r(" ")),
    "upper": (_r("A", "Z"),),
    "word": (_r("0", "9"), _r("A", "Z"), _r("_"), _r("a", "z")),
    "xdigit": (_r("0", "9"), _r("A", "F"), _r("a", "f")),
}

_NON_ASCII = (0x80, MAX_CODEPOINT)
_UNICODE_APPROX: dict[str, tuple[tuple[int, int], ...]] = {
    # Only the ASCII part matters (case signal, expansion); the rest is summarized.
    "Any": ((0, MAX_CODEPOINT),),
    "L": (_r("A", "Z"), _r("a", "z"), _NON_ASCII),
    "Letter": (_r("A", "Z"), _r("a", "z"), _NON_ASCII),
    "Lu": (_r("A", "Z"), _NON_ASCII),
    "Uppercase_Letter": (_r("A", "Z"), _NON_ASCII),
    "Ll": (_r("a", "z"), _NON_ASCII),
    "Lowercase_Letter": (_r("a", "z"), _NON_ASCII),
    "Latin": (_r("A", "Z"), _r("a", "z"), _NON_ASCII),
    "N": (_r("0", "9"), _NON_ASCII),
    "Nd": (_r("0", "9"), _NON_ASCII),
}

_SIMPLE_ESCAPES = {"a": "\a", "f": "\f", "t": "\t", "n": "\n", "r": "\r", "v": "\v"}
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}")


class _Parser:
    """Recursive descent over RE2 (Perl-flavoured) syntax, positions in characters."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def parse(self) -> _Node:
        node = self._alt()
        if self.i != len(self.p):
            raise _Unmodelled(f"unexpected {self.p[self.i]!r} at {self.i}")
        return node

    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def _alt(self) -> _Node:
        branches = [self._concat()]
        while self._peek() == "|":
            self.i += 1
            branches.append(self._concat())
        return branches[0] if len(branches) == 1 else _Alt(tuple(branches))

    def _concat(self) -> _Node:
        items: list[_Node] = []
        while self.i < len(self.p) and self._peek() not in "|)":
            item = self._quantified(self._atom())
            # Groups and \Q...\E are transparent: `(ab)c` is the literal `abc`.
            items.extend(item.items if isinstance(item, _Concat) else (item,))
        return _Concat(tuple(items))

    def _quantified(self, atom: _Node) -> _Node:
        while True:
            c = self._peek()
            if c in ("*", "+", "?"):
                self.i += 1
                lo, hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            elif c == "{" and (m := _REPEAT.match(self.p, self.i)):
                self.i = m.end()
                lo = int(m.group(1))
                hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            else:
                return atom
            if self._peek() == "?":  # non-greedy: same language
                self.i += 1
            atom = _Repeat(atom, lo, hi)

    def _atom(self) -> _Node:
        c = self._peek()
        if c == "(":
            return self._group()
        if c == "[":
            return self._class()
        if c == "\\":
            return self._escape()
        self.i += 1
        if c == ".":
            return _AnyChar()
        if c in "^$":
            return _Empty()
        if c in "*+?":
            raise _Unmodelled("repetition without operand")
        return _Char(c)

    def _group(self) -> _Node:
        self.i += 1
        if self._peek() == "?":
            rest = self.p[self.i :]
            if rest.startswith(("?P<", "?<")):
                close = self.p.find(">", self.i)
                if close < 0:
                    raise _Unmodelled("unterminated group name")
                self.i = close + 1
            else:
                j = self.i + 1
                while j < len(self.p) and self.p[j] in "imsU-":
                    j += 1
                if j < len(self.p) and self.p[j] == ")":
                    self.i = j + 1
                    return _Empty()  # flags for the rest of the group: no effect here
                if j < len(self.p) and self.p[j] == ":":
                    self.i = j + 1
                else:
                    raise _Unmodelled("unknown group syntax")
        inner = self._alt()
        if self._peek() != ")":
            raise _Unmodelled("missing )")
        self.i += 1
        return inner

    def _escape(self) -> _Node:
        self.i += 1
        c = self._peek()
        if not c:
            raise _Unmodelled("trailing backslash")
        if c == "Q":
            end = self.p.find("\\E", self.i + 1)
            text = self.p[self.i + 1 :] if end < 0 else self.p[self.i + 1 : end]
            self.i = len(self.p) if end < 0 else end + 2
            return _Concat(tuple(_Char(ch) for ch in text))
        if c in "bBAz":
            self.i += 1
            return _Empty()
        got = self._class_escape()
        if isinstance(got, str):
            return _Char(got)
        return got

    def _class_escape(self) -> str | _Class:
        """After a backslash (at self.i): a single character or a class."""
        c = self._peek()
        self.i += 1
        if c in "dswDSW":
            ranges = _normalize(_PERL[c.lower()])
            return _Class(_negate(ranges) if c.isupper() else ranges)
        if c in "pP":
            return self._unicode_class(negated=c == "P")
        if c == "x":
            if self._peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise _Unmodelled("bad \\x{}")
                code = int(self.p[self.i + 1 : end], 16)
                self.i = end + 1
            else:
                code = int(self.p[self.i : self.i + 2], 16)
                self.i += 2
            return chr(code)
        if c in "01234567":
            j = self.i
            while j < len(self.p) and j < self.i + 2 and self.p[j] in "01234567":
                j += 1
            code = int(c + self.p[self.i : j], 8)
            self.i = j
            return chr(code)
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "C":
            raise _GoUnsupported("invalid escape sequence: \\C")
        if c.isascii() and not c.isalnum():
            return c
        raise _Unmodelled(f"unknown escape \\{c}")

    def _unicode_class(self, negated: bool) -> _Class:
        if self._peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise _Unmodelled("bad \\p{}")
            name = self.p[self.i + 1 : end]
            self.i = end + 1
        else:
            name = self._peek()
            self.i += 1
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        ranges = _normalize(_UNICODE_APPROX.get(name, (_NON_ASCII,)))
        return _Class(_negate(ranges) if negated else ranges, big=True)

    def _class(self) -> _Class:
        self.i += 1
        negated = self._peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        big = False
        first = True
        while True:
            c = self._peek()
            if not c:
                raise _Unmodelled("missing ]")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if self.p.startswith("[:", self.i):
                end = self.p.find(":]", self.i + 2)
                if end < 0:
                    raise _Unmodelled("bad POSIX class")
                name = self.p[self.i + 2 : end]
                self.i = end + 2
                neg = name.startswith("^")
                cls = _normalize(_POSIX[name[1:] if neg else name])
                ranges.extend(_negate(cls) if neg else cls)
                continue
            lo = self._class_char()
            if isinstance(lo, _Class):
                ranges.extend(lo.ranges)
                big = big or lo.big
                continue
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.i += 1
                hi = self._class_char()
                if isinstance(hi, _Class):
                    raise _Unmodelled("class in range")
                ranges.append((ord(lo), ord(hi)))
            else:
                ranges.append((ord(lo), ord(lo)))
        norm = _normalize(ranges)
        return _Class(_negate(norm) if negated else norm, big=big or negated)

    def _class_char(self) -> str | _Class:
        c = self._peek()
        if c == "\\":
            self.i += 1
            return self._class_escape()
        self.i += 1
        return c


@functools.lru_cache(maxsize=512)
def _parse(pattern: str) -> _Node | None:
    """The syntax tree, or None when the parser does not model the pattern (kept: a query
    asks about each of its patterns several times, and the trees are immutable)."""
    try:
        return _Parser(pattern).parse()
    except (_Unmodelled, ValueError, KeyError, IndexError, RecursionError):
        return None


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
    try:
        _Parser(pattern).parse()
    except _GoUnsupported as e:
        return str(e)
    except (_Unmodelled, ValueError, KeyError, IndexError, RecursionError):
        pass
    return None


def literal_text(pattern: str) -> str | None:
    """The text matched, when `pattern` is a plain literal (no operators, no flags)."""
    node = _parse(pattern)
    if isinstance(node, _Char):
        return node.char
    if isinstance(node, _Concat) and node.items and all(isinstance(n, _Char) for n in node.items):
        return "".join(n.char for n in node.items if isinstance(n, _Char))
    return None


def has_uppercase(pattern: str) -> bool:
    """Zoekt's `case:auto` test: is an ASCII uppercase letter part of the pattern?"""
    node = _parse(pattern)
    if node is None:  # rough fallback: an unescaped A-Z anywhere
        return bool(re.search(r"(?<!\\)[A-Z]", pattern))
    return _upper(node)


def _is_upper(code: int) -> bool:
    return ord("A") <= code <= ord("Z")


def _upper(node: _Node) -> bool:
    if isinstance(node, _Char):
        return len(node.char) == 1 and _is_upper(ord(node.char))
    if isinstance(node, _Class):
        return any(_is_upper(lo) or _is_upper(hi) for lo, hi in node.ranges)
    if isinstance(node, _Concat | _Alt):
        return any(_upper(n) for n in node.items)
    if isinstance(node, _Repeat):
        return _upper(node.item)
    return False


def required_literals(pattern: str) -> LitQuery:
    """The literal substrings (>= 3 characters) that any match of `pattern` contains."""
    node = _parse(pattern)
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


def _info(node: _Node) -> tuple[frozenset[str] | None, LitQuery]:
    """(the exact set of strings matched when small and known, else a requirement)."""
    if isinstance(node, _Char):
        return frozenset({fold_ascii(node.char)}), MATCH_ALL
    if isinstance(node, _Empty):
        return frozenset({""}), MATCH_ALL
    if isinstance(node, _AnyChar):
        return None, MATCH_ALL
    if isinstance(node, _Class):
        if node.big or sum(hi - lo + 1 for lo, hi in node.ranges) > MAX_CLASS:
            return None, MATCH_ALL
        chars = {fold_ascii(chr(c)) for lo, hi in node.ranges for c in range(lo, hi + 1)}
        return (frozenset(chars), MATCH_ALL) if chars else (None, MATCH_ALL)
    if isinstance(node, _Concat):
        return _concat_info(node.items)
    if isinstance(node, _Alt):
        infos = [_info(n) for n in node.items]
        if all(e is not None for e, _ in infos):
            union = frozenset(s for e, _ in infos if e is not None for s in e)
            if len(union) <= MAX_SET:
                return union, MATCH_ALL
        return None, any_of(_from_exact(e) if e is not None else r for e, r in infos)
    return _repeat_info(node)


def _concat_info(items: tuple[_Node, ...]) -> tuple[frozenset[str] | None, LitQuery]:
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


def _repeat_info(node: _Repeat) -> tuple[frozenset[str] | None, LitQuery]:
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
