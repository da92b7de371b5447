"""The search use cases: `SearchCases`, every mode of search, its explanation, lexical
(Zoekt-syntax) and path search, symbols (`server.symbol_cases`) and references.

`SearchCases(resources)` is composed by `server.service.Service`. For each request record
(`server.requests`) it checks the arguments (once, `server.argument_checks`),
reads the query once (`search.parsed.ParsedQuery`), picks the lexical backend (Zoekt when
`search.zoekt_url` is set, else the embedded trigram engine), runs the legs
(`search.legs`) and the ranking (`search.hybrid`), and decodes and encodes paging cursors.
It returns records from `search/` and `server.pages`; it renders nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search import legs as hybrid_legs
from ctxd.search.copies import collapse_copies, distinct_texts
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.definitions import (
    defining_files,
    definition_texts,
    definitions_first,
    shaped_definitions,
)
from ctxd.search.enclosing import with_enclosing_symbols
from ctxd.search.exact_phrase import exact_files, exact_first
from ctxd.search.explain_rank import explain_fitted, explain_hit
from ctxd.search.filters import SearchFilters
from ctxd.search.hybrid import FusionOptions, is_identifier_query, leg_weights, rank_hybrid
from ctxd.search.keyword import (
    add_line_matches,
    informative_terms,
    keyword_line_matches,
    keyword_search,
)
from ctxd.search.language_filter import language_filter
from ctxd.search.legs import HYBRID_DEPTH, Legs, coverage, hybrid_lexical_query, run_legs
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lexical.limits import check_query_length
from ctxd.search.lexical.query_hints import quoted_escape_hint, quoted_regex_hint
from ctxd.search.merge import by_score, merge_ranked
from ctxd.search.models import (
    FileMatch,
    Hit,
    LexicalBackend,
    LexicalResult,
    MatchSource,
    References,
    SymbolPage,
)
from ctxd.search.parsed import ParsedQuery
from ctxd.search.questions import asks_how_to
from ctxd.search.rank_features import FEATURES
from ctxd.search.rank_model import RankModel, load_model, rank_fitted
from ctxd.search.references import find_references, symbol_name
from ctxd.search.semantic import semantic_search
from ctxd.search.zoekt.client import ZoektClient
from ctxd.search.zoekt.query import escape_regex, scoped_query
from ctxd.server.argument_checks import check_bound, require_text
from ctxd.server.pages import MODES, LexicalPage, SearchPage, file_hit
from ctxd.server.repo_names import check_repositories, not_indexed
from ctxd.server.requests import (
    ExplainRequest,
    FilesRequest,
    LexicalRequest,
    ReferencesRequest,
    SearchRequest,
    SymbolsRequest,
)
from ctxd.server.resources import Resources
from ctxd.server.symbol_cases import symbol_page

__all__ = ["HYBRID_DEPTH", "MODES", "LexicalPage", "SearchCases", "SearchPage", "file_hit",
           "merged_page", "not_indexed"]


class SearchCases:
    """The search use cases over one service's `Resources`."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    # -- search --------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchPage:
        """Ranked hits for the query in the given mode, one page at a time; a lexical hit
        carries `context_lines` lines around its matches (default `search.context_lines`).

        Raises:
            ValidationError: empty query, bad mode or limit.
            InvalidCursor: a cursor from another query.
            ModelMismatch: the index belongs to another model.
        """
        query, mode, context_lines = request.query, request.mode, request.context_lines
        settings = self.resources.settings
        require_text("query", query, nul=True, hint=(
            "Pass a question or keywords, e.g. `ctxd search \"where is retry backoff\"`."))
        if mode not in MODES:
            raise ValidationError(
                f"unknown mode {mode!r}",
                hint=f"Use one of: {', '.join(MODES)}.",
                details={"field": "mode", "value": mode, "allowed": list(MODES)},
            )
        limit = request.limit or settings.search.default_limit
        language = language_filter(request.language)  # `js` is `javascript` in every mode
        if context_lines is not None:
            check_bound("context_lines", context_lines, 0, 10)
        check_bound("limit", limit, 1, 100, hint="Use a smaller limit and page with the cursor.")
        params = {
            "query": query,
            "mode": mode,
            "repositories": sorted(request.repositories or []),
            "path": request.path_glob,
            "language": language,
        }
        offset = 0
        if request.cursor:
            offset, limit = decode_cursor(request.cursor, params)
        filters = SearchFilters(tuple(request.repositories or ()), request.path_glob, language)
        store = self.resources.store()
        self._check_repositories(store, filters.repositories)
        notes: list[str] = []
        context = settings.search.context_lines if context_lines is None else context_lines
        parsed = ParsedQuery.parse(query)
        explained: list[list[dict[str, object]]] | None = [] if request.explain else None
        hits = self._ranked(store, parsed, mode, filters, offset, limit + 1, notes, context,
                            explained)
        more = len(hits) > limit
        hits = hits[:limit]
        if mode in ("hybrid", "semantic"):
            notes.extend(coverage_notes(coverage(store, filters.repositories), mode,
                                        bool(hits)))
        if not hits and not offset:  # (the lexical engine names an unmatched `lang:`)
            notes.extend(empty_filter_notes(store, filters, language=mode != "lexical"))
        return SearchPage(
            query=query,
            mode=mode,
            results=hits,
            next_cursor=encode_cursor(params, offset + limit, limit) if more else None,
            stats={"offset": offset, "count": len(hits),
                   **({"explain": explained[:limit]} if explained is not None else {})},
            notes=notes,
        )

    def _ranked(
        self, store: IndexStore, query: ParsedQuery, mode: str, filters: SearchFilters,
        offset: int, n: int, notes: list[str], context_lines: int,
        explained: list[list[dict[str, object]]] | None = None,
    ) -> list[Hit]:
        """`n` hits from `offset` on, in the given mode; the engines' notes (a bounded scan,
        a cut) are appended to `notes`; `explained`, when given, receives each hybrid hit's
        contributions (`search.explain_rank`)."""
        res = self.resources
        if mode == "lexical":  # one hit per file: nothing to merge
            return self._lexical_hits(query.text, filters, offset, n, notes, context_lines)
        if mode == "keyword":
            postings = res.postings(store)
            return merged_page(
                lambda k: keyword_search(store, query.text, filters=filters, limit=k,
                                         postings=postings, terms=query.terms,
                                         with_matches=False), offset, n,
                lambda hits: keyword_line_matches(store, query.text, hits, filters=filters,
                                                  postings=postings, terms=query.terms))
        store.check_model(res.embedder.name)
        if mode == "semantic":
            return merged_page(lambda k: semantic_search(
                store, res.embedder, query.text, filters=filters, limit=k, matrix=res.matrix),
                offset, n)
        depth = max(HYBRID_DEPTH, offset + n)
        legs, _ms, leg_notes = self.hybrid_legs(query, depth=depth, filters=filters,
                                                store=store)
        notes.extend(leg_notes)
        options = res.leg_options()
        pending = hybrid_legs.unembedded(store, filters, legs.get("keyword", []))
        generated = hybrid_legs.generated_files(store, legs, options)
        model = self.fitted_model()
        if model is not None:  # issue 42: the fitted combination of the candidates' features
            ranked = rank_fitted(query.text, legs, model, unembedded=pending,
                                 generated=generated, options=self.fusion_options())
        else:
            ranked = rank_hybrid(query.text, legs, self.fusion_options(), unembedded=pending,
                                 generated=generated)
        phrase: list[FileMatch] = []
        if res.settings.search.zoekt_url or hybrid_legs.embedded_lexical_fits(store):
            phrase = exact_files(query.text, filters, lambda q, k: self._lexical_search(
                q, offset=0, max_files=k, context_lines=0), store.file_roles)
            ranked = exact_first(ranked, phrase)
        # Issue 42's hard rules. A name the query names exactly goes before a phrase it
        # quotes: Kotlin's `` OptionTest.`default option` `` is both, and the phrase is
        # also written in files that merely say "default option".
        # Without a symbol table's definition (Dart, a file indexed before its language
        # had one), the lexical leg's lines that declare the name (`bool wasParsed(`).
        if defs := (defining_files(store, query.text, filters)
                    or shaped_definitions(query.text, legs.get("lexical", ()))):
            ranked = definitions_first(ranked, defs, definition_texts(store, defs, ranked))
        if explained is not None:
            moved = {(f.repository, f.path): "exact phrase" for f in phrase}
            moved.update({(d.repository, d.path): "its file defines a name the query names"
                          for d in defs})
            for h in ranked[offset : offset + n]:
                rule = moved.get((h.repository, h.path))
                rules = [rule] if rule else []
                parts = explain_fitted(query.text, legs, h, model, unembedded=pending,
                                       generated=generated, rules=rules,
                                       options=self.fusion_options()) if model else \
                    explain_hit(query.text, legs, h, self.fusion_options(),
                                generated=generated, rules=rules)
                explained.append([c.as_dict() for c in parts])
        return add_line_matches(store, query.text, ranked[offset : offset + n],
                                res.postings(store), terms=query.terms)

    def hybrid_legs(
        self, query: ParsedQuery | str, *, depth: int, filters: SearchFilters | None = None,
        store: IndexStore | None = None,
    ) -> Legs:
        """The candidates of each hybrid leg, each leg's time (ms) and notes
        (`search.legs.run_legs`)."""
        store = store or self.resources.store()
        parsed = ParsedQuery.parse(query) if isinstance(query, str) else query
        return run_legs(parsed, store, depth=depth, filters=filters or SearchFilters(),
                        options=self.resources.leg_options(),
                        sources=self.resources.leg_sources(store))

    def fitted_model(self) -> RankModel | None:
        """The shipped ranking model when `[search] fusion` is `fitted` (and it ships)."""
        if self.resources.settings.search.fusion != "fitted":
            return None
        return load_model()

    def fusion_options(self) -> FusionOptions:
        """The hybrid ranking's options from `[search]`."""
        s = self.resources.settings.search
        return FusionOptions(method=s.fusion, rrf_k=s.rrf_k, keyword_weight=s.keyword_weight,
                             lexical_weight=s.lexical_weight, summary_weight=s.summary_weight)

    def _lexical_hits(
        self, query: str, filters: SearchFilters, offset: int, n: int, notes: list[str],
        context_lines: int,
    ) -> list[Hit]:
        """Zoekt-syntax results as hits (one per file: its matching lines and their
        context); the engine's notes go to `notes`."""
        scope = scoped_query(query, filters.repositories, filters.language)
        result = self._lexical_search(scope, offset=offset, max_files=n,
                                      context_lines=context_lines)
        notes.extend(lexical_notes(query, result))
        if result.partial and not result.notes:
            notes.append("partial results: the lexical engine stopped early (time or match "
                         "limits); narrow the query for complete results")
        path_ok = filters.path_matcher()
        source = (MatchSource.ZOEKT if self.resources.settings.search.zoekt_url
                  else MatchSource.LEXICAL)
        return with_enclosing_symbols(
            self.resources.store(),
            [file_hit(fm, source) for fm in result.files if path_ok(fm.path)])

    def explain(self, request: ExplainRequest) -> str:
        """How a query would run, without running it: the parsed Zoekt query, trigrams and
        SQL for `lexical`; the keyword terms and FTS5 MATCH text for the other modes."""
        query, mode = request.query, request.mode
        settings = self.resources.settings
        zoekt_url = settings.search.zoekt_url
        check_query_length("query", query)
        if mode == "lexical":
            if zoekt_url:
                return f"lexical query sent to Zoekt at {zoekt_url}: {query}"
            return EmbeddedLexical(self.resources.store()).explain(query)
        store = self.resources.store()
        parsed = ParsedQuery.parse(query)
        terms = informative_terms(store, list(parsed.terms))
        lines = [f"mode: {mode}", f"keyword terms: {', '.join(terms) or '(none)'}",
                 store.explain_keywords(terms)]
        if mode in ("hybrid", "semantic"):
            lines.append(f"semantic: embed the query with {settings.embedding.model}, "
                         + ("in-memory matrix KNN" if self.resources.matrix
                            else store.explain_nearest()))
        if mode == "hybrid":
            o = self.fusion_options()
            w = leg_weights(query, o)
            kind = "identifier-like" if is_identifier_query(query) else "natural-language"
            lexical_query = hybrid_lexical_query(parsed, SearchFilters(),
                                                 questions=bool(zoekt_url))
            engine = "zoekt" if zoekt_url else "lexical (embedded)"
            model = self.fitted_model()
            method = "score" if model is not None else o.method
            lines.append(
                f"fusion: {method} over {HYBRID_DEPTH} hits per leg; {kind} query: weights "
                f"semantic {w['semantic']:g} / keyword {w['keyword']:g} / {engine} "
                f"{w['lexical']:g}")
            if model is not None:
                weighed = ", ".join(f"{name} {w:+g}" for name, w in
                                    zip(FEATURES, model.weights, strict=True) if w)
                trees = f", {len(model.trees)} trees" if model.trees else ""
                lines.append(f"fitted ranking (search/rank_model.json) over it: exp of "
                             f"{weighed}{trees}")
            if not zoekt_url and not hybrid_legs.embedded_lexical_fits(store):
                lines.append(f"{engine} leg: left out above "
                             f"{hybrid_legs.EMBEDDED_LEXICAL_MAX_CHECKPOINTS:,}"
                             " checkpoints (the keyword leg splits identifiers; a Zoekt "
                             "server's leg stays)")
            else:
                lines.append(f"{engine} leg query: {lexical_query or '(none: no identifiers)'}")
            lines.append(f"file summaries: weight {o.summary_weight:g} (the candidate files' "
                         "summary vectors)")
            if asks_how_to(query):
                lines.append(f"a how-to question: prose files x{o.promote_prose_for_how_to:g}")
        return "\n".join(lines)

    # -- lexical (Zoekt syntax) ----------------------------------------------------------

    def lexical_backend(self) -> LexicalBackend:
        """Zoekt when `search.zoekt_url` is set, else the embedded trigram engine."""
        return self.resources.zoekt() or EmbeddedLexical(self.resources.store())

    def _lexical_search(
        self, query: str, *, offset: int, max_files: int, context_lines: int
    ) -> LexicalResult:
        backend = self.lexical_backend()
        if isinstance(backend, EmbeddedLexical | ZoektClient):
            # Zoekt has no offset: its client asks for the files up to the page's end.
            return backend.search(query, max_files=max_files, context_lines=context_lines,
                                  offset=offset)
        res = backend.search(query, max_files=offset + max_files, context_lines=context_lines)
        return replace(res, files=res.files[offset:])

    def lexical(self, request: LexicalRequest) -> LexicalPage:
        """A Zoekt-syntax search (the `search` tool), one page of files.

        Raises:
            QueryError: the query does not parse.
            BackendUnavailable / BackendTimeout: Zoekt is configured and failing.
            InvalidCursor: a cursor from another query.
        """
        query, limit, context_lines = request.query, request.limit, request.context_lines
        require_text("query", query, nul=True, syntax=True,
                     hint="Pass a pattern, e.g. `lang:python def main` or `sym:Handler`.")
        check_bound("limit", limit, 1, 100)
        check_bound("contextLines", context_lines, 0, 10)
        params = {"lexical": query, "context_lines": context_lines}
        offset = 0
        if request.cursor:
            offset, limit = decode_cursor(request.cursor, params)
        result = self._lexical_search(query, offset=offset, max_files=limit,
                                      context_lines=context_lines)
        result = replace(result, notes=tuple(lexical_notes(query, result)))
        end = offset + len(result.files)
        # A short page is the last one reachable (e.g. Zoekt's match limit cut the rest;
        # the result's notes say so).
        more = end < result.file_count and len(result.files) >= limit
        return LexicalPage(query=query, result=result, offset=offset,
                           next_cursor=encode_cursor(params, end, limit) if more else None)

    def files(self, request: FilesRequest) -> LexicalPage:
        """Files whose path matches a glob (`*`, `**`) or a regular expression."""
        pattern, limit, repositories = request.pattern, request.limit, request.repositories
        require_text("pattern", pattern,
                     hint="Pass a glob like `**/*.py` or a regex like `test_.*\\.py$`.")
        params = {"files": pattern, "repositories": sorted(repositories or [])}
        if repositories and self.resources.zoekt() is None:
            self._check_repositories(self.resources.store(), tuple(repositories))
        offset = 0
        if request.cursor:
            offset, limit = decode_cursor(request.cursor, params)
        backend = self.lexical_backend()
        if isinstance(backend, ZoektClient):
            res = backend.search_filenames(pattern, max_files=offset + limit + 1)
        else:
            res = EmbeddedLexical(self.resources.store()).search_files(
                pattern, max_files=offset + limit + 1, repos=repositories
            )
        files = res.files[offset : offset + limit]
        more = len(res.files) > offset + limit
        result = replace(res, files=files)
        nxt = encode_cursor(params, offset + limit, limit) if more else None
        return LexicalPage(query=pattern, result=result, offset=offset, next_cursor=nxt)

    def references(self, request: ReferencesRequest) -> References:
        """Definitions and word-boundary usages of the symbol, labelled.

        Raises:
            IndexNotFound: a repository that is not indexed.
        """
        symbol, repositories = request.symbol, request.repositories
        check_query_length("symbol", symbol)
        language = language_filter(request.language)
        store = self.resources.store()
        if self.resources.zoekt() is None:
            self._check_repositories(store, tuple(repositories or ()))
        backend = self.lexical_backend()
        definitions = None
        if isinstance(backend, ZoektClient):
            name = symbol_name(store, symbol, repositories)  # PATH:LINE, Router::merge too
            definitions = [s for s in backend.symbols(f"sym:^{escape_regex(name)}$")
                           if s.name == name]
        return find_references(store, backend, symbol, language=language,
                               repositories=repositories, limit=request.limit,
                               definitions=definitions)

    def _check_repositories(self, store: IndexStore, names: tuple[str, ...]) -> None:
        check_repositories(store, names, self.resources.zoekt)

    def symbols(self, request: SymbolsRequest) -> SymbolPage:
        """Fuzzy symbol search, one page (`server.symbol_cases.symbol_page`)."""
        return symbol_page(self.resources, request)
# -- pages and notes ---------------------------------------------------------------------


def merged_page(fetch: Callable[[int], list[Hit]], offset: int, n: int,
                finish: Callable[[list[Hit]], list[Hit]] | None = None) -> list[Hit]:
    """Hits `offset` to `offset + n` of one result per definition (`search.merge`) and per
    distinct text (`search.copies`: identical copies answer once): ranked from the top, so
    pages agree with each other (a group of copies sits where its best member ranks),
    fetching twice as many raw hits until the list fills the page or the engine runs out
    (merges can take more than half of them: a long function's parts all match).
    `finish` completes the hits of the last fetch only, once identical copies collapsed
    and before they merge (the keyword mode's line matches, which depend on a hit's text
    and first line only: a group of copies gets its representative's, the union of its
    members' moved onto its lines; the fetches before it are thrown away). A fetch whose
    distinct texts (`distinct_texts`, what collapsing leaves at most) cannot fill the page
    is not merged."""
    want = offset + 2 * n
    while True:
        hits = fetch(want)
        if len(hits) >= want and distinct_texts(hits) < offset + n:
            want *= 2  # too few distinct texts to fill the page: merging leaves fewer
            continue
        collapsed = collapse_copies(hits)
        if finish is not None:  # line matches change no merge: the same hits, completed
            collapsed = finish(collapsed)
        merged = by_score(collapse_copies(merge_ranked(collapsed)))
        if len(merged) >= offset + n or len(hits) < want:
            break
        want *= 2
    return merged[offset : offset + n]


def empty_filter_notes(
    store: IndexStore, filters: SearchFilters, *, language: bool = True
) -> list[str]:
    """For an empty answer: which of the path and language filters match no indexed file
    (of the repositories searched), and what does exist. Read only then: a path glob is
    matched against every path in scope."""
    notes = []
    if filters.path_glob:
        match = filters.path_matcher()
        after, found = 0, False
        while not found:
            page = store.file_paths_in(list(filters.repositories), after=after, limit=5000)
            found = any(match(path) for _id, path in page)
            if len(page) < 5000:
                break
            after = page[-1][0]
        if not found:
            notes.append(f"the path filter {filters.path_glob!r} matches no indexed file; "
                         "paths are relative to the repository root (`ctxd files PATTERN`, "
                         "MCP `search_files`, lists them)")
    if filters.language and language:
        present = sorted({lang.lower() for lang in store.file_languages()})
        if filters.language.lower() not in present:
            notes.append(f"the language filter {filters.language!r} matches no indexed "
                         f"file; languages in the index: {', '.join(present)}")
    return notes


def lexical_notes(query: str, result: LexicalResult) -> list[str]:
    """The engine's notes on a lexical query, plus a hint when a quoted string of the
    query holds a regex escape that quotes turn into a literal, or, when nothing matched,
    regex operators (`search.lexical.query_hints`)."""
    hints = [quoted_escape_hint(query)]
    if not result.files:  # a quoted regex group may be meant: only when nothing matched
        hints.append(quoted_regex_hint(query))
    return [*result.notes, *(h for h in hints if h)]


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
