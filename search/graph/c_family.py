"""C and C++ resolution: a bare name through the file's `#include`s.

`CFamily.c_global` answers a C/C++ name no scope of its file defines: a definition in a
header the file includes (transitively), else the repository's one non-`static` function
definition of a name some reached header declares. `Resolver` inherits it.

Invariants: never guesses between definitions (several left after narrowing: None); at
most `MAX_INCLUDES` files per include closure; memoised per workspace (`ws.memo`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ctxd.indexer.graph import Site
from ctxd.search.graph.facts import C_LIKE, CLASS_KINDS, FactsBase, FileFacts, Target

__all__ = ["MAX_INCLUDES", "CFamily"]

MAX_INCLUDES = 200
"""The most files one C/C++ file's `#include`s are followed to."""
_NAMESPACE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""A C++ qualified name's scope as a site's receiver (`util`, `a.b` for `a::b::f`)."""


class CFamily(FactsBase):
    """The C/C++ lookups of a resolver (over `FactsBase`'s per-file facts)."""

    def c_global(self, path: str, site: Site) -> Target | None:
        """A C/C++ file's bare name that no scope of the file defines (or a C++
        namespace-qualified one, `util::add(..)`): a function (or type) its `#include`s
        reach. A definition in a header the file includes (directly or through other
        headers) answers when it is the only one there; else a header there must declare
        the name (`~decl`; in that namespace), and the repository's one non-`static`
        function definition of it answers (several: the ones whose own includes reach a
        header that declares it, when that leaves one). A local variable or parameter of
        the name (of a qualified name's head), a file-level variable, a struct's field:
        None."""
        facts = self.facts(path)
        if facts is None or facts.graph.language not in C_LIKE:
            return None
        owner = site.receiver or ""
        if owner and (facts.graph.language != "cpp" or not _NAMESPACE.fullmatch(owner)):
            return None  # (`obj.f()`, `p->f()`: a member, not a namespace's function)
        if self._c_local(facts, site.scope, owner.partition(".")[0] or site.name):
            return None
        if not owner and (cls := self.c_owner(path, site.scope)) is not None:
            got = self.c_member(cls, site.name)  # `get()` in `int Box::set(..) {..}`
            if got is not None:
                return got
        name, qual = site.name, f"{owner}.{site.name}" if owner else site.name
        closure = self.c_includes(path)
        inline = [Target("def", f, k) for f in closure if (ff := self.facts(f)) is not None
                  and (k := ff.qualnames.get(qual)) is not None]
        if inline:
            return inline[0] if len(inline) == 1 else None
        if not any(self.c_declares(f, name, owner) for f in (path, *closure)):
            return None
        found = [t for t in self._c_definitions(name) if (tf := self.facts(t.path)) is not None
                 and tf.graph.defs[t.index].qualname == qual]
        if len(found) > 1:  # several (platform variants): those that see a declaration
            found = [t for t in found if any(self.c_declares(h, name, owner)
                                             for h in self.c_includes(t.path))]
        return found[0] if len(found) == 1 else None

    @staticmethod
    def _c_local(facts: FileFacts, scope: int, name: str) -> bool:
        """Whether `name` at `scope` is a variable or parameter of the file (or a struct's
        field: the site is in a struct), not a function."""
        defs, s = facts.graph.defs, scope
        if s >= 0 and defs[s].kind in CLASS_KINDS:
            return True
        while True:
            if any(not (b.value or "").startswith("~") for b in facts.binds.get((s, name), ())):
                return True
            if s == -1:
                return False
            s = defs[s].parent

    def c_includes(self, path: str) -> list[str]:
        """The indexed files a C/C++ file's `#include`s reach, transitively, nearest
        first (at most `MAX_INCLUDES`)."""
        def includes(p: str, facts: FileFacts) -> Iterator[str]:
            lang = facts.graph.language
            if lang in C_LIKE:
                for imp in facts.graph.imports:
                    yield from self.ws.layout.resolve(p, imp, lang)

        return self.reached(path, "c_includes", MAX_INCLUDES, includes)

    def c_declares(self, path: str, name: str, owner: str = "") -> bool:
        """Whether a C/C++ file has a prototype of `name` outside functions (in the
        namespace or class `owner`, when given: `util` for `util::add`)."""
        facts = self.facts(path)
        if facts is None:
            return False
        defs = facts.graph.defs
        return any(site.value == "~decl" and (not owner or (
            site.scope >= 0 and defs[site.scope].qualname == owner))
            for site in (facts.graph.sites[k] for k in facts.named(name)))

    def c_type(self, path: str, qual: str, scope: int = -1) -> Target | None:
        """The C++ class (struct) a type name written in a file means (`util.Box`, or
        `Box` inside `namespace util`): the one class of that qualified name in the file
        or the headers it reaches (tried within each enclosing namespace first)."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "cpp" or not _NAMESPACE.fullmatch(qual):
            return None
        defs, s, spaces = facts.graph.defs, scope, []
        while s >= 0:
            if defs[s].kind in ("namespace", *CLASS_KINDS):
                spaces.append(defs[s].qualname + ".")
            s = defs[s].parent
        files = (path, *self.c_includes(path))
        for space in (*spaces, ""):
            found = {Target("def", f, k) for f in files if (ff := self.facts(f)) is not None
                     and (k := ff.qualnames.get(space + qual)) is not None
                     and ff.graph.defs[k].kind in ("class", "struct")}
            if found:
                return found.pop() if len(found) == 1 else None
        return None

    def c_owner(self, path: str, scope: int) -> Target | None:
        """The class of a C++ method defined outside its body (`int Box::set(..) {..}`:
        `util.Box` for the definition `util.Box.set`), from the innermost such scope."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "cpp":
            return None
        defs, s = facts.graph.defs, scope
        while s >= 0:
            d = defs[s]
            owner = d.qualname.rpartition(".")[0]
            parent = defs[d.parent].qualname if d.parent >= 0 else ""
            if d.kind == "function" and owner and owner != parent:
                return self.c_type(path, owner)
            s = d.parent
        return None

    def c_member(self, cls: Target, name: str) -> Target | None:
        """A C++ class's method `name` defined outside the class body (`int Box::get()
        const {..}` in a `.cpp`: the one non-`static` definition of `util.Box.get`)."""
        facts = self.facts(cls.path)
        if facts is None or facts.graph.language != "cpp":
            return None
        qual = f"{facts.graph.defs[cls.index].qualname}.{name}"
        found = {(t.path, facts_t.graph.defs[t.index].qualname): t
                 for t in self._c_definitions(name)
                 if (facts_t := self.facts(t.path)) is not None
                 and facts_t.graph.defs[t.index].qualname == qual}
        return next(iter(found.values())) if len(found) == 1 else None

    def c_static(self, path: str, name: str) -> bool:
        """Whether a C/C++ file declares its function `name` `static` (its own)."""
        facts = self.facts(path)
        return facts is not None and any(facts.graph.sites[k].value == "~static"
                                         for k in facts.named(name))

    def _c_definitions(self, name: str) -> list[Target]:
        """The repository's non-`static` top-level C/C++ function definitions of `name`
        (found through the symbols table)."""
        memo: dict[str, list[Target]] = self.ws.memo.setdefault("c_definitions", {})
        if name in memo:
            return memo[name]
        out: list[Target] = []
        for f in self.ws.defining(name):
            facts = self.facts(f)
            if facts is None or facts.graph.language not in C_LIKE:
                continue
            for k, d in enumerate(facts.graph.defs):  # (top-level, or in a namespace)
                if d.name == name and d.kind == "function" and (
                        d.parent == -1 or facts.graph.defs[d.parent].kind == "namespace") and (
                        not self.c_static(f, name)):
                    out.append(Target("def", f, k))
        memo[name] = out
        return out
