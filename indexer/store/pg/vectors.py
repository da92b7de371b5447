"""The vectors in PostgreSQL: `PgVectorRows`, the `VectorRows` seam
(`indexer.store.vector_rows`) and the store's own nearest-neighbour search, with pgvector.

Each embedded text has one `embeddings` row: its hash and its vector in the `embedding`
column, a pgvector `vector(d)` (float32: the same rows, so the same answers, as SQLite) or
`halfvec(d)` (float16: half the memory and disk; `[store] vector_type`), added by
`ensure_model` once the model's dimension is known, with an HNSW index on L2 distance.
`nearest(vector, k)` asks that index in one statement (`hnsw.ef_search` = `EF_SEARCH`,
and pgvector's iterative scan in strict order beyond it, so that k rows come back; rows in
binary form); the search layer ranks the rows it returns exactly, as it does
sqlite-vec's. `nearest_in` searches the rows a filter lets through: ranked exactly when
they are few (`exact_rows_max`), else the HNSW index walked with the filter checked on
each row (the iterative scan in relaxed order, `WALK_ORDER`); `vectors_where` reads them
all (a scope the search layer keeps);
`scan_nearest` computes exact distances for the rows a filter lets through.

Contract notes: ids come from a sequence, so a vector added gets an id larger than any id
present while one writer adds vectors; with several writers at once (the team store) two
ids may commit out of order. Only a reader that appends `vector_batches(past)` relies on
the order, and a PostgreSQL store has none (the search asks the database). Collecting
orphans (`gc_embeddings`) while another writer's uncommitted checkpoints share an orphan's
hash deletes a vector that writer then lacks: its texts show as pending and are embedded
again on its next run; nothing else is lost.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import sql as pgsql
from psycopg.pq import TransactionStatus

from ctxd.indexer.errors import ModelMismatch
from ctxd.indexer.store.location import VECTOR_TYPES
from ctxd.indexer.store.pg.connection import PgConnection, pyformat
from ctxd.indexer.store.pg.errors import pg_errors
from ctxd.indexer.store.pg.pool import EF_SEARCH

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MODEL_LOCK = 0x63747864_0002
"""The advisory lock (bigint key) under which the vector column is added."""

HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64
"""pgvector's defaults for the HNSW graph."""

PAGE_K = 10
"""The neighbours a scoped search asks for its first page (`search.semantic`: the limit)."""
EXACT_PER_VISIT = 10
"""What one tuple visited by the filtered HNSW walk costs, in rows ranked exactly."""
EXACT_ROWS_MIN = 1000
"""A filter letting through at most this many checkpoints is always ranked exactly."""
WALK_ORDER = "relaxed_order"
"""pgvector's iterative scan for the filtered HNSW walk (`nearest_in`; every other search
keeps the pool's `strict_order`): the rows are ranked exactly here anyway, and at 1M
checkpoints, a 5% repository, relaxed order found more of the exact ten (recall 0.84
against 0.71) with a shorter tail (p90 15 ms against 39 ms; p50 the same), 90 queries
(docs/BENCHMARKS.md, issue 30 item 1, evening)."""
EXACT_ROWS_TTL_S = 60.0
"""How long `exact_rows_max` keeps the planner's count of the vectors it was computed from
(`reltuples`, renewed by autovacuum's analyses: a plan choice, not an answer, can follow
it a minute late), so that a scoped search does not ask it on every call."""



class PgVectorRows(PgConnection):
    """The vectors of the store in pgvector (implements `VectorRows` and `VectorSearch`)."""

    def model(self) -> tuple[str, int] | None:
        """The (model name, dimension) the vectors were made with, if any yet."""
        if self._model is not None:
            return self._model
        rows: dict[str, str] = {str(k): str(v) for k, v in self._rows(
            "SELECT key, value FROM meta WHERE key IN ('model', 'dimension', 'vector_type')")}
        if "model" not in rows or "dimension" not in rows:
            return None
        self._model = (rows["model"], int(rows["dimension"]))  # recorded once, for good
        self._vector_type = rows.get("vector_type", "vector")
        return self._model

    _model: tuple[str, int] | None = None
    _vector_type = "vector"

    def vector_type(self) -> str:
        """The type of the `embedding` column (`vector` or `halfvec`)."""
        self.model()
        return self._vector_type

    def check_model(self, name: str, dimension: int | None = None) -> None:
        """Raise `ModelMismatch` if the store was built with another model."""
        ModelMismatch.check(
            self.model(), name, dimension, f"The team store {self.location}",
            "to use this store: every machine that shares it must embed with the same model.")

    def ensure_model(self, name: str, dimension: int) -> None:
        """Record the model on first use and add the vector column with its HNSW index
        (once, under an advisory lock, whichever machine gets there first)."""
        self.check_model(name, dimension)
        if self.model() is not None:
            return
        kind = self.options.vector_type if self.options.vector_type in VECTOR_TYPES else "vector"
        with self.transaction():
            self._rows("SELECT pg_advisory_xact_lock(%s)", (MODEL_LOCK,))
            if self.model() is not None:
                self.check_model(name, dimension)
                return
            self.set_meta("model", name)
            self.set_meta("dimension", str(dimension))
            self.set_meta("vector_type", kind)
            assert self._held is not None
            with pg_errors(self.url):
                self._held.execute(pgsql.SQL(
                    "ALTER TABLE embeddings ADD COLUMN embedding {}({}) NOT NULL").format(
                        pgsql.SQL(kind), pgsql.Literal(int(dimension))))
                self._held.execute(pgsql.SQL(
                    "CREATE INDEX embeddings_hnsw ON embeddings USING hnsw (embedding {}) "
                    "WITH (m = {}, ef_construction = {})").format(
                        pgsql.SQL(f"{kind}_l2_ops"), pgsql.Literal(HNSW_M),
                        pgsql.Literal(HNSW_EF_CONSTRUCTION)))

    def has_vectors(self) -> bool:
        return self.model() is not None

    def _as_vector(self, blob_or_values: bytes | Sequence[float]) -> object:
        """A float32 blob or a list of floats as the column's pgvector value."""
        import numpy as np
        from pgvector import HalfVector, Vector

        values = (np.frombuffer(blob_or_values, dtype=np.float32)
                  if isinstance(blob_or_values, bytes | bytearray | memoryview)
                  else np.asarray(blob_or_values, dtype=np.float32))
        return HalfVector(values) if self.vector_type() == "halfvec" else Vector(values)

    def add_embeddings(self, items: Sequence[tuple[str, bytes]],
                       summaries: Sequence[tuple[str, bytes]] = ()) -> None:
        """Store (hash, float32 blob) pairs of checkpoint texts and of file summaries, in one
        transaction; a hash that has a vector keeps it."""
        with self.transaction():
            self._many("UPDATE summaries SET vector = %s WHERE hash = %s",
                       [(blob, h) for h, blob in summaries])
            self._many("INSERT INTO embeddings(hash, embedding) VALUES (%s, %b) "
                       "ON CONFLICT (hash) DO NOTHING",
                       [(h, self._as_vector(blob)) for h, blob in items])
            if items:
                self._vectors_dirty = True

    def vector_state(self) -> tuple[int, int, int]:
        """(count, largest id, deletion generation) of the vectors: a cache key."""
        row = self._one("SELECT (SELECT count(*) FROM embeddings), "
                        "(SELECT coalesce(max(id), 0) FROM embeddings)")
        assert row is not None
        return int(row[0]), int(row[1]), int(self.get_meta("vec_generation") or 0)

    def last_vector_id(self) -> int:
        """The largest id of the vectors (0 without any): one lookup, no count."""
        row = self._one("SELECT coalesce(max(id), 0) FROM embeddings")
        assert row is not None
        return int(row[0])

    def vector_batches(
        self, rowid: int, batch: int = 16384
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """(ids, float32 rows) of every vector with a larger id, in id order, a batch at a
        time (a server-side cursor in one read snapshot)."""
        import numpy as np

        if not self.has_vectors():
            return
        with self.read_snapshot():
            assert self._held is not None
            with pg_errors(self.url), self._held.cursor(name="ctxd_vector_batches",
                                                        binary=True) as cur:
                cur.execute("SELECT id, embedding FROM embeddings WHERE id > %s ORDER BY id",
                            (rowid,))
                while rows := cur.fetchmany(batch):
                    ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64,
                                      count=len(rows))
                    yield ids, np.vstack([_floats(r[1]) for r in rows])

    def gc_embeddings(self, min_orphans: int = 0) -> int:
        """Delete the vectors no checkpoint refers to (none while fewer than `min_orphans`);
        returns how many went."""
        if not self.has_vectors():
            return 0
        orphans = ("FROM embeddings e WHERE NOT EXISTS "
                   "(SELECT 1 FROM checkpoints c WHERE c.hash = e.hash)")
        if min_orphans > 0:
            row = self._one(f"SELECT count(*) {orphans}")
            if row is None or int(row[0]) < min_orphans:
                return 0
        with self.transaction():
            gone = len(self._rows(f"DELETE {orphans} RETURNING e.id"))
            if gone:
                self._rows(
                    "INSERT INTO meta(key, value) VALUES ('vec_generation', '1') "
                    "ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text")
        return gone

    def embedding_coverage(self, names: Sequence[str] = ()) -> list[tuple[str, int, int]]:
        """(repository, checkpoints, embedded checkpoints) per repository, or for `names`.

        Every repository: the totals by the repository index, less the checkpoints with no
        vector, found by one (parallel) hash anti-join; 0.45 s at 1M checkpoints, where
        probing the vectors' index once per checkpoint took 1.47 s. A few repositories:
        those probes, over their checkpoints only (0.06 s for 50,000)."""
        if names:
            rows = self._rows(
                "SELECT r.name, count(c.id), count(c.id) FILTER (WHERE EXISTS (SELECT 1 FROM "
                "embeddings e WHERE e.hash = c.hash)) FROM repos r LEFT JOIN checkpoints c "
                "ON c.repo_id = r.id WHERE r.name = ANY(%s) GROUP BY r.name ORDER BY r.name",
                (list(names),))
        else:
            rows = self._rows(
                "SELECT r.name, coalesce(t.n, 0), coalesce(t.n, 0) - coalesce(m.n, 0) "
                "FROM repos r LEFT JOIN (SELECT repo_id, count(*) AS n FROM checkpoints "
                "GROUP BY repo_id) t ON t.repo_id = r.id LEFT JOIN (SELECT c.repo_id, "
                "count(*) AS n FROM checkpoints c WHERE NOT EXISTS (SELECT 1 FROM embeddings "
                "e WHERE e.hash = c.hash) GROUP BY c.repo_id) m ON m.repo_id = r.id "
                "ORDER BY r.name")
        return [(str(n), int(t), int(e)) for n, t, e in rows]

    def every_checkpoint_embedded(self) -> bool:
        """Whether every checkpoint's text has a vector (a hash anti-join)."""
        row = self._one(
            "SELECT count(*) = 0 FROM checkpoints c WHERE NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)")
        return bool(row and row[0])

    # -- the engine's own search -----------------------------------------------------------

    def nearest(
        self, vector: Sequence[float], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of about the `k` nearest vectors by the HNSW index (one
        statement: the pool's connections carry `hnsw.ef_search` and the iterative scan
        that lets a larger `k` be answered in full, `indexer.store.pg.pool`)."""
        import numpy as np

        if k <= 0 or not self.has_vectors():
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        rows = self._rows("SELECT id, embedding FROM embeddings ORDER BY embedding <-> %b "
                          "LIMIT %s", (self._as_vector(vector), k), binary=True)
        if not rows:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        ids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
        return ids, np.vstack([_floats(r[1]) for r in rows])

    filtered_index_scan = True
    """`nearest_in` is pgvector's iterative index scan (`VectorSearch.filtered_index_scan`)."""

    def vectors_where(self, where: str, params: Sequence[object]
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of every vector of the checkpoints passing `where`
        (`VectorSearch.vectors_where`), in binary form."""
        import numpy as np

        found = self._rows(pyformat(
            "SELECT e.id, e.embedding FROM embeddings e WHERE e.hash IN (SELECT c.hash FROM "
            f"checkpoints c JOIN repos r ON r.id = c.repo_id WHERE TRUE {where})"),
            list(params), binary=True) if self.has_vectors() else []
        if not found:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        ids = np.fromiter((int(r[0]) for r in found), dtype=np.int64, count=len(found))
        return ids, np.vstack([_floats(r[1]) for r in found])

    @property
    def scope_key(self) -> str | None:
        """The store's URL: its generation is the database's, the same on every connection
        (`VectorSearch.scope_key`)."""
        return str(self.url)

    def exact_rows_max(self) -> int:
        """Up to how many filtered-in checkpoints `nearest_in` ranks them exactly
        (`VectorSearch.exact_rows_max`): `sqrt(EXACT_PER_VISIT * PAGE_K * vectors)`,
        at least `EXACT_ROWS_MIN`. An exact ranking costs in proportion to the rows it
        reads; the HNSW walk with the filter visits about `k / share` tuples, each
        costing `EXACT_PER_VISIT` rows' worth, so the two cost the same where
        `rows * share = EXACT_PER_VISIT * k`, that is where rows reach this bound
        (measured in docs/BENCHMARKS.md, issue 30 item 1, continued). Read from the
        catalogue at most every `EXACT_ROWS_TTL_S` per connection object."""
        now = time.monotonic()
        when, bound = self._exact_rows
        if now - when < EXACT_ROWS_TTL_S:
            return bound
        row = self._one("SELECT greatest(reltuples, 0) FROM pg_class "
                        "WHERE oid = 'embeddings'::regclass")  # the planner's count: no scan
        total = float(row[0]) if row else 0.0
        bound = max(EXACT_ROWS_MIN, int(math.sqrt(EXACT_PER_VISIT * PAGE_K * total)))
        self._exact_rows = (now, bound)
        return bound

    _exact_rows: tuple[float, int] = (-math.inf, 0)

    def nearest_in(
        self, vector: Sequence[float], k: int, where: str, params: Sequence[object], *,
        rows: int | None = None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, float32 rows) of about the `k` nearest vectors of the checkpoints passing
        `where`. With `rows` (the checkpoints that pass, counted) at most
        `exact_rows_max()`, the database ranks the filtered-in rows exactly (a nested loop
        over the checkpoints' index, then their vectors by hash). Otherwise the HNSW index
        is walked in distance order with the filter checked on each tuple it yields
        (an `EXISTS` that the planner keeps as a filter: pulled up into a join it may read
        every filtered-in row first), pgvector's iterative scan going on until `k` rows
        pass (or `hnsw.max_scan_tuples` were visited: then, and when fewer than `k` pass
        at all, the filtered-in rows are ranked exactly)."""
        import numpy as np

        if k <= 0 or not self.has_vectors():
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        probe = self._as_vector(vector)
        found: list[Any] = []
        if rows is None or rows > self.exact_rows_max():
            found = self._walk(pyformat(
                "SELECT e.id, e.embedding FROM embeddings e WHERE EXISTS (SELECT 1 FROM "
                "checkpoints c JOIN repos r ON r.id = c.repo_id WHERE c.hash = e.hash "
                f"{where} OFFSET 0) ORDER BY e.embedding <-> ? LIMIT ?"),
                [*params, probe, k])
        if len(found) < k:  # a narrow filter, the scan stopped early, or fewer pass
            found = self._rows(pyformat(
                "SELECT id, embedding FROM (SELECT e.id, e.embedding, e.embedding <-> ? AS d "
                "FROM embeddings e WHERE e.hash IN (SELECT c.hash FROM checkpoints c "
                f"JOIN repos r ON r.id = c.repo_id WHERE TRUE {where}) OFFSET 0) s "
                "ORDER BY d, id LIMIT ?"), [probe, *params, k], binary=True)
        if not found:
            return np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.float32)
        ids = np.fromiter((int(r[0]) for r in found), dtype=np.int64, count=len(found))
        return ids, np.vstack([_floats(r[1]) for r in found])

    def _walk(self, sql: str, params: Sequence[object]) -> list[Any]:
        """The rows of a filtered HNSW walk (`nearest_in`), run with pgvector's iterative
        scan in relaxed order (`WALK_ORDER`), then the connection's strict order again: one
        round trip (a pipeline, where libpq has them: 14 and later); after a failure the
        setting is put back before the error goes on (inside a transaction that failed,
        its rollback does; a broken connection leaves the pool)."""
        with self._connection() as conn, pg_errors(self.url):
            try:
                with conn.pipeline() if psycopg.Pipeline.is_supported() else nullcontext():
                    conn.execute(f"SET hnsw.iterative_scan = {WALK_ORDER}")
                    cur = conn.execute(sql, params, binary=True)
                    conn.execute("SET hnsw.iterative_scan = strict_order")
                return cur.fetchall()
            except psycopg.Error:
                if not conn.closed and conn.info.transaction_status in (
                        TransactionStatus.IDLE, TransactionStatus.INTRANS):
                    conn.execute("SET hnsw.iterative_scan = strict_order")
                raise

    def scan_nearest(self, vector: Sequence[float], where: str,
                     params: Sequence[object]) -> list[tuple[int, float]]:
        """(id, L2 distance) of every vector of the checkpoints passing `where`, nearest
        first (ties by id)."""
        if not self.has_vectors():
            return []
        rows = self.query(
            "SELECT e.id, e.embedding <-> ? AS d FROM embeddings e WHERE e.hash IN "
            "(SELECT c.hash FROM checkpoints c JOIN repos r ON r.id = c.repo_id "
            f"WHERE TRUE {where}) ORDER BY d, e.id", [self._as_vector(vector), *params])
        return [(int(i), float(d)) for i, d in rows]

    def explain_nearest(self) -> str:
        return (f"pgvector HNSW ({self.vector_type()}, L2; ef_search {EF_SEARCH}, iterative "
                "scan beyond) KNN")


def _floats(value: object) -> npt.NDArray[np.float32]:
    """A pgvector value (numpy from the adapter, or `HalfVector`) as float32."""
    import numpy as np

    to_numpy = getattr(value, "to_numpy", None)
    array = to_numpy() if callable(to_numpy) else value
    return np.asarray(array, dtype=np.float32)
