"""One request record per use case that takes more than a value or two: its arguments and
their defaults, written once.

`server.use_cases.UseCases` turns each into a method with the record's signature
(`service.search("retry", mode="hybrid")` builds a `SearchRequest`), which the CLI, the MCP
tools and the daemon call alike; the daemon client sends a record's fields as the request
params, and `Service` hands the record to the collaborator that answers it. Light: plain
dataclasses, importable by the CLI's start-up path.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass


@dataclass(frozen=True)
class SearchRequest:
    """Ranked hits for a query in one mode (`semantic`, `hybrid`, `keyword`, `lexical`)."""

    query: str
    _: KW_ONLY
    mode: str = "semantic"
    limit: int | None = None
    """Hits per page (default `search.default_limit`)."""
    cursor: str | None = None
    repositories: list[str] | None = None
    path_glob: str | None = None
    language: str | None = None
    context_lines: int | None = None
    """Lines around a lexical hit's matches (default `search.context_lines`)."""
    explain: bool = False
    """Hybrid mode: each hit's features and their contributions to its score, in
    `stats["explain"]` (`search.explain_rank`)."""


@dataclass(frozen=True)
class ExplainRequest:
    """How a query would run, without running it."""

    query: str
    mode: str


@dataclass(frozen=True)
class LexicalRequest:
    """A Zoekt-syntax search, one page of files."""

    query: str
    _: KW_ONLY
    limit: int = 30
    context_lines: int = 3
    cursor: str | None = None


@dataclass(frozen=True)
class FilesRequest:
    """Files whose path matches a glob or a regular expression, one page."""

    pattern: str
    _: KW_ONLY
    limit: int = 50
    cursor: str | None = None
    repositories: list[str] | None = None


@dataclass(frozen=True)
class ReferencesRequest:
    """Definitions and word-boundary usages of a symbol."""

    symbol: str
    _: KW_ONLY
    language: str | None = None
    repositories: list[str] | None = None
    limit: int = 100


@dataclass(frozen=True)
class SymbolsRequest:
    """Symbols by name, exact > prefix > substring > fuzzy, one page."""

    query: str
    _: KW_ONLY
    kinds: list[str] | None = None
    max_items: int | None = None
    start_index: int = 0
    pagination_id: str | None = None
    repositories: list[str] | None = None


@dataclass(frozen=True)
class FileContentRequest:
    """A file (or a line range of it) of an indexed repository."""

    repository: str
    path: str
    _: KW_ONLY
    branch: str = "HEAD"
    start_line: int | None = None
    end_line: int | None = None


@dataclass(frozen=True)
class GraphRefsRequest:
    """References resolved to one definition (`ctxd refs`, `find_references`)."""

    symbol: str
    _: KW_ONLY
    repositories: list[str] | None = None
    limit: int = 200


@dataclass(frozen=True)
class CallsRequest:
    """Callers or callees of one definition, as a tree down to `depth`."""

    symbol: str
    _: KW_ONLY
    direction: str = "callers"
    depth: int = 1
    repositories: list[str] | None = None
    limit: int = 200


@dataclass(frozen=True)
class CallPathRequest:
    """The shortest call chains from one definition to another."""

    source: str
    target: str
    _: KW_ONLY
    depth: int = 5
    repositories: list[str] | None = None
    limit: int = 5
    """Chains listed at most (`truncated` says when there are more)."""


@dataclass(frozen=True)
class ImpactRequest:
    """What depends on a definition (or on every definition of a file), transitively."""

    subject: str
    _: KW_ONLY
    depth: int = 3
    repositories: list[str] | None = None
    limit: int = 200
