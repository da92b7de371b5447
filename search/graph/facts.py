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
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ctxd.indexer.graph import FileGraph, Import, Role, Site
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
    """One file's graph indexed for lookups (the sites read once, the few that bind a
    name picked out first; which sites bear a name is found per name, when asked)."""

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
        self.binds: dict[tuple[int, str], list[Site]] = defaultdict(list)
        self.attr_binds: dict[tuple[int, str], list[Site]] = defaultdict(list)
        self.bases: dict[int, list[Site]] = defaultdict(list)
        self.first_params: dict[int, Site] = {}
        self.params: dict[int, list[Site]] = defaultdict(list)
        self._named: dict[str, list[int]] = {}
        ref, call = Role.REF, Role.CALL  # most sites: they bind nothing
        for s in [s for s in graph.sites if s.role is not ref and s.role is not call]:
            role = s.role
            if role == Role.PARAM:
                self.first_params.setdefault(s.scope, s)
                self.params[s.scope].append(s)
            if role in _BINDING and s.receiver is None:
                self.binds[(s.scope, s.name)].append(s)
            elif role == Role.ATTR_BIND and s.receiver is not None:
                self.attr_binds[(s.scope, s.name)].append(s)
            elif role == Role.INHERIT and s.scope >= 0:
                self.bases[s.scope].append(s)
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
            got = self._named[name] = [k for k, s in enumerate(self.graph.sites)
                                       if s.name == name]
        return got

    @property
    def by_name(self) -> dict[str, list[int]]:
        """Site name -> the indexes of the sites that bear it (every name: prefer
        `named`)."""
        out: dict[str, list[int]] = defaultdict(list)
        for k, s in enumerate(self.graph.sites):
            out[s.name].append(k)
        return out


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
