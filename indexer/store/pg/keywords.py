"""Keyword ranking in PostgreSQL: BM25 over the checkpoints' `words` (`PgKeywordRows`).

The same scores as FTS5's `bm25()` on SQLite (`indexer.store.keywords`), from the same
words: each term of a question is turned into the index's lexemes by the store's own
`ctxd_words` configuration (porter-stemmed; an identifier that splits into several words is
a phrase, as FTS5 reads a quoted string); the GIN index on `words` finds the checkpoints
holding any of them; their positions and weights (A path, B symbol, D text) give each
term's column-weighted frequency (`COLUMN_WEIGHTS`), and

    score = sum over terms of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avgdl))
    idf = ln((N - df + 0.5) / (df + 0.5)), at least 1e-6

with N and avgdl from `keyword_stats` (kept per repository by the writers), df counted by
the GIN index (once per term and text generation in this process), k1 = 1.2, b = 0.75.
Word splitting and stemming follow PostgreSQL's parser and snowball's porter stemmer, so
a few words stem differently from FTS5's; the ranking is the same formula.

Cost: the rows holding any query term are read and scored (their lexemes filtered in the
database, the sum in Python), like FTS5 does. Reads only. Called through `PgStore` by
`search.keyword`.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from ctxd.indexer.store.pg.connection import PgConnection
from ctxd.indexer.store.pg.schema import TEXT_CONFIG
from ctxd.indexer.store.protocol import COLUMN_WEIGHTS, K1, B

_WEIGHTS = {"A": COLUMN_WEIGHTS[0], "B": COLUMN_WEIGHTS[1], "C": 0.0, "D": COLUMN_WEIGHTS[2]}
_SEPARATORS = re.compile(r"[\W_]+")

_LEXEMES: dict[str, tuple[str, ...]] = {}
_LEXEMES_LOCK = threading.Lock()
_DF: OrderedDict[tuple[str, int, tuple[str, ...]], int] = OrderedDict()
_DF_LOCK = threading.Lock()


def tsquery_of(lexemes: tuple[str, ...]) -> str:
    """One term as `tsquery` text: a lexeme, or a phrase of them (`'a' <-> 'b'`)."""
    return " <-> ".join("'" + lx.replace("'", "''") + "'" for lx in lexemes)


class PgKeywordRows(PgConnection):
    """BM25 over `checkpoints.words` (implements `KeywordSearch`)."""

    def _lexemes(self, terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """Each term's lexemes in order (empty for a term the index cannot hold)."""
        with _LEXEMES_LOCK:
            missing = [t for t in terms if t not in _LEXEMES]
        if missing:
            rows = self._rows(
                "SELECT coalesce((SELECT array_agg(u.lexeme ORDER BY p) FROM unnest(to_tsvector("
                f"'{TEXT_CONFIG}', t.term)) u CROSS JOIN LATERAL unnest(u.positions) p), "
                "'{}') FROM unnest(%s::text[]) WITH ORDINALITY t(term, n) ORDER BY t.n",
                ([_SEPARATORS.sub(" ", t) for t in missing],))
            with _LEXEMES_LOCK:
                for term, (lexemes,) in zip(missing, rows, strict=True):
                    _LEXEMES[term] = tuple(str(x) for x in lexemes)
                if len(_LEXEMES) > 50_000:
                    _LEXEMES.clear()
        with _LEXEMES_LOCK:
            return {t: _LEXEMES.get(t, ()) for t in terms}

    def _doc_frequency(self, lexemes: tuple[str, ...]) -> int:
        """How many checkpoints hold the term (a phrase: its words in a row)."""
        key = (self.location, self.text_generation(), lexemes)
        with _DF_LOCK:
            if key in _DF:
                return _DF[key]
        row = self._one("SELECT count(*) FROM checkpoints WHERE words @@ %s::tsquery",
                        (tsquery_of(lexemes),))
        df = int(row[0]) if row else 0
        with _DF_LOCK:
            _DF[key] = df
            while len(_DF) > 4096:
                _DF.popitem(last=False)
        return df

    def keyword_count(self, term: str) -> int:
        lexemes = self._lexemes([term])[term]
        return self._doc_frequency(lexemes) if lexemes else 0

    def keyword_scores(
        self, terms: Sequence[str], *, where: str = "", params: Sequence[object] = (),
        limit: int | None = None, above: int = 0,
    ) -> list[tuple[int, float]]:
        """(checkpoint id, BM25 score) of the checkpoints holding any term, best first,
        ties by id (see the module docstring)."""
        found = self._lexemes(terms)
        phrases = [found[t] for t in terms if found[t]]  # a term given twice counts twice
        if not phrases:
            return []
        stats = self._one("SELECT coalesce(sum(rows), 0), coalesce(sum(tokens), 0) "
                          "FROM keyword_stats")
        n_rows, n_tokens = (int(stats[0]), int(stats[1])) if stats else (0, 0)
        if n_rows <= 0:
            return []
        avgdl = n_tokens / n_rows if n_tokens else 1.0
        idf = {}
        for p in set(phrases):
            df = self._doc_frequency(p)
            value = math.log((n_rows - df + 0.5) / (df + 0.5))
            idf[p] = value if value > 0.0 else 1e-6
        query = " | ".join(f"({tsquery_of(p)})" for p in dict.fromkeys(phrases))
        lexemes = sorted({lx for p in phrases for lx in p})
        extra = " AND c.id > ?" if above else ""
        rows = self.query(
            "SELECT c.id, c.words_len, u.lexeme, u.positions::int[], u.weights::text[] "
            "FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
            "CROSS JOIN LATERAL unnest(c.words) u "
            f"WHERE c.words @@ ?::tsquery AND u.lexeme = ANY(?){extra} {where}",
            [query, lexemes, *([above] if above else []), *params])
        docs: dict[int, tuple[int, dict[str, dict[int, float]]]] = {}
        for cid, length, lexeme, positions, weights in rows:
            doc = docs.setdefault(int(cid), (int(length), {}))
            doc[1][str(lexeme)] = {int(p): _WEIGHTS[str(w)]
                                   for p, w in zip(positions, weights, strict=True)}
        scored = []
        for cid, (length, held) in docs.items():
            norm = K1 * (1.0 - B + B * length / avgdl)
            score = 0.0
            for p in phrases:
                f = _frequency(p, held)
                if f > 0.0:
                    score += idf[p] * (f * (K1 + 1.0)) / (f + norm)
            if score > 0.0:
                scored.append((cid, score))
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:limit] if limit is not None else scored

    def explain_keywords(self, terms: Sequence[str]) -> str:
        found = self._lexemes(terms)
        query = " | ".join(f"({tsquery_of(found[t])})" for t in terms if found[t])
        return (f"PostgreSQL full text ({TEXT_CONFIG}: porter) on checkpoints.words, BM25 in "
                f"ctxd: {query or '(none)'}")


def _frequency(phrase: tuple[str, ...], held: dict[str, dict[int, float]]) -> float:
    """The column-weighted count of `phrase` in one checkpoint: each occurrence (its words
    at consecutive positions) counts its first word's weight."""
    first = held.get(phrase[0])
    if not first:
        return 0.0
    if len(phrase) == 1:
        return sum(first.values())
    rest = [held.get(lx) for lx in phrase[1:]]
    if any(not r for r in rest):
        return 0.0
    return sum(w for pos, w in first.items()
               if all(pos + i in r for i, r in enumerate(rest, start=1) if r is not None))
