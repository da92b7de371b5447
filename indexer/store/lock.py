"""Advisory file locks: one writer per SQLite index, one watcher per index, one daemon per
index home.

`FileLock(path)` is an exclusive `flock` on a file that names its holder's pid; the
daemon holds one on `<home>/daemon.lock` for its life. `IndexFileLock(db_path)` is one on
`<db_path>.lock` whose `acquire` says who holds it (`IndexLocked`): the SQLite store's
writer lock (`<db>.lock`; `indexer.store.open.write_lock` hands it out as a `WriterLock`,
PostgreSQL's writers take `indexer.store.pg.locks.PgRepoLock` instead) and the watcher's
(`<db>.watch.lock`). The kernel drops a lock when its holder dies (even on `kill -9`), so
a crash never leaves a stale lock, and `is_held()` tells a live holder from a dead one (a
repository's `index_started_at` outlives a crashed run; "indexing now" means it and a held
lock). Readers never take one: SQLite's WAL lets them read while one process writes.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from ctxd.indexer.errors import IndexLocked


class FileLock:
    """An exclusive, process-wide `flock` on `path`; the holder writes its pid there."""

    def __init__(self, path: Path, *, mode: int = 0o600) -> None:
        self.path = path
        self.mode = mode
        self._fd: int | None = None

    def is_held(self) -> bool:
        """Whether a live process (this one included) holds the lock now.

        Probes with a shared, non-blocking `flock` on a fresh descriptor and lets go at
        once: the kernel drops a dead holder's lock, so a crashed writer never counts.
        A writer retrying its `acquire` in that instant simply tries again.
        """
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False  # no lock file: nobody ever wrote this index
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        else:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)

    def holder(self) -> str:
        """The pid written by the current holder, or '?'."""
        try:
            return self.path.read_text(encoding="utf-8").strip() or "?"
        except OSError:
            return "?"

    def try_acquire(
        self,
        *,
        wait: float | None = 0.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> bool:
        """Take the lock; False when another process still holds it after `wait` seconds
        (0 = try once; None = wait forever). `on_wait` is called once with the holder's
        pid when we have to wait."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, self.mode)
        deadline = None if wait is None else time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                if not told and on_wait is not None:
                    on_wait(self.holder())
                    told = True
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        return True

    def still_at_path(self) -> bool:
        """Whether the lock file this process holds is still the one at `path` (not
        removed, not replaced): a holder whose file is gone no longer keeps others out."""
        if self._fd is None:
            return False
        try:
            held, there = os.fstat(self._fd), os.stat(self.path)
        except OSError:
            return False
        return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


class IndexFileLock(FileLock):
    """An exclusive, process-wide lock on `<db_path>.lock` (the SQLite index's writers,
    the watcher) whose `acquire` raises `IndexLocked` naming the holder."""

    def __init__(self, db_path: Path) -> None:
        super().__init__(Path(str(db_path) + ".lock"))

    def acquire(
        self,
        *,
        wait: float | None = 0.0,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        """Take the lock (see `FileLock.try_acquire`).

        Raises:
            IndexLocked: another process still holds the lock after `wait` seconds.
        """
        if not self.try_acquire(wait=wait, on_wait=on_wait):
            pid = self.holder()
            raise IndexLocked(
                f"Another ctxd process (pid {pid}) is writing the index {self.path.stem}.",
                hint="Wait for it to finish (`ctxd status` shows progress), or stop it; "
                "searches keep working meanwhile.",
                details={"lock": str(self.path), "pid": pid},
            )

    def __enter__(self) -> IndexFileLock:
        self.acquire()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
