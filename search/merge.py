"""One result per definition: merge the hits of one file that are one piece of code.

Pure (hits in, hits out). Two hits of one file merge when

- their line ranges overlap or touch (`b.start_line <= a.end_line + 1`), or
- they are adjacent checkpoints of the same definition: the same `symbol` and at most
  `MAX_DEFINITION_GAP` lines between them. The chunker leaves no line with code outside
  every checkpoint (`indexer.chunk.chunker`: checkpoints have no leading or trailing blank
  lines, and every non-blank line is in one), so those gap lines are blank: a long
  function cut into parts comes back as one hit.

The merged hit keeps its best part's score (never a sum: a definition cut in two must
not outrank one that was not), the union of `sources`, `matches` and the places of
identical copies (`also_in`, joined per file by `search.copies.union_copies`), and one snippet
numbered from the merged `start_line` (gap lines as blank lines); when a part's text does
not span its range (a lexical hit shows only its context blocks), the parts' texts become
the hit's `blocks`, each numbered from its own line, and the snippet is the first block.

Every search mode merges its page with it, so the CLI and MCP show one result per
definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ctxd.search.copies import union_copies
from ctxd.search.models import Block, Hit, MatchSource

MAX_DEFINITION_GAP = 2
"""Blank lines allowed between two checkpoints of one definition for them to merge."""


def merge_overlaps(hits: Sequence[Hit]) -> list[Hit]:
    """Merge hits of the same file whose line ranges overlap or touch, or that are
    adjacent checkpoints of one definition (module docstring); grouped by file, in
    line order (callers re-rank)."""
    by_file: dict[tuple[str, str], list[Hit]] = {}
    for h in hits:
        by_file.setdefault((h.repository, h.path), []).append(h)
    out: list[Hit] = []
    for group in by_file.values():
        group.sort(key=lambda h: (h.start_line, h.end_line))
        current = group[0]
        for h in group[1:]:
            if _joins(current, h):
                current = _merge(current, h)
            else:
                out.append(current)
                current = h
        out.append(current)
    return out


def merge_ranked(hits: Sequence[Hit]) -> list[Hit]:
    """`merge_overlaps`, then best first (`by_score`)."""
    return by_score(merge_overlaps(hits))


def by_score(hits: Sequence[Hit]) -> list[Hit]:
    """Best first (ties: repository, path, line)."""
    return sorted(hits, key=lambda h: (-h.score, h.repository, h.path, h.start_line))


PER_FILE_TOP = 3
"""`spread_files`: at most this many hits of one file among the first `TOP` results."""
TOP = 10


def spread_files(ranked: Sequence[Hit], per_file: int = PER_FILE_TOP, top: int = TOP
                 ) -> list[Hit]:
    """`ranked` (best first) with at most `per_file` hits of any one file among the first
    `top`: a file's further hits move to just after the `top`-th result, in their order.
    A page of ten then names several files (a test file or a long guide whose every
    section matches no longer fills it), and no file comes first later than before: only
    a file's fourth and later hits move."""
    head: list[Hit] = []
    held: list[Hit] = []
    counts: dict[tuple[str, str], int] = {}
    taken = 0
    for h in ranked:
        if len(head) >= top:
            break
        taken += 1
        f = (h.repository, h.path)
        if counts.get(f, 0) >= per_file:
            held.append(h)
            continue
        counts[f] = counts.get(f, 0) + 1
        head.append(h)
    if not held:
        return list(ranked)
    return descending([*head, *held, *ranked[taken:]])


def descending(ordered: Sequence[Hit]) -> list[Hit]:
    """`ordered` with each score lowered, where needed, just below the one before it, so
    that sorting by score (pages, cursors) keeps this order."""
    out = list(ordered)
    for i in range(1, len(out)):
        if out[i].score >= out[i - 1].score:
            out[i] = replace(out[i], score=out[i - 1].score * 0.999)
    return out


def ordered_sources(sources: set[MatchSource]) -> tuple[MatchSource, ...]:
    """Engines in `MatchSource` order (how every hit lists them)."""
    return tuple(s for s in MatchSource if s in sources)


def _joins(a: Hit, b: Hit) -> bool:
    """Whether `b` (starting at or after `a`) is part of the same piece of code as `a`."""
    if b.start_line <= a.end_line + 1:
        return True
    return (a.symbol is not None and a.symbol == b.symbol
            and b.start_line - a.end_line - 1 <= MAX_DEFINITION_GAP)


def _lines(h: Hit) -> list[str] | None:
    """The hit's snippet as lines, when it spans exactly its range (a lexical hit's
    snippet is its first context block only)."""
    lines = h.snippet.split("\n")
    return lines if h.snippet and len(lines) == h.end_line - h.start_line + 1 else None


def _snippet(a: Hit, b: Hit) -> str | None:
    """One snippet for the merge of `a` and `b` (`a` starts first), numbered from
    `a.start_line`; None when a part's text does not span its range (a lexical hit's)."""
    la, lb = _lines(a), _lines(b)
    if b.end_line <= a.end_line and la is not None:  # b lies inside a
        return a.snippet
    if la is None or lb is None:
        return None
    gap = b.start_line - a.end_line - 1
    if gap >= 0:
        return "\n".join([*la, *[""] * gap, *lb])
    return "\n".join([*la, *lb[-gap:]])


def _blocks(h: Hit) -> tuple[Block, ...]:
    """A hit's text as numbered blocks: its own (lexical), else its snippet."""
    return h.blocks or (Block(h.start_line, tuple(h.snippet.split("\n"))),)


def _parts(a: Hit, b: Hit) -> tuple[Block, ...]:
    """The blocks of both parts in line order, a block inside an earlier one dropped: a
    merge whose texts do not make one snippet shows each at its own line numbers."""
    out: list[Block] = []
    for block in sorted((*_blocks(a), *_blocks(b)), key=lambda x: x.start_line):
        end = block.start_line + len(block.lines) - 1
        if out and end <= out[-1].start_line + len(out[-1].lines) - 1:
            continue
        out.append(block)
    return tuple(out)


def _merge(a: Hit, b: Hit) -> Hit:
    best = a if a.score >= b.score else b
    snippet = _snippet(a, b)
    blocks = () if snippet is not None else _parts(a, b)
    merged = replace(best, start_line=min(a.start_line, b.start_line),
                     end_line=max(a.end_line, b.end_line))
    return replace(
        merged,
        also_in=union_copies(a.also_in, b.also_in, merged, MAX_DEFINITION_GAP),
        score=max(a.score, b.score),
        sources=ordered_sources({*a.sources, *b.sources}),
        snippet=snippet if snippet is not None else "\n".join(blocks[0].lines),
        blocks=blocks,
        matches=tuple(sorted({*a.matches, *b.matches}, key=lambda m: m.line)),
        symbol=best.symbol,
    )
