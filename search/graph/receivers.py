"""What a receiver chain evaluates to, and a class's members: `Receivers`.

`expr` evaluates `self.s`, `mod.Cls()`, `super()`, `xs[].s` (a name, then each member,
call and index in turn); `member` is a module's export, a class's or an instance's member
or a known object's field; `class_member` searches a class, its other blocks (Go
receivers, Rust `impl`s) and its bases; `_attribute` finds `self.x` assigned in a class's
methods; `bases` the classes a class names as bases. `resolve.Resolver` inherits this and
answers the names, values and exports it asks for (`name`, `value`, `export`,
`_instance`, `_bound`).

Invariants: never guesses between definitions; bounded by `MAX_DEPTH`; a cycle of bases
ends (`bases` memoises an empty answer first).
"""

from __future__ import annotations

import re

from ctxd.indexer.graph import Role, Site
from ctxd.search.graph.c_family import CFamily
from ctxd.search.graph.facts import (
    CLASS_KINDS,
    MAX_DEPTH,
    FileFacts,
    Target,
    classlike,
    contained,
    element,
    parts,
)
from ctxd.search.graph.modules import JS_LIKE
from ctxd.search.graph.more_langs import MoreLanguages
from ctxd.search.graph.ruby import RubyLookups

__all__ = ["Receivers"]

_NAMESPACES = frozenset({"namespace", "module"})
"""Definitions that only hold others (a TS namespace, a Rust inline `mod`, a Ruby module,
a C++ namespace): `Util.area` is the member of that name."""
_VARIABLES = frozenset({"variable", "constant", "property"})  # (C#, Kotlin, Swift, Scala)
_TOKEN = re.compile(r"[^.()\[\]]+(?:\(\)|\[\])*|\[\]")


class Receivers(CFamily, MoreLanguages, RubyLookups):
    """Receiver chains and class members (see the module docstring)."""

    _bases: dict[tuple[str, int], list[Target]]

    def name(self, path: str, name: str, scope: int, line: int, depth: int, *,
             value: bool = False) -> Target | None:
        """What a bare name means at a scope (`resolve.Resolver` answers)."""
        return None

    def value(self, path: str, value: str, scope: int, line: int, depth: int) -> Target | None:
        """What a binding's value makes a name (`resolve.Resolver` answers)."""
        return None

    def export(self, files: list[str] | tuple[str, ...], name: str,
               depth: int) -> Target | None:
        """What a module exports under a name (`resolve.Resolver` answers)."""
        return None

    def _instance(self, got: Target, depth: int = 0) -> Target | None:
        """What calling `got` gives (`resolve.Resolver` answers)."""
        return None

    def _bound(self, path: str, binds: list[Site], scope: int, line: int,
               depth: int) -> Target | None:
        """A name bound in a scope (`resolve.Resolver` answers)."""
        return None

    # ---------------------------------------------------------------- receivers

    def expr(self, path: str, text: str, scope: int, line: int, depth: int,
             called: bool = False) -> Target | None:
        """What a receiver chain (`self.s`, `mod.Cls()`, `super()`, `xs[].s`) evaluates to
        (`called`: the chain's last name is called, as in a value `()Client.new`)."""
        self.in_value += 1
        outer, self.call_labels = self.call_labels, None  # (a chain's calls: their own)
        try:
            return self._expr(path, text, scope, line, depth, called)
        finally:
            self.in_value -= 1
            self.call_labels = outer

    def _expr(self, path: str, text: str, scope: int, line: int, depth: int,
              called: bool) -> Target | None:
        if text == "?" or depth > MAX_DEPTH:
            return None
        tokens = _TOKEN.findall(text)
        if not tokens:
            return None
        name, suffix = self._part(tokens[0])
        got = self._head(path, name, suffix[:2] == "()", scope, line, depth)
        got = self._suffix(got, suffix[2:] if name == "super" else suffix, depth)
        for n, tok in enumerate(tokens[1:], 2):
            got = self._property(got, depth)
            if got is None:
                return None
            name, suffix = self._part(tok)
            if name == "prototype" and got.kind == "def":  # `Cls.prototype.m`: an instance's
                got = self._instance(got, depth)
            elif got.kind in ("elems", "map") and suffix[:2] == "()":  # `xs.shift()`,
                got = contained(got, name)  # `m.get(k)`, `m.values()`: what they hold
                suffix = suffix[2:]
            elif got.kind in ("elems", "map"):  # a container's other members: unknown
                got = None
            elif name:
                held = got
                got = self._field(got, self.member(got, name, depth + 1), name,
                                  suffix or ("(" if called and n == len(tokens) else ""),
                                  depth)
                if got is None:  # (Kotlin: an extension function of the instance's class)
                    got, suffix = self._extended_call(path, held, name, suffix, scope, line,
                                                      depth)
            got = self._suffix(got, suffix, depth)
        return got

    def _part(self, token: str) -> tuple[str, str]:
        """A chain token's name and suffix (`parts`); a Swift call's argument labels
        (`request#_,to()`) become the labels of the call being looked up (`overload`)."""
        name, suffix = parts(token)
        mark = name.find("#", 1)  # (not a JS `#private` name)
        self.call_labels = (name[:mark], f"({name[mark + 1:]})") if mark > 0 else None
        return (name[:mark] if mark > 0 else name), suffix

    def _extended_call(self, path: str, held: Target, name: str, suffix: str, scope: int,
                       line: int, depth: int) -> tuple[Target | None, str]:
        """`held.name` as a Kotlin extension function (`MoreLanguages.extension`) and the
        suffix left: one that gives its receiver back (`fun <U> U.context(): U`), called,
        is `held` itself."""
        got = self.extension(path, held, name, scope, line, depth)
        if got is not None and suffix[:2] == "()" and self.gives_receiver(got):
            return held, suffix[2:]
        return got, suffix

    def _field(self, holder: Target, got: Target | None, name: str, suffix: str,
               depth: int) -> Target | None:
        """Rust: `x.name` not called is the field `name`, never a method of the name
        (`self.fallback.merge()` with a `fallback` field and a `fallback()` method)."""
        facts = self.facts(got.path) if got is not None and got.kind == "def" else None
        if got is None or facts is None or suffix[:1] == "(" or (
                facts.graph.language != "rust") or facts.graph.defs[got.index].kind != "method":
            return got
        return self._attribute(holder.path, holder.index, name, depth + 1) if (
            holder.kind == "inst") else None

    def _suffix(self, got: Target | None, suffix: str, depth: int) -> Target | None:
        """`got` called (`()`: what it gives) and indexed (`[]`: an element), in order."""
        for k in range(0, len(suffix), 2):
            if got is None:
                return None
            got = self._instance(got, depth) if suffix[k] == "(" else element(got, 1)
        return got

    def _head(self, path: str, name: str, called: bool, scope: int, line: int,
              depth: int) -> Target | None:
        """What the first name of a receiver chain means (`self`, `super()`, a name)."""
        facts = self.facts(path)
        if facts is None:
            return None
        lang = facts.graph.language
        if name == "this" and not called and (typed := self._this_param(path, scope, line)):
            return self.value(path, typed, scope, line, depth + 1)
        if called and name == "cls" and self._first_param(path, scope, name):
            cls = self.enclosing_class(path, scope)  # `cls(...)` in a classmethod: the class
            return None if cls is None else Target("def", path, cls)
        if (not called and (name in ("self", "this", "cls") or self._first_param(
                path, scope, name))) or (name == "Self" and lang in ("rust", "python")):
            cls = self.enclosing_class(path, scope)
            if cls is None and (owner := self.c_owner(path, scope)) is not None:
                return Target("inst", owner.path, owner.index)  # `this` in `Box::set`
            return None if cls is None else Target("inst", path, cls)
        if name == "super" and (called or lang in JS_LIKE):
            cls = self.enclosing_class(path, scope)
            bases = self.bases(path, cls, depth) if cls is not None else []
            return Target("inst", bases[0].path, bases[0].index) if bases else None
        return self.name(path, name, scope, line, depth + 1, value=True)

    def member(self, target: Target | None, name: str, depth: int) -> Target | None:
        """`target.name`: a module's export, a class's (or instance's) member."""
        if target is None or depth > MAX_DEPTH or target.kind in ("elems", "map"):
            return None
        if target.kind == "module":
            return self.export(target.paths, name, depth + 1)
        if target.kind == "shape":  # `{request ()Manager;...}`: the field's value
            shape, line = target.paths
            for field in shape[1:-1].split(";"):
                key, _, value = field.partition(" ")
                if key == name:
                    got = self.value(target.path, value, target.index, int(line), depth + 1)
                    # `{ forEach }`: the field is the function; `{ a: f() }`: what it made
                    return got if got is not None and (
                        got.kind != "def" or value.startswith("=")) else None
            return None
        facts = self.facts(target.path)
        kind = facts.graph.defs[target.index].kind if facts is not None else ""
        if name == "new" and target.kind == "def" and kind == "class" and facts is not None and (
                facts.graph.language == "ruby"):
            return Target("inst", target.path, target.index)  # Ruby `Cart.new`
        if facts is not None and target.kind == "def" and kind in _NAMESPACES:
            k = facts.children.get((target.index, name))  # `Util.area()`: a TS namespace's,
            if k is None and facts.graph.language == "ruby":  # a Rust mod's; a Ruby module
                qual = f"{facts.graph.defs[target.index].qualname}.{name}"  # reopened in a
                return self.ruby_constant(target.path, qual, -1)  # required file
            return None if k is None else Target("def", target.path, k)
        if facts is None or not classlike(facts, kind):
            return None
        got = self.class_member(target.path, target.index, name, depth + 1)
        if got is None and target.kind == "inst":
            return self._attribute(target.path, target.index, name, depth + 1)
        return got

    def class_member(self, path: str, cls: int, name: str, depth: int) -> Target | None:
        """A member of a class, searched in the class (and its other blocks: Go receivers,
        Rust `impl`s of the same name), then its bases."""
        facts = self.facts(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        if self.split_member(path, cls, name):  # (Swift overloads in a type's body and its
            got = self.overload(path, cls, name)  # extensions: the one the labels fit; in a
            return got if got is not None or not self.in_value else self.split_result(
                path, cls, name)  # chain, any one when all return one type)
        k = facts.children.get((cls, name))
        if k is not None:
            return Target("def", path, k)
        qual = f"{facts.graph.defs[cls].qualname}.{name}"
        places = [path]
        if facts.graph.language == "go":
            places += self.ws.layout.go_package(path)
        places += self.more_places(path, cls)  # Swift extensions, C# partial classes
        for p in places:
            pf = self.facts(p)
            if pf is not None and (k := pf.qualnames.get(qual)) is not None:
                return Target("def", p, k)
        if (out_of_line := self.c_member(Target("def", path, cls), name)) is not None:
            return out_of_line  # C++ `int Box::get() const {..}` in a `.cpp`
        for base in self.bases(path, cls, depth + 1):
            got = self.class_member(base.path, base.index, name, depth + 1)
            if got is not None:
                return got
        return None

    def _attribute(self, path: str, cls: int, name: str, depth: int) -> Target | None:
        """`self.name` assigned in one of the class's methods (or its bases'), as an
        instance (or a list of instances)."""
        facts = self.facts(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        defs = facts.graph.defs
        for part in [cls, *(k for k, d in enumerate(defs) if k != cls and d.parent == -1 and (
                d.qualname == defs[cls].qualname and d.kind in ("struct", "impl")))]:
            got = self._own_attribute(facts, path, part, name, depth)  # (a Rust struct's
            if got is not None:  # fields, its impls' methods)
                return got
        for base in self.bases(path, cls, depth + 1):
            got = self._attribute(base.path, base.index, name, depth + 1)
            if got is not None:
                return got
        return None

    def _property(self, got: Target | None, depth: int = 0) -> Target | None:
        """A definition read as a receiver: a method is a property (`self.prop.x`,
        `this.getter.x`), whose value is what it returns; a variable (imported, a module's:
        `client.fetch()`, `mod.client.fetch()`) is what it was assigned."""
        if got is None or got.kind != "def" or depth > MAX_DEPTH:
            return got
        facts = self.facts(got.path)
        d = facts.graph.defs[got.index] if facts is not None else None
        if d is None or facts is None:
            return got
        if d.kind == "method":
            return self._instance(got, depth)
        binds = facts.binds.get((d.parent, d.name))
        if d.kind in _VARIABLES and binds:
            return self._bound(got.path, binds, d.parent, d.end_line, depth + 1)
        return got

    def _own_attribute(self, facts: FileFacts, path: str, cls: int, name: str,
                       depth: int) -> Target | None:
        for s in facts.binds.get((cls, name), ()):  # `x: Session` / `x = Session()` in
            if s.value and s.role == Role.BIND:  # the class body
                got = self.value(path, s.value, s.scope, s.line, depth + 1)
                if got is not None and got.kind in ("inst", "elems"):
                    return got
        for k in (cls, *facts.members.get(cls, ())):  # the class, then its methods
            for s in facts.attr_binds.get((k, name), ()):
                if s.receiver in ("self", "this") and s.value:
                    got = self.value(path, s.value, s.scope, s.line, depth + 1)
                    if got is not None:
                        return got
        return None

    def bases(self, path: str, cls: int, depth: int = 0) -> list[Target]:
        """The classes a class names as bases (those that resolve)."""
        key = (path, cls)
        if key in self._bases:
            return self._bases[key]
        self._bases[key] = []  # a cycle of bases ends here
        facts = self.facts(path)
        out: list[Target] = []
        if facts is not None and depth <= MAX_DEPTH:
            outer = facts.graph.defs[cls].parent
            for s in facts.bases.get(cls, ()):
                if s.receiver is None:
                    got = self.name(path, s.name, outer, s.line, depth + 1)
                else:
                    got = self.member(self.expr(path, s.receiver, outer, s.line, depth + 1),
                                      s.name, depth + 1)
                if got is not None and got.kind == "def":
                    bf = self.facts(got.path)
                    if bf is not None and bf.graph.defs[got.index].kind in CLASS_KINDS:
                        out.append(got)
        self._bases[key] = out
        return out
