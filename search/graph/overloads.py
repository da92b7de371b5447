"""Which of several same-named definitions a call names, where the name alone cannot say:
for Swift, C#, Kotlin (`search.graph.more_langs.MoreLanguages` inherits `Overloads`).

- Swift overloads a method by its argument labels (`uploadProgress(queue:closure:)` in
  a type's body beside `uploadProgress(bufferingPolicy:)` in an extension in another
  file): a call's labels (`Site.value` `(queue,{)`) are matched against each
  declaration's (its `LABELS` bind site, `(queue=,closure)`: `fits`); one file's
  declarations fitting answer, else none. In a receiver chain (whose calls' labels are
  not kept) such a call gives what every declaration returns, when they agree.
- A Kotlin extension function (`fun Cmd.test()`, `fun <U : Base<U>> U.context(): U`)
  is called on an instance of its receiver's class or a subclass; one that returns its
  receiver type gives the instance back. A bare Kotlin name not called is never a
  function.
- A Swift/Kotlin/C# property and a method of one name: the method when called.

Invariants: never guesses between two definitions of different qualified names; reads
only.
"""

from __future__ import annotations

from ctxd.indexer.graph import Role, Site
from ctxd.indexer.graph.langs_more import LABELS
from ctxd.search.graph.facts import CLASS_KINDS, FactsBase, FileFacts, Target

__all__ = ["MORE_LANGUAGES", "PACKAGED", "Overloads", "fits"]

PACKAGED = frozenset({"csharp", "kotlin", "scala", "php"})
"""Languages whose files see their package's definitions (and imported packages')."""
MORE_LANGUAGES = frozenset({*PACKAGED, "swift", "lua", "elixir"})

def _labels(text: str) -> list[str]:
    inner = text[1:-1]
    return inner.split(",") if inner else []


def fits(call: str, params: str) -> bool:
    """Whether a Swift call's argument labels (`(queue,{)`, `indexer.graph.langs_more.
    swift_call`) fit a function's parameters (`(queue=,closure)`, `swift_labels`): each
    argument in turn takes the next parameter of its label (`_`: one without; an unlabelled
    trailing closure `{`: any), skipping only parameters with a default or variadic ones;
    a variadic parameter takes the unlabelled arguments after its first; every parameter
    left has a default."""
    args, want = _labels(call), [(p.rstrip("=."), p.endswith("="), p.endswith("..."))
                                 for p in _labels(params)]

    def fit(i: int, j: int) -> bool:
        if i == len(args):
            return all(default or variadic for _, default, variadic in want[j:])
        if j == len(want):
            return False
        label, default, variadic = want[j]
        if (default or variadic) and fit(i, j + 1):
            return True
        if args[i] not in (label, "{"):
            return False
        k = i + 1
        while variadic and k < len(args) and args[k] == "_":  # `f(xs: 1, 2, 3)`
            if fit(k, j + 1):
                return True
            k += 1
        return fit(k, j + 1)

    return len(args) <= 24 and fit(0, 0)


class Overloads(FactsBase):
    """Overloads told apart, Kotlin extensions, properties and methods (see the module
    docstring)."""

    call_labels: tuple[str, str] | None = None
    """The name and argument labels of the Swift call being resolved (`Resolver.resolve`
    sets it): a type's overloads in several files are told apart by them (`overload`)."""
    in_value = 0
    """How deep the resolver is in evaluating a receiver chain (`Receivers.expr`): there
    a call of overloads in several files gives what they all return (`split_result`)."""

    def split_member(self, path: str, cls: int, name: str) -> bool:
        """Whether a type's methods named `name` are declared in more than one file (Swift
        overloads in the type's body and in an extension, `validate()` beside
        `validate(_:)`; C# partial classes): which one a call names is not known, so none
        is answered."""
        facts = self.facts(path)
        if facts is None or facts.graph.language not in MORE_LANGUAGES:
            return False
        qual = f"{facts.graph.defs[cls].qualname}.{name}"
        found = 0
        for f in [path, *self.more_places(path, cls)]:
            ff = self.facts(f)
            k = ff.qualnames.get(qual) if ff is not None else None
            if ff is not None and k is not None and ff.graph.defs[k].kind != "property":
                found += 1
        return found > 1

    def overload(self, path: str, cls: int, name: str) -> Target | None:
        """Of a type's methods named `name` declared in more than one file
        (`split_member`), the one whose argument labels fit the Swift call being resolved
        (`call_labels`); None when none or several files' do, or a label is unknown."""
        call = self.call_labels
        facts = self.facts(path)
        if call is None or call[0] != name or facts is None:
            return None
        qual = f"{facts.graph.defs[cls].qualname}.{name}"
        fit: list[Target] = []
        for f in [path, *self.more_places(path, cls)]:
            ff = self.facts(f)
            for k, d in enumerate(ff.graph.defs if ff is not None else ()):
                if ff is None or d.qualname != qual or d.kind == "property":
                    continue
                own = next((b.value for b in ff.binds.get((k, LABELS), ()) if b.value), None)
                if own is None:
                    return None
                if fits(call[1], own):
                    fit.append(Target("def", f, k))
        return fit[0] if len({t.path for t in fit}) == 1 else None

    def split_result(self, path: str, cls: int, name: str) -> Target | None:
        """Of a type's methods named `name` declared in more than one file, the first when
        every one declares one return type (`-> UploadRequest`; of those whose labels fit
        the call's, when they are known): which one a receiver chain calls is not told,
        what it gives is."""
        facts = self.facts(path)
        if facts is None:
            return None
        qual = f"{facts.graph.defs[cls].qualname}.{name}"
        call = self.call_labels[1] if self.call_labels and self.call_labels[0] == name else ""
        found: list[Target] = []
        types: set[str | None] = set()
        for f in [path, *self.more_places(path, cls)]:
            ff = self.facts(f)
            for k, d in enumerate(ff.graph.defs if ff is not None else ()):
                if ff is None or d.qualname != qual or d.kind == "property":
                    continue
                if not self.fitting(ff, k, call):
                    continue
                found.append(Target("def", f, k))
                types.add(next((b.value for b in ff.binds.get((k, "return"), ())
                                if (b.value or "")[:1] == ":"), None))
        return found[0] if found and len(types) == 1 and None not in types else None

    def not_a_function(self, got: Target, site: Site) -> bool:
        """Whether a Kotlin bare name that is not called (nor `::f`) resolved to a
        function: it is never one (a lambda's receiver's property, `f(name = x)`'s label)."""
        facts = self.facts(got.path)
        return facts is not None and facts.graph.language == "kotlin" and (
            site.role == Role.REF and site.receiver is None and site.value != "::") and (
            facts.graph.defs[got.index].kind in ("function", "method"))

    def aliased_value(self, path: str, got: Target, site: Site) -> bool:
        """Whether a bare name of a Swift, Kotlin, Scala or C# file resolved, through the
        value bound to it, to a member variable of another name (`async let first =
        req.serializingData().result`: `first` holds the value, it is not `result`), or
        of its own name bound in a function around it (`let result = x.result`)."""
        facts = self.facts(got.path)
        if facts is None or site.receiver is not None or (
                facts.graph.language not in MORE_LANGUAGES):
            return False
        d = facts.graph.defs[got.index]
        return d.parent >= 0 and d.kind in ("property", "variable", "constant") and (
            d.name != site.name or self._bound_here(path, site))

    def _bound_here(self, path: str, site: Site) -> bool:
        """Whether a function around the site binds its name (`let result = ..`: a
        variable of the function, not the type's property of that name)."""
        facts = self.facts(path)
        s = site.scope
        while facts is not None and s >= 0:
            d = facts.graph.defs[s]
            if d.kind not in CLASS_KINDS and any(
                    b.role == Role.BIND for b in facts.binds.get((s, site.name), ())):
                return True
            s = d.parent
        return False

    def property_or_method(self, got: Target, called: bool) -> Target:
        """Of a class's property and method of one name (Swift, Kotlin, C#, Scala), the
        method when called, else the property (`got` otherwise)."""
        facts = self.facts(got.path)
        if facts is None or facts.graph.language not in MORE_LANGUAGES:
            return got
        defs = facts.graph.defs
        d = defs[got.index]
        if (d.kind == "property") != called:
            return got
        for k in facts.members.get(d.parent, ()):
            if defs[k].name == d.name and (defs[k].kind == "property") != called:
                return Target("def", got.path, k)
        return got

    @staticmethod
    def fitting(facts: FileFacts, index: int, call: str) -> bool:
        """Whether a definition's argument labels fit a Swift call's (`fits`; True when
        either is not known)."""
        own = next((b.value for b in facts.binds.get((index, LABELS), ()) if b.value), None)
        return not call or not own or fits(call, own)

    def extension(self, path: str, holder: Target | None, name: str, scope: int, line: int,
                  depth: int) -> Target | None:
        """A Kotlin extension function called on an instance (`command.context { }` with
        `fun <U : Base<*>> U.context(..): U`, `cmd.test()` with `fun Cmd.test()`): the
        function the name means in the file (imported, of its package), when its receiver
        (its `this` parameter) is the instance's class or one of its bases."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "kotlin" or holder is None or (
                holder.kind != "inst"):
            return None
        got = self.name(path, name, scope, line, depth + 1)
        ff = self.facts(got.path) if got is not None and got.kind == "def" else None
        if got is None or ff is None or ff.graph.defs[got.index].parent != -1:
            return None
        this = next((p for p in ff.params.get(got.index, ()) if p.name == "this"
                     and (p.value or "")[:1] == ":"), None)
        recv = self.value(got.path, str(this.value), got.index, this.line, depth + 1) if (
            this is not None) else None
        return got if recv is not None and recv.kind == "inst" and self._derives(
            holder, recv, depth) else None

    def gives_receiver(self, got: Target) -> bool:
        """Whether a Kotlin extension function returns its receiver's own type (`U.context
        (..): U`): its call gives the instance it was called on."""
        facts = self.facts(got.path)
        if facts is None:
            return False
        this = next((p.value for p in facts.params.get(got.index, ()) if p.name == "this"), "")
        back = next((b.value for b in facts.binds.get((got.index, "return"), ())), None)
        return bool(this) and back == this

    def _derives(self, cls: Target, base: Target, depth: int) -> bool:
        """Whether the class `cls` is `base` or has it among its bases (transitively)."""
        todo, seen = [cls], set[tuple[str, int]]()
        while todo and len(seen) < 64:
            c = todo.pop()
            if (c.path, c.index) == (base.path, base.index):
                return True
            if (c.path, c.index) not in seen:
                seen.add((c.path, c.index))
                todo += self.bases(c.path, c.index, depth + 1)
        return False

    def bases(self, path: str, cls: int, depth: int = 0) -> list[Target]:
        """The classes a class names as bases (`search.graph.receivers.Receivers`)."""
        return []

    def value(self, path: str, value: str, scope: int, line: int, depth: int) -> Target | None:
        """What a binding's value makes a name (`search.graph.resolve.Resolver`)."""
        return None

    def more_places(self, path: str, cls: int) -> list[str]:
        """Other files that may declare the class's members (`MoreLanguages`)."""
        return []

    def name(self, path: str, name: str, scope: int, line: int, depth: int, *,
             value: bool = False) -> Target | None:
        """What a bare name means at a scope (`search.graph.resolve.Resolver` answers)."""
        return None
