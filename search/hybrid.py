"""Hybrid ranking: reciprocal-rank fusion of semantic and lexical hits, overlaps merged.

`fuse(rankings, k, weights)` (pure) scores every hit `sum(weight / (k + rank))` over the
ranked lists it appears in, then merges hits of the same file whose line ranges overlap
(or touch) into one hit spanning both; the merged hit keeps its best part's score (two
neighbouring chunks are one place, not twice the evidence) and its `sources` say which
engines found it. Nothing here touches the store or the model.

Defaults (k=10, lexical weight 0.5, 50 hits a leg) were tuned on ../shared/eval-dev
only; the neighbourhood k 5..10, weight 0.4..0.7 scores within 0.01 of them
(docs/BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ctxd.search.models import Hit, LineMatch, MatchSource


def _key(h: Hit) -> tuple[str, str, int, int]:
    return (h.repository, h.path, h.start_line, h.end_line)


def fuse(
    rankings: Sequence[Sequence[Hit]],
    *,
    k: int = 10,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """One ranked list from several (best first each), by reciprocal rank fusion.

    Args:
        rankings: ranked hit lists, e.g. [semantic, lexical].
        k: the RRF constant; larger flattens the difference between ranks.
        weights: one per ranking (default 1.0 each).

    Returns:
        Hits ordered by fused score (ties: repository, path, line), overlapping ranges
        of one file merged.
    """
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    scores: dict[tuple[str, str, int, int], float] = {}
    first: dict[tuple[str, str, int, int], Hit] = {}
    sources: dict[tuple[str, str, int, int], set[MatchSource]] = {}
    matches: dict[tuple[str, str, int, int], set[LineMatch]] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, hit in enumerate(ranking, start=1):
            key = _key(hit)
            scores[key] = scores.get(key, 0.0) + weight / (k + rank)
            first.setdefault(key, hit)
            sources.setdefault(key, set()).update(hit.sources)
            matches.setdefault(key, set()).update(hit.matches)
    fused = [
        replace(first[key], score=scores[key], sources=_ordered(sources[key]),
                matches=tuple(sorted(matches[key], key=lambda m: m.line)))
        for key in scores
    ]
    return sorted(merge_overlaps(fused), key=lambda h: (-h.score, h.repository, h.path,
                                                        h.start_line))


def _ordered(sources: set[MatchSource]) -> tuple[MatchSource, ...]:
    return tuple(s for s in MatchSource if s in sources)


def merge_overlaps(hits: Sequence[Hit]) -> list[Hit]:
    """Merge hits of the same file whose line ranges overlap or touch."""
    by_file: dict[tuple[str, str], list[Hit]] = {}
    for h in hits:
        by_file.setdefault((h.repository, h.path), []).append(h)
    out: list[Hit] = []
    for group in by_file.values():
        group.sort(key=lambda h: (h.start_line, h.end_line))
        current = group[0]
        for h in group[1:]:
            if h.start_line <= current.end_line + 1:
                current = _merge(current, h)
            else:
                out.append(current)
                current = h
        out.append(current)
    return out


def _merge(a: Hit, b: Hit) -> Hit:
    best = a if a.score >= b.score else b
    start, end = min(a.start_line, b.start_line), max(a.end_line, b.end_line)
    snippet = best.snippet
    if a.snippet and b.snippet and a.end_line < b.end_line and b.start_line > a.start_line:
        overlap = a.end_line - b.start_line + 1
        tail = b.snippet.split("\n")[max(overlap, 0):]
        snippet = "\n".join([*a.snippet.split("\n"), *tail])
    return replace(
        best,
        start_line=start,
        end_line=end,
        score=max(a.score, b.score),
        sources=_ordered(set(a.sources) | set(b.sources)),
        snippet=snippet,
        matches=tuple(sorted({*a.matches, *b.matches}, key=lambda m: m.line)),
        symbol=best.symbol,
    )
