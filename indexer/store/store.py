"""The index: `Store`, one SQLite file (WAL) with sqlite-vec, FTS5 trigram text and a
symbol table, composed of one class per concern:

- `connection.Connection`: open (the only `connect()` in ctxd), migrations, transactions,
  meta, generations, size and compaction, the read-only `query()` of the search layer;
- `repos.RepoRows`: the repositories;
- `files.FileRows`: a file's text, checkpoints, symbols and summary, written together;
- `pending.PendingRows`: the texts waiting for a vector;
- `vectors.SqliteVecRows`: the vectors, behind the `vector_rows.VectorRows` seam (where a
  pgvector implementation goes);
- `coverage.Coverage`: counts and roles for status and result notes.

The row records (`records`) and `serialize_vector` are re-exported here, so callers import
everything from this module. The concern modules stand apart (each builds on `Connection`
alone, tests/test_layering.py); what spans them lives here (`remove_repo`).

Called by `indexer.pipeline` (writes), `search/` (reads) and `server/` (opens one per
thread). A connection belongs to one thread: open one `Store` per thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxd.indexer.store.connection import WAL_SIZE_LIMIT, Row, SQLiteError
from ctxd.indexer.store.coverage import Coverage
from ctxd.indexer.store.files import FileRows
from ctxd.indexer.store.pending import PendingRows
from ctxd.indexer.store.records import (
    NO_SUMMARY,
    FileRecord,
    PendingChunk,
    RepoRow,
    StoredFile,
    Summary,
)
from ctxd.indexer.store.repos import RepoRows
from ctxd.indexer.store.vector_rows import VectorRows, serialize_vector
from ctxd.indexer.store.vectors import SqliteVecRows

__all__ = [
    "NO_SUMMARY", "WAL_SIZE_LIMIT", "FileRecord", "PendingChunk", "RepoRow", "Row",
    "SQLiteError", "Store", "StoredFile", "Summary", "VectorRows", "serialize_vector",
]


class Store(RepoRows, FileRows, PendingRows, SqliteVecRows, Coverage):
    """One connection to the index. Not thread-safe: open one per thread."""

    def remove_repo(self, repo_id: int) -> None:
        """Delete a repository and every row that belongs to it, in one transaction, then
        the vectors no checkpoint refers to any more."""
        self._delete_repo(repo_id)
        self.gc_embeddings()


if TYPE_CHECKING:  # mypy --strict checks here that the sqlite-vec rows keep to the seam
    _SEAM: type[VectorRows] = SqliteVecRows
