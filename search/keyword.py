"""Keyword search: a question's words, BM25-ranked over the checkpoint word index.

`keyword_search(store, question, filters, limit)` turns a natural-language question
into its content words and identifiers (`keyword_terms`, pure) and asks the store for the
checkpoints holding any of them, ranked by BM25 with the path and symbol weighted above the
body (`IndexStore.keyword_scores`: FTS5's `bm25()` over `chunk_fts` on SQLite, the same
formula over the full-text columns on PostgreSQL; porter-stemmed words, camelCase humps
split), then reads those checkpoints. This is the keyword leg of hybrid ranking.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.words import split_identifiers
from ctxd.search.filters import SearchFilters
from ctxd.search.keyword_index import KeywordPostings, Ranked
from ctxd.search.lru import Lru
from ctxd.search.models import Hit, LineMatch, MatchSource

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been
    before being below between both but by can could did do does doing down during each few
    for from further get gets got had has have having he her here hers how i if in into is it
    its itself just let lets like make makes me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them then
    there these they this those through to too under until up use used uses using very via
    want wants was way we were what when where which while who whom why will with without
    would you your yours e g eg ie etc instead something someone thing things one two another
    does doesn isn t s whether happen happens work works""".split()
)
"""English function words that carry no evidence in code search."""

_WORD = re.compile(r"[vV]?\d+(?:\.\d+)+|[A-Za-z_][A-Za-z0-9_]*|\d+")
"""An identifier, or a number or version (`404`, `3.1.0`: a phrase of its numbers in the
index, whose tokenizer cuts at the dots)."""


def keyword_terms(question: str) -> list[str]:
    """Distinct lowercase search terms of a question: content words and identifier parts.

    `Retry.increment is_exhausted` -> retry, increment, is_exhausted, exhausted, ...;
    numbers of two digits or more and versions are terms (`404`, `3.1.0`: the index holds
    them as words); stop words and one-letter words are dropped.
    """
    seen: dict[str, None] = {}
    for word in _WORD.findall(question):
        pieces = [word, *word.split("_"), *split_identifiers(word).split()]
        for p in pieces:
            t = p.lower()
            if len(t) >= 2 and t not in STOPWORDS:
                seen.setdefault(t, None)
    return list(seen)


PRUNE_ABOVE_CHECKPOINTS = 20_000
"""Only indexes larger than this pay the per-term document counts of `informative_terms`."""


def informative_terms(store: IndexStore, terms: list[str],
                      postings: KeywordPostings | None = None) -> list[str]:
    """The terms that can move a BM25 ranking.

    FTS5's BM25 gives a term found in more than half of the documents an IDF of ~0
    (clamped to 1e-6), so such terms change no ranking but make every query score almost
    every checkpoint. In large indexes they are dropped (the rarest term is always kept).
    """
    if len(terms) < 2:
        return terms
    total = store.max_checkpoint_id()
    if total <= PRUNE_ABOVE_CHECKPOINTS:
        return terms
    # Hybrid search asks twice per query (its keyword leg, then the page's line matches):
    # the counts depend on the indexed text only, so they are kept per text generation.
    key = (store.location, store.text_generation(), tuple(terms))
    if (held := _PRUNED.get(key)) is not None:
        return list(held)
    total = _checkpoint_total(store, key[1])
    df = {t: term_count(store, t, postings) for t in terms}
    kept = [t for t in terms if df[t] <= total / 2] or [min(terms, key=lambda t: df[t])]
    _PRUNED.put(key, tuple(kept))
    return kept


def term_count(store: IndexStore, term: str, postings: KeywordPostings | None = None) -> int:
    """How many checkpoints hold `term` (from the postings in memory when they hold it)."""
    if postings is not None:
        tokens = store.index_terms(term)
        if len(tokens) == 1 and tokens[0] in postings.postings:
            return len(postings.postings[tokens[0]][0])
    return store.keyword_count(term)


_PRUNED: Lru[tuple[str, int, tuple[str, ...]], tuple[str, ...]] = Lru(256)
"""`informative_terms` answers of large indexes (the newest 256)."""


def _checkpoint_total(store: IndexStore, generation: int) -> int:
    """`store.checkpoint_total()` (a count of every row: ~40 ms at 1M checkpoints), once
    per index and text generation."""
    key = (store.location, generation)
    total = _TOTALS.get(key)
    if total is None:
        total = store.checkpoint_total()
        _TOTALS.put(key, total)
    return total


_TOTALS: Lru[tuple[str, int], int] = Lru(16)


def keyword_search(
    store: IndexStore,
    question: str,
    *,
    filters: SearchFilters | None = None,
    limit: int = 10,
    offset: int = 0,
    with_matches: bool = True,
    postings: KeywordPostings | None = None,
    terms: Sequence[str] | None = None,
) -> list[Hit]:
    """The checkpoints best matching the question's words by BM25, best first.

    `with_matches=False` leaves `Hit.matches` empty (hybrid search fills them in for
    the hits it returns only; see `add_line_matches`). `postings`: the common terms'
    postings in memory (`search.keyword_index`, SQLite only); while they are current for
    this store's text the ranking is the same with or without them (see `_from_postings`
    for older ones). `terms`: the question's keyword terms when the caller split it
    already (`search.parsed.ParsedQuery.terms`)."""
    filters = filters or SearchFilters()
    where, params = filters.sql()
    asked = keyword_terms(question) if terms is None else list(terms)
    if postings is not None and not where and not filters.path_glob:
        return _from_postings(store, asked, postings, limit=limit, offset=offset,
                              with_matches=with_matches)
    terms = informative_terms(store, asked)
    if not terms:
        return []
    path_ok = filters.path_matcher()
    want = offset + limit
    fetch = want * 4 if filters.path_glob else want
    page, scored = _page_scores(store, terms, where, params, fetch)
    made = page.hits(store, scored)
    hits = [h for cid, _s in scored if (h := made.get(cid)) is not None and path_ok(h.path)]
    if with_matches:
        matches = _LineMatches(term_pattern(terms))
        return [replace(h, matches=matches(h.snippet, h.start_line))
                for h in hits[offset:want]]
    return hits[offset:want]


PAGE_DEPTH = 256
"""Rows the store ranks at least when a page asks (see `_page_scores`)."""


def _page_scores(store: IndexStore, terms: list[str], where: str, params: list[object],
                 fetch: int) -> tuple[_Page, list[tuple[int, float]]]:
    """`store.keyword_scores(terms, ..., limit=fetch)`, from one ranking for the fetches
    of one page, and the `_Page` that reads its rows once: `merged_page` asks again with
    twice as many rows each time identical copies collapse and leave the page short (at
    1M checkpoints a text has ~160 copies, so a page reads thousands of rows), so the
    store ranks `PAGE_DEPTH` rows at least, then 4x the previous depth, and each fetch
    takes the head of that ranking. FTS5's ranking is exact, so the head of a deeper one
    is the same; PostgreSQL's prunes by the depth asked (`indexer.store.pg.keywords`), so
    its pages come from the deeper ranking."""
    key = (store.location, store.text_generation(), tuple(terms), where,
           tuple(map(str, params)))
    held = _SCORES.get(key)
    if held is None or (held[0] < fetch and len(held[1].ranked) >= held[0]):
        depth = max(fetch, PAGE_DEPTH, 4 * held[0] if held else 0)
        ranked = _Listed(store.keyword_scores(terms, where=where, params=params, limit=depth))
        held = (depth, _Page(ranked))
        _SCORES.put(key, held)
    return held[1], held[1].ranked.top(fetch)


class _Listed:
    """A ranking the store gave as a list (`_Page.ranked` for `_page_scores`)."""

    def __init__(self, scores: list[tuple[int, float]]) -> None:
        self.scores = scores

    def __len__(self) -> int:
        return len(self.scores)

    def top(self, k: int) -> list[tuple[int, float]]:
        return self.scores[:k]


_SCORES: Lru[tuple[str, int, tuple[str, ...], str, tuple[str, ...]],
             tuple[int, _Page]] = Lru(4)
"""The newest pages' rankings by the store: (depth asked, the page)."""


def _rows_by_id(store: IndexStore, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """Checkpoint id -> (repository, path, language, start, end, symbol, text, id)."""
    return store.checkpoint_rows(ids)


def _hit(row: tuple[Any, ...], words: re.Pattern[str] | None) -> Hit:
    """A keyword hit from (bm25, repo, path, language, start, end, symbol, text, id)."""
    s, repo, path, lang, start, end, symbol, text, cid = row
    return Hit(
        repository=str(repo),
        path=str(path),
        language=str(lang),
        start_line=int(start),
        end_line=int(end),
        score=round(-float(s), 4),
        sources=(MatchSource.KEYWORD,),
        symbol=symbol,
        snippet=str(text),
        matches=line_matches(str(text), int(start), words) if words else (),
        checkpoint=int(cid),
    )


def _from_postings(store: IndexStore, asked: list[str], postings: KeywordPostings, *,
                   limit: int, offset: int, with_matches: bool) -> list[Hit]:
    """`keyword_search` without filters, its common terms scored from memory and the rest
    by FTS5 (`search.keyword_index`): the same BM25 scores, without FTS5 scoring every
    row that holds a common word.

    Postings older than the text (a rebuild is under way) still answer: rows written
    since are scored by FTS5 for the common terms too, rows deleted since are dropped, and
    the common terms keep the snapshot's statistics (N, document frequency, average
    length) until the rebuild, which moves scores by parts in ten thousand."""
    terms = informative_terms(store, asked, postings)
    if not terms:
        return []
    held, held_words, rare = [], [], []
    for term in terms:
        tokens = store.index_terms(term)
        if len(tokens) == 1 and tokens[0] in postings.postings:
            held.append(tokens[0])
            held_words.append(term)
        else:
            rare.append(term)
    generation = store.text_generation()
    page = _page(store, postings, generation, held, held_words, rare)
    stale = postings.generation != generation
    want = offset + limit
    k = want + 16 if stale else want  # rows deleted since the snapshot drop out below
    while True:
        top = page.ranked.top(k)
        hits = page.hits(store, top)
        if len(hits) >= want or len(top) < k:
            break
        k *= 4
    page_hits = [hits[cid] for cid, _score in top if cid in hits][offset:want]
    if with_matches:
        matches = _LineMatches(term_pattern(terms))
        return [replace(h, matches=matches(h.snippet, h.start_line)) for h in page_hits]
    return page_hits


class _Page:
    """One question's ranking over the postings, and the hits made for it so far (without
    line matches): the fetches of one page (`merged_page` asks for twice as many rows each
    time copies leave it short) score once and read each row once. Valid for one text
    generation and postings snapshot (its key in `_PAGES`)."""

    def __init__(self, ranked: Ranked | _Listed) -> None:
        self.ranked = ranked
        self._hits: dict[int, Hit] = {}
        self._lock = threading.Lock()

    def hits(self, store: IndexStore, top: list[tuple[int, float]]) -> dict[int, Hit]:
        """The hits of the rows of `top` (rowid, score) that exist, each read once."""
        with self._lock:
            known = {i: h for i, _s in top if (h := self._hits.get(i)) is not None}
        missing = [(i, s) for i, s in top if i not in known]
        if missing:
            rows = _rows_by_id(store, [i for i, _s in missing])
            made = {i: _hit((-s, *rows[i]), None) for i, s in missing if i in rows}
            known.update(made)
            with self._lock:
                if len(self._hits) + len(made) > _PAGE_ROWS:
                    self._hits = {}
                self._hits.update(known)
        return known


_PAGE_ROWS = 50_000
"""Hits one `_Page` keeps at most (then only the last fetch's)."""


def _page(store: IndexStore, postings: KeywordPostings, generation: int, held: list[str],
          held_words: list[str], rare: list[str]) -> _Page:
    """The `_Page` of these terms for the store's text at `generation` (made on first
    use)."""
    key = (store.location, generation, postings.generation, postings.top_rowid,
           tuple(held), tuple(rare))
    page = _PAGES.get(key)
    if page is None:
        extra = list(_rare_scores(store, rare)) if rare else []  # a copy: extended below
        if postings.generation != generation and held:
            # rows written since the snapshot: their common terms from FTS5
            extra += store.keyword_scores(held_words, above=postings.top_rowid)
        page = _Page(Ranked(*postings.scored(held, extra)))
        _PAGES.put(key, page)
    return page


_PAGES: Lru[tuple[str, int, int, int, tuple[str, ...], tuple[str, ...]], _Page] = Lru(4)
"""The newest pages' rankings and hits (a ranking holds a score for every row holding a
common term of the question: up to 12 bytes a checkpoint)."""


def _rare_scores(store: IndexStore, rare: list[str]) -> list[tuple[int, float]]:
    """`store.keyword_scores(rare)`, kept per index file, text generation and terms: a
    keyword page asks again with more rows each time merging leaves it short
    (`server.search_cases.merged_page`), and these scores do not depend on how many."""
    key = (store.location, store.text_generation(), tuple(rare))
    scores = _RARE.get(key)
    if scores is None:
        scores = store.keyword_scores(rare)
        _RARE.put(key, scores)
    return scores


_RARE: Lru[tuple[str, int, tuple[str, ...]], list[tuple[int, float]]] = Lru(16)
"""The newest `_rare_scores` answers."""


def keyword_line_matches(store: IndexStore, question: str, hits: list[Hit], *,
                         filters: SearchFilters | None = None,
                         postings: KeywordPostings | None = None,
                         terms: Sequence[str] | None = None) -> list[Hit]:
    """`hits` of `keyword_search(..., with_matches=False)` with the line matches that
    `keyword_search` itself would have given them (the same terms: the same choice of
    postings), for a caller that needs them on some of its hits only. `terms`: the
    question's keyword terms when the caller split it already."""
    filters = filters or SearchFilters()
    where, _params = filters.sql()
    held = postings if postings is not None and not where and not filters.path_glob else None
    asked = keyword_terms(question) if terms is None else list(terms)
    terms = informative_terms(store, asked, held)
    if not terms:
        return hits
    words = term_pattern(terms)
    matches = _LineMatches(words)
    return [replace(h, matches=matches(h.snippet, h.start_line)) for h in hits]


def add_line_matches(store: IndexStore, question: str, hits: list[Hit],
                     postings: KeywordPostings | None = None, *,
                     terms: Sequence[str] | None = None) -> list[Hit]:
    """`hits` with the lines that hold the question's keyword terms (`terms` when the
    caller split it already), for the hits the keyword leg found that carry no matches
    yet."""
    todo = [h for h in hits if MatchSource.KEYWORD in h.sources and not h.matches]
    if not todo:
        return hits
    asked = keyword_terms(question) if terms is None else list(terms)
    terms = informative_terms(store, asked, postings)
    if not terms:
        return hits
    matches = _LineMatches(term_pattern(terms))
    return [replace(h, matches=matches(h.snippet, h.start_line))
            if MatchSource.KEYWORD in h.sources and not h.matches else h for h in hits]


class _LineMatches:
    """`line_matches` with `words`, once per distinct text and first line: identical
    copies of a checkpoint (a page's hits hold many) share their matches, moved to their
    lines when they start elsewhere."""

    def __init__(self, words: re.Pattern[str]) -> None:
        self.words = words
        self._known: dict[tuple[str, int], tuple[LineMatch, ...]] = {}

    def __call__(self, text: str, first_line: int) -> tuple[LineMatch, ...]:
        found = self._known.get((text, first_line))
        if found is None:
            relative = self._known.get((text, 0))
            if relative is None:
                relative = self._known[(text, 0)] = line_matches(text, 0, self.words)
            found = self._known[(text, first_line)] = tuple(
                LineMatch(m.line + first_line, m.text, m.ranges) for m in relative)
        return found


def term_pattern(terms: list[str]) -> re.Pattern[str]:
    """Words starting with any term, case-insensitively (`redirect` finds `redirects`,
    as the porter-stemmed index does)."""
    numbers = [t for t in terms if t[:1].isdigit()]  # a number matches itself only
    words = [t for t in terms if not t[:1].isdigit()]
    parts = []
    if words:
        alternatives = "|".join(re.escape(t) for t in sorted(words, key=len, reverse=True))
        parts.append(rf"(?<![A-Za-z0-9])(?:{alternatives})[A-Za-z0-9]*")
    if numbers:
        alternatives = "|".join(re.escape(t) for t in sorted(numbers, key=len, reverse=True))
        parts.append(rf"(?<![A-Za-z0-9.])(?:{alternatives})(?![0-9]|\.[0-9])")
    pattern = re.compile("|".join(parts) or "(?!)", re.IGNORECASE)
    if terms and all(t.isascii() for t in terms):
        with _PATTERN_LOCK:  # every alternative starts with one of the terms
            _PATTERN_TERMS[pattern.pattern] = tuple(t.lower() for t in terms)
            while len(_PATTERN_TERMS) > 256:
                del _PATTERN_TERMS[next(iter(_PATTERN_TERMS))]
    return pattern


_PATTERN_TERMS: dict[str, tuple[str, ...]] = {}
"""The (ASCII, lowercased) terms of each recent `term_pattern`, by its source: where its
matches can start (`_word_matches`)."""
_PATTERN_LOCK = threading.Lock()


def _word_matches(text: str, words: re.Pattern[str]) -> list[tuple[int, int]]:
    """The spans `words.finditer(text)` gives. In ASCII text a match starts where one of
    the pattern's terms occurs (ignoring ASCII case, which is all IGNORECASE does there),
    so only those places are tried, each with `words.match` (its look-behind sees the
    character before): the places without a term cost no regex steps. Other texts (where
    IGNORECASE folds more than ASCII, and lowering can change lengths) use `finditer`."""
    terms = _PATTERN_TERMS.get(words.pattern)
    if terms is None or not text.isascii():
        return [m.span() for m in words.finditer(text)]
    lower = text.lower()
    starts: set[int] = set()
    for term in terms:
        at = lower.find(term)
        while at >= 0:
            starts.add(at)
            at = lower.find(term, at + 1)
    out: list[tuple[int, int]] = []
    end = 0
    for at in sorted(starts):
        if at < end:
            continue
        m = words.match(text, at)
        if m is not None:
            out.append(m.span())
            end = m.end()
    return out


def line_matches(text: str, first_line: int, words: re.Pattern[str]) -> tuple[LineMatch, ...]:
    """The lines of a checkpoint that contain query words, with 1-based column ranges.

    One search over the whole text (a match never spans a newline: terms are words, and
    the look-behind sees a newline as it sees a line's start), each match placed on its
    line by counting newlines since the previous one: the lines without a match cost no
    Python (keyword pages build hits for hundreds of checkpoints per query)."""
    out: list[LineMatch] = []
    line = pos = 0  # line index of `pos`
    start = end = -1  # bounds of that line once it has a match
    ranges: list[tuple[int, int]] = []
    for at, stop in _word_matches(text, words):
        if at > end:  # a match on a later line
            if ranges:
                out.append(LineMatch(first_line + line, text[start:end], tuple(ranges)))
                ranges = []
            line += text.count("\n", pos, at)
            pos = at
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            if end < 0:
                end = len(text)
        ranges.append((at - start + 1, stop - start + 1))
    if ranges:
        out.append(LineMatch(first_line + line, text[start:end], tuple(ranges)))
    return tuple(out)
