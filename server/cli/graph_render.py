"""How `ctxd refs`, `callers`, `callees`, `path` and `impact` print their answers: text
for people (grouped by file, trees indented by depth) and `--json` for programs.

The JSON shapes are a contract (bench/graph_eval reads them): `refs` gives `definitions`
and `usages`, each usage `{path, line, column, kind, resolved, in}`; `callers` /
`callees` give a list under their own name, each `{site: {path, line, column},
definition: {name, qualified_name, kind, path, line}, name, qualified_name, path, line,
depth, resolved}` (the definition's fields repeated flat). Paths are relative to the
repository root. A cut list says so (`truncated`, and a last line in text).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import groupby
from typing import Any

from ctxd.search.graph.models import (
    NOTHING_RESOLVED,
    CallPaths,
    Calls,
    Edge,
    GraphDef,
    Impact,
    Refs,
)
from ctxd.server.cli.render import counted

__all__ = ["call_paths_json", "call_paths_text", "calls_json", "calls_text", "impact_json",
           "impact_text", "refs_json", "refs_text"]

Where = Callable[[str, str], str]


def _clean(text: str) -> str:
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in text)


def def_json(d: GraphDef) -> dict[str, Any]:
    return {"name": d.name, "qualified_name": d.qualified_name, "kind": d.kind,
            "repository": d.repository, "path": d.path, "line": d.line,
            "end_line": d.end_line}


def refs_json(r: Refs) -> dict[str, Any]:
    return {
        "definitions": [def_json(d) for d in r.definitions],
        "usages": [{"path": u.path, "line": u.line, "column": u.column, "kind": u.kind,
                    "resolved": u.resolved, "in": u.enclosing, "text": u.text}
                   for u in r.usages],
        "total": r.total, "truncated": r.truncated, "unresolved": r.unresolved,
        "tests_left_out": r.tests_left_out,
        "duration_ms": r.duration_ms, **({"note": r.note} if r.note else {}),
    }


def refs_text(r: Refs, where: Where) -> str:
    d = r.definitions[0]
    out = [f"{d.qualified_name} ({d.kind}) at {_clean(where(d.repository, d.path))}:{d.line}"
           f": {r.total} references"]
    for path, group in groupby(r.usages, key=lambda u: u.path):
        out.append(f"\n{_clean(where(d.repository, path))}")
        for u in group:
            inside = f"  in {u.enclosing}" if u.enclosing else ""
            out.append(f"  {u.line}:{u.column}  {u.kind:<9} {_clean(u.text)}{inside}")
    if r.truncated:
        left = r.total - len(r.usages)
        tests = ("" if not r.tests_left_out else f", code first: the {left} left out are "
                 "all in tests" if r.tests_left_out == left else
                 f", code first: {r.tests_left_out} of the {left} left out are in tests")
        out.append(f"\n(cut: {len(r.usages)} of {r.total} shown{tests}; "
                   "raise --limit to see more)")
    if r.unresolved:
        out.append(f"\n{r.unresolved} other sites bear the name but do not resolve to it "
                   "(`--by-name` lists every text match)")
    elif not r.total and not r.note:
        out.append(f"\n{NOTHING_RESOLVED} (`--by-name` lists every text match)")
    if r.note:
        out.append(f"\nnote: {r.note}")
    return "\n".join(out)


def edge_json(e: Edge) -> dict[str, Any]:
    d = e.definition
    body: dict[str, Any] = {"name": d.name if d else e.name,
                            "qualified_name": d.qualified_name if d else None,
                            "path": d.path if d else None, "line": d.line if d else None}
    return {"site": {"path": e.site_path, "line": e.site_line, "column": e.site_column},
            "definition": {**body, "kind": d.kind if d else None} if d else None,
            **body, "depth": e.depth, "resolved": e.resolved, "parent": e.parent}


def calls_json(c: Calls) -> dict[str, Any]:
    return {"definition": def_json(c.definition), c.direction: [edge_json(e) for e in c.edges],
            "depth": c.depth, "truncated": c.truncated, "left_out": c.left_out,
            "tests_left_out": c.tests_left_out, "duration_ms": c.duration_ms,
            **({"note": c.note} if c.note else {})}


def _edge_line(e: Edge, where: Where, repository: str) -> str:
    site = f"{_clean(where(repository, e.site_path))}:{e.site_line}"
    if e.definition is None:  # a caller at module level is resolved, it is just no definition
        what = "(module level)" if e.resolved else f"{e.name}  (unresolved)"
        return f"{'  ' * e.depth}{what}  at {site}"
    d = e.definition
    return f"{'  ' * e.depth}{d.qualified_name}  at {site}"


def _in_tests(c: Calls) -> str:
    return f", {c.tests_left_out} of them in tests" if c.tests_left_out else ""


def calls_text(c: Calls, where: Where) -> str:
    d = c.definition
    word = "caller" if c.direction == "callers" else "callee"
    # Breadth first: a cut among the direct calls leaves no deeper one, and their count short
    direct = sum(1 for e in c.edges if e.depth == 1)
    cut = (f", {direct} listed ({c.left_out} cut{_in_tests(c)})" if c.left_out else
           " (cut: there are more)" if c.truncated and all(e.depth == 1 for e in c.edges) else "")
    out = [f"{d.qualified_name} ({d.kind}) at {_clean(where(d.repository, d.path))}:{d.line}"
           f": {counted(direct + c.left_out, 'direct ' + word)}{cut}"]
    children: dict[int, list[int]] = {}
    for k, e in enumerate(c.edges):
        children.setdefault(e.parent, []).append(k)

    def walk(parent: int) -> None:
        for k in children.get(parent, []):
            out.append(_edge_line(c.edges[k], where, d.repository))
            walk(k)

    walk(-1)
    if c.truncated:
        out.append(f"(cut at {len(c.edges)} calls"
                   + (", code first" if c.tests_left_out else "")
                   + "; raise --limit" + (" or lower --depth)" if c.depth > 1 else ")"))
    if c.note:
        out.append(f"\nnote: {c.note}")
    return "\n".join(out)


def call_paths_json(p: CallPaths) -> dict[str, Any]:
    return {"from": def_json(p.source), "to": def_json(p.target),
            "paths": [[edge_json(e) for e in chain] for chain in p.paths],
            "max_depth": p.max_depth, "truncated": p.truncated, "duration_ms": p.duration_ms,
            **({"note": p.note} if p.note else {})}


def call_paths_text(p: CallPaths, where: Where) -> str:
    head = f"{p.source.qualified_name} -> {p.target.qualified_name}"
    if not p.paths:
        note = f"\n\nnote: {p.note}" if p.note else ""
        return f"{head}: no call path within {p.max_depth} calls{note}"
    count, calls = len(p.paths), len(p.paths[0])
    out = [f"{head}: {count} shortest path{'s' * (count != 1)}, {calls} call{'s' * (calls != 1)}"
           + " each" * (count != 1)]
    for chain in p.paths:
        steps = [p.source.qualified_name]
        for e in chain:
            site = f"{_clean(where(p.source.repository, e.site_path))}:{e.site_line}"
            name = e.definition.qualified_name if e.definition else e.name
            steps.append(f"{name} (called at {site})")
        out.append("  " + "\n    -> ".join(steps))
    if p.truncated:
        out.append(f"(cut: the first {count} shortest paths shown)")
    return "\n".join(out)


def impact_json(i: Impact) -> dict[str, Any]:
    items = [{"distance": x.distance, "path": x.path, "line": x.line, "name": x.name,
              "test": x.is_test, "via": x.via} for x in i.items]
    return {"subject": i.subject, "definitions": [def_json(d) for d in i.definitions],
            "dependents": items, "tests": [x for x in items if x["test"]],
            "truncated": i.truncated, "duration_ms": i.duration_ms,
            **({"note": i.note} if i.note else {})}


def impact_text(i: Impact, where: Where) -> str:
    repo = i.definitions[0].repository if i.definitions else ""
    cut = " (cut: there are more)" if i.truncated else ""  # the counts are of those listed
    out = [f"{i.subject}: {len(i.items)} dependents{cut}, {len(i.tests)} of them in tests"]
    for distance, group in groupby(i.items, key=lambda x: x.distance):
        out.append(f"\ndistance {distance}")
        for x in group:
            name = x.name or "(module level)"
            test = "  [test]" if x.is_test else ""
            out.append(f"  {name}  {_clean(where(repo, x.path))}:{x.line}  uses {x.via}{test}")
    if i.truncated:
        out.append("\n(cut; raise --limit or lower --depth)")
    if i.note:
        out.append(f"\nnote: {i.note}")
    return "\n".join(out)
