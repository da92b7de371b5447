"""find_references: where a symbol is defined and where it is used.

`find_references(store, backend, symbol, ...)` takes definitions from the symbol table
(or, with Zoekt, from `sym:` results), then finds usages with a case-sensitive
word-boundary lexical search (`\\bNAME\\b`) restricted by default to the definitions'
code languages (every language the chunker parses when no definition is code: never
lockfiles, data or prose), removes the definition sites from the usages, and labels each
site.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence

from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.indexer.errors import ValidationError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.graph.naming import name_definition
from ctxd.search.models import LexicalBackend, Reference, References, SymbolItem
from ctxd.search.symbols import search_symbols
from ctxd.search.zoekt.query import quote_term, scoped_query

_IDENT = re.compile(r"^(?:(?:[^\W\d]|\$)[\w$]*[?!]?|`[^`]+`)$")  # `call!`, `a b` too
_PLACE = re.compile(r"^[^:\s]+:\d+(?::\d+)?$")  # PATH:LINE[:COLUMN]


def _word_pattern(name: str) -> str:
    """The regular expression of `name` as a whole word. `\\b` (ASCII in RE2 and Zoekt)
    only stands beside an ASCII letter, digit or `_`: a name that begins with `$`
    (`$patch`) or a non-ASCII letter (`λ`) gets none on that side (`_whole_word` then
    checks the matches)."""
    def edge(ch: str) -> str:
        return "\\b" if ch.isascii() and (ch.isalnum() or ch == "_") else ""
    return f"{edge(name[0])}{re.escape(name)}{edge(name[-1])}"


def _whole_word(text: str, column: int, name: str) -> bool:
    """Whether the match of `name` at `column` (1-based) of `text` is not part of a longer
    identifier (Unicode letters, digits, `_` and `$` are identifier characters)."""
    at = column - 1
    if text[at : at + len(name)] != name:
        return True  # columns counted otherwise: keep the engine's answer
    before = text[at - 1] if at > 0 else " "
    after = text[at + len(name)] if at + len(name) < len(text) else " "
    return not any(ch.isalnum() or ch in "_$" for ch in (before, after))


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
    m = re.search(rf"(?<![\w$]){re.escape(item.name)}(?![\w$])", text)
    return (m.start() + 1 if m else 1), text.strip()


def symbol_name(store: IndexStore, symbol: str, repositories: Sequence[str] | None) -> str:
    """The name a by-name search looks for: the last part of `Class.method`,
    `Router::merge` or `Cls#method`, or the name of the definition at `PATH:LINE` (as
    `refs` without --by-name takes it; `SymbolNotFound` when none is there)."""
    name = symbol.strip()
    if _PLACE.match(name):
        name = name_definition(store, name, repositories).name
    return re.split(r"\.|::|#|\\", name)[-1]  # `\\`: PHP's GuzzleHttp\\Client


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
    languages: tuple[str, ...] = ()
    if language is None:  # the definitions' code languages, else every code language
        languages = tuple(sorted({d.language for d in defs if d.language in SYNTAX}
                                 or SYNTAX))
        language = languages[0] if len(languages) == 1 else None
    def_refs = []
    def_sites = set()
    for d in defs:
        col, ctx = _definition_context(store, d)
        def_refs.append(Reference("definition", d.repository, d.path, d.line, col, ctx,
                                  d.language))
        def_sites.add((d.repository, d.path, d.line))
    query = scoped_query(f"case:yes {_word_pattern(name)}", repositories or (), language)
    if language is None and languages:  # never lockfiles, data, prose: code only
        query = (f"{query} ( {' or '.join(f'lang:{quote_term(x)}' for x in languages)} )")
    result = backend.search(query, max_files=limit, context_lines=0)
    usages: list[Reference] = []
    for fm in result.files:
        for m in fm.matches:
            if (fm.repository, fm.path, m.line) in def_sites:
                continue
            for start, _end in m.ranges or ((1, 1),):
                if not _whole_word(m.text, start, name):
                    continue  # `$patchAll`, `λx`: part of another identifier
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
        languages=list(languages) if len(languages) > 1 else [],
        code_only=bool(languages) and set(languages) == set(SYNTAX),
    )
