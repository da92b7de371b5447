"""Records that cross layers: what the walker finds, what the chunker makes, what a run reports.

All are frozen dataclasses with slots; paths in records are repo-relative POSIX
strings. Closed sets are Enums with one docstring per member. Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that should have been indexed but could not be."""

    file: str
    error: str
