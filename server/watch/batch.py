"""Applying one watcher batch to the index: from coalesced changes to re-indexed files.

`BatchApplier.apply(job)` takes a `Job` (a repository's coalesced changes, or FULL for a
rescan), re-stats the candidate paths, diffs them against the store and calls
`Service.index(root, only_paths=diff)` (which uses the repository's stored options), so only
changed files are re-chunked and re-embedded. It returns the `BatchResult` to report and
keeps the batch log (`results`, `batches`, `batches_examined`).

Called by `server/watch/watcher.py` (the worker thread, the only caller). Calls `Service.index` /
`Service.store` / `Service.write_lock`, the walker (`walk`) and the pure diffing of
`server/watch/changes.py`; updates `RepoState`s under the watcher's condition.

Two kinds of work, so that an edit never waits behind a bulk embedding: a batch writes
phase 1 only (text, symbols: searchable by text at once) and counts the repository's
embedding backlog; `embed(repo, should_stop)` computes that backlog in commits of one
embedder batch, and the watcher stops it (`should_stop`) as soon as a batch of any
repository is due, resuming it afterwards.

Invariants:
- A batch never loses changes: one that cannot run because another process holds the
  write lock is merged back into its repository and retried after `_LOCK_RETRY_SECONDS`
  (the wait is logged once); one that is interrupted (stop, crash) is caught up by the
  next start's rescan, since every file's rows are committed whole and files are
  compared by stat.
- Stopping cancels between two files (or embedding batches), never inside one.
- A repository removed from the index meanwhile is never re-created; one re-indexed with
  other options meanwhile is re-evaluated whole with the new ones.
- Admitted files the index did not store (binary, unreadable) are remembered by stat and
  not read again until they change.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ctxd.indexer.embedder import Vectors
from ctxd.indexer.errors import CtxdError, IndexLocked, ValidationError
from ctxd.indexer.memory import release_free_memory
from ctxd.indexer.models import FileEntry, IndexStats
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.storage_errors import storage_errors
from ctxd.indexer.walk.walker import walk
from ctxd.server.watch.changes import FULL, ChangeSet, Diff, Stat, candidates, diff, under_any
from ctxd.server.watch.repos import Job, RepoState, WatchedRepos
from ctxd.server.watch.status import now_rfc3339

if TYPE_CHECKING:
    from ctxd.server.service import Service

log = logging.getLogger("ctxd.server.watch")  # one logger for the whole watcher

_LOCK_RETRY_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One applied batch (what `ctxd watch` prints, and what `on_batch` receives)."""

    repository: str
    root: str
    trigger: str
    """`events`, `rescan` (startup, periodic, overflow, options changed) or `poll`."""
    changed: int
    """Files new or modified on disk (by stat) that the index took (not those it refuses
    when it reads them, e.g. binary ones)."""
    deleted: int
    """Files gone or newly excluded."""
    files_updated: int
    files_removed: int
    chunks_embedded: int
    duration_ms: int
    lag_ms: int | None
    """From when the newest change of the batch could be noticed to the index reflecting
    it (`lag_ms`)."""
    applied_at: str
    paths: tuple[str, ...] = ()
    """The first paths of the batch (at most 20), for display."""
    error: str | None = None


def lag_ms(job: Job, changed: Sequence[Stat | None], applied: float) -> int | None:
    """Milliseconds from when the batch's newest change could be noticed to `applied`
    (when the index reflects it): its event's arrival, or for a scan, the file's mtime
    but never before the previous scan (`Job.looked_since`): a file copied with its old
    mtime (`tar`, `cp -p`, `git archive`) could not have been noticed earlier. None when
    no file changed (deletions only) and no event says when."""
    newest = job.newest_wall
    if newest is None:
        mtimes = [st.mtime_ns / 1e9 for st in changed if st is not None]
        if not mtimes:
            return None
        newest = max(mtimes)
        if job.looked_since is not None:
            newest = max(newest, job.looked_since)
    return max(0, int((applied - newest) * 1000))


class Cancelled(Exception):
    """A batch ended early because the watcher is stopping (`IndexStats.stopped`)."""


class BatchApplier:
    """Applies the watcher's batches to the index and keeps their log."""

    def __init__(
        self,
        service: Service,
        watched: WatchedRepos,
        *,
        lock_wait_seconds: float,
        stopping: Callable[[], bool],
    ) -> None:
        """Args:
            service: writes the index (`index`, `store`, `write_lock`).
            watched: the repositories (their condition, `reconfigure`, `unwatch`, `say`).
            lock_wait_seconds: how long one attempt waits for the write lock.
            stopping: true once the watcher is asked to stop (cancels between files).
        """
        self.service = service
        self.watched = watched
        self.lock_wait_seconds = lock_wait_seconds
        self._stopping = stopping
        self._cond = watched.cond
        self.results: deque[BatchResult] = deque(maxlen=200)
        self.batches = 0
        """Batches applied (diff not empty)."""
        self.batches_examined = 0
        """Batches examined, including the ones where nothing had changed."""

    def apply(self, job: Job) -> BatchResult | None:
        """Apply `job`; the result to report, or None (nothing changed, put back, stopped)."""
        repo = job.repo
        started = time.perf_counter()
        result: BatchResult | None = None
        try:
            result = self._apply_batch(job, started)
        except IndexLocked as exc:
            self._put_back(job, str(exc.details.get("pid", "?")))
            return None
        except Cancelled:
            log.info("stopped during a batch of %s; the next start catches up", repo.name)
        except ValidationError as exc:
            with self._cond:
                repo.error = f"{exc.message} ({repo.root})"
                # Looked at again on the next refresh, even if the folder is already
                # back (renamed away and back: issue 39, item 8).
                repo.gone = True
            self.watched.unwatch(repo)
            self.watched.say(f"Stopped watching {repo.name}: {exc.message} ({repo.root}).")
        except CtxdError as exc:
            result = self._failed(job, started, exc.message)
        except Exception as exc:
            log.exception("re-indexing %s failed", repo.name)
            result = self._failed(job, started, f"{type(exc).__name__}: {exc}")
        finally:
            with self._cond:
                repo.in_flight = 0
                repo.scan_in_flight = None
                self.batches_examined += 1
                self.watched.status_dirty = True
                self._cond.notify_all()
        return result

    def _apply_batch(self, job: Job, started: float) -> BatchResult | None:
        repo = job.repo
        on_wait = self._lock_waiter(repo, len(job.changes))
        # Wait for the write lock before the (possibly full) stat pass: while another
        # process writes for minutes, retries stay cheap. `Service.index` takes it again.
        probe = self.service.write_lock(repo.root)
        probe.acquire(wait=self.lock_wait_seconds, on_wait=on_wait)
        probe.release()
        store = self.service.store()
        row = store.repo_by_root(repo.root)
        if row is None:
            return None  # removed from the index meanwhile: never re-create it
        if row.options != repo.options:
            # Re-indexed with other patterns since the last look: apply them now, and
            # re-evaluate everything, so this batch never writes the old options back.
            self.watched.reconfigure(repo, row.options)
            with self._cond:
                repo.rescan = None
            job = replace(job, changes=FULL, catch_up=True)
        stored_files = store.stored_files(repo.id)
        stored = {p: Stat(s.size, s.mtime_ns) for p, s in stored_files.items()}
        on_disk = self._stat_paths(repo, job.changes, stored)
        found = diff(on_disk.keys(), stored, on_disk, repo.unindexable)
        finish = job.catch_up and self._needs_finish(store, repo)
        if not found and not finish:
            with self._cond:
                if repo.waiting_for_lock:
                    repo.waiting_for_lock = None
            if job.catch_up:
                self.count_backlog(repo)
            return None
        stats = self._index(repo, found, on_wait)
        if stats.stopped:
            raise Cancelled
        with self._cond:
            repo.embed_error = None
        if stats.files_updated or stats.files_removed or finish:
            self.count_backlog(repo)  # (a scan of the repository's checkpoints)
        applied = time.time()
        self._remember_unindexable(store, repo, found, on_disk)
        changed = [p for p in found.changed if p not in repo.unindexable]
        row = store.repo_by_root(repo.root)
        if not (changed or found.deleted or stats.files_removed or finish):
            # Only files the index refuses (binary): nothing to report, `indexed_at` kept.
            with self._cond:
                if row is not None:
                    repo.options = dict(row.options)
                repo.waiting_for_lock = None
            return None
        lag = lag_ms(job, [on_disk.get(p) for p in changed], applied)
        result = BatchResult(
            repository=repo.name,
            root=repo.root,
            trigger=job.trigger,
            changed=len(changed),
            deleted=len(found.deleted),
            files_updated=stats.files_updated,
            files_removed=stats.files_removed,
            chunks_embedded=stats.chunks_embedded,
            duration_ms=int((time.perf_counter() - started) * 1000),
            lag_ms=lag,
            applied_at=now_rfc3339(applied),
            paths=tuple(p for p in found.paths if p not in repo.unindexable)[:20],
        )
        with self._cond:
            if row is not None:
                repo.options = dict(row.options)
            repo.last_update = result.applied_at
            repo.last_lag_ms = lag
            repo.waiting_for_lock = None
            self.batches += 1
            self.results.append(result)
        log.info(
            "%s: %d changed, %d deleted, %d embedded in %d ms (lag %s ms)",
            repo.name, result.changed, result.deleted, result.chunks_embedded,
            result.duration_ms, lag,
        )
        return result

    def _lock_waiter(self, repo: RepoState, count: int) -> Callable[[str], None]:
        """The `on_lock_wait` callback: records the holder, logs once per wait."""

        def on_wait(pid: str) -> None:
            with self._cond:
                first = repo.waiting_for_lock is None
                repo.waiting_for_lock = pid
                self.watched.status_dirty = True
                self._cond.notify_all()
            if not first:
                return
            if pid == str(os.getpid()):  # the daemon's own index run: nothing to warn of
                log.info("%s: waiting for this process's index run to finish writing.",
                         repo.name)
            else:
                log.warning(
                    "Another ctxd process (pid %s) is writing the index; changes of %s "
                    "wait for it (%d pending).", pid, repo.name, count,
                )

        return on_wait

    def _index(
        self, repo: RepoState, found: Diff, on_wait: Callable[[str], None]
    ) -> IndexStats:
        return self.service.index(
            repo.root,
            only_paths=found.paths,
            lock_wait=self.lock_wait_seconds,
            on_lock_wait=on_wait,
            should_stop=self._stopping,
            embed=False,
        )

    def count_backlog(self, repo: RepoState) -> int:
        """Count (and record) the repository's texts still without vectors (distinct
        checkpoint texts and file summaries)."""
        n = self.service.store().count_pending(repo.id)
        with self._cond:  # waiters are woken when the batch (or slice) ends
            repo.embed_backlog = n
            self.watched.status_dirty = True
        return n

    def embed(
        self,
        repo: RepoState,
        should_stop: Callable[[], bool],
        encode: Callable[[list[str]], Vectors] | None = None,
    ) -> int:
        """Embed the repository's backlog until done or `should_stop()` (checked after
        every commit of one embedder batch); returns the checkpoints embedded. Holds the
        write lock only for each commit, never while the model runs, so `encode` (the
        model on one batch) may apply batches of edited files meanwhile; a held lock or
        an error leaves the backlog for later.
        """
        service = self.service
        stats = IndexStats(path=repo.root, repository=repo.name, include_patterns=[],
                           exclude_patterns=[], max_file_size=0)
        indexer = Indexer(service.store(), service.embedder, service.settings.chunk,
                          embed_budget=service.settings.embedding.run_budget)
        try:
            with storage_errors(service.settings.home):
                # Another writer at work (a long `ctxd index`): wait for it here, before
                # the model runs, not at the first commit (its batch would be thrown away).
                probe = service.write_lock(repo.root)
                probe.acquire(wait=self.lock_wait_seconds)
                probe.release()
                indexer.embed_backlog(
                    repo.id, stats, should_stop=should_stop, encode=encode,
                    writing=lambda: service.writing(wait=self.lock_wait_seconds,
                                                    root=repo.root))
        except IndexLocked as exc:
            with self._cond:
                repo.waiting_for_lock = str(exc.details.get("pid", "?"))
                repo.retry_at = time.monotonic() + _LOCK_RETRY_SECONDS
            return 0
        except CtxdError as exc:
            with self._cond:
                repo.embed_error = exc.message
            self.watched.say(f"Embedding {repo.name} failed: {exc.message}; the next rescan "
                             "retries.")
            return 0
        finally:
            release_free_memory()  # the embedding buffers' peak, back to the OS
        if stats.chunks_embedded:
            log.info("%s: embedded %d checkpoints%s", repo.name, stats.chunks_embedded,
                     " (paused for other work)" if stats.stopped else "")
        self.count_backlog(repo)
        return stats.chunks_embedded

    def _put_back(self, job: Job, holder: str) -> None:
        repo = job.repo
        with self._cond:
            if job.trigger == "events":
                repo.acc.add_changes(job.changes)
            else:
                repo.rescan = repo.rescan or repo.scan_in_flight or job.trigger
                if job.looked_since is not None:  # the retry's scan is no first look
                    repo.looked_wall = min(repo.looked_wall, job.looked_since)
            repo.catch_up = repo.catch_up or job.catch_up
            if job.first_event is not None and (
                repo.first_event is None or job.first_event < repo.first_event
            ):
                repo.first_event = job.first_event
                repo.first_wall = job.first_wall
            elif repo.first_event is None and job.trigger == "events":
                repo.first_event = time.monotonic()
                repo.first_wall = time.time()
            # A scan put back has found nothing yet: no change waits, so no lag starts.
            repo.retry_at = time.monotonic() + _LOCK_RETRY_SECONDS
            if repo.waiting_for_lock is None:
                repo.waiting_for_lock = holder
            self.watched.status_dirty = True

    def _failed(self, job: Job, started: float, message: str) -> BatchResult:
        repo = job.repo
        self.watched.say(
            f"Re-indexing {repo.name} failed: {message}; the next rescan retries."
        )
        return BatchResult(
            repository=repo.name, root=repo.root, trigger=job.trigger, changed=0, deleted=0,
            files_updated=0, files_removed=0, chunks_embedded=0,
            duration_ms=int((time.perf_counter() - started) * 1000), lag_ms=None,
            applied_at=now_rfc3339(), error=message,
        )

    @staticmethod
    def _needs_finish(store: IndexStore, repo: RepoState) -> bool:
        """An interrupted run left embeddings pending or the repository marked as indexing."""
        row = store.repo_by_root(repo.root)
        if row is not None and row.index_started_at is not None:
            return True
        return store.count_pending(repo.id) > 0

    def _stat_paths(
        self, repo: RepoState, changes: ChangeSet, stored: dict[str, Stat]
    ) -> dict[str, Stat | None]:
        """The current stat of every candidate path (None: gone or refused by the policy)."""
        scanned: dict[str, Stat] = {}
        dirs = sorted(changes.dirs)
        if dirs:
            if repo.filter is not None:
                repo.filter.reload()
            for item in walk(Path(repo.root), repo.walk, pin=repo.root_id):
                if isinstance(item, FileEntry) and under_any(item.path, dirs):
                    scanned[item.path] = Stat(item.size, item.mtime_ns)
        paths = candidates(changes, stored.keys(), scanned.keys())
        out: dict[str, Stat | None] = {}
        parents: dict[str, bool] = {}
        for path in paths:
            if path in scanned:
                out[path] = scanned[path]
            elif dirs and under_any(path, dirs):
                out[path] = None
            else:
                out[path] = self._stat_one(repo, path, parents)
        return out

    @staticmethod
    def _stat_one(repo: RepoState, path: str, parents: dict[str, bool]) -> Stat | None:
        flt = repo.filter
        if flt is None:
            return None
        parent = path.rpartition("/")[0]
        ok = parents.get(parent)
        if ok is None:
            ok = not parent or flt.check(parent, is_dir=True) is None
            parents[parent] = ok
        if not ok:
            return None
        entry = flt.entry(path)
        return Stat(entry.size, entry.mtime_ns) if isinstance(entry, FileEntry) else None

    @staticmethod
    def _remember_unindexable(
        store: IndexStore, repo: RepoState, found: Diff, on_disk: dict[str, Stat | None]
    ) -> None:
        """Admitted files the re-index did not store (binary, unreadable): skip them until
        their stat changes, so every rescan does not read them again."""
        for p in found.deleted:
            repo.unindexable.pop(p, None)
        changed = list(found.changed)
        if not changed:
            return
        present = store.stored_paths(repo.id, changed)
        for p in changed:
            st = on_disk.get(p)
            if p in present or st is None:
                repo.unindexable.pop(p, None)
            else:
                repo.unindexable[p] = st
