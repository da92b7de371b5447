"""The literal formula a text query needs: `Lit`, `AllOf`, `AnyOf`, `MatchAll` (`LitQuery`).

What the embedded lexical engine asks the store's trigram index for: the literal strings
(at least 3 characters, ASCII-lowercased) that every matching file's text contains, as a
boolean formula. The search layer computes it from a regular expression
(`search.lexical.regex_trigrams.required_literals`, which re-exports these types); each
engine's `indexer.store.dialect.Dialect` turns it into its own condition (an FTS5 trigram
`MATCH` on SQLite, `ILIKE` tests served by a `pg_trgm` GIN index on PostgreSQL).

Plain frozen dataclasses, no I/O; here, below the search layer, so that the store's
dialects can read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lit:
    """The text must contain this string (ASCII-lowercased, >= 3 characters)."""

    text: str


@dataclass(frozen=True, slots=True)
class AllOf:
    """The text must satisfy every child."""

    children: tuple[LitQuery, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """The text must satisfy at least one child."""

    children: tuple[LitQuery, ...]


@dataclass(frozen=True, slots=True)
class MatchAll:
    """No usable requirement: every text is a candidate."""


MATCH_ALL = MatchAll()

LitQuery = Lit | AllOf | AnyOf | MatchAll


def fts_quote(text: str) -> str:
    """An FTS5 string literal: double quotes, inner quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def to_fts_match(lq: LitQuery) -> str | None:
    """The FTS5 `MATCH` expression for the formula; None for `MatchAll`."""
    if isinstance(lq, MatchAll):
        return None
    if isinstance(lq, Lit):
        return fts_quote(lq.text)
    op = " AND " if isinstance(lq, AllOf) else " OR "
    parts = [to_fts_match(c) for c in lq.children]
    return "(" + op.join(p for p in parts if p is not None) + ")"
