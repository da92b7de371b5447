"""SQLite's spelling of the search layer's engine-specific predicates: `SqliteDialect`
(`indexer.store.dialect.Dialect`), and `SQLITE`, the one instance.

- substring tests with `instr`; lists bound as one JSON array (`json_each`);
- SQLite's `LIKE` (ASCII case-insensitive) and `COLLATE NOCASE`;
- `text_match`: the literal formula as an FTS5 `MATCH` on the trigram table `file_text`.

Pure: no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ctxd.indexer.store.dialect import Fragment
from ctxd.indexer.store.text_formula import LitQuery, MatchAll, to_fts_match


class SqliteDialect:
    """SQLite's predicates: `instr`, `json_each`, `LIKE` (ASCII case-insensitive),
    `COLLATE NOCASE`, and the FTS5 trigram table `file_text`."""

    name = "sqlite"
    max_params = 30_000

    def contains(self, column: str, text: str, *, fold: bool) -> Fragment:
        target = f"lower({column})" if fold else column
        return f"instr({target}, ?) > 0", [text]

    def in_values(self, column: str, values: Sequence[int] | Sequence[str]) -> Fragment:
        return f"{column} IN (SELECT value FROM json_each(?))", [json.dumps(list(values))]

    def like_nocase(self, column: str, pattern: str) -> Fragment:
        return f"{column} LIKE ? ESCAPE '\\'", [pattern]

    def in_nocase(self, column: str, names: Sequence[str]) -> Fragment:
        return f"{column} COLLATE NOCASE IN ({','.join('?' * len(names))})", list(names)

    def text_match(self, lq: LitQuery, file_id: str) -> Fragment | None:
        if isinstance(lq, MatchAll):
            return None
        return (f"{file_id} IN (SELECT rowid FROM file_text WHERE file_text MATCH ?)",
                [to_fts_match(lq)])

    def describe_text_match(self, lq: LitQuery) -> str:
        return f"FTS MATCH: {to_fts_match(lq)}"


SQLITE = SqliteDialect()
"""The SQLite store's dialect (and the default of pure SQL builders)."""
