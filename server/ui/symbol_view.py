"""What the page shows of one symbol: its definitions, references, callers and callees.

With the code graph (`graph_refs`, `calls`: resolved references and call edges) when the
definition is known by its place (`PATH:LINE`, as the definition link carries it) and the
graph answers; otherwise by name (`references`: word-boundary matches, definitions apart),
as `ctxd refs --by-name` does. Every text escaped; every place a link into the file view.
"""

from __future__ import annotations

from ctxd.indexer.errors import CtxdError
from ctxd.search.graph.models import Calls, Edge, Refs
from ctxd.server.ui.fileview import ref_list
from ctxd.server.ui.html import e, file_url
from ctxd.server.use_cases import UseCases

LIMIT = 200
SHOWN = 50


def _place(repo: str, path: str, line: int, text: str = "") -> str:
    return (f'<a href="{e(file_url(repo, path, line))}">{e(repo)}/{e(path)}:{line}</a>'
            + (f" <code>{e(text.strip()[:160])}</code>" if text else ""))


def graph_refs_html(refs: Refs, repo: str) -> str:
    defs = "".join(
        f'<li><a href="{e(file_url(d.repository, d.path, d.line, d.end_line))}">'
        f'<span class="kind">{e(d.kind)}</span> {e(d.qualified_name)}</a> '
        f'<span class="muted">{e(d.repository)}/{e(d.path)}:{d.line}</span></li>'
        for d in refs.definitions)
    where = refs.definitions[0].repository if refs.definitions else repo
    uses = "".join(
        f'<li><span class="kind">{e(u.kind)}</span> {_place(where, u.path, u.line, u.text)}'
        + (f' <span class="muted">in {e(u.enclosing)}</span>' if u.enclosing else "")
        + "</li>" for u in refs.usages[:SHOWN])
    more = (f'<p class="muted">{refs.total - SHOWN} more</p>' if refs.total > SHOWN else "")
    unresolved = (f'<p class="muted">{refs.unresolved} more sites bear the name but did not '
                  "resolve to this definition.</p>" if refs.unresolved else "")
    return (f"<h3>Definition</h3><ul class=\"refs\">{defs}</ul>"
            f"<h3>References ({refs.total}, resolved)</h3>"
            + (f'<ul class="refs">{uses}</ul>' if uses else '<p class="muted">None found.</p>')
            + more + unresolved)


def _edge_html(edge: Edge, direction: str, repo: str) -> str:
    d = edge.definition
    where = d.repository if d is not None else repo
    site = _place(repo if direction == "callees" else where, edge.site_path, edge.site_line)
    if d is None:
        return (f'<li><code>{e(edge.name)}</code> <span class="muted">unresolved, at</span> '
                f"{site}</li>")
    href = file_url(d.repository, d.path, d.line, d.end_line, sym=d.name, at=str(d.line))
    target = f'<a href="{e(href)}">{e(d.qualified_name)}</a>'
    return f'<li>{target} <span class="muted">at</span> {site}</li>'


def calls_html(calls: Calls, title: str, repo: str) -> str:
    edges = [edge for edge in calls.edges if edge.depth == 1][:SHOWN]
    if not edges:
        return f'<h3>{e(title)}</h3><p class="muted">None found.</p>'
    rows = "".join(_edge_html(edge, calls.direction, repo) for edge in edges)
    more = '<p class="muted">(cut at the limit)</p>' if calls.truncated else ""
    return f'<h3>{e(title)} ({len(edges)})</h3><ul class="refs">{rows}</ul>{more}'


def symbol_panel(service: UseCases, name: str, repo: str | None, language: str | None,
                 at: str | None = None) -> str:
    """The panel for `name` (`at`: its definition's `PATH:LINE` in `repo`, when known)."""
    scope = [repo] if repo else None
    subject = at or name
    parts: list[str] = []
    refs_done = False
    if at:
        try:
            parts.append(graph_refs_html(service.graph_refs(at, repositories=scope,
                                                            limit=LIMIT), repo or ""))
            refs_done = True
        except CtxdError:
            refs_done = False  # no graph for it: by name below
    if not refs_done:
        try:
            found = service.references(name, language=language or None, repositories=scope,
                                       limit=LIMIT)
            parts += [ref_list("Definitions", found.definitions),
                      ref_list("References (by name)", found.usages)]
        except CtxdError as err:
            parts.append(f'<p class="muted">{e(err.message)}</p>')
    for title, direction in (("Callers", "callers"), ("Callees", "callees")):
        try:
            calls = service.calls(subject, direction=direction, depth=1, repositories=scope,
                                  limit=LIMIT)
            parts.append(calls_html(calls, title, repo or calls.definition.repository))
        except CtxdError as err:
            parts.append(f'<h3>{e(title)}</h3><p class="muted">{e(err.message)}</p>')
    label = f' <span class="muted">{e(at)}</span>' if at else ""
    return (f'<aside class="symbol" aria-labelledby="sym-h"><h2 id="sym-h">'
            f'<code>{e(name)}</code>{label}</h2>{"".join(parts)}</aside>')
