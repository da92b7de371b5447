"""Records the search layer returns: hits, line matches, symbol items, backend results.

Search returns these; rendering (Markdown, JSON) lives in `server/cli/render.py`.
Lines are 1-based; columns are 1-based character offsets with an exclusive end
(as Zoekt's `Location.Column`): the match of `foo` at the start of a line is
`start_column=1, end_column=4`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol


class MatchSource(StrEnum):
    """Which engine found a hit."""

    SEMANTIC = "semantic"
    """Vector similarity between the query and a checkpoint."""
    KEYWORD = "keyword"
    """BM25 over the checkpoints' words (the `keyword` mode)."""
    LEXICAL = "lexical"
    """A literal or regular-expression match by the embedded lexical (trigram) engine."""
    ZOEKT = "zoekt"
    """A literal or regular-expression match by a Zoekt server."""
    SYMBOL = "symbol"
    """A definition whose name matches."""


@dataclass(frozen=True, slots=True)
class LineMatch:
    """One matching line and the ranges that matched on it."""

    line: int
    text: str
    ranges: tuple[tuple[int, int], ...] = ()
    """(start_column, end_column) pairs, 1-based, end exclusive."""


@dataclass(frozen=True, slots=True)
class Block:
    """A contiguous run of lines shown for a hit: matches plus their context lines."""

    start_line: int
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileMatch:
    """Every match in one file for a lexical query."""

    repository: str
    path: str
    language: str
    score: float
    matches: tuple[LineMatch, ...]
    blocks: tuple[Block, ...] = ()
    branches: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LexicalResult:
    """The answer of a lexical backend (embedded engine or Zoekt)."""

    files: list[FileMatch]
    match_count: int
    file_count: int
    """Files that matched, which can exceed `len(files)` when the display limit cut."""
    duration_ms: float
    partial: bool = False
    """True when the backend stopped early (time-out, shard limits, scan bound)."""
    notes: tuple[str, ...] = ()
    """Human-readable remarks, e.g. that a query without trigrams fell back to a scan."""


@dataclass(frozen=True, slots=True)
class SymbolItem:
    """A symbol search result."""

    name: str
    kind: str
    repository: str
    path: str
    line: int
    container: str | None = None
    language: str = ""
    end_line: int | None = None


@dataclass(frozen=True, slots=True)
class Copy:
    """Another place that holds the same text as a hit (`search.copies`)."""

    repository: str
    path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result of `semantic_search` / `ctxd search` (any mode)."""

    repository: str
    path: str
    language: str
    start_line: int
    end_line: int
    score: float
    sources: tuple[MatchSource, ...]
    symbol: str | None = None
    snippet: str = ""
    """The lines from `start_line` on (for a lexical hit: its first context block)."""
    matches: tuple[LineMatch, ...] = field(default_factory=tuple)
    blocks: tuple[Block, ...] = field(default_factory=tuple)
    """A lexical hit's context blocks, each numbered from its own `start_line` (separate
    runs of lines, not one span); empty for checkpoint hits."""
    checkpoint: int | None = None
    """The checkpoint's row id for a checkpoint hit (semantic, keyword legs); None for a
    file-level hit. Distinct checkpoints can share a line range (the parts of one very
    long line), so fusion tells them apart by this id, never by lines alone."""
    also_in: tuple[Copy, ...] = ()
    """The other places holding this hit's very text (identical copies answer once, at the
    copy `search.copies` prefers), among the candidates the search ranked."""


class LexicalBackend(Protocol):
    """A lexical engine: the embedded trigram index or a Zoekt server."""

    name: str

    def search(self, query: str, *, max_files: int, context_lines: int) -> LexicalResult:
        """Run a Zoekt-syntax query; return up to `max_files` files, best first.

        Raises:
            QueryError: the query does not parse (position and hint in the message).
            BackendUnavailable / BackendTimeout: Zoekt only.
        """
        ...


@dataclass(frozen=True, slots=True)
class SearchOptions:
    """Search settings (the `[search]` section of the config)."""

    zoekt_url: str = ""
    """A zoekt-webserver (run with -rpc) for lexical search; empty = the embedded engine."""
    zoekt_timeout_ms: int = 30000
    default_limit: int = 10
    context_lines: int = 3
    fusion: str = "fitted"
    """Hybrid fusion: `fitted` (the default; `search.rank_model`: the shipped weights over
    each candidate's features, on top of `score`'s ranking, issue 42), `score`
    (normalised scores, query-aware, re-ranked: the hand-set weights alone) or `rrf`."""
    rrf_k: int = 10
    """Reciprocal-rank-fusion constant when `fusion = "rrf"`."""
    keyword_weight: float = 0.6
    """Weight of the keyword (BM25) leg against the semantic leg in hybrid fusion."""
    lexical_weight: float = 0.15
    """Weight of the lexical leg (Zoekt, else the embedded engine) in hybrid fusion."""
    summary_weight: float = 0.1
    """Weight of the file summaries' similarity (file-level evidence) in hybrid fusion."""
    hybrid_lexical_timeout_ms: int = 1000
    """Hybrid search waits this long for the lexical leg (Zoekt), then answers without it."""
    token_budget: int = 6000
    """Approximate token budget of one page of results for agents."""
    quantized_above: int = 200_000
    """Long-lived processes (the daemon) rank vectors with an int8 coarse pass and a
    float16 re-score (`search.vectors.Int8Matrix`) once the index holds more than this
    many (recall 0.999 against exact, docs/BENCHMARKS.md); 0 = always the exact float32
    product."""


@dataclass(frozen=True, slots=True)
class SymbolPage:
    """One page of `search_symbols`."""

    query: str
    items: list[SymbolItem]
    total: int
    start_index: int
    has_more: bool
    pagination_id: str | None = None
    best_match: str | None = None
    """How the best result matches the query's name: `exact`, `prefix`, `substring` or
    `fuzzy` (then no name holds the query: the items are guesses); None without items."""
    exact: int = 0
    """How many of the results match the query's name exactly (they come first; the
    other `total - exact` are similar names)."""


@dataclass(frozen=True, slots=True)
class Reference:
    """A definition or usage site of a symbol."""

    kind: str
    """`definition` or `usage`."""
    repository: str
    path: str
    line: int
    column: int
    context: str
    language: str = ""


@dataclass(frozen=True, slots=True)
class References:
    """`find_references`: definitions first, then usages."""

    symbol: str
    definitions: list[Reference]
    usages: list[Reference]
    duration_ms: float
    truncated: bool = False
    language: str | None = None
    """The language filter applied (the definition's language by default)."""
    languages: list[str] = field(default_factory=list)
    """The languages searched when the definitions are in several (`language` None)."""
    code_only: bool = False
    """No definition is code, so every language the chunker parses was searched (not
    lockfiles, data or prose)."""


def searched_note(r: References) -> str:
    """What a by-name search left out when it chose the languages itself ('' when it did
    not: one language, the definitions' or the one asked for). Here, not in
    `search.references`, so that rendering it imports no search engine (`ctxd --help`)."""
    if r.code_only:
        return "searched code files only: lockfiles, data files and prose were skipped"
    if r.languages:
        return (f"searched {', '.join(r.languages)} files only (the definitions' "
                "languages): lockfiles, data files, prose and other languages were skipped")
    return ""


@dataclass(frozen=True, slots=True)
class FileContent:
    """A file (or a line range of it) from an indexed repository."""

    repository: str
    path: str
    language: str
    content: str
    start_line: int
    end_line: int
    total_lines: int
    branch: str = "HEAD"
    truncated: bool = False
    working_tree: bool = False
    """Read from the repository's folder on disk (its working tree; `branch` is what is
    checked out there), not from an engine's copy of a branch."""
    index_state: str = ""
    """The file's text against the index's copy of it: `indexed` (the same), `changed`
    (changed on disk since the last index run or watcher update), `not indexed` (the
    index holds no such file yet); '' where not known (a repository only Zoekt has)."""
