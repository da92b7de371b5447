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

The per-file facts and one-file lookups are `facts.py`; receiver chains and class
members `receivers.py`; C/C++ `#include` resolution is `c_family.py`, Ruby's `require`d
constants `ruby.py` (`Resolver` inherits them).
"""

from __future__ import annotations

from ctxd.indexer.graph import Import, Role, Site
from ctxd.search.graph.facts import (
    C_LIKE,
    CLASS_KINDS,
    MAX_DEPTH,
    FileFacts,
    Target,
    classlike,
    rust_type,
)
from ctxd.search.graph.modules import JS_LIKE
from ctxd.search.graph.more_langs import MORE_LANGUAGES
from ctxd.search.graph.receivers import _VARIABLES, Receivers
from ctxd.search.graph.workspace import Workspace

__all__ = ["CLASS_KINDS", "C_LIKE", "MAX_DEPTH", "Resolver", "Target"]

CONSTRUCTORS = frozenset({"new", "create", "default", "open", "build", "builder",
                          "with_capacity", "from", "make", "instance", "getInstance", "of"})
"""A class's functions whose call gives an instance of it."""
_OWN = frozenset({"this", "self", "cls", "Self"})
"""Receivers that are already the class's own instance (`new this()`, `-> Self`)."""
ELEMENT_CALLBACKS = frozenset({"forEach", "map", "filter", "find", "findLast", "findIndex",
                               "some", "every", "flatMap", "sort"})
"""A list's (or a Map's) methods whose callback's first parameter is an element (value)."""
_OVERLOADED = frozenset({"java", "cpp", "swift"})
"""Languages whose classes overload a method name (the last declaration is not the one)."""
_REDECLARES = frozenset({"python", "ruby", "shell", "php"})
"""Languages where assigning a name in a scope makes it that scope's own (elsewhere
`Site.value` `+...` marks an assignment to a name declared further out)."""


class Resolver(Receivers):
    """Resolves sites of one repository's files (`Workspace`), memoising per file."""

    def __init__(self, workspace: Workspace) -> None:
        super().__init__(workspace)
        self._bases: dict[tuple[str, int], list[Target]] = {}

    # ---------------------------------------------------------------- sites

    def resolve(self, path: str, site: Site) -> Target | None:
        """The definition a site names (None: unresolved, or a local variable)."""
        labelled = site.role == Role.CALL and (site.value or "")[:1] == "("  # (Swift)
        self.call_labels = (site.name, str(site.value)) if labelled else None
        try:
            return self._resolve(path, site)
        finally:
            self.call_labels = None

    def _resolve(self, path: str, site: Site) -> Target | None:
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
            held = self._property(self.expr(path, site.receiver, site.scope, site.line, 0))
            got = self.member(held, site.name, 0) or self.extension(  # (Kotlin's `fun
                path, held, site.name, site.scope, site.line, 0)  # Cmd.f()` on a Cmd)
            if got is not None and site.role in (Role.REF, Role.ATTR_BIND) and (
                    self._rust_field(got, site)):
                return None
        if got is None and site.role in (Role.CALL, Role.REF):
            got = self.c_global(path, site)
        if got is not None and got.kind == "def" and not self.not_a_function(got, site) and (
                not self.aliased_value(path, got, site)):
            return self.property_or_method(got, site.role == Role.CALL)  # (Swift/Kotlin/C#:
        return None  # a property and a method of one name)

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
            if k is not None and lang == "swift" and defs[k].kind == "extension" and (
                    got := self._one(self._swift_top(name, path))) is not None:
                return got  # (`extension T {}` in the file: the type is T's declaration)
            if k is not None and lang == "swift" and s >= 0 and defs[s].kind in CLASS_KINDS \
                    and self.split_member(path, s, name):  # (overloads in several files:
                return self.class_member(path, s, name, depth + 1)  # the labels choose)
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
            if facts.graph.language in _OVERLOADED and not self._one_return(got.path, facts,
                                                                            got.index):
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

    def _one_return(self, path: str, facts: FileFacts, index: int) -> bool:
        """Whether the overloads of a Java/C++/Swift method (the file's definitions of its
        qualified name: a Swift type's extensions, a C++ class's methods defined out of
        line) all declare one return type (a method without overloads: True; memoised)."""
        defs = facts.graph.defs
        memo: dict[tuple[str, str, str], bool] = self.ws.memo.setdefault("one_return", {})
        call = self.call_labels[1] if self.call_labels and (  # (Swift: the overloads
            self.call_labels[0] == defs[index].name) else ""  # the call's labels fit)
        key = (path, defs[index].qualname, call)
        if key not in memo:
            same = [k for k, x in enumerate(defs) if x.qualname == key[1] and x.kind != (
                "property") and self.fitting(facts, k, call)]
            written = {next((r.value for r in facts.binds.get((k, "return"), ())
                             if (r.value or "")[:1] == ":"), None) for k in same}
            memo[key] = len(same) < 2 or (len(written) == 1 and None not in written)
        return memo[key]

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
