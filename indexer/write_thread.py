"""Phase 1's writes on a thread of their own, so the walk reads and judges the next files
while SQLite writes the last ones (`indexer.commit_batch.CommitBatch`).

SQLite's statements run without the GIL (FTS5's trigram inserts are most of the text
pass: docs/BENCHMARKS.md), so on two cores the walk's Python work (read, decode, hash,
judge) and the writes overlap. `WriteThread(store).submit(writes)` queues one batch:
a list of callables, run in order in one `store.transaction(savepoints=False)` (the
writes' own transactions join it: FTS5 would write a segment at each savepoint); batches
commit in the order given, so the rows are the ones a write in the caller's thread would
give.

The GIL: each statement the thread runs takes the GIL back when SQLite returns, and
Python hands it over only every `sys.getswitchinterval()` (5 ms) while the walk runs
Python: the thread's several statements a file would wait that long each, and the two
threads would take turns instead of overlapping (measured: no faster than one thread on
a quieter machine). While a `WriteThread` is open the interval is `SWITCH_INTERVAL_S`
(0.5 ms), restored when the last one closes.

Invariants:
- While a `WriteThread` is open, only it uses the store: the caller hands over every
  write and reads nothing until `close` returns.
- A batch is all-or-nothing (one transaction); a batch not started when the caller fails
  is dropped (the next run redoes it, as for a kill).
- A write's exception stops the thread's writes and is raised in the caller's thread, by
  the next `submit` or by `close`.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Sequence

from ctxd.indexer.store.protocol import IndexStore

__all__ = ["WriteThread"]

QUEUED_BATCHES = 2
"""Batches waiting for the thread at most: `submit` blocks beyond (memory stays a few
batches of text however far the walk runs ahead)."""
SWITCH_INTERVAL_S = 0.0005
"""`sys.setswitchinterval` while a `WriteThread` is open (see the module docstring)."""

_open_lock = threading.Lock()
_open: list[float] = []
"""The switch interval before the first open `WriteThread`, once per open one."""


def _interval_down() -> None:
    with _open_lock:
        _open.append(sys.getswitchinterval() if not _open else _open[0])
        sys.setswitchinterval(min(_open[0], SWITCH_INTERVAL_S))


def _interval_back() -> None:
    with _open_lock:
        if _open:
            before = _open.pop()
            if not _open:
                sys.setswitchinterval(before)


class WriteThread:
    """Runs batches of writes, each one transaction of `store`, on one thread in order."""

    def __init__(self, store: IndexStore, queued: int = QUEUED_BATCHES) -> None:
        self._store = store
        self._queue: queue.Queue[Sequence[Callable[[], object]] | None] = queue.Queue(
            max(queued, 1))
        self._error: BaseException | None = None
        self._drop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ctxd-phase1-writes",
                                        daemon=True)
        self._closed = False
        _interval_down()
        self._thread.start()

    def submit(self, writes: Sequence[Callable[[], object]]) -> None:
        """Queue one batch (blocks while `QUEUED_BATCHES` wait).

        Raises:
            BaseException: what an earlier batch's write raised.
        """
        self._raise()
        self._queue.put(writes)

    def close(self, *, drop: bool = False) -> None:
        """Wait for the queued batches (`drop`: only the one being written) and end the
        thread.

        Raises:
            BaseException: what a write raised (not when dropping: the caller's own
                exception is on its way up).
        """
        if self._closed:
            return
        self._closed = True
        if drop:
            self._drop.set()
        self._queue.put(None)
        try:
            self._thread.join()
        except BaseException:  # an interrupt: the batch being written takes a moment
            self._drop.set()
            self._thread.join()
            raise
        finally:
            _interval_back()
        if not drop:
            self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            self._drop.set()  # nothing after a failed batch is written
            raise error

    def _run(self) -> None:
        while (writes := self._queue.get()) is not None:
            if self._drop.is_set() or self._error is not None:
                continue
            try:
                with self._store.transaction(savepoints=False):  # dropped whole on error
                    for write in writes:
                        write()
            except BaseException as exc:  # raised in the caller's thread
                self._error = exc
