"""The records and constants of the search use cases, kept light for the edges.

`SearchPage` (ranked hits, any mode), `LexicalPage` (Zoekt-syntax and path search),
`file_hit` (a lexical file match as a hit) and `MODES`. `server/search_cases.py` returns
them; `server/cli/render.py` and the daemon protocol import them from here, so that
rendering a page (e.g. an answer from the daemon) does not load the search engines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxd.search.models import FileMatch, Hit, LexicalResult, MatchSource

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


def file_hit(fm: FileMatch) -> Hit:
    """A lexical file match as a ranked hit spanning its matching lines."""
    lines = [m.line for m in fm.matches] or [1]
    snippet = "\n".join("\n".join(b.lines) for b in fm.blocks) if fm.blocks else "\n".join(
        m.text for m in fm.matches)
    return Hit(
        repository=fm.repository,
        path=fm.path,
        language=fm.language,
        start_line=min(lines),
        end_line=max(lines),
        score=round(fm.score, 4),
        sources=(MatchSource.LEXICAL,),
        snippet=snippet,
        matches=fm.matches,
    )
