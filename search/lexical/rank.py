"""Ranking and match shaping for the embedded lexical engine, after Zoekt's scoring.

Scores follow Zoekt's default (non-BM25) scoring in `index/score.go`, without its
shard-order tie-breakers (the engine breaks ties by repository, then path):

- a match fragment scores +500 when both its ends sit on a character-class change
  (lowercase, uppercase, digit, `.,;"'`, space, other), +50 for one end;
- a fragment overlapping a symbol definition's name adds +7000 (exactly the name),
  +5500 (one edge) or +4000 (inside), plus a kind bonus (`kind_score`: class 1000,
  function 700, ... with Zoekt's per-language tables for Python and Go);
- a fragment in the file path adds +7000/+5500/+4000 for the base name likewise;
- a file scores its best fragment plus up to +400 when several query atoms matched
  (`atom_bonus`), truncated to an integer.

Match shaping turns byte spans into lines: overlapping spans are dropped (Zoekt's
rule), spans are cut at newlines (`split_on_newlines`), context windows merge when
they overlap or touch (`merge_windows`), and columns are 1-based characters
(`columns`). Pure functions over bytes; used by the embedded engine
(`search/lexical/engine.py`, `search/lexical/eval.py`, `search/lexical/files.py`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import NamedTuple

import numpy as np

SCORE_WORD = 500.0
SCORE_PARTIAL_WORD = 50.0
SCORE_SYMBOL = 7000.0
SCORE_PARTIAL_SYMBOL = 4000.0
SCORE_KIND = 100.0
SCORE_ATOMS = 400.0
NEAR_LINES = 3
"""Lines within which the words a query ANDs count as near each other (the engine's
`SCORE_NEAR`)."""
_NEWLINE = ord("\n")


def _byte_class(c: int) -> int:
    if 97 <= c <= 122:
        return 0
    if 65 <= c <= 90:
        return 1
    if 48 <= c <= 57:
        return 2
    if c in (32, 10):
        return 5
    if c in (46, 44, 59, 34, 39):  # . , ; " '
        return 3
    return 4


_CLASS = bytes(_byte_class(c) for c in range(256))

_KIND_FACTOR: dict[str, float] = {
    "class": 10,
    "struct": 9.5,
    "enum": 9,
    "interface": 8,
    "trait": 8,
    "type": 8,
    "typealias": 8,
    "type_alias": 8,
    "function": 7,
    "func": 7,
    "method": 7,
    "constructor": 7,
    "field": 5.5,
    "member": 5.5,
    "property": 5.5,
    "constant": 5,
    "const": 5,
    "variable": 4,
    "var": 4,
    "chapter": 4,
    "heading": 3,
    "section": 3,
    "subsection": 2,
}
_LANGUAGE_KIND_FACTOR: dict[str, dict[str, float]] = {
    # Zoekt's ctags calls Python methods "member", which it scores as a field (4).
    "python": {"class": 10, "function": 8, "method": 4, "member": 4, "field": 4, "variable": 3},
    "go": {
        "interface": 10,
        "struct": 9,
        "type": 9,
        "typealias": 9,
        "function": 8,
        "func": 8,
        "method": 8,
        "field": 7,
        "constant": 6,
        "const": 6,
        "variable": 5,
    },
    "java": {"class": 10, "enum": 9, "interface": 8, "method": 7, "field": 6},
}


def kind_score(language: str, kind: str, name: str) -> float:
    """The bonus for a match on a definition of this kind (Zoekt's scoreSymbolKind)."""
    lang, k = language.lower(), kind.lower()
    factor = _LANGUAGE_KIND_FACTOR.get(lang, {}).get(k, _KIND_FACTOR.get(k, 1.0))
    if lang == "go" and name[:1].isupper():
        factor += 0.5
    return factor * SCORE_KIND


def word_score(data: bytes, start: int, end: int) -> float:
    """+500 when the match starts and ends at a character-class change, +50 for one end."""
    n = len(data)
    at_start = start < n and (start == 0 or _CLASS[data[start - 1]] != _CLASS[data[start]])
    at_end = end > 0 and (end == n or _CLASS[data[end - 1]] != _CLASS[data[end]])
    if at_start and at_end:
        return SCORE_WORD
    return SCORE_PARTIAL_WORD if at_start or at_end else 0.0


def path_fragment_score(path: bytes, start: int, end: int) -> float:
    """A match in a file path: word score plus the base-name bonus."""
    score = word_score(path, start, end)
    sep = path.rfind(b"/")
    start_match, end_match = start == sep + 1, end == len(path)
    if start_match and end_match:
        score += SCORE_SYMBOL
    elif start_match or end_match:
        score += (SCORE_SYMBOL + SCORE_PARTIAL_SYMBOL) / 2
    elif sep < start:
        score += SCORE_PARTIAL_SYMBOL
    return score


class Section(NamedTuple):
    """A symbol definition's name in a file: byte range and kind. A named tuple: made
    quicker than a frozen dataclass, and equal to the plain tuple the kept texts hold
    (`texts.Placed`)."""

    start: int
    end: int
    kind: str
    name: str


def content_fragment_score(
    data: bytes, start: int, end: int, sections: Sequence[Section], language: str
) -> float:
    """A content match: word score plus the symbol bonus of the best-overlapping definition."""
    score = word_score(data, start, end)
    best: Section | None = None
    best_overlap = 0.0
    for sec in sections:
        overlap = min(sec.end, end) - max(sec.start, start)
        if overlap > 0 and sec.end > sec.start:
            rel = overlap / (sec.end - sec.start)
            if rel > best_overlap:
                best, best_overlap = sec, rel
    if best is not None:
        s_match, e_match = best.start == start, best.end == end
        if s_match and e_match:
            score += SCORE_SYMBOL
        elif s_match or e_match:
            score += (SCORE_SYMBOL + SCORE_PARTIAL_SYMBOL) / 2
        else:
            score += SCORE_PARTIAL_SYMBOL
        score += kind_score(language, best.kind, best.name)
    return score


def atom_bonus(atoms: int) -> float:
    """Up to +400 when several query atoms matched the file."""
    return (1.0 - 1.0 / atoms) * SCORE_ATOMS if atoms > 0 else 0.0


# -- match shaping ---------------------------------------------------------------------------

Span = tuple[bool, int, int]
"""(is_path, start byte, end byte): one match of one atom."""


def dedupe_spans(spans: Iterable[Span]) -> list[Span]:
    """Sort (path matches first, then by offset, longer first) and drop overlapping ones."""
    spans = list(spans)
    if all(
        not a[0] and not b[0] and a[2] <= b[1] and (a[1] < b[1] or b[1] == b[2])
        for a, b in pairwise(spans)
    ) and not (spans and spans[0][0]):
        return spans  # content spans already in that order, none overlapping: one atom's
    ordered = sorted(spans, key=lambda s: (not s[0], s[1], -(s[2] - s[1])))
    out: list[Span] = []
    for s in ordered:
        if out and out[-1][0] == s[0] and s[1] < out[-1][2]:
            continue
        out.append(s)
    return out


def line_starts(data: bytes) -> list[int]:
    """Byte offset where each line starts (line n starts at `starts[n - 1]`).

    A text ending in a newline has a last, empty line starting at `len(data)`.
    """
    ends = (np.frombuffer(data, dtype=np.uint8) == _NEWLINE).nonzero()[0]
    ends += 1
    return [0, *ends.tolist()]  # vectorized: no Python per line, no bytes object per line


def line_of(starts: Sequence[int], offset: int) -> int:
    """The 1-based line holding a byte offset (a newline belongs to the line it ends)."""
    return bisect.bisect_right(starts, offset)


def split_on_newlines(
    spans: Iterable[tuple[int, int]], starts: Sequence[int], size: int
) -> dict[int, list[tuple[int, int]]]:
    """Content spans cut at newlines, empty pieces dropped, grouped by 1-based line."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    last = len(starts)
    for start, end in spans:
        s = start
        line = bisect.bisect_right(starts, s)  # line_of, inlined: this runs per match
        stop_at = starts[line] - 1 if line < last else size
        if end <= stop_at:  # the usual case: the span ends on its line
            if end > s:
                by_line.setdefault(line, []).append((s, end))
            continue
        while True:
            stop_at = starts[line] - 1 if line < last else size  # this line's newline (or EOF)
            stop = min(end, stop_at)
            if stop > s:
                by_line.setdefault(line, []).append((s, stop))
            if line >= last or end <= stop_at + 1:
                break
            s = starts[line]
            line += 1
    return by_line


def merge_windows(lines: Iterable[int], context: int, last_line: int) -> list[tuple[int, int]]:
    """Windows of `context` lines around each line, merged when they overlap or touch."""
    out: list[tuple[int, int]] = []
    start = end = -2  # the open window
    for line in sorted(set(lines)):
        lo, hi = line - context, line + context
        if lo < 1:
            lo = 1
        if hi > last_line:
            hi = last_line
        if lo <= end + 1:
            if hi > end:
                end = hi
        else:
            if start != -2:
                out.append((start, end))
            start, end = lo, hi
    if start != -2:
        out.append((start, end))
    return out


def columns(line: bytes, start: int, end: int) -> tuple[int, int]:
    """1-based character columns (end exclusive) of a byte range within one line."""
    if line.isascii():  # a byte is a character: no decoding
        n = len(line)
        a = min(start, n) + 1
        return a, a + max(0, min(end, n) - a + 1)
    a = len(line[:start].decode("utf-8", "replace")) + 1
    return a, a + len(line[start:end].decode("utf-8", "replace"))
