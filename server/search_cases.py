"""The search use cases of `Service`: every mode of search, symbols, references, files,
file content.

`SearchCases` is a mixin of `server.service.Service` (which supplies `settings`,
`store()`, `embedder` and `matrix`), so the CLI and the MCP server call one object. It
picks the lexical backend (Zoekt when `search.zoekt_url` is set, else the embedded
trigram engine), validates arguments, decodes and encodes paging cursors, and returns
records from `search/`; it renders nothing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.embedder import Embedder
from ctxd.indexer.errors import (
    IndexNotFound,
    QueryError,
    ValidationError,
)
from ctxd.indexer.models import Skipped, SkipReason
from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.walk.gitrefs import checked_out
from ctxd.indexer.walk.servable import name_verdict, read_servable, stored_walk_options
from ctxd.search.copies import collapse_copies
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.enclosing import with_enclosing_symbols
from ctxd.search.hybrid import (
    asks_how_to,
    is_identifier_query,
    leg_weights,
    rank_hybrid,
)
from ctxd.search.keyword import (
    add_line_matches,
    informative_terms,
    keyword_line_matches,
    keyword_search,
    keyword_terms,
)
from ctxd.search.lexical.engine import EmbeddedLexical
from ctxd.search.lexical.limits import check_query_length
from ctxd.search.lexical.query_hints import quoted_escape_hint
from ctxd.search.merge import by_score, merge_ranked
from ctxd.search.models import (
    FileContent,
    Hit,
    LexicalBackend,
    LexicalResult,
    MatchSource,
    References,
    SymbolItem,
    SymbolPage,
)
from ctxd.search.references import find_references
from ctxd.search.semantic import SearchFilters, VectorMatrix, semantic_search
from ctxd.search.symbols import (
    SYMBOL_KINDS,
    TIER_NAMES,
    find_symbols,
    merge_symbols,
    normalize_kind,
    rank_symbol,
    search_symbols,
    split_query,
    stored_kinds,
    unknown_kinds,
)
from ctxd.search.zoekt.client import ZoektClient
from ctxd.search.zoekt.query import escape_regex, scoped_query
from ctxd.server.config import Settings
from ctxd.server.file_access import not_found, refusal
from ctxd.server.hybrid_case import (
    EMBEDDED_LEXICAL_MAX_CHECKPOINTS,
    HYBRID_DEPTH,
    HybridCases,
    coverage_notes,
    embedded_lexical_fits,
    hybrid_lexical_query,
)
from ctxd.server.pages import MODES, LexicalPage, SearchPage, file_hit

__all__ = ["HYBRID_DEPTH", "MODES", "LexicalPage", "SearchCases", "SearchPage", "file_hit"]

def merged_page(fetch: Callable[[int], list[Hit]], offset: int, n: int,
                finish: Callable[[list[Hit]], list[Hit]] | None = None) -> list[Hit]:
    """Hits `offset` to `offset + n` of one result per definition (`search.merge`) and per
    distinct text (`search.copies`: identical copies answer once): ranked from the top, so
    pages agree with each other (a group of copies sits where its best member ranks),
    fetching twice as many raw hits until the list fills the page or the engine runs out
    (merges can take more than half of them: a long function's parts all match).
    `finish` completes the raw hits of the last fetch only, before they are merged (the
    keyword mode's line matches: the fetches before it are thrown away)."""
    want = offset + 2 * n
    while True:
        hits = fetch(want)
        merged = by_score(collapse_copies(merge_ranked(collapse_copies(hits))))
        if len(merged) >= offset + n or len(hits) < want:
            break
        want *= 2
    if finish is not None:
        merged = by_score(collapse_copies(merge_ranked(collapse_copies(finish(hits)))))
    return merged[offset : offset + n]


class SearchCases(HybridCases):
    """Search use cases; mixed into `Service`, which provides the members declared here."""

    settings: Settings
    matrix: VectorMatrix | None

    def store(self) -> IndexStore:  # pragma: no cover - provided by Service
        raise NotImplementedError

    @property
    def embedder(self) -> Embedder:  # pragma: no cover - provided by Service
        raise NotImplementedError

    # -- search --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: str = "semantic",
        limit: int | None = None,
        cursor: str | None = None,
        repositories: list[str] | None = None,
        path_glob: str | None = None,
        language: str | None = None,
        context_lines: int | None = None,
    ) -> SearchPage:
        """Ranked hits for `query` in the given mode, one page at a time; a lexical hit
        carries `context_lines` lines around its matches (default `search.context_lines`).

        Raises:
            ValidationError: empty query, bad mode or limit.
            InvalidCursor: a cursor from another query.
            ModelMismatch: the index belongs to another model.
        """
        if not query.strip():
            raise ValidationError(
                "query must not be empty",
                hint="Pass a question or keywords, e.g. `ctxd search \"where is retry backoff\"`.",
                details={"field": "query", "value": query},
            )
        check_query_length("query", query)
        reject_nul(query)
        if mode not in MODES:
            raise ValidationError(
                f"unknown mode {mode!r}",
                hint=f"Use one of: {', '.join(MODES)}.",
                details={"field": "mode", "value": mode, "allowed": list(MODES)},
            )
        limit = limit or self.settings.search.default_limit
        if context_lines is not None and not 0 <= context_lines <= 10:
            raise ValidationError(
                f"context_lines must be between 0 and 10, got {context_lines}",
                details={"field": "context_lines", "value": context_lines, "min": 0, "max": 10},
            )
        if not 1 <= limit <= 100:
            raise ValidationError(
                f"limit must be between 1 and 100, got {limit}",
                hint="Use a smaller limit and page with the cursor.",
                details={"field": "limit", "value": limit, "min": 1, "max": 100},
            )
        params = {
            "query": query,
            "mode": mode,
            "repositories": sorted(repositories or []),
            "path": path_glob,
            "language": language,
        }
        offset = 0
        if cursor:
            offset, limit = decode_cursor(cursor, params)
        filters = SearchFilters(tuple(repositories or ()), path_glob, language)
        store = self.store()
        self._check_repositories(store, filters.repositories)
        notes: list[str] = []
        context = self.settings.search.context_lines if context_lines is None else context_lines
        hits = self._ranked(store, query, mode, filters, offset, limit + 1, notes, context)
        more = len(hits) > limit
        hits = hits[:limit]
        if mode in ("hybrid", "semantic"):
            notes.extend(coverage_notes(self._coverage(store, filters.repositories), mode,
                                        bool(hits)))
        return SearchPage(
            query=query,
            mode=mode,
            results=hits,
            next_cursor=encode_cursor(params, offset + limit, limit) if more else None,
            stats={"offset": offset, "count": len(hits)},
            notes=notes,
        )

    def _ranked(
        self, store: IndexStore, query: str, mode: str, filters: SearchFilters, offset: int, n: int,
        notes: list[str], context_lines: int,
    ) -> list[Hit]:
        """`n` hits from `offset` on, in the given mode; the engines' notes (a bounded scan,
        a cut) are appended to `notes`."""
        if mode == "lexical":  # one hit per file: nothing to merge
            return self._lexical_hits(query, filters, offset, n, notes, context_lines)
        if mode == "keyword":
            postings = self.postings(store)
            return merged_page(
                lambda k: keyword_search(store, query, filters=filters, limit=k,
                                         postings=postings, with_matches=False), offset, n,
                lambda hits: keyword_line_matches(store, query, hits, filters=filters,
                                                  postings=postings))
        store.check_model(self.embedder.name)
        if mode == "semantic":
            return merged_page(lambda k: semantic_search(
                store, self.embedder, query, filters=filters, limit=k, matrix=self.matrix),
                offset, n)
        depth = max(HYBRID_DEPTH, offset + n)
        legs, _ms, leg_notes = self.hybrid_legs(query, depth=depth, filters=filters,
                                                store=store)
        notes.extend(leg_notes)
        pending = self._unembedded(store, filters, legs.get("keyword", []))
        ranked = rank_hybrid(query, legs, self.fusion_options(), unembedded=pending,
                             generated=self.generated_files(store, legs))
        return add_line_matches(store, query, ranked[offset : offset + n],
                                self.postings(store))

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
        source = MatchSource.ZOEKT if self.settings.search.zoekt_url else MatchSource.LEXICAL
        return with_enclosing_symbols(
            self.store(), [file_hit(fm, source) for fm in result.files if path_ok(fm.path)])


    # -- lexical (Zoekt syntax) ----------------------------------------------------------

    def explain(self, query: str, mode: str) -> str:
        """How a query would run, without running it: the parsed Zoekt query, trigrams and
        SQL for `lexical`; the keyword terms and FTS5 MATCH text for the other modes."""
        check_query_length("query", query)
        if mode == "lexical":
            if self.settings.search.zoekt_url:
                return f"lexical query sent to Zoekt at {self.settings.search.zoekt_url}: {query}"
            return EmbeddedLexical(self.store()).explain(query)
        store = self.store()
        terms = informative_terms(store, keyword_terms(query))
        lines = [f"mode: {mode}", f"keyword terms: {', '.join(terms) or '(none)'}",
                 store.explain_keywords(terms)]
        if mode in ("hybrid", "semantic"):
            lines.append(f"semantic: embed the query with {self.settings.embedding.model}, "
                         + ("in-memory matrix KNN" if self.matrix else store.explain_nearest()))
        if mode == "hybrid":
            o = self.fusion_options()
            w = leg_weights(query, o)
            kind = "identifier-like" if is_identifier_query(query) else "natural-language"
            lexical_query = hybrid_lexical_query(
                query, SearchFilters(), questions=bool(self.settings.search.zoekt_url))
            engine = "zoekt" if self.settings.search.zoekt_url else "lexical (embedded)"
            lines.append(
                f"fusion: {o.method} over {HYBRID_DEPTH} hits per leg; {kind} query: weights "
                f"semantic {w['semantic']:g} / keyword {w['keyword']:g} / {engine} "
                f"{w['lexical']:g}")
            if not self.settings.search.zoekt_url and not embedded_lexical_fits(self.store()):
                lines.append(f"{engine} leg: left out above {EMBEDDED_LEXICAL_MAX_CHECKPOINTS:,}"
                             " checkpoints (the keyword leg splits identifiers; a Zoekt "
                             "server's leg stays)")
            else:
                lines.append(f"{engine} leg query: {lexical_query or '(none: no identifiers)'}")
            lines.append(f"file summaries: weight {o.summary_weight:g} (the candidate files' "
                         "summary vectors)")
            if asks_how_to(query):
                lines.append(f"a how-to question: prose files x{o.promote_prose_for_how_to:g}")
        return "\n".join(lines)

    def zoekt(self) -> ZoektClient | None:
        """A client for the configured Zoekt server, or None without `search.zoekt_url`."""
        url = self.settings.search.zoekt_url
        return ZoektClient(url, timeout_ms=self.settings.search.zoekt_timeout_ms) if url else None

    def lexical_backend(self) -> LexicalBackend:
        """Zoekt when `search.zoekt_url` is set, else the embedded trigram engine."""
        return self.zoekt() or EmbeddedLexical(self.store())

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

    def lexical(
        self,
        query: str,
        *,
        limit: int = 30,
        context_lines: int = 3,
        cursor: str | None = None,
    ) -> LexicalPage:
        """A Zoekt-syntax search (the `search` tool), one page of files.

        Raises:
            QueryError: the query does not parse.
            BackendUnavailable / BackendTimeout: Zoekt is configured and failing.
            InvalidCursor: a cursor from another query.
        """
        if not query.strip():
            raise QueryError(
                "Query syntax error: empty query",
                hint="Pass a pattern, e.g. `lang:python def main` or `sym:Handler`.",
                details={"field": "query", "value": query},
            )
        check_query_length("query", query)
        reject_nul(query)
        bounds = (("limit", limit, 1, 100), ("contextLines", context_lines, 0, 10))
        for name, value, lo, hi in bounds:
            if not lo <= value <= hi:
                raise ValidationError(
                    f"{name} must be between {lo} and {hi}, got {value}",
                    details={"field": name, "value": value, "min": lo, "max": hi},
                )
        params = {"lexical": query, "context_lines": context_lines}
        offset = 0
        if cursor:
            offset, limit = decode_cursor(cursor, params)
        result = self._lexical_search(query, offset=offset, max_files=limit,
                                      context_lines=context_lines)
        result = replace(result, notes=tuple(lexical_notes(query, result)))
        end = offset + len(result.files)
        # A short page is the last one reachable (e.g. Zoekt's match limit cut the rest;
        # the result's notes say so).
        more = end < result.file_count and len(result.files) >= limit
        return LexicalPage(query=query, result=result, offset=offset,
                           next_cursor=encode_cursor(params, end, limit) if more else None)

    def files(
        self,
        pattern: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        repositories: list[str] | None = None,
    ) -> LexicalPage:
        """Files whose path matches a glob (`*`, `**`) or a regular expression."""
        if not pattern.strip():
            raise ValidationError(
                "pattern must not be empty",
                hint="Pass a glob like `**/*.py` or a regex like `test_.*\\.py$`.",
                details={"field": "pattern", "value": pattern},
            )
        check_query_length("pattern", pattern)
        params = {"files": pattern, "repositories": sorted(repositories or [])}
        if repositories and self.zoekt() is None:
            self._check_repositories(self.store(), tuple(repositories))
        offset = 0
        if cursor:
            offset, limit = decode_cursor(cursor, params)
        backend = self.lexical_backend()
        if isinstance(backend, ZoektClient):
            res = backend.search_filenames(pattern, max_files=offset + limit + 1)
        else:
            res = EmbeddedLexical(self.store()).search_files(
                pattern, max_files=offset + limit + 1, repos=repositories
            )
        files = res.files[offset : offset + limit]
        more = len(res.files) > offset + limit
        result = replace(res, files=files)
        nxt = encode_cursor(params, offset + limit, limit) if more else None
        return LexicalPage(query=pattern, result=result, offset=offset, next_cursor=nxt)

    def references(
        self,
        symbol: str,
        *,
        language: str | None = None,
        repositories: list[str] | None = None,
        limit: int = 100,
    ) -> References:
        """Definitions and word-boundary usages of `symbol`, labelled.

        Raises:
            IndexNotFound: a repository that is not indexed.
        """
        check_query_length("symbol", symbol)
        store = self.store()
        if self.zoekt() is None:
            self._check_repositories(store, tuple(repositories or ()))
        backend = self.lexical_backend()
        definitions = None
        if isinstance(backend, ZoektClient):
            name = symbol.rsplit(".", 1)[-1]
            definitions = [s for s in backend.symbols(f"sym:^{escape_regex(name)}$")
                           if s.name == name]
        return find_references(store, backend, symbol, language=language,
                               repositories=repositories, limit=limit, definitions=definitions)


    def _check_repositories(self, store: IndexStore, names: tuple[str, ...]) -> None:
        """Refuse a repository name that neither the index nor Zoekt (when configured)
        knows; a Zoekt-only repository is a valid scope."""
        known = {r.name for r in store.repos()}
        missing = [n for n in names if n not in known]
        client = self.zoekt() if missing else None
        if client is not None:
            known |= {z.name for z in client.list_repos()}
        for name in missing:
            if name not in known:
                raise not_indexed(name, known)


    # -- symbols, files, content -------------------------------------------------------

    def symbols(
        self,
        query: str,
        *,
        kinds: list[str] | None = None,
        max_items: int | None = None,
        start_index: int = 0,
        pagination_id: str | None = None,
        repositories: list[str] | None = None,
    ) -> SymbolPage:
        """Fuzzy symbol search: exact > prefix > substring > fuzzy, one page.

        Raises:
            ValidationError: empty query or bad paging values.
            InvalidCursor: a pagination_id from another query.
        """
        if not query.strip():
            raise ValidationError(
                "query must not be empty",
                hint="Pass a symbol name or part of one, e.g. `AuthService` or `calc`.",
                details={"field": "query", "value": query},
            )
        check_query_length("query", query)
        if start_index < 0 or (max_items is not None and max_items < 1):
            raise ValidationError(
                "start_index must be >= 0 and max_items >= 1",
                details={"field": "start_index" if start_index < 0 else "max_items",
                         "value": start_index if start_index < 0 else max_items},
            )
        params = {"symbols": query, "kinds": sorted(kinds or []),
                  "repositories": sorted(repositories or [])}
        if pagination_id:
            start_index, max_items = decode_cursor(pagination_id, params)
        store = self.store()
        self._check_repositories(store, tuple(repositories or ()))
        zoekt = self.zoekt()
        # Without Zoekt, a kind must be a known one or one the index holds (read only
        # when a kind is not known); Zoekt may know others.
        if kinds and zoekt is None and unknown_kinds(kinds) and (
                bad := unknown_kinds(kinds, in_index := stored_kinds(store))):
            allowed = sorted(SYMBOL_KINDS | set(in_index))
            raise ValidationError(
                f"unknown symbol kind {bad[0]!r} in kinds",
                hint=f"Use one or more of: {', '.join(allowed)}.",
                details={"field": "kinds", "value": bad[0] if len(bad) == 1 else bad,
                         "allowed": allowed},
            )
        if zoekt is None:
            items, total = find_symbols(
                store, query, kinds=kinds, repositories=repositories,
                limit=None if max_items is None else start_index + max_items,
                names=self.symbol_names(store))
        else:
            items = merge_symbols(
                query, search_symbols(store, query, kinds=kinds, repositories=repositories),
                zoekt_symbols(zoekt, query, kinds, repositories))
            total = len(items)
        end = total if max_items is None else start_index + max_items
        page = items[start_index:end]
        has_more = end < total
        return SymbolPage(
            best_match=best_match(query, items),
            query=query,
            items=page,
            total=total,
            start_index=start_index,
            has_more=has_more,
            pagination_id=encode_cursor(params, end, max_items or total) if has_more else None,
        )

    def file_content(
        self,
        repository: str,
        path: str,
        *,
        branch: str = "HEAD",
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> FileContent:
        """A file of an indexed repository, read from disk inside the repository root, if
        the walk that indexed the repository would index it (`indexer.walk.servable`). In a
        shared store, a repository another machine indexed (or whose folder is not here) is
        served from its indexed text: what the store holds is exactly what was admitted.

        Raises:
            IndexNotFound: "Repository not indexed: {repository}".
            FileNotFound: "File not found: {repository}/{path}" (also for paths that
                escape the root, directories and unreadable files).
            FileRefused: a likely secret, an ignored, excluded, not included, over-size
                or binary file; the hint says how to allow it.
            ValidationError: a bad line range.
        """
        store = self.store()
        repo = store.repo_by_name(repository)
        zoekt = self.zoekt() if repo is None else None
        if zoekt is not None:  # Zoekt indexed it under its own rules: refuse likely secrets
            if refused := name_verdict(path, self.settings.walk,
                                       only=frozenset({SkipReason.SENSITIVE})):
                raise refusal(repository, path, refused)
            return zoekt_file_content(zoekt, repository, path, branch, start_line, end_line)
        if repo is None:
            raise not_indexed(repository, {r.name for r in store.repos()})
        if self.settings.store.shared and (repo.host != this_host()
                                            or not os.path.isdir(repo.root)):
            return stored_file_content(store, repo, path, branch, start_line, end_line)
        served_branch = working_tree_branch(repository, repo.root, branch)
        opts = stored_walk_options(self.settings.walk, repo.options)
        try:
            served = read_servable(Path(repo.root), path, opts)
        except ValidationError:  # the root itself is gone or no longer a directory
            raise not_found(repository, path, "the repository root is not a directory") from None
        if isinstance(served, Skipped):
            raise refusal(repository, path, served)
        rel, text = served
        fc = line_range(repo.name, rel, text, served_branch, start_line, end_line)
        return replace(fc, working_tree=True)


def stored_file_content(
    store: IndexStore, repo: RepoRow, path: str, branch: str, start: int | None,
    end: int | None,
) -> FileContent:
    """A file of a repository indexed on another machine, from the store's copy of its text
    (the text the index was built from; `working_tree` False).

    Raises:
        FileNotFound: the store holds no such file.
        ValidationError: a branch other than `HEAD`, or a bad line range.
    """
    if branch not in ("", "HEAD"):
        raise ValidationError(
            f"branch {branch!r} is not served: {repo.name} is served from the text the team "
            "store indexed",
            hint='Omit `branch` (or pass "HEAD").',
            details={"field": "branch", "value": branch})
    rel = path.strip().lstrip("/")
    rows = store.query("SELECT id FROM files WHERE repo_id = ? AND path = ?", (repo.id, rel))
    texts = store.file_texts([int(rows[0][0])]) if rows else {}
    if not texts:
        raise not_found(repo.name, path, "not in the index")
    return line_range(repo.name, rel, next(iter(texts.values())), "HEAD", start, end)


def best_match(query: str, ranked: list[SymbolItem]) -> str | None:
    """How the best of `ranked` (symbol results, best first) matches `query`'s name part:
    `exact`, `prefix`, `substring` or `fuzzy` (`search.symbols.TIER_NAMES`); None when
    nothing matched. Fuzzy means no name holds the query at all."""
    if not ranked:
        return None
    rank = rank_symbol(split_query(query)[1], ranked[0].name)
    return TIER_NAMES[rank[0]] if rank is not None else None


def reject_nul(query: str) -> None:
    """Refuse a query holding a NUL character: no indexed text contains one (files with
    NUL bytes are binary and never indexed), and SQLite's FTS5 cannot parse it.

    Raises:
        QueryError: names the character's position.
    """
    if (at := query.find("\x00")) >= 0:
        raise QueryError(
            f"Query syntax error: the query contains a NUL character (\\x00) at position {at}",
            hint="Remove the NUL character: indexed files never contain one (files with NUL "
            "bytes are binary and left out).",
            details={"field": "query", "position": at},
        )


def lexical_notes(query: str, result: LexicalResult) -> list[str]:
    """The engine's notes on a lexical query, plus a hint when a quoted string of the
    query holds a regex escape that quotes turn into a literal (`search.lexical.query_hints`)."""
    hint = quoted_escape_hint(query)
    return [*result.notes, *([hint] if hint else [])]


def working_tree_branch(repository: str, root: str, asked: str) -> str:
    """The branch a local repository's `file_content` serves: the one checked out in its
    working tree (`HEAD` outside git). `asked` must be `HEAD`, that branch or (a prefix of
    at least 7 hex digits of) its commit.

    Raises:
        ValidationError: another branch was asked for.
    """
    head = checked_out(root)
    current = head.branch if head is not None and head.branch else "HEAD"
    sha = head.sha if head is not None else None
    if asked in ("", "HEAD", current) or (sha and len(asked) >= 7 and sha.startswith(asked)):
        return current
    has = head.label if head is not None else "no git branch (not a git repository)"
    raise ValidationError(
        f"branch {asked!r} is not served: {repository} is read from its working tree, which "
        f"has {has} checked out",
        hint=f'Omit `branch` (or pass "HEAD" or "{current}"): ctxd indexes and serves the '
        "working tree only; check the branch out and re-index to read another one.",
        details={"field": "branch", "value": asked, "checked_out": current,
                 "commit": sha},
    )


def not_indexed(name: str, known: set[str]) -> IndexNotFound:
    """The one `NOT_FOUND` error for a repository name that is not indexed."""
    return IndexNotFound(
        f"Repository not indexed: {name}",
        hint=f"Indexed repositories: {', '.join(sorted(known)) or 'none'}. "
        "Run `ctxd index PATH` first (`list_repos` lists them).",
        details={"field": "repository", "value": name},
    )


def zoekt_symbols(
    client: ZoektClient, query: str, kinds: list[str] | None, repositories: list[str] | None
) -> list[SymbolItem]:
    """Zoekt `sym:` definitions for a symbol query, kind-filtered on the client."""
    name = query.strip().rsplit(".", 1)[-1]
    pattern = escape_regex(name)  # Zoekt matches it as a substring; fuzzy stays local
    wanted = {k.lower() for k in kinds or []}
    found = [replace(s, kind=normalize_kind(s.kind))
             for s in client.symbols(f"sym:{pattern}", max_files=200)]
    return [
        s for s in found
        if (not wanted or s.kind in wanted)
        and (not repositories or s.repository in repositories)
    ]



def zoekt_file_content(
    client: ZoektClient, repository: str, path: str, branch: str, start: int | None,
    end: int | None,
) -> FileContent:
    """A file of a repository only Zoekt knows (the whole-file recipe), as a line range."""
    text = client.file_content(repository, path, branch)
    return line_range(repository, path, text, branch, start, end)


def line_range(
    repository: str, path: str, text: str, branch: str, start: int | None, end: int | None,
    *, truncated: bool = False,
) -> FileContent:
    """Lines `start..end` (1-based, inclusive; default the whole file) of `text`.

    Line ends are `\n`, `\r\n` or a bare `\r` (numbered like the index numbers them) and
    come back as `\n`; a range that reaches the last line keeps the file's final newline,
    so the whole file's `content` is the file's text.

    Raises:
        ValidationError: start < 1, end < start, or a start past the last line (line 1
            of an empty file is its empty content).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    final_newline = text.endswith("\n")
    lines = text.split("\n")
    if final_newline:
        lines.pop()
    total = len(lines)
    a = 1 if start is None else start  # 0 is a bad line number, not "from the start"
    b = total if end is None else end
    if a < 1 or b < a:
        raise ValidationError(
            f"invalid line range {a}:{b}",
            hint=f"Lines are 1-based and inclusive; this file has {total} lines.",
            details={"field": "start_line", "start_line": a, "end_line": b, "total_lines": total},
        )
    if a > max(total, 1):
        raise ValidationError(
            f"line range {a}:{b} starts past the end of {path}, which has {total} lines",
            hint=f"Ask for lines 1 to {total}." if total else "The file is empty.",
            details={"field": "start_line", "start_line": a, "end_line": b, "total_lines": total},
        )
    b = min(b, total)
    content = "\n".join(lines[a - 1 : b])
    if final_newline and b == total and a <= total:
        content += "\n"
    return FileContent(repository=repository, path=path, language=detect_language(path),
                       content=content, start_line=a, end_line=b,
                       total_lines=total, branch=branch, truncated=truncated)
