"""Keyword ranking in PostgreSQL: BM25 over the checkpoints' `words` (`PgKeywordRows`).

The same scores as FTS5's `bm25()` on SQLite (`indexer.store.sqlite.keywords`), from the same
words: each term of a question is turned into the index's lexemes by the store's own
`ctxd_words` configuration (porter-stemmed; an identifier that splits into several words is
a phrase, as FTS5 reads a quoted string); the GIN index on `words` finds the checkpoints
holding them; each one's column-weighted frequency f of a word (`COLUMN_WEIGHTS`: A path,
B symbol, D text) is read from the row's `terms` / `freqs` arrays (one `array_position`),
a phrase's from the positions in `words`, and

    score = sum over terms of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len / avgdl))
    idf = ln((N - df + 0.5) / (df + 0.5)), at least 1e-6

with N and avgdl from `keyword_stats` and a word's df from `keyword_df` (both kept per
repository by the writers, so nothing is counted at query time), a phrase's df counted by
the GIN index (once per term and text generation in this process), k1 = 1.2, b = 0.75.
On a real tree the pages are FTS5's to the fourth decimal
(tests/search/test_keyword_engines.py).

Cost: FTS5 scores every row that holds a query word; so does this while those rows number
at most `SCORED_ROWS`. Past that (common words of a large store) it scores the rows that
hold the rarest terms first and keeps the others out only when they cannot reach the page
(`_ranked`: each term adds at most idf * (k1 + 1), whatever its frequency; a row holding
none of the rare terms and too few of the common ones scores below the k-th best); the
page is then still exact, and when even the rows that might reach it are too many, the
best of those read so far is returned (the note in docs/TEAM.md). A long-lived process
over a large store instead holds the common lexemes' postings (`keyword_postings`, read
once per text generation) and scores those in memory in this scorer's order of
operations (`search.keyword_index`), the rest here. Reads only. Called through
`PgStore` by `search.keyword`.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ctxd.indexer.store.pg.connection import PgConnection
from ctxd.indexer.store.pg.schema import TEXT_CONFIG
from ctxd.indexer.store.protocol import COLUMN_WEIGHTS, K1, B
from ctxd.indexer.store.records import TermPostings

if TYPE_CHECKING:
    from ctxd.indexer.store.records import Posting

SCORED_ROWS = 4_000
"""Rows scored for one query, past which the rarest terms' rows are scored first."""

_WEIGHTS = {"A": COLUMN_WEIGHTS[0], "B": COLUMN_WEIGHTS[1], "C": 0.0, "D": COLUMN_WEIGHTS[2]}
_SEPARATORS = re.compile(r"[\W_]+")

_LEXEMES: dict[str, tuple[str, ...]] = {}
_LEXEMES_LOCK = threading.Lock()
_DF: OrderedDict[tuple[str, int, tuple[str, ...]], int] = OrderedDict()
_DF_LOCK = threading.Lock()

Phrase = tuple[str, ...]
Held = dict[str, dict[int, float]]
"""A checkpoint's query lexemes: lexeme -> {position: weight}."""


def tsquery_of(lexemes: Phrase) -> str:
    """One term as `tsquery` text: a lexeme, or a phrase of them (`'a' <-> 'b'`)."""
    return " <-> ".join("'" + lx.replace("'", "''") + "'" for lx in lexemes)


def any_of(phrases: Sequence[Phrase]) -> str:
    """A `tsquery` matching rows that hold any of `phrases`."""
    return " | ".join(f"({tsquery_of(p)})" for p in dict.fromkeys(phrases))


class PgKeywordRows(PgConnection):
    """BM25 over `checkpoints.words` (implements `KeywordSearch`)."""

    def _lexemes(self, terms: Sequence[str]) -> dict[str, Phrase]:
        """Each term's lexemes in order (empty for a term the index cannot hold)."""
        with _LEXEMES_LOCK:
            missing = [t for t in dict.fromkeys(terms) if t not in _LEXEMES]
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

    def _doc_frequencies(self, phrases: Sequence[Phrase]) -> dict[Phrase, int]:
        """How many checkpoints hold each term: a word's from `keyword_df`, a phrase's (its
        words in a row) counted by the GIN index, once per text generation."""
        words = sorted({p[0] for p in phrases if len(p) == 1})
        out: dict[Phrase, int] = {(w,): 0 for w in words}
        if words:
            out.update(((str(lx),), int(n)) for lx, n in self._rows(
                "SELECT lexeme, sum(df) FROM keyword_df WHERE lexeme = ANY(%s) GROUP BY lexeme",
                (words,)))
        generation = self.text_generation()
        for p in {p for p in phrases if len(p) > 1}:
            key = (self.location, generation, p)
            with _DF_LOCK:
                known = _DF.get(key)
            if known is None:
                row = self._one("SELECT count(*) FROM checkpoints WHERE words @@ %s::tsquery",
                                (tsquery_of(p),))
                known = int(row[0]) if row else 0
                with _DF_LOCK:
                    _DF[key] = known
                    while len(_DF) > 4096:
                        _DF.popitem(last=False)
            out[p] = known
        return out

    def keyword_count(self, term: str) -> int:
        lexemes = self._lexemes([term])[term]
        return self._doc_frequencies([lexemes])[lexemes] if lexemes else 0

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
        df = self._doc_frequencies(phrases)
        idf = {p: max(math.log((n_rows - df[p] + 0.5) / (df[p] + 0.5)), 1e-6) for p in df}
        scorer = _Scorer(phrases, idf, n_tokens / n_rows if n_tokens else 1.0)
        filters = (where, list(params), above)
        if limit is None or sum(df[p] for p in set(phrases)) <= SCORED_ROWS:
            scored = self._score(scorer, set(phrases), filters, None)
        else:
            scored = self._ranked(scorer, df, filters, limit)
        ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))
        return ranked[:limit] if limit is not None else ranked

    def _ranked(self, scorer: _Scorer, df: dict[Phrase, int],
                filters: tuple[str, list[object], int], k: int) -> dict[int, float]:
        """The rows that can make the best `k` (see the module docstring), scored."""
        by_rarity = sorted(set(scorer.phrases), key=lambda p: (df[p], p))
        rare: list[Phrase] = []
        budget = 0
        for p in by_rarity:
            if rare and budget + df[p] > SCORED_ROWS:
                break
            rare.append(p)
            budget += df[p]
        scored = self._score(scorer, set(rare), filters, SCORED_ROWS)
        common = [p for p in by_rarity if p not in rare]
        kth = sorted(scored.values(), reverse=True)[k - 1] if len(scored) >= k else 0.0
        combos = reaching(common, scorer.bound, kth)
        if combos:
            scored.update(self._score(scorer, combos, filters, SCORED_ROWS, exclude=scored))
        return scored

    def _score(self, scorer: _Scorer, select: set[Phrase] | list[tuple[Phrase, ...]],
               filters: tuple[str, list[object], int], cap: int | None,
               exclude: dict[int, float] | None = None) -> dict[int, float]:
        """Scores of the rows holding any of `select` (phrases, or groups of phrases that a
        row must all hold), at most `cap` rows read. A word's frequency comes from the
        row's `terms` / `freqs` arrays; a phrase's from the positions in its `words`."""
        where, params, above = filters
        if isinstance(select, set):
            query = any_of(sorted(select))
        else:
            query = " | ".join("(" + " & ".join(f"({tsquery_of(p)})" for p in group) + ")"
                               for group in select)
        words = sorted({p[0] for p in scorer.phrases if len(p) == 1})
        columns = "".join(", c.freqs[array_position(c.terms, hashtext(?))]" for _w in words)
        rows = self.query(
            f"SELECT c.id, c.words_len{columns} FROM checkpoints c JOIN repos r "
            "ON r.id = c.repo_id WHERE c.words @@ ?::tsquery"
            + (" AND c.id > ?" if above else "") + (" AND c.id <> ALL(?)" if exclude else "")
            + f" {where}" + (" LIMIT ?" if cap is not None else ""),
            [*words, query, *([above] if above else []),
             *([list(exclude)] if exclude else []), *params,
             *([cap] if cap is not None else [])])
        held: dict[int, Held] = {}
        phrases = sorted({p for p in scorer.phrases if len(p) > 1})
        if phrases and rows:  # positions only for the rows holding a phrase
            lexemes = sorted({lx for p in phrases for lx in p})
            for cid, lexeme, positions, weights in self.query(
                    "SELECT c.id, u.lexeme, u.positions::int[], u.weights::text[] FROM "
                    "checkpoints c CROSS JOIN LATERAL unnest(c.words) u WHERE c.id = ANY(?) "
                    "AND c.words @@ ?::tsquery AND u.lexeme = ANY(?)",
                    [[int(r[0]) for r in rows], any_of(phrases), lexemes]):
                held.setdefault(int(cid), {})[str(lexeme)] = {
                    int(p): _WEIGHTS[str(w)] for p, w in zip(positions, weights, strict=True)}
        out = {}
        for row in rows:
            cid = int(row[0])
            freqs: dict[Phrase, float] = {
                (w,): float(f) for w, f in zip(words, row[2:], strict=True) if f}
            score = scorer.score(int(row[1]), freqs, held.get(cid, {}))
            if score > 0.0:
                out[cid] = score
        return out

    def index_terms(self, word: str) -> tuple[str, ...]:
        """The lexemes `ctxd_words` makes of `word`, in order."""
        return self._lexemes([word])[word]

    def keyword_postings(self, min_df: int) -> TermPostings | None:
        """The postings of the lexemes in at least `min_df` checkpoints, read in one
        REPEATABLE READ transaction: each checkpoint's length (`words_len`), and per common
        lexeme the checkpoints holding it with their column-weighted frequency, from the
        `terms` / `freqs` arrays the scoring reads (the first entry of a hash, as
        `array_position` finds it; lexemes whose hashes collide stay with the SQL), read
        `POSTINGS_STEP` checkpoints at a time. N, the average length and the document
        frequencies are the ones `keyword_scores` reads, so scores are the same."""
        import numpy as np  # only where the postings are read: settings and help stay light

        with self.read_snapshot():
            generation = self.text_generation()
            stats = self._one("SELECT coalesce(sum(rows), 0), coalesce(sum(tokens), 0) "
                              "FROM keyword_stats")
            n_rows, n_tokens = (int(stats[0]), int(stats[1])) if stats else (0, 0)
            row = self._one("SELECT coalesce(max(id), 0) FROM checkpoints")
            top = int(row[0]) if row else 0
            lengths = np.zeros(top + 1, np.float64)
            ids, sizes = _numbers(self._one(
                "SELECT array_to_string(array_agg(id), ','), "
                "array_to_string(array_agg(words_len), ',') FROM checkpoints"))
            lengths[ids.astype(np.int64)] = sizes
            by_hash: dict[int, list[str]] = {}
            for lexeme, h in self._rows(
                    "SELECT lexeme, hashtext(lexeme) FROM keyword_df GROUP BY lexeme "
                    "HAVING sum(df) >= %s", (min_df,)):
                by_hash.setdefault(int(h), []).append(str(lexeme))
            common = {h: names[0] for h, names in by_hash.items() if len(names) == 1}
            parts: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {h: [] for h in common}
            for lo in range(0, top, POSTINGS_STEP):
                for h, docs, freqs in self._rows(
                        "SELECT u.t, array_to_string(array_agg(c.id ORDER BY c.id, u.n), ','), "
                        "array_to_string(array_agg(u.f ORDER BY c.id, u.n), ',') FROM "
                        "checkpoints c CROSS JOIN LATERAL unnest(c.terms, c.freqs) WITH "
                        "ORDINALITY u(t, f, n) WHERE c.id > %s AND c.id <= %s AND "
                        "u.t = ANY(%s) GROUP BY u.t",
                        (lo, lo + POSTINGS_STEP, list(common))):
                    parts[int(h)].append(_numbers((docs, freqs)))
        postings: dict[str, Posting] = {}
        for h, found in parts.items():
            if not found:
                continue
            docs = np.concatenate([d for d, _f in found])
            freq = np.concatenate([f for _d, f in found])
            first = np.ones(len(docs), bool)
            first[1:] = docs[1:] != docs[:-1]  # a hash twice in a row: its first entry
            docs, freq = docs[first], freq[first]
            postings[common[h]] = (docs.astype(np.int32), freq.astype(
                np.uint16 if freq.max() < 2**16 and np.all(freq == np.round(freq))
                else np.float32))
        avgdl = n_tokens / n_rows if n_tokens else 1.0
        return TermPostings(generation, n_rows, avgdl, lengths, postings, bm25="postgresql")

    def explain_keywords(self, terms: Sequence[str]) -> str:
        found = self._lexemes(terms)
        query = any_of([found[t] for t in terms if found[t]])
        return (f"PostgreSQL full text ({TEXT_CONFIG}: porter) on checkpoints.words, BM25 in "
                f"ctxd: {query or '(none)'}")


POSTINGS_STEP = 100_000
"""Checkpoint ids read by one statement of `keyword_postings`."""


def _numbers(row: Sequence[object] | None) -> tuple[Any, Any]:
    """Two comma-separated lists of numbers (`array_to_string`) as float64 arrays."""
    import numpy as np

    if row is None or row[0] is None:
        return np.empty(0), np.empty(0)
    return (np.array(str(row[0]).split(","), np.float64),
            np.array(str(row[1]).split(","), np.float64))


class _Scorer:
    """BM25 of one query's terms for any checkpoint (see the module docstring)."""

    def __init__(self, phrases: list[Phrase], idf: dict[Phrase, float], avgdl: float) -> None:
        self.phrases = phrases
        self.idf = idf
        self.avgdl = avgdl

    def bound(self, phrase: Phrase) -> float:
        """The most `phrase` can add to a score (f / (f + x) < 1), times its repeats."""
        return self.idf[phrase] * (K1 + 1.0) * self.phrases.count(phrase)

    def score(self, length: int, words: dict[Phrase, float], held: Held) -> float:
        """BM25 of one checkpoint of `length` tokens: `words`, the frequencies of the
        single-word terms it holds; `held`, the positions of the phrases' words."""
        norm = K1 * (1.0 - B + B * length / self.avgdl)
        total = 0.0
        for p in self.phrases:
            f = words.get(p, 0.0) if len(p) == 1 else frequency(p, held)
            if f > 0.0:
                total += self.idf[p] * (f * (K1 + 1.0)) / (f + norm)
        return total


def reaching(phrases: Sequence[Phrase], bound: Callable[[Phrase], float], kth: float,
             most: int = 64) -> list[tuple[Phrase, ...]]:
    """The smallest groups of `phrases` whose bounds add up to more than `kth`: a row
    holding none of these groups whole cannot score above `kth` on `phrases` alone
    (`bound`: phrase -> its largest contribution). At most `most` groups (then all the
    phrases one by one: every row that holds any)."""
    if not phrases:
        return []
    if kth <= 0.0:
        return [(p,) for p in phrases]
    groups: list[tuple[Phrase, ...]] = []
    for size in range(1, len(phrases) + 1):
        for group in itertools.combinations(phrases, size):
            if any(set(g) <= set(group) for g in groups):
                continue  # a smaller group already covers it
            if sum(bound(p) for p in group) > kth:
                groups.append(group)
                if len(groups) > most:
                    return [(p,) for p in phrases]
    return groups


def frequency(phrase: Phrase, held: Held) -> float:
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
