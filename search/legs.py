"""Hybrid search's legs, run side by side: the candidates that `search.hybrid.rank_hybrid`
fuses.

`run_legs(query, store, depth=..., filters=..., options=..., sources=...)` runs the
keyword leg in a worker thread (on that worker's own connection) while the calling thread
embeds the query and runs the semantic leg (and the file-summary leg after it); the
lexical leg (Zoekt when `options.zoekt_url` is set, else the embedded trigram engine, for
identifier-like queries) runs in another worker with a time limit. A slow or failing
lexical leg costs its time limit and a note, never the answer.

Also here: what the legs need beside the hits: the files' roles (generated code is
demoted, lexical-only files stay out of the lexical leg), the lexical leg's query, and
each repository's embedding coverage, counted once per state of the index.

Invariants: a worker never uses the caller's connection (`sources.thread_store` opens the
worker's own); the two pools are bounded and live for the process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import NamedTuple

from ctxd.indexer import coverage_claim
from ctxd.indexer.embedder import Embedder
from ctxd.indexer.errors import BackendTimeout, CtxdError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.textclass import Role, TextRules, classify
from ctxd.search.filters import SearchFilters
from ctxd.search.keyword import keyword_search
from ctxd.search.keyword_index import KeywordPostings
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lru import Lru
from ctxd.search.models import FileMatch, Hit, MatchSource
from ctxd.search.parsed import ParsedQuery
from ctxd.search.path_kinds import is_locale_data
from ctxd.search.questions import names_language
from ctxd.search.semantic import KnnFn, knn, rank_by_vector, summary_hits
from ctxd.search.snapshots import LARGE_INDEX_CHECKPOINTS, checkpoint_count
from ctxd.search.translations import translation_query
from ctxd.search.vectors import VectorMatrix
from ctxd.search.zoekt.client import ZoektClient
from ctxd.search.zoekt.query import escape_regex, scoped_query

HYBRID_DEPTH = 100
"""How many hits each leg contributes to fusion."""

EMBEDDED_LEXICAL_MAX_CHECKPOINTS = LARGE_INDEX_CHECKPOINTS
"""Above this many checkpoints hybrid search leaves out the embedded engine's lexical leg
(a Zoekt server's stays): there one identifier query reads hundreds to thousands of files,
while the keyword leg, which splits identifiers too, answers in tens of ms
(docs/BENCHMARKS.md, `bench/bench_lexical_scale.py`)."""

_LEXICAL_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ctxd-hybrid-lexical")
"""Runs hybrid search's lexical leg beside the semantic and keyword legs."""
_KEYWORD_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ctxd-hybrid-keyword")
"""Runs hybrid search's keyword leg (SQLite's FTS5, which releases the GIL) while the
calling thread embeds the query and runs the semantic leg."""


@dataclass(frozen=True)
class LegOptions:
    """The `[search]` and `[walk]` settings the legs use."""

    zoekt_url: str | None = None
    zoekt_timeout_ms: int = 5000
    lexical_timeout_ms: int = 1500
    """The lexical leg's time limit (`search.hybrid_lexical_timeout_ms`)."""
    lexical_weight: float = 1.0
    summary_weight: float = 0.0
    text_rules: TextRules | None = None
    """How files only Zoekt has are classified (`WalkOptions.text_rules`)."""


@dataclass(frozen=True)
class LegSources:
    """What the legs search with, beside the caller's connection."""

    embedder: Embedder
    thread_store: Callable[[], IndexStore]
    """The calling thread's connection to the index (a worker's own, opened on first use)."""
    postings: Callable[[IndexStore], KeywordPostings | None]
    """The keyword postings held in memory for a connection's index, if any."""
    matrix: VectorMatrix | None = None
    """The vectors held in memory (a long-lived service), else the store's KNN."""
    own_worker_store: bool = True
    """False when the caller's connection is not one `thread_store` would give (another
    index): the keyword leg then runs in the calling thread, on it."""


class Legs(NamedTuple):
    """Each leg's candidates, each leg's time (ms) and the notes for the answer."""

    hits: dict[str, list[Hit]]
    times: dict[str, float]
    notes: list[str]


LOCALE_SHARE = 0.5
"""A semantic leg whose candidates are more than this share of locale files
(`path_kinds.is_locale_data`: dayjs's 140 `src/locale/<lang>.js`, alike to a question
about dates or formats) is crowded: the code that does the work falls out of it."""


def locale_crowded(hits: list[Hit], question: str) -> bool:
    """Whether locale files crowd the semantic leg's `hits` (`LOCALE_SHARE`) for a
    `question` that names no language (one that does may want them)."""
    if not hits or names_language(question):
        return False
    return sum(is_locale_data(h.path) for h in hits) > LOCALE_SHARE * len(hits)


def thin_locales(hits: list[Hit], depth: int) -> list[Hit]:
    """The first `depth` of a deeper semantic leg's `hits` with locale files kept to a
    quarter of them, so that the code below them gets in; the locale files left out come
    back after it when too little else is there (a repository of translations)."""
    out: list[Hit] = []
    left: list[Hit] = []
    locales = 0
    for h in hits:
        if is_locale_data(h.path):
            if locales >= depth // 4:
                left.append(h)
                continue
            locales += 1
        out.append(h)
        if len(out) == depth:
            return out
    return [*out, *left][:depth]


def semantic_leg(store: IndexStore, vector: list[float], question: str,
                 filters: SearchFilters, depth: int, knn_fn: KnnFn) -> list[Hit]:
    """The `depth` nearest checkpoints to the question's `vector`; a leg crowded by locale
    files (`locale_crowded`) is asked four times deeper and thinned (`thin_locales`), unless
    a path filter chose where to look (`--path 'src/locale/*'` asks for them)."""
    hits = rank_by_vector(store, vector, filters=filters, limit=depth, knn_fn=knn_fn)
    if not filters.path_glob and locale_crowded(hits, question):
        hits = thin_locales(rank_by_vector(store, vector, filters=filters,
                                           limit=depth * 4, knn_fn=knn_fn), depth)
    return hits


def run_legs(
    query: ParsedQuery, store: IndexStore, *, depth: int, filters: SearchFilters,
    options: LegOptions, sources: LegSources,
) -> Legs:
    """The candidates of each hybrid leg (module docstring)."""
    times: dict[str, float] = {}
    notes: list[str] = []
    zoekt = bool(options.zoekt_url)
    lexical_query = hybrid_lexical_query(query, filters, questions=zoekt)
    future: Future[list[Hit]] | None = None
    started = time.perf_counter()
    if (lexical_query is not None and options.lexical_weight > 0
            and (zoekt or embedded_lexical_fits(store))):
        future = _LEXICAL_POOL.submit(lexical_leg, lexical_query, filters, depth, options,
                                      sources)
    keyword_future: Future[tuple[list[Hit], float]] | None = None
    if sources.own_worker_store:  # the worker opens its own connection
        keyword_future = _KEYWORD_POOL.submit(keyword_leg, query, filters, depth, sources)
    t0 = time.perf_counter()
    semantic: list[Hit] = []
    vector: list[float] | None = None
    if store.has_vectors():
        vector = sources.embedder.embed([query.text])[0].tolist()
        semantic = semantic_leg(store, vector, query.text, filters, depth,
                                sources.matrix.knn if sources.matrix is not None else knn)
    times["semantic"] = (time.perf_counter() - t0) * 1000
    if keyword_future is not None:
        keyword, times["keyword"] = keyword_future.result()
    else:
        keyword, times["keyword"] = keyword_leg(query, filters, depth, sources, store)
    legs = {"semantic": semantic, "keyword": keyword}
    if vector is not None and options.summary_weight > 0:
        t0 = time.perf_counter()
        files = {(h.repository, h.path) for h in (*semantic, *keyword)}
        legs["summary"] = summary_hits(store, vector, files)
        times["summary"] = (time.perf_counter() - t0) * 1000
    if future is not None:
        left = max(0.0, options.lexical_timeout_ms / 1000 - (time.perf_counter() - started))
        engine = "Zoekt" if zoekt else "the lexical engine"
        late = (f"{engine} did not answer within {options.lexical_timeout_ms} ms; "
                "results are from the semantic and keyword legs only.")
        try:
            lexical = future.result(timeout=left)
            roles = file_roles(store, lexical, options)
            legs["lexical"] = [h for h in lexical
                               if not roles.get((h.repository, h.path), Role.EMBED).lexical_only]
        except FutureTimeout:
            future.cancel()
            notes.append(late)
        except BackendTimeout:
            notes.append(late)
        except CtxdError as exc:
            notes.append(f"{engine} failed ({exc.message}); results are from the "
                         "semantic and keyword legs only.")
        times["lexical"] = (time.perf_counter() - started) * 1000
    if ((asked := translation_query(query.text, filters)) is not None
            and (zoekt or embedded_lexical_fits(store))):
        try:  # a question in a translation's language: its pages (search.translations)
            found = lexical_leg(asked.query, filters, depth, options, sources)
        except CtxdError:
            found = []
        legs["translations"] = asked.keep(found, file_roles(store, found, options))
    return Legs(legs, times, notes)


def keyword_leg(query: ParsedQuery, filters: SearchFilters, depth: int, sources: LegSources,
                store: IndexStore | None = None) -> tuple[list[Hit], float]:
    """The keyword leg's hits and its time (ms), on `store` or this thread's."""
    t0 = time.perf_counter()
    store = store or sources.thread_store()
    hits = keyword_search(store, query.text, filters=filters, limit=depth, with_matches=False,
                          postings=sources.postings(store), terms=query.terms)
    return hits, (time.perf_counter() - t0) * 1000


def lexical_leg(zoekt_query: str, filters: SearchFilters, depth: int, options: LegOptions,
                sources: LegSources) -> list[Hit]:
    """One hit per file from the lexical engine: the file's first matches. Zoekt gets the
    hybrid time limit as its own, so a stalled request frees its worker then."""
    if options.zoekt_url:
        client = ZoektClient(options.zoekt_url,
                             timeout_ms=min(options.zoekt_timeout_ms, options.lexical_timeout_ms))
        result = client.search(zoekt_query, max_files=min(depth, 100), context_lines=0)
    else:
        result = EmbeddedLexical(sources.thread_store()).search(
            zoekt_query, max_files=min(depth, 100), context_lines=0)
    source = MatchSource.ZOEKT if options.zoekt_url else MatchSource.LEXICAL
    path_ok = filters.path_matcher()
    return [first_block_hit(fm, source) for fm in result.files
            if path_ok(fm.path) and fm.matches]


def embedded_lexical_fits(store: IndexStore) -> bool:
    """Whether the index is small enough for the embedded lexical leg of hybrid search."""
    return checkpoint_count(store) <= EMBEDDED_LEXICAL_MAX_CHECKPOINTS


def hybrid_lexical_query(
    query: ParsedQuery | str, filters: SearchFilters, *, questions: bool = False
) -> str | None:
    """The lexical leg's Zoekt query for a hybrid query: its identifier-like words
    (`Retry.increment`, `MAX_RETRIES`, `parseHeader`), ORed, as literals, scoped to the
    filters. A query without identifiers gets None (plain words are the keyword leg's
    job), unless `questions`: then its eight longest content words, ORed (used with a
    Zoekt server, so that repositories only Zoekt indexes answer questions too)."""
    parsed = ParsedQuery.parse(query) if isinstance(query, str) else query
    terms = list(parsed.identifiers[:8])
    if not terms and questions:
        terms = sorted(parsed.terms, key=len, reverse=True)[:8]
    if not terms:
        return None
    text = " or ".join(escape_regex(t) for t in terms)
    return scoped_query(text, filters.repositories, filters.language)


def first_block_hit(fm: FileMatch, source: MatchSource) -> Hit:
    """A lexical file match as a hit on its first matching line (its matches kept)."""
    first = min(m.line for m in fm.matches)
    return Hit(repository=fm.repository, path=fm.path, language=fm.language,
               start_line=first, end_line=first, score=round(fm.score, 4), sources=(source,),
               snippet=next(m.text for m in fm.matches if m.line == first),
               matches=fm.matches)


def file_roles(store: IndexStore, hits: list[Hit], options: LegOptions
               ) -> dict[tuple[str, str], Role]:
    """(repository, path) -> role of the `hits`' files that are not plain code or prose:
    stored for indexed files, by name for files only Zoekt has."""
    stored = store.file_roles(sorted({h.path for h in hits}))
    local = {r.name for r in store.repos()} if options.zoekt_url else set()
    roles: dict[tuple[str, str], Role] = {}
    for h in hits:
        key = (h.repository, h.path)
        if key in stored:
            roles[key] = Role(stored[key])
        elif (h.repository not in local and options.zoekt_url
              and options.text_rules is not None):
            role = classify(h.path, "", options.text_rules)[0]
            if role is not Role.EMBED:
                roles[key] = role
    return roles


def generated_files(store: IndexStore, legs: dict[str, list[Hit]], options: LegOptions
                    ) -> set[tuple[str, str]]:
    """The legs' files of generated code (demoted by the hybrid ranking)."""
    hits = [h for leg in legs.values() for h in leg]
    return {k for k, r in file_roles(store, hits, options).items() if r is Role.GENERATED}


def coverage(store: IndexStore, names: tuple[str, ...]) -> list[tuple[str, int, int]]:
    """`embedding_coverage` (a count over every checkpoint), kept for the process while
    neither the text nor the vectors changed, whichever thread, connection or request
    settings ask: the key is the text generation, the largest vector id (vectors are
    appended) and the vector generation (moved by deletions), three lookups. No count, and
    no rows (every repository complete), where the writer recorded that every checkpoint
    had a vector at this state (`indexer.coverage_claim`): after any full embedding."""
    generation, deleted = store.text_generation(), store.get_meta("vec_generation")
    key = (store.location, generation, store.last_vector_id(), deleted, names)
    rows = _COVERAGE.get(key)
    if rows is None and coverage_claim.holds(store, coverage_claim.state(generation, deleted)):
        rows = []  # the writer found every checkpoint embedded at this state
        _COVERAGE.put(key, rows)
    if rows is None:
        # A scope naming every repository (the one repository of most indexes) is counted
        # as the whole index: the stores count that by an anti-join, faster than probing
        # each of its checkpoints (`embedding_coverage`).
        every = bool(names) and set(names) >= {r.name for r in store.repos()}
        rows = store.embedding_coverage(() if every else names)
        if every:
            rows = [row for row in rows if row[0] in names]
        _COVERAGE.put(key, rows)
    return rows


def unembedded(store: IndexStore, filters: SearchFilters, hits: list[Hit]
               ) -> set[tuple[str, str, int, int]]:
    """Which of `hits` have no vector yet (only asked while some repository in scope is
    still embedding)."""
    rows = coverage(store, filters.repositories)
    if not hits or all(embedded >= total for _n, total, embedded in rows):
        return set()
    return store.unembedded_spans(sorted({h.path for h in hits}))


_COVERAGE: Lru[tuple[object, ...], list[tuple[str, int, int]]] = Lru(64)
"""`coverage` answers (the newest 64)."""
