"""The search use cases of `Service`: every mode of search, symbols, references, files,
file content.

`SearchCases` is a mixin of `server.service.Service` (which supplies `settings`,
`store()`, `embedder` and `matrix`), so the CLI and the MCP server call one object. It
picks the lexical backend (Zoekt when `search.zoekt_url` is set, else the embedded
trigram engine), validates arguments, decodes and encodes paging cursors, and returns
records from `search/`; it renders nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxd.indexer.embedder import Embedder
from ctxd.indexer.errors import FileNotFound, IndexNotFound, QueryError, ValidationError
from ctxd.indexer.languages import detect_language
from ctxd.indexer.pathguard import resolve_inside
from ctxd.indexer.store import Store
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.hybrid import fuse
from ctxd.search.keyword import informative_terms, keyword_search, keyword_terms, match_expression
from ctxd.search.lexical import EmbeddedLexical
from ctxd.search.limits import check_query_length
from ctxd.search.models import (
    FileContent,
    FileMatch,
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
from ctxd.search.symbols import merge_symbols, normalize_kind, search_symbols
from ctxd.search.zoekt import ZoektClient
from ctxd.search.zoekt_query import escape_regex, scoped_query
from ctxd.server.config import Settings

MODES = ("hybrid", "semantic", "keyword", "lexical")
"""hybrid: semantic + keyword (+ Zoekt) fused; semantic: vectors only; keyword: BM25 over
checkpoint words; lexical: the query is Zoekt syntax, run by the lexical engine."""

HYBRID_DEPTH = 50
"""How many hits each leg contributes to fusion."""


@dataclass(slots=True)
class LexicalPage:
    """One page of a lexical (Zoekt-syntax) search."""

    query: str
    result: LexicalResult
    offset: int
    next_cursor: str | None = None


@dataclass(slots=True)
class SearchPage:
    """One page of ranked hits."""

    query: str
    mode: str
    results: list[Hit]
    next_cursor: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class SearchCases:
    """Search use cases; mixed into `Service`, which provides the members declared here."""

    settings: Settings
    matrix: VectorMatrix | None

    def store(self) -> Store:  # pragma: no cover - provided by Service
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
    ) -> SearchPage:
        """Ranked hits for `query` in the given mode, one page at a time.

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
        if mode not in MODES:
            raise ValidationError(
                f"unknown mode {mode!r}",
                hint=f"Use one of: {', '.join(MODES)}.",
                details={"field": "mode", "value": mode, "allowed": list(MODES)},
            )
        limit = limit or self.settings.search.default_limit
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
        hits = self._ranked(store, query, mode, filters, offset, limit + 1, notes)
        more = len(hits) > limit
        hits = hits[:limit]
        return SearchPage(
            query=query,
            mode=mode,
            results=hits,
            next_cursor=encode_cursor(params, offset + limit, limit) if more else None,
            stats={"offset": offset, "count": len(hits)},
            notes=notes,
        )

    def _ranked(
        self, store: Store, query: str, mode: str, filters: SearchFilters, offset: int, n: int,
        notes: list[str] | None = None,
    ) -> list[Hit]:
        """`n` hits from `offset` on, in the given mode; the engine's notes (lexical: what
        cut the results) are appended to `notes`."""
        if mode == "keyword":
            return keyword_search(store, query, filters=filters, limit=n, offset=offset)
        if mode == "lexical":
            return self._lexical_hits(query, filters, offset, n, notes)
        store.check_model(self.embedder.name)
        if mode == "semantic":
            return semantic_search(store, self.embedder, query, filters=filters, limit=n,
                                   offset=offset, matrix=self.matrix)
        depth = max(HYBRID_DEPTH, offset + n)
        legs = [
            semantic_search(store, self.embedder, query, filters=filters, limit=depth,
                            matrix=self.matrix),
            keyword_search(store, query, filters=filters, limit=depth),
        ]
        weights = [1.0, self.settings.search.keyword_weight]
        return fuse(legs, k=self.settings.search.rrf_k, weights=weights)[offset : offset + n]

    def _lexical_hits(
        self, query: str, filters: SearchFilters, offset: int, n: int,
        notes: list[str] | None = None,
    ) -> list[Hit]:
        """Zoekt-syntax results as hits (one per file: its matching line span)."""
        scope = scoped_query(query, filters.repositories, filters.language)
        result = self._lexical_search(scope, offset=offset, max_files=n,
                                      context_lines=self.settings.search.context_lines)
        if notes is not None:
            notes.extend(result.notes)
        path_ok = filters.path_matcher()
        return [file_hit(fm) for fm in result.files if path_ok(fm.path)]


    # -- lexical (Zoekt syntax) ----------------------------------------------------------

    def explain(self, query: str, mode: str) -> str:
        """How a query would run, without running it: the parsed Zoekt query, trigrams and
        SQL for `lexical`; the keyword terms and FTS5 MATCH text for the other modes."""
        check_query_length("query", query)
        if mode == "lexical":
            if self.settings.search.zoekt_url:
                return f"lexical query sent to Zoekt at {self.settings.search.zoekt_url}: {query}"
            return EmbeddedLexical(self.store()).explain(query)
        terms = informative_terms(self.store(), keyword_terms(query))
        lines = [f"mode: {mode}", f"keyword terms: {', '.join(terms) or '(none)'}",
                 f"FTS5 MATCH on chunk_fts: {match_expression(terms) if terms else '(none)'}"]
        if mode in ("hybrid", "semantic"):
            lines.append(f"semantic: embed the query with {self.settings.embedding.model}, "
                         f"{'in-memory matrix' if self.matrix else 'sqlite-vec'} KNN")
        if mode == "hybrid":
            lines.append(f"fusion: RRF k={self.settings.search.rrf_k}, weights semantic 1.0 / "
                         f"keyword {self.settings.search.keyword_weight}, "
                         f"{HYBRID_DEPTH} hits per leg")
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
        """Definitions and word-boundary usages of `symbol`, labelled."""
        check_query_length("symbol", symbol)
        store = self.store()
        backend = self.lexical_backend()
        definitions = None
        if isinstance(backend, ZoektClient):
            name = symbol.rsplit(".", 1)[-1]
            definitions = [s for s in backend.symbols(f"sym:^{escape_regex(name)}$")
                           if s.name == name]
        return find_references(store, backend, symbol, language=language,
                               repositories=repositories, limit=limit, definitions=definitions)


    @staticmethod
    def _check_repositories(store: Store, names: tuple[str, ...]) -> None:
        known = {r.name for r in store.repos()}
        for name in names:
            if name not in known:
                raise IndexNotFound(
                    f"Repository not indexed: {name}",
                    hint=f"Indexed repositories: {', '.join(sorted(known)) or 'none'}. "
                    "Run `ctxd index PATH` first.",
                    details={"field": "repository", "value": name},
                )


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
        items = search_symbols(store, query, kinds=kinds, repositories=repositories)
        zoekt = self.zoekt()
        if zoekt is not None:
            items = merge_symbols(
                query, items, zoekt_symbols(zoekt, query, kinds, repositories))
        total = len(items)
        end = total if max_items is None else start_index + max_items
        page = items[start_index:end]
        has_more = end < total
        return SymbolPage(
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
        max_bytes: int = 1 << 20,
    ) -> FileContent:
        """A file of an indexed repository, read from disk inside the repository root.

        Raises:
            IndexNotFound: "Repository not indexed: {repository}".
            FileNotFound: "File not found: {repository}/{path}" (also for paths that
                escape the root).
            ValidationError: a bad line range.
        """
        store = self.store()
        repo = store.repo_by_name(repository)
        zoekt = self.zoekt() if repo is None else None
        if zoekt is not None:
            return zoekt_file_content(zoekt, repository, path, branch, start_line, end_line)
        if repo is None:
            raise IndexNotFound(
                f"Repository not indexed: {repository}",
                hint="`list_repos` (or `ctxd repos`) shows the indexed repositories.",
                details={"field": "repository", "value": repository},
            )
        not_found = FileNotFound(
            f"File not found: {repository}/{path}",
            hint="Use `search_files` to find the right path (paths are relative to the "
            "repository root).",
            details={"field": "path", "repository": repository, "path": path},
        )
        try:
            real = resolve_inside(Path(repo.root), path)
        except ValidationError:
            raise not_found from None
        try:
            with open(real, "rb") as f:
                data = f.read(max_bytes + 1)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            raise not_found from None
        text = data[:max_bytes].decode("utf-8", errors="replace")
        rel = Path(real).relative_to(Path(repo.root).resolve()).as_posix()
        return line_range(repo.name, rel, text, branch, start_line, end_line,
                          truncated=len(data) > max_bytes)


def file_hit(fm: FileMatch) -> Hit:
    """A lexical file match as a ranked hit spanning its matching lines."""
    lines = [m.line for m in fm.matches] or [1]
    snippet = "\n".join("\n".join(b.lines) for b in fm.blocks) if fm.blocks else "\n".join(
        m.text for m in fm.matches)
    return Hit(
        repository=fm.repository,
        path=fm.path,
        language=fm.language,
        start_line=min(lines),
        end_line=max(lines),
        score=round(fm.score, 4),
        sources=(MatchSource.LEXICAL,),
        snippet=snippet,
        matches=fm.matches,
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

    Raises:
        ValidationError: start < 1 or end < start.
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total = len(lines)
    a, b = start or 1, end or total
    if a < 1 or b < a:
        raise ValidationError(
            f"invalid line range {a}:{b}",
            hint=f"Lines are 1-based and inclusive; this file has {total} lines.",
            details={"field": "start_line", "start_line": a, "end_line": b, "total_lines": total},
        )
    b = min(b, total)
    return FileContent(repository=repository, path=path, language=detect_language(path),
                       content="\n".join(lines[a - 1 : b]), start_line=a, end_line=b,
                       total_lines=total, branch=branch, truncated=truncated)
