"""Writers of the PostgreSQL store: one advisory lock per repository (`PgRepoLock`).

Several machines write one team store at once (CI jobs, laptops), each its own
repositories: a writer holds the session-level advisory lock keyed by its repository's
root (`repo_key`) on a connection of its own for the whole run. A second writer of the same
repository waits (`wait` seconds, then `IndexLocked` naming the holder: its
`application_name`, `ctxd <pid> on <host>`, and address) or refuses at once; writers of
different repositories never wait for each other; readers take no lock at all (MVCC).
The server drops the lock when the holder's connection ends, so a killed writer (even
`kill -9`: its socket closes) never leaves a stale lock, and the next run completes what
it left, as with SQLite.

`held_keys(url)` lists the keys held right now (one query), for "indexing now" in status.
Same interface as `indexer.store.lock.IndexFileLock` (`acquire`, `try_acquire`, `release`,
`is_held`, `holder`): `indexer.store.open.WriterLock`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

import psycopg
import xxhash

from ctxd.indexer.errors import IndexLocked
from ctxd.indexer.store.location import redact_url
from ctxd.indexer.store.pg.errors import pg_errors
from ctxd.indexer.store.pg.pool import connect

POLL_SECONDS = 0.2

_HOLDERS = (
    "SELECT a.application_name, host(a.client_addr), a.pid FROM pg_locks l "
    "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
    "AND l.classid = %s AND l.objid = %s AND l.objsubid = 1 AND l.database = "
    "(SELECT oid FROM pg_database WHERE datname = current_database())"
)


def repo_key(root: str | None) -> int:
    """The advisory lock key (a signed 64-bit integer) of a repository root."""
    return xxhash.xxh64_intdigest(f"ctxd-repo:{root or ''}".encode()) - (1 << 63)


def _halves(key: int) -> tuple[int, int]:
    """(classid, objid): how `pg_locks` shows a bigint advisory key."""
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


def held_keys(url: str) -> set[int]:
    """The advisory keys of ctxd's repository locks held now in the store's database."""
    with connect(url) as conn, pg_errors(url):
        rows = conn.execute(
            "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory' "
            "AND granted AND objsubid = 1 AND database = "
            "(SELECT oid FROM pg_database WHERE datname = current_database())").fetchall()
    out = set()
    for high, low in rows:
        unsigned = (int(high) << 32) | int(low)
        out.add(unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned)
    return out


class PgRepoLock:
    """The advisory lock on writing one repository of a PostgreSQL store."""

    def __init__(self, url: str, root: str | None) -> None:
        self.url = url
        self.root = root
        self.key = repo_key(root)
        self._conn: psycopg.Connection[Any] | None = None

    def is_held(self) -> bool:
        """Whether a live session (this process's included) holds the lock now."""
        with connect(self.url) as conn, pg_errors(self.url):
            return conn.execute(_HOLDERS, _halves(self.key)).fetchone() is not None

    def holder(self) -> str:
        """Who holds it: `ctxd <pid> on <host>` (and the client address), or '?'."""
        try:
            with connect(self.url) as conn, pg_errors(self.url):
                row = conn.execute(_HOLDERS, _halves(self.key)).fetchone()
        except Exception:  # only for a message: never fail on it
            return "?"
        if row is None:
            return "?"
        name, addr, pid = row
        return f"{name or f'backend {pid}'}" + (f" from {addr}" if addr else "")

    def try_acquire(self, *, wait: float | None = 0.0,
                    on_wait: Callable[[str], None] | None = None) -> bool:
        """Take the lock; False when another session still holds it after `wait` seconds
        (0 = try once; None = wait forever). `on_wait` hears the holder once."""
        conn = connect(self.url)
        deadline = None if wait is None else time.monotonic() + wait
        told = False
        try:
            while True:
                with pg_errors(self.url):
                    row = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,)).fetchone()
                if row is not None and row[0]:
                    self._conn = conn
                    return True
                if deadline is not None and time.monotonic() >= deadline:
                    conn.close()
                    return False
                if not told and on_wait is not None:
                    on_wait(self.holder())
                    told = True
                time.sleep(POLL_SECONDS)
        except BaseException:
            conn.close()
            raise

    def acquire(self, *, wait: float | None = 0.0,
                on_wait: Callable[[str], None] | None = None) -> None:
        """Take the lock (see `try_acquire`).

        Raises:
            IndexLocked: another writer of this repository still holds it after `wait`.
        """
        if not self.try_acquire(wait=wait, on_wait=on_wait):
            who = self.holder()
            raise IndexLocked(
                f"Another ctxd process ({who}) is writing {self.root or 'the store'} in the "
                f"team store {redact_url(self.url)}.",
                hint="Wait for it to finish (`ctxd status` shows it as indexing), or stop it; "
                "searches keep working meanwhile, and other repositories can be indexed.",
                details={"store": redact_url(self.url), "root": self.root, "holder": who,
                         "pid": who})

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.execute("SELECT pg_advisory_unlock(%s)", (self.key,))
        except psycopg.Error:
            pass  # the session ends below, and the lock with it
        finally:
            conn.close()

    def __enter__(self) -> PgRepoLock:
        self.acquire()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
