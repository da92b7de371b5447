"""The file-watch daemon: keeps every indexed repository fresh while `ctxd watch` or
`ctxd serve --watch` runs.

`Watcher(service, options).start()` runs one worker thread (the only writer in this
process) and one watchdog observer. Observer threads only turn events into repo-relative
paths and add them to a per-repository `ChangeAccumulator` (`server/watch/changes.py`). The
worker waits until a repository has been quiet for `debounce_ms` (or busy for
`max_delay`), then hands the batch to `BatchApplier` (`server/watch/batch.py`), which
re-stats the coalesced paths, diffs them against the store and re-indexes only what
changed. Other jobs: a stat rescan at start (catching up with everything changed while
no watcher ran, and finishing an interrupted run's embeddings), every `rescan_seconds`,
and after an inotify queue overflow; polling (a stat rescan every `poll_seconds`) for
repositories whose watches cannot be added, or everywhere with `force_polling`; picking
up repositories indexed (or removed) while running (`WatchedRepos`,
`server/watch/repos.py`).

Called by `server/cli/watch_cmd.py` (`ctxd watch`) and, through `start_watching`, by
`ctxd serve --watch`. Calls `server/watch/repos.py` (repositories, observer),
`server/watch/batch.py` (applying batches), `server/watch/events.py` (watchdog
plumbing) and `server/watch/status.py` (health records, the status file).

Invariants:
- One active watcher per index: it holds `<db>.watch.lock` for its lifetime; a second
  one stays in standby (saying so once, in the log and in `health()`) and takes over
  when the first exits. Writes go through the index's write lock, held per batch only,
  so `ctxd index` in another process interleaves; when another process holds it the
  batch is put back and retried, and the wait is logged once.
- A batch never loses changes: a batch that cannot run (lock held) is merged back; one
  that is interrupted (stop, crash) is caught up by the next start's rescan, since every
  file's rows are committed whole and files are compared by stat.
- Stopping finishes the file (or embedding batch) being written and returns; nothing
  half-written is left behind.
- Health (`health()`, and `<home>/watch-status.json` for other processes) reports per
  repository: watching, mode (inotify | polling), pending changes, last update, lag.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from ctxd.indexer.embedder import Vectors
from ctxd.server.config import Settings, WatchOptions
from ctxd.server.watch.batch import BatchApplier, BatchResult
from ctxd.server.watch.changes import FULL
from ctxd.server.watch.events import OverflowSignal, quiet_watchdog_bookkeeping
from ctxd.server.watch.repos import Job, RepoState, WatchedRepos, WatchMode
from ctxd.server.watch.status import (
    RepoWatchHealth,
    now_rfc3339,
    status_path,
    watch_lock,
    write_status,
)

if TYPE_CHECKING:
    from ctxd.server.service import Service

log = logging.getLogger("ctxd.server.watch")  # one logger for the whole watcher

_STATUS_MIN_INTERVAL = 0.5

ObserverFactory = Callable[[], BaseObserver]


class Role(StrEnum):
    """What this watcher is doing for the index."""

    STARTING = "starting"
    """Not yet active or standby."""
    ACTIVE = "active"
    """Holds the watcher lock: watches and writes."""
    STANDBY = "standby"
    """Another process watches this index; this one waits to take over."""
    STOPPED = "stopped"
    """Stopped (or never started)."""


class Watcher:
    """Watches indexed repositories and re-indexes what changes (see the module doc)."""

    def __init__(
        self,
        service: Service,
        options: WatchOptions | None = None,
        *,
        roots: Sequence[str | Path] | None = None,
        on_batch: Callable[[BatchResult], None] | None = None,
        on_embedded: Callable[[str, int], None] | None = None,
        log_standby: bool = True,
        observer_factory: ObserverFactory | None = None,
        poll_seconds: float = 2.0,
        repo_poll_seconds: float = 2.0,
        lock_wait_seconds: float = 0.5,
        status_file: Path | None = None,
    ) -> None:
        """Args:
            service: the service whose index is kept fresh (its store and embedder).
            options: debounce, periodic rescan, forced polling (default: the settings').
            roots: watch only these repositories (resolved folders); None = every
                indexed repository, including ones indexed while running.
            on_batch: called (in the worker thread) after each applied batch.
            on_embedded: called (in the worker thread) with a repository's name and the
                checkpoints embedded, after a round of embedding that embedded some
                (batches index without embedding; their vectors come after).
            log_standby: log a warning on entering standby (`ctxd watch` says it itself).
            observer_factory: builds the watchdog observer (the OS seam; default
                `watchdog.observers.Observer`).
            poll_seconds: rescan interval of repositories in polling mode.
            repo_poll_seconds: how often the list of indexed repositories is re-read.
            lock_wait_seconds: how long one attempt waits for the write lock.
            status_file: where other processes read the watch state (default
                `<home>/watch-status.json`).
        """
        self.service = service
        self.options = options or service.settings.watch
        self.roots = None if roots is None else {str(Path(r).resolve()) for r in roots}
        self.on_batch = on_batch
        self.on_embedded = on_embedded
        self.log_standby = log_standby
        self.observer_factory: ObserverFactory = observer_factory or Observer
        self.poll_seconds = poll_seconds
        self.repo_poll_seconds = repo_poll_seconds
        self.lock_wait_seconds = lock_wait_seconds
        self.debounce = max(0.0, self.options.debounce_ms / 1000)
        self.max_delay = max(2.0, 10 * self.debounce)
        self.status_file = status_file or status_path(service.settings)
        self._cond = threading.Condition()
        self._role = Role.STOPPED
        self._standby_holder: str | None = None
        self._stop_requested = False
        self._thread: threading.Thread | None = None
        self._watched = WatchedRepos(
            service,
            self.options,
            self._cond,
            roots=self.roots,
            observer_factory=self.observer_factory,
            poll_seconds=self.poll_seconds,
        )
        self._batches = BatchApplier(
            service,
            self._watched,
            lock_wait_seconds=self.lock_wait_seconds,
            stopping=lambda: self._stop_requested,
        )
        self._watch_lock = watch_lock(service.settings)
        self._overflow = OverflowSignal(
            lambda: self.request_rescan(reason="inotify queue overflow")
        )
        self._next_repo_poll = 0.0
        self._status_written = 0.0
        self._started_at = now_rfc3339()
        self._store_used = False
        self._setup_done = False

    @property
    def results(self) -> deque[BatchResult]:
        """The last 200 applied batches (and failed ones), oldest first."""
        return self._batches.results

    @property
    def batches(self) -> int:
        """Batches applied (diff not empty)."""
        return self._batches.batches

    @property
    def batches_examined(self) -> int:
        """Batches examined, including the ones where nothing had changed."""
        return self._batches.batches_examined

    # -- lifecycle -----------------------------------------------------------------------

    def start(self) -> Watcher:
        """Start the worker thread (returns at once; `wait_ready` waits for it to settle)."""
        with self._cond:
            if self._thread is not None:
                return self
            self._role = Role.STARTING
            self._stop_requested = False
            self._thread = threading.Thread(target=self._run, name="ctxd-watch", daemon=True)
            self._thread.start()
        return self

    def request_stop(self) -> None:
        """Ask the worker to stop after the file being written (safe in a signal handler)."""
        with self._cond:
            self._stop_requested = True
            self._cond.notify_all()

    def stop(self, timeout: float | None = 60.0) -> bool:
        """Stop watching: finish the current transaction, release the locks, and return
        whether the worker ended within `timeout` (False: it still runs its last step)."""
        self.request_stop()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._cond:
            self._thread = None
        return thread is None or not thread.is_alive()

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def role(self) -> Role:
        return self._role

    @property
    def running(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    @property
    def idle(self) -> bool:
        """Active, every repository set up, and nothing pending or being written (changes
        or embeddings)."""
        with self._cond:
            return self._role is Role.ACTIVE and all(
                r.pending == 0 and (r.embed_backlog == 0 or r.embed_error is not None)
                for r in self._watched.repos.values() if r.error is None
            )

    def wait_for(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Wait until `predicate()` is true; it is re-checked after every batch and state
        change. Returns its last value (False on timeout)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return predicate()
                self._cond.wait(min(left, 1.0))
            return True

    def wait_idle(self, timeout: float) -> bool:
        return self.wait_for(lambda: self.idle, timeout)

    def wait_ready(self, timeout: float) -> bool:
        """Wait until the watcher watches (every repository's watch set up; the start-up
        catch-up may still run: `wait_idle` waits for it) or stands by."""
        return self.wait_for(
            lambda: self._role is Role.STANDBY
            or (self._role is Role.ACTIVE and self._setup_done)
            or not self.running,
            timeout,
        )

    def request_rescan(self, repository: str | None = None, *, reason: str = "requested") -> None:
        """Re-examine every file (of one repository, or all) by stat at the next occasion."""
        with self._cond:
            for repo in self._watched.repos.values():
                if repository is None or repository in (repo.name, repo.root):
                    repo.rescan = repo.rescan or reason
            self._cond.notify_all()

    def refresh_repos(self) -> None:
        """Re-read the list of indexed repositories now (e.g. right after an index run)."""
        with self._cond:
            self._next_repo_poll = 0.0
            self._cond.notify_all()

    # -- health --------------------------------------------------------------------------

    def repos_health(self) -> list[RepoWatchHealth]:
        now = time.time()
        with self._cond:
            active = self._role is Role.ACTIVE
            repos = sorted(self._watched.repos.values(), key=lambda r: r.name)
            return [r.health(now, active) for r in repos]

    def health(self) -> dict[str, Any]:
        """The watcher's state as a JSON-ready dict (for `get_health` / `ctxd status`)."""
        repos = self.repos_health()
        out: dict[str, Any] = {
            "running": self.running,
            "pid": os.getpid(),
            "role": self._role.value,
            "started_at": self._started_at,
            "debounce_ms": self.options.debounce_ms,
            "rescan_seconds": self.options.rescan_seconds,
            "force_polling": self.options.force_polling,
            "batches": self.batches,
            "repos": {r.name: r.to_dict() for r in repos},
        }
        if self._role is Role.STANDBY:
            out["message"] = (
                f"Another ctxd process (pid {self._standby_holder}) watches this index; "
                "this one takes over when it exits."
            )
        return out

    # -- worker thread -------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while not self._stop_requested:
                if self._role is not Role.ACTIVE:
                    if not self._try_activate():
                        self._wait_until(time.monotonic() + self.repo_poll_seconds)
                    continue
                self._tick()
        except Exception:
            log.exception("the file watcher stopped after an unexpected error")
        finally:
            self._shutdown()

    def _try_activate(self) -> bool:
        if not self._watch_lock.try_acquire(wait=0):
            holder = self._watch_lock.holder()
            if self._role is not Role.STANDBY and self.log_standby:
                log.warning(
                    "Another ctxd process (pid %s) is already watching the index %s; this "
                    "one stays read-only for watching and takes over when it exits.",
                    holder,
                    self.service.settings.db_path,
                )
            with self._cond:
                self._role = Role.STANDBY
                self._standby_holder = holder
                self._cond.notify_all()
            return False
        if self._role is Role.STANDBY:
            log.warning("The other watcher is gone; this process watches the index now.")
        quiet_watchdog_bookkeeping()
        self._watched.start_observer()
        logging.getLogger("watchdog.observers").addHandler(self._overflow)
        with self._cond:
            self._role = Role.ACTIVE
            self._standby_holder = None
            self._next_repo_poll = 0.0
            self._watched.status_dirty = True
            self._cond.notify_all()
        return True

    def _shutdown(self) -> None:
        self._watched.stop_observer()
        logging.getLogger("watchdog.observers").removeHandler(self._overflow)
        was_active = self._role is Role.ACTIVE
        with self._cond:
            self._role = Role.STOPPED
            self._setup_done = False
            for repo in self._watched.repos.values():
                repo.watch = None
            self._cond.notify_all()
        if was_active:
            with contextlib.suppress(OSError):
                self.status_file.unlink()
        self._watch_lock.release()
        if self._store_used:
            with contextlib.suppress(Exception):
                self.service.store().close()

    def _tick(self) -> None:
        now = time.monotonic()
        if now >= self._next_repo_poll:
            self._refresh_repos()
            self._next_repo_poll = time.monotonic() + self.repo_poll_seconds
        job = self._next_job(time.monotonic())
        if job is not None:
            self._apply(job)
        elif (repo := self._next_backlog(time.monotonic())) is not None:
            self._embed(repo)
        else:
            self._wait_until(self._next_deadline())
        self._maybe_write_status()

    def _maybe_write_status(self) -> None:
        if (self._watched.status_dirty
                and time.monotonic() - self._status_written >= _STATUS_MIN_INTERVAL):
            self._write_status()

    def _refresh_repos(self) -> None:
        self._store_used = True
        self._watched.refresh()
        if not self._setup_done:
            with self._cond:
                self._setup_done = True
                self._cond.notify_all()

    def _wait_until(self, deadline: float) -> None:
        with self._cond:
            if self._stop_requested:
                return
            left = deadline - time.monotonic()
            if left > 0:
                self._cond.wait(left)

    def _next_deadline(self, *, batches_only: bool = False) -> float:
        """When the worker has something to do next (`batches_only`: the next batch of
        changes, a poll or a rescan, leaving out the repository list's poll, the status
        file and embedding; `inf` when none is in sight)."""
        now = time.monotonic()
        times = [] if batches_only else [self._next_repo_poll]
        if self._watched.status_dirty and not batches_only:
            times.append(self._status_written + _STATUS_MIN_INTERVAL)
        with self._cond:
            for r in self._watched.repos.values():
                if r.error is not None:
                    continue
                due: list[float] = []
                if r.rescan:
                    due.append(now)
                if r.first_event is not None and r.acc:
                    due.append(min(r.last_event + self.debounce, r.first_event + self.max_delay))
                if r.mode is WatchMode.POLLING:
                    due.append(r.next_poll)
                if self.options.rescan_seconds > 0:
                    due.append(r.next_rescan)
                if r.embed_backlog > 0 and r.embed_error is None and not batches_only:
                    due.append(now)  # embedding waits only for the lock's retry time
                if due:
                    times.append(max(min(due), r.retry_at))
        return min(times, default=math.inf)

    def _next_job(self, now: float) -> Job | None:
        with self._cond:
            for r in sorted(self._watched.repos.values(), key=lambda r: r.name):
                if r.error is not None or now < r.retry_at:
                    continue
                trigger = None
                if r.rescan:
                    trigger = "rescan"
                elif r.mode is WatchMode.POLLING and now >= r.next_poll:
                    trigger = "poll"
                elif self.options.rescan_seconds > 0 and now >= r.next_rescan:
                    trigger = "rescan"
                    r.rescan = "periodic"
                elif r.first_event is not None and r.acc and (
                    now - r.last_event >= self.debounce or now - r.first_event >= self.max_delay
                ):
                    trigger = "events"
                if trigger is None:
                    continue
                changes = r.acc.take()
                catch_up = r.catch_up or r.rescan is not None
                looked_since = None
                r.scan_in_flight = None
                if trigger != "events":
                    r.scan_in_flight = r.rescan or trigger
                    changes = FULL
                    looked_since, r.looked_wall = r.looked_wall, time.time()
                    if r.mode is WatchMode.POLLING:
                        r.next_poll = now + self.poll_seconds
                    if self.options.rescan_seconds > 0:
                        r.next_rescan = now + self.options.rescan_seconds
                job = Job(r, changes, trigger, catch_up, r.first_event, r.first_wall,
                          r.newest_wall, looked_since)
                r.rescan = None
                r.catch_up = False
                r.first_event = None
                r.in_flight = max(1, len(changes))
                return job
        return None

    def _next_backlog(self, now: float) -> RepoState | None:
        """The repository whose embedding backlog to work on next (smallest first, so
        small repositories become fully searchable soonest)."""
        with self._cond:
            waiting = [r for r in self._watched.repos.values()
                       if r.embed_backlog > 0 and r.error is None and r.embed_error is None
                       and now >= r.retry_at]
            return min(waiting, key=lambda r: (r.embed_backlog, r.name), default=None)

    def _batch_due(self) -> bool:
        """Whether a batch (changes past their debounce, a rescan, a poll) waits, or the
        watcher should stop: embedding yields to it at its next commit."""
        now = time.monotonic()
        with self._cond:
            if self._stop_requested:
                return True
            return any(
                r.error is None and now >= r.retry_at and (
                    r.rescan is not None
                    or (r.mode is WatchMode.POLLING and now >= r.next_poll)
                    or (r.first_event is not None and bool(r.acc) and (
                        now - r.last_event >= self.debounce
                        or now - r.first_event >= self.max_delay))
                )
                for r in self._watched.repos.values()
            )

    def _embed(self, repo: RepoState) -> None:
        with self._cond:
            repo.embedding = True
            self._watched.status_dirty = True
            self._cond.notify_all()
        applied: list[bool] = []

        def should_stop() -> bool:  # after a batch applied meanwhile: re-read the backlog
            return bool(applied) or self._batch_due()

        try:
            embedded = self._batches.embed(repo, should_stop,
                                           lambda texts: self._encode(texts, applied))
        finally:
            with self._cond:
                repo.embedding = False
                self._watched.status_dirty = True
                self._cond.notify_all()
        if embedded and self.on_embedded is not None:
            try:
                self.on_embedded(repo.name, embedded)
            except Exception:
                log.exception("on_embedded callback failed")

    def _encode(self, texts: list[str], applied: list[bool]) -> Vectors:
        """The model's vectors of one batch of the backlog, computed on a helper thread
        while this (the worker) thread applies the batches of changes that fall due
        meanwhile (appending to `applied`): an edited file's phase 1 (text, symbols,
        code graph) never waits for the model, which takes seconds per batch on a busy
        machine. The helper only runs the model; every write stays on this thread, each
        under the write lock, and the batch's vectors are committed after it (a vector
        depends on its text alone: `indexer.embed_pass`). Stopping applies nothing more
        and waits for the batch (one embedder batch at most)."""
        out: list[Vectors] = []
        failed: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                out.append(self.service.embedder.embed(texts))
            except BaseException as exc:  # handed to the worker thread, raised there
                failed.append(exc)
            finally:
                with self._cond:
                    done.set()
                    self._cond.notify_all()

        threading.Thread(target=run, name="ctxd-watch-embed", daemon=True).start()
        while not done.is_set():
            if self._stop_requested:
                done.wait()
                break
            job = self._next_job(time.monotonic())
            if job is not None:
                applied.append(True)
                self._apply(job)
                self._maybe_write_status()
                continue
            with self._cond:  # (re-entrant) the deadline and the wait under one hold
                if done.is_set() or self._stop_requested:
                    continue
                left = self._next_deadline(batches_only=True) - time.monotonic()
                if left > 0:
                    self._cond.wait(None if left == math.inf else left)
        if failed:
            raise failed[0]
        return out[0]

    def _apply(self, job: Job) -> None:
        result = self._batches.apply(job)
        if result is not None and self.on_batch is not None:
            try:
                self.on_batch(result)
            except Exception:
                log.exception("on_batch callback failed")

    # -- status file ---------------------------------------------------------------------

    def _write_status(self) -> None:
        with self._cond:
            self._watched.status_dirty = False
            self._status_written = time.monotonic()
            active = self._role is Role.ACTIVE
        if not active:
            return
        data = self.health()
        data["updated_at"] = now_rfc3339()
        try:
            write_status(self.status_file, data)
        except OSError as exc:
            self._watched.say(f"Cannot write the watch status file {self.status_file}: {exc}")
        with self._cond:
            self._cond.notify_all()


def start_watching(service: Service, settings: Settings | None = None) -> Watcher:
    """Start keeping every indexed repository fresh (for `ctxd serve --watch`).

    Returns the running `Watcher`; call `stop()` on shutdown. A second process doing
    the same stays in standby (see `Watcher.health()["message"]`).
    """
    options = (settings or service.settings).watch
    return Watcher(service, options).start()
