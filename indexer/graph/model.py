"""The records of a file's code graph, and their compact stored form.

`FileGraph` is what `indexer.graph.extract` makes of one parsed file: its definitions
(`Def`), imports (`Import`), and every identifier occurrence that is code (`Site`: calls,
references, bindings, parameters, bases; never a comment, docstring or string). `encode`
turns it into one zlib-compressed blob (strings interned once, sites as small integers,
lines as deltas: a JSON head, a newline, the sites' integers as little-endian int32s,
field by field)
that the stores keep per file; `decode` reads it back exactly (and reads the blobs of
format 1, all JSON, as well).
`module_tail` is the last part of an imported module's name, as `indexer.graph.links`
keys a file by the modules it imports.

Invariants: `decode(encode(g)) == g`; sites come in file order; `Site.scope` is the index
in `defs` of the innermost definition enclosing the site (-1: module level); lines and
columns are 1-based (columns in characters).
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from array import array
from dataclasses import dataclass, field
from enum import IntEnum
from functools import partial
from itertools import accumulate, repeat
from operator import sub
from typing import NamedTuple

__all__ = ["EXTRACTION", "Def", "FileGraph", "Import", "Role", "Site", "decode", "encode",
           "module_tail"]

FORMAT = 2
"""The blob's format version (its first element); an unknown one decodes to nothing.
1: one JSON list, the sites' integers its last element (read still); 2: the sites'
integers in binary after the JSON head (several times cheaper to write and read)."""
EXTRACTION = 20
"""What the extractor records (bumped when it records new facts in the same format: 2 =
list element types, `cast`/`as` values, `this:` parameters, `__all__` entries, JS/Go
re-assignments, `import a.b` keyed `a`; 3 = JS private names, object shapes, either-branch
values, `isinstance`/`instanceof` narrowing, type-alias forward references; 4 = mapping
value types, `new Map<K, T>()`, parameter defaults, `enumerate`, `Self`, narrowing after
an early return or `assert`; 5 = `this` in `Cls.prototype[name] = function`; 6 = Go
named results, `c, err := f()`; 7 = Go and Rust struct field types; 8 = C/C++
prototypes and `static` functions (`~decl`, `~static`), Rust macro arguments' calls and
receivers; 9 = C#, PHP, Kotlin, Swift, Scala, Lua and Elixir graphs, Go `var x = &T{}`
lists, Java declared return and local types and `a.b()` call receivers, receiver chains 24
deep, C++ class-body declarations and qualified calls, Rust macro-made functions; 10 = Go
embedded fields as bases, receivers up to 240 characters; 11 = Kotlin/Swift type
parameters bound to their bound's class; 12 = C# declared return types; 13 = Rust `extern
crate X as Y` aliases, a Rust file's link keys include the crates its paths start with;
14 = Kotlin declared return types, Swift protocol requirements' and `-> Self`; 15 =
every operand call of a Swift sum or product, `a.f() + s.g()`; 16 = a relative import's
link keys name the folder it climbs to: `indexer.graph.links`; 17 = Swift argument
labels of calls and functions, `(any P)?` types, Kotlin extension receivers as `this`
and `::f` references, Scala `new A with B` calls and `f[T]` values; 18 = a C++/Java
return type written on a line before the function's name is the function's; 19 = a
Swift call in a receiver chain or a value keeps its argument labels, `request#_,to()`;
20 = a Kotlin named argument's name is no site). A
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
_BIG_ENDIAN = sys.byteorder == "big"
_new_site = partial(tuple.__new__, Site)
"""`Site` from a tuple of its fields, without its Python-level `__new__`."""


class _Numbers(dict[str | None, int]):
    """Strings numbered from 1 in the order first met (None is 0)."""

    def __missing__(self, key: str | None) -> int:
        got = self[key] = len(self)
        return got


def encode(graph: FileGraph) -> bytes:
    """The graph as one compact blob."""
    ids = _Numbers({None: 0})
    defs = [[ids[d.name], ids[d.qualname], ids[d.kind], d.line, d.end_line - d.line, d.parent]
            for d in graph.defs]
    imports = [[ids[i.module], ids[i.name], ids[i.alias], i.level, i.line, int(i.reexport)]
               for i in graph.imports]
    flat: list[int] = []
    last = 0
    for name, line, col, role, recv, scope, value in graph.sites:
        flat += (ids[name], line - last, col, role, ids[recv], scope + 1, ids[value])
        last = line
    del ids[None]
    numbers = array("i", flat)
    if _BIG_ENDIAN:
        numbers.byteswap()
    head = json.dumps([FORMAT, graph.language, list(ids), defs, imports],
                      separators=(",", ":")).encode("utf-8")
    columns = b"".join(numbers[k::7].tobytes() for k in range(7))  # alike values together
    return zlib.compress(head + b"\n" + columns, 1)


def _body(text: bytes) -> tuple[list[object], array[int] | list[int]] | None:
    """A decompressed blob's JSON head and its sites' integers (None: another format)."""
    cut = text.find(b"\n")  # JSON escapes every newline inside its strings
    if cut < 0:  # format 1: one JSON list, the sites last
        body = json.loads(text)
        if not body or body[0] != 1 or len(body) != 6:
            return None
        return body[:5], body[5]
    head = json.loads(text[:cut])
    if not head or head[0] != FORMAT or len(head) != 5:
        return None
    numbers = array("i")
    numbers.frombytes(text[cut + 1:])
    if _BIG_ENDIAN:
        numbers.byteswap()
    return head, numbers


def decode(blob: bytes) -> FileGraph | None:
    """The graph of a blob made by `encode` (None: another format)."""
    got = _body(zlib.decompress(blob))
    if got is None:
        return None
    (_, language, table, defs, imports), flat = got
    strs: list[str | None] = [None, *table]  # type: ignore[misc]
    out_defs = [Def(str(strs[a]), str(strs[b]), str(strs[c]), ln, ln + n, p)
                for a, b, c, ln, n, p in defs]  # type: ignore[attr-defined]
    out_imports = [Import(str(strs[m]), strs[n], strs[a], lv, ln, bool(r))
                   for m, n, a, lv, ln, r in imports]  # type: ignore[attr-defined]
    if len(flat) % 7:
        raise ValueError(f"a code graph's sites hold {len(flat)} numbers, not 7 each")
    n = len(flat) // 7
    names, lines, cols, roles, recvs, scopes, values = (
        [flat[k::7] for k in range(7)] if isinstance(flat, list)  # format 1: site by site
        else [flat[k * n:(k + 1) * n] for k in range(7)])  # format 2: column by column
    name = strs.__getitem__
    sites: list[Site] = list(map(_new_site, zip(
        map(name, names), accumulate(lines), cols, map(_ROLES.__getitem__, roles),
        map(name, recvs), map(sub, scopes, repeat(1)), map(name, values), strict=True)))
    return FileGraph(str(language), out_defs, out_imports, sites)


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
    cut = text.find(b"\n")
    if cut >= 0:
        head = json.loads(text[:cut])
        if not head or head[0] != FORMAT or len(head) != 5:
            return None
    else:  # format 1: one JSON list, its last element the sites, of integers only
        cut = text.rfind(b"[")
        head = json.loads(text[:cut] + b"0]") if cut >= 0 else None
        if not head or head[0] != 1 or len(head) != 6:
            return None
    _, language, table, _, imports = head[:5]
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
