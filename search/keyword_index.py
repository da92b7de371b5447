"""The keyword leg's common-term postings in memory, for exact BM25 over large indexes.

FTS5 scores a query by calling `bm25()` on every row that holds any of its terms, and a
question's common words each hold a large share of the rows (the cost is in
docs/BENCHMARKS.md, issue 18). BM25 is a sum of one contribution per term, so the terms
in at least `min_df` checkpoints are scored here with numpy, from their postings
(checkpoint ids, column-weighted frequencies, row lengths), exactly as `bm25()` scores
them (same N, average length, IDF, k1 and b); rarer terms and phrases stay with the store.

`KeywordPostings` is one immutable snapshot, read by the store in one read transaction
(`IndexStore.keyword_postings`: FTS5's own tables, so its terms are FTS5's tokens and
stems to the letter), valid for one `text_generation()`. `KeywordIndex`, held by the
long-lived service over a SQLite store, builds the next one in a background thread when
the text changes (`search.snapshots`); meanwhile `search.keyword` keeps answering from the
older one, scoring the rows written since with the store and dropping the rows deleted
since. Reads the store only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import partial

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import K1, B, IndexStore
from ctxd.indexer.store.records import TermPostings
from ctxd.search.snapshots import LARGE_INDEX_CHECKPOINTS, Snapshots

__all__ = ["KeywordIndex", "KeywordPostings", "Ranked", "load_postings"]

MIN_DF = 1_000
"""Terms in at least this many checkpoints are scored from memory."""

@dataclass(frozen=True, slots=True)
class KeywordPostings(TermPostings):
    """One snapshot of the common terms' postings (see the module docstring): the store's
    `TermPostings`, scored here."""

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
        if k <= 0:
            return []
        return Ranked(*self.scored(terms, extra)).top(k)

    def scored(self, terms: Sequence[str], extra: Sequence[tuple[int, float]]
               ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]:
        """(rowids, scores) of every row that `terms` and `extra` give a score (see
        `top`), in rowid order."""
        ids = [self.postings[t][0] for t in terms]
        parts = []
        for term in terms:
            docs, freq = self.postings[term]
            df = len(docs)
            idf = math.log((self.rows - df + 0.5) / (df + 0.5))
            f = freq.astype(np.float64)
            norm = K1 * (1 - B + B * self.lengths[docs] / self.avgdl)
            if self.bm25 == "postgresql":  # `pg.keywords._Scorer.score`, in its order
                parts.append((max(idf, 1e-6) * (f * (K1 + 1.0))) / (f + norm))
                continue
            if idf <= 0.0:
                idf = 1e-6
            # the operations of FTS5's fts5Bm25Function, in its order (same rounding)
            parts.append(idf * ((f * (K1 + 1.0)) / (f + norm)))
        if extra:
            ids.append(np.fromiter((i for i, _ in extra), np.int64, len(extra)))
            parts.append(np.fromiter((s for _, s in extra), np.float64, len(extra)))
        if not ids:
            return np.empty(0, np.intp), np.empty(0, np.float64)
        summed = np.bincount(np.concatenate(ids), weights=np.concatenate(parts))
        held = np.flatnonzero(summed)
        return held, summed[held].astype(np.float64, copy=False)


class Ranked:
    """Rows and their scores, read best first (ties by rowid) as far as asked: a page
    that asks again for more rows (`server.search_cases.merged_page`, when identical
    copies collapse) pays the scoring once and a partial sort of what it reads."""

    def __init__(self, ids: npt.NDArray[np.intp], scores: npt.NDArray[np.float64]) -> None:
        self.ids, self.scores = ids, scores
        self._order: npt.NDArray[np.intp] = np.empty(0, np.intp)
        """Indexes into ids/scores of the best rows in order (a prefix of the ranking)."""

    def __len__(self) -> int:
        return len(self.ids)

    def top(self, k: int) -> list[tuple[int, float]]:
        """The `k` best (rowid, score) pairs, best first (ties by rowid)."""
        if k <= 0:
            return []
        order = self._order  # read once: another thread may extend it meanwhile
        if len(order) < min(k, len(self.ids)):
            order = self._best(max(k, 2 * len(order)))
            if len(order) > len(self._order):
                self._order = order
        order = order[:k]
        return [(int(i), float(s)) for i, s in zip(self.ids[order], self.scores[order],
                                                   strict=True)]

    def _best(self, k: int) -> npt.NDArray[np.intp]:
        """The indexes of the k best rows, in order: the k best and every row tied with
        the k-th, then sorted by (-score, rowid)."""
        scores, held = self.scores, np.arange(len(self.ids))
        if k < len(held):
            held = np.flatnonzero(scores >= -np.partition(-scores, k - 1)[k - 1])
        order = np.lexsort((self.ids[held], -scores[held]))[:k]
        out: npt.NDArray[np.intp] = held[order]
        return out


def load_postings(store: IndexStore, min_df: int = MIN_DF) -> KeywordPostings | None:
    """A snapshot of the common terms' postings (`IndexStore.keyword_postings`, in one read
    transaction of `store`'s connection), or None where the store's engine holds none."""
    found = store.keyword_postings(min_df)
    if found is None:
        return None
    return KeywordPostings(**{f.name: getattr(found, f.name) for f in fields(found)})


class KeywordIndex(Snapshots[KeywordPostings]):
    """The long-lived service's keyword postings: the snapshot for the current text, or a
    background build of the next one (`search.snapshots`)."""

    def __init__(self, *, above: int = LARGE_INDEX_CHECKPOINTS, min_df: int = MIN_DF,
                 spacing: float = 4.0) -> None:
        super().__init__(partial(load_postings, min_df=min_df), above=above, spacing=spacing,
                         name="ctxd-keyword-postings")
