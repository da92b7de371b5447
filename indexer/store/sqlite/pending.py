"""Pending work: the texts that wait for a vector, read by the pipeline's embedding
phase (`pending_chunks`, `pending_summaries`) and counted (`count_pending`).

A checkpoint text is pending while no `embeddings` row has its hash; a file summary while
its row has text and no vector. Reads only: the vectors are written by
`indexer.store.sqlite.vectors`.
"""

from __future__ import annotations

from typing import Any

from ctxd.indexer.store.records import PendingChunk
from ctxd.indexer.store.sqlite.connection import Connection


class PendingRows(Connection):
    """What is left to embed."""

    def pending_chunks(self, repo_id: int | None = None) -> list[PendingChunk]:
        """Every distinct checkpoint text (of one repository, or all) with no embedding yet."""
        where = "AND c.repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        rows = self.db.execute(
            "SELECT c.hash, c.path, c.symbol, c.text FROM checkpoints c "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) "
            f"{where} GROUP BY c.hash",
            params,
        )
        return [PendingChunk(r[0], r[1], r[2], r[3]) for r in rows]

    _PENDING_SUMMARY = "text != '' AND vector IS NULL"

    def pending_summaries(self, repo_id: int | None = None) -> list[tuple[str, str]]:
        """(hash, text) of every distinct file summary (of one repository, or all) with no
        vector yet."""
        scope = "AND repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        rows = self.db.execute(
            f"SELECT hash, text FROM summaries WHERE {self._PENDING_SUMMARY} {scope} "
            "GROUP BY hash", params)
        return [(str(h), str(t)) for h, t in rows]

    def count_pending(self, repo_id: int | None = None) -> int:
        """Texts waiting for a vector: distinct checkpoint texts and file summaries."""
        scope = "AND repo_id = ?" if repo_id is not None else ""
        params: tuple[Any, ...] = (repo_id,) if repo_id is not None else ()
        chunks = self.db.execute(
            "SELECT count(DISTINCT c.hash) FROM checkpoints c "
            f"WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash) {scope}",
            params,
        ).fetchone()
        summaries = self.db.execute(
            f"SELECT count(DISTINCT hash) FROM summaries WHERE {self._PENDING_SUMMARY} {scope}",
            params).fetchone()
        return int(chunks[0]) + int(summaries[0])
