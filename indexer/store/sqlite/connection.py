"""The connection to the index: one SQLite file (WAL) with sqlite-vec loaded.

`Connection.open(path)` is the only `connect()` in ctxd. It loads sqlite-vec through
sqlean-py (the stdlib `sqlite3` here cannot load extensions), applies the numbered
migrations of `indexer.store.sqlite.schema`, and owns what every concern of the store shares:
transactions, the `meta` table, the generations readers key caches on, the file's size
and compaction, and the read-only `query()` the engine-neutral reads
(`indexer.store.lookups`) run their portable SQL through (with bound parameters).

`Connection` is the base of the per-concern classes (`repos`, `files`, `pending`,
`vectors`, `keywords`, `coverage`); `indexer.store.sqlite.store.Store` composes them, and
callers use `Store`.

Invariants:
- Writes run in explicit transactions (`transaction()`: BEGIN IMMEDIATE ... COMMIT,
  rolled back on any exception); autocommit is off.
- `text_generation` grows inside the transaction of every change to the indexed text.
- A connection belongs to one thread: open one `Store` per thread.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

import sqlean as sqlite3
import sqlite_vec

from ctxd.indexer.store.private import check_home, create_private, private_home
from ctxd.indexer.store.sqlite.schema import MIGRATIONS

log = logging.getLogger(__name__)

SQLiteError = sqlite3.Error
"""What SQLite raises (for code that classifies errors without talking to SQLite)."""

WAL_SIZE_LIMIT = 4 << 20
"""Bytes the WAL file is truncated back to after a checkpoint (`journal_size_limit`)."""

WAL_SWITCH_SECONDS = 30.0
"""How long `_to_wal` keeps trying while other processes hold a fresh index's lock (the
same as the connections' `busy_timeout`)."""

Row = tuple[Any, ...]


class Connection:
    """One connection to the index. Not thread-safe: open one per thread."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path
        self._owner = threading.get_ident()
        self._joined = False
        """Inside `transaction(savepoints=False)`: nested transactions join it."""

    # -- lifecycle ---------------------------------------------------------------------

    @classmethod
    def open(cls, path: Path | str, *, readonly: bool = False) -> Self:
        """Open (creating if needed) the index at `path` and migrate it.

        Args:
            path: the SQLite file; its folder is created.
            readonly: open without write access (the file must exist).
        """
        path = Path(path)
        if readonly:
            check_home(path.parent, names=(path.name,))  # another user's index: refused
            db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, timeout=30.0, check_same_thread=False
            )
        else:
            # The index holds every indexed file's text: owner only.
            private_home(path.parent, names=(path.name,))
            create_private(path)  # before SQLite: its -wal and -shm take this file's mode
            # Used by one thread at a time; check_same_thread=False only lets the owner's
            # service close it from another thread at shutdown.
            db = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
        db.isolation_level = None  # explicit transactions only
        db.enable_load_extension(True)
        sqlite_vec.load(db)
        db.enable_load_extension(False)
        db.execute("PRAGMA busy_timeout = 30000")
        if not readonly:
            _to_wal(db)
            db.execute("PRAGMA synchronous = NORMAL")
            # After each checkpoint the WAL file shrinks back to this size (else it keeps
            # its largest size for good).
            db.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        db.execute("PRAGMA foreign_keys = ON")
        store = cls(db, path)
        if not readonly:
            store._migrate()
        return store

    def close(self) -> None:
        self.db.close()

    # -- space -------------------------------------------------------------------------

    def file_bytes(self) -> int:
        """The index's size on disk: the database and its WAL."""
        return sum(os.path.getsize(p) for p in (self.path, Path(f"{self.path}-wal"))
                   if os.path.exists(p))

    def reclaimable_bytes(self) -> int:
        """Free pages inside the database file (given back by `compact`)."""
        pages = int(self.db.execute("PRAGMA freelist_count").fetchone()[0])
        return pages * int(self.db.execute("PRAGMA page_size").fetchone()[0])

    def checkpoint(self) -> None:
        """Copy the WAL into the database and truncate it (after large writes): readers
        that hold an old snapshot make this a partial checkpoint, never an error."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    def compact(self) -> tuple[int, int]:
        """Rewrite the database without its free pages (`VACUUM`) and truncate the WAL;
        returns its size on disk (database + WAL) before and after. Call with the write
        lock held: it writes the whole file."""
        before = self.file_bytes()
        self.db.execute("VACUUM")
        self.checkpoint()
        return before, self.file_bytes()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        """Apply the migrations not applied yet, all in one write transaction.

        Several processes open a new index at once (the CLI and the daemon it starts), so
        the schema version is read only once the write lock is held: whoever migrates
        first does all of it, the others find `user_version` current and write nothing.
        A current index costs one read and no lock."""
        if int(self.db.execute("PRAGMA user_version").fetchone()[0]) >= len(MIGRATIONS):
            return
        with self.transaction():
            version = int(self.db.execute("PRAGMA user_version").fetchone()[0])
            for number, migration in enumerate(MIGRATIONS[version:], start=version + 1):
                migration(self.db)
                self.db.execute(f"PRAGMA user_version = {number}")

    @contextmanager
    def transaction(self, *, savepoints: bool = True) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception.

        Inside an open transaction (phase 1 writes several files in one: fewer commits,
        fewer FTS5 segments to merge) it is a savepoint: an exception undoes just its own
        writes, and they commit with the outer transaction. Inside an outer
        `transaction(savepoints=False)` it joins the outer one instead, for a batch that is
        dropped whole on any error: FTS5 writes its pending terms out as a new segment at
        every savepoint, which cost phase 1's trigram inserts ~30% more CPU with a
        savepoint per file (docs/BENCHMARKS.md, issue 30 item 2, evening).

        SQLite itself rolls the whole transaction back after some errors (a full disk, an
        I/O error, out of memory): then there is nothing left to roll back, and the
        original error is raised, never a second one from a ROLLBACK ("cannot rollback -
        no transaction is active") that would hide it. A COMMIT that fails leaves no
        transaction open behind it."""
        if self.db.in_transaction and self._joined:
            yield
            return
        if self.db.in_transaction:
            self.db.execute("SAVEPOINT nested")
            try:
                yield
            except BaseException:
                if self.db.in_transaction:  # else SQLite rolled everything back already
                    self._undo("ROLLBACK TO nested", "RELEASE nested")
                raise
            self.db.execute("RELEASE nested")
            return
        self.db.execute("BEGIN IMMEDIATE")
        self._joined = not savepoints
        try:
            yield
        except BaseException:
            if self.db.in_transaction:
                self._undo("ROLLBACK")
            raise
        finally:
            self._joined = False
        try:
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:
                self._undo("ROLLBACK")
            raise

    def _undo(self, *statements: str) -> None:
        """Roll back while an error is on its way up: a failure here (the disk that failed
        the write may fail this too) is logged, so the caller raises the first error."""
        try:
            for sql in statements:
                self.db.execute(sql)
        except sqlite3.Error as exc:
            log.warning("rolling back after an error failed too: %s", exc)

    # -- reads for the search layer ------------------------------------------------------

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[Row]:
        """Run a read-only statement in the portable SQL and return all rows."""
        return list(self.db.execute(sql, params))

    def text_generation(self) -> int:
        """Grows with every change to the indexed text (a file written or removed, a
        repository removed), as seen by every connection and process: answers computed
        from the text stay valid while it stays the same. Embedding commits leave it."""
        return int(self.get_meta("text_generation") or 0)

    def _text_changed(self) -> None:
        """Bump `text_generation` (inside the caller's write transaction)."""
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES ('text_generation', '1') ON CONFLICT(key) "
            "DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    def generation(self) -> tuple[int, int]:
        """Changes whenever the index may have changed as seen by this connection: a commit
        by another connection (`PRAGMA data_version`) or a row changed through this one
        (`total_changes`). Lets readers keep answers while it stays the same."""
        version = int(self.db.execute("PRAGMA data_version").fetchone()[0])
        return version, self.db.total_changes

    # -- meta ----------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )


def _to_wal(db: sqlite3.Connection) -> None:
    """`PRAGMA journal_mode = WAL`, tried again while another process holds the lock.

    Switching a fresh file to WAL takes its exclusive lock, and SQLite answers "database is
    locked" at once, without waiting out `busy_timeout`, when another connection holds a
    shared lock on it: the CLI and the daemon it starts opening a new index together
    (`tests/indexer/store/test_store_sharing.py`). Once one of them has switched, the
    others find WAL already set and go on."""
    deadline = time.monotonic() + WAL_SWITCH_SECONDS
    pause = 0.001
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)  # another process is switching it: let it finish
        pause = min(pause * 2, 0.1)
