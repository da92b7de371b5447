"""Phase 1's commits: the writes of several whole files in one transaction (`CommitBatch`).

Invariants: each file's writes stay all-or-nothing (an error drops the whole batch; the
next run re-indexes its files); the write lock is held only while a batch is written;
batches grow 1, 2, 4, ... files, or go once their first file has waited long enough;
`background` batches are written in order by one `indexer.write_thread.WriteThread`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType

from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.write_thread import WriteThread


class CommitBatch:
    """Phase-1 writes of several whole files, kept in memory and run in one transaction,
    all-or-nothing: each file's own `Store.transaction` joins it, without a savepoint of
    its own (an error drops the whole batch; FTS5 would flush at every savepoint). The
    write lock is held only while writing, never while the next file is chunked. Batches
    grow 1, 2, 4, ... up to `max_files`, so the first files are searchable at once; a
    batch is also written once its first file has waited `max_seconds`. Leaving the `with`
    block writes what is left; an exception drops it (the next run re-indexes it).

    `background`: the batches are written by a `WriteThread` while the caller goes on
    (the walk's text pass: reading and judging the next files overlaps the trigram
    writes); the caller must not use the store until the `with` block is left, which
    waits for the thread."""

    def __init__(self, store: IndexStore, max_files: int, max_seconds: float, *,
                 background: bool = False) -> None:
        self._store = store
        self._max_files = max(max_files, 1)
        self._max_seconds = max_seconds
        self._pending: list[Callable[[], object]] = []
        self._size = 1
        self._since = 0.0
        self._thread = WriteThread(store) if background else None

    def add(self, write: Callable[[], object]) -> None:
        """One file's writes."""
        if not self._pending:
            self._since = time.perf_counter()
        self._pending.append(write)
        if (len(self._pending) >= self._size
                or time.perf_counter() - self._since >= self._max_seconds):
            self.flush()

    def flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending:
            if self._thread is not None:
                self._thread.submit(pending)
            else:
                with self._store.transaction(savepoints=False):  # dropped whole on error
                    for write in pending:
                        write()
            self._size = min(self._size * 2, self._max_files)

    def __enter__(self) -> CommitBatch:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            if kind is None:
                self.flush()
        finally:
            if self._thread is not None:
                self._thread.close(drop=kind is not None)
