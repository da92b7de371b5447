"""The files that may use a definition: `CandidateFiles.candidates`.

Those are its own file, the files whose imports end in its module's name or in its own (or
its class's) name (`Workspace.importers`, the store's `graph_links`), the same Go or Java
package (and, for the later languages, `more_langs`' package files), and, round by round
(`ROUNDS`), the files that import those that re-export it (`__init__.py`, `index.ts`, a
Rust crate root). In Python and JS/TS only the files with an import that lands in the
definition's file, a package above it or a file already kept count (another package's or
another copy's module of the same name does not), and an import is followed only once its
`modules.import_keys` meet the `file_keys` of those files, so that a monorepo's other
copies are dropped without resolving their imports. The keys are looked up as the
importers wrote them (`indexer.graph.links`): a relative import's under each folder above
the files kept, a Python absolute import's under the top folders whose importers may
name them (`_tops`: not one that holds a copy of them, whose importers find that copy),
so that a monorepo's other copies' importers are not even read. `queries._Graph`
inherits this.

Invariants: the candidates are a superset of the files whose sites can resolve to the
definition through imports (the keys, and the folders they are looked up under, are a
necessary condition for landing); memoised per
text generation (`Workspace.memo`), followed imports per workspace (`Workspace.imports`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from functools import lru_cache
from weakref import WeakKeyDictionary

from ctxd.indexer.graph import FileGraph, Import, module_tail
from ctxd.indexer.graph.links import root_keyed, scoped, top_keyed, top_of
from ctxd.search.graph.facts import Target
from ctxd.search.graph.modules import JS_LIKE, RepoLayout
from ctxd.search.graph.more_langs import MORE_LANGUAGES, package_keys
from ctxd.search.graph.resolve import C_LIKE, Resolver
from ctxd.search.graph.workspace import Workspace

__all__ = ["ROUNDS", "CandidateFiles"]

ROUNDS = 3
"""Rounds of re-exporting files followed to find importers."""
KEEP_IMPORTS = 50_000
"""Files whose imports a workspace keeps followed (`CandidateFiles._lands`)."""


class _Imports:
    """A Python or JS/TS file's imports as `CandidateFiles._lands` follows them: those not
    followed yet, with their `import_keys` (`names`: all of these; `unknown`: one's are
    not known), and the files the followed ones land in (`landed`)."""

    def __init__(self, path: str, language: str, imports: list[Import],
                 layout: RepoLayout) -> None:
        self.path = path
        self.language = language
        folder = posixpath.dirname(path)
        self.waiting = [(layout.import_keys(path, imp, language, folder), imp)
                        for imp in imports]
        self.names: frozenset[str] = frozenset().union(*(n for n, _ in self.waiting if n))
        self.unknown = any(n is None for n, _ in self.waiting)
        self.landed: set[str] = set()

    def follow(self, layout: RepoLayout, near: set[str]) -> None:
        """Follow the waiting imports whose keys meet `near` (it only grows)."""
        still: list[tuple[frozenset[str] | None, Import]] = []
        for names, imp in self.waiting:
            if names is None or not names.isdisjoint(near):
                self.landed.update(layout.import_files(self.path, imp, self.language))
            else:
                still.append((names, imp))
        self.waiting = still
        self.names = frozenset().union(*(n for n, _ in still if n))
        self.unknown = False


class CandidateFiles:
    """The candidate files of a repository's definitions (over `ws` and `resolver`)."""

    ws: Workspace
    resolver: Resolver

    def candidates(self, t: Target) -> list[str]:
        """The files that may use the definition `t` (see the module docstring)."""
        memo: dict[tuple[str, int], list[str]] = self.ws.memo.setdefault("candidates", {})
        got = memo.get((t.path, t.index))
        if got is not None:
            return got
        graph = self.ws.graph(t.path)
        assert graph is not None
        out = memo[(t.path, t.index)] = self._gather(t.path, graph, self._keys(t, graph))
        return out

    def file_candidates(self, targets: list[Target]) -> list[str]:
        """The files that may use any of `targets`, all definitions of one file (`impact
        FILE`): `candidates` of their keys together, gathered once, a superset of each
        one's (the gathering only grows with its keys). A file of 149 definitions
        gathered them 149 times (fastapi's routing.py: 7.4 s cold)."""
        memo: dict[tuple[str, frozenset[int]], list[str]] = self.ws.memo.setdefault(
            "file_candidates", {})
        mark = (targets[0].path, frozenset(t.index for t in targets))
        got = memo.get(mark)
        if got is None:
            graph = self.ws.graph(targets[0].path)
            assert graph is not None
            keys = set().union(*(self._keys(t, graph) for t in targets))
            got = memo[mark] = self._gather(targets[0].path, graph, keys)
        return got

    def _gather(self, path: str, graph: FileGraph, keys: set[str]) -> list[str]:
        """The candidates of a definition of `path` whose first round looks up `keys`."""
        files = {path}
        if graph.language in ("go", "java"):  # the package: the folder's files
            files.update(self.ws.layout.same_package(
                path, ".go" if graph.language == "go" else ".java"))
        files.update(self.resolver.more_files(path))  # a Swift module's, C# global usings
        above, near_above = self.ws.layout.packages_above(path)
        reach = files | above  # the files an import must land in (and the packages above)
        near = {n for f in files for n in self.ws.layout.file_keys(f)} | near_above
        pending: set[str] = set()
        lookups = _Lookups(graph.language, self._tops, above & self.ws.layout.paths)
        for _ in range(ROUNDS):
            asked = {k for k in keys if k}  # this round's keys (re-exporters': the next)
            moved = False
            while True:  # again while kept files add folders to look under
                new = sorted(lookups.new(asked, files))
                if not new:
                    break
                moved = True
                found = [f for f in self.ws.importers(new) if f not in files]
                self.ws.preload(found, peeks=True)
                pending.update(found)
                for f in self._landing(pending, reach, near):
                    files.add(f)  # re-exporters: their importers name them, not the definer
                    base = posixpath.basename(f)
                    if base.startswith(("__init__.", "index.", "mod.", "lib.")):
                        keys.add(posixpath.basename(posixpath.dirname(f)))
                    keys.add(module_tail(f.rsplit(".", 1)[0]))
                    if graph.language == "rust":
                        keys.update(self._rust_reexports(f, keys))
            if not moved:
                break
        out = sorted(files)
        self.ws.preload(out)
        return out

    def _tops(self, path: str) -> frozenset[str]:
        """The top folders whose Python absolute imports may name the file (its own, and
        each one without a copy of it at the same path below it: the importers of one
        with a copy find that copy, nearer, unless they name the file by its full dotted
        name: `_Lookups`' root keys), memoised per module layout."""
        layout = self.ws.layout
        memo = _TOPS.get(layout)
        if memo is None:  # (per layout: kept while the paths are the same)
            memo = _TOPS[layout] = {"": frozenset(  # (top_of, inline: 80,000 paths)
                p.partition("/")[0] if "/" in p else "" for p in layout.paths)}
        got = memo.get(path)
        if got is None:
            every, paths, top = memo[""], layout.paths, top_of(path)
            rest = path[len(top) + 1:] if top else path
            got = memo[path] = frozenset({top} | {t for t in every if t and t != top and
                                                  f"{t}/{rest}" not in paths})
        return got

    def _keys(self, t: Target, graph: FileGraph) -> set[str]:
        """The import keys the first round looks up: the module's name, the definition's
        and its classes', a package's folder, a Go package's, `_other_keys`."""
        d = graph.defs[t.index]
        keys = {module_tail(t.path.rsplit(".", 1)[0]), d.name}
        parent = d.parent
        while parent >= 0:
            keys.add(graph.defs[parent].name)
            parent = graph.defs[parent].parent
        if posixpath.basename(t.path).startswith(("__init__.", "index.", "mod.", "lib.")):
            keys.add(posixpath.basename(posixpath.dirname(t.path)))
        if graph.language == "go":
            keys.add(posixpath.basename(posixpath.dirname(t.path)))
            keys.add(self.ws.layout.go_import_tail(t.path))  # a module's root package
        keys.update(self._other_keys(t, graph.language, d.name, d.parent))
        return keys

    def _rust_reexports(self, path: str, keys: set[str]) -> set[str]:
        """The names other files reach a Rust definition by through `path`: its crate's
        name when `path` is a crate root, and the alias of `pub extern crate grep_searcher
        as searcher;` (`grep::searcher::Searcher`)."""
        out: set[str] = set()
        crate = self.ws.layout.rust_crate_of(path)
        if crate and self.ws.layout.rust_crate(crate) == path:
            out.add(crate)
        graph = self.ws.peek(path)
        for imp in graph.imports if graph is not None else ():
            if imp.alias and module_tail(imp.module) in keys:
                out.add(imp.alias)
        return out

    def _landing(self, pending: set[str], reach: set[str], near: set[str]) -> list[str]:
        """The files of `pending` (taken out of it, added to `reach`, their `file_keys`
        to `near`) with an import that lands in `reach`, directly or through another such
        file: the others import a module of the same name elsewhere (another package,
        another copy) and cannot name the definition. Languages whose imports do not
        name files (Go, Java packages) or that resolve otherwise all land."""
        out: list[str] = []
        moved = True
        while moved:
            moved = False
            for f in sorted(pending):
                if self._lands(f, reach, near):
                    pending.discard(f)
                    reach.add(f)
                    near.update(self.ws.layout.file_keys(f))
                    out.append(f)
                    moved = True
        return out

    def _lands(self, path: str, reach: set[str], near: set[str]) -> bool:
        """Whether an import of the file lands in `reach` (an import is followed once
        its `import_keys` meet `near`, the `file_keys` of the files of `reach`)."""
        memo: dict[str, _Imports | None] = self.ws.imports
        if path not in memo:
            if len(memo) >= KEEP_IMPORTS:
                memo.clear()
            peek = self.ws.peek(path)
            lang = peek.language if peek is not None else ""
            memo[path] = None if peek is not None and lang != "python" and (
                lang not in JS_LIKE) else _Imports(path, lang, peek.imports if peek else [],
                                                   self.ws.layout)
        got = memo[path]
        if got is None:
            return True
        if got.unknown or not got.names.isdisjoint(near):
            got.follow(self.ws.layout, near)
        return not reach.isdisjoint(got.landed)

    def _other_keys(self, t: Target, language: str, name: str, parent: int) -> set[str]:
        """Rust: the crate's name (other crates `use globset::...`); C/C++: the headers its
        file includes that declare it (`jv.h` for `jv_parse.c`'s `jv_parse`)."""
        if language == "rust":
            return {self.ws.layout.rust_crate_of(t.path) or ""}
        graph = self.ws.graph(t.path)
        if language in MORE_LANGUAGES and graph is not None:  # C#, Kotlin...: the package's
            return package_keys(graph.imports, language)  # files and importers
        if language in C_LIKE and graph is not None and (  # (a C++ class's `~decl`:
                parent == -1 or graph.defs[parent].kind == "namespace"):  # `Box::get`)
            owner = graph.defs[t.index].qualname.rpartition(".")[0]
            return {module_tail(h.rsplit(".", 1)[0]) for h in self.resolver.c_includes(t.path)
                    if self.resolver.c_declares(h, name, owner)}
        return set()

    def names(self, path: str) -> frozenset[str]:
        """The strings of a file's graph: every name its sites bear, and more (read
        without decoding its sites)."""
        got = self.ws.peek(path)
        return got.strings if got is not None else frozenset()


class _Lookups:
    """The link keys one definition's candidates read (`indexer.graph.links`), each
    once, as keys are asked and files kept: a key as written (other languages' imports,
    JS packages), and for a Python or JS/TS definition under every folder above the
    files kept (relative imports that may name them), for a Python one under the top
    folders whose absolute imports may reach them (`CandidateFiles._tops`; the root's
    always) and under their own top folders' names (the root keys: a full dotted
    name)."""

    def __init__(self, language: str, tops: Callable[[str], frozenset[str]],
                 more: Iterable[str]) -> None:
        self.relative = language == "python" or language in JS_LIKE
        self.python = language == "python"
        self.of_tops = tops
        self.keys: set[str] = set()
        self.seen: set[str] = set()
        self.more = set(more)
        """Files whose folders count as the kept files' (the packages above)."""
        self.scopes: set[str] = set()
        self.tops: set[str] = {""}
        self.own: set[str] = set()

    def new(self, asked: set[str], files: set[str]) -> set[str]:
        """The keys to read for `asked` and `files` not given before."""
        keys = asked - self.keys
        out = set(keys)
        if self.relative:
            fresh = [f for f in (*files, *self.more) if f not in self.seen]
            self.seen.update(fresh)
            scopes = {a for f in fresh for a in _folders_above(posixpath.dirname(f))}
            scopes -= self.scopes
            out.update(scoped(a, k) for a in self.scopes for k in keys)
            out.update(scoped(a, k) for a in scopes for k in asked)
            self.scopes |= scopes
            if self.python:
                tops = {t for f in fresh for t in self.of_tops(f)} - self.tops
                own = {top_of(f) for f in fresh} - self.own - {""}
                out.update(top_keyed(t, k) for t in self.tops for k in keys)
                out.update(top_keyed(t, k) for t in tops for k in asked)
                out.update(root_keyed(t, k) for t in self.own for k in keys)
                out.update(root_keyed(t, k) for t in own for k in asked)
                self.tops |= tops
                self.own |= own
        self.keys |= keys
        return out


_TOPS: WeakKeyDictionary[RepoLayout, dict[str, frozenset[str]]] = WeakKeyDictionary()
"""Per module layout: '' -> its top folders; a file -> its `CandidateFiles._tops`."""


@lru_cache(maxsize=100_000)
def _folders_above(folder: str) -> tuple[str, ...]:
    """`folder` and each folder above it, the root ('') last: where a relative import
    that may name a file of `folder` is keyed (`indexer.graph.links.import_scope`)."""
    out = [folder]
    while folder:
        folder = posixpath.dirname(folder)
        out.append(folder)
    return tuple(out)
