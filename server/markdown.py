"""Compact Markdown (and matching structured data) for agents, within a token budget.

Every `render_*` function turns one service-layer result into a `Rendered`: the Markdown
the model reads and the structured content with the same data (the MCP tool's output
schema is the matching `*Output` TypedDict below). Layouts follow the original tool
contracts (../shared/seeds): `## Results for: \\`q\\`` sections for `search`, the symbol
table for `search_symbols`, `## {repository}/{path}` for `file_content`, the enriched
repository list for `list_repos`.

Budget: a page never exceeds `budget` estimated tokens (`estimate_tokens`, one token per
3 characters, which overestimates code and prose). Whole items are dropped from the end
first; an item too large on its own is clipped at a line boundary. Whenever something
was left out the page says so and how to continue (a cursor, `start_index`, or
`start_line`), and the structured data holds exactly the items shown.

Pure: no I/O, no service calls. Callers: `server/mcp_server.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from indexer.errors import CtxdError
from indexer.pipeline import IndexStats
from search.models import FileContent, FileMatch, Hit, LineMatch, Reference, References, SymbolPage

CHARS_PER_TOKEN = 3
MIN_BUDGET = 200
"""Budgets below this are raised to it: a page must have room for its header and notes."""


# -- structured output shapes (the tools' output schemas) -----------------------------------


class Freshness(TypedDict):
    """When a repository was last indexed, and whether a re-index is running now."""

    repository: str
    indexed_at: str | None
    indexing: bool


class MatchOut(TypedDict):
    """A matching line; `ranges` are [start_column, end_column) pairs, 1-based."""

    line: int
    text: str
    ranges: list[list[int]]


class ContextBlockOut(TypedDict):
    """A run of lines around matches, starting at `start_line`."""

    start_line: int
    lines: list[str]


class SearchFileOut(TypedDict):
    repository: str
    path: str
    language: str
    branches: list[str]
    score: float
    matches: list[MatchOut]
    context: list[ContextBlockOut]


class SearchOutput(TypedDict):
    """`search`: files matching a Zoekt query, best first."""

    query: str
    files: list[SearchFileOut]
    match_count: int
    file_count: int
    duration_ms: float
    partial: bool
    notes: list[str]
    next_cursor: str | None
    truncated: bool
    freshness: list[Freshness]


class HitOut(TypedDict):
    repository: str
    path: str
    language: str
    start_line: int
    end_line: int
    score: float
    sources: list[str]
    """Engines that found it: semantic, lexical, symbol."""
    symbol: str | None
    snippet: str


class SemanticOutput(TypedDict):
    """`semantic_search`: ranked checkpoints."""

    query: str
    mode: str
    results: list[HitOut]
    next_cursor: str | None
    notes: list[str]
    truncated: bool
    freshness: list[Freshness]


class SymbolOut(TypedDict):
    name: str
    kind: str
    repository: str
    file_path: str
    line: int
    container: str | None
    language: str


class SymbolRequest(TypedDict):
    query: str
    kinds: list[str] | None
    max_items: int | None
    start_index: int
    pagination_id: str | None


class SymbolsOutput(TypedDict):
    """`search_symbols`: the symbol search response of symbol-search-api.md."""

    request: SymbolRequest
    items: list[SymbolOut]
    start_index: int
    max_items: int | None
    total: int | None
    has_more: bool
    pagination_id: str | None
    next_start_index: int | None
    truncated: bool
    freshness: list[Freshness]


class ReferenceOut(TypedDict):
    kind: str
    repository: str
    file: str
    line: int
    column: int
    context: str
    language: str


class ReferenceStats(TypedDict):
    definitionCount: int
    usageCount: int
    duration: float
    """Milliseconds."""


class ReferencesOutput(TypedDict):
    """`find_references`: definitions first, then usages."""

    symbol: str
    language: str | None
    definitions: list[ReferenceOut]
    usages: list[ReferenceOut]
    stats: ReferenceStats
    truncated: bool
    freshness: list[Freshness]


class FileOut(TypedDict):
    repository: str
    path: str
    language: str
    branches: list[str]


class FilesOutput(TypedDict):
    """`search_files`: files whose path matches."""

    pattern: str
    files: list[FileOut]
    file_count: int
    duration_ms: float
    next_cursor: str | None
    truncated: bool
    freshness: list[Freshness]


class FileContentOutput(TypedDict):
    """`file_content`: a file or a line range of it."""

    repository: str
    path: str
    branch: str
    language: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    truncated: bool
    next_start_line: int | None


class BranchOut(TypedDict):
    name: str
    sha: str


class RepoOut(TypedDict):
    name: str
    root: str | None
    source: str
    files: int
    bytes: int
    branches: list[BranchOut]
    symbols: bool
    indexed_at: str | None
    indexing: bool
    coverage: float | None


class ReposOutput(TypedDict):
    """`list_repos`: indexed repositories with their size and freshness."""

    filter: str | None
    repositories: list[RepoOut]
    total: int
    total_files: int
    total_bytes: int
    truncated: bool


class FailureOut(TypedDict):
    file: str
    error: str


class IndexOutput(TypedDict):
    """`index_repository`: what the run did (the original contract's fields first)."""

    path: str
    files_indexed: int
    include_patterns: list[str]
    exclude_patterns: list[str]
    max_file_size: int
    indexed_at: str
    repository: str
    files_updated: int
    files_unchanged: int
    files_removed: int
    files_skipped: dict[str, int]
    files_failed: int
    errors: list[FailureOut]
    checkpoints: int
    chunks_embedded: int
    duration_ms: int
    job_id: str | None


class ErrorOut(TypedDict):
    error: str
    message: str
    hint: str | None
    details: dict[str, Any]


class JobOut(TypedDict):
    job_id: str
    path: str
    state: str
    phase: str
    progress: int
    total: int | None
    message: str
    started_at: str
    finished_at: str | None
    result: IndexOutput | None
    error: ErrorOut | None


class IndexStatusOutput(TypedDict):
    """`index_status`: background index jobs of this server, and index freshness."""

    jobs: list[JobOut]
    freshness: list[Freshness]


# -- budget ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rendered:
    """A tool answer: Markdown for the model plus the same data, structured."""

    markdown: str
    data: dict[str, Any]


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


def fence(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def assemble(head: str, items: Sequence[str], tail: str) -> str:
    parts = [head, *items, tail] if tail else [head, *items]
    return "\n\n".join(p for p in parts if p)


# -- shared pieces ----------------------------------------------------------------------------


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
    more = f"; and {len(fresh) - limit} more" if len(fresh) > limit else ""
    return "_Index freshness: " + "; ".join(parts) + more + "._"


def select_freshness(
    fresh: Sequence[dict[str, Any]], repositories: Sequence[str] | None = None
) -> list[Freshness]:
    """The freshness rows of the searched repositories (all of them when unfiltered)."""
    wanted = set(repositories or ())
    return [
        Freshness(repository=str(f["repository"]), indexed_at=f.get("indexed_at"),
                  indexing=bool(f.get("indexing")))
        for f in fresh
        if not wanted or f["repository"] in wanted
    ]


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


def error_text(err: CtxdError) -> str:
    """The text of a tool error: code, message, hint, details (one line each)."""
    lines = [f"{err.code}: {err.message}"]
    if err.hint:
        lines.append(f"Hint: {err.hint}")
    if err.details:
        lines.append("Details: " + json.dumps(err.details, default=str, ensure_ascii=False))
    return "\n".join(lines)


def error_out(err: CtxdError) -> ErrorOut:
    return ErrorOut(error=err.code, message=err.message, hint=err.hint, details=err.details)


def _numbered(start: int, lines: Sequence[str], marks: set[int], width: int) -> list[str]:
    """`12: text` for matching lines, `11- text` for context (grep -n -C style)."""
    return [
        f"{n:>{width}}{':' if n in marks else '-'} {text}"
        for n, text in enumerate(lines, start=start)
    ]


def _one_line(text: str, limit: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- search (Zoekt syntax) -------------------------------------------------------------------


def _file_section(fm: FileMatch) -> str:
    marks = {m.line for m in fm.matches}
    blocks = [(b.start_line, list(b.lines)) for b in fm.blocks] or [
        (m.line, [m.text]) for m in fm.matches
    ]
    last = max((s + len(ls) - 1 for s, ls in blocks), default=1)
    width = len(str(last))
    code: list[str] = []
    for i, (start, lines) in enumerate(blocks):
        if i:
            code.append("…")
        code.extend(_numbered(start, lines, marks, width))
    branch = ", ".join(fm.branches) or "HEAD"
    lang = fm.language or "text"
    out = [
        f"### {fm.repository} - {fm.path}",
        f"Language: {lang} | Branch: {branch}",
        "",
        fence("\n".join(code), fm.language),
        "",
    ]
    out.extend(f"Line {m.line}: {_one_line(m.text)}" for m in fm.matches)
    return "\n".join(out)


def _match_out(m: LineMatch) -> MatchOut:
    return MatchOut(line=m.line, text=m.text, ranges=[[a, b] for a, b in m.ranges])


def _search_file_out(fm: FileMatch) -> SearchFileOut:
    return SearchFileOut(
        repository=fm.repository, path=fm.path, language=fm.language,
        branches=list(fm.branches), score=fm.score,
        matches=[_match_out(m) for m in fm.matches],
        context=[ContextBlockOut(start_line=b.start_line, lines=list(b.lines)) for b in fm.blocks],
    )


def render_search(
    query: str,
    files: Sequence[FileMatch],
    *,
    match_count: int,
    file_count: int,
    duration_ms: float,
    partial: bool,
    notes: Sequence[str],
    next_cursor: str | None,
    cursor_at: Callable[[int], str | None],
    fresh: Sequence[Freshness],
    budget: int,
) -> Rendered:
    """`search`: one section per file, a stats line, paging and freshness notes.

    `cursor_at(n)` gives a cursor that continues after the first `n` files of this page
    (used only when the budget cut the page).
    """
    head = f"## Results for: `{query}`"
    if not files:
        head += "\n\nNo matches."
    sections = [_file_section(f) + "\n\n---" for f in files]

    def tail(n: int, cont: str | None = CURSOR_PLACEHOLDER) -> str:
        lines = [f"Stats: {match_count} matches in {file_count} files ({duration_ms:.0f}ms)"]
        if partial:
            lines.append("> Partial results: the search backend stopped early (time or match "
                         "limits); narrow the query for complete results.")
        lines.extend(f"> Note: {n_}" for n_ in notes)
        lines.extend(page_notes("search", n, len(files), "files on this page", next_cursor,
                                cont))
        lines.append(freshness_line(fresh))
        return "\n".join(lines)

    shown, items = fit_page(head, sections, tail, budget)
    truncated = shown < len(files)
    cont = cursor_at(shown) if truncated else next_cursor
    data = SearchOutput(
        query=query, files=[_search_file_out(f) for f in files[:shown]],
        match_count=match_count, file_count=file_count, duration_ms=duration_ms,
        partial=partial, notes=list(notes), next_cursor=cont, truncated=truncated,
        freshness=list(fresh),
    )
    return Rendered(assemble(head, items, tail(shown, cont)), dict(data))


# -- semantic_search -------------------------------------------------------------------------


def _hit_section(rank: int, h: Hit) -> str:
    found = ", ".join(s.value for s in h.sources) or "semantic"
    symbol = f" | symbol: `{h.symbol}`" if h.symbol else ""
    lines = h.snippet.split("\n") if h.snippet else []
    width = len(str(h.start_line + max(len(lines) - 1, 0)))
    marks = {m.line for m in h.matches}
    body = "\n".join(_numbered(h.start_line, lines, marks, width)) if lines else ""
    return "\n".join([
        f"### {rank}. {h.repository} - {h.path}:{h.start_line}-{h.end_line}",
        f"Found by: {found} | score {h.score:.3f} | {h.language or 'text'}{symbol}",
        "",
        fence(body, h.language),
    ])


def _hit_out(h: Hit) -> HitOut:
    return HitOut(
        repository=h.repository, path=h.path, language=h.language, start_line=h.start_line,
        end_line=h.end_line, score=h.score, sources=[s.value for s in h.sources],
        symbol=h.symbol, snippet=h.snippet,
    )


def render_hits(
    query: str,
    mode: str,
    hits: Sequence[Hit],
    *,
    offset: int,
    notes: Sequence[str],
    next_cursor: str | None,
    cursor_at: Callable[[int], str | None],
    fresh: Sequence[Freshness],
    budget: int,
) -> Rendered:
    """`semantic_search`: ranked checkpoints, each saying which engines found it."""
    head = f"## Results for: `{query}` ({mode})"
    if not hits:
        head += "\n\nNo results."
    sections = [_hit_section(offset + i + 1, h) for i, h in enumerate(hits)]

    def tail(n: int, cont: str | None = CURSOR_PLACEHOLDER) -> str:
        lines = [f"> Note: {x}" for x in notes]
        lines.extend(page_notes("semantic_search", n, len(hits), "results on this page",
                                next_cursor, cont))
        lines.append(freshness_line(fresh))
        return "\n".join(lines)

    shown, items = fit_page(head, sections, tail, budget)
    truncated = shown < len(hits)
    cont = cursor_at(shown) if truncated else next_cursor
    data = SemanticOutput(
        query=query, mode=mode, results=[_hit_out(h) for h in hits[:shown]],
        next_cursor=cont, notes=list(notes), truncated=truncated, freshness=list(fresh),
    )
    return Rendered(assemble(head, items, tail(shown, cont)), dict(data))


# -- search_symbols --------------------------------------------------------------------------


def render_symbols(
    page: SymbolPage,
    *,
    kinds: Sequence[str] | None,
    max_items: int | None,
    pagination_id: str | None,
    fresh: Sequence[Freshness],
    budget: int,
) -> Rendered:
    """`search_symbols`: `# Search:` header, a Name | Kind | Location table, paging note."""
    multi = len({i.repository for i in page.items}) > 1
    rows = []
    for item in page.items:
        inside = f" (in `{item.container}`)" if item.container else ""
        where = f"{item.repository}/{item.path}" if multi else item.path
        rows.append(f"| `{item.name}`{inside} | {item.kind} | {where}:{item.line} |")
    table_head = "| Name | Kind | Location |\n|------|------|----------|"

    def head_for(n: int) -> str:
        count = f"Found {page.total} results"
        if max_items is not None or n < page.total:
            count += f" (showing {n})"
        return f"# Search: `{page.query}`\n{count}"

    def tail(n: int) -> str:
        lines = []
        if n < len(page.items) or page.has_more:
            lines.append(f"> More results available. Use `start_index={page.start_index + n}` "
                         "for next page.")
        lines.append(freshness_line(fresh))
        return "\n".join(lines)

    shown = max(fit(head_for(0) + "\n" + table_head, rows, tail, budget), min(1, len(rows)))
    truncated = shown < len(page.items)
    body = head_for(shown) + ("\n\n" + table_head + "\n" + "\n".join(rows[:shown]) if rows
                              else "\n\nNo symbols matched.")
    next_start = page.start_index + shown if (truncated or page.has_more) else None
    data = SymbolsOutput(
        request=SymbolRequest(query=page.query, kinds=list(kinds) if kinds else None,
                              max_items=max_items, start_index=page.start_index,
                              pagination_id=pagination_id),
        items=[
            SymbolOut(name=i.name, kind=i.kind, repository=i.repository, file_path=i.path,
                      line=i.line, container=i.container, language=i.language)
            for i in page.items[:shown]
        ],
        start_index=page.start_index, max_items=max_items, total=page.total,
        has_more=truncated or page.has_more,
        pagination_id=None if truncated else page.pagination_id,
        next_start_index=next_start, truncated=truncated, freshness=list(fresh),
    )
    return Rendered(body + "\n\n" + tail(shown), dict(data))


# -- find_references -------------------------------------------------------------------------


def _ref_line(r: Reference) -> str:
    return f"- {r.repository}/{r.path}:{r.line}:{r.column} — `{_one_line(r.context, 140)}`"


def _ref_out(r: Reference) -> ReferenceOut:
    return ReferenceOut(kind=r.kind, repository=r.repository, file=r.path, line=r.line,
                        column=r.column, context=r.context, language=r.language)


def render_references(refs: References, *, fresh: Sequence[Freshness], budget: int) -> Rendered:
    """`find_references`: labelled definitions and usages, with counts."""
    nd, nu = len(refs.definitions), len(refs.usages)
    lang = f" (language: {refs.language})" if refs.language else ""
    head = (f"# References: `{refs.symbol}`\n"
            f"Found {nd} definitions and {nu} usages{lang} ({refs.duration_ms:.0f}ms)")
    lines = [("definition", _ref_line(r)) for r in refs.definitions] + [
        ("usage", _ref_line(r)) for r in refs.usages
    ]

    def tail(n: int) -> str:
        notes = []
        if refs.truncated:
            notes.append("> The search stopped at its limit: there may be more usages. Raise "
                         "`limit`, or narrow with `language` / `repository`.")
        if n < len(lines):
            how = "Narrow with `language` or `repository`, or lower `limit`."
            notes.append(truncated_note(n, len(lines), "references", how))
        notes.append(freshness_line(fresh))
        return "\n".join(notes)

    shown = fit(head + "\n## Definitions\n## Usages", [t for _k, t in lines], tail, budget)
    defs = [t for k, t in lines[:shown] if k == "definition"]
    uses = [t for k, t in lines[:shown] if k == "usage"]
    parts = [head, f"## Definitions ({nd})\n" + ("\n".join(defs) if defs else "None found.")]
    parts.append(f"## Usages ({nu})\n" + ("\n".join(uses) if uses else "None found."))
    parts.append(tail(shown))
    data = ReferencesOutput(
        symbol=refs.symbol, language=refs.language,
        definitions=[_ref_out(r) for r in refs.definitions[: len(defs)]],
        usages=[_ref_out(r) for r in refs.usages[: len(uses)]],
        stats=ReferenceStats(definitionCount=nd, usageCount=nu, duration=refs.duration_ms),
        truncated=refs.truncated or shown < len(lines), freshness=list(fresh),
    )
    return Rendered("\n\n".join(parts), dict(data))


# -- search_files ----------------------------------------------------------------------------


def render_files(
    pattern: str,
    files: Sequence[FileMatch],
    *,
    offset: int,
    file_count: int,
    duration_ms: float,
    next_cursor: str | None,
    cursor_at: Callable[[int], str | None],
    fresh: Sequence[Freshness],
    budget: int,
) -> Rendered:
    """`search_files`: a numbered list of `repository - path (language)`."""
    head = f"## Files matching: `{pattern}`"
    if not files:
        head += "\n\nNo files matched."
    rows = [
        f"{offset + i + 1}. {f.repository} - {f.path}" + (f" ({f.language})" if f.language else "")
        for i, f in enumerate(files)
    ]

    def tail(n: int, cont: str | None = CURSOR_PLACEHOLDER) -> str:
        lines = [f"Stats: {file_count} files ({duration_ms:.0f}ms)"]
        lines.extend(page_notes("search_files", n, len(files), "files on this page",
                                next_cursor, cont))
        lines.append(freshness_line(fresh))
        return "\n".join(lines)

    shown = max(fit(head, rows, tail, budget), min(1, len(rows)))
    truncated = shown < len(files)
    cont = cursor_at(shown) if truncated else next_cursor
    data = FilesOutput(
        pattern=pattern,
        files=[FileOut(repository=f.repository, path=f.path, language=f.language,
                       branches=list(f.branches)) for f in files[:shown]],
        file_count=file_count, duration_ms=duration_ms, next_cursor=cont, truncated=truncated,
        freshness=list(fresh),
    )
    body = "\n\n" + "\n".join(rows[:shown]) if rows else ""
    return Rendered(head + body + "\n\n" + tail(shown, cont), dict(data))


# -- file_content ----------------------------------------------------------------------------


def render_file(fc: FileContent, *, budget: int) -> Rendered:
    """`file_content`: `## {repository}/{path}`, the branch, the lines in a code fence.

    Long files are cut at a line boundary; the page says which `start_line` continues.
    """
    lines = fc.content.split("\n") if fc.content else []
    span = f"Lines {fc.start_line}-{fc.end_line} of {fc.total_lines}"
    head = f"## {fc.repository}/{fc.path}\n\nBranch: {fc.branch} | {span}"
    room = (max(budget, MIN_BUDGET) - estimate_tokens(head) - 80) * CHARS_PER_TOKEN
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > room and kept:
            break
        kept.append(line)
        size += len(line) + 1
    cut = len(kept) < len(lines)
    end = fc.start_line + len(kept) - 1 if kept else fc.end_line
    if cut:
        head = f"## {fc.repository}/{fc.path}\n\nBranch: {fc.branch} | " \
               f"Lines {fc.start_line}-{end} of {fc.total_lines}"
    notes = []
    if cut:
        notes.append(f"> Truncated to fit the token budget at line {end}. Call `file_content` "
                     f"with `start_line: {end + 1}` to continue.")
    elif fc.end_line < fc.total_lines:
        notes.append(f"> {fc.total_lines - fc.end_line} more lines; `start_line: "
                     f"{fc.end_line + 1}` continues.")
    if fc.truncated:
        notes.append("> The file is larger than the server reads at once; lines past the "
                     "read limit are not shown.")
    text = "\n\n".join([head, fence("\n".join(kept), fc.language), *notes])
    more = end < fc.total_lines
    data = FileContentOutput(
        repository=fc.repository, path=fc.path, branch=fc.branch, language=fc.language,
        content="\n".join(kept), start_line=fc.start_line, end_line=end,
        total_lines=fc.total_lines, truncated=cut or fc.truncated,
        next_start_line=end + 1 if more else None,
    )
    return Rendered(text, dict(data))


# -- list_repos ------------------------------------------------------------------------------


def human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def _repo_out(r: dict[str, Any]) -> RepoOut:
    coverage = r.get("coverage")
    return RepoOut(
        name=str(r["name"]), root=r.get("root"), source=str(r.get("source", "local")),
        files=int(r.get("files") or 0), bytes=int(r.get("bytes") or 0),
        branches=[BranchOut(name=str(b.get("name", "")), sha=str(b.get("sha", "")))
                  for b in r.get("branches") or []],
        symbols=bool(r.get("symbols")), indexed_at=_str_or_none(r.get("indexed_at")),
        indexing=bool(r.get("indexing")),
        coverage=float(coverage) if coverage is not None else None,
    )


def _str_or_none(v: object) -> str | None:
    return None if v is None else str(v)


def _repo_item(i: int, r: RepoOut) -> str:
    first = f"{i}. **{r['name']}** ({r['files']:,} files, {human_bytes(r['bytes'])})"
    branches = ", ".join(f"{b['name']}@{b['sha'][:7]}" if b["sha"] else b["name"]
                         for b in r["branches"]) or "HEAD (working tree)"
    indexed = (r["indexed_at"] or "never")[:10] if r["indexed_at"] else "never"
    state = " | re-indexing now" if r["indexing"] else ""
    cov = (f" | Embedded: {r['coverage'] * 100:.0f}%"
           if r["coverage"] is not None and r["coverage"] < 1 else "")
    where = f"\n   Root: {r['root']}" if r["root"] else ""
    return (f"{first}\n   Branches: {branches}\n   Symbols: {'✅' if r['symbols'] else '❌'} | "
            f"Indexed: {indexed}{state}{cov} | Source: {r['source']}{where}")


def render_repos(listing: dict[str, Any], *, name_filter: str | None, budget: int) -> Rendered:
    """`list_repos`: the enriched repository list of zoekt-list-api-research.md."""
    repos = [_repo_out(r) for r in listing.get("repositories", [])]
    total_files = int(listing.get("total_files") or sum(r["files"] for r in repos))
    total_bytes = int(listing.get("total_bytes") or sum(r["bytes"] for r in repos))
    matching = f" matching '{name_filter}'" if name_filter else ""
    if not repos:
        text = ("## Indexed Repositories\n\n" + (f"No repositories match '{name_filter}'."
                if name_filter else "No repositories are currently indexed.")
                + "\n\nUse `index_repository` with a folder path to index one.")
        data = ReposOutput(filter=name_filter, repositories=[], total=0, total_files=0,
                           total_bytes=0, truncated=False)
        return Rendered(text, dict(data))
    head = f"## Indexed Repositories\n\nFound {len(repos)} repositories{matching}:"
    items = [_repo_item(i, r) for i, r in enumerate(repos, start=1)]

    def tail(n: int) -> str:
        note = (truncated_note(n, len(repos), "repositories", "Narrow the list with `filter`.")
                + "\n" if n < len(repos) else "")
        return (f"{note}Total: {len(repos)} repositories, {total_files:,} files, "
                f"{human_bytes(total_bytes)}")

    shown = max(fit(head, items, tail, budget), 1)
    data = ReposOutput(filter=name_filter, repositories=repos[:shown], total=len(repos),
                       total_files=total_files, total_bytes=total_bytes,
                       truncated=shown < len(repos))
    return Rendered(assemble(head, items[:shown], tail(shown)), dict(data))


# -- get_health ------------------------------------------------------------------------------


def _health_value(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, dict | list):
        return json.dumps(v, default=str, ensure_ascii=False)
    return str(v)


def render_health(health: dict[str, Any], *, budget: int) -> Rendered:
    """`get_health`: the service's health report, one `- key: value` line per field."""
    lines = ["## ctxd health", ""]
    for key, value in health.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            lines.append(f"- {key}:")
            lines.extend("  - " + ", ".join(f"{k}: {_health_value(v)}" for k, v in x.items())
                         for x in value)
        elif isinstance(value, dict):
            lines.append(f"- {key}: " + ", ".join(f"{k}: {_health_value(v)}"
                                                  for k, v in value.items()))
        else:
            lines.append(f"- {key}: {_health_value(value)}")
    return Rendered(clip("\n".join(lines), max(budget, MIN_BUDGET)), dict(health))


# -- index_repository / index_status ---------------------------------------------------------


def index_out(stats: IndexStats, job_id: str | None) -> IndexOutput:
    return IndexOutput(
        path=stats.path, files_indexed=stats.files_indexed,
        include_patterns=list(stats.include_patterns),
        exclude_patterns=list(stats.exclude_patterns), max_file_size=stats.max_file_size,
        indexed_at=stats.indexed_at, repository=stats.repository,
        files_updated=stats.files_updated, files_unchanged=stats.files_unchanged,
        files_removed=stats.files_removed, files_skipped=dict(stats.files_skipped),
        files_failed=len(stats.files_failed),
        errors=[FailureOut(file=f.file, error=f.error) for f in stats.files_failed[:50]],
        checkpoints=stats.checkpoints, chunks_embedded=stats.chunks_embedded,
        duration_ms=stats.duration_ms, job_id=job_id,
    )


def _index_lines(o: IndexOutput) -> list[str]:
    skipped = sum(o["files_skipped"].values())
    reasons = ", ".join(f"{k} {v}" for k, v in o["files_skipped"].items())
    lines = [
        f"Path: {o['path']}",
        f"Files: {o['files_indexed']} indexed ({o['files_updated']} new or changed, "
        f"{o['files_unchanged']} unchanged, {o['files_removed']} removed)",
        f"Skipped: {skipped}" + (f" ({reasons})" if reasons else ""),
        f"Checkpoints: {o['checkpoints']} ({o['chunks_embedded']} embedded in this run)",
        f"Patterns: include {o['include_patterns'] or 'all files'}; exclude "
        f"{o['exclude_patterns'] or 'none'}; max_file_size {o['max_file_size']} bytes",
        f"Indexed at {o['indexed_at']} in {o['duration_ms'] / 1000:.1f}s"
        + (f" (job `{o['job_id']}`)" if o["job_id"] else ""),
    ]
    if o["files_failed"]:
        lines.append(f"Failed: {o['files_failed']}")
        lines.extend(f"  - {e['file']}: {e['error']}" for e in o["errors"][:10])
        if o["files_failed"] > 10:
            lines.append(f"  - … and {o['files_failed'] - 10} more (see structured content)")
    return lines


def render_index(stats: IndexStats, job_id: str | None, *, budget: int) -> Rendered:
    """`index_repository`: what the run did."""
    o = index_out(stats, job_id)
    text = "\n".join([f"## Indexed `{o['repository']}`", "", *_index_lines(o)])
    return Rendered(clip(text, budget), dict(o))


def format_duration(seconds: float) -> str:
    """Go-style durations, as the original contract's `"timeout": "5m0s"`."""
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h}h{m}m{sec}s"
    if m:
        return f"{m}m{sec}s"
    return f"{sec}s"


def job_out(
    *, job_id: str, path: str, state: str, phase: str, progress: int, total: int | None,
    message: str, started_at: str, finished_at: str | None, stats: IndexStats | None,
    error: CtxdError | None,
) -> JobOut:
    return JobOut(
        job_id=job_id, path=path, state=state, phase=phase, progress=progress, total=total,
        message=message, started_at=started_at, finished_at=finished_at,
        result=index_out(stats, job_id) if stats is not None else None,
        error=error_out(error) if error is not None else None,
    )


def _job_line(j: JobOut) -> str:
    head = f"- `{j['job_id']}` {j['state']} — {j['path']}"
    if j["state"] == "succeeded" and j["result"]:
        r = j["result"]
        return (f"{head}: {r['files_indexed']} files, {r['checkpoints']} checkpoints in "
                f"{r['duration_ms'] / 1000:.1f}s (finished {j['finished_at']})")
    if j["state"] == "failed" and j["error"]:
        return f"{head}: {j['error']['error']}: {j['error']['message']}"
    total = f"/{j['total']}" if j["total"] is not None else ""
    return f"{head}: {j['message']} (progress {j['progress']}{total}; started {j['started_at']})"


def render_jobs(
    jobs: Sequence[JobOut], *, fresh: Sequence[Freshness], budget: int, single: bool
) -> Rendered:
    """`index_status`: one job in detail (with its result), or every job in one line each."""
    if single and jobs:
        j = jobs[0]
        lines = [f"## Index job `{j['job_id']}`: {j['state']}", "", f"Path: {j['path']}"]
        if j["result"] is not None:
            lines.extend(_index_lines(j["result"])[1:])
        elif j["error"] is not None:
            e = j["error"]
            lines.append(f"Error: {e['error']}: {e['message']}")
            if e["hint"]:
                lines.append(f"Hint: {e['hint']}")
        else:
            total = f" of {j['total']}" if j["total"] is not None else ""
            lines.append(f"Phase: {j['phase']} — {j['message']} (progress {j['progress']}"
                         f"{total}); started {j['started_at']}")
            lines.append("Searches work meanwhile: lexical and symbol search see files as "
                         "they are written, semantic search as embeddings land. Call "
                         f"`index_status` with `job_id: \"{j['job_id']}\"` again (set "
                         "`wait_seconds` to wait for it).")
    else:
        lines = ["## Index jobs", ""]
        lines.extend(_job_line(j) for j in jobs)
        if not jobs:
            lines.append("No index jobs have run in this server session.")
    lines.extend(["", freshness_line(fresh)])
    data = IndexStatusOutput(jobs=list(jobs), freshness=list(fresh))
    return Rendered(clip("\n".join(lines), budget), dict(data))
