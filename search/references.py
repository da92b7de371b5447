"""find_references: where a symbol is defined and where it is used.

`find_references(store, backend, symbol, ...)` takes definitions from the symbol table
(or, with Zoekt, from `sym:` results), then finds usages with a case-sensitive
word-boundary lexical search (`\\bNAME\\b`) restricted by default to the definitions'
language, removes the definition sites from the usages, and labels each site.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.graph.naming import name_definition
from ctxd.search.models import LexicalBackend, Reference, References, SymbolItem
from ctxd.search.symbols import search_symbols
from ctxd.search.zoekt.query import scoped_query

_IDENT = re.compile(r"^[A-Za-z_$][\w$]*$")
_PLACE = re.compile(r"^[^:\s]+:\d+$")


def _definitions_from_store(
    store: IndexStore, name: str, repositories: Sequence[str] | None
) -> list[SymbolItem]:
    """Symbols named exactly `name` (case-sensitive), via the symbol search."""
    return [s for s in search_symbols(store, name, repositories=repositories) if s.name == name]


def _definition_context(store: IndexStore, item: SymbolItem) -> tuple[int, str]:
    """(column, text) of the definition line, read from the indexed full text."""
    file_id = store.file_id(item.repository, item.path)
    texts = store.file_texts([file_id]) if file_id is not None else {}
    if not texts:
        return 1, ""
    lines = next(iter(texts.values())).split("\n")
    text = lines[item.line - 1] if 0 < item.line <= len(lines) else ""
    m = re.search(rf"\b{re.escape(item.name)}\b", text)
    return (m.start() + 1 if m else 1), text.strip()


def symbol_name(store: IndexStore, symbol: str, repositories: Sequence[str] | None) -> str:
    """The name a by-name search looks for: the last part of `Class.method`,
    `Router::merge` or `Cls#method`, or the name of the definition at `PATH:LINE` (as
    `refs` without --by-name takes it; `SymbolNotFound` when none is there)."""
    name = symbol.strip()
    if _PLACE.match(name):
        name = name_definition(store, name, repositories).name
    return re.split(r"\.|::|#", name)[-1]


def find_references(
    store: IndexStore,
    backend: LexicalBackend,
    symbol: str,
    *,
    language: str | None = None,
    repositories: Sequence[str] | None = None,
    limit: int = 200,
    definitions: list[SymbolItem] | None = None,
) -> References:
    """Definitions and usages of `symbol`.

    Args:
        backend: the lexical engine used for usages (embedded or Zoekt).
        language: restrict usages to this language; default: the definitions' language
            when they all share one.
        definitions: pre-computed definitions (Zoekt `sym:` results); default: the store.

    Raises:
        ValidationError: `symbol` is not an identifier.
    """
    started = time.perf_counter()
    name = symbol_name(store, symbol, repositories)
    if not _IDENT.match(name):
        raise ValidationError(
            f"not a symbol name: {symbol!r}",
            hint="Pass an identifier such as `parse_header` or `Cart.total`.",
            details={"field": "symbol", "value": symbol},
        )
    defs = definitions if definitions is not None else _definitions_from_store(
        store, name, repositories
    )
    if language is None:
        langs = {d.language for d in defs if d.language}
        language = langs.pop() if len(langs) == 1 else None
    def_refs = []
    def_sites = set()
    for d in defs:
        col, ctx = _definition_context(store, d)
        def_refs.append(Reference("definition", d.repository, d.path, d.line, col, ctx,
                                  d.language))
        def_sites.add((d.repository, d.path, d.line))
    query = scoped_query(f"case:yes \\b{name}\\b", repositories or (), language)
    result = backend.search(query, max_files=limit, context_lines=0)
    usages: list[Reference] = []
    for fm in result.files:
        for m in fm.matches:
            if (fm.repository, fm.path, m.line) in def_sites:
                continue
            for start, _end in m.ranges or ((1, 1),):
                usages.append(
                    Reference("usage", fm.repository, fm.path, m.line, start, m.text.strip(),
                              fm.language)
                )
    truncated = result.partial or len(usages) > limit
    return References(
        symbol=name,
        definitions=def_refs,
        usages=usages[:limit],
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
        truncated=truncated,
        language=language,
    )
