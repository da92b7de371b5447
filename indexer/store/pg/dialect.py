"""PostgreSQL's spelling of the search layer's engine-specific predicates: `PgDialect`
(`indexer.store.dialect.Dialect`).

- substring tests with `strpos`; lists bound as one array (`= ANY(?)`);
- `ILIKE` for SQLite's ASCII-case-insensitive `LIKE`, and `lower(column) = ANY(?)` (over the
  `lower(name)` index) for `COLLATE NOCASE`;
- `text_match`: the literal formula as `content ILIKE '%lit%'` tests joined by AND / OR on
  `file_text`, which its `pg_trgm` GIN index answers (it extracts the trigrams of each
  literal, as FTS5's trigram table does; the lexical engine verifies every candidate with
  RE2 afterwards). Case folding of non-ASCII letters follows the database's `LC_CTYPE`.

Pure: no I/O, no driver import.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxd.indexer.store.dialect import Fragment
from ctxd.indexer.store.text_formula import AllOf, Lit, LitQuery, MatchAll


def like_escape(text: str) -> str:
    """`text` as a `LIKE` pattern matching itself (`\\`, `%` and `_` escaped)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class PgDialect:
    """PostgreSQL's predicates (see the module docstring)."""

    name = "postgresql"
    max_params = 30_000

    def contains(self, column: str, text: str, *, fold: bool) -> Fragment:
        target = f"lower({column})" if fold else column
        return f"strpos({target}, ?) > 0", [text]

    def in_values(self, column: str, values: Sequence[int] | Sequence[str]) -> Fragment:
        return f"{column} = ANY(?)", [list(values)]

    def like_nocase(self, column: str, pattern: str) -> Fragment:
        return f"{column} ILIKE ? ESCAPE '\\'", [pattern]

    def in_nocase(self, column: str, names: Sequence[str]) -> Fragment:
        return f"lower({column}) = ANY(?)", [[n.lower() for n in names]]

    def text_match(self, lq: LitQuery, file_id: str) -> Fragment | None:
        if isinstance(lq, MatchAll):
            return None
        cond, params = self._formula(lq)
        return f"{file_id} IN (SELECT file_id FROM file_text WHERE {cond})", params

    def _formula(self, lq: LitQuery) -> Fragment:
        if isinstance(lq, Lit):
            return "content ILIKE ?", [f"%{like_escape(lq.text)}%"]
        if isinstance(lq, MatchAll):
            return "TRUE", []
        parts = [self._formula(c) for c in lq.children]
        op = " AND " if isinstance(lq, AllOf) else " OR "
        return "(" + op.join(p for p, _ in parts) + ")", [v for _, ps in parts for v in ps]

    def describe_text_match(self, lq: LitQuery) -> str:
        match = self.text_match(lq, "f.id")
        if match is None:
            return "pg_trgm: (no literal narrows the text)"
        cond, params = match
        return f"pg_trgm (GIN on file_text.content): {cond} {params!r}"


PG_DIALECT = PgDialect()
