"""A connection to the PostgreSQL store: `PgConnection`, the base of its per-concern classes.

What every concern shares, as `indexer.store.sqlite.connection.Connection` does for SQLite:
transactions, read snapshots, the text generation, `meta`, the store's size, and `query()`
for the portable reads (`indexer.store.lookups`), which are written with SQLite's `?`
placeholders and translated here (`pyformat`: `?` -> `%s`, a literal `%` doubled, quoted
text left alone).

A `PgConnection` borrows connections from the process's pool (`indexer.store.pg.pool`):
for one statement at a time in autocommit mode (each sees the latest committed state, and
readers never block writers: MVCC), or for the length of a `transaction()` or
`read_snapshot()` (REPEATABLE READ, READ ONLY), during which every statement of this
object runs on that one connection. Like a SQLite `Store`, it belongs to one thread.

Invariants:
- Writes run in explicit transactions (`transaction()`, a savepoint inside another),
  rolled back on any exception; a killed writer's open transaction is rolled back by the
  server, so a crash never leaves half a file.
- The text generation is the sequence `ctxd_text_generation`, bumped inside every
  transaction that changes the indexed text and once more after it commits: a reader that
  read the generation before the data never caches old text under a newer generation for
  longer than the commit takes, and no row is updated by every writer (writers of
  different repositories never wait for each other). The vectors' part of `generation()`
  (`embeddings_id_seq`) moves once more after a commit that added vectors, for the same
  reason (a scope's kept vectors, `search.scoped`, are keyed by it).
- Every psycopg failure leaves as ctxd's own error, the URL's password scrubbed
  (`indexer.store.pg.errors`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

import psycopg
from psycopg import sql as pgsql
from psycopg_pool import ConnectionPool

from ctxd.indexer.store.location import StoreOptions, redact_url
from ctxd.indexer.store.pg.dialect import PG_DIALECT, PgDialect
from ctxd.indexer.store.pg.errors import pg_errors
from ctxd.indexer.store.pg.schema import TABLES

Row = tuple[Any, ...]

GENERATION_TTL_S = 0.1
"""How long a read of the text generation is reused by the same connection."""


@functools.lru_cache(maxsize=2048)
def pyformat(sql: str) -> str:
    """`sql` with SQLite's `?` placeholders as psycopg's `%s` (and `%` as `%%`), leaving
    single-quoted literals and double-quoted names alone."""
    out: list[str] = []
    quote: str | None = None
    for ch in sql:
        if quote is not None:
            out.append("%%" if ch == "%" else ch)
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
            out.append(ch)
        elif ch == "?":
            out.append("%s")
        elif ch == "%":
            out.append("%%")
        else:
            out.append(ch)
    return "".join(out)


class PgConnection:
    """One thread's handle on the PostgreSQL store (see the module docstring)."""

    engine = "postgresql"
    dialect: PgDialect = PG_DIALECT

    def __init__(self, pool: ConnectionPool, options: StoreOptions) -> None:
        self._pool = pool
        self.options = options
        self.url = options.url
        self._held: psycopg.Connection[Row] | None = None
        self._joined = False
        """Inside `transaction(savepoints=False)`: nested transactions join it."""
        """The connection of the open transaction or snapshot."""
        self._text_dirty = False
        self._vectors_dirty = False
        """Vectors were added in the open transaction: `embeddings_id_seq` moves once more
        after it commits (as the text generation does)."""
        self._generation_read: tuple[float, int] = (-1.0, 0)
        """(when, value) of the last `text_generation()` read outside a transaction."""

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def location(self) -> str:
        """The store's URL without its password."""
        return redact_url(self.url)

    def close(self) -> None:
        """Nothing to let go: connections go back to the pool after each use."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- statements --------------------------------------------------------------------

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Row]]:
        """The held connection, or one borrowed from the pool for the block."""
        if self._held is not None:
            yield self._held
            return
        with pg_errors(self.url), self._pool.connection() as conn:
            yield conn

    def _rows(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None, *,
              binary: bool = False) -> list[Row]:
        """Run one statement (psycopg placeholders) and return its rows (`binary`: in
        PostgreSQL's binary format: vectors arrive as float32 bytes, not text)."""
        with self._connection() as conn, pg_errors(self.url):
            cur = conn.execute(sql, params, binary=binary)
            return cur.fetchall() if cur.description is not None else []

    def _one(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
             ) -> Row | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def _many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement for each of `rows` (pipelined)."""
        if not rows:
            return
        with self._connection() as conn, pg_errors(self.url), conn.cursor() as cur:
            cur.executemany(sql, rows)

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Run a read-only statement in the portable SQL (`?` placeholders) and return
        all rows."""
        return self._rows(pyformat(sql), params if params else None)

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def transaction(self, *, savepoints: bool = True) -> Iterator[None]:
        """BEGIN ... COMMIT on one connection, rolled back on any exception; inside an open
        transaction, a savepoint (or, inside `transaction(savepoints=False)`, the outer
        transaction itself: one round trip less a write for a batch dropped whole)."""
        if self._held is not None and self._joined:
            yield
            return
        if self._held is not None:
            with pg_errors(self.url), self._held.transaction():
                yield
            return
        with pg_errors(self.url), self._pool.connection() as conn:
            self._held, self._joined = conn, not savepoints
            try:
                with conn.transaction():
                    yield
            finally:
                self._held, self._joined = None, False
        if self._text_dirty:  # once more after the commit (see the module docstring)
            self._rows("SELECT nextval('ctxd_text_generation')")
            self._text_dirty = False
            self._generation_read = (-1.0, 0)
        if self._vectors_dirty:  # `generation()`'s second part too
            self._rows("SELECT nextval('embeddings_id_seq')")
            self._vectors_dirty = False

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """One REPEATABLE READ, READ ONLY transaction: the reads inside see one state of the
        store and never block a writer. Inside an open transaction, that transaction."""
        if self._held is not None:
            yield
            return
        with pg_errors(self.url), self._pool.connection() as conn:
            self._held = conn
            try:
                with conn.transaction():
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    yield
            finally:
                self._held = None

    # -- generations ---------------------------------------------------------------------

    def text_generation(self) -> int:
        """Grows with every change to the indexed text, as every connection sees it. Read
        at most every `GENERATION_TTL_S` outside a transaction (a search asks several
        times): a reader keys what it computes from the text on a value read before the
        text, and that value can only be older than the text, never newer."""
        now = time.monotonic()
        when, value = self._generation_read
        if self._held is None and not self._text_dirty and now - when < GENERATION_TTL_S:
            return value
        row = self._one("SELECT last_value, is_called FROM ctxd_text_generation")
        value = int(row[0]) if row and row[1] else 0
        if self._held is None:
            self._generation_read = (now, value)
        return value

    def _text_changed(self) -> None:
        """Bump the text generation (inside the caller's write transaction; once more
        after it commits)."""
        self._rows("SELECT nextval('ctxd_text_generation')")
        self._text_dirty = True
        self._generation_read = (-1.0, 0)

    def generation(self) -> tuple[int, int]:
        """Changes whenever the text or the vectors may have changed."""
        row = self._one(
            "SELECT (SELECT CASE WHEN is_called THEN last_value ELSE 0 END "
            "FROM ctxd_text_generation), "
            "(SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM embeddings_id_seq) "
            "+ coalesce((SELECT value::bigint FROM meta WHERE key = 'vec_generation'), 0)")
        assert row is not None
        return int(row[0]), int(row[1])

    # -- meta ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self._one("SELECT value FROM meta WHERE key = %s", (key,))
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._rows("INSERT INTO meta(key, value) VALUES (%s, %s) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))

    # -- space ---------------------------------------------------------------------------

    def file_bytes(self) -> int:
        """ctxd's tables with their indexes and TOAST data, in bytes."""
        row = self._one("SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0) "
                        "FROM unnest(%s::text[]) t", (list(TABLES),))
        return int(row[0]) if row else 0

    def reclaimable_bytes(self) -> int:
        """PostgreSQL reuses the space of deleted rows itself (autovacuum): nothing to
        report."""
        return 0

    def checkpoint(self) -> None:
        """Nothing to settle: the server checkpoints its own WAL."""

    def compact(self) -> tuple[int, int]:
        """`VACUUM (ANALYZE)` of ctxd's tables (space of deleted rows made reusable, the
        planner's statistics fresh); the size before and after."""
        before = self.file_bytes()
        with self._connection() as conn, pg_errors(self.url):
            for table in TABLES:
                conn.execute(pgsql.SQL("VACUUM (ANALYZE) {}").format(pgsql.Identifier(table)))
        return before, self.file_bytes()
