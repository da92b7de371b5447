"""Naming one definition: `name_definition(store, symbol, repositories)`.

A symbol is `NAME`, a qualified name (`Session.fetch`, `pkg.Session.fetch`,
`fmt.Println`, PHP's `GuzzleHttp\\Client`: the leading parts may name the module, or the
namespace or package its file declares, the trailing ones the containers), or
`PATH:LINE` of a definition (the path relative to the repository root, the line of its
name or any line of its header up to the name). Several definitions of one qualified
name in one file (overloads, a property's getter and setter) count as one, the first (in
Python the first that is no `@overload` stub: the implementation). A name that is exactly
one definition's whole qualified name is that one (`request` is the function `request`,
not `Session.request`), a type's name is the type, not its Rust impls or Swift
extensions, and hand-written code is named over generated code and type stubs (`.pyi`,
`.d.ts`); more than one left is an `AmbiguousSymbol` listing them (the generated and
stub ones last, labelled); none is a `SymbolNotFound` naming what was looked for.

Invariants: only definitions of files that have a code graph are named (not document
headings); the answer is exactly one `GraphDef`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.indexer.errors import AmbiguousSymbol, SymbolNotFound, ValidationError
from ctxd.indexer.graph.specs import SPECS
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.graph.models import GraphDef
from ctxd.search.graph.modules import module_name
from ctxd.search.graph.workspace import Workspace

__all__ = ["AmbiguousSymbol", "SymbolNotFound", "name_definition", "parse_symbol"]

_PLACE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+)(?::\d+)?$")
"""`PATH:LINE`, or `PATH:LINE:COLUMN` as compilers, grep and `ctxd refs --by-name` print it
(the column is not needed: a line's definition is found by its line)."""
_PART = r"(?:(?:[^\W\d]|\$)[\w$]*[?!]?|`[^`.:]+`)"
_QUALIFIED = re.compile(rf"^#?{_PART}(?:(?:\.|::|#|\.#){_PART})*$")
"""`fetch`, `Session.fetch`, `a::b`, `Cls#method` (Ruby's notation), `Cls.#field` (a JS
private name); a letter is any Unicode letter (`größe`, `λ`, `名前`: identifiers in Python,
JS, Go, Rust, Java, ...), a Ruby or Elixir name may end in `?` or `!` (`call!`, `valid?`),
and a part may be a Kotlin or Swift name in backticks, blanks and all
(OptionTest.`default option`), as ctxd prints it."""
MAX_LISTED = 20
"""Candidates an ambiguous name lists."""
_EXTENDS = frozenset({"impl", "extension"})
"""Kinds that add to a type defined elsewhere under its name (Rust `impl Router`, Swift
`extension Session`): a name that also names the type itself names the type."""
_PARSED = frozenset(SPECS) | frozenset(SYNTAX)
"""The languages whose definitions a name may answer: those the graph reads, and those
only the chunker parses (C#, PHP, ...: their queries answer with a note that says so,
`search.graph.queries.no_graph_note`); never document sections."""


def parse_symbol(symbol: str) -> tuple[str, int] | list[str]:
    """(path, line) of `PATH:LINE`, else the parts of a (qualified) name."""
    text = symbol.strip()
    m = _PLACE.match(text)
    if m:
        return m.group("path").removeprefix("./"), int(m.group("line"))
    if "\\" in text and "/" not in text and _QUALIFIED.match(
            php := text.lstrip("\\").replace("\\", ".")):
        text = php  # PHP's `GuzzleHttp\Client`, `\Foo\bar()`'s namespace notation
    if not _QUALIFIED.match(text):
        folder, path = text.endswith(("/", "\\")), "/" in text or "\\" in text
        raise ValidationError(  # a file or folder where a definition goes: say so
            f"not a symbol: {symbol!r}" + (" (a folder)" if folder else
                                           " (a path without :LINE)" if path else ""),
            hint=(f"Name a file in it with the line of a definition (`ctxd files "
                  f"'{text}**'` lists them); `ctxd impact` also takes a whole file."
                  if folder else
                  f"Add the line of a definition in the file (`{text}:12`; `ctxd symbols "
                  "NAME` lists them); `ctxd impact` also takes a whole file." if path else
                  "Name a definition: NAME (`fetch`), a qualified name (`Session.fetch`, "
                  "`pkg.Session.fetch`) or PATH:LINE of its definition (`src/app.py:42`)."),
            details={"field": "symbol", "value": symbol})
    return [p for part in re.split(r"\.|::", text)
            for p in ([part] if part.startswith("#") else part.split("#"))]


_AT_PATH = ("s.file_id IN (SELECT f.id FROM files f WHERE f.repo_id IN (SELECT id FROM repos) "
            "AND f.path = ?) AND s.path = ?")
"""The symbols of the files at a path, found through the files' (repository, path) index
(`symbols.path` has none: 0.5 s a lookup in a 1M-checkpoint SQLite index, under 1 ms so)."""


def _defs(store: IndexStore, where: str, params: Sequence[object]) -> list[GraphDef]:
    rows = store.symbol_rows(where, params)
    out = [GraphDef(str(r[0]), f"{r[5]}.{r[0]}" if r[5] else str(r[0]), str(r[1]), str(r[2]),
                    str(r[3]), int(r[4]), int(r[7])) for r in rows if str(r[6]) in _PARSED]
    seen: dict[tuple[str, str, str], list[GraphDef]] = {}
    for d in sorted(out, key=lambda d: (d.repository, d.path, d.line)):
        seen.setdefault((d.repository, d.path, d.qualified_name), []).append(d)
    return [_implementation(store, same) if len(same) > 1 else same[0]
            for same in seen.values()]


_OVERLOAD = re.compile(r"^\s*@\s*(?:[A-Za-z_]\w*\s*\.\s*)*overload\b")
"""A Python `@overload` decorator line (`@overload`, `@typing.overload`, `@t.overload`)."""


def _implementation(store: IndexStore, same: list[GraphDef]) -> GraphDef:
    """Of several declarations of one qualified name in one file, the one to name: in
    Python the first that is no `@overload` stub (the implementation, which calls reach:
    `search.graph.facts` keeps a name's last declaration), else the first."""
    d = same[0]
    if not d.path.endswith(".py"):
        return d
    file_id = store.file_id(d.repository, d.path)
    lines = (next(iter(store.file_texts([file_id]).values()), "").split("\n")
             if file_id is not None else [])
    for x in same:
        above = x.line - 2  # (0-based: the line before the name's)
        while 0 <= above < len(lines) and lines[above].lstrip().startswith(("@", "#")):
            if _OVERLOAD.match(lines[above]):
                break
            above -= 1
        else:
            return x
    return d


def _scope(repositories: Sequence[str] | None) -> tuple[str, list[object]]:
    if not repositories:
        return "", []
    return f" AND r.name IN ({','.join('?' * len(repositories))})", list(repositories)


_DECLARED = re.compile(r"^[ \t]*(?:namespace|package)[ \t]+([\w.\\]+)", re.MULTILINE)
"""A file's namespace or package declaration (PHP, C#, Java, Kotlin, Scala): the module
part of a qualified name where the folders do not spell it (PSR-4's `src/` for
`GuzzleHttp`)."""


def _declared_in(store: IndexStore, d: GraphDef, parts: list[str]) -> bool:
    """Whether `parts` is the namespace or package `d`'s file declares, or (Rust) its
    crate's name as Cargo.toml gives it (`grep_searcher::Searcher` for the crate
    `grep-searcher` in crates/searcher/) and the modules in it, then `d`'s qualified name."""
    qual = d.qualified_name.split(".")
    if len(parts) <= len(qual) or parts[-len(qual):] != qual:
        return False
    if d.path.endswith(".rs"):
        crate = Workspace.open(store, d.repository).layout.rust_crate_of(d.path)
        lead = parts[: len(parts) - len(qual)]
        module = [p for p in module_name(d.path).split(".") if p != "mod"]
        return crate is not None and lead[0] == crate.replace("-", "_") and (
            len(lead) == 1 or any(module[k : k + len(lead) - 1] == lead[1:]
                                  for k in range(len(module))))
    file_id = store.file_id(d.repository, d.path)
    text = next(iter(store.file_texts([file_id]).values()), "") if file_id is not None else ""
    namespace = ".".join(parts[: len(parts) - len(qual)])
    return any(m.group(1).replace("\\", ".").strip(".") == namespace
               for m in _DECLARED.finditer(text[:20000]))


def _matches(d: GraphDef, parts: list[str]) -> bool:
    """Whether a definition answers a qualified name: its trailing parts are the
    definition's qualified name's, and any leading ones name its module. A Lua module's
    functions hang on a local table (`local M = {}; function M.setup()`, `return M`):
    `lazy.core.config.setup` names lua/lazy/core/config.lua's `M.setup`, as `require` does."""
    qual = d.qualified_name.split(".")
    if _answers(d, qual, parts):
        return True
    rest = qual[1:]
    if not d.path.endswith(".lua") or not rest or len(parts) <= len(rest) or (
            parts[-len(rest):] != rest):
        return False
    lead = parts[: len(parts) - len(rest)]  # what `require` names: the file, a/b/init.lua a.b
    module = d.path.removesuffix(".lua").removesuffix("/init").split("/")
    return module[-len(lead):] == lead


def _answers(d: GraphDef, qual: list[str], parts: list[str]) -> bool:
    if len(parts) <= len(qual):
        return qual[-len(parts):] == parts
    if parts[-len(qual):] != qual:
        return False
    lead = parts[: len(parts) - len(qual)]
    module = module_name(d.path).split(".")
    crate = [p.replace("-", "_") for p in module if p != "src"]  # Rust: crate::mod::Type
    return any(m[k : k + len(lead)] == lead for m in (module, crate) for k in range(len(m)))


_STUBS = (".pyi", ".d.ts", ".d.cts", ".d.mts")
"""Type declaration files: what they declare is implemented elsewhere (or nowhere)."""


def _lesser(store: IndexStore, defs: list[GraphDef]) -> dict[tuple[str, str], str]:
    """(repository, path) -> `generated` or `type stub`, for the files among `defs`' that
    hold generated code (`indexer.walk.textclass`: `*_pb2.py`, `*.pb.go`, a `Code
    generated ... DO NOT EDIT` header) or type declarations (`.pyi`, `.d.ts`)."""
    out = {(d.repository, d.path): "type stub" for d in defs if d.path.endswith(_STUBS)}
    roles = store.file_roles(sorted({d.path for d in defs}))
    out.update({key: "generated" for key, role in roles.items() if role == "generated"})
    return out


def name_definition(store: IndexStore, symbol: str,
                    repositories: Sequence[str] | None = None) -> GraphDef:
    """The one definition `symbol` names.

    Raises:
        ValidationError: `symbol` is not a name or PATH:LINE.
        SymbolNotFound: no definition answers it.
        AmbiguousSymbol: several do (listed, with their qualified names and places).
    """
    parsed = parse_symbol(symbol)
    scope, params = _scope(repositories)
    if isinstance(parsed, tuple):
        path, line = parsed
        found = _defs(store, _AT_PATH + " AND s.line <= ? AND s.end_line >= ?" + scope,
                      [path, path, line, line, *params])
        exact = [d for d in found if d.line == line]
        if exact:
            return exact[0]
        near = sorted(found, key=lambda d: d.line, reverse=True)
        hint = (f"The definitions around it: {', '.join(f'{d.qualified_name} at {d.path}:{d.line}' for d in near[:5])}."  # noqa: E501
                if near else "Give the line of a definition's name (`ctxd symbols NAME` "
                "lists them), with the path relative to the repository root.")
        raise SymbolNotFound(f"no definition at {path}:{line}", hint=hint,
                             details={"field": "symbol", "value": symbol})
    name = parsed[-1]
    named = _defs(store, "s.name = ?" + scope, [name, *params])
    candidates = [d for d in named if _matches(d, parsed)]
    if not candidates and len(parsed) > 1:  # `GuzzleHttp.Client`: src/Client.php says so
        candidates = [d for d in named if _declared_in(store, d, parsed)]
    if not candidates:
        raise SymbolNotFound(
            f"no definition named {symbol!r}" + (f" in {', '.join(repositories)}"
                                                  if repositories else ""),
            hint="Check the spelling and case (`ctxd symbols NAME` lists definitions), or "
                 "index the repository that defines it; a definition in a file kept "
                 "greppable only (a bundle, vendored code) or in a language ctxd does not "
                 "parse has no code graph: `ctxd refs NAME --by-name` (MCP: `by_name: "
                 "true`) lists the lines that mention it.",
            details={"field": "symbol", "value": symbol})
    types = [d for d in candidates if d.kind not in _EXTENDS]
    if types and len(types) < len(candidates):  # `Router`: the struct, not its impls
        candidates = types
    lesser = _lesser(store, candidates) if len(candidates) > 1 else {}
    written = [d for d in candidates if (d.repository, d.path) not in lesser]
    if lesser and written:  # hand-written code over generated code and type stubs
        if len(written) == 1:
            return written[0]
        candidates = written + [d for d in candidates if (d.repository, d.path) in lesser]
    exact = [d for d in written or candidates if d.qualified_name == ".".join(parsed)]
    if len(candidates) > 1 and len(exact) == 1:  # `request`: the function, not X.request
        return exact[0]
    if len(candidates) > 1:
        several = len({d.repository for d in candidates}) > 1  # name the repositories too
        listed = "; ".join(f"{d.qualified_name} ({d.kind}) at "
                           f"{f'{d.repository}/' if several else ''}{d.path}:{d.line}"
                           + (f" [{lesser[(d.repository, d.path)]}]"
                              if (d.repository, d.path) in lesser else "")
                           for d in candidates[:MAX_LISTED])
        more = len(candidates) - MAX_LISTED
        raise AmbiguousSymbol(
            f"{symbol!r} names {len(candidates)} definitions: {listed}"
            + (f"; and {more} more" if more > 0 else ""),
            hint="Say which: a qualified name (`Class.method`, `module.name`) or PATH:LINE "
                 "of the definition" + (" and its repository (--repo NAME; MCP: `repository`)"
                                        if several else "") + ".",
            details={"field": "symbol", "value": symbol,
                     "candidates": [f"{d.path}:{d.line}" for d in candidates[:MAX_LISTED]]})
    return candidates[0]
