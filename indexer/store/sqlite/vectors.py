"""The stored vectors on SQLite: `SqliteVecRows`, the `VectorRows` seam
(`indexer.store.vector_rows`) implemented with an `embeddings` row per embedded text and
its vector in the sqlite-vec table `vec_embeddings` (created by `ensure_model` once the
dimension is known). A file summary's vector lives in its own row (`summaries.vector`).

The engine's own nearest-neighbour search (`VectorSearch` of `indexer.store.protocol`) is
here too: `nearest` (sqlite-vec's brute-force KNN, at most `NEAREST_MAX`), `nearest_in`
(the same, over the vectors of the checkpoints a filter lets through), `scan_nearest`
(exact distances of every filtered-in vector) and `vectors_where` (the filtered-in
vectors themselves, read by rowid).

Invariants:
- Embeddings are keyed by the hash of the text that was embedded, shared by every
  checkpoint with that hash across files and repositories; `embeddings.id` is the
  rowid of `vec_embeddings`. Orphans are collected by `gc_embeddings`, which bumps
  `meta.vec_generation` whenever it deletes any.
- The index records the embedding model and dimension in `meta`; opening it for
  another model raises `ModelMismatch`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ctxd.indexer.errors import ModelMismatch
from ctxd.indexer.store.sqlite.connection import Connection
from ctxd.indexer.store.vector_rows import serialize_vector

if TYPE_CHECKING:  # numpy only where vectors are read: settings and help stay light
    import numpy as np
    import numpy.typing as npt


class SqliteVecRows(Connection):
    """The vectors of the index in sqlite-vec (implements `VectorRows`)."""

    def model(self) -> tuple[str, int] | None:
        """The (model name, dimension) this index was built with, if any."""
        name, dim = self.get_meta("model"), self.get_meta("dimension")
        if name is None or dim is None:
            return None
        return name, int(dim)

    def check_model(self, name: str, dimension: int | None = None) -> None:
        """Raise `ModelMismatch` if the index was built with another model.

        Args:
            name: the configured model name (a name or a path).
            dimension: its output dimension, when known.
        """
        ModelMismatch.check(
            self.model(), name, dimension, f"The index at {self.path}",
            f"to use this index, or remove {self.path} (or point CTXD_HOME elsewhere) and "
            "re-index with the new model.")

    def ensure_model(self, name: str, dimension: int) -> None:
        """Record the model on first use and create the vector table; check it afterwards."""
        self.check_model(name, dimension)
        if self.model() is None:
            with self.transaction():
                # Another process may have recorded a model since the look above: decide
                # again under the write lock, so the first model recorded is the one kept.
                if self.model() is not None:
                    self.check_model(name, dimension)
                    return
                self.set_meta("model", name)
                self.set_meta("dimension", str(dimension))
                self.db.execute(
                    f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_embeddings "
                    f"USING vec0(embedding float[{int(dimension)}])"
                )

    def has_vectors(self) -> bool:
        return self.model() is not None

    def add_embeddings(self, items: Sequence[tuple[str, bytes]],
                       summaries: Sequence[tuple[str, bytes]] = ()) -> None:
        """Store (hash, float32 vector blob) pairs of checkpoint texts, and of file
        summaries (every summary with that hash), in one transaction; known checkpoint
        hashes are kept."""
        with self.transaction():
            self.db.executemany("UPDATE summaries SET vector = ? WHERE hash = ?",
                                [(blob, h) for h, blob in summaries])
            for h, blob in items:
                cur = self.db.execute(
                    "INSERT INTO embeddings(hash) VALUES (?) ON CONFLICT(hash) DO NOTHING", (h,)
                )
                if cur.rowcount:
                    self.db.execute(
                        "INSERT INTO vec_embeddings(rowid, embedding) VALUES (?, ?)",
                        (cur.lastrowid, blob),
                    )

    def vector_state(self) -> tuple[int, int, int]:
        """(count, largest rowid, deletion generation) of the vectors: a cache key.

        The generation grows whenever vectors are deleted, so a reader holding vectors in
        memory knows whether appending the rows past its largest rowid is enough.
        """
        # Two subqueries: each is a fast path (btree count, last rowid); together in one
        # SELECT they became a scan of every row (3 ms per 100k vectors, every query).
        row = self.db.execute("SELECT (SELECT count(*) FROM embeddings), "
                              "(SELECT coalesce(max(id), 0) FROM embeddings)")
        count, top = row.fetchone()
        return int(count), int(top), int(self.get_meta("vec_generation") or 0)

    def last_vector_id(self) -> int:
        """The largest id of the vectors (0 without any): one lookup, no count."""
        (top,) = self.db.execute("SELECT coalesce(max(id), 0) FROM embeddings").fetchone()
        return int(top)

    def vector_batches(
        self, rowid: int, batch: int = 16384
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """(rowids, float32 rows) of every vector with a larger rowid, in rowid order, a
        batch at a time, so that a reader loading a million vectors never holds them
        twice (as blobs and as a matrix)."""
        import numpy as np

        if not self.has_vectors():
            return
        cur = self.db.execute(
            "SELECT rowid, embedding FROM vec_embeddings WHERE rowid > ? ORDER BY rowid", (rowid,))
        while rows := cur.fetchmany(batch):
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ids, mat.reshape(len(rows), -1)

    def gc_embeddings(self, min_orphans: int = 0) -> int:
        """Delete embeddings no checkpoint refers to; returns how many went.

        Args:
            min_orphans: do nothing while fewer vectors than this are orphaned. Orphans are
                invisible to search (no checkpoint carries their hash) and are reused if
                the same text comes back, so collecting them lazily keeps readers'
                in-memory vector copies valid across small edits.
        """
        if not self.has_vectors():
            return 0
        orphan_sql = (
            "SELECT e.id FROM embeddings e "
            "WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.hash = e.hash)"
        )
        if min_orphans > 0:
            n = int(self.db.execute(f"SELECT count(*) FROM ({orphan_sql})").fetchone()[0])
            if n < min_orphans:
                return 0
        with self.transaction():
            orphans = [int(r[0]) for r in self.db.execute(orphan_sql)]
            for i in orphans:
                self.db.execute("DELETE FROM vec_embeddings WHERE rowid = ?", (i,))
                self.db.execute("DELETE FROM embeddings WHERE id = ?", (i,))
            if orphans:
                generation = int(self.get_meta("vec_generation") or 0) + 1
                self.set_meta("vec_generation", str(generation))
        return len(orphans)

    def embedding_coverage(self, names: Sequence[str] = ()) -> list[tuple[str, int, int]]:
        """(repository, checkpoints, embedded checkpoints) per repository, or for `names`;
        an embedded checkpoint is one whose text has a vector. One statement.

        Every repository: the totals by the repository index, less the checkpoints with no
        vector, probed in the order of their hashes (the vectors' index read in order:
        0.30 s at 1M checkpoints against 0.41 s in rowid order). A few repositories: their
        checkpoints only, by the repository index.
        """
        if names:
            rows = self.db.execute(
                "SELECT r.name, count(c.id), coalesce(sum(EXISTS (SELECT 1 FROM embeddings e "
                "WHERE e.hash = c.hash)), 0) FROM repos r LEFT JOIN checkpoints c "
                f"ON c.repo_id = r.id WHERE r.name IN ({','.join('?' * len(names))}) "
                "GROUP BY r.name ORDER BY r.name", list(names))
        else:
            rows = self.db.execute(
                "SELECT r.name, coalesce(t.n, 0), coalesce(t.n, 0) - coalesce(m.n, 0) "
                "FROM repos r LEFT JOIN (SELECT repo_id, count(*) AS n FROM checkpoints "
                "GROUP BY repo_id) t ON t.repo_id = r.id LEFT JOIN (SELECT c.repo_id, "
                "count(*) AS n FROM checkpoints c INDEXED BY checkpoints_hash WHERE NOT EXISTS "
                "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash) GROUP BY c.repo_id) m "
                "ON m.repo_id = r.id ORDER BY r.name")
        return [(str(n), int(t), int(e)) for n, t, e in rows]

    def every_checkpoint_embedded(self) -> bool:
        """Whether every checkpoint's text has a vector: the checkpoints probed in the order
        of their hashes, up to the first without one."""
        row = self.db.execute(
            "SELECT NOT EXISTS (SELECT 1 FROM checkpoints c INDEXED BY checkpoints_hash "
            "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash))").fetchone()
        return bool(row[0])

    def nearest(
        self, vector: Sequence[float], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of the `k` nearest vectors (sqlite-vec's scan), unranked."""

        rows = self.db.execute(
            "SELECT rowid, embedding FROM vec_embeddings WHERE embedding MATCH ? AND k = ? "
            "ORDER BY distance", (serialize_vector(vector), k)).fetchall() \
            if k > 0 and self.has_vectors() else []
        return _ids_and_rows(rows)

    filtered_index_scan = False
    """`nearest_in` reads the filtered rowids first (`VectorSearch.filtered_index_scan`)."""

    def vectors_where(self, where: str, params: Sequence[object]
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of every vector of the checkpoints passing `where`
        (`VectorSearch.vectors_where`; sqlite-vec reads each by rowid: ~20 us a row)."""
        found = self.db.execute(
            "SELECT rowid, embedding FROM vec_embeddings WHERE rowid IN (SELECT e.id FROM "
            "embeddings e WHERE e.hash IN (SELECT c.hash FROM checkpoints c JOIN repos r "
            f"ON r.id = c.repo_id WHERE TRUE {where}))", list(params)).fetchall() \
            if self.has_vectors() else []
        return _ids_and_rows(found)

    scope_key: str | None = None
    """None: a connection's generation is its own (`VectorSearch.scope_key`)."""

    def exact_rows_max(self) -> int:
        """0: `nearest_in` is sqlite-vec's scan whatever the filter's size
        (`VectorSearch.exact_rows_max`)."""
        return 0

    def nearest_in(
        self, vector: Sequence[float], k: int, where: str, params: Sequence[object], *,
        rows: int | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of the `k` nearest vectors of the checkpoints passing `where`:
        sqlite-vec's scan with the filtered ids as a `rowid IN` constraint, so it computes
        the distances of those rows only (exact, like `nearest`; `rows` is not needed)."""

        found = self.db.execute(
            "SELECT rowid, embedding FROM vec_embeddings WHERE embedding MATCH ? AND k = ? "
            "AND rowid IN (SELECT e.id FROM embeddings e WHERE e.hash IN (SELECT c.hash "
            f"FROM checkpoints c JOIN repos r ON r.id = c.repo_id WHERE TRUE {where}))",
            [serialize_vector(vector), k, *params]).fetchall() \
            if k > 0 and self.has_vectors() else []
        return _ids_and_rows(found)

    def scan_nearest(self, vector: Sequence[float], where: str,
                     params: Sequence[object]) -> list[tuple[int, float]]:
        """(id, L2 distance) of every vector of the checkpoints passing `where`, nearest
        first (ties by id)."""
        if not self.has_vectors():
            return []
        rows = self.db.execute(
            "SELECT e.id, vec_distance_l2(v.embedding, ?) AS d FROM embeddings e "
            "JOIN vec_embeddings v ON v.rowid = e.id "
            "WHERE e.hash IN (SELECT c.hash FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
            f"WHERE TRUE {where}) ORDER BY d, e.id",
            [serialize_vector(vector), *params],
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def explain_nearest(self) -> str:
        return "sqlite-vec KNN"


def _ids_and_rows(rows: Sequence[Any]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(ids, float32 matrix) of `(rowid, embedding bytes)` rows from `vec_embeddings`."""
    import numpy as np

    if not rows:
        return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
    ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    mat = np.frombuffer(b"".join(bytes(r[1]) for r in rows), dtype=np.float32)
    return ids, mat.reshape(len(rows), -1)
