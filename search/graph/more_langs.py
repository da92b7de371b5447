"""Resolution for C#, PHP, Kotlin, Swift, Scala, Lua and Elixir: what their files see of
each other without naming a file.

- C#, Kotlin, Scala, PHP: a package (namespace) spans files and folders. A bare name no
  scope of its file defines is a top-level definition of the file's own package (C#:
  also the namespaces enclosing it), of a package it imports whole (`using A.B;`,
  `import a.b.*`), or the class it imports by name (`import a.b.C`, `use A\\B\\C`): the
  files of a package are those whose package record (`indexer.graph.imports_more`) names
  it (the files defining the name, from the symbols table, that declare the package).
- Swift: a module's files see each other's top-level definitions; a type's members may be
  declared in extensions in other files (`extension Session { func f() }`), as C#'s
  partial classes and Kotlin's extension functions (`fun Session.f()`) are.
- Lua: `X.f()` / `X:f()` with `X` a table of the file (`local X = {}`) is the file's
  `function X.f` (`X:f`); `self` in `function X:m()` is `X`; `require("a.b")` is the file
  `a/b.lua` (under `lua/` too, or `a/b/init.lua`), whose functions `M.f` it exports.
- Elixir: a module is named in full anywhere (`Plug.Conn.f()`), or by the last part an
  `alias` binds (`Conn.f()`), `__MODULE__` being the enclosing one; `import A` makes A's
  functions bare names.

`MoreLanguages` is a mixin of `search.graph.resolve.Resolver`. Invariants: never guesses
between two definitions of different qualified names (several: None); reads only; memoised
per workspace (`ws.memo`).
"""

from __future__ import annotations

import posixpath
import re

from ctxd.indexer.graph import Import, Site
from ctxd.indexer.graph.imports_more import GLOBAL_LEVEL, PACKAGE_LEVEL
from ctxd.indexer.graph.model import module_tail
from ctxd.search.graph.facts import CLASS_KINDS, FileFacts, Target
from ctxd.search.graph.modules import shared_folders
from ctxd.search.graph.overloads import MORE_LANGUAGES, PACKAGED, Overloads

__all__ = ["MORE_LANGUAGES", "PACKAGED", "MoreLanguages", "package_keys"]

MAX_ALL_FILES = 3000
"""The most Scala, Kotlin, C# or PHP files a query reads for a class named in full."""
_ALIAS = re.compile(r"[A-Z]\w*(?:\.[A-Z]\w*)*")
"""An Elixir module name (`Plug.Conn`)."""
_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "module",
                         "function", "constant", "variable", "method"})
"""Top-level definitions a package shows to its other files (a top-level `method`: a
Kotlin extension function, `fun Base.name()`)."""


def package_keys(imports: list[Import], language: str) -> set[str]:
    """The `graph_links` keys under which the files that may use a definition of a file
    with these imports are found: its package's last part (the package's other files and
    its importers are keyed by it)."""
    if language not in MORE_LANGUAGES:
        return set()
    return {module_tail(i.module) for i in imports if i.level == PACKAGE_LEVEL}


def _dotted(namespace: str) -> str:
    """A PHP namespace path as a package (`\\A\\B` -> `A.B`)."""
    return ".".join(p for p in namespace.split("\\") if p)


def _shared(a: str, b: str) -> int:
    """How many leading folders two paths share (the file itself counts as one more)."""
    return 1 << 16 if a == b else shared_folders(a, b)


class MoreLanguages(Overloads):
    """The seven languages' lookups of a resolver (over `FactsBase`'s per-file facts;
    overloads, Kotlin extensions: `Overloads`)."""

    def defining(self, name: str) -> list[str]:
        """The files with a definition named `name` (`Workspace.defining`, memoised: a
        query asks it for many sites)."""
        memo: dict[str, list[str]] = self.ws.memo.setdefault("defining", {})
        got = memo.get(name)
        if got is None:
            got = memo[name] = self.ws.defining(name)
        return got

    # ---------------------------------------------------------------- packages

    def package_of(self, path: str) -> str | None:
        """The package (namespace) a file declares (its first), None: none."""
        facts = self.facts(path)
        if facts is None:
            return None
        return next((i.module for i in facts.graph.imports if i.level == PACKAGE_LEVEL), None)

    def _visible_packages(self, path: str, name: str) -> list[tuple[str, str | None]]:
        """(package, the one name it is searched for or None: any) that a bare `name` of
        the file may come from, nearest first."""
        facts = self.facts(path)
        if facts is None:
            return []
        lang = facts.graph.language
        out: list[tuple[str, str | None]] = [  # `import a.b.C` / `use A\B\C as D`
            (imp.module, imp.name) for imp in facts.imports.get(name, ())
            if imp.level == 0 and imp.name]
        own = [i.module for i in facts.graph.imports if i.level == PACKAGE_LEVEL]
        for pkg in own:
            out.append((pkg, None))
            if lang == "csharp":  # code in `A.B.C` sees `A.B` and `A`
                parts = pkg.split(".")
                out += [(".".join(parts[:k]), None) for k in range(len(parts) - 1, 0, -1)]
        out += [(i.module, None) for i in facts.stars]
        if lang == "csharp":  # `using A.B;` inside `namespace X.Y` may name `X.Y.A.B`
            out += [(f"{pkg}.{i.module}", None) for pkg in own for i in facts.stars]
            out += [(m, None) for m in self.global_usings(path)]
        return out

    def _global_files(self) -> dict[str, list[str]]:
        """C# files with `global using`s: their folder -> the namespaces they import
        (every .cs file peeked at once per workspace)."""
        memo: dict[str, dict[str, list[str]]] = self.ws.memo.setdefault("global_usings", {})
        if "" not in memo:
            files = [p for p in self.ws.ids if p.endswith(".cs")]
            self.ws.preload(files)
            found: dict[str, list[str]] = {}
            for f in files:
                got = self.ws.peek(f)
                mods = [i.module for i in got.imports if i.level == GLOBAL_LEVEL] if got else []
                if mods:
                    found.setdefault(posixpath.dirname(f), []).extend(mods)
            memo[""] = found
        return memo[""]

    def global_usings(self, path: str) -> list[str]:
        """The namespaces the `global using`s of `path`'s project import (those of the
        files in a folder above it)."""
        out: list[str] = []
        for folder, mods in self._global_files().items():
            if not folder or path.startswith(folder + "/"):
                out += mods
        return out

    def more_files(self, path: str) -> list[str]:
        """Files that may use a definition of `path` without an import naming it: a Swift
        module's other files, every Elixir file (a module is named in full anywhere), the
        Scala, Kotlin, C# and PHP files of a repository of at most `MAX_ALL_FILES` of them
        (a class named in full, `new scopt.OptionParser`, `\\GuzzleHttp\\Client`; C#
        code sees its enclosing namespaces); in a larger one, C# files under a project
        whose `global using`s import the file's namespace ([] for other languages)."""
        for exts in ((".swift",), (".ex", ".exs"), (".scala",), (".kt", ".kts"), (".cs",),
                     (".php",)):
            if path.endswith(exts):
                files = [p for p in self.ws.ids if p.endswith(exts)]
                return files if exts[0] in (".swift", ".ex") or len(
                    files) <= MAX_ALL_FILES else []
        if not path.endswith(".cs"):  # (a larger C# repository: its global usings)
            return []
        own = self.package_of(path)
        folders = [d for d, mods in self._global_files().items() if own in mods]
        return [p for p in self.ws.ids if p.endswith(".cs") and any(
            not d or p.startswith(d + "/") for d in folders)]

    def class_member(self, path: str, cls: int, name: str, depth: int) -> Target | None:
        """A class's member (`search.graph.resolve.Resolver` answers)."""
        return None

    def name(self, path: str, name: str, scope: int, line: int, depth: int, *,
             value: bool = False) -> Target | None:
        """What a bare name means at a scope (`search.graph.resolve.Resolver` answers)."""
        return None

    def more_name(self, path: str, name: str, scope: int, depth: int,
                  line: int = 0) -> Target | None:
        """A bare name that no scope or import of its file resolved (see the module
        docstring), or None: in a method, a member of its class declared elsewhere (a
        base's, an extension's, another part's); else a package's or module's."""
        facts = self.facts(path)
        if facts is None:
            return None
        lang = facts.graph.language
        for base in [*self._anonymous_bases(path, scope, line, depth),  # `new A { f() }`
                     *self._extended(path, scope, depth)]:  # `fun A.g() { f() }`
            if (got := self.class_member(base.path, base.index, name, depth)) is not None:
                return got
        if lang not in ("lua", "elixir") and (cls := self.enclosing_class(path, scope)) is not (
                None) and (got := self.class_member(path, cls, name, depth)) is not None:
            return got
        if lang in PACKAGED:  # (Scala: a value's members imported, first)
            return self._value_import(path, name, line, depth) or self._packaged(path, name)
        if lang == "swift":
            return self._one(self._swift_top(name, path))
        if lang == "elixir":
            for imp in facts.stars:  # `import Plug.Conn`: its functions by their names
                module = self.elixir_module(path, imp.module, -1)
                if module is not None and (got := self.member_of(module, name)) is not None:
                    return got
        return None

    def _packaged(self, path: str, name: str) -> Target | None:
        """A bare name of a C#, Kotlin, Scala or PHP file: a top-level definition of a
        package it sees (`_visible_packages`), the nearest first."""
        facts = self.facts(path)
        if facts is None:
            return None
        for pkg, wanted in self._visible_packages(path, name):
            got = self._in_package(pkg, wanted or name, facts.graph.language, path)
            if got is not None:
                return got
        return None

    def _value_import(self, path: str, name: str, line: int, depth: int) -> Target | None:
        """A Scala name a value's members import brings (`import builder._` after `val
        builder = OParser.builder[C]`, `import Obj._`): the member of the value's class
        (or the object's), for an import above `line` in a block that holds it (every
        definition around the import holds `line` too), the nearest first."""
        facts = self.facts(path)
        if facts is None or not line or facts.graph.language != "scala":
            return None
        defs = facts.graph.defs
        for imp in reversed(facts.stars):
            if imp.line > line or any(d.line <= imp.line <= d.end_line and not (
                    d.line <= line <= d.end_line) for d in defs):
                continue
            inner = [k for k, d in enumerate(defs) if d.line <= imp.line <= d.end_line]
            held = self._property(self.expr(path, imp.module, inner[-1] if inner else -1,
                                            imp.line, depth + 1))
            if held is not None and held.kind in ("inst", "def") and (
                    (hf := self.facts(held.path)) is not None) and (
                    hf.graph.defs[held.index].kind in CLASS_KINDS):
                got = self.class_member(held.path, held.index, name, depth + 1)
                if got is not None:
                    return got
        return None

    def _anonymous_bases(self, path: str, scope: int, line: int, depth: int) -> list[Target]:
        """The bases of the anonymous classes (Scala `new A { }`, Kotlin `object : A { }`)
        whose body holds `line` in `scope` or a scope around it (`this` parameters valued
        `~END()A`, `indexer.graph.langs_more.anonymous_this`)."""
        facts = self.facts(path)
        if facts is None or not line or facts.graph.language not in ("scala", "kotlin"):
            return []
        out: list[Target] = []
        s = scope
        while True:
            for p in facts.params.get(s, ()):
                end, _, cls = (p.value or "")[1:].partition("()")  # (`:U`: an extension's)
                if p.name == "this" and end.isdigit() and p.line <= line <= int(end) and cls and (
                        got := self._type_named(path, cls, p.scope, p.line, depth)) is not None:
                    out.append(got)
            if s == -1:
                return out
            s = facts.graph.defs[s].parent

    def _extended(self, path: str, scope: int, depth: int) -> list[Target]:
        """The class a Kotlin extension function holding `scope` extends (`fun
        CliktCommand.test()`: a top-level function named `CliktCommand.test`)."""
        facts = self.facts(path)
        if facts is None or facts.graph.language != "kotlin":
            return []
        s = scope
        while s >= 0 and facts.graph.defs[s].parent >= 0:
            s = facts.graph.defs[s].parent
        d = facts.graph.defs[s] if s >= 0 else None
        owner = d.qualname.rpartition(".")[0] if d is not None and d.kind == "function" else ""
        got = self._type_named(path, owner, -1, d.line, depth) if owner and d else None
        return [got] if got is not None else []

    def _type_named(self, path: str, text: str, scope: int, line: int,
                    depth: int) -> Target | None:
        """The class a type's text names: a name in scope, or `pkg.Class` in full."""
        facts = self.facts(path)
        pkg, _, last = text.rpartition(".")
        if pkg and facts is not None:
            return self._in_package(pkg, last, facts.graph.language, path)
        got = self.name(path, text, scope, line, depth + 1)
        return got if got is not None and got.kind == "def" else None

    def _in_package(self, package: str, name: str, language: str,
                    path: str) -> Target | None:
        """The top-level definition `name` of the files of `language` that declare
        `package` (the files come from the symbols table: those defining `name`)."""
        ext = posixpath.splitext(path)[1]
        found = []
        for f in self.defining(name):
            ff = self.facts(f) if f.endswith(ext) else None
            if ff is not None and ff.graph.language == language and (
                    k := ff.children.get((-1, name))) is not None and (
                    ff.graph.defs[k].kind in _TYPE_KINDS) and self.package_of(f) == package:
                found.append(Target("def", f, k))
        return self._one(found, prefer=path)

    def _one(self, found: list[Target], prefer: str = "") -> Target | None:
        """The one definition of `found` (several of one qualified name, a partial class
        in several files: the one nearest `prefer`'s folder; of different names: None)."""
        quals = {self._qual(t) for t in found}
        if len(quals) != 1:
            return None
        return min(found, key=lambda t: (-_shared(t.path, prefer), t.path, t.index))

    def _qual(self, t: Target) -> str:
        facts = self.facts(t.path)
        return facts.graph.defs[t.index].qualname if facts is not None else ""

    def _swift_top(self, name: str, path: str) -> list[Target]:
        out = []
        for f in self.defining(name):
            ff = self.facts(f) if f.endswith(".swift") else None
            out += [Target("def", f, k) for k in (ff.members.get(-1, ()) if ff else ())
                    if ff is not None and ff.graph.defs[k].name == name
                    and ff.graph.defs[k].kind != "extension"]
        return out

    # ---------------------------------------------------------------- members

    def more_places(self, path: str, cls: int) -> list[str]:
        """Other files that may declare members of the class `cls` of `path`: a Swift
        extension, a C# partial class, a Kotlin extension function (files with a
        definition of the class's name)."""
        facts = self.facts(path)
        if facts is None or facts.graph.language not in MORE_LANGUAGES:
            return []
        ext = posixpath.splitext(path)[1]
        name = facts.graph.defs[cls].name
        files = [f for f in self.defining(name) if f != path and f.endswith(ext)]
        if facts.graph.language in PACKAGED:  # (a partial class is in one namespace)
            own = self.package_of(path)
            files = [f for f in files if self.package_of(f) == own]
        return files

    def expr(self, path: str, text: str, scope: int, line: int, depth: int,
             called: bool = False) -> Target | None:
        """What a receiver chain evaluates to (`search.graph.receivers.Receivers`)."""
        return None

    def _property(self, got: Target | None, depth: int = 0) -> Target | None:
        """A definition read as a value (`search.graph.receivers.Receivers`)."""
        return got

    def member_of(self, holder: Target, name: str) -> Target | None:
        """A definition's member by name (a module's function, a class's method)."""
        facts = self.facts(holder.path)
        if facts is None:
            return None
        k = facts.children.get((holder.index, name))
        return Target("def", holder.path, k) if k is not None else None

    def more_site(self, path: str, site: Site) -> Target | None:
        """A Lua or Elixir `recv.name` site whose receiver is a table or a module (None:
        resolve it as any other)."""
        facts = self.facts(path)
        if facts is None or site.receiver is None:
            return None
        lang = facts.graph.language
        if lang == "lua":
            return self._lua_member(path, site)
        if lang == "php" and "\\" in site.receiver:  # `\A\B\C::f()`, `new \A\B\C`
            return self._in_package(_dotted(site.receiver), site.name, lang, path)
        if lang == "elixir":
            module = self.elixir_module(path, site.receiver, site.scope)
            return self.member_of(module, site.name) if module is not None else None
        return None

    def _lua_member(self, path: str, site: Site) -> Target | None:
        facts = self.facts(path)
        if facts is None:
            return None
        table = str(site.receiver)
        if table == "self":  # `function X:m()`: `self` is `X`
            s = site.scope
            while s >= 0 and facts.graph.defs[s].kind != "method":
                s = facts.graph.defs[s].parent
            if s < 0:
                return None
            table = facts.graph.defs[s].qualname.rpartition(".")[0]
        k = facts.qualnames.get(f"{table}.{site.name}")
        if k is not None:
            return Target("def", path, k)
        head = table.partition(".")[0]
        for imp in facts.imports.get(head, ()):  # `local util = require("a.util")`
            for f in self.lua_module(path, imp.module):
                got = self._lua_export(f, table.partition(".")[2], site.name)
                if got is not None:
                    return got
        return None

    def _lua_export(self, path: str, inner: str, name: str, depth: int = 0) -> Target | None:
        """`M.name` of a Lua module file (the table it returns: any table of the file
        holding `name` when one does; else, a module it requires without binding a name,
        as `setmetatable({}, { __index = require("a.core") })` inherits `a.core`'s)."""
        facts = self.facts(path)
        if facts is None or depth > 4:
            return None
        found = [k for k, d in enumerate(facts.graph.defs) if d.name == name and d.parent == -1
                 and (not inner or d.qualname.endswith(f"{inner}.{name}"))]
        if len(found) > 1:  # several tables' `name`: the one the module returns
            table = next(((b.value or "")[1:] for b in facts.binds.get((-1, "return"), ())
                          if (b.value or "").startswith("=")), "")
            found = [k for k in found if facts.graph.defs[k].qualname == f"{table}.{name}"]
        if not found and not inner:
            for imp in facts.graph.imports:
                for f in self.lua_module(path, imp.module) if imp.alias is None else ():
                    if (got := self._lua_export(f, "", name, depth + 1)) is not None:
                        return got
        return Target("def", path, found[0]) if len(found) == 1 else None

    def lua_module(self, path: str, module: str) -> list[str]:
        """The files `require("a.b")` may name: `a/b.lua`, `a/b/init.lua`, under `lua/`
        or any folder (the nearest to `path` first)."""
        stem = module.replace(".", "/")
        paths = self.ws.ids
        found = [p for p in paths if p.endswith((f"/{stem}.lua", f"/{stem}/init.lua"))
                 or p in (f"{stem}.lua", f"{stem}/init.lua")] if stem else []
        return sorted(found, key=lambda p: (not p.startswith(("lua/", f"{stem}")), len(p)))[:2]

    def elixir_module(self, path: str, text: str, scope: int) -> Target | None:
        """The module an Elixir receiver names: `__MODULE__` (the enclosing one), an
        alias's last part (`Conn` after `alias Plug.Conn`), or a full name."""
        facts = self.facts(path)
        if facts is None:
            return None
        if text == "__MODULE__":
            s = scope
            while s >= 0 and facts.graph.defs[s].kind != "module":
                s = facts.graph.defs[s].parent
            return Target("def", path, s) if s >= 0 else None
        if not _ALIAS.fullmatch(text):
            return None
        head, _, rest = text.partition(".")
        full = text
        for imp in facts.imports.get(head, ()):
            if imp.level == 0 and imp.name is None:
                full = f"{imp.module}.{rest}" if rest else imp.module
                break
        k = _module(facts, full)
        if k is not None:
            return Target("def", path, k)
        found = []
        for f in self.defining(full.rpartition(".")[2]):
            ff = self.facts(f) if f.endswith((".ex", ".exs")) else None
            if ff is not None and (k := _module(ff, full)) is not None:
                found.append(Target("def", f, k))
        return self._one(found)


def _module(facts: FileFacts, qualname: str) -> int | None:
    """The Elixir module of a file with this qualified name (not a `defimpl ... for:` it,
    which bears the same name)."""
    k = facts.qualnames.get(qualname)
    if k is not None and facts.graph.defs[k].kind == "module":
        return k
    return next((k for k, d in enumerate(facts.graph.defs)
                 if d.kind == "module" and d.qualname == qualname), None)
