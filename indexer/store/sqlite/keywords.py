"""Keyword ranking on SQLite: BM25 over the FTS5 table `chunk_fts` (`KeywordRows`).

`chunk_fts` holds each checkpoint's path, symbol and text as words (porter-stemmed,
camelCase humps split: `schema.chunk_fts_row`), written with the checkpoint by
`indexer.store.files`. `keyword_scores(terms, ...)` ORs the terms (each quoted: an
identifier that tokenizes to several words is a phrase) into one `MATCH` and ranks by
FTS5's `bm25()` with `COLUMN_WEIGHTS`; `keyword_count(term)` counts the rows holding a
term. The `KeywordSearch` seam of `indexer.store.protocol`; the PostgreSQL store computes
the same scores from its full-text columns (`indexer.store.pg.keywords`).

Reads only. Called through `Store` by `search.keyword`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxd.indexer.store.protocol import COLUMN_WEIGHTS
from ctxd.indexer.store.sqlite.connection import Connection


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string: every term quoted, ORed (BM25 rewards documents with more)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class KeywordRows(Connection):
    """BM25 over `chunk_fts` (implements `KeywordSearch`)."""

    def keyword_scores(
        self, terms: Sequence[str], *, where: str = "", params: Sequence[object] = (),
        limit: int | None = None, above: int = 0,
    ) -> list[tuple[int, float]]:
        """(checkpoint id, -bm25) of the checkpoints holding any term, best first, ties by
        id; `where` filters them (an `AND ...` on `checkpoints c` and `repos r`)."""
        if not terms:
            return []
        w = COLUMN_WEIGHTS
        ranked = (f"SELECT rowid, bm25(chunk_fts, {w[0]}, {w[1]}, {w[2]}) AS s FROM chunk_fts "
                  "WHERE chunk_fts MATCH ?" + (" AND rowid > ?" if above else ""))
        args: list[object] = [match_expression(terms), *([above] if above else [])]
        tail = " LIMIT ?" if limit is not None else ""
        if where:
            # Filters need the joined rows: rank every match, then filter.
            sql = (f"SELECT t.rowid, t.s FROM ({ranked}) t JOIN checkpoints c ON c.id = t.rowid "
                   f"JOIN repos r ON r.id = c.repo_id WHERE TRUE {where} ORDER BY t.s, t.rowid"
                   + tail)
            args += params
        else:
            sql = ranked + " ORDER BY s, rowid" + tail
        if limit is not None:
            args.append(limit)
        return [(int(i), -float(s)) for i, s in self.db.execute(sql, args)]

    def keyword_count(self, term: str) -> int:
        """How many checkpoints hold `term` (a phrase when it tokenizes to several words)."""
        row = self.db.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                              (match_expression([term]),)).fetchone()
        return int(row[0])

    def explain_keywords(self, terms: Sequence[str]) -> str:
        return f"FTS5 MATCH on chunk_fts: {match_expression(terms) if terms else '(none)'}"
