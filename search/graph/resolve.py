"""Resolution of an identifier occurrence to the one definition it names.

`Resolver(workspace).resolve(path, site)` answers a `Target` (a definition: path and
index in that file's `defs`) or None. A bare name is looked up in the local scopes of its
enclosing definitions (Python skips class bodies from inside methods, as Python does),
then the module (its definitions, then its imports, followed to the defining module
through re-exports and star imports), then, in Go, the other files of the package. A
`recv.name` resolves its receiver first: `self`/`this`/`cls` is the enclosing class,
`super()` its bases; a module alias gives the module's export; a local variable gives the
class it was constructed from or annotated with (`s = Session()`, `s: Session`), an
attribute assigned in the class or its bases (`self.s = Session()`, `self.s: Session`)
likewise; a class gives its member, searched in the class and then its bases, across
files. Types also come from return annotations (`f() -> "Session"`), `cast`/`as`, a
Python method's parameter in the method it overrides, `this:` parameters, and lists:
`List[T]`, `T[]`, `[new T()]` hold instances (`elems`) whose elements come out of a loop,
`xs[i]` or `xs.pop()`. In JS and Go a name only assigned in a scope (`x = ...`, no
`let`) is the enclosing scope's. Anything else (a parameter without a type, an
unannotated call's result) resolves to None: the caller keeps such sites apart as
by-name candidates.

Invariants: never guesses between two definitions; recursion is bounded (`MAX_DEPTH`),
so cycles of re-exports or bases end; pure over the workspace's graphs (memoised per
resolver).

The per-file facts and one-file lookups are `facts.py`; C/C++ `#include`
resolution is `c_family.py`, Ruby's `require`d constants `ruby.py` (`Resolver` inherits
them).
"""

from __future__ import annotations

import re

from ctxd.indexer.graph import Import, Role, Site
from ctxd.search.graph.c_family import CFamily
from ctxd.search.graph.facts import (
    C_LIKE,
    CLASS_KINDS,
    MAX_DEPTH,
    FileFacts,
    Target,
    classlike,
    contained,
    element,
    parts,
    rust_type,
)
from ctxd.search.graph.modules import JS_LIKE
from ctxd.search.graph.more_langs import MORE_LANGUAGES, MoreLanguages
from ctxd.search.graph.ruby import RubyLookups
from ctxd.search.graph.workspace import Workspace

__all__ = ["CLASS_KINDS", "C_LIKE", "MAX_DEPTH", "Resolver", "Target"]

_VARIABLES = frozenset({"variable", "constant", "property"})  # (C#, Kotlin, Swift, Scala)
CONSTRUCTORS = frozenset({"new", "create", "default", "open", "build", "builder",
                          "with_capacity", "from", "make", "instance", "getInstance", "of"})
"""A class's functions whose call gives an instance of it."""
_TOKEN = re.compile(r"[^.()\[\]]+(?:\(\)|\[\])*|\[\]")
_OWN = frozenset({"this", "self", "cls", "Self"})
"""Receivers that are already the class's own instance (`new this()`, `-> Self`)."""
ELEMENT_CALLBACKS = frozenset({"forEach", "map", "filter", "find", "findLast", "findIndex",
                               "some", "every", "flatMap", "sort"})
"""A list's (or a Map's) methods whose callback's first parameter is an element (value)."""
_NAMESPACES = frozenset({"namespace", "module"})
"""Definitions that only hold others (a TS namespace, a Rust inline `mod`, a Ruby module,
a C++ namespace): `Util.area` is the member of that name."""
_OVERLOADED = frozenset({"java", "cpp"})
"""Languages whose classes overload a method name (the last declaration is not the one)."""
_REDECLARES = frozenset({"python", "ruby", "shell", "php"})
"""Languages where assigning a name in a scope makes it that scope's own (elsewhere
`Site.value` `+...` marks an assignment to a name declared further out)."""


class Resolver(CFamily, MoreLanguages, RubyLookups):
    """Resolves sites of one repository's files (`Workspace`), memoising per file."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._bases: dict[tuple[str, int], list[Target]] = {}

    # ---------------------------------------------------------------- sites

    def resolve(self, path: str, site: Site) -> Target | None:
        """The definition a site names (None: unresolved, or a local variable)."""
        if site.role in (Role.BIND, Role.PARAM):
            return None
        if site.role == Role.IMPORT:  # the name an import statement names (or binds)
            facts = self.facts(path)
            for imp in facts.graph.imports if facts is not None else ():
                if imp.line == site.line and site.name in (imp.name, imp.local):
                    got = self.follow(path, imp, 0)
                    if got is None and facts is not None and (
                            facts.graph.language in MORE_LANGUAGES):
                        got = self.more_name(path, imp.local, -1, 0)  # (`use A\B\C`)
                    return got if got is not None and got.kind == "def" else None
        if site.receiver is not None and (got := self.more_site(path, site)) is not None:
            return got if got.kind == "def" else None  # a Lua table's, an Elixir module's
        if site.receiver is None:
            got = self.name(path, site.name, site.scope, site.line, 0)
        else:
            got = self.member(self._property(self.expr(path, site.receiver, site.scope,
                                                       site.line, 0)), site.name, 0)
            if got is not None and site.role in (Role.REF, Role.ATTR_BIND) and (
                    self._rust_field(got, site)):
                return None
        if got is None and site.role in (Role.CALL, Role.REF):
            got = self.c_global(path, site)
        if got is not None and got.kind == "def":  # a Swift/Kotlin/C# property and method
            return self.property_or_method(got, site.role == Role.CALL)  # of one name
        return None

    def receiver(self, path: str, site: Site) -> Target | None:
        """What the receiver of a `recv.name` site evaluates to (an instance, a class, a
        module), or None."""
        if site.receiver is None:
            return None
        return self._property(self.expr(path, site.receiver, site.scope, site.line, 0))

    # ---------------------------------------------------------------- names

    def name(  # noqa: C901 - Python's scope rules, in their order
        self, path: str, name: str, scope: int, line: int, depth: int, *, value: bool = False
    ) -> Target | None:
        """What a bare name means at `scope` of a file (`value`: for a variable, what it
        holds rather than its definition)."""
        facts = self.facts(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        defs, lang = facts.graph.defs, facts.graph.language
        s = scope
        while True:
            binds = facts.binds.get((s, name))
            if binds and value and (got := self._narrowed(path, binds, line, depth)):
                return got
            k = facts.children.get((s, name))
            if k is not None and lang == "go" and defs[k].kind == "method":
                k = None  # a Go method is only ever named through its receiver
            if k is not None and lang == "rust" and defs[k].kind == "impl":
                k = rust_type(facts, s, name)  # `impl From<X> for Router`: not a definition
            if k is not None:
                if value and defs[k].kind in _VARIABLES and facts.binds.get((s, name)):
                    return self._bound(path, facts.binds[(s, name)], scope, line, depth)
                return Target("def", path, k)
            if s == -1:
                for imp in facts.imports.get(name, ()):
                    got = self.follow(path, imp, depth + 1)
                    if got is not None:
                        return got
                if lang in MORE_LANGUAGES and facts.imports.get(name):  # (`use A\B\C`:
                    return self.more_name(path, name, scope, depth + 1, line)  # no path)
            binds = [b for b in binds or () if not (b.value or "").startswith("~")]
            if binds and lang not in _REDECLARES and all(
                    (b.value or "").startswith("+") for b in binds):
                binds = []  # only assigned here: declared further out
            if binds:
                return self._bound(path, binds, scope, line, depth)
            if s == -1:
                break
            s = defs[s].parent
            if lang == "python":  # a class body's names are not seen from its methods
                while s != -1 and defs[s].kind == "class":
                    s = defs[s].parent
        for imp in facts.stars:
            got = self.export(self.ws.layout.resolve(path, imp, lang), name, depth + 1)
            if got is not None:
                return got
        if lang in ("go", "java"):  # a package is a folder: its files see each other
            for other in self.ws.layout.same_package(path, ".go" if lang == "go" else ".java"):
                of = self.facts(other)
                if of is not None and (k := of.children.get((-1, name))) is not None and (
                        of.graph.defs[k].kind != "method"):
                    return Target("def", other, k)
        if lang == "ruby":  # a constant of a file it requires (`require_relative 'shop'`),
            got = self.ruby_constant(path, name, scope)  # in an enclosing module first
            if got is not None:
                return got
        if lang == "rust" and (lib := self.ws.layout.rust_crate(name)) is not None:
            return Target("module", paths=(lib,))  # `globset::Glob`: a sibling crate
        if lang in MORE_LANGUAGES:  # a package's other files, a Swift module's
            return self.more_name(path, name, scope, depth + 1, line)
        return None

    def _narrowed(self, path: str, binds: list[Site], line: int,
                  depth: int) -> Target | None:
        """The class a test narrowed a name to at `line` (`if isinstance(x, C):` /
        `if (x instanceof C)`, `Site.value` `~END()C`), innermost first."""
        for b in reversed(binds):
            text = b.value or ""
            if text.startswith("~") and b.line <= line:
                end, _, made = text[1:].partition("(")
                if not end.isdigit() or line > int(end) or any(  # (assigned since: over)
                        b.line < o.line <= line and not (o.value or "").startswith("~")
                        for o in binds):
                    continue
                return self.value(path, "(" + made, b.scope, b.line, depth + 1)
        return None

    def _bound(self, path: str, binds: list[Site], scope: int, line: int,
               depth: int) -> Target | None:
        """A name bound in a scope: by an import, or to a value whose class is known."""
        binds = [b for b in binds if not (b.value or "").startswith("~")]  # (narrowings)
        if not binds:
            return None
        before = [b for b in binds if b.line <= line] or binds[:1]
        last = before[-1]
        if last.role == Role.IMPORT:
            facts = self.facts(path)
            for imp in facts.imports.get(last.name, ()) if facts else ():
                got = self.follow(path, imp, depth + 1)
                if got is not None:
                    return got
            return None
        if last.role == Role.PARAM:  # a parameter is its own variable: its type or none
            got = self.value(path, last.value, last.scope, last.line, depth + 1) if (
                last.value) else None  # (an earlier one of the name: a sibling callback's)
            return got if got is not None else self._inherited_param(path, last, depth + 1)
        declared = [b for b in binds if b.value and b.value.startswith(":")
                    and b.role != Role.PARAM]
        for b in declared[:1] or reversed(before):  # a declared type, else the last
            if b.value:  # binding that says what it is and resolves
                got = self.value(path, b.value, b.scope, b.line, depth + 1)
                if got is not None:
                    return got
        return None

    def _inherited_param(self, path: str, param: Site, depth: int) -> Target | None:
        """A Python method's unannotated parameter, typed as the overridden method's
        parameter in the same place (`def invoke(self, ctx)` over `invoke(self, ctx:
        Context)`), as pyright infers it."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "python" or param.scope < 0 or (
                depth > MAX_DEPTH):
            return None
        d = facts.graph.defs[param.scope]
        if d.kind != "method" or d.parent < 0:
            return None
        own = facts.params.get(param.scope, [])
        place = next((k for k, s in enumerate(own) if s is param), -1)
        for base in self.bases(path, d.parent, depth + 1):
            over = self.class_member(base.path, base.index, d.name, depth + 1)
            bf = self.facts(over.path) if over is not None else None
            if over is None or bf is None:
                continue
            theirs = bf.params.get(over.index, [])
            typed = theirs[place].value if 0 <= place < len(theirs) and (
                theirs[place].name == param.name) else None
            if typed:
                return self.value(over.path, typed, over.index, theirs[place].line, depth + 1)
            return None
        return None

    def value(self, path: str, value: str, scope: int, line: int, depth: int) -> Target | None:
        """What a binding's `value` (`()X`, `:X`, `=X`, `@CALLEE#ARG#PARAM`) makes the
        bound name."""
        if value.startswith("@"):
            return self._callback_param(path, value[1:], scope, line, depth + 1)
        value = value.removeprefix("+")
        if value.startswith("=>") or value == "{}":
            return None
        if value.startswith("{"):  # an object's fields, read where it was written
            return Target("shape", path, scope, (value, str(line)))
        if value.startswith("|"):  # `c ? a() : b()`: what both give, when they agree
            either = {self.value(path, v, scope, line, depth + 1) for v in value[1:].split("|")}
            one = either.pop() if len(either) == 1 else None
            return one if one is not None and one.kind != "def" else None
        if value.startswith("["):  # `[new X()]`
            got = self.value(path, value[1:], scope, line, depth + 1)
            return Target("elems", got.path, got.index) if got and got.kind == "inst" else None
        kind, text = value[:1], value.lstrip("():=*")
        holder = text[-2:] if kind == ":" and text[-2:] in ("[]", "{}") else ""
        text = text.removesuffix(holder) if holder else text
        if not text:
            return None
        got = self.expr(path, text, scope, line, depth, called=kind == "(") or self._c_path(
            path, text, scope, depth)  # (C++ `util.Box`, `util.Box.make`: through includes)
        if got is None and kind == ":" and "." in text:  # `{ a }: T`: the type of `T.a`
            head, _, field = text.rpartition(".")
            inst = self._instance(self.expr(path, head, scope, line, depth) or Target(""),
                                  depth)
            got = self.member(inst, field, depth + 1) if inst is not None else None
            return got if got is not None and got.kind != "def" else None
        if got is None:
            return None
        if kind == "*":  # `for x in xs`: an element of the list
            return Target("inst", got.path, got.index) if got.kind == "elems" else None
        if kind in ("(", ":") and not (got.kind == "inst" and text in _OWN):
            got = self._instance(got, depth)  # (`new this()` is the class's own instance)
            if holder and got is not None:
                return Target("elems" if holder == "[]" else "map", got.path, got.index)
        return got

    def _callback_param(self, path: str, hint: str, scope: int, line: int,
                        depth: int) -> Target | None:
        """A callback's untyped parameter, typed where the callee declares the callback
        (`operate(init: (src: Observable<T>, sub: Subscriber<R>) => void)`)."""
        rest, _, param = hint.rpartition("#")  # (`this.#subs.forEach#0#1`: the last two)
        text, _, arg = rest.rpartition("#")
        if not (arg.isdigit() and param.isdigit()) or depth > MAX_DEPTH:
            return None
        recv, _, method = text.rpartition(".")
        if method in ELEMENT_CALLBACKS and arg == param == "0" and recv:  # `xs.forEach((x)`
            held = self.expr(path, recv, scope, line, depth + 1)
            return Target("inst", held.path, held.index) if held is not None and (
                held.kind in ("elems", "map")) else None
        made = text.startswith("new ")
        callee = self.expr(path, text.removeprefix("new "), scope, line, depth + 1)
        if callee is None or callee.kind == "module":
            return None
        if made or callee.kind == "inst":
            ctor = self.class_member(callee.path, callee.index, "constructor", depth + 1)
            if ctor is None:
                return None
            callee = ctor
        facts = self.facts(callee.path)
        if facts is None:
            return None
        params = [s for s in facts.params.get(callee.index, ())
                  if s.name not in ("this", "self")]
        if int(arg) >= len(params):
            return None
        typed = params[int(arg)].value or ""
        types = typed[2:].split(",") if typed.startswith("=>") else []
        if int(param) >= len(types) or not types[int(param)]:
            return None
        return self.value(callee.path, ":" + types[int(param)], callee.index,
                          params[int(arg)].line, depth + 1)

    def _instance(self, got: Target, depth: int = 0) -> Target | None:
        """What calling `got` gives, where known: a class makes an instance; so does a
        class's own constructor function (`Client::new()`, `Cart.create()`)."""
        if got.kind == "def":
            facts = self.facts(got.path)
            if facts is None:
                return None
            defs = facts.graph.defs
            d = defs[got.index]
            if classlike(facts, d.kind):
                return Target("inst", got.path, got.index)
            if d.kind == "constructor" and d.parent >= 0 and defs[d.parent].name == d.name:
                return Target("inst", got.path, d.parent)  # Java/C++ `new Builder()`
            if d.qualname.endswith(f"{d.name}.{d.name}") and (  # C++ `Box::Box(..) {..}`
                    cls := self.c_type(got.path, d.qualname.rpartition(".")[0])) is not None:
                return Target("inst", cls.path, cls.index)
            if facts.graph.language in _OVERLOADED and not self._one_return(facts, got.index):
                return None  # overloads that return different types: which one is unknown
            returns = facts.binds.get((got.index, "return"), [])
            declared = [r for r in returns if (r.value or "")[:1] == ":"]
            back = self._returned(got.path, declared, depth)  # a written return type first
            if back is not None:  # (`build()` -> `TypeSpec`, not the name rule's Builder)
                return back
            if d.name in CONSTRUCTORS and d.parent >= 0 and (
                    defs[d.parent].kind in CLASS_KINDS):
                return Target("inst", got.path, d.parent)
            return self._returned(got.path, [r for r in returns if r not in declared], depth)
        return None

    def _returned(self, path: str, returns: list[Site], depth: int) -> Target | None:
        """The first of a function's `return` bindings that gives an instance (or a
        list of them)."""
        for ret in returns:
            if ret.value and depth < MAX_DEPTH:
                back = self.value(path, ret.value, ret.scope, ret.line, depth + 1)
                if back is not None and back.kind in ("inst", "elems"):
                    return back
        return None

    def _c_path(self, path: str, text: str, scope: int, depth: int) -> Target | None:
        """A C++ name written with its class (`util.Box`, `util.Box.make`): the longest
        head that is a class the file's `#include`s reach, then its members."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "cpp" or depth > MAX_DEPTH or (
                not text[:1].isalpha()):
            return None
        parts = text.split(".")
        for n in range(len(parts), 0, -1):
            got = self.c_type(path, ".".join(parts[:n]), scope)
            if got is not None:
                for name in parts[n:]:
                    got = self.member(got, name, depth + 1) if got is not None else None
                return got
        return None

    @staticmethod
    def _one_return(facts: FileFacts, index: int) -> bool:
        """Whether the overloads of a Java/C++ method (its class's methods of its name)
        all declare one return type (a method without overloads: True)."""
        defs = facts.graph.defs
        d = defs[index]
        same = [k for k in facts.members.get(d.parent, ()) if defs[k].name == d.name]
        if len(same) < 2:
            return True
        written = {next((r.value for r in facts.binds.get((k, "return"), ())
                         if (r.value or "")[:1] == ":"), None) for k in same}
        return len(written) == 1 and None not in written

    # ---------------------------------------------------------------- imports

    def follow(self, path: str, imp: Import, depth: int) -> Target | None:
        """What an import binds: the module, or the name it imports from it."""
        facts = self.facts(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        lang = facts.graph.language
        layout = self.ws.layout
        if imp.name is None or (imp.name == "*" and imp.alias):
            if lang == "python" and not imp.alias and "." in imp.module:
                files = layout.python_module(path, imp.module.split(".")[0], 0)
            else:
                files = layout.resolve(path, imp, lang)
            return Target("module", paths=tuple(files)) if files else None
        files = layout.resolve(path, imp, lang)
        if lang == "rust" and imp.module.partition("::")[0] == "super" and any(
                d.kind == "module" and d.line < imp.line <= d.end_line
                for d in facts.graph.defs):  # `mod tests { use super::f; }`: this file's
            files = layout.rust_module(path, ["self", *imp.module.split("::")[1:]])
        if imp.name == "default" and lang in JS_LIKE:
            return self._default_export(files, imp.alias or "", depth)
        if lang == "rust" and not files:  # `use crate::geo::area` with `pub mod geo {..}`
            return self._rust_inline(path, imp)
        got = self.export(files, imp.name, depth + 1)
        if got is None and lang == "python":
            dotted = f"{imp.module}.{imp.name}" if imp.module else imp.name
            sub = layout.python_module(path, dotted, imp.level)
            if sub:
                return Target("module", paths=tuple(sub))
        return got

    def _rust_inline(self, path: str, imp: Import) -> Target | None:
        """A name a Rust `use` takes from a module written inline in its parent's file
        (`use crate::geo::area;` / `use shapes::geo::area;` with `pub mod geo { .. }` in
        `lib.rs`): the parent module's file, its top-level `mod`, the name in it."""
        head, _, last = imp.module.rpartition("::")
        if not head or not imp.name:
            return None
        for f in self.ws.layout.resolve(path, imp._replace(module=head), "rust"):
            facts = self.facts(f)
            k = facts.children.get((-1, last)) if facts is not None else None
            if facts is not None and k is not None and facts.graph.defs[k].kind == "module" and (
                    (got := facts.children.get((k, imp.name))) is not None):
                return Target("def", f, got)
        return None

    def _default_export(self, files: list[str], alias: str, depth: int) -> Target | None:
        """What a default import binds: the module's `export default` (an object of its
        names reads as the module), else its definition named like the import, else its
        one top-level definition."""
        for f in files:
            facts = self.facts(f)
            if facts is None:
                continue
            for b in facts.binds.get((-1, "default"), ()):
                if b.value == "{}":
                    return Target("module", paths=(f,))
                if b.value and b.value.startswith("="):
                    return self.name(f, b.value[1:], -1, b.line, depth + 1)
            top = [k for k, d in enumerate(facts.graph.defs) if d.parent == -1]
            named = [k for k in top if facts.graph.defs[k].name == alias]
            if named:
                return Target("def", f, named[0])
            if len(top) == 1:
                return Target("def", f, top[0])
        # `export default { a, b }`: the default import reads as the module (`utils.a`)
        return Target("module", paths=tuple(files)) if files else None

    def export(self, files: list[str] | tuple[str, ...], name: str,
               depth: int) -> Target | None:
        """The definition a module (its files) exports under `name` (or the instance a
        module-level variable without a definition holds)."""
        if depth > MAX_DEPTH:
            return None
        for f in files:
            facts = self.facts(f)
            if facts is None:
                continue
            k = facts.children.get((-1, name))
            if k is not None:
                return Target("def", f, k)
            for imp in facts.imports.get(name, ()):
                got = self.follow(f, imp, depth + 1)
                if got is not None:
                    return got
            got = self._module_value(f, facts, name, depth + 1)
            if got is not None:
                return got
            for imp in facts.stars:
                got = self.export(self.ws.layout.resolve(f, imp, facts.graph.language), name,
                                  depth + 1)
                if got is not None:
                    return got
            if f.endswith(("/__init__.py", "__init__.py")):
                sub = self.ws.layout.python_module(f, name, 1)
                if sub:
                    return Target("module", paths=tuple(sub))
        return None

    def _module_value(self, path: str, facts: FileFacts, name: str,
                      depth: int) -> Target | None:
        """`export const client = new Client()` (no definition): the instance it holds."""
        binds = [b for b in facts.binds.get((-1, name), ()) if b.role == Role.BIND]
        got = self._bound(path, binds, -1, binds[-1].line, depth + 1) if binds else None
        return got if got is not None and got.kind != "def" else None

    # ---------------------------------------------------------------- receivers

    def expr(self, path: str, text: str, scope: int, line: int, depth: int,
             called: bool = False) -> Target | None:
        """What a receiver chain (`self.s`, `mod.Cls()`, `super()`, `xs[].s`) evaluates to
        (`called`: the chain's last name is called, as in a value `()Client.new`)."""
        if text == "?" or depth > MAX_DEPTH:
            return None
        tokens = _TOKEN.findall(text)
        if not tokens:
            return None
        name, suffix = parts(tokens[0])
        got = self._head(path, name, suffix[:2] == "()", scope, line, depth)
        got = self._suffix(got, suffix[2:] if name == "super" else suffix, depth)
        for n, tok in enumerate(tokens[1:], 2):
            got = self._property(got, depth)
            if got is None:
                return None
            name, suffix = parts(tok)
            if name == "prototype" and got.kind == "def":  # `Cls.prototype.m`: an instance's
                got = self._instance(got, depth)
            elif got.kind in ("elems", "map") and suffix[:2] == "()":  # `xs.shift()`,
                got = contained(got, name)  # `m.get(k)`, `m.values()`: what they hold
                suffix = suffix[2:]
            elif got.kind in ("elems", "map"):  # a container's other members: unknown
                got = None
            elif name:
                got = self._field(got, self.member(got, name, depth + 1), name,
                                  suffix or ("(" if called and n == len(tokens) else ""),
                                  depth)
            got = self._suffix(got, suffix, depth)
        return got

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
        if facts is None or depth > MAX_DEPTH or self.split_member(path, cls, name):
            return None  # (Swift overloads in a type's body and its extensions: which one?)
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
