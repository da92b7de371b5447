"""Opening the index wherever it lives, and locking it for a writer: the one place that picks
the engine.

- `open_store(db_path, options)`: the SQLite `Store` at `db_path` when `options.url` is
  empty, else the PostgreSQL `PgStore` at the URL (psycopg is imported only then);
- `write_lock(db_path, options, root)`: the writer's lock: SQLite's one file lock for the
  whole index (`<db>.lock`; SQLite has one writer at a time), PostgreSQL's advisory lock of
  the repository at `root` (writers of different repositories run at once);
- `writers_at_work(db_path, options)`: a test "is a writer holding this repository's
  lock now", read once for a whole listing (status, freshness);
- `store_location(db_path, options)`: where the index is, fit to show (no password).

Both locks offer `WriterLock`. Nothing else opens the index.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ctxd.indexer.store.location import StoreOptions, redact_url
from ctxd.indexer.store.lock import IndexFileLock
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.sqlite.store import Store


class WriterLock(Protocol):
    """A writer's lock on the index (or on one repository of it)."""

    def acquire(self, *, wait: float | None = 0.0,
                on_wait: Callable[[str], None] | None = None) -> None: ...

    def try_acquire(self, *, wait: float | None = 0.0,
                    on_wait: Callable[[str], None] | None = None) -> bool: ...

    def release(self) -> None: ...

    def is_held(self) -> bool: ...

    def holder(self) -> str: ...


def open_store(db_path: Path, options: StoreOptions) -> IndexStore:
    """A connection to the index (one per thread).

    Raises:
        BackendUnavailable: a PostgreSQL store cannot be reached.
        StorageError: its schema must change and this role may not change it.
    """
    if not options.url:
        return Store.open(db_path)
    from ctxd.indexer.store.pg.store import PgStore  # the driver only for a team store

    return PgStore.open(options)


def write_lock(db_path: Path, options: StoreOptions, root: str | None = None) -> WriterLock:
    """The lock a writer of the repository at `root` takes (see the module docstring)."""
    if not options.url:
        return IndexFileLock(db_path)
    from ctxd.indexer.store.pg.locks import PgRepoLock

    return PgRepoLock(options.url, root)


def writers_at_work(db_path: Path, options: StoreOptions) -> Callable[[str], bool]:
    """root -> whether a writer holds its lock now, read once (one lock probe or query)."""
    if not options.url:
        writing = IndexFileLock(db_path).is_held()
        return lambda _root: writing
    from ctxd.indexer.store.pg.locks import held_keys, repo_key

    held = held_keys(options.url)
    return lambda root: repo_key(root) in held


def store_location(db_path: Path, options: StoreOptions) -> str:
    """The index's path, or its PostgreSQL URL without the password."""
    return redact_url(options.url) if options.url else str(db_path)
