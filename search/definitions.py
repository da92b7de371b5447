"""Definitions first: a query that names an identifier exactly ranks the files that define
it first in the default (hybrid) mode, whatever the file's role (issue 42, a hard rule).

Fusion and re-ranking weigh evidence; they may demote a file for its kind. A library module
named like a test (Werkzeug's `test.py`, a `testing.py` of helpers that library code
imports, a `conftest.py` plugin) lost its own class to the demotion of tests, and a query
naming the class exactly did not find it in the top 10. A name typed exactly is not
evidence to weigh: the definition is the answer.

`named(query)` is what the query names: its identifier-shaped words (`Retry.increment`,
`is_exhausted`, `MAX_RETRIES`, `parseHeader`), a query of one word (`wheel`) and, in an
identifier query (`search.hybrid.is_identifier_query`), its capitalised words (`Retry`,
`Client`); a dotted name asks for its last part inside a container named by the part
before it. Ruby's predicate and bang names are named as written (`copy?`, `run!`; a lone
one is an identifier query), and a query of a capitalised word and a plain one
(`Stream printf`, `Jar sort`) names the member inside that container.
`defining_files(store, query, filters)` reads their definitions (the symbol table, exact
name and case, Markdown headings left out) within the user's filters, and counts per file
how many of the query's names it defines; a name defined in more than `MAX_FILES` files
(`get`, `__init__`) is common, not evidence. `definitions_first(ranked, files)` then moves
those files to the front, most names first, then in hybrid order; a file no leg found
enters on its definition.

Only identifier queries get the rule (`applies`): "where is MaxRetryError raised" asks for
the raise, not the class.

Without a symbol table's definition (a language chunked without symbols, such as Dart, or
a file indexed before its language had them), `shaped_definitions(query, lexical)` reads
the lexical leg's matching lines instead: a line that declares the name by its shape
(`class Name`, `def name`, `fn name`, `function M.name`, `bool wasParsed(String name) {`),
not a call, a use as a type or a sentence of prose, is its definition.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.filters import SearchFilters
from ctxd.search.hybrid import identifier_terms, is_identifier, is_identifier_query
from ctxd.search.models import Hit, MatchSource
from ctxd.search.path_kinds import is_prose

__all__ = ["MAX_FILES", "Definition", "applies", "defining_files", "definitions_first",
           "named", "shaped_definitions"]

MAX_FILES = 5
"""A name defined in more files than this is common (`get`, `run`): no evidence."""
MAX_NAMES = 8
"""At most this many names of one query are looked up."""
SNIPPET_LINES = 30
"""A definition that enters the ranking shows at most this many of its lines."""

_TOKEN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$.]*[A-Za-z0-9_$][?!]?|[A-Za-z_][?!]?")
"""A name, with Ruby's predicate or bang suffix (`copy?`, `run!`) when written."""
_PAIR = re.compile(r"([A-Z][A-Za-z0-9_]*)\s+([a-z][a-z0-9]*[?!]?)")
"""`Container member` of plain words (`Stream printf`, `Jar sort`): the member defined
inside the container."""
_CAPITALISED = re.compile(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")
_QUOTED_NAME = re.compile(r"(?:([A-Z][A-Za-z0-9_]*)\.?\s*)?(`[^`\n]*\s[^`\n]*`)")
"""A name quoted in backticks because it holds blanks, as Kotlin (and Scala, F#) write test
functions (`` OptionTest.`default option` ``), with the container written before it: the
symbol's name keeps its backticks."""
_NOT_DEFINITIONS = frozenset({"section"})
"""Symbol kinds that are not definitions in code (Markdown headings)."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A file that defines some of the query's names: how many, and the first one's lines."""

    repository: str
    path: str
    language: str
    names: int
    line: int
    end_line: int


def applies(query: str) -> bool:
    """Whether the rule runs for `query`: an identifier query that names something."""
    return (is_identifier_query(query) or _lone_suffixed(query) or _pair(query) is not None
            or _QUOTED_NAME.search(query) is not None) and bool(named(query))


def _lone_suffixed(query: str) -> bool:
    """A query of one name with Ruby's suffix (`copy?`, `valid!`): the name it writes."""
    text = query.replace("`", " ").strip()
    return len(text) >= 2 and text[-1] in "?!" and _TOKEN.fullmatch(text) is not None


def _pair(query: str) -> tuple[str, str] | None:
    """(member, container) of a `Container member` query of two plain words, else None."""
    m = _PAIR.fullmatch(query.replace("`", " ").strip())
    return (m.group(2), m.group(1)) if m else None


def _quoted_names(query: str) -> tuple[dict[tuple[str, str | None], None], str]:
    """The (name, container) of each `_QUOTED_NAME` in `query`, and the query's text with
    those names and every backtick blanked (what the other names are read from)."""
    out: dict[tuple[str, str | None], None] = {}
    text = query
    for container, quoted in _QUOTED_NAME.findall(query):
        out.setdefault((quoted, container or None), None)
        text = text.replace(quoted, " ")
    return out, text.replace("`", " ")


def named(query: str) -> list[tuple[str, str | None]]:
    """(name, container or None) of what `query` names exactly, in order, distinct."""
    if (pair := _pair(query)) is not None:
        return [pair]
    out, text = _quoted_names(query)
    idents = set(identifier_terms(text))
    whole = is_identifier_query(query)
    tokens = _TOKEN.findall(text)
    if len(tokens) == 1 and (whole or _lone_suffixed(query)):  # a lone name (`wheel`,
        idents.add(tokens[0].strip(".").rstrip("()?!"))  # `copy?`) names itself
    for tok in tokens:
        tok = tok.strip(".").rstrip("()")
        base = tok.rstrip("?!")
        if not base:
            continue
        if base in idents or is_identifier(base):
            spellings = [tok]  # `valid?` as written; a question's `?` may end `load_file?`
            if tok[-1] == "?" and is_identifier(base) and text.rstrip().endswith(tok):
                spellings = [tok, base]
            for spelt in spellings:
                parts = [p for p in spelt.split(".") if p]
                if len(parts) >= 2:
                    out.setdefault((parts[-1], parts[-2]), None)
                    if _CAPITALISED.fullmatch(parts[-2]):
                        out.setdefault((parts[-2], None), None)
                elif parts:
                    out.setdefault((parts[0], None), None)
        elif whole and _CAPITALISED.fullmatch(tok) and len(tok) >= 3:
            out.setdefault((tok, None), None)
    return list(out)[:MAX_NAMES]


def defining_files(store: IndexStore, query: str, filters: SearchFilters) -> list[Definition]:
    """The files defining the query's names (module docstring), most names first; empty
    when the rule does not apply or nothing is defined."""
    if not applies(query):
        return []
    wanted = named(query)
    names = sorted({n for n, _c in wanted})
    in_sql, in_params = store.dialect.in_nocase("s.name", names)
    scope, scope_params = filters.sql("s")
    rows = store.symbol_rows(f"{in_sql} {scope}", [*in_params, *scope_params])
    path_ok = filters.path_matcher()
    per_name: dict[tuple[str, str | None], dict[tuple[str, str], tuple[int, int, str]]] = {}
    for name, kind, repo, path, line, container, language, end in rows:
        if str(kind).lower() in _NOT_DEFINITIONS or not path_ok(str(path)):
            continue
        for want in wanted:
            w_name, w_container = want
            if name != w_name:
                continue
            if w_container is not None and w_container not in str(container or "").split("."):
                continue
            found = per_name.setdefault(want, {})
            key = (str(repo), str(path))
            at = (int(line), int(end or line), str(language))
            if key not in found or at[0] < found[key][0]:
                found[key] = at
    counts: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], tuple[int, int, str]] = {}
    for files in per_name.values():
        if len(files) > MAX_FILES:
            continue  # a common name
        for key, at in files.items():
            counts[key] = counts.get(key, 0) + 1
            if key not in first or at[0] < first[key][0]:
                first[key] = at
    out = [Definition(repo, path, first[(repo, path)][2], n, first[(repo, path)][0],
                      first[(repo, path)][1])
           for (repo, path), n in counts.items()]
    out.sort(key=lambda d: -d.names)
    return out


_KEYWORD_DEF = (r"(?:class|struct|enum|interface|trait|mixin|extension|typedef|record|"
                r"protocol|actor|object|module|defmodule|def|defp|defmacro|fun|func|fn|"
                r"function|sub|proc|type|get|set)\s+(?:<[^<>]*>\s*)?(?:\([^()]*\)\s*)?"
                r"(?:[\w$]+[.:])*")
"""A definition's keyword, then the name (after Kotlin's type parameters, Go's receiver,
Lua's `M.` / Ruby's `self.`; Dart's `get`/`set` for accessors)."""
_NOT_TYPES = (r"return|new|await|throw|yield|else|case|in|is|as|not|and|or|if|while|for|"
              r"print|echo|goto|delete|typeof|sizeof|do|assert|then|when|catch|raise")
"""Words before a name and a `(` that make a call, not a declaration's type."""
_TYPED_DEF = (r"^\s*(?:@[\w.]+(?:\([^()]*\))?\s+)*(?:[a-z]+\s+)*?"
              rf"(?!(?:{_NOT_TYPES})\b)[\w$<>\[\]?,.*&:]+\s+\*?")
"""A declaration with its type first (`bool wasParsed(String name) {`, `static int
count(`): annotations and modifiers, a type, then the name and a `(`."""


def shaped_definitions(query: str, lexical: Sequence[Hit]) -> list[Definition]:
    """The files whose lines found by the lexical engine (`lexical`: its hits and their
    matching lines) declare a name the query names, by the shape of the line (`class
    Name`, `def name`, `fn name`, `bool name(`): the definitions of a language without
    a symbol table (Dart, Erlang, ...) or of files indexed before it had one. For
    `definitions_first` when the symbol table has none (`defining_files` is empty); a
    name declared so in more than `MAX_FILES` files is common."""
    if not lexical or not applies(query):
        return []
    found: dict[tuple[str, str], Definition] = {}
    for name in dict.fromkeys(n for n, _c in named(query)):
        bare = re.escape(name)
        shape = re.compile(rf"(?<![\w$.])(?:{_KEYWORD_DEF}){bare}(?![\w$])"
                           rf"|{_TYPED_DEF}{bare}\s*(?:<[^<>()]*>)?\s*\(")
        files: dict[tuple[str, str], Definition] = {}
        for h in lexical:
            if is_prose(h.path):  # "use the wasParsed() method" is a sentence
                continue
            line = next((m.line for m in h.matches if shape.search(m.text)), None)
            key = (h.repository, h.path)
            if line is not None and key not in files:
                files[key] = Definition(h.repository, h.path, h.language, 1, line, line)
        if len(files) > MAX_FILES:
            continue
        for key, d in files.items():
            seen = found.get(key)
            found[key] = d if seen is None else replace(seen, names=seen.names + 1)
    return sorted(found.values(), key=lambda d: -d.names)


def definitions_first(ranked: Sequence[Hit], files: Sequence[Definition],
                      texts: dict[tuple[str, str], str] | None = None) -> list[Hit]:
    """`ranked` with the defining `files` moved to the front: most names first, then in
    `ranked`'s order, each as its hit holding the definition's line (else its best hit),
    or, for a file no leg found, a hit on the definition found by its symbol (`texts`:
    such files' texts, for the snippet). Unchanged when `files` is empty."""
    if not files:
        return list(ranked)
    top = max((h.score for h in ranked), default=1.0)
    front: list[tuple[int, int, Hit]] = []
    taken: set[int] = set()
    for n_file, d in enumerate(files):
        key = (d.repository, d.path)
        at = [i for i, h in enumerate(ranked) if (h.repository, h.path) == key]
        pick = next((i for i in at if ranked[i].start_line <= d.line <= ranked[i].end_line),
                    at[0] if at else None)
        if pick is not None:  # its engines stay what found it (`--explain` says why)
            taken.add(pick)
            front.append((-d.names, pick, ranked[pick]))
        else:
            lines = (texts or {}).get(key, "").split("\n")
            end = min(d.end_line, d.line + SNIPPET_LINES - 1)
            front.append((-d.names, len(ranked) + n_file, Hit(
                repository=d.repository, path=d.path, language=d.language,
                start_line=d.line, end_line=end, score=top, sources=(MatchSource.SYMBOL,),
                snippet="\n".join(lines[d.line - 1:end]))))
    front.sort(key=lambda x: x[:2])
    n = len(front)
    moved = [replace(h, score=round(max(top, h.score) + 0.001 * (n - i), 4))
             for i, (_c, _r, h) in enumerate(front)]
    return moved + [h for i, h in enumerate(ranked) if i not in taken]


def definition_texts(store: IndexStore, files: Sequence[Definition], ranked: Sequence[Hit]
                     ) -> dict[tuple[str, str], str]:
    """The texts of the defining `files` that no hit of `ranked` holds (for their snippet)."""
    present = {(h.repository, h.path) for h in ranked}
    ids: dict[int, tuple[str, str]] = {}
    for d in files:
        key = (d.repository, d.path)
        if key not in present and (fid := store.file_id(*key)) is not None:
            ids[fid] = key
    if not ids:
        return {}
    return {ids[fid]: text for fid, text in store.file_texts(sorted(ids)).items()}
