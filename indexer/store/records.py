"""The row records the store's operations take and return: `RepoRow`, `StoredFile`,
`FileRecord`, `PendingChunk`, `Summary` (and `NO_SUMMARY`), `GraphRow` (and `NO_GRAPH`),
`TermPostings`, and
`with_symbols`, which both stores use to shape `files_without_summary`'s rows.

Plain frozen dataclasses, no SQL: the pipeline builds `FileRecord`s and `Summary`s, the
service reads `RepoRow`s, and every store implementation (the SQLite one in this package,
the PostgreSQL one in `indexer.store.pg`) returns the same records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxd.indexer.models import Symbol

if TYPE_CHECKING:  # numpy only where postings are read: settings and help stay light
    import numpy as np
    import numpy.typing as npt

    Posting = tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16 | np.float32]]


@dataclass(frozen=True, slots=True)
class RepoRow:
    """A repository in the index."""

    id: int
    name: str
    root: str
    options: dict[str, Any]
    created_at: str
    indexed_at: str | None
    index_started_at: str | None
    host: str = ""
    """The machine that last indexed it, in a shared (PostgreSQL) store; '' in a local one."""
    root_id: str = ""
    """The identity (`"<st_dev>:<st_ino>"`) of the root folder when it was last indexed
    (`indexer.walk.rootpin`); '' for a repository indexed before identities were kept."""


@dataclass(frozen=True, slots=True)
class StoredFile:
    """What the store remembers of a file, to decide whether it changed."""

    id: int
    size: int
    mtime_ns: int
    hash: str
    role: str = ""


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A file's facts as written by the pipeline."""

    path: str
    size: int
    mtime_ns: int
    hash: str
    language: str
    lines: int
    role: str = ""
    """`indexer.walk.textclass.Role` value: '' = embedded code or prose."""


@dataclass(frozen=True, slots=True)
class PendingChunk:
    """A checkpoint whose text has no embedding yet (one per distinct hash)."""

    hash: str
    path: str
    symbol: str | None
    text: str


@dataclass(frozen=True, slots=True)
class Summary:
    """A file's summary text (`indexer.chunk.summary`) and the hash of that text; empty for a
    file without one (prose, data), so that every indexed file has a row."""

    text: str
    hash: str


NO_SUMMARY = Summary("", "")


@dataclass(frozen=True, slots=True)
class GraphRow:
    """A file's code graph as stored: the encoded graph (`indexer.graph.model.encode`) and
    the keys the file is found by as an importer (`indexer.graph.links.link_keys`); empty
    for a file without one."""

    data: bytes
    keys: tuple[str, ...] = ()


NO_GRAPH = GraphRow(b"")


def with_symbols(files: Iterable[tuple[Any, ...]], symbols: Iterable[tuple[Any, ...]]
                 ) -> list[tuple[int, str, str, str, list[Symbol]]]:
    """(file id, path, language, text, symbols) of `files` rows (id, path, language,
    text), with their `symbols` rows (file id, name, kind, line, end line, container) in
    the order given: `files_without_summary` of either store."""
    by_file: dict[int, list[Symbol]] = {}
    for fid, n, k, a, b, c in symbols:
        by_file.setdefault(int(fid), []).append(
            Symbol(str(n), str(k), int(a), int(b), None if c is None else str(c)))
    return [(int(i), str(p), str(lang), str(text), by_file.get(int(i), []))
            for i, p, lang, text in files]


@dataclass(frozen=True, slots=True)
class TermPostings:
    """The keyword index's common terms at one text generation, with what BM25 needs to
    score them in memory exactly as the engine does (`KeywordSearch.keyword_postings`)."""

    generation: int
    """The `text_generation()` they were read at."""
    rows: int
    """The keyword index's row count (N of the IDF)."""
    avgdl: float
    """The average row length in tokens, all columns."""
    lengths: npt.NDArray[np.float64]
    """Row length in tokens by rowid."""
    postings: dict[str, Posting]
    """Index term -> (rowids, column-weighted frequency in each: whole numbers, uint16
    where they fit)."""
    bm25: str = "fts5"
    """Whose order of operations to score them in (rounding): `fts5` (FTS5's
    `fts5Bm25Function`) or `postgresql` (`indexer.store.pg.keywords`)."""
