"""The PostgreSQL store: `PgStore`, the `IndexStore` of a team, composed of one class per
concern as the SQLite `Store` is:

- `connection.PgConnection`: pooled connections, transactions, read snapshots, the text
  generation, meta, size, the portable `query()`;
- `repos.PgRepoRows`, `files.PgFileRows`, `pending.PgPendingRows`, `coverage.PgCoverage`;
- `vectors.PgVectorRows`: pgvector with an HNSW index (`VectorRows`, `VectorSearch`);
- `keywords.PgKeywordRows`: BM25 over the full-text column (`KeywordSearch`);
- `indexer.store.lookups.Lookups`: the search layer's small reads, shared with SQLite.

`PgStore.open(options)` migrates the schema on the process's first use of the URL and
borrows from the process's pool (`pool`). One per thread, like `Store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.lookups import Lookups
from ctxd.indexer.store.pg.coverage import PgCoverage
from ctxd.indexer.store.pg.files import PgFileRows
from ctxd.indexer.store.pg.keywords import PgKeywordRows
from ctxd.indexer.store.pg.pending import PgPendingRows
from ctxd.indexer.store.pg.pool import pool_for
from ctxd.indexer.store.pg.repos import PgRepoRows
from ctxd.indexer.store.pg.vectors import PgVectorRows
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.vector_rows import VectorRows


class PgStore(PgRepoRows, PgFileRows, PgPendingRows, PgVectorRows, PgKeywordRows, PgCoverage,
              Lookups):
    """One thread's handle on the PostgreSQL store."""

    @classmethod
    def open(cls, options: StoreOptions) -> PgStore:
        """A handle on the store at `options.url` (migrated on the process's first use).

        Raises:
            BackendUnavailable: the server cannot be reached.
            StorageError: the schema must change and this role may not change it.
        """
        return cls(pool_for(options), options)

    def reopen(self) -> PgStore:
        """Another handle on the same store (for a background thread)."""
        return PgStore(self._pool, self.options)

    def graph_links(self, repo_id: int | None, keys: Sequence[str] | None
                    ) -> list[tuple[str, int]]:
        """`Lookups.graph_links`, the keys sent as one array (`key = ANY(%s)`): psycopg
        adapts one parameter instead of hundreds (a query's key reads ask 25-800 keys),
        and the planner reads one array instead of a list of that many."""
        if keys is None:
            return Lookups.graph_links(self, repo_id, keys)
        wanted = list(dict.fromkeys(keys))
        if not wanted:
            return []
        if repo_id is None:
            rows = self._rows("SELECT key, file_id FROM graph_links WHERE key = ANY(%s) "
                              "ORDER BY key, file_id", (wanted,))
        else:
            rows = self._rows(
                "SELECT l.key, l.file_id FROM graph_links l JOIN files f ON f.id = l.file_id "
                "WHERE l.key = ANY(%s) AND f.repo_id = %s ORDER BY l.key, l.file_id",
                (wanted, repo_id))
        return [(str(k), int(i)) for k, i in rows]

    def graph_data(self, file_ids: Sequence[int]) -> dict[int, bytes]:
        """`Lookups.graph_data` in one statement, the ids sent as one array."""
        ids = list(dict.fromkeys(file_ids))
        if not ids:
            return {}
        return {int(fid): bytes(data) for fid, data in self._rows(
            "SELECT file_id, data FROM graph WHERE file_id = ANY(%s)", (ids,))}

    def remove_repo(self, repo_id: int) -> None:
        """Delete a repository and every row of it, in one transaction, then the vectors
        no checkpoint refers to any more."""
        self._delete_repo(repo_id)
        self.gc_embeddings()


if TYPE_CHECKING:  # mypy --strict checks here that the PostgreSQL store keeps to the seams
    _SEAM: type[VectorRows] = PgVectorRows
    _STORE: type[IndexStore] = PgStore
