"""Hybrid search's legs, as a mixin of `SearchCases`: the semantic leg runs in the
calling thread, the keyword leg in a worker beside it, and the lexical leg (Zoekt when
`search.zoekt_url` is set, else the embedded engine, for identifier-like queries) in
another worker with a time limit;
plus what a hybrid or semantic answer says about repositories still embedding.

Ranking itself is pure and lives in `search/hybrid.py` (`rank_hybrid`).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from ctxd.indexer.embedder import Embedder
from ctxd.indexer.errors import BackendTimeout, CtxdError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.textclass import Role, classify
from ctxd.search.hybrid import FusionOptions, identifier_terms
from ctxd.search.keyword import keyword_search, keyword_terms
from ctxd.search.keyword_index import KeywordIndex, KeywordPostings
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.models import FileMatch, Hit, MatchSource
from ctxd.search.semantic import SearchFilters, VectorMatrix, knn, rank_by_vector, summary_hits
from ctxd.search.snapshots import LARGE_INDEX_CHECKPOINTS, checkpoint_count
from ctxd.search.symbol_names import SymbolIndex, SymbolNames
from ctxd.search.translations import translation_query
from ctxd.search.zoekt.client import ZoektClient
from ctxd.search.zoekt.query import escape_regex, scoped_query
from ctxd.server.config import Settings

HYBRID_DEPTH = 100
"""How many hits each leg contributes to fusion."""

_LEXICAL_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ctxd-hybrid-lexical")
"""Runs hybrid search's lexical leg beside the semantic and keyword legs."""
_KEYWORD_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ctxd-hybrid-keyword")
"""Runs hybrid search's keyword leg (SQLite's FTS5, which releases the GIL) while the
calling thread embeds the query and runs the semantic leg."""



class HybridCases:
    """The legs of hybrid search; mixed into `SearchCases` (and so into `Service`, which
    provides the members declared here)."""

    settings: Settings
    matrix: VectorMatrix | None
    keywords: KeywordIndex | None
    symbol_index: SymbolIndex | None

    def store(self) -> IndexStore:  # pragma: no cover - provided by Service
        raise NotImplementedError

    @property
    def embedder(self) -> Embedder:  # pragma: no cover - provided by Service
        raise NotImplementedError

    def postings(self, store: IndexStore) -> KeywordPostings | None:
        """The keyword postings in memory, if this service holds them (long-lived, large
        index) and they are built (`search.keyword_index`); possibly older than the text,
        which the keyword search corrects for while they are rebuilt."""
        return self.keywords.latest(store) if self.keywords is not None else None

    def symbol_names(self, store: IndexStore) -> SymbolNames | None:
        """The distinct symbol names in memory for `store`'s text as it is now, if this
        service holds them and they are built (`search.symbol_names`)."""
        return self.symbol_index.current(store) if self.symbol_index is not None else None

    def _unembedded(
        self, store: IndexStore, filters: SearchFilters, hits: list[Hit]
    ) -> set[tuple[str, str, int, int]]:
        """Which of `hits` have no vector yet (only asked while some repository in scope
        is still embedding)."""
        coverage = self._coverage(store, filters.repositories)
        if not hits or all(embedded >= total for _n, total, embedded in coverage):
            return set()
        return store.unembedded_spans(sorted({h.path for h in hits}))

    def warm_caches(self, store: IndexStore) -> None:
        """Count what an unscoped semantic or hybrid query needs counted once (the
        embedding coverage: ~1 s at a million checkpoints), so its first one does not."""
        self._coverage(store, ())

    def _coverage(self, store: IndexStore, names: tuple[str, ...]) -> list[tuple[str, int, int]]:
        """`Store.embedding_coverage` (a count over every checkpoint: ~1 s at 1M), kept
        for the process while neither the text nor the vectors changed, whichever
        thread, connection or request settings ask: the key is the text generation, the
        largest vector rowid (vectors are appended) and the vector generation (moved by
        deletions), three lookups."""
        (top,) = store.query("SELECT coalesce(max(id), 0) FROM embeddings")[0]
        key = (store.location, store.text_generation(), int(top),
               store.get_meta("vec_generation"), names)
        with _COVERAGE_LOCK:
            if key in _COVERAGE:
                _COVERAGE.move_to_end(key)
                return _COVERAGE[key]
        rows = store.embedding_coverage(names)
        with _COVERAGE_LOCK:
            _COVERAGE[key] = rows
            while len(_COVERAGE) > 64:
                _COVERAGE.popitem(last=False)
        return rows

    def file_roles(self, store: IndexStore, hits: list[Hit]) -> dict[tuple[str, str], Role]:
        """(repository, path) -> role of the `hits`' files that are not plain code or
        prose: stored for indexed files, by name for files only Zoekt has."""
        stored = store.file_roles(sorted({h.path for h in hits}))
        local = {r.name for r in store.repos()} if self.settings.search.zoekt_url else set()
        rules = self.settings.walk.text_rules()
        roles: dict[tuple[str, str], Role] = {}
        for h in hits:
            key = (h.repository, h.path)
            if key in stored:
                roles[key] = Role(stored[key])
            elif h.repository not in local and self.settings.search.zoekt_url:
                role = classify(h.path, "", rules)[0]
                if role is not Role.EMBED:
                    roles[key] = role
        return roles

    def generated_files(self, store: IndexStore, legs: dict[str, list[Hit]]
                        ) -> set[tuple[str, str]]:
        """The legs' files of generated code (demoted by the hybrid ranking)."""
        hits = [h for leg in legs.values() for h in leg]
        return {k for k, r in self.file_roles(store, hits).items() if r is Role.GENERATED}

    def fusion_options(self) -> FusionOptions:
        """The hybrid ranking's options from `[search]`."""
        s = self.settings.search
        return FusionOptions(method=s.fusion, rrf_k=s.rrf_k, keyword_weight=s.keyword_weight,
                             lexical_weight=s.lexical_weight, summary_weight=s.summary_weight)

    def hybrid_legs(
        self, query: str, *, depth: int, filters: SearchFilters | None = None,
        store: IndexStore | None = None,
    ) -> tuple[dict[str, list[Hit]], dict[str, float], list[str]]:
        """The candidates of each hybrid leg, each leg's time (ms) and notes.

        The keyword leg runs in a worker thread (on its own connection) while the query is
        embedded and the semantic leg runs here. The lexical leg (Zoekt, else the embedded
        engine) runs in another worker; it is given `hybrid_lexical_timeout_ms`,
        and a slow or failing one costs that and a note, never the answer.
        """
        filters = filters or SearchFilters()
        store = store or self.store()
        times: dict[str, float] = {}
        notes: list[str] = []
        zoekt = bool(self.settings.search.zoekt_url)
        lexical_query = hybrid_lexical_query(query, filters, questions=zoekt)
        future: Future[list[Hit]] | None = None
        started = time.perf_counter()
        if (lexical_query is not None and self.settings.search.lexical_weight > 0
                and (zoekt or embedded_lexical_fits(store))):
            future = _LEXICAL_POOL.submit(self._lexical_leg, lexical_query, filters, depth)
        keyword_future: Future[tuple[list[Hit], float]] | None = None
        if store.location == self.settings.store_location:  # the worker opens its own one
            keyword_future = _KEYWORD_POOL.submit(self._keyword_leg, query, filters, depth)
        t0 = time.perf_counter()
        semantic: list[Hit] = []
        vector: list[float] | None = None
        if store.has_vectors():
            vector = self.embedder.embed([query])[0].tolist()
            semantic = rank_by_vector(
                store, vector, filters=filters, limit=depth,
                knn_fn=self.matrix.knn if self.matrix is not None else knn)
        times["semantic"] = (time.perf_counter() - t0) * 1000
        if keyword_future is not None:
            keyword, times["keyword"] = keyword_future.result()
        else:
            keyword, times["keyword"] = self._keyword_leg(query, filters, depth, store)
        legs = {"semantic": semantic, "keyword": keyword}
        if vector is not None and self.settings.search.summary_weight > 0:
            t0 = time.perf_counter()
            files = {(h.repository, h.path) for h in (*semantic, *keyword)}
            legs["summary"] = summary_hits(store, vector, files)
            times["summary"] = (time.perf_counter() - t0) * 1000
        if future is not None:
            budget = self.settings.search.hybrid_lexical_timeout_ms / 1000
            left = max(0.0, budget - (time.perf_counter() - started))
            engine = "Zoekt" if self.settings.search.zoekt_url else "the lexical engine"
            late = (f"{engine} did not answer within "
                    f"{self.settings.search.hybrid_lexical_timeout_ms} ms; "
                    "results are from the semantic and keyword legs only.")
            try:
                lexical = future.result(timeout=left)
                roles = self.file_roles(store, lexical)
                legs["lexical"] = [h for h in lexical
                                   if not roles.get((h.repository, h.path), Role.EMBED)
                                   .lexical_only]
            except FutureTimeout:
                future.cancel()
                notes.append(late)
            except BackendTimeout:
                notes.append(late)
            except CtxdError as exc:
                notes.append(f"{engine} failed ({exc.message}); results are from the "
                             "semantic and keyword legs only.")
            times["lexical"] = (time.perf_counter() - started) * 1000
        if ((asked := translation_query(query, filters)) is not None
                and (zoekt or embedded_lexical_fits(store))):
            try:  # a question in a translation's language: its pages (search.translations)
                found = self._lexical_leg(asked.query, filters, depth)
            except CtxdError:
                found = []
            roles = self.file_roles(store, found)
            legs["translations"] = asked.keep(found, roles)
        return legs, times, notes

    def _keyword_leg(self, query: str, filters: SearchFilters, depth: int,
                     store: IndexStore | None = None) -> tuple[list[Hit], float]:
        """The keyword leg's hits and its time (ms), on `store` or this thread's."""
        t0 = time.perf_counter()
        store = store or self.store()
        hits = keyword_search(store, query, filters=filters, limit=depth, with_matches=False,
                              postings=self.postings(store))
        return hits, (time.perf_counter() - t0) * 1000

    def _lexical_leg(self, query: str, filters: SearchFilters, depth: int) -> list[Hit]:
        """One hit per file from the lexical engine: the file's first matches. Zoekt gets
        the hybrid time limit as its own, so a stalled request frees its worker then."""
        s = self.settings.search
        if s.zoekt_url:
            client = ZoektClient(s.zoekt_url,
                                 timeout_ms=min(s.zoekt_timeout_ms, s.hybrid_lexical_timeout_ms))
            result = client.search(query, max_files=min(depth, 100), context_lines=0)
        else:
            result = EmbeddedLexical(self.store()).search(query, max_files=min(depth, 100),
                                                          context_lines=0)
        source = MatchSource.ZOEKT if s.zoekt_url else MatchSource.LEXICAL
        path_ok = filters.path_matcher()
        return [first_block_hit(fm, source) for fm in result.files
                if path_ok(fm.path) and fm.matches]


_COVERAGE: OrderedDict[tuple[object, ...], list[tuple[str, int, int]]] = OrderedDict()
"""`HybridCases._coverage` answers (the newest 64)."""
_COVERAGE_LOCK = threading.Lock()


EMBEDDED_LEXICAL_MAX_CHECKPOINTS = LARGE_INDEX_CHECKPOINTS
"""Above this many checkpoints hybrid search leaves out the embedded engine's lexical
leg (a Zoekt server's stays): at a million checkpoints one identifier query reads
hundreds to thousands of files, median 279 ms and up to 3.6 s
(`bench/bench_lexical_scale.py`), while the keyword leg, which splits identifiers too,
answers in tens of ms. On eval-dev's four repositories (8k checkpoints) the leg adds
+0.006 MRR@10, and there it still runs."""


def embedded_lexical_fits(store: IndexStore) -> bool:
    """Whether the index is small enough for the embedded lexical leg of hybrid search."""
    return checkpoint_count(store) <= EMBEDDED_LEXICAL_MAX_CHECKPOINTS


def hybrid_lexical_query(
    query: str, filters: SearchFilters, *, questions: bool = False
) -> str | None:
    """The lexical leg's Zoekt query for a hybrid query: its identifier-like words
    (`Retry.increment`, `MAX_RETRIES`, `parseHeader`), ORed, as literals, scoped to the
    filters. A query without identifiers gets None (plain words are the keyword leg's
    job), unless `questions`: then its eight longest content words, ORed (used with a
    Zoekt server, so that repositories only Zoekt indexes answer questions too)."""
    terms = identifier_terms(query)[:8]
    if not terms and questions:
        terms = sorted(keyword_terms(query), key=len, reverse=True)[:8]
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


def coverage_notes(
    coverage: list[tuple[str, int, int]], mode: str, found: bool
) -> list[str]:
    """What a semantic or hybrid answer must say about repositories whose embeddings are
    not complete (`coverage`: repository, checkpoints, embedded): how far along they
    are, and what that means for the results."""
    notes = []
    for name, total, embedded in coverage:
        if total == 0 or embedded >= total:
            continue
        share = f"{embedded / total:.0%} ({embedded} of {total} checkpoints)"
        if embedded == 0:
            what = ("has no embeddings yet" + (
                "; semantic search cannot see it until they are built"
                if mode == "semantic" else "; its results here come from keyword and "
                "lexical matches only"))
            notes.append(f"Repository {name} {what}: semantic coverage {share}. "
                         "Embedding continues in the background (`ctxd status`).")
        else:
            notes.append(f"Repository {name} is still embedding: semantic coverage is "
                         f"partial, {share}"
                         + ("" if mode == "semantic" else "; keyword and lexical matches "
                            "cover all of it") + ".")
    if mode == "semantic" and not found and notes:
        notes.insert(0, "No semantic results: embeddings are not built yet for the "
                     "repositories searched.")
    return notes
