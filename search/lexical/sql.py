"""Candidate conditions for the embedded lexical engine: SQL over `files`, built purely.

Each query atom becomes a `Cond` on `files f` that every file matching the atom
satisfies; `render_cond(cond, dialect)` turns a tree of them into a `WHERE` clause with
bound parameters (user text never enters the SQL text), asking the store's
`indexer.store.dialect.Dialect` for what its engine spells its own way. Kinds of
condition:

- content regex -> the files whose text holds the literals every match contains
  (`required_literals`), through the store's trigram index (`Dialect.text_match`: an FTS5
  `MATCH`, or `ILIKE` tests served by `pg_trgm`); adjacent text conditions under AND/OR
  merge into one;
- path regex -> substring tests on `files.path` (`Dialect.contains`: `instr` / `strpos`);
- id or name sets (`sym:`, `repo:`) -> `Dialect.in_values` (one bound list);
- `lang:` -> `lower(f.language) IN (...)` over `normalize_language` ids.

A condition is `exact` when it is equivalent to its atom (a plain case-insensitive
ASCII literal, a language, a repository set): only exact conditions may be negated;
a negated inexact one becomes TRUE. It is `selective` when it narrows by text
(trigrams, paths, symbols) rather than only by repository or language: a query
that needs file content but has no selective condition is scanned with a byte
budget. Nothing is ever matched with `LIKE` over the text table.

Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from ctxd.indexer.chunk.languages import normalize_language
from ctxd.indexer.store.dialect import Dialect
from ctxd.indexer.store.sqlite.dialect import SQLITE
from ctxd.search.lexical.query import Branch, Const, Field, Lang, Meta, Node, RepoFlag, Text
from ctxd.search.lexical.regex_trigrams import (
    MATCH_ALL,
    AllOf,
    Lit,
    LitQuery,
    MatchAll,
    all_of,
    any_of,
    fold_ascii,
    literal_text,
    required_literals,
)


def language_names(name: str) -> frozenset[str]:
    """The `files.language` ids that `lang:name` matches: the id of the name or alias
    (`py`, `golang`, `C++` ...), or none for an unknown language (as Zoekt: no error)."""
    lang = normalize_language(name)
    return frozenset({lang}) if lang is not None else frozenset()


class CondOp(StrEnum):
    """The kind of a candidate condition."""

    SQL = "sql"
    """A SQL fragment both engines speak, with bound parameters (`sql`, `params`)."""
    CONTAINS = "contains"
    """The column `sql` holds the text `params[0]` (its lowercase with `fold`)."""
    IN_VALUES = "in"
    """The column `sql` is one of `params`."""
    FTS = "fts"
    """The file's text holds the literal formula `lq` (the store's trigram index)."""
    AND = "and"
    """Every child holds."""
    OR = "or"
    """Some child holds."""
    NOT = "not"
    """The (exact) child does not hold."""
    TRUE = "true"
    """No restriction."""
    FALSE = "false"
    """No file can match."""


@dataclass(frozen=True, slots=True)
class Cond:
    """A SQL condition on `files f` that every matching file satisfies.

    `exact`: the condition is equivalent to the atom (so it may be negated);
    `selective`: it narrows by text (trigrams, paths, symbols), not only by
    repository or language.
    """

    op: CondOp
    sql: str = ""
    params: tuple[Any, ...] = ()
    lq: LitQuery = MATCH_ALL
    children: tuple[Cond, ...] = ()
    exact: bool = True
    selective: bool = False
    fold: bool = False
    """`CONTAINS` on the lowercased column."""


def c_true(exact: bool = True) -> Cond:
    return Cond(CondOp.TRUE, exact=exact)


C_FALSE = Cond(CondOp.FALSE, selective=True)


def c_and(children: Iterable[Cond]) -> Cond:
    """AND: constants folded, FTS conditions merged into one MATCH."""
    kids = list(children)
    exact = all(c.exact for c in kids)
    if any(c.op == CondOp.FALSE for c in kids):
        return replace(C_FALSE, exact=exact)
    kids = [c for c in kids if c.op != CondOp.TRUE]
    fts = [c for c in kids if c.op == CondOp.FTS]
    if len(fts) > 1:
        merged = Cond(
            CondOp.FTS,
            lq=all_of(c.lq for c in fts),
            exact=all(c.exact for c in fts),
            selective=True,
        )
        kids = [merged] + [c for c in kids if c.op != CondOp.FTS]
    if not kids:
        return c_true(exact)
    if len(kids) == 1:
        return replace(kids[0], exact=exact)
    return Cond(
        CondOp.AND, children=tuple(kids), exact=exact, selective=any(c.selective for c in kids)
    )


def c_or(children: Iterable[Cond]) -> Cond:
    """OR: one TRUE child makes it TRUE; all-FTS children merge into one MATCH."""
    kids = list(children)
    exact = all(c.exact for c in kids)
    if any(c.op == CondOp.TRUE for c in kids):
        return c_true(exact)
    kids = [c for c in kids if c.op != CondOp.FALSE]
    if not kids:
        return replace(C_FALSE, exact=exact)
    if len(kids) > 1 and all(c.op == CondOp.FTS for c in kids):
        return Cond(CondOp.FTS, lq=any_of(c.lq for c in kids), exact=exact, selective=True)
    if len(kids) == 1:
        return replace(kids[0], exact=exact)
    return Cond(
        CondOp.OR, children=tuple(kids), exact=exact, selective=all(c.selective for c in kids)
    )


def c_not(child: Cond) -> Cond:
    """NOT: only an exact condition can be negated; otherwise nothing is known (TRUE)."""
    if not child.exact:
        return c_true(exact=False)
    if child.op == CondOp.TRUE:
        return C_FALSE
    if child.op == CondOp.FALSE:
        return c_true()
    return Cond(CondOp.NOT, children=(child,))


def render_cond(cond: Cond, dialect: Dialect = SQLITE) -> tuple[str, list[Any]]:
    """The SQL text (for `WHERE`) and its bound parameters, in `dialect`."""
    if cond.op == CondOp.TRUE:
        return "TRUE", []
    if cond.op == CondOp.FALSE:
        return "FALSE", []
    if cond.op == CondOp.SQL:
        return cond.sql, list(cond.params)
    if cond.op == CondOp.CONTAINS:
        return dialect.contains(cond.sql, str(cond.params[0]), fold=cond.fold)
    if cond.op == CondOp.IN_VALUES:
        return dialect.in_values(cond.sql, list(cond.params))
    if cond.op == CondOp.FTS:
        match = dialect.text_match(cond.lq, "f.id")
        return match if match is not None else ("TRUE", [])
    parts = [render_cond(c, dialect) for c in cond.children]
    params = [p for _, ps in parts for p in ps]
    if cond.op == CondOp.NOT:
        return f"NOT ({parts[0][0]})", params
    joiner = " AND " if cond.op == CondOp.AND else " OR "
    return "(" + joiner.join(s for s, _ in parts) + ")", params


def _instr_cond(lq: LitQuery, column: str) -> Cond:
    """`instr(lower(column), lit)` tests for a literal formula (ASCII literals only)."""
    if isinstance(lq, MatchAll):
        return c_true(exact=False)
    if isinstance(lq, Lit):
        if not lq.text.isascii():
            return c_true(exact=False)
        return Cond(CondOp.CONTAINS, sql=column, params=(lq.text,), fold=True, exact=False,
                    selective=True)
    kids = [_instr_cond(c, column) for c in lq.children]
    out = c_and(kids) if isinstance(lq, AllOf) else c_or(kids)
    return replace(out, exact=False)


def path_cond(pattern: str, case_sensitive: bool, column: str = "f.path") -> Cond:
    """A condition on a path (or name) column for a regex; exact for plain literals."""
    lit = literal_text(pattern)
    if lit:
        if case_sensitive:
            return Cond(CondOp.CONTAINS, sql=column, params=(lit,), selective=True)
        if lit.isascii():
            return Cond(CondOp.CONTAINS, sql=column, params=(fold_ascii(lit),), fold=True,
                        selective=True)
    return _instr_cond(required_literals(pattern), column)


def content_cond(pattern: str, case_sensitive: bool) -> Cond:
    """An FTS trigram condition for a content regex; exact for case-insensitive ASCII text."""
    lq = required_literals(pattern)
    if isinstance(lq, MatchAll):
        return c_true(exact=False)
    lit = literal_text(pattern)
    exact = lit is not None and len(lit) >= 3 and lit.isascii() and not case_sensitive
    return Cond(CondOp.FTS, lq=lq, exact=exact, selective=True)


def text_cond(node: Text) -> Cond:
    """A text atom: content (FTS), path (instr), or either for a bare term."""
    if node.field == Field.CONTENT:
        return content_cond(node.pattern, node.case_sensitive)
    if node.field == Field.PATH:
        return path_cond(node.pattern, node.case_sensitive)
    return c_or(
        [
            content_cond(node.pattern, node.case_sensitive),
            path_cond(node.pattern, node.case_sensitive),
        ]
    )


def fact_cond(node: Node) -> Cond:
    """Atoms about file or repository facts: `lang:`, `b:`, `meta.`, `archived:` ..., constants.

    Plain-directory repositories have no branches or metadata, and are private, not
    forks and not archived (as Zoekt treats repositories without a `RawConfig`).
    """
    if isinstance(node, Lang):
        names = sorted(language_names(node.name))
        if not names:
            return C_FALSE
        marks = ", ".join("?" for _ in names)
        return Cond(CondOp.SQL, sql=f"lower(f.language) IN ({marks})", params=tuple(names))
    if isinstance(node, RepoFlag):
        return c_true() if node.value is False else C_FALSE
    if isinstance(node, Const):
        return c_true() if node.value else C_FALSE
    if isinstance(node, Branch | Meta):
        return C_FALSE
    raise TypeError(f"not a fact atom: {node!r}")


def id_list_cond(column: str, ids: Iterable[int], selective: bool) -> Cond:
    """`column IN (ids)`, the ids bound as one list (no limit on their number)."""
    values = sorted(set(ids))
    if not values:
        return C_FALSE
    return Cond(CondOp.IN_VALUES, sql=column, params=tuple(values), selective=selective)
