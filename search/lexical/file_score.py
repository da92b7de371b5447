"""How the embedded lexical engine scores and orders one matching file, after Zoekt.

`shape(spans, doc)` keeps a file's matches by Zoekt's rule (content matches, else path
matches, else the whole path) as a `Shaped`; `score_file` gives its score: the best
line's (`search.lexical.rank`'s fragment scores, the definitions on the matching lines
read as `sections`), the atoms' bonus, `SCORE_NEAR` when the words of a query of several
plain words (`and_words`) sit within `NEAR_LINES` lines of each other (`words_near`), built
output (`BUILT_ROLES`) at `BUILT_FACTOR`; `rank_key` orders the `Hit`s: best first, then
repository, source before tests before prose (`file_kind`), path.

Used by `search.lexical.engine` (the per-file path) and mirrored by
`search.lexical.batch` (the same answers from arrays). Pure functions over a file's
`Doc` and its matches.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass, field

from ctxd.search.lexical.eval import Doc, Row, SymbolRow
from ctxd.search.lexical.query import And, Field, Node, Text
from ctxd.search.lexical.rank import (
    NEAR_LINES,
    SCORE_SYMBOL,
    SCORE_WORD,
    Section,
    Span,
    atom_bonus,
    content_fragment_score,
    dedupe_spans,
    path_fragment_score,
    split_on_newlines,
    word_score,
)
from ctxd.search.path_kinds import is_prose, is_test_or_stub

__all__ = ["BUILT_FACTOR", "BUILT_ROLES", "SCORE_NEAR", "Hit", "Shaped", "and_words",
           "file_kind", "file_score", "line_count", "rank_key", "score_file", "sections",
           "shape", "words_near"]


@dataclass(slots=True)
class Hit:
    row: Row
    score: float
    lines: int


@dataclass(slots=True)
class Shaped:
    """A file's matches in byte terms, before text is attached."""

    content: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    path: list[tuple[int, int]] | None = None
    whole_path: bool = False


def shape(spans: Sequence[Span], doc: Doc) -> Shaped:
    """Zoekt's rule: content matches if any, else path matches, else the whole path."""
    kept = dedupe_spans(spans)
    content = [(s, e) for is_path, s, e in kept if not is_path]
    if content:
        return Shaped(content=split_on_newlines(content, doc.starts, len(doc.data)))
    path = [(s, e) for is_path, s, e in kept if is_path]
    if path:
        return Shaped(path=[(s, e) for s, e in path if e > s])
    return Shaped(whole_path=True)


def line_count(shaped: Shaped) -> int:
    """Matching lines (Zoekt's line-mode count): a path-only match counts one."""
    if shaped.content:
        return len(shaped.content)
    return 1 if shaped.path is not None or shaped.whole_path else 0


def sections(
    doc: Doc, symbols: Sequence[SymbolRow], wanted: Container[int]
) -> dict[int, list[Section]]:
    """Definition names on the wanted lines, as byte ranges (first spelling on the line)."""
    out: dict[int, list[Section]] = {}
    if not symbols:
        return out
    for sym in symbols:
        if sym.line not in wanted or not doc.has_line(sym.line):
            continue
        line = doc.line_bytes(sym.line)
        name = sym.name.encode("utf-8", "surrogatepass")
        at = line.find(name) if name else -1
        if at >= 0:
            start = doc.line_start(sym.line) + at
            out.setdefault(sym.line, []).append(
                Section(start, start + len(name), sym.kind, sym.name)
            )
    return out


def score_file(shaped: Shaped, doc: Doc, atoms: int, symbols: Sequence[SymbolRow] | None,
               near: int = 0) -> float:
    """Zoekt's default file score (without its shard-order tie-breakers); `near`: the
    number of plain words a query ANDs (`and_words`), whose nearness earns `SCORE_NEAR`."""
    best = 0.0
    if shaped.content:
        by_line = sections(doc, symbols or (), shaped.content)
        data, language = doc.data, doc.row.language
        for line, secs in by_line.items():  # the lines that can score above a word's
            for s, e in shaped.content[line]:
                best = max(best, content_fragment_score(data, s, e, secs, language))
        for line, pieces in shaped.content.items():
            if best >= SCORE_WORD:  # no other line can do better
                break
            if line not in by_line:
                for s, e in pieces:
                    best = max(best, word_score(data, s, e))
    elif shaped.path:
        best = max(path_fragment_score(doc.path_bytes, s, e) for s, e in shaped.path)
    near_hit = near >= 2 and atoms >= near and words_near(shaped, doc.data, near)
    return file_score(best, atoms, near_hit, doc.row.role)


def file_score(best: float, atoms: int, near_hit: bool, role: str) -> float:
    """A file's score from its best match's: the atoms' bonus, the nearness bonus, built
    output's share, truncated."""
    score = best + atom_bonus(atoms)
    if near_hit:
        score += SCORE_NEAR
    if role in BUILT_ROLES:
        score *= BUILT_FACTOR
    return float(math.trunc(score))


SCORE_NEAR = SCORE_SYMBOL
"""Bonus of a file whose matched words all sit within `NEAR_LINES` lines of each other: as
much as a match on a definition's name, so that the line holding every word outranks a
Markdown heading that holds one of them (headings are symbols, +4000 or more)."""


_PLAIN_WORD = re.compile(r"\w+")


def and_words(root: Node) -> int:
    """How many plain words (no regex) an unquoted multi-word query ANDs over the
    content (`retry backoff delay`: 3); 0 for any other query, which Zoekt scores."""
    children = root.children if isinstance(root, And) else (root,)
    words = [c for c in children if isinstance(c, Text) and c.field is not Field.PATH
             and _PLAIN_WORD.fullmatch(c.pattern)]
    return len(words) if len(words) >= 2 else 0


def words_near(shaped: Shaped, data: bytes, atoms: int) -> bool:
    """Some `NEAR_LINES` consecutive lines hold `atoms` distinct matched words (the atoms
    of an AND or OR of words: case folded)."""
    lines = sorted(shaped.content)
    words = {line: {data[s:e].lower() for s, e in shaped.content[line]} for line in lines}
    for i, first in enumerate(lines):
        seen: set[bytes] = set()
        for line in lines[i:]:
            if line - first >= NEAR_LINES:
                break
            seen |= words[line]
            if len(seen) >= atoms:
                return True
    return False


BUILT_ROLES = frozenset({"built", "minified"})
"""Roles of copies made by a build (bundles, compiled copies, source maps, minified files):
a phrase they share with the source (an error message) ranks the source first."""
BUILT_FACTOR = 0.5
"""Their score's share: a match on a whole word in the source (500) outranks one in a
bundle, whose path sorts first (`dist/` before `lib/`)."""


def rank_key(hit: Hit) -> tuple[float, str, int, str]:
    """Best first; ties by repository, then source before tests before prose
    (`file_kind`), then path."""
    return (-hit.score, hit.row.repo, file_kind(hit.row.path), hit.row.path)


@functools.lru_cache(maxsize=1 << 16)
def file_kind(path: str) -> int:
    """0 source, 1 tests and stubs (`search.path_kinds.is_test_or_stub`), 2 prose
    (`search.path_kinds.is_prose`): of files that score the same, the code that does it comes
    first, as Zoekt's builder puts a shard's tests and generated files last (a changelog
    that names an identifier no longer comes before the file that assigns it)."""
    if is_prose(path):
        return 2
    return 1 if is_test_or_stub(path) else 0
