"""Records that cross layers: what the walker finds, what the chunker makes, what an index
run reports (`IndexStats`, its `Progress`, the times they carry: `now_rfc3339`).

All are dataclasses with slots, frozen but for `IndexStats` (the pipeline fills it in as
it runs); paths in records are repo-relative POSIX strings. Closed sets are Enums with one
docstring per member. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum

HOME_MARKER = ".ctxd-home"
"""The file every ctxd index home holds (`indexer.store.private.private_home` writes it).
A directory containing it is pruned by the walker whatever the options say: a home inside
an indexed repository holds SQLite files that must never be opened outside SQLite (a read
and close by this process would drop its own connections' locks), and logs and lock files
that change with every run."""


class SkipReason(StrEnum):
    """Why the walker or the pipeline left a file out of the index."""

    IGNORED = "ignored"
    """Matched a `.gitignore`/`.ctxdignore` rule or a built-in directory prune (VCS,
    node_modules, virtualenvs, caches)."""
    SENSITIVE = "sensitive"
    """A likely secret: a key or credential file by name (`.env*`, `*.pem`, `id_rsa*`, ...),
    or a file whose text holds one (`indexer.walk.secrets`)."""
    EXCLUDED = "excluded"
    """Matched a user exclude pattern."""
    NOT_INCLUDED = "not_included"
    """Include patterns were given and none matched."""
    TOO_LARGE = "too_large"
    """Larger than `max_file_size`."""
    BINARY = "binary"
    """Contains NUL bytes or is not decodable as text."""
    OUTSIDE_ROOT = "outside_root"
    """A symlink (or path) that resolves outside the repository root (path traversal)."""
    SYMLINK_CYCLE = "symlink_cycle"
    """A symlinked directory that points back to one of its ancestors."""
    NOT_REGULAR = "not_regular"
    """A socket, FIFO, device or dangling symlink."""
    UNREADABLE = "unreadable"
    """Could not be read (permissions, vanished mid-walk): reported in `files_failed`."""
    BAD_NAME = "bad_name"
    """A file or directory name that is not valid UTF-8 (the path is shown with `\\xNN`
    escapes): it cannot be stored, searched or shown as text; renaming it lets it in."""


@dataclass(frozen=True, slots=True)
class FileEntry:
    """A file the walker admits: stat facts only, nothing read yet."""

    path: str
    """Repo-relative POSIX path (through symlinks: the path as seen inside the repo)."""
    abs_path: str
    """Absolute filesystem path to open."""
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or directory left out, and why."""

    path: str
    reason: SkipReason
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Symbol:
    """A definition found in a file (function, class, method, heading, ...)."""

    name: str
    kind: str
    line: int
    """1-based line of the definition."""
    end_line: int
    container: str | None = None
    """Enclosing symbol's qualified name (e.g. the class of a method)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A checkpoint before storage: a span of one file and the symbol it sits in."""

    start_line: int
    """1-based, inclusive."""
    end_line: int
    """1-based, inclusive."""
    text: str
    symbol: str | None = None
    """Qualified name of the enclosing symbol (e.g. `Retry.increment`)."""
    symbol_kind: str | None = None
    container: str | None = None


@dataclass(frozen=True, slots=True)
class FileChunks:
    """What the chunker makes of one file."""

    language: str
    chunks: list[Chunk]
    symbols: list[Symbol] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    """Word pieces of each chunk's text, one per chunk: the sum of its lines' counts (the
    count of the text itself for a slice of a long line). Equals counting the text when
    the counter adds up over lines (`indexer.chunk.tokens.adds_up`)."""
    windows_reason: str | None = None
    """Why a code file was cut into line windows rather than by syntax: its parse ran over
    the time budget or failed (None otherwise, and for files windows are the rule for)."""
    parsed: object | None = field(default=None, compare=False, repr=False)
    """The tree-sitter parse of a code file cut by syntax (`indexer.chunk.syntax.ParsedSource`),
    for the code graph (`indexer.graph`); never stored, not part of the value (two chunkings
    of one text are equal). None for any other file."""


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that should have been indexed but could not be."""

    file: str
    error: str


def now_rfc3339(ts: float | None = None, *, timespec: str = "seconds") -> str:
    """A UTC time (now, or the epoch seconds `ts`) as RFC 3339, e.g. 2026-11-22T10:00:00Z."""
    t = datetime.now(UTC) if ts is None else datetime.fromtimestamp(ts, UTC)
    return t.isoformat(timespec=timespec).replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress report: `phase` is `walk`, `embed` or `done`."""

    phase: str
    done: int
    total: int | None
    message: str = ""


ProgressFn = Callable[[Progress], None]


@dataclass(frozen=True, slots=True)
class RemovedFile:
    """A file that left the index in a run, and why."""

    file: str
    reason: str


@dataclass(frozen=True, slots=True)
class NotEmbedded:
    """A file kept for lexical search only: its role (`indexer.walk.textclass.Role`) and,
    when this run decided it, why."""

    path: str
    role: str
    detail: str = ""


@dataclass(frozen=True, slots=True)
class LargeFile:
    """A file that yielded a very large number of checkpoints."""

    path: str
    checkpoints: int


@dataclass(frozen=True, slots=True)
class WindowedFile:
    """A code file cut into line windows instead of by syntax, and why."""

    path: str
    reason: str


@dataclass(slots=True)
class IndexStats:
    """What an index run did (the `index_repository` / `ctxd index --json` result)."""

    path: str
    repository: str
    include_patterns: list[str]
    exclude_patterns: list[str]
    max_file_size: int
    files_indexed: int = 0
    """Files in the index for this repository after the run (new, changed and unchanged)."""
    files_updated: int = 0
    """Files new or changed in this run (their rows were rewritten)."""
    files_unchanged: int = 0
    files_removed: int = 0
    removed_reasons: dict[str, int] = field(default_factory=dict)
    """Why the removed files left the index, by reason: `deleted` (gone from disk) or the
    walk's skip reason for files still on disk (`not_included`, `excluded`, `ignored`,
    `too_large`, ...: the new options or ignore rules leave them out)."""
    removed_files: list[RemovedFile] = field(default_factory=list)
    """The first `indexer.pipeline.REMOVED_SAMPLE` removed files with their reason."""
    files_skipped: dict[str, int] = field(default_factory=dict)
    skipped_files: list[Skipped] = field(default_factory=list)
    """The files the walk refused, with reason and detail: the first
    `indexer.pipeline.SKIPPED_SAMPLE` of each reason (so that a thousand images do not hide an
    ignored folder; `files_skipped` counts them all), in walk order."""
    sensitive_files: list[str] = field(default_factory=list)
    """The first `SKIPPED_SAMPLE` files left out as likely secrets (by name or content),
    named apart so that a report can say which, however many other files were skipped."""
    files_masked: int = 0
    """Files of this run indexed with a likely secret masked (code and docs holding a key or
    a password: the secret's characters replaced by `*`, the rest of the file kept)."""
    masked_files: list[str] = field(default_factory=list)
    """The first `indexer.pipeline.SKIPPED_SAMPLE` of them."""
    not_embedded: dict[str, int] = field(default_factory=dict)
    """Files of the repository kept greppable but not embedded, by role (`lockfile`,
    `vendored`, `built`, `minified`, `certificate`, `data`; `indexer.walk.textclass`)."""
    not_embedded_files: list[NotEmbedded] = field(default_factory=list)
    """The first `SKIPPED_SAMPLE` of them, with role and reason."""
    large_files: list[LargeFile] = field(default_factory=list)
    """Files of this run that yielded `indexer.pipeline.LARGE_FILE_CHECKPOINTS` checkpoints or
    more."""
    checkpoints_by_kind: dict[str, int] = field(default_factory=dict)
    """Checkpoints of the files chunked in this run (new or changed), by kind of file (its
    language id: `python`, `markdown`, `text`, ...), most first."""
    top_files: list[LargeFile] = field(default_factory=list)
    """The `indexer.pipeline.TOP_FILES` files chunked in this run that yield the most
    checkpoints, most first (what a dry run shows before an index run pays for them)."""
    windowed_files: list[WindowedFile] = field(default_factory=list)
    """Code files of this run cut into line windows because their syntax parse ran over
    `chunk.parse_budget_ms` (or failed): the first `SKIPPED_SAMPLE`, with the reason."""
    files_failed: list[FileFailure] = field(default_factory=list)
    checkpoints: int = 0
    """Checkpoints in the index for this repository after the run."""
    chunks_embedded: int = 0
    """Distinct texts embedded in this run (the rest were already in the index)."""
    chunks_to_embed: int = 0
    """Dry run: distinct texts a real run would embed."""
    tokens_to_embed: int = 0
    """Dry run: word pieces in those texts."""
    indexed_at: str = ""
    duration_ms: int = 0
    dry_run: bool = False
    stopped: bool = False
    """`should_stop` ended the run early: committed files are whole, the rest (and any
    removals) wait for the next run."""
    stopped_in: str = ""
    """Where a stopped run stopped: `walk` (files not reached yet, and removals, wait) or
    `embed` (`embeddings_pending` texts wait)."""
    embeddings_pending: int = 0
    """A run stopped while embedding: texts (checkpoints and file summaries) of this
    repository left without a vector."""
    embed_budget: int = 0
    """The most checkpoints this run embeds (`embedding.run_budget`; 0: no limit)."""
    over_budget: int = 0
    """Checkpoints beyond `embed_budget`: a dry run's that a real run would leave waiting,
    a real run's left without a vector (greppable; the next runs embed them)."""
