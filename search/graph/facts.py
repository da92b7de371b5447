"""One file's graph indexed for resolution, and what resolution answers.

`Target` is what a name resolves to. `FileFacts` indexes one decoded `FileGraph` for
lookups (definitions by parent and name, the few binding sites, bases, parameters,
imports); `FactsBase` memoises it per file over a `Workspace` (in `workspace.memo`, so it
lives as long as the decoded graphs) and answers the questions that read one file only:
the enclosing class of a scope, a method's first parameter, a `this:` parameter's type.
The module's functions are pure helpers over one `Target` or one file's facts.

Invariants: pure over the workspace's graphs; a file without a graph has no facts (None).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from ctxd.indexer.graph import FileGraph, Import, Role, Site
from ctxd.indexer.graph.reading import Sites
from ctxd.search.graph.modules import JS_LIKE
from ctxd.search.graph.workspace import Workspace

__all__ = ["CLASS_KINDS", "C_LIKE", "ELEMENT_METHODS", "MAPPING_GETS", "MAX_DEPTH", "FactsBase",
           "FileFacts", "Target", "classlike", "contained", "element", "parts", "rust_type"]

MAX_DEPTH = 14
"""How many imports, re-exports or bases one resolution follows."""
C_LIKE = frozenset({"c", "cpp"})
CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "impl", "enum",
                         "extension"})  # (Swift's `extension T {}`: more of `T`)
ELEMENT_METHODS = frozenset({"shift", "pop", "at", "find", "findLast", "popleft"})
"""A list's methods whose call gives one of its elements."""
MAPPING_GETS = frozenset({"get", "pop", "setdefault", "__getitem__"})
"""A mapping's methods whose call gives one of its values."""
_BINDING = frozenset({Role.BIND, Role.PARAM, Role.IMPORT})
_SCOPED = frozenset({Role.PARAM, Role.INHERIT})
_BOUND = _BINDING | {Role.ATTR_BIND}
_D = TypeVar("_D")


@dataclass(frozen=True, slots=True)
class Target:
    """What a name resolves to: a definition (`def`), an instance of a class (`inst`:
    `index` is the class), a list of such instances (`elems`), a mapping to them (`map`),
    a module (`module`: its
    files in `paths`), or an object of known fields (`shape`: `paths` is the `Site.value`
    `{a ()X;b :Y}` and the line it was written at, `index` its scope)."""

    kind: str
    path: str = ""
    index: int = -1
    paths: tuple[str, ...] = ()


class FileFacts:
    """One file's graph indexed for lookups. The sites are looked at only as asked: the
    sites bearing a name, and those binding it, when a name is first asked (`named`,
    `binds`); parameters and bases when one is (a graph of `indexer.graph.reading`
    builds no other site)."""

    def __init__(self, graph: FileGraph) -> None:
        self.graph = graph
        # The last declaration of a name wins (overload stubs come before the
        # implementation; a later definition replaces an earlier one when it runs).
        self.children: dict[tuple[int, str], int] = {}
        self.qualnames: dict[str, int] = {}
        self.members: dict[int, list[int]] = defaultdict(list)
        """A definition -> the definitions directly inside it, in file order."""
        for k, d in enumerate(graph.defs):
            self.children[(d.parent, d.name)] = k
            self.qualnames[d.qualname] = k
            self.members[d.parent].append(k)
        self.binds = _ByName(self._binds)
        """(scope, name) -> the sites binding the name there (assigned, a parameter, an
        import), in file order; read a name at a time, when first asked."""
        self.attr_binds = _ByName(self._attr_binds)
        """(scope, name) -> the `recv.name = ...` sites there."""
        self._named: dict[str, list[int]] = {}
        self._grouped: dict[str, list[int]] | None = None
        self._scoped: tuple[dict[int, Site], dict[int, list[Site]],
                            dict[int, list[Site]]] | None = None
        self.imports: dict[str, list[Import]] = defaultdict(list)
        self.stars: list[Import] = []
        for imp in graph.imports:
            if imp.name == "*" and not imp.alias:
                self.stars.append(imp)
            elif imp.local and graph.language not in C_LIKE:  # (`#include` binds no name)
                self.imports[imp.local].append(imp)

    def named(self, name: str) -> list[int]:
        """The indexes of the sites that bear `name`, in file order."""
        got = self._named.get(name)
        if got is None:
            sites = self.graph.sites
            got = self._named[name] = (
                sites.named(name) if isinstance(sites, Sites) else
                [k for k, s in enumerate(sites) if s.name == name])
        return got

    def _binds(self, name: str) -> Iterator[Site]:
        for s in self._bound(name):
            if s.role in _BINDING and s.receiver is None:
                yield s

    def _attr_binds(self, name: str) -> Iterator[Site]:
        for s in self._bound(name):
            if s.role == Role.ATTR_BIND and s.receiver is not None:
                yield s

    def _bound(self, name: str) -> list[Site]:
        """The sites named `name` that bind it (`binds`' and `attr_binds`' roles)."""
        sites = self.graph.sites
        if not isinstance(sites, Sites):
            return [s for k in self.named(name) if (s := sites[k]).role in _BOUND]
        if self._grouped is None:  # (the names of the binding sites, read once)
            self._grouped = sites.grouped(_BOUND)
        return sites.pick(self._grouped.get(name, []))

    def _by_scope(self) -> tuple[dict[int, Site], dict[int, list[Site]],
                                 dict[int, list[Site]]]:
        """`first_params`, `params` and `bases`, read together when first asked."""
        if self._scoped is None:
            first: dict[int, Site] = {}
            params: dict[int, list[Site]] = defaultdict(list)
            bases: dict[int, list[Site]] = defaultdict(list)
            sites = self.graph.sites
            for s in (sites.pick(sites.having(_SCOPED)) if isinstance(sites, Sites) else
                      [s for s in sites if s.role in _SCOPED]):
                if s.role == Role.PARAM:
                    first.setdefault(s.scope, s)
                    params[s.scope].append(s)
                elif s.scope >= 0:
                    bases[s.scope].append(s)
            self._scoped = (first, params, bases)
        return self._scoped

    @property
    def first_params(self) -> dict[int, Site]:
        """A definition -> its first parameter."""
        return self._by_scope()[0]

    @property
    def params(self) -> dict[int, list[Site]]:
        """A definition -> its parameters, in order."""
        return self._by_scope()[1]

    @property
    def bases(self) -> dict[int, list[Site]]:
        """A class -> the sites naming its bases, in order."""
        return self._by_scope()[2]

    @property
    def by_name(self) -> dict[str, list[int]]:
        """Site name -> the indexes of the sites that bear it (every name: prefer
        `named`)."""
        out: dict[str, list[int]] = defaultdict(list)
        for k, s in enumerate(self.graph.sites):
            out[s.name].append(k)
        return out


class _ByName(dict[tuple[int, str], list[Site]]):
    """(scope, name) -> sites, filled a name at a time (by `fill`) when first asked; a
    missing key reads as an empty list (as a `defaultdict(list)`)."""

    def __init__(self, fill: Callable[[str], Iterable[Site]]) -> None:
        super().__init__()
        self._fill = fill
        self._names: set[str] = set()

    def _load(self, name: str) -> None:
        if name not in self._names:  # (filled whole, then marked: threads may share it)
            got: dict[tuple[int, str], list[Site]] = defaultdict(list)
            for s in self._fill(name):
                got[(s.scope, s.name)].append(s)
            self.update(got)
            self._names.add(name)

    @overload
    def get(self, key: tuple[int, str], default: None = None, /) -> list[Site] | None: ...

    @overload
    def get(self, key: tuple[int, str], default: list[Site], /) -> list[Site]: ...

    @overload
    def get(self, key: tuple[int, str], default: _D, /) -> list[Site] | _D: ...

    def get(self, key: tuple[int, str], default: Any = None, /) -> Any:
        self._load(key[1])
        return super().get(key, default)

    def __getitem__(self, key: tuple[int, str]) -> list[Site]:
        self._load(key[1])
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[1], str):
            self._load(key[1])
        return super().__contains__(key)

    def __missing__(self, key: tuple[int, str]) -> list[Site]:
        got: list[Site] = []
        self[key] = got
        return got


class FactsBase:
    """Per-file `FileFacts` of one repository (`Workspace`), memoised, and the lookups
    that read one file only."""

    def __init__(self, workspace: Workspace) -> None:
        self.ws = workspace
        self._facts: dict[str, FileFacts | None] = workspace.memo.setdefault("facts", {})

    def facts(self, path: str) -> FileFacts | None:
        if path not in self._facts:
            graph = self.ws.graph(path)
            self._facts[path] = FileFacts(graph) if graph is not None else None
        return self._facts[path]

    def reached(self, path: str, memo_key: str, limit: int,
                step: Callable[[str, FileFacts], Iterable[str]]) -> list[str]:
        """The files `step` (a file and its facts -> the files it reaches directly: its
        `#include`s, its `require`s) reaches from `path`, transitively, nearest first, at
        most `limit`; memoised per query under `memo_key`."""
        memo: dict[str, list[str]] = self.ws.memo.setdefault(memo_key, {})
        got = memo.get(path)
        if got is not None:
            return got
        out: list[str] = []
        seen, todo = {path}, deque([path])
        while todo and len(out) < limit:
            here = todo.popleft()
            facts = self.facts(here)
            for f in step(here, facts) if facts is not None else ():
                if f not in seen:
                    seen.add(f)
                    out.append(f)
                    todo.append(f)
        memo[path] = out[:limit]
        return memo[path]

    def _rust_field(self, got: Target, site: Site) -> bool:
        """`self.len` in Rust is the field `len`, never the method `len()` (a method is
        named without a call only by its path: `Self::len`, `GlobSet::len`)."""
        facts = self.facts(got.path)
        return facts is not None and got.kind == "def" and facts.graph.language == "rust" and (
            facts.graph.defs[got.index].kind == "method") and bool(site.receiver) and (
            str(site.receiver).rpartition(".")[2][:1].islower())

    def _first_param(self, path: str, scope: int, name: str) -> bool:
        """Whether `name` is the first parameter of the Python method `scope` (its `self`,
        whatever it is called: click's `__self`)."""
        facts = self.facts(path)
        if facts is None or scope < 0 or facts.graph.language != "python":
            return False
        d = facts.graph.defs[scope]
        if d.kind not in ("method", "constructor"):
            return False
        first = facts.first_params.get(scope)
        return first is not None and first.name == name and first.line >= d.line

    def _this_param(self, path: str, scope: int, line: int) -> str | None:
        """The type of a `this` parameter declared in the scope before `line`
        (`function (this: SchedulerAction<T>) {...}`), as `Site.value`."""
        facts = self.facts(path)
        if facts is None or facts.graph.language not in JS_LIKE:
            return None
        typed = [s for s in facts.params.get(scope, ()) if s.name == "this" and s.line <= line]
        return typed[-1].value if typed and typed[-1].value else None

    def enclosing_class(self, path: str, scope: int) -> int | None:
        """The innermost class-like definition holding `scope`."""
        facts = self.facts(path)
        if facts is None:
            return None
        defs = facts.graph.defs
        s = scope
        while s != -1:
            if defs[s].kind in CLASS_KINDS:
                if defs[s].kind == "impl":  # Rust: methods of the type implemented
                    k = facts.children.get((-1, defs[s].name))
                    return k if k is not None else s
                return s
            owner, _, _ = defs[s].qualname.rpartition(".")
            if defs[s].parent == -1 and owner and defs[s].kind == "method" and (
                    (k := facts.qualnames.get(owner)) is not None) and (
                    defs[k].kind in CLASS_KINDS):  # `Cls.prototype.m = function () {...}`
                return k
            s = defs[s].parent
        return None


def rust_type(facts: FileFacts, scope: int, name: str) -> int | None:
    """The last definition named `name` in `scope` that is not an `impl` block (the
    struct or enum the block implements, when this file defines it), else None."""
    found = [k for k in facts.members.get(scope, ()) if facts.graph.defs[k].name == name
             and facts.graph.defs[k].kind != "impl"]
    return found[-1] if found else None


def classlike(facts: FileFacts, kind: str) -> bool:
    """Whether a definition of this kind has members (and instances): classes, structs,
    interfaces, traits; in Go any named type (`type Params []Param` has methods)."""
    return kind in CLASS_KINDS or (kind == "type" and facts.graph.language == "go")


def parts(token: str) -> tuple[str, str]:
    """A receiver chain's token (`name`, `name()`, `name[]`, `f()()`, `name()[]`, `[]`):
    the name and what follows it (calls `()` and indexes `[]`, in order)."""
    core = token.rstrip("()[]")
    return core, token[len(core):]


def element(got: Target | None, indexed: int) -> Target | None:
    """`xs[i]` / `m[k]`: an element of a list (a value of a mapping) of instances
    (anything else indexed: unknown)."""
    if got is None or not indexed:
        return got
    if indexed == 1 and got.kind in ("elems", "map"):
        return Target("inst", got.path, got.index)
    return None


def contained(got: Target, method: str) -> Target | None:
    """What a container's method call gives: a list's `shift()`/`pop()` an element, a
    mapping's `get(k)`/`pop(k)` a value and `values()` a list of them."""
    if got.kind == "elems":
        return Target("inst", got.path, got.index) if method in ELEMENT_METHODS else None
    if method in MAPPING_GETS:
        return Target("inst", got.path, got.index)
    return Target("elems", got.path, got.index) if method == "values" else None
