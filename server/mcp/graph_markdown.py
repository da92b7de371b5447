"""Markdown and structured output of the code graph's tools: `find_references`,
`find_callers`, `find_callees`, `trace_call_path`.

Each renderer fits its list to the token budget (`server.mcp.budget.fit`), says when the
budget or the limit cut it, and returns the same data structured (the TypedDicts here are
the tools' output schemas). A page that was cut carries a `next_cursor` that continues
after the items shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import groupby

from typing_extensions import TypedDict

from ctxd.search.graph.models import (
    NOTHING_RESOLVED,
    CallPaths,
    Calls,
    Edge,
    GraphDef,
    Refs,
    Usage,
)
from ctxd.search.models import References, searched_note
from ctxd.server.mcp.budget import fit, freshness_line, truncated_note
from ctxd.server.mcp.schemas import Freshness, Rendered

__all__ = ["CallPathOutput", "CallsOutput", "GraphRefsOutput", "by_name_refs",
           "render_call_paths", "render_calls", "render_graph_refs"]


def by_name_refs(text: References) -> Refs:
    """The text search's answer (`by_name`) in the graph's shape: each match a usage of
    kind `text`, `resolved` false."""
    defs = [GraphDef(text.symbol, text.symbol, "definition", d.repository, d.path, d.line,
                     d.line) for d in text.definitions]
    if not defs:
        defs = [GraphDef(text.symbol, text.symbol, "name", "", "", 0, 0)]
    usages = [Usage(u.path, u.line, u.column, "text", False, None, u.context)
              for u in text.usages]
    skipped = searched_note(text)
    return Refs(defs, usages, len(usages), text.truncated, 0, text.duration_ms,
                f"{skipped}; `language` searches one language" if skipped else "")


class DefinitionOut(TypedDict):
    name: str
    qualified_name: str
    kind: str
    repository: str
    path: str
    line: int


class UsageOut(TypedDict):
    path: str
    line: int
    column: int
    kind: str
    """`call`, `import`, `inherit`, `reference`, `override`; `text` for a by-name match."""
    resolved: bool
    enclosing: str | None
    text: str


class GraphRefsOutput(TypedDict):
    """`find_references`: the definition and its usages (resolved, or by name)."""

    definitions: list[DefinitionOut]
    usages: list[UsageOut]
    total: int
    unresolved: int
    """Sites bearing the name that did not resolve to the definition (`by_name` lists
    every text match)."""
    truncated: bool
    next_cursor: str | None
    duration_ms: float
    freshness: list[Freshness]


class SiteOut(TypedDict):
    path: str
    line: int
    column: int


class EdgeOut(TypedDict):
    site: SiteOut
    definition: DefinitionOut | None
    """The caller (find_callers) or callee (find_callees); None when it did not resolve."""
    name: str
    depth: int
    resolved: bool
    parent: int
    """`index` of the edge this one continues (-1 at depth 1), perhaps on an earlier page."""
    index: int
    """The edge's place in the whole tree, breadth first (-1 in a call path)."""


class CallsOutput(TypedDict):
    """`find_callers` / `find_callees`: a tree of calls, parents first."""

    definition: DefinitionOut
    edges: list[EdgeOut]
    depth: int
    truncated: bool
    next_cursor: str | None
    duration_ms: float
    freshness: list[Freshness]


class CallPathOutput(TypedDict):
    """`trace_call_path`: the shortest chains of calls from `source` to `target`."""

    source: DefinitionOut
    target: DefinitionOut
    paths: list[list[EdgeOut]]
    max_depth: int
    truncated: bool
    next_cursor: str | None
    duration_ms: float
    freshness: list[Freshness]


def _def(d: GraphDef) -> DefinitionOut:
    return DefinitionOut(name=d.name, qualified_name=d.qualified_name, kind=d.kind,
                         repository=d.repository, path=d.path, line=d.line)


def _edge(e: Edge, index: int = -1) -> EdgeOut:
    return EdgeOut(site=SiteOut(path=e.site_path, line=e.site_line, column=e.site_column),
                   definition=_def(e.definition) if e.definition else None, name=e.name,
                   depth=e.depth, resolved=e.resolved, parent=e.parent, index=index)


def _head_def(d: GraphDef) -> str:
    return f"`{d.qualified_name}` ({d.kind}) at {d.repository}/{d.path}:{d.line}"


def _one(text: str, n: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def render_graph_refs(refs: Refs, *, offset: int, cursor_at: Callable[[int], str | None],
                      fresh: Sequence[Freshness], budget: int) -> Rendered:
    """References grouped by file, each line `line:col kind — text (in X)`."""
    d = refs.definitions[0]
    resolved = all(u.resolved for u in refs.usages)
    what = "references" if resolved else "text matches (by name, not resolved)"
    head = f"# References of {_head_def(d)}\n{refs.total} {what} ({refs.duration_ms:.0f}ms)"
    rows: list[str] = []
    for path, group in groupby(refs.usages[offset:], key=lambda u: u.path):
        for k, u in enumerate(group):
            inside = f" (in `{u.enclosing}`)" if u.enclosing else ""
            lead = f"### {path}\n" if k == 0 else ""
            rows.append(f"{lead}- {u.line}:{u.column} {u.kind} — `{_one(u.text)}`{inside}")

    def tail(n: int) -> str:
        notes = []
        if n < len(rows):
            notes.append(truncated_note(n, len(rows), "references",
                                        "Continue with `cursor`."))
        elif refs.truncated:
            notes.append("> The list stopped at `limit`: raise it, or continue with `cursor`."
                         + (f" Code comes first: {refs.tests_left_out} of the references not "
                            "listed yet are in tests." if refs.tests_left_out else ""))
        if refs.unresolved and resolved:
            notes.append(f"> {refs.unresolved} other sites bear the name but do not resolve "
                         "to this definition; `by_name: true` lists every text match.")
        elif resolved and not refs.total and not refs.note:
            notes.append(f"> {NOTHING_RESOLVED}; `by_name: true` lists every text match.")
        if refs.note:
            notes.append(f"> Note: {refs.note}.")
        notes.append(freshness_line(fresh))
        return "\n".join(notes)

    shown = max(fit(head, rows, tail, budget), min(1, len(rows)))
    more = shown < len(rows) or refs.truncated
    cursor = cursor_at(offset + shown) if more else None
    body = "\n".join([head, *rows[:shown], tail(shown)])
    page = refs.usages[offset: offset + shown]
    data = GraphRefsOutput(
        definitions=[_def(x) for x in refs.definitions],
        usages=[UsageOut(path=u.path, line=u.line, column=u.column, kind=u.kind,
                         resolved=u.resolved, enclosing=u.enclosing, text=u.text)
                for u in page],
        total=refs.total, unresolved=refs.unresolved, truncated=more, next_cursor=cursor,
        duration_ms=refs.duration_ms, freshness=list(fresh))
    return Rendered(body, dict(data))


def _edge_row(e: Edge) -> str:
    pad = "  " * (e.depth - 1)
    site = f"{e.site_path}:{e.site_line}"
    if e.definition is None and e.resolved:  # a call from module-level code
        return f"{pad}- (module level) — call at {site}"
    if e.definition is None:
        return f"{pad}- `{e.name}` (unresolved) — called at {site}"
    d = e.definition
    return f"{pad}- `{d.qualified_name}` ({d.path}:{d.line}) — call at {site}"


def render_calls(calls: Calls, *, offset: int = 0, limit: int | None = None,
                 cursor_at: Callable[[int], str | None] = lambda _n: None,
                 fresh: Sequence[Freshness], budget: int) -> Rendered:
    """One page of a tree of callers or callees: the edges `offset`.. (breadth first, as
    the query lists them: a larger limit only adds edges after them) up to `limit` and
    the budget, printed as a tree, indented by depth, parents first (a call under one
    listed on an earlier page is printed under that one's name). A page that was cut
    continues at `cursor_at(edges listed so far)`."""
    d = calls.definition
    page = list(range(offset, len(calls.edges)))[: limit or None]
    first_child: dict[int, int] = {}  # a parent an earlier page listed -> its first child
    for k in page:  # (here: a line naming that parent goes before it)
        if 0 <= (parent := calls.edges[k].parent) < offset:
            first_child.setdefault(parent, k)
    starts = set(first_child.values())
    items = [(_parent_row(calls.edges[calls.edges[k].parent]) + "\n" if k in starts
              else "") + _edge_row(calls.edges[k]) for k in page]
    word = "Callers" if calls.direction == "callers" else "Callees"
    direct = sum(1 for e in calls.edges if e.depth == 1) + calls.left_out
    head = (f"# {word} of {_head_def(d)}\n{direct} direct, to depth {calls.depth} "
            f"({calls.duration_ms:.0f}ms)" + (", code before tests"
                                              if calls.direction == "callers" else ""))

    def tail(n: int) -> str:
        notes = []
        listed = offset + n
        more = listed < len(calls.edges) or calls.truncated
        if n < len(page):
            notes.append(truncated_note(n, len(page), "calls",
                                        "Continue with `cursor`, or lower `depth`."))
        elif more and cursor_at(listed) is None:  # (past the most one answer lists)
            notes.append(f"> The tree stops at {listed} calls: lower `depth`.")
        elif more:
            notes.append(f"> {listed} calls listed so far; there are more: continue with "
                         "`cursor`." + (f" {calls.tests_left_out} of the direct callers "
                                        "not listed yet are in tests."
                                        if calls.tests_left_out else ""))
        if calls.note:
            notes.append(f"> Note: {calls.note}.")
        notes.append(freshness_line(fresh))
        return "\n".join(notes)

    shown = max(fit(head, items, tail, budget), min(1, len(items)))
    kept = page[:shown]
    listed = set(kept)
    children: dict[int, list[int]] = {}
    for k in kept:  # (a call whose parent is on an earlier page starts a tree here)
        parent = calls.edges[k].parent
        children.setdefault(parent if parent in listed else -1, []).append(k)
    rows: list[str] = []

    def walk(parent: int) -> None:
        for k in children.get(parent, []):
            rows.append(items[k - offset])
            walk(k)

    walk(-1)
    body = "\n".join([head, *(rows or ["None found."]), tail(shown)])
    more = offset + shown < len(calls.edges) or calls.truncated
    cursor = cursor_at(offset + shown) if more else None
    data = CallsOutput(definition=_def(d),
                       edges=[_edge(calls.edges[k], k) for k in kept],
                       depth=calls.depth, truncated=more, next_cursor=cursor,
                       duration_ms=calls.duration_ms, freshness=list(fresh))
    return Rendered(body, dict(data))


def _parent_row(e: Edge) -> str:
    pad = "  " * (e.depth - 1)
    name = f"`{e.definition.qualified_name}`" if e.definition else "(module level)"
    return f"{pad}- {name} (listed on an earlier page)"


def render_call_paths(paths: CallPaths, *, offset: int = 0, limit: int | None = None,
                      cursor_at: Callable[[int], str | None] = lambda _n: None,
                      fresh: Sequence[Freshness], budget: int) -> Rendered:
    """Each shortest chain as numbered steps: the chains `offset`.. up to `limit` and the
    budget; a page that was cut continues at `cursor_at(chains listed so far)`."""
    head = (f"# Call paths from `{paths.source.qualified_name}` to "
            f"`{paths.target.qualified_name}`")
    page = paths.paths[offset:][: limit or None]
    shown = 0
    if not paths.paths:
        note = f"> Note: {paths.note}.\n" if paths.note else ""
        text = (f"{head}\nNo call path within {paths.max_depth} calls.\n{note}"
                f"{freshness_line(fresh)}")
    else:
        rows = []
        for n, chain in enumerate(page, offset + 1):
            steps = [f"{n}. `{paths.source.qualified_name}`"]
            steps += [f"   → `{e.definition.qualified_name if e.definition else e.name}` "
                      f"(called at {e.site_path}:{e.site_line})" for e in chain]
            rows.append("\n".join(steps))

        def tail(n: int) -> str:
            more = offset + n < len(paths.paths) or paths.truncated
            return "\n".join([*(["> More shortest paths: continue with `cursor`."]
                                 if more else []), freshness_line(fresh)])

        shown = max(fit(head, rows, tail, budget), min(1, len(rows)))
        text = "\n".join([head, *rows[:shown], tail(shown)])
    more = offset + shown < len(paths.paths) or paths.truncated
    data = CallPathOutput(source=_def(paths.source), target=_def(paths.target),
                          paths=[[_edge(e) for e in chain] for chain in page[:shown]],
                          max_depth=paths.max_depth, truncated=more,
                          next_cursor=cursor_at(offset + shown) if more else None,
                          duration_ms=paths.duration_ms, freshness=list(fresh))
    return Rendered(text, dict(data))
