"""The SQLite store: `Store`, one SQLite file (WAL) with sqlite-vec, FTS5 trigram text and a
symbol table, composed of one class per concern:

- `connection.Connection`: open (the only `connect()` in ctxd), migrations, transactions,
  meta, generations, size and compaction, the read-only `query()` of portable SQL;
- `repos.RepoRows`: the repositories;
- `files.FileRows`: a file's text, checkpoints, symbols and summary, written together;
- `pending.PendingRows`: the texts waiting for a vector;
- `vectors.SqliteVecRows`: the vectors, behind the `vector_rows.VectorRows` seam, and
  sqlite-vec's nearest-neighbour scan;
- `keywords.KeywordRows`: BM25 over the FTS5 word index, and its common terms' postings;
- `coverage.Coverage`: counts and roles for status and result notes;
- `indexer.store.lookups.Lookups`: the search layer's small reads, shared with PostgreSQL.

`Store` is the SQLite implementation of `indexer.store.protocol.IndexStore`; the PostgreSQL
one is `indexer.store.pg.store.PgStore`, with one module per concern too, and
`indexer.store.open.open_store` picks between them. Callers that only need what every
engine offers type against `IndexStore`.

The row records (`records`) and `serialize_vector` are re-exported here, so callers import
everything from this module. The concern modules stand apart (each builds on `Connection`
alone, tests/test_layering.py); what spans them lives here (`remove_repo`, and what the
`IndexStore` protocol asks of the connection: `engine`, `location`, `dialect`,
`read_snapshot`, `reopen`). A connection belongs to one thread: open one `Store` per
thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ctxd.indexer.store.lookups import Lookups
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import (
    NO_SUMMARY,
    FileRecord,
    PendingChunk,
    RepoRow,
    StoredFile,
    Summary,
)
from ctxd.indexer.store.sqlite.connection import WAL_SIZE_LIMIT, Row, SQLiteError
from ctxd.indexer.store.sqlite.coverage import Coverage
from ctxd.indexer.store.sqlite.dialect import SQLITE, SqliteDialect
from ctxd.indexer.store.sqlite.files import FileRows
from ctxd.indexer.store.sqlite.keywords import KeywordRows
from ctxd.indexer.store.sqlite.pending import PendingRows
from ctxd.indexer.store.sqlite.repos import RepoRows
from ctxd.indexer.store.sqlite.vectors import SqliteVecRows
from ctxd.indexer.store.vector_rows import VectorRows, serialize_vector

__all__ = [
    "NO_SUMMARY", "WAL_SIZE_LIMIT", "FileRecord", "IndexStore", "PendingChunk", "RepoRow",
    "Row", "SQLiteError", "Store", "StoredFile", "Summary", "VectorRows", "serialize_vector",
]


class Store(RepoRows, FileRows, PendingRows, SqliteVecRows, KeywordRows, Coverage, Lookups):
    """One connection to the SQLite index. Not thread-safe: open one per thread."""

    engine = "sqlite"
    dialect: SqliteDialect = SQLITE

    @property
    def location(self) -> str:
        """The index file's path."""
        return str(self.path)

    def reopen(self) -> Store:
        """Another connection to the same file (for a background thread)."""
        return Store.open(self.path)

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One read transaction: the reads inside see one state of the file (WAL readers
        never block the writer). Inside a write transaction, that transaction."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def remove_repo(self, repo_id: int) -> None:
        """Delete a repository and every row that belongs to it, in one transaction, then
        the vectors no checkpoint refers to any more."""
        self._delete_repo(repo_id)
        self.gc_embeddings()


if TYPE_CHECKING:  # mypy --strict checks here that the SQLite store keeps to the seams
    _SEAM: type[VectorRows] = SqliteVecRows
    _STORE: type[IndexStore] = Store
