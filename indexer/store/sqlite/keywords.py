"""Keyword ranking on SQLite: BM25 over the FTS5 table `chunk_fts` (`KeywordRows`).

`chunk_fts` holds each checkpoint's path, symbol and text as words (porter-stemmed,
camelCase humps split: `indexer.store.words.chunk_fts_row`), written with the checkpoint
by `indexer.store.sqlite.files`. `keyword_scores(terms, ...)` ORs the terms (each quoted: an
identifier that tokenizes to several words is a phrase) into one `MATCH` and ranks by
FTS5's `bm25()` with `COLUMN_WEIGHTS`; `keyword_count(term)` counts the rows holding a
term. `keyword_postings(min_df)` reads the common terms' postings from FTS5's own tables
(its vocabulary, per-row sizes and totals), so that the search layer can score them in
memory exactly as `bm25()` does (`search.keyword_index`); `index_terms(word)` is the keys
they are held under. The `KeywordSearch` seam of `indexer.store.protocol`; the PostgreSQL
store computes the same scores from its full-text columns (`indexer.store.pg.keywords`).

Reads only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxd.indexer.store.protocol import COLUMN_WEIGHTS
from ctxd.indexer.store.records import TermPostings
from ctxd.indexer.store.sqlite.connection import Connection
from ctxd.indexer.store.sqlite.schema import fts_tokens

if TYPE_CHECKING:
    from ctxd.indexer.store.records import Posting

_WEIGHT_SQL = ("CASE col WHEN 'path' THEN {:g} WHEN 'symbol' THEN {:g} ELSE {:g} END"
               .format(*COLUMN_WEIGHTS))


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 MATCH string: every term quoted, ORed (BM25 rewards documents with more)."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints (7 bits a byte, a ninth byte of 8), as FTS5 writes its
    row sizes and totals."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for _ in range(8):
            byte = blob[i]
            i += 1
            value = (value << 7) | (byte & 0x7F)
            if byte < 0x80:
                break
        else:
            value = (value << 8) | blob[i]
            i += 1
        out.append(value)
    return out


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

    def index_terms(self, word: str) -> tuple[str, ...]:
        """The terms `chunk_fts`'s tokenizer makes of `word` (`schema.fts_tokens`)."""
        return fts_tokens(word)

    def keyword_postings(self, min_df: int) -> TermPostings | None:
        """The postings of the terms in at least `min_df` checkpoints, read from FTS5's
        tables in one read transaction of this connection (not inside another one)."""
        import numpy as np  # only where the postings are read: settings and help stay light

        db = self.db
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.ctxd_vocab_row "
                   "USING fts5vocab(main, chunk_fts, 'row')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.ctxd_vocab_instance "
                   "USING fts5vocab(main, chunk_fts, 'instance')")
        db.execute("BEGIN")
        try:
            generation = self.text_generation()
            (averages,) = db.execute("SELECT block FROM chunk_fts_data WHERE id = 1").fetchone()
            totals = _varints(bytes(averages))
            rows = totals[0]
            avgdl = sum(totals[1:]) / rows if rows else 1.0
            top = int(db.execute(
                "SELECT coalesce(max(id), 0) FROM chunk_fts_docsize").fetchone()[0])
            lengths = np.zeros(top + 1, np.float64)
            for rowid, size in db.execute("SELECT id, sz FROM chunk_fts_docsize"):
                lengths[rowid] = sum(_varints(bytes(size)))
            common = [str(t) for (t,) in db.execute(
                "SELECT term FROM temp.ctxd_vocab_row WHERE doc >= ?", (min_df,))]
            postings: dict[str, Posting] = {}
            cursor = db.cursor()
            for term in common:
                found = cursor.execute(
                    f"SELECT doc, sum({_WEIGHT_SQL}) FROM temp.ctxd_vocab_instance "
                    "WHERE term = ? GROUP BY doc", (term,)).fetchall()
                flat = np.fromiter(itertools.chain.from_iterable(found), np.float64,
                                   count=2 * len(found)).reshape(-1, 2)
                freq = flat[:, 1]
                postings[term] = (flat[:, 0].astype(np.int32),
                                  freq.astype(np.uint16 if freq.max() < 2**16 else np.float32))
        finally:
            db.execute("COMMIT")
        return TermPostings(generation, rows, avgdl, lengths, postings)
