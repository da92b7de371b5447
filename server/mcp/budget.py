"""The token budget of agent pages, and the notes at the foot of every page.

A page never exceeds `budget` estimated tokens (`estimate_tokens`: one token per 3
characters, which overestimates code and prose). `fit(head, items, tail, budget)` says
how many whole items fit; `fit_page` also clips a lone item too large on its own, and
`clip` cuts text at a line boundary, closing an open code fence. The footer helpers say
what was left out and how to continue (`page_notes`, `truncated_note`, `more_note`) and
when each searched repository was last indexed (`freshness_line`, `select_freshness`).

Pure: no I/O. Budgets below `MIN_BUDGET` are raised to it, so a page always has room
for its header and notes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ctxd.server.mcp.schemas import Freshness

CHARS_PER_TOKEN = 3
MIN_BUDGET = 200
"""Budgets below this are raised to it: a page must have room for its header and notes."""


# -- fitting a page -----------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """Tokens a model will likely spend on `text` (an overestimate for code and prose)."""
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def fit(head: str, items: Sequence[str], tail: Callable[[int], str], budget: int) -> int:
    """How many leading `items` fit within `budget` tokens along with `head` and `tail(n)`.

    `tail(n)` is the footer when `n` items are shown (it may grow a truncation notice).
    Returns 0 when not even the first item fits (the caller then clips it).
    """
    budget = max(budget, MIN_BUDGET)
    sizes = [estimate_tokens(i) + 1 for i in items]
    base = estimate_tokens(head) + 1
    if base + sum(sizes) + estimate_tokens(tail(len(items))) <= budget:
        return len(items)
    room = budget - base - estimate_tokens(tail(0))
    n, used = 0, 0
    for size in sizes:
        if used + size > room:
            break
        used += size
        n += 1
    return n


def fit_page(
    head: str, sections: Sequence[str], tail: Callable[[int], str], budget: int
) -> tuple[int, list[str]]:
    """(how many sections are shown, the sections to print) within `budget`.

    At least one section is always shown: when even the first does not fit, it is
    clipped to the room left by `head` and `tail(1)`.
    """
    shown = fit(head, sections, tail, budget)
    if shown or not sections:
        return shown, list(sections[:shown])
    room = budget - estimate_tokens(head) - estimate_tokens(tail(1))
    return 1, [clip(sections[0], room)]


_FENCE = re.compile(r"^(`{3,}|~{3,})")


def clip(text: str, max_tokens: int) -> str:
    """Cut `text` at a line boundary to about `max_tokens`, closing an open code fence."""
    limit = max(max_tokens, 1) * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    kept: list[str] = []
    size = 0
    fence: str | None = None
    for line in text.split("\n"):
        if size + len(line) + 1 > limit - 60:
            break
        kept.append(line)
        size += len(line) + 1
        m = _FENCE.match(line)
        if m and fence is None:
            fence = m.group(1)
        elif m and fence is not None and line.strip() == fence:
            fence = None
    if fence is not None:
        kept.append(fence)
    kept.append("… (clipped to fit the token budget)")
    return "\n".join(kept)


def assemble(head: str, items: Sequence[str], tail: str) -> str:
    parts = [head, *items, tail] if tail else [head, *items]
    return "\n\n".join(p for p in parts if p)


# -- page notes ---------------------------------------------------------------------------


def freshness_line(fresh: Sequence[Freshness], *, limit: int = 10) -> str:
    """One line saying when each searched repository was last indexed."""
    if not fresh:
        return "_Index freshness: no repositories are indexed yet (use `index_repository`)._"
    parts = []
    for f in fresh[:limit]:
        if f["indexing"]:
            last = f"last completed {f['indexed_at']}" if f["indexed_at"] else "first run"
            parts.append(f"`{f['repository']}` re-indexing now ({last})")
        elif f["indexed_at"]:
            parts.append(f"`{f['repository']}` indexed {f['indexed_at']}")
        else:
            parts.append(f"`{f['repository']}` never completed an index run")
        if f.get("embedding_backlog"):
            parts[-1] += (f" ({f.get('embedding_backlog')} checkpoints still to embed: "
                          "semantic search does not see them yet)")
    more = f"; and {len(fresh) - limit} more" if len(fresh) > limit else ""
    return "_Index freshness: " + "; ".join(parts) + more + "._"


def select_freshness(
    fresh: Sequence[dict[str, Any]], repositories: Sequence[str] | None = None
) -> list[Freshness]:
    """The freshness rows of the searched repositories (all of them when unfiltered)."""
    wanted = set(repositories or ())
    out = []
    for f in fresh:
        if wanted and f["repository"] not in wanted:
            continue
        row = Freshness(repository=str(f["repository"]), indexed_at=f.get("indexed_at"),
                        indexing=bool(f.get("indexing")))
        if f.get("embedding_backlog"):
            row["embedding_backlog"] = int(f["embedding_backlog"])
        out.append(row)
    return out


def more_note(tool: str, cursor: str) -> str:
    return (
        f"> More results available. Call `{tool}` again with the same arguments and "
        f'`cursor: "{cursor}"` for the next page.'
    )


def truncated_note(shown: int, of: int, what: str, how: str) -> str:
    return (
        f"> Output truncated to fit the token budget: showing {shown} of {of} {what}. {how}"
    )


CURSOR_PLACEHOLDER = "c" * 128
"""Stands in for a continuation cursor while a page is being fitted (cursors are ~125
characters), so the real one is made once, for the final cut."""


def page_notes(
    tool: str, shown: int, of: int, what: str, next_cursor: str | None, cont: str | None
) -> list[str]:
    """The paging line of a list page: truncated (continue with `cont`), or more pages
    (continue with `next_cursor`), or nothing."""
    if shown < of:
        how = f'Continue with `cursor: "{cont}"`.' if cont else "Narrow the query."
        return [truncated_note(shown, of, what, how)]
    return [more_note(tool, next_cursor)] if next_cursor else []
