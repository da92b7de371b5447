"""The code graph's questions: references, callers, callees, call paths, impact.

Each takes the store, the definition named by `search.graph.naming`, and limits, and
reads one repository's `Workspace`. The files searched for uses of a definition are its
candidate files (`search.graph.candidates`: those whose imports can reach it). Every site
there that bears the name (its strings peeked at before it is
decoded) is resolved (`search.graph.resolve`); the sites that resolve to the definition
are its usages, labelled `call`, `import`, `inherit` or `reference`, plus the methods
that override it (`override`). Sites that bear the name but resolve nowhere are counted
as by-name candidates, never mixed in.

Invariants: answers are sorted (code before tests, then by path, line, column; trees
parents first, each definition's callers code first); every
limit that cuts an answer says so (`truncated`); reads only; each query runs with the
garbage collector paused (`workspace.collector_paused`).
"""

from __future__ import annotations

import functools
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar, cast

from ctxd.indexer.chunk.languages import detect_language, linguist_name
from ctxd.indexer.graph import Role
from ctxd.indexer.graph.specs import SPECS as GRAPH_LANGUAGES
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.graph.candidates import CandidateFiles
from ctxd.search.graph.models import (
    CallPaths,
    Calls,
    Edge,
    GraphDef,
    Impact,
    ImpactItem,
    Refs,
    Usage,
)
from ctxd.search.graph.modules import JS_LIKE
from ctxd.search.graph.resolve import CLASS_KINDS, Resolver, Target
from ctxd.search.graph.workspace import Workspace, collector_paused

__all__ = [
    "MAX_DEPTH",
    "call_paths",
    "callees",
    "callers",
    "impact",
    "is_test_path",
    "references",
]

MAX_DEPTH = 6
"""The deepest tree or chain a query follows (`--depth`)."""
MAX_NODES = 400
"""Definitions one tree, path search or impact visits at most."""
"""Rounds of re-exporting files followed to find importers."""
NO_GRAPH_NOTE = ("the definition's file has no code graph yet (indexed before ctxd had one): "
                 "run `ctxd index` on the repository once, then ask again")


def no_graph_note(*defs: GraphDef) -> str:
    """Why these definitions have no graph: their language is one the graph does not read
    (C#, PHP, Kotlin, ...: `indexer.graph.specs`), or `NO_GRAPH_NOTE`."""
    for d in defs:
        language = detect_language(d.path)
        if language not in GRAPH_LANGUAGES:
            return (f"the code graph does not read {linguist_name(language)} yet, so no use "
                    "resolves to this definition: `ctxd refs --by-name` (MCP: `by_name: "
                    "true`) lists the lines that mention the name")
    return NO_GRAPH_NOTE

_Q = TypeVar("_Q", bound=Callable[..., Any])
_KIND = {Role.CALL: "call", Role.IMPORT: "import", Role.INHERIT: "inherit"}
_TEST = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.\w+$|"
                   r"\.(test|spec)\.\w+$|(^|/)conftest\.py$")


_GO_METHOD = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")
"""A method line of a Go interface (`Size() int`)."""


def is_test_path(path: str) -> bool:
    """Whether a path is a test file (`tests/`, `test_x.py`, `x_test.go`, `x.test.ts`)."""
    return bool(_TEST.search(path))


def _collector_paused(query: _Q) -> _Q:
    """`query` run with the garbage collector off (`workspace.collector_paused`)."""
    @functools.wraps(query)
    def run(*args: Any, **kwargs: Any) -> Any:
        with collector_paused():
            return query(*args, **kwargs)
    return cast(_Q, run)


class _Graph(CandidateFiles):
    """One repository's workspace with its resolver, for one query."""

    def __init__(self, store: IndexStore, repository: str) -> None:
        self.ws = Workspace.open(store, repository)
        self.resolver = Resolver(self.ws)
        self.repository = repository

    def same(self, a: Target, b: Target) -> bool:
        """Whether two targets are one definition: the same, or another declaration of
        its qualified name in its file (an overload, a property's setter)."""
        if a.path != b.path:
            return False
        if a.index == b.index:
            return True
        graph = self.ws.graph(a.path)
        return graph is not None and graph.defs[a.index].qualname == graph.defs[
            b.index].qualname and (graph.defs[a.index].kind == "property") == (
            graph.defs[b.index].kind == "property")  # (Swift: a property and a method)

    def target_of(self, d: GraphDef) -> Target | None:
        graph = self.ws.graph(d.path)
        if graph is None:
            return None
        for k, x in enumerate(graph.defs):
            if x.line == d.line and x.qualname == d.qualified_name:
                return Target("def", d.path, k)
        for k, x in enumerate(graph.defs):
            if x.line == d.line and x.name == d.name:
                return Target("def", d.path, k)
        return None

    def gdef(self, t: Target) -> GraphDef:
        graph = self.ws.graph(t.path)
        assert graph is not None
        d = graph.defs[t.index]
        return GraphDef(d.name, d.qualname, d.kind, self.repository, t.path, d.line,
                        d.end_line)

    def enclosing(self, path: str, scope: int) -> Target | None:
        return None if scope < 0 else Target("def", path, scope)

    def uses(self, t: Target, pool: list[str] | None = None,
             ) -> tuple[list[tuple[str, int, Role]], int]:
        """(path, site index, role) of every site resolving to `t`, and how many sites
        bearing its name did not resolve. `pool`: a superset of `t`'s candidates to read
        instead (`file_candidates`, kept for the text generation as this memo is; the same
        sites resolve to `t`, more may not, so the answer is remembered apart)."""
        memo: dict[tuple[str, int, int], tuple[list[tuple[str, int, Role]], int]] = (
            self.ws.memo.setdefault("uses" if pool is None else "pooled_uses", {}))
        mark = (t.path, t.index, -1 if pool is None else id(pool))
        if mark in memo:  # asked before at this text generation
            return memo[mark]
        graph = self.ws.graph(t.path)
        assert graph is not None
        name = graph.defs[t.index].name
        found: list[tuple[str, int, Role]] = []
        unresolved = 0
        via = self.interfaces(t)
        named = [p for p in (self.candidates(t) if pool is None else pool)
                 if name in self.names(p)]
        self.ws.preload(named)  # (in one read: only these are decoded)
        for path in named:
            facts = self.resolver.facts(path)
            if facts is None:
                continue
            for k in facts.named(name):
                site = facts.graph.sites[k]
                if site.role in (Role.BIND, Role.PARAM):
                    continue
                got = self.resolver.resolve(path, site)
                if got is None and via and (r := self.resolver.receiver(path, site)) and (
                        r.kind == "inst" and (r.path, r.index) in via):
                    found.append((path, k, site.role))  # through an interface it implements
                elif got is None:
                    unresolved += 1
                elif self.same(got, t):
                    found.append((path, k, site.role))
        memo[mark] = (found, unresolved)
        return found, unresolved

    def interfaces(self, t: Target) -> set[tuple[str, int]]:
        """Go: the interfaces of a concrete method's package that its type implements and
        that declare the method, as (path, definition index). A call through one of them
        (`w := ResponseWriter(writer); w.Size()`) is a use of the method, as gopls counts
        references. Implements: the type has a method of every name the interface declares
        (its embedded interfaces are not followed)."""
        graph = self.ws.graph(t.path)
        assert graph is not None
        d = graph.defs[t.index]
        owner = d.qualname.rpartition(".")[0]
        if graph.language != "go" or d.kind != "method" or not owner:
            return set()
        files = [t.path, *self.ws.layout.go_package(t.path)]
        self.ws.preload(files)
        graphs = [(f, g) for f in files if (g := self.ws.graph(f)) is not None]
        methods = {x.name for _, g in graphs for x in g.defs
                   if x.kind == "method" and x.qualname.rpartition(".")[0] == owner}
        out: set[tuple[str, int]] = set()
        for f, g in graphs:
            for k, x in enumerate(g.defs):
                if x.kind == "interface" and x.parent == -1 and (
                        declared := self._declared(f, x.line, x.end_line)) and (
                        d.name in declared and declared <= methods):
                    out.add((f, k))
        return out

    def _declared(self, path: str, first: int, last: int) -> set[str]:
        """The method names a Go interface declares on lines `first`..`last` of `path`
        (`Size() int`; embedded interfaces and comments are not methods)."""
        fid = self.ws.ids.get(path)
        text = self.ws.store.file_texts([fid]).get(fid, "") if fid is not None else ""
        lines = text.split("\n")[first:max(first, last - 1)]  # (between the braces)
        return {m.group(1) for line in lines if (m := _GO_METHOD.match(line))}

    def overrides(self, t: Target) -> list[Target]:
        """Methods of subclasses (in the files that may use the class) that override `t`."""
        graph = self.ws.graph(t.path)
        assert graph is not None
        d = graph.defs[t.index]
        if d.parent < 0 or graph.defs[d.parent].kind not in CLASS_KINDS:
            return []
        cls = Target("def", t.path, d.parent)
        out: list[Target] = []
        named = [p for p in self.candidates(cls) if d.name in self.names(p)]
        self.ws.preload(named)
        for path in named:
            g = self.ws.graph(path)
            if g is None:
                continue
            for k, x in enumerate(g.defs):
                if x.name != d.name or x.parent < 0 or (path == t.path
                                                         and x.qualname == d.qualname):
                    continue
                if self._inherits(path, x.parent, cls, 0):
                    out.append(Target("def", path, k))
        return out

    def _inherits(self, path: str, cls: int, base: Target, depth: int) -> bool:
        if depth > 6:
            return False
        for b in self.resolver.bases(path, cls):
            if (b.path, b.index) == (base.path, base.index) or self._inherits(
                    b.path, b.index, base, depth + 1):
                return True
        return False

    def callees_of(self, t: Target) -> list[tuple[int, Target | None]]:
        """(site index, callee) of each call made directly in the body of `t`."""
        graph = self.ws.graph(t.path)
        if graph is None:
            return []
        out: list[tuple[int, Target | None]] = []
        for k, site in enumerate(graph.sites):
            if site.role == Role.CALL and site.scope == t.index:
                out.append((k, self.resolver.resolve(t.path, site)))
        return out


def _line_texts(store: IndexStore, ws: Workspace, paths: Iterable[str]) -> dict[str, list[str]]:
    ids = {ws.ids[p]: p for p in set(paths) if p in ws.ids}
    return {ids[i]: text.split("\n") for i, text in store.file_texts(list(ids)).items()}


@_collector_paused
def references(store: IndexStore, d: GraphDef, *, limit: int = 200) -> Refs:
    """The resolved usages of a definition (overrides included), by path and line."""
    started = time.perf_counter()
    g = _Graph(store, d.repository)
    t = g.target_of(d)
    if t is None:
        return Refs([d], [], 0, False, duration_ms=_ms(started), note=no_graph_note(d))
    found, unresolved = g.uses(t)
    sites: list[tuple[str, int, int, str, str | None]] = []
    for path, k, role in found:
        graph = g.ws.graph(path)
        assert graph is not None
        s = graph.sites[k]
        enc = graph.defs[s.scope].qualname if s.scope >= 0 else None
        sites.append((path, s.line, s.col, _KIND.get(role, "reference"), enc))
    for o in g.overrides(t):
        od = g.gdef(o)
        parent = od.qualified_name.rpartition(".")[0] or None
        sites.append((o.path, od.line, 1, "override", parent))
    sites = sorted(set(sites), key=lambda s: (is_test_path(s[0]), s))  # code, then tests
    total = len(sites)
    kept = sites[:limit]
    texts = _line_texts(store, g.ws, (s[0] for s in kept))
    usages = [Usage(p, line, col, kind, True, enc, _line(texts, p, line))
              for p, line, col, kind, enc in kept]
    return Refs([d], usages, total, total > limit, unresolved, _ms(started),
                tests_left_out=sum(is_test_path(s[0]) for s in sites[limit:]))


def _line(texts: dict[str, list[str]], path: str, line: int) -> str:
    lines = texts.get(path, [])
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


def callers(store: IndexStore, d: GraphDef, *, depth: int = 1, limit: int = 200) -> Calls:
    """The calls of a definition and the definitions they are in, as a tree to `depth`."""
    return _call_tree(store, d, "callers", _caller_steps, depth, limit)


def callees(store: IndexStore, d: GraphDef, *, depth: int = 1, limit: int = 200) -> Calls:
    """The calls a definition makes and the definitions they reach, as a tree to
    `depth` (calls that do not resolve are listed once, `resolved` false)."""
    return _call_tree(store, d, "callees", _callee_steps, depth, limit)


_Steps = Callable[["_Graph", Target, int, int], Iterator[tuple[Edge, Target | None]]]
"""One direction of a call tree: from a node (at `level`, under edge `parent`), each call
edge and the definition the walk goes on to (None where the call resolves nowhere)."""


def _caller_steps(g: _Graph, node: Target, level: int, parent: int
                  ) -> Iterator[tuple[Edge, Target | None]]:
    found, _ = g.uses(node)
    for path, k, role in sorted(found, key=lambda f: (is_test_path(f[0]), f)):  # code first
        if role != Role.CALL:
            continue
        graph = g.ws.graph(path)
        assert graph is not None
        s = graph.sites[k]
        caller = g.enclosing(path, s.scope)
        yield (Edge(path, s.line, s.col, g.gdef(caller) if caller else None,
                    graph.defs[s.scope].name if s.scope >= 0 else "<module>",
                    level, True, parent), caller)


def _callee_steps(g: _Graph, node: Target, level: int, parent: int
                  ) -> Iterator[tuple[Edge, Target | None]]:
    graph = g.ws.graph(node.path)
    assert graph is not None
    for k, callee in g.callees_of(node):
        s = graph.sites[k]
        yield (Edge(node.path, s.line, s.col, g.gdef(callee) if callee else None, s.name,
                    level, callee is not None, parent), callee)


@_collector_paused
def _call_tree(store: IndexStore, d: GraphDef, direction: str, steps: _Steps, depth: int,
               limit: int) -> Calls:
    """Breadth first from `d` in one direction, each definition expanded once, at most
    `limit` edges and `MAX_NODES` definitions (then `truncated`)."""
    started = time.perf_counter()
    g = _Graph(store, d.repository)
    t = g.target_of(d)
    edges: list[Edge] = []
    truncated = False
    left_out = tests_left_out = 0  # direct calls the limit cut
    if t is not None:
        queue: deque[tuple[Target, int, int]] = deque([(t, 1, -1)])
        seen = {(t.path, t.index)}
        while queue and not truncated:
            node, level, parent = queue.popleft()
            for edge, nxt in steps(g, node, level, parent):
                if len(edges) >= limit or len(seen) >= MAX_NODES:
                    truncated = True
                    if level > 1:
                        break
                    left_out += 1  # (direct calls: counted, their uses are known already)
                    tests_left_out += is_test_path(edge.site_path)
                    continue
                edges.append(edge)
                if nxt is not None and level < depth and (nxt.path, nxt.index) not in seen:
                    seen.add((nxt.path, nxt.index))
                    queue.append((nxt, level + 1, len(edges) - 1))
    return Calls(d, direction, edges, depth, truncated, _ms(started),
                 "" if t is not None else no_graph_note(d), left_out, tests_left_out)


@_collector_paused
def call_paths(store: IndexStore, source: GraphDef, target: GraphDef, *,
               max_depth: int = 5, limit: int = 5) -> CallPaths:
    """The shortest call chains (breadth first over callees) from `source` to `target`."""
    started = time.perf_counter()
    g = _Graph(store, source.repository)
    s, t = g.target_of(source), g.target_of(target)
    paths: list[list[Edge]] = []
    if s is not None and t is not None:
        frontier: list[tuple[Target, list[Edge]]] = [(s, [])]
        seen = {(s.path, s.index)}
        last: set[tuple[str, int]] = set()  # one path per chain, not per call site
        for level in range(1, max_depth + 1):
            nxt: list[tuple[Target, list[Edge]]] = []
            for node, chain in frontier:
                graph = g.ws.graph(node.path)
                assert graph is not None
                for k, callee in g.callees_of(node):
                    if callee is None:
                        continue
                    site = graph.sites[k]
                    edge = Edge(node.path, site.line, site.col, g.gdef(callee), site.name,
                                level)
                    key = (callee.path, callee.index)
                    if g.same(callee, t):
                        if (node.path, node.index) not in last:
                            last.add((node.path, node.index))
                            paths.append([*chain, edge])
                    elif key not in seen and len(seen) < MAX_NODES:
                        seen.add(key)
                        nxt.append((callee, [*chain, edge]))
            if paths or not nxt:
                break
            frontier = nxt
    return CallPaths(source, target, paths[:limit], max_depth, _ms(started),
                     "" if s is not None and t is not None else no_graph_note(source, target),
                     len(paths) > limit)


@_collector_paused
def impact(store: IndexStore, defs: list[GraphDef], subject: str, *, depth: int = 3,
           limit: int = 200, file: str | None = None) -> Impact:
    """What depends on `defs`, transitively: the definitions (or module-level code) whose
    code uses them, then what uses those, nearest first; the test files among them.
    `file`: the subject is that whole file, so code inside it is never its dependent (a
    method or module-level line that uses the file's definitions is followed as part of
    the subject, at the same distance)."""
    started = time.perf_counter()
    if not defs:
        return Impact(subject, defs, [])
    g = _Graph(store, defs[0].repository)
    items: dict[tuple[str, int], ImpactItem] = {}
    frontier = [(t, d.qualified_name) for d in defs if (t := g.target_of(d)) is not None]
    frontier_defs = list(frontier)
    seen = {(t.path, t.index) for t, _ in frontier}
    truncated = False
    whole = _file_pool(g, file) if file is not None else None
    for distance in range(1, depth + 1):
        nxt: list[tuple[Target, str]] = []
        pools = _pools(g, [t for t, _ in frontier])
        for node, via in frontier:
            found, _ = g.uses(node, whole if node.path == file else pools.get((node.path,
                                                                                node.index)))
            for path, k, _role in found:
                graph = g.ws.graph(path)
                assert graph is not None
                s = graph.sites[k]
                key = (path, s.scope)
                if path == file:  # the subject's own code: followed, never listed
                    if s.scope >= 0 and key not in seen:
                        seen.add(key)
                        frontier.append((Target("def", path, s.scope),
                                         graph.defs[s.scope].qualname))
                    continue
                if key in items or ((path, s.scope) in seen and s.scope >= 0):
                    continue
                if len(items) >= limit:
                    truncated = True
                    break
                name = graph.defs[s.scope].qualname if s.scope >= 0 else None
                line = graph.defs[s.scope].line if s.scope >= 0 else s.line
                items[key] = ImpactItem(distance, path, line, name, is_test_path(path), via)
                if s.scope >= 0:
                    seen.add(key)
                    nxt.append((Target("def", path, s.scope), name or path))
            if truncated:  # full: no further node's uses can be listed
                break
        frontier = nxt
        if truncated or not frontier:
            break
    # The files that import it (`import requests`), at distance 1.
    truncated = truncated or _add_importers(g, items, [t for t, _ in frontier_defs], file, limit,
                                            whole)
    ranked = sorted(items.values(), key=lambda i: (i.distance, i.is_test, i.path, i.line))
    tests = [i for i in ranked if i.is_test]
    note = "" if len(frontier_defs) == len(defs) else no_graph_note(*defs)
    return Impact(subject, defs, ranked, tests, truncated, _ms(started), note)


def _file_pool(g: _Graph, file: str) -> list[str] | None:
    """The candidates of every definition of `file` (the subject of `impact FILE`, whose
    definitions and their methods it follows), gathered once (`file_candidates`)."""
    graph = g.ws.graph(file)
    if graph is None or not graph.defs:
        return None
    return g.file_candidates([Target("def", file, k) for k in range(len(graph.defs))])


def _pools(g: _Graph, nodes: list[Target]) -> dict[tuple[str, int], list[str]]:
    """The candidates of each file's definitions among `nodes`, gathered once per file
    of more than one (`file_candidates`), by (path, index): an impact reaches many
    definitions of a file, and each one's candidates gathered the same importers again
    (fastapi's routing.py has 149 definitions)."""
    by_file: dict[str, list[Target]] = {}
    for t in nodes:
        by_file.setdefault(t.path, []).append(t)
    out: dict[tuple[str, int], list[str]] = {}
    for group in by_file.values():
        if len(group) > 1:
            pool = g.file_candidates(group)
            out.update(((t.path, t.index), pool) for t in group)
    return out


def _add_importers(g: _Graph, items: dict[tuple[str, int], ImpactItem],
                   targets: list[Target], file: str | None, limit: int,
                   pool: list[str] | None = None) -> bool:
    """The module level of each file that imports `file` (`_importers`; None: the subject
    is no file), at distance 1 where it is not listed yet; whether `limit` cut them."""
    for path, line, module in _importers(g, targets, file, pool) if file is not None else ():
        if (path, -1) in items:
            continue  # its module level is listed already
        if len(items) >= limit:
            return True
        items[(path, -1)] = ImpactItem(1, path, line, None, is_test_path(path), module)
    return False


_FILE_IMPORTS = frozenset({"python", *JS_LIKE, "c", "cpp", "ruby", "rust", "lua"})
"""Languages whose imports name a file (`import requests`, `#include "jv.h"`, `require`):
importing the file makes a file its dependent. A Go, Java or C# import names a package."""


def _importers(g: _Graph, targets: list[Target], file: str,
               pool: list[str] | None = None) -> list[tuple[str, int, str]]:
    """(path, line, module as written) of the imports of the module `file` itself
    (`import requests`, `import ky from './index.js'`, `#include "jv.h"`): a dependent of the
    whole file even when no use resolves to one of its definitions (module-level values,
    re-exports). Only the files that may use its definitions are read (`candidates`, or
    `pool`: those of them all)."""
    graph = g.ws.graph(file)
    if graph is None or graph.language not in _FILE_IMPORTS:
        return []
    out: dict[str, tuple[int, str]] = {}
    layout = g.ws.layout
    every = pool if pool is not None else {p for t in targets for p in g.candidates(t)}
    for path in sorted(set(every) - {file}):
        other = g.ws.graph(path)
        if other is None:
            continue
        for imp in other.imports:
            if other.language == "python" and imp.name is None and not imp.alias and (
                    "." in imp.module):  # `import requests.adapters` runs requests/__init__
                files = layout.python_module(path, imp.module.split(".")[0], 0)
            else:
                files = layout.resolve(path, imp, other.language)
            if file in files:
                out[path] = (imp.line, imp.module)
                break
    return [(path, line, module) for path, (line, module) in sorted(out.items())]
