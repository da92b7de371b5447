"""One psycopg connection pool per store URL in this process: `pool_for(options)`.

The first call for a URL migrates the schema (`indexer.store.pg.schema.migrate`, on a
connection of its own) and then opens a `psycopg_pool.ConnectionPool` whose connections
are in autocommit mode (a store method that writes opens its own transaction), know
pgvector's types (`pgvector.psycopg.register_vector`), search HNSW with `EF_SEARCH`
candidates and pgvector's iterative scan (so a query for more rows than that still gets
them, in order), and name this process
(`fallback_application_name` = `ctxd <pid> on <host>`, which a waiting writer shows). Every
`PgStore` of the process borrows from it: one per thread, as with SQLite, but holding a
connection only while it runs a statement, a transaction or a read snapshot. The pools
are closed when the process exits (`close_pools`).
"""

from __future__ import annotations

import atexit
import os
import socket
import threading
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg_pool import ConnectionPool

from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.pg.errors import conninfo, pg_errors
from ctxd.indexer.store.pg.schema import migrate

CONNECT_TIMEOUT_S = 10
"""libpq's `connect_timeout` unless the URL sets its own."""
POOL_TIMEOUT_S = 30.0
"""How long a statement waits for a free connection of the pool."""

_POOLS: dict[tuple[str, int], ConnectionPool] = {}
_LOCK = threading.Lock()


def client_name() -> str:
    """How this process names itself to the server (`application_name`)."""
    return f"ctxd {os.getpid()} on {socket.gethostname()}"[:63]


def connect_kwargs(url: str) -> dict[str, Any]:
    """The libpq parameters ctxd adds to a store URL (never replacing the URL's own).

    Raises:
        ConfigError: libpq cannot read the URL (`indexer.store.pg.errors.conninfo`).
    """
    given = conninfo(url)
    extra: dict[str, Any] = {"fallback_application_name": client_name()}
    if "connect_timeout" not in given:
        extra["connect_timeout"] = CONNECT_TIMEOUT_S
    return extra


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[tuple[Any, ...]]:
    """A connection outside the pool (migrations, advisory locks).

    Raises:
        BackendUnavailable: the server cannot be reached or refuses the login.
    """
    with pg_errors(url):
        return psycopg.connect(url, autocommit=autocommit, **connect_kwargs(url))


EF_SEARCH = 100
"""`hnsw.ef_search` of every connection: the candidates HNSW keeps while it searches (40 by
default; 100 gives recall@10 >= 0.95 on real and clustered data, docs/BENCHMARKS.md).
Queries asking for more rows than that go on searching (`hnsw.iterative_scan`)."""


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)
    conn.execute(f"SET hnsw.ef_search = {EF_SEARCH}")
    conn.execute("SET hnsw.iterative_scan = strict_order")


def pool_for(options: StoreOptions) -> ConnectionPool:
    """The pool of the store at `options.url`, migrated and opened on first use.

    Raises:
        BackendUnavailable: the server cannot be reached.
        StorageError: the schema must change and this role may not change it.
    """
    key = (options.url, options.pool_size)
    with _LOCK:
        pool = _POOLS.get(key)
        if pool is not None:
            return pool
        with connect(options.url) as conn:
            migrate(conn, options.url)
        pool = ConnectionPool(
            options.url, min_size=1, max_size=max(1, options.pool_size), open=False,
            kwargs={"autocommit": True, **connect_kwargs(options.url)},
            configure=_configure, timeout=POOL_TIMEOUT_S, name="ctxd-store")
        with pg_errors(options.url):
            pool.open(wait=True, timeout=POOL_TIMEOUT_S)
        _POOLS[key] = pool
        return pool


def close_pools() -> None:
    """Close every pool of this process (at exit; tests)."""
    with _LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


atexit.register(close_pools)
