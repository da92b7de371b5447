"""A lenient RE2 syntax tree: what `regex_trigrams` walks to find a pattern's literals.

`parse_regex(pattern)` returns the tree (`Node`: `Char`, `Class`, `AnyChar`, `Empty`, `Concat`,
`Alt`, `Repeat`) or None when the parser meets syntax it does not model; `go_unsupported`
says why Go's regexp (Zoekt's) would reject a pattern RE2 accepts. The parser only has to
be right about structure (groups, alternation, repetition, classes, escapes, Perl, POSIX
and approximated Unicode classes); validity is decided by RE2 itself
(`regex_trigrams.check_pattern`).

Invariants: pure; an unmodelled construct gives None, never a wrong tree (the caller then
asks for no literal: a weaker filter, never a wrong one); trees are immutable and cached
per pattern.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MAX_CODEPOINT", "Alt", "AnyChar", "Char", "Class", "Concat", "Empty",
           "GoUnsupported", "Node", "Repeat", "go_unsupported", "parse_regex"]

MAX_CODEPOINT = 0x10FFFF


@dataclass(frozen=True, slots=True)
class Char:
    char: str


@dataclass(frozen=True, slots=True)
class Class:
    ranges: tuple[tuple[int, int], ...]
    """Normalized (sorted, merged) code point ranges, negation applied."""
    big: bool = False
    """Approximated (Unicode tables): never expanded into alternatives."""


@dataclass(frozen=True, slots=True)
class AnyChar:
    pass


@dataclass(frozen=True, slots=True)
class Empty:
    """Matches the empty string: anchors, `\\b`, flag groups, empty branches."""


@dataclass(frozen=True, slots=True)
class Concat:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Repeat:
    item: Node
    min: int
    max: int | None


Node = Char | Class | AnyChar | Empty | Concat | Alt | Repeat


class Unmodelled(Exception):
    """The parser met syntax it does not model: fall back to 'no requirement'."""


class GoUnsupported(Exception):
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


class Parser:
    """Recursive descent over RE2 (Perl-flavoured) syntax, positions in characters."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def parse(self) -> Node:
        node = self._alt()
        if self.i != len(self.p):
            raise Unmodelled(f"unexpected {self.p[self.i]!r} at {self.i}")
        return node

    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def _alt(self) -> Node:
        branches = [self._concat()]
        while self._peek() == "|":
            self.i += 1
            branches.append(self._concat())
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def _concat(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.p) and self._peek() not in "|)":
            item = self._quantified(self._atom())
            # Groups and \Q...\E are transparent: `(ab)c` is the literal `abc`.
            items.extend(item.items if isinstance(item, Concat) else (item,))
        return Concat(tuple(items))

    def _quantified(self, atom: Node) -> Node:
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
            atom = Repeat(atom, lo, hi)

    def _atom(self) -> Node:
        c = self._peek()
        if c == "(":
            return self._group()
        if c == "[":
            return self._class()
        if c == "\\":
            return self._escape()
        self.i += 1
        if c == ".":
            return AnyChar()
        if c in "^$":
            return Empty()
        if c in "*+?":
            raise Unmodelled("repetition without operand")
        return Char(c)

    def _group(self) -> Node:
        self.i += 1
        if self._peek() == "?":
            rest = self.p[self.i :]
            if rest.startswith(("?P<", "?<")):
                close = self.p.find(">", self.i)
                if close < 0:
                    raise Unmodelled("unterminated group name")
                self.i = close + 1
            else:
                j = self.i + 1
                while j < len(self.p) and self.p[j] in "imsU-":
                    j += 1
                if j < len(self.p) and self.p[j] == ")":
                    self.i = j + 1
                    return Empty()  # flags for the rest of the group: no effect here
                if j < len(self.p) and self.p[j] == ":":
                    self.i = j + 1
                else:
                    raise Unmodelled("unknown group syntax")
        inner = self._alt()
        if self._peek() != ")":
            raise Unmodelled("missing )")
        self.i += 1
        return inner

    def _escape(self) -> Node:
        self.i += 1
        c = self._peek()
        if not c:
            raise Unmodelled("trailing backslash")
        if c == "Q":
            end = self.p.find("\\E", self.i + 1)
            text = self.p[self.i + 1 :] if end < 0 else self.p[self.i + 1 : end]
            self.i = len(self.p) if end < 0 else end + 2
            return Concat(tuple(Char(ch) for ch in text))
        if c in "bBAz":
            self.i += 1
            return Empty()
        got = self._class_escape()
        if isinstance(got, str):
            return Char(got)
        return got

    def _class_escape(self) -> str | Class:
        """After a backslash (at self.i): a single character or a class."""
        c = self._peek()
        self.i += 1
        if c in "dswDSW":
            ranges = _normalize(_PERL[c.lower()])
            return Class(_negate(ranges) if c.isupper() else ranges)
        if c in "pP":
            return self._unicode_class(negated=c == "P")
        if c == "x":
            if self._peek() == "{":
                end = self.p.find("}", self.i)
                if end < 0:
                    raise Unmodelled("bad \\x{}")
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
            raise GoUnsupported("invalid escape sequence: \\C")
        if c.isascii() and not c.isalnum():
            return c
        raise Unmodelled(f"unknown escape \\{c}")

    def _unicode_class(self, negated: bool) -> Class:
        if self._peek() == "{":
            end = self.p.find("}", self.i)
            if end < 0:
                raise Unmodelled("bad \\p{}")
            name = self.p[self.i + 1 : end]
            self.i = end + 1
        else:
            name = self._peek()
            self.i += 1
        if name.startswith("^"):
            negated, name = not negated, name[1:]
        ranges = _normalize(_UNICODE_APPROX.get(name, (_NON_ASCII,)))
        return Class(_negate(ranges) if negated else ranges, big=True)

    def _class(self) -> Class:
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
                raise Unmodelled("missing ]")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if self.p.startswith("[:", self.i):
                end = self.p.find(":]", self.i + 2)
                if end < 0:
                    raise Unmodelled("bad POSIX class")
                name = self.p[self.i + 2 : end]
                self.i = end + 2
                neg = name.startswith("^")
                cls = _normalize(_POSIX[name[1:] if neg else name])
                ranges.extend(_negate(cls) if neg else cls)
                continue
            lo = self._class_char()
            if isinstance(lo, Class):
                ranges.extend(lo.ranges)
                big = big or lo.big
                continue
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.i += 1
                hi = self._class_char()
                if isinstance(hi, Class):
                    raise Unmodelled("class in range")
                ranges.append((ord(lo), ord(hi)))
            else:
                ranges.append((ord(lo), ord(lo)))
        norm = _normalize(ranges)
        return Class(_negate(norm) if negated else norm, big=big or negated)

    def _class_char(self) -> str | Class:
        c = self._peek()
        if c == "\\":
            self.i += 1
            return self._class_escape()
        self.i += 1
        return c


@functools.lru_cache(maxsize=512)
def parse_regex(pattern: str) -> Node | None:
    """The syntax tree, or None when the parser does not model the pattern (kept: a query
    asks about each of its patterns several times, and the trees are immutable)."""
    try:
        return Parser(pattern).parse()
    except (Unmodelled, ValueError, KeyError, IndexError, RecursionError):
        return None


def go_unsupported(pattern: str) -> str | None:
    """Why Go's regexp (which Zoekt uses) rejects `pattern` that RE2 in C++ accepts
    (`\\C`, ...), or None."""
    try:
        Parser(pattern).parse()
    except GoUnsupported as e:
        return str(e)
    except (Unmodelled, ValueError, KeyError, IndexError, RecursionError):
        pass
    return None
