"""Pending work in the PostgreSQL store (`PgPendingRows`), as `indexer.store.sqlite.pending`: the
texts that wait for a vector (a checkpoint whose hash has no `embeddings` row, a summary
with text and no vector). Reads only."""

from __future__ import annotations

from typing import Any

from ctxd.indexer.store.pg.connection import PgConnection
from ctxd.indexer.store.records import PendingChunk


def _scope(repo_id: int | None, column: str) -> tuple[str, tuple[Any, ...]]:
    return (f"AND {column} = %s", (repo_id,)) if repo_id is not None else ("", ())


class PgPendingRows(PgConnection):
    """What is left to embed."""

    def pending_chunks(self, repo_id: int | None = None) -> list[PendingChunk]:
        """Every distinct checkpoint text (of one repository, or all) with no embedding yet."""
        where, params = _scope(repo_id, "c.repo_id")
        rows = self._rows(
            "SELECT DISTINCT ON (c.hash) c.hash, c.path, c.symbol, c.text FROM checkpoints c "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) "
            f"{where} ORDER BY c.hash, c.id", params)
        return [PendingChunk(str(r[0]), str(r[1]), r[2], str(r[3])) for r in rows]

    _PENDING_SUMMARY = "text <> '' AND vector IS NULL"

    def pending_summaries(self, repo_id: int | None = None) -> list[tuple[str, str]]:
        """(hash, text) of every distinct file summary with no vector yet."""
        where, params = _scope(repo_id, "repo_id")
        rows = self._rows(
            f"SELECT DISTINCT ON (hash) hash, text FROM summaries WHERE {self._PENDING_SUMMARY} "
            f"{where} ORDER BY hash", params)
        return [(str(h), str(t)) for h, t in rows]

    def count_pending(self, repo_id: int | None = None) -> int:
        """Texts waiting for a vector: distinct checkpoint texts and file summaries."""
        chunk_where, params = _scope(repo_id, "c.repo_id")
        summary_where, _ = _scope(repo_id, "repo_id")
        row = self._one(
            "SELECT (SELECT count(DISTINCT c.hash) FROM checkpoints c WHERE NOT EXISTS "
            f"(SELECT 1 FROM embeddings e WHERE e.hash = c.hash) {chunk_where}), "
            f"(SELECT count(DISTINCT hash) FROM summaries WHERE {self._PENDING_SUMMARY} "
            f"{summary_where})", params + params)
        return int(row[0]) + int(row[1]) if row else 0
