"""The keyword leg's common-term postings in memory, for exact BM25 over large indexes.

FTS5 answers a BM25 query by calling its `bm25()` function on every row that holds any
query term. A question's common words (`text`, `codes`, `styled` ...) each hold 5-15%
of a million checkpoints, so one question scores ~400k rows: 400 ms, of which 80% is
`bm25()` itself (docs/BENCHMARKS.md, issue 18). BM25 is a sum of one independent
contribution per term, so the same scores can be had in two parts:

- terms in fewer than `min_df` checkpoints (and phrases: identifiers that tokenize to
  several tokens) stay with FTS5, which scores the few rows that hold them;
- every term in at least `min_df` checkpoints has its postings here: the checkpoint
  ids and the term's column-weighted frequency in each (`COLUMN_WEIGHTS`), with every
  checkpoint's length. Its contribution is computed for all its rows at once with
  numpy, exactly as FTS5's `bm25()` computes it (same N, average length, IDF, k1 and
  b), and added to the FTS5 part.

`KeywordPostings` is one immutable snapshot, read from FTS5's own tables (its vocabulary,
its per-row sizes and totals) inside one read transaction, so the terms are FTS5's
tokens and stems to the letter. It is valid for one `Store.text_generation()`;
`KeywordIndex` (held by the long-lived service, like the vector matrix) builds a new
one in a background thread when the text changes (`search.snapshots`). Meanwhile the
older snapshot keeps answering: `search.keyword` scores the rows written since with
FTS5 and drops the rows deleted since, so an edit in a large tree never sends the
keyword leg back to scoring every row.

Called by `search.keyword` (`KeywordPostings.top`) and `server.service` (holds a
`KeywordIndex` over a SQLite store only: it reads FTS5's own tables; a PostgreSQL store
ranks in the database). Reads the store only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import COLUMN_WEIGHTS, K1, B, IndexStore
from ctxd.indexer.store.sqlite.schema import fts_tokens
from ctxd.indexer.store.sqlite.store import Store
from ctxd.search.snapshots import LARGE_INDEX_CHECKPOINTS, Snapshots

__all__ = ["COLUMN_WEIGHTS", "KeywordIndex", "KeywordPostings", "fts_tokens", "load_postings"]

MIN_DF = 1_000
"""Terms in at least this many checkpoints are scored from memory."""

_WEIGHT_SQL = ("CASE col WHEN 'path' THEN {:g} WHEN 'symbol' THEN {:g} ELSE {:g} END"
               .format(*COLUMN_WEIGHTS))


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


@dataclass(frozen=True)
class KeywordPostings:
    """One snapshot of the common terms' postings (see the module docstring)."""

    generation: int
    """The `Store.text_generation()` it was read at."""
    rows: int
    """FTS5's row count (N of the IDF)."""
    avgdl: float
    """FTS5's average row length in tokens, all columns."""
    lengths: npt.NDArray[np.float64]
    """Row length in tokens by rowid."""
    postings: dict[str, tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16 | np.float32]]]
    """Index term -> (rowids, column-weighted frequency in each: whole numbers, uint16
    where they fit)."""
    min_df: int

    @property
    def top_rowid(self) -> int:
        """The largest rowid the snapshot holds (rows past it were written since)."""
        return len(self.lengths) - 1

    @property
    def nbytes(self) -> int:
        return int(self.lengths.nbytes + sum(d.nbytes + f.nbytes
                                             for d, f in self.postings.values()))

    def top(self, terms: Sequence[str], extra: Sequence[tuple[int, float]], k: int
            ) -> list[tuple[int, float]]:
        """The `k` best (rowid, BM25 score) pairs, best first (ties by rowid): `terms`
        (index terms held here; a term given twice counts twice, as in FTS5) scored from
        memory, plus `extra` (rowid, score) parts scored elsewhere. A score is FTS5's
        `-bm25()` of the whole query."""
        ids = [self.postings[t][0] for t in terms]
        parts = []
        for term in terms:
            docs, freq = self.postings[term]
            df = len(docs)
            idf = math.log((self.rows - df + 0.5) / (df + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            f = freq.astype(np.float64)
            # the operations of FTS5's fts5Bm25Function, in its order (same rounding)
            parts.append(idf * ((f * (K1 + 1.0))
                                / (f + K1 * (1 - B + B * self.lengths[docs] / self.avgdl))))
        if extra:
            ids.append(np.fromiter((i for i, _ in extra), np.int64, len(extra)))
            parts.append(np.fromiter((s for _, s in extra), np.float64, len(extra)))
        if not ids or k <= 0:
            return []
        summed = np.bincount(np.concatenate(ids), weights=np.concatenate(parts))
        held = np.flatnonzero(summed)
        scores = summed[held]
        if k < len(held):  # the k best, and every row tied with the k-th (ties by rowid)
            keep = np.flatnonzero(scores >= -np.partition(-scores, k - 1)[k - 1])
            held, scores = held[keep], scores[keep]
        order = np.lexsort((held, -scores))[:k]
        return [(int(held[i]), float(scores[i])) for i in order]


def load_postings(store: IndexStore, min_df: int = MIN_DF) -> KeywordPostings:
    """Read a snapshot from FTS5's tables, in one read transaction of `store`'s
    connection (a SQLite one, not inside another transaction)."""
    assert isinstance(store, Store), "the keyword postings are read from SQLite's FTS5"
    db = store.db
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.ctxd_vocab_row "
               "USING fts5vocab(main, chunk_fts, 'row')")
    db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.ctxd_vocab_instance "
               "USING fts5vocab(main, chunk_fts, 'instance')")
    db.execute("BEGIN")
    try:
        generation = store.text_generation()
        (averages,) = db.execute("SELECT block FROM chunk_fts_data WHERE id = 1").fetchone()
        totals = _varints(bytes(averages))
        rows = totals[0]
        avgdl = sum(totals[1:]) / rows if rows else 1.0
        top = int(db.execute("SELECT coalesce(max(id), 0) FROM chunk_fts_docsize").fetchone()[0])
        lengths = np.zeros(top + 1, np.float64)
        for rowid, size in db.execute("SELECT id, sz FROM chunk_fts_docsize"):
            lengths[rowid] = sum(_varints(bytes(size)))
        common = [str(t) for (t,) in db.execute(
            "SELECT term FROM temp.ctxd_vocab_row WHERE doc >= ?", (min_df,))]
        postings: dict[str, tuple[npt.NDArray[np.int32],
                                  npt.NDArray[np.uint16 | np.float32]]] = {}
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
    return KeywordPostings(generation, rows, avgdl, lengths, postings, min_df)


class KeywordIndex(Snapshots[KeywordPostings]):
    """The long-lived service's keyword postings: the snapshot for the current text, or a
    background build of the next one (`search.snapshots`)."""

    def __init__(self, *, above: int = LARGE_INDEX_CHECKPOINTS, min_df: int = MIN_DF,
                 spacing: float = 4.0) -> None:
        super().__init__(partial(load_postings, min_df=min_df), above=above, spacing=spacing,
                         name="ctxd-keyword-postings")
