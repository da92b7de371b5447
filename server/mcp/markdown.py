"""Compact Markdown (and matching structured data) for the code-reading MCP tools.

Each `render_*` function turns one service-layer result into a `Rendered` (Markdown for
the model plus the same data as the tool's `*Output` in `server/mcp/schemas.py`):
`render_search` (`search`: `## Results for: \\`q\\`` with one section per file),
`render_hits` (`semantic_search`), `render_symbols` (`search_symbols`: the symbol table),
`render_references` (`find_references`), `render_files` (`search_files`) and
`render_file` (`file_content`: `## {repository}/{path}` and the lines in a fence).
Layouts follow the original tool contracts. The server-state tools
(`list_repos`, `get_health`, `index_repository`, `index_status`) render in
`server/mcp/markdown_status.py`.

Budget (`server/mcp/budget.py`): a page never exceeds `budget` estimated tokens. Whole items
are dropped from the end first; an item too large on its own is clipped at a line
boundary. Whenever something was left out the page says so and how to continue (a
cursor, `start_index`, or `start_line`), and the structured data holds exactly the items
shown. The list pages share one pager (`pager`).

Pure: no I/O, no service calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxd.search.explain_rank import Contribution, explain_text
from ctxd.search.models import (
    FileContent,
    FileMatch,
    Hit,
    LineMatch,
    Reference,
    References,
    SymbolPage,
)
from ctxd.server.mcp.budget import (
    CHARS_PER_TOKEN,
    CURSOR_PLACEHOLDER,
    MIN_BUDGET,
    assemble,
    fit,
    fit_page,
    page_notes,
    truncated_note,
)

# The next four are re-exported (`X as X`): tests reach them as `markdown.X`.
from ctxd.server.mcp.budget import clip as clip
from ctxd.server.mcp.budget import estimate_tokens as estimate_tokens
from ctxd.server.mcp.budget import freshness_line as freshness_line
from ctxd.server.mcp.markdown_status import format_duration as format_duration
from ctxd.server.mcp.schemas import (
    ContextBlockOut,
    CopyOut,
    FileContentOutput,
    FileOut,
    FilesOutput,
    Freshness,
    HitOut,
    MatchOut,
    ReferenceOut,
    ReferencesOutput,
    ReferenceStats,
    Rendered,
    SearchFileOut,
    SearchOutput,
    SemanticOutput,
    SymbolOut,
    SymbolRequest,
    SymbolsOutput,
)

# -- shared pieces ------------------------------------------------------------------------


def fence(text: str, language: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text}\n{ticks}"


def _numbered(start: int, lines: Sequence[str], marks: set[int], width: int) -> list[str]:
    """`12: text` for matching lines, `11- text` for context (grep -n -C style)."""
    return [
        f"{n:>{width}}{':' if n in marks else '-'} {text}"
        for n, text in enumerate(lines, start=start)
    ]


def _one_line(text: str, limit: int = 160) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- one pager for the list pages -----------------------------------------------------------


@dataclass(frozen=True)
class Paged:
    """One list page fitted to the token budget."""

    shown: int
    """How many of the items are on the page."""
    truncated: bool
    """Whether the budget cut the page (fewer items shown than the engine returned)."""
    cursor: str | None
    """The cursor that continues after the page: after the shown items when cut, else
    the engine's own next cursor."""
    markdown: str


def pager(
    head: str, items: Sequence[str], tail: Callable[..., str], *, budget: int,
    next_cursor: str | None, cursor_at: Callable[[int], str | None], lines: bool = False,
) -> Paged:
    """Fit `items` (whole sections, or one-line rows with `lines`) between `head` and
    `tail(n, cursor)` within `budget`; at least one item is shown (a section too large on
    its own is clipped, a row is kept whole). `cursor_at(n)` gives the cursor that
    continues after the first `n` items (asked only when the budget cut the page)."""
    if lines:
        shown = max(fit(head, items, tail, budget), min(1, len(items)))
        printed = ["\n".join(items[:shown])] if items else []
    else:
        shown, printed = fit_page(head, items, tail, budget)
    truncated = shown < len(items)
    cont = cursor_at(shown) if truncated else next_cursor
    return Paged(shown, truncated, cont, assemble(head, printed, tail(shown, cont)))


# -- search (Zoekt syntax) -------------------------------------------------------------------


def _numbered_blocks(blocks: list[tuple[int, list[str]]], marks: set[int]) -> list[str]:
    """Blocks of lines, each numbered from its own first line in one width, "…" between
    them; `marks` are the matching lines."""
    last = max((s + max(len(ls) - 1, 0) for s, ls in blocks), default=1)
    width = len(str(last))
    code: list[str] = []
    for i, (start, lines) in enumerate(blocks):
        if i:
            code.append("…")
        code.extend(_numbered(start, lines, marks, width))
    return code


def _file_section(fm: FileMatch) -> str:
    blocks = [(b.start_line, list(b.lines)) for b in fm.blocks] or [
        (m.line, [m.text]) for m in fm.matches
    ]
    code = _numbered_blocks(blocks, {m.line for m in fm.matches})
    branch = ", ".join(fm.branches) or "HEAD"
    lang = fm.language or "text"
    out = [
        f"### {fm.repository} - {fm.path}",
        f"Language: {lang} | Branch: {branch}",
        "",
        fence("\n".join(code), fm.language),
        "",
    ]
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

    p = pager(head, sections, tail, budget=budget, next_cursor=next_cursor, cursor_at=cursor_at)
    data = SearchOutput(
        query=query, files=[_search_file_out(f) for f in files[:p.shown]],
        match_count=match_count, file_count=file_count, duration_ms=duration_ms,
        partial=partial, notes=list(notes), next_cursor=p.cursor, truncated=p.truncated,
        freshness=list(fresh),
    )
    return Rendered(p.markdown, dict(data))


# -- semantic_search -------------------------------------------------------------------------

MAX_COPIES = 5
"""Places of identical copies named in a hit's Markdown (all of them in `also_in`)."""


def _hit_section(rank: int, h: Hit) -> str:
    found = ", ".join(s.value for s in h.sources) or "semantic"
    symbol = f" | symbol: `{h.symbol}`" if h.symbol else ""
    blocks = [(b.start_line, list(b.lines)) for b in h.blocks] or [
        (h.start_line, h.snippet.split("\n") if h.snippet else [])]
    code = _numbered_blocks(blocks, {m.line for m in h.matches})
    # A lexical hit names its blocks' own ranges, never one range across the file.
    where = ", ".join(f"{a}-{a + max(len(lines) - 1, 0)}" for a, lines in blocks)
    head = [f"### {rank}. {h.repository} - {h.path}:{where}",
            f"Found by: {found} | score {h.score:.3f} | {h.language or 'text'}{symbol}"]
    if h.also_in:
        named = [f"{c.repository} - {c.path}:{c.start_line}-{c.end_line}"
                 for c in h.also_in[:MAX_COPIES]]
        more = len(h.also_in) - MAX_COPIES
        head.append("Also in (identical text): " + ", ".join(named)
                    + (f" (+{more} more)" if more > 0 else ""))
    return "\n".join([*head, "", fence("\n".join(code), h.language)])


def _hit_out(h: Hit) -> HitOut:
    out = HitOut(
        repository=h.repository, path=h.path, language=h.language, start_line=h.start_line,
        end_line=h.end_line, score=h.score, sources=[s.value for s in h.sources],
        symbol=h.symbol, snippet=h.snippet,
        also_in=[CopyOut(repository=c.repository, path=c.path, start_line=c.start_line,
                         end_line=c.end_line) for c in h.also_in],
    )
    if h.blocks:
        out["context"] = [ContextBlockOut(start_line=b.start_line, lines=list(b.lines))
                          for b in h.blocks]
    return out


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

    p = pager(head, sections, tail, budget=budget, next_cursor=next_cursor, cursor_at=cursor_at)
    data = SemanticOutput(
        query=query, mode=mode, results=[_hit_out(h) for h in hits[:p.shown]],
        next_cursor=p.cursor, notes=list(notes), truncated=p.truncated, freshness=list(fresh),
    )
    return Rendered(p.markdown, dict(data))


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
        if page.best_match == "exact" and page.exact < page.total:
            count += (f": {page.exact} exact, then {page.total - page.exact} similar "
                      "(prefix, substring or fuzzy)")
        if page.best_match == "fuzzy":
            count += ("\n> No symbol name matches exactly, by prefix or as a substring: "
                      "these are only the closest fuzzy matches.")
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
    if rows:
        empty = ""
    elif page.total and page.start_index >= page.total:  # paged past the end: say so
        empty = (f"start_index {page.start_index} is past the last of the {page.total} "
                 "results: nothing to show. Use `start_index=0` to start over.")
    else:
        empty = "No symbols matched."
    body = head_for(shown) + ("\n\n" + table_head + "\n" + "\n".join(rows[:shown]) if rows
                              else "\n\n" + empty)
    next_start = page.start_index + shown if (truncated or page.has_more) else None
    data = SymbolsOutput(
        request=SymbolRequest(query=page.query, kinds=list(kinds) if kinds else None,
                              max_items=max_items, start_index=page.start_index,
                              pagination_id=pagination_id),
        best_match=page.best_match, exact=page.exact,
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

    p = pager(head, rows, tail, budget=budget, next_cursor=next_cursor, cursor_at=cursor_at,
              lines=True)
    data = FilesOutput(
        pattern=pattern,
        files=[FileOut(repository=f.repository, path=f.path, language=f.language,
                       branches=list(f.branches)) for f in files[:p.shown]],
        file_count=file_count, duration_ms=duration_ms, next_cursor=p.cursor,
        truncated=p.truncated, freshness=list(fresh),
    )
    return Rendered(p.markdown, dict(data))


# -- file_content ----------------------------------------------------------------------------


def render_file(fc: FileContent, *, budget: int) -> Rendered:
    """`file_content`: `## {repository}/{path}`, the branch, the lines in a code fence.

    Long files are cut at a line boundary; the page says which `start_line` continues.
    """
    body = fc.content[:-1] if fc.content.endswith("\n") else fc.content
    lines = body.split("\n") if fc.content else []
    span = f"Lines {fc.start_line}-{fc.end_line} of {fc.total_lines}"
    branch = f"{fc.branch} (working tree)" if fc.working_tree else fc.branch
    head = f"## {fc.repository}/{fc.path}\n\nBranch: {branch} | {span}"
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
        head = f"## {fc.repository}/{fc.path}\n\nBranch: {branch} | " \
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
    if fc.index_state == "changed":
        notes.append("> Changed on disk since it was indexed: these are the lines on disk; "
                     "search results may point at old lines until the watcher or "
                     "`index_repository` catches up.")
    elif fc.index_state == "not indexed":
        notes.append("> Not in the index yet: search does not find this file until the "
                     "watcher or `index_repository` adds it.")
    text = "\n\n".join([head, fence("\n".join(kept), fc.language), *notes])
    more = end < fc.total_lines
    data = FileContentOutput(
        repository=fc.repository, path=fc.path, branch=fc.branch, language=fc.language,
        content="\n".join(kept) + ("\n" if kept and not cut and body != fc.content else ""),
        start_line=fc.start_line, end_line=end,
        total_lines=fc.total_lines, truncated=cut or fc.truncated,
        next_start_line=end + 1 if more else None,
    )
    return Rendered(text, dict(data))


def with_explain(rendered: Rendered, rows: Sequence[Sequence[dict[str, Any]]], offset: int
                 ) -> Rendered:
    """`semantic_search` with `explain`: each shown result's features and their part in its
    score (`search.explain_rank`), as a section after the results and as `explain`."""
    shown = len(rendered.data.get("results", []))
    rows = [list(r) for r in rows[:shown]]
    lines = ["", "### Why each result ranks", ""]
    for n, parts in enumerate(rows, offset + 1):
        text = explain_text([Contribution(str(p["feature"]), float(p["value"]), str(p["kind"]))
                             for p in parts])
        lines.append(f"{n}. {text}")
    return Rendered(rendered.markdown + "\n".join(lines) + "\n",
                    {**rendered.data, "explain": rows})
