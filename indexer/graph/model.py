"""The records of a file's code graph, and their compact stored form.

`FileGraph` is what `indexer.graph.extract` makes of one parsed file: its definitions
(`Def`), imports (`Import`), and every identifier occurrence that is code (`Site`: calls,
references, bindings, parameters, bases; never a comment, docstring or string). `encode`
turns it into one zlib-compressed blob (strings interned once, sites as small integers,
lines as deltas) that the stores keep per file; `decode` reads it back exactly.
`link_keys(graph)` are the short keys a file is found by when another file's definition
may be used in it (the last part of each module it imports).

Invariants: `decode(encode(g)) == g`; sites come in file order; `Site.scope` is the index
in `defs` of the innermost definition enclosing the site (-1: module level); lines and
columns are 1-based (columns in characters).
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

__all__ = ["EXTRACTION", "Def", "FileGraph", "Import", "Role", "Site", "decode", "encode",
           "link_keys"]

FORMAT = 1
"""The blob's format version (its first element); an unknown one decodes to nothing."""
EXTRACTION = 8
"""What the extractor records (bumped when it records new facts in the same format: 2 =
list element types, `cast`/`as` values, `this:` parameters, `__all__` entries, JS/Go
re-assignments, `import a.b` keyed `a`; 3 = JS private names, object shapes, either-branch
values, `isinstance`/`instanceof` narrowing, type-alias forward references; 4 = mapping
value types, `new Map<K, T>()`, parameter defaults, `enumerate`, `Self`, narrowing after
an early return or `assert`; 5 = `this` in `Cls.prototype[name] = function`; 6 = Go
named results, `c, err := f()`; 7 = Go and Rust struct field types; 8 = C/C++
prototypes and `static` functions (`~decl`, `~static`), Rust macro arguments' calls and
receivers). A
repository indexed by an older one gets every graph extracted again by its next full
`ctxd index` (`Indexer.backfill_graphs`)."""


class Role(IntEnum):
    """What an identifier occurrence does."""

    REF = 0
    """Read: a name, an attribute (`recv.name`), a type in an annotation, a decorator."""
    CALL = 1
    """Called: `name(...)`, `recv.name(...)`, `new Name(...)`, a macro."""
    BIND = 2
    """Assigned in its scope (`x = ...`, `for x in`, `with ... as x`); `value` says with what."""
    PARAM = 3
    """A parameter; `value` is its annotated type."""
    ATTR_BIND = 4
    """An attribute assigned: `self.x = ...` (`receiver` is `self`)."""
    INHERIT = 5
    """A base class (or implemented interface, trait) in a class header."""
    IMPORT = 6
    """A name bound by an import statement."""


class Def(NamedTuple):
    """A definition of the file (as the chunker's symbols): name, qualified name within
    the file, kind, the line of its name and its last line."""

    name: str
    qualname: str
    kind: str
    line: int
    end_line: int
    parent: int = -1
    """Index of the enclosing definition (-1: top level)."""


class Import(NamedTuple):
    """One imported name (or module).

    `module` as written (`os.path`, `./util`, `net/http`, `crate::a::b`, `stdio.h`);
    `name` the imported name (`*` for all; None: the module itself); `alias` the local
    name it binds when that differs from the default (`import numpy as np`, `{a as b}`,
    Go's package name); `level` Python's leading dots; `reexport` for `export ... from`."""

    module: str
    name: str | None
    alias: str | None
    level: int
    line: int
    reexport: bool = False

    @property
    def local(self) -> str:
        """The name this import binds in the file."""
        if self.alias:
            return self.alias
        if self.name and self.name != "*":
            return self.name
        return re.split(r"[./:]+", self.module.strip("./"))[0] if self.level == 0 else ""


class Site(NamedTuple):
    """An identifier occurrence in code."""

    name: str
    line: int
    col: int
    role: Role
    receiver: str | None = None
    """The object of `recv.name` (`self`, `s`, `os.path`, `Session()`; `?` when not a plain
    chain), None for a bare name."""
    scope: int = -1
    """Index of the enclosing definition in `FileGraph.defs` (-1: module level)."""
    value: str | None = None
    """For a binding or parameter: `()X` assigned a call of `X`, `:X` annotated `X`, `=X`
    assigned the name `X` (`=xs[]`: an element of `xs`), `:X[]` annotated a list of `X`,
    `[()X` a list literal of `X()`s, `*xs` a loop's element of `xs`, `{a ()X;b :Y}` an
    object's known fields (a literal, a TS type literal), `|A|B` either of two values
    (`c ? a() : b()`), `~END()X` narrowed to `X` up to line END (`isinstance`,
    `instanceof`); `~decl` / `~static` mark a C/C++ function's prototype outside
    functions / its `static` (markers: never a value); a leading `+` marks a JS/Go
    assignment to a name declared in an enclosing scope (`x = ...` after `let x`)."""


@dataclass(frozen=True, slots=True)
class FileGraph:
    """The code graph of one file."""

    language: str
    defs: list[Def] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)


_ROLES = list(Role)


def encode(graph: FileGraph) -> bytes:
    """The graph as one compact blob."""
    strings: dict[str, int] = {}

    def s(text: str | None) -> int:
        if text is None:
            return 0
        got = strings.get(text)
        if got is None:
            got = strings[text] = len(strings) + 1
        return got

    defs = [[s(d.name), s(d.qualname), s(d.kind), d.line, d.end_line - d.line, d.parent]
            for d in graph.defs]
    imports = [[s(i.module), s(i.name), s(i.alias), i.level, i.line, int(i.reexport)]
               for i in graph.imports]
    flat: list[int] = []
    last = 0
    put = strings.setdefault  # `s`, inline: a file has thousands of sites
    for name, line, col, role, recv, scope, value in graph.sites:
        flat += (put(name, len(strings) + 1), line - last, col, int(role),
                 0 if recv is None else put(recv, len(strings) + 1), scope + 1,
                 0 if value is None else put(value, len(strings) + 1))
        last = line
    body = [FORMAT, graph.language, list(strings), defs, imports, flat]
    return zlib.compress(json.dumps(body, separators=(",", ":")).encode("utf-8"), 1)


def decode(blob: bytes) -> FileGraph | None:
    """The graph of a blob made by `encode` (None: another format)."""
    body = json.loads(zlib.decompress(blob))
    if not body or body[0] != FORMAT:
        return None
    _, language, table, defs, imports, flat = body
    strs: list[str | None] = [None, *table]
    out_defs = [Def(str(strs[a]), str(strs[b]), str(strs[c]), ln, ln + n, p)
                for a, b, c, ln, n, p in defs]
    out_imports = [Import(str(strs[m]), strs[n], strs[a], lv, ln, bool(r))
                   for m, n, a, lv, ln, r in imports]
    sites: list[Site] = []
    line = 0
    for n, dl, col, role, recv, scope, value in zip(*[iter(flat)] * 7, strict=True):
        line += dl
        sites.append(Site(str(strs[n]), line, col, _ROLES[role], strs[recv], scope - 1,
                          strs[value]))
    return FileGraph(language, out_defs, out_imports, sites)


class Peek(NamedTuple):
    """What a blob says short of its sites (`peek`): the language, the imports, and
    every string the graph holds (names, qualified names, receivers, values, modules:
    a superset of the names its sites bear)."""

    language: str
    imports: list[Import]
    strings: frozenset[str]


def peek(blob: bytes) -> Peek | None:
    """The language, imports and strings of a blob made by `encode`, without building
    its sites (several times cheaper than `decode`; None: another format)."""
    text = zlib.decompress(blob)
    cut = text.rfind(b"[")  # the sites: the last list, of integers only
    if cut < 0:
        return None
    body = json.loads(text[:cut] + b"0]")
    if not body or body[0] != FORMAT or len(body) != 6:
        return None
    _, language, table, _, imports, _ = body
    strs: list[str | None] = [None, *table]
    return Peek(language, [Import(str(strs[m]), strs[n], strs[a], lv, ln, bool(r))
                           for m, n, a, lv, ln, r in imports], frozenset(table))


def module_tail(module: str) -> str:
    """The last part of an imported module's name, as `link_keys` keys it: `a.b` -> `b`,
    `../util/index.js` -> `util`, `net/http` -> `http`, `crate::a::b` -> `b`, `x.h` -> `x`."""
    text = module.strip().strip("'\"<>")
    text = re.sub(r"\.(js|jsx|ts|tsx|mjs|cjs|mts|cts|h|hpp|hh|rb|py)$", "", text)
    parts = [p for p in re.split(r"[./:\\]+", text) if p]
    while len(parts) > 1 and parts[-1] in ("index", "__init__", "mod"):
        parts.pop()
    return parts[-1] if parts else ""


def link_keys(graph: FileGraph) -> list[str]:
    """The distinct keys under which the file is found as an importer: each imported
    module's tail, for `from pkg import name` also `name` (it may be a module), and for
    `import pkg.mod` also `pkg` (the name it binds)."""
    keys: dict[str, None] = {}
    for imp in graph.imports:
        tail = module_tail(imp.module)
        if tail:
            keys[tail] = None
        if imp.name is None and not imp.alias and not imp.level and re.fullmatch(
                r"\w+(?:\.\w+)+", imp.module):  # Python `import a.b` binds `a`
            keys[imp.module.partition(".")[0]] = None
        if imp.name and imp.name != "*" and imp.name != "default":
            keys[imp.name.rpartition(".")[2]] = None
    return list(keys)
