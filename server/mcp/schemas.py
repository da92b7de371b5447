"""The shapes of MCP tool answers: `Rendered` and each tool's structured output schema.

`Rendered` is what every renderer returns: the Markdown the model reads plus `data`, the
same content as structured data. `data` follows the tool's `*Output` TypedDict below
(`SearchOutput`, `SemanticOutput`, `SymbolsOutput`, `ReferencesOutput`, `FilesOutput`,
`FileContentOutput`, `ReposOutput`, `IndexOutput`, `IndexStatusOutput`); the nested
`*Out` dicts are their items, and `Freshness` is the per-repository index-age row most
answers carry.

Invariants: declarations only, no behaviour; the SDK turns the `*Output` types into the
tools' published JSON schemas, so every field type stays JSON-friendly and field names
are the wire contract (some, like `definitionCount`, follow the original tool
contracts). `HitOut` and `JobOut` are the records `Hit` and `JobSnapshot` as JSON, field
for field (`tests/server/test_mcp_published_schemas.py` holds them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NotRequired, get_type_hints

from typing_extensions import TypedDict


class Freshness(TypedDict):
    """When a repository was last indexed, and whether a re-index is running now."""

    repository: str
    indexed_at: str | None
    indexing: bool
    embedding_backlog: NotRequired[int]
    """Checkpoints still without embeddings, when this server's watcher has a backlog:
    text and symbol search see them, semantic search not yet."""


class MatchOut(TypedDict):
    """A matching line; `ranges` are [start_column, end_column) pairs, 1-based."""

    line: int
    text: str
    ranges: list[list[int]]


class ContextBlockOut(TypedDict):
    """A run of lines around matches, starting at `start_line`."""

    start_line: int
    lines: list[str]


class SearchFileOut(TypedDict):
    repository: str
    path: str
    language: str
    branches: list[str]
    score: float
    matches: list[MatchOut]
    context: list[ContextBlockOut]


class SearchOutput(TypedDict):
    """`search`: files matching a Zoekt query, best first."""

    query: str
    files: list[SearchFileOut]
    match_count: int
    file_count: int
    duration_ms: float
    partial: bool
    notes: list[str]
    next_cursor: str | None
    truncated: bool
    freshness: list[Freshness]


class CopyOut(TypedDict):
    """Another place with the same text as a result."""

    repository: str
    path: str
    start_line: int
    end_line: int


class HitOut(TypedDict):
    repository: str
    path: str
    language: str
    start_line: int
    end_line: int
    score: float
    sources: list[str]
    """Engines that found it: semantic, keyword (BM25), lexical (embedded engine), zoekt."""
    symbol: str | None
    snippet: str
    """The lines from `start_line` on (a lexical hit: its first context block)."""
    also_in: list[CopyOut]
    """Other places holding exactly this text (identical copies answer once)."""
    context: NotRequired[list[ContextBlockOut]]
    """A lexical hit with separate runs of lines: every block, each with its own
    `start_line`."""


class ExplainPart(TypedDict):
    """One feature's part in a hybrid hit's score (`search.explain_rank`)."""

    feature: str
    value: float
    kind: str
    """`add` (added to the score), `factor` (the score multiplied by it), `weight` (with
    `[search] fusion = "fitted"`: the model's weight times the feature's value, added to
    the sum whose exp is the score), `rule` (a hard rule moved the hit's file to the
    front)."""


class SemanticOutput(TypedDict):
    """`semantic_search`: ranked checkpoints."""

    query: str
    mode: str
    results: list[HitOut]
    next_cursor: str | None
    notes: list[str]
    truncated: bool
    freshness: list[Freshness]
    explain: NotRequired[list[list[ExplainPart]]]
    """With `explain` in hybrid mode: each result's features, in the results' order."""


class SymbolOut(TypedDict):
    name: str
    kind: str
    repository: str
    file_path: str
    line: int
    container: str | None
    language: str


class SymbolRequest(TypedDict):
    query: str
    kinds: list[str] | None
    max_items: int | None
    start_index: int
    pagination_id: str | None


class SymbolsOutput(TypedDict):
    """`search_symbols`: the symbol search response of symbol-search-api.md."""

    request: SymbolRequest
    items: list[SymbolOut]
    best_match: str | None
    """How the best item matches the query's name: exact, prefix, substring or fuzzy (then
    no name holds the query and the items are only the closest guesses); null when none."""
    exact: int
    """How many of the `total` results name the query exactly: they come first, the similar
    names (prefix, substring, fuzzy) after them."""
    start_index: int
    max_items: int | None
    total: int | None
    has_more: bool
    pagination_id: str | None
    next_start_index: int | None
    truncated: bool
    freshness: list[Freshness]


class ReferenceOut(TypedDict):
    kind: str
    repository: str
    file: str
    line: int
    column: int
    context: str
    language: str


class ReferenceStats(TypedDict):
    definitionCount: int
    usageCount: int
    duration: float
    """Milliseconds."""


class ReferencesOutput(TypedDict):
    """`find_references`: definitions first, then usages."""

    symbol: str
    language: str | None
    definitions: list[ReferenceOut]
    usages: list[ReferenceOut]
    stats: ReferenceStats
    truncated: bool
    freshness: list[Freshness]


class FileOut(TypedDict):
    repository: str
    path: str
    language: str
    branches: list[str]


class FilesOutput(TypedDict):
    """`search_files`: files whose path matches."""

    pattern: str
    files: list[FileOut]
    file_count: int
    duration_ms: float
    next_cursor: str | None
    truncated: bool
    freshness: list[Freshness]


class FileContentOutput(TypedDict):
    """`file_content`: a file or a line range of it."""

    repository: str
    path: str
    branch: str
    language: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    truncated: bool
    next_start_line: int | None


class BranchOut(TypedDict):
    name: str
    sha: str


class RepoOptionsOut(TypedDict):
    """The walk options a repository's next refresh uses (`indexer.walk.repo_options`)."""

    include_patterns: list[str]
    exclude_patterns: list[str]
    max_file_size: int
    explicit: list[str]
    """Those given explicitly to an earlier run (they stick); the rest are the server's."""


class RepoOut(TypedDict):
    name: str
    root: str | None
    source: str
    files: int
    bytes: int
    branches: list[BranchOut]
    symbols: bool
    indexed_at: str | None
    indexing: bool
    coverage: float | None
    options: RepoOptionsOut | None
    root_moved: NotRequired[str]
    """Why the repository's root is no longer the folder indexed (`indexer.walk.rootpin`):
    it is then not read, watched or re-indexed. Absent when it is."""


class ReposOutput(TypedDict):
    """`list_repos`: indexed repositories with their size and freshness."""

    filter: str | None
    repositories: list[RepoOut]
    total: int
    total_files: int
    total_bytes: int
    truncated: bool


class FailureOut(TypedDict):
    file: str
    error: str


class RemovedOut(TypedDict):
    file: str
    reason: str


class SkippedOut(TypedDict):
    file: str
    reason: str
    detail: str


class LargeFileOut(TypedDict):
    file: str
    checkpoints: int


class WindowedFileOut(TypedDict):
    file: str
    reason: str


class IndexOutput(TypedDict):
    """`index_repository`: what the run did (the original contract's fields first)."""

    path: str
    files_indexed: int
    include_patterns: list[str]
    exclude_patterns: list[str]
    max_file_size: int
    indexed_at: str
    repository: str
    files_updated: int
    files_unchanged: int
    files_removed: int
    removed_reasons: dict[str, int]
    """Why files left the index: `deleted`, or the walk's skip reason (`not_included`,
    `excluded`, `ignored`, `too_large`, ...) when the new options leave them out."""
    removed: list[RemovedOut]
    files_skipped: dict[str, int]
    skipped: list[SkippedOut]
    """The first files the walk refused (path, reason, detail); `files_skipped` counts
    them all."""
    sensitive_files: list[str]
    """The first files left out as likely secrets (by name or content)."""
    files_masked: int
    """Files of this run indexed with a likely secret masked (its characters as `*`)."""
    masked_files: list[str]
    """The first of them."""
    not_embedded: dict[str, int]
    """Files kept for lexical search but not embedded, by role (`lockfile`, `vendored`,
    `built`, `minified`, `certificate`, `data`)."""
    not_embedded_files: list[SkippedOut]
    large_files: list[LargeFileOut]
    """Files that yielded a thousand checkpoints or more in this run."""
    windowed_files: list[WindowedFileOut]
    """Code files cut into line windows because their syntax parse ran over its time
    budget (`chunk.parse_budget_ms`) or failed."""
    files_failed: int
    errors: list[FailureOut]
    checkpoints: int
    chunks_embedded: int
    duration_ms: int
    job_id: str | None
    stopped: bool
    """The run was stopped before the end (the server or daemon doing it was stopped): the
    text says what is missing; the same call again finishes it."""


class ErrorOut(TypedDict):
    error: str
    message: str
    hint: str | None
    details: dict[str, Any]


class JobOut(TypedDict):
    job_id: str
    path: str
    state: str
    phase: str
    progress: int
    total: int | None
    message: str
    started_at: str
    finished_at: str | None
    result: IndexOutput | None
    error: ErrorOut | None


class IndexJobOutput(TypedDict):
    """`index_repository` for a run that goes on in the background: a normal answer with
    the job, one progress figure and how to follow it."""

    path: str
    job_id: str
    state: str
    """`running` or `queued` (behind another job of the same path: `after`)."""
    phase: str
    progress: int
    """Work items done (files walked + checkpoints embedded) of `total` (once known)."""
    total: int | None
    percent: float | None
    started_at: str
    after: NotRequired[str]
    follow: str
    """What to call to follow it (`index_status` with this `job_id`)."""


def _optional_keys(name: str, *parts: Any, required: tuple[str, ...]) -> Any:
    """A TypedDict with every key of `parts`, only `required` ones required: the output
    schema of a tool that answers with one part or another."""
    fields: dict[str, Any] = {}
    for part in parts:
        for key, hint in get_type_hints(part).items():
            fields[key] = hint if key in required else NotRequired[hint]
    return TypedDict(name, fields)  # type: ignore[operator]  # the functional form


IndexRepositoryOutput = _optional_keys("IndexRepositoryOutput", IndexOutput, IndexJobOutput,
                                       required=("path",))
"""`index_repository`: the finished run (`IndexOutput`) or the background job
(`IndexJobOutput`)."""


class IndexStatusOutput(TypedDict):
    """`index_status`: background index jobs of this server, and index freshness."""

    jobs: list[JobOut]
    freshness: list[Freshness]


@dataclass(frozen=True, slots=True)
class Rendered:
    """A tool answer: Markdown for the model plus the same data, structured."""

    markdown: str
    data: dict[str, Any]
