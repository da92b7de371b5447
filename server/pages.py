"""The records and constants of the search use cases, kept light for the edges.

`SearchPage` (ranked hits, any mode), `LexicalPage` (Zoekt-syntax and path search),
`file_hit` (a lexical file match as a hit) and `MODES`. `server/search_cases.py` returns
them; `server/cli/render.py` and the daemon protocol import them from here, so that
rendering a page (e.g. an answer from the daemon) does not load the search engines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxd.search.models import Block, FileMatch, Hit, LexicalResult, MatchSource

MODES = ("hybrid", "semantic", "keyword", "lexical")
"""hybrid: semantic + keyword (+ Zoekt) fused; semantic: vectors only; keyword: BM25 over
checkpoint words; lexical: the query is Zoekt syntax, run by the lexical engine."""


@dataclass(slots=True)
class LexicalPage:
    """One page of a lexical (Zoekt-syntax) search."""

    query: str
    result: LexicalResult
    offset: int
    next_cursor: str | None = None


@dataclass(slots=True)
class SearchPage:
    """One page of ranked hits."""

    query: str
    mode: str
    results: list[Hit]
    next_cursor: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def file_hit(fm: FileMatch, source: MatchSource = MatchSource.LEXICAL) -> Hit:
    """A lexical file match as a ranked hit: `start_line..end_line` spans its context
    blocks (one per matching line when there is no context), `snippet` is the first block,
    numbered from `start_line`; every block keeps its own numbering in `blocks`."""
    blocks = fm.blocks or tuple(Block(m.line, (m.text,)) for m in fm.matches)
    if not blocks:
        blocks = (Block(1, ()),)
    last = blocks[-1]
    return Hit(
        repository=fm.repository,
        path=fm.path,
        language=fm.language,
        start_line=blocks[0].start_line,
        end_line=last.start_line + max(len(last.lines) - 1, 0),
        score=round(fm.score, 4),
        sources=(source,),
        snippet="\n".join(blocks[0].lines),
        matches=fm.matches,
        blocks=blocks if len(blocks) > 1 else (),
    )
