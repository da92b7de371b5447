"""The file-watch daemon: keeps every indexed repository fresh while `ctxd watch` or
`ctxd serve --watch` runs.

`Watcher(service, options).start()` runs one worker thread (the only writer in this
process) and one watchdog observer. Observer threads only turn events into repo-relative
paths and add them to a per-repository `ChangeAccumulator` (`server/changes.py`). The
worker waits until a repository has been quiet for `debounce_ms` (or busy for
`max_delay`), re-stats the coalesced paths, diffs them against the store and calls
`Service.index(root, ..., only_paths=diff)` with the repository's stored options, so
only changed files are re-chunked and re-embedded (unchanged chunks keep their vectors
by content hash). Other jobs: a stat rescan at start (catching up with everything
changed while no watcher ran, and finishing an interrupted run's embeddings), every
`rescan_seconds`, and after an inotify queue overflow; polling (a stat rescan every
`poll_seconds`) for repositories whose watches cannot be added, or everywhere with
`force_polling`; picking up repositories indexed (or removed) while running.

Called by `server/watch_cli.py` (`ctxd watch`) and, through `start_watching`, by
`ctxd serve --watch`. Calls `Service.index` / `Service.store`, the walker
(`walk`, `FileFilter`) and watchdog.

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
import json
import logging
import os
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from indexer.errors import CtxdError, IndexLocked, ValidationError
from indexer.lock import WriteLock
from indexer.models import FileEntry
from indexer.pipeline import IndexStats, Progress
from indexer.store import Store
from indexer.walker import FileFilter, WalkOptions, walk
from server.changes import (
    FULL,
    ChangeAccumulator,
    ChangeSet,
    Diff,
    EventKind,
    FsEvent,
    Stat,
    candidates,
    diff,
    relative_path,
    under_any,
    walk_options_for,
)
from server.config import Settings, WatchOptions

if TYPE_CHECKING:
    from server.service import Service

log = logging.getLogger(__name__)

STATUS_FILE_NAME = "watch-status.json"
EVENT_TYPES: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
"""What the observer asks the kernel for: no open/close-nowrite (our own reads) and no
directory-modified noise."""

_KINDS = {
    "created": EventKind.CREATED,
    "modified": EventKind.MODIFIED,
    "closed": EventKind.MODIFIED,
    "deleted": EventKind.DELETED,
    "moved": EventKind.MOVED,
}
_STATUS_MIN_INTERVAL = 0.5
_LOCK_RETRY_SECONDS = 1.0
_IN_QUERY_CHUNK = 500

ObserverFactory = Callable[[], BaseObserver]


class WatchMode(StrEnum):
    """How a repository's changes are noticed."""

    INOTIFY = "inotify"
    """Native file-system events (inotify on Linux, FSEvents/kqueue elsewhere)."""
    POLLING = "polling"
    """A stat rescan every `poll_seconds` (watches could not be added, or forced)."""


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


@dataclass(frozen=True, slots=True)
class BatchResult:
    """One applied batch (what `ctxd watch` prints, and what `on_batch` receives)."""

    repository: str
    root: str
    trigger: str
    """`events`, `rescan` (startup, periodic, overflow, options changed) or `poll`."""
    changed: int
    """Files new or modified on disk (by stat)."""
    deleted: int
    """Files gone or newly excluded."""
    files_updated: int
    files_removed: int
    chunks_embedded: int
    duration_ms: int
    lag_ms: int | None
    """From the newest change in the batch to the index reflecting it."""
    applied_at: str
    paths: tuple[str, ...] = ()
    """The first paths of the batch (at most 20), for display."""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RepoWatchHealth:
    """The watch state of one repository (`get_health` / `ctxd status`)."""

    name: str
    root: str
    watching: bool
    mode: str | None
    pending: int
    """Paths (or folders) changed and not yet in the index."""
    pending_since: float | None
    """Unix time of the oldest pending change."""
    last_update: str | None
    """When the watcher last changed this repository's index (RFC 3339)."""
    lag_ms: int | None
    """Now minus the oldest pending change while changes wait; else the last batch's lag."""
    waiting_for_lock: str | None = None
    """The pid of another process holding the write lock, while a batch waits for it."""
    note: str | None = None
    """Why the mode is polling (said once in the log too)."""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def now_rfc3339(ts: float | None = None) -> str:
    t = datetime.fromtimestamp(time.time() if ts is None else ts, UTC)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Cancelled(Exception):
    """Raised from the progress callback to stop a re-index between two files."""


@dataclass(slots=True)
class _Repo:
    """The watcher's state for one repository (guarded by `Watcher._cond`)."""

    id: int
    name: str
    root: str
    options: dict[str, Any]
    walk: WalkOptions
    filter: FileFilter | None
    home_rel: str | None
    acc: ChangeAccumulator = field(default_factory=ChangeAccumulator)
    mode: WatchMode | None = None
    watch: ObservedWatch | None = None
    first_event: float | None = None
    last_event: float = 0.0
    first_wall: float | None = None
    newest_wall: float | None = None
    rescan: str | None = "startup"
    catch_up: bool = True
    next_poll: float = 0.0
    next_rescan: float = 0.0
    retry_at: float = 0.0
    in_flight: int = 0
    last_update: str | None = None
    last_lag_ms: int | None = None
    waiting_for_lock: str | None = None
    note: str | None = None
    error: str | None = None
    gone: bool = False
    """The folder disappeared: re-watched when it comes back."""
    unindexable: dict[str, Stat] = field(default_factory=dict)

    @property
    def pending(self) -> int:
        return len(self.acc) + self.in_flight + (1 if self.rescan else 0)


@dataclass(frozen=True, slots=True)
class _Job:
    repo: _Repo
    changes: ChangeSet
    trigger: str
    catch_up: bool
    first_event: float | None
    first_wall: float | None
    newest_wall: float | None


class _Handler(FileSystemEventHandler):
    """Forwards watchdog events of one repository to the watcher (observer thread)."""

    def __init__(self, watcher: Watcher, repo: _Repo) -> None:
        self._watcher = watcher
        self._repo = repo

    def dispatch(self, event: FileSystemEvent) -> None:
        self._watcher._on_event(self._repo, event)


class _OverflowSignal(logging.Handler):
    """Turns watchdog's "inotify queue overflowed" warning into a rescan request.

    Watchdog rebuilds its watches after an overflow but does not replay lost events and
    offers no callback; its warning is the only signal.
    """

    def __init__(self, watcher: Watcher) -> None:
        super().__init__(logging.WARNING)
        self._watcher = watcher

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._watcher.request_rescan(reason="inotify queue overflow")


class Watcher:
    """Watches indexed repositories and re-indexes what changes (see the module doc)."""

    def __init__(
        self,
        service: Service,
        options: WatchOptions | None = None,
        *,
        roots: Sequence[str | Path] | None = None,
        on_batch: Callable[[BatchResult], None] | None = None,
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
        self.observer_factory: ObserverFactory = observer_factory or Observer
        self.poll_seconds = poll_seconds
        self.repo_poll_seconds = repo_poll_seconds
        self.lock_wait_seconds = lock_wait_seconds
        self.debounce = max(0.0, self.options.debounce_ms / 1000)
        self.max_delay = max(2.0, 10 * self.debounce)
        self.status_file = status_file or status_path(service.settings)
        self.results: deque[BatchResult] = deque(maxlen=200)
        self.batches = 0
        """Batches applied (diff not empty)."""
        self.batches_examined = 0
        """Batches examined, including the ones where nothing had changed."""
        self._cond = threading.Condition()
        self._repos: dict[str, _Repo] = {}
        self._role = Role.STOPPED
        self._standby_holder: str | None = None
        self._stop_requested = False
        self._thread: threading.Thread | None = None
        self._observer: BaseObserver | None = None
        self._watch_lock = WriteLock(Path(f"{service.settings.db_path}.watch"))
        self._overflow = _OverflowSignal(self)
        self._next_repo_poll = 0.0
        self._status_dirty = True
        self._status_written = 0.0
        self._started_at = now_rfc3339()
        self._home = str(Path(service.settings.home).expanduser().resolve())
        self._said: set[str] = set()
        self._store_used = False
        self._setup_done = False

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

    def stop(self, timeout: float | None = 60.0) -> None:
        """Stop watching: finish the current transaction, release the locks, and return."""
        self.request_stop()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._cond:
            self._thread = None

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
        """Active, every repository set up, and nothing pending or being written."""
        with self._cond:
            return self._role is Role.ACTIVE and all(
                r.pending == 0 for r in self._repos.values() if r.error is None
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
            for repo in self._repos.values():
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
            out = []
            for r in sorted(self._repos.values(), key=lambda r: r.name):
                pending = r.pending
                lag = r.last_lag_ms
                if pending and r.first_wall is not None:
                    lag = max(0, int((now - r.first_wall) * 1000))
                out.append(
                    RepoWatchHealth(
                        name=r.name,
                        root=r.root,
                        watching=active and r.error is None and r.mode is not None,
                        mode=None if r.mode is None else r.mode.value,
                        pending=pending,
                        pending_since=r.first_wall if pending else None,
                        last_update=r.last_update,
                        lag_ms=lag,
                        waiting_for_lock=r.waiting_for_lock,
                        note=r.note,
                        error=r.error,
                    )
                )
            return out

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

    # -- observer thread -----------------------------------------------------------------

    def _on_event(self, repo: _Repo, event: FileSystemEvent) -> None:
        kind = _KINDS.get(event.event_type)
        if kind is None:
            return
        src = relative_path(repo.root, os.fsdecode(event.src_path))
        dest = None
        if kind is EventKind.MOVED and event.dest_path:
            dest = relative_path(repo.root, os.fsdecode(event.dest_path))
        if src is None:
            if dest is None:
                return
            kind, src, dest = EventKind.CREATED, dest, None
        elif kind is EventKind.MOVED and dest is None:
            kind = EventKind.DELETED
        if repo.home_rel is not None and (
            under_any(src, (repo.home_rel,)) and (dest is None or under_any(dest, (repo.home_rel,)))
        ):
            return
        fs_event = FsEvent(kind, src, event.is_directory, dest)
        with self._cond:
            if not repo.acc.add(fs_event):
                return
            now = time.monotonic()
            wall = time.time()
            repo.last_event = now
            repo.newest_wall = wall
            if repo.first_event is None:
                repo.first_event = now
                repo.first_wall = wall
                self._status_dirty = True
                self._cond.notify_all()

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
        try:
            self._watch_lock.acquire(wait=0)
        except IndexLocked as exc:
            holder = str(exc.details.get("pid", "?"))
            if self._role is not Role.STANDBY:
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
        self._observer = self._make_observer()
        logging.getLogger("watchdog.observers").addHandler(self._overflow)
        with self._cond:
            self._role = Role.ACTIVE
            self._standby_holder = None
            self._next_repo_poll = 0.0
            self._status_dirty = True
            self._cond.notify_all()
        return True

    def _make_observer(self) -> BaseObserver | None:
        if self.options.force_polling:
            return None
        try:
            observer = self.observer_factory()
            observer.start()
        except OSError as exc:
            log.warning(
                "Cannot start the file-event observer (%s); every repository is polled "
                "every %.0f s instead. On Linux, raise fs.inotify.max_user_instances.",
                exc,
                self.poll_seconds,
            )
            return None
        return observer

    def _shutdown(self) -> None:
        observer, self._observer = self._observer, None
        if observer is not None:
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join(10)
        logging.getLogger("watchdog.observers").removeHandler(self._overflow)
        was_active = self._role is Role.ACTIVE
        with self._cond:
            self._role = Role.STOPPED
            self._setup_done = False
            for repo in self._repos.values():
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
        else:
            self._wait_until(self._next_deadline())
        if self._status_dirty and time.monotonic() - self._status_written >= _STATUS_MIN_INTERVAL:
            self._write_status()

    def _wait_until(self, deadline: float) -> None:
        with self._cond:
            if self._stop_requested:
                return
            left = deadline - time.monotonic()
            if left > 0:
                self._cond.wait(left)

    def _next_deadline(self) -> float:
        now = time.monotonic()
        times = [self._next_repo_poll]
        if self._status_dirty:
            times.append(self._status_written + _STATUS_MIN_INTERVAL)
        with self._cond:
            for r in self._repos.values():
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
                if due:
                    times.append(max(min(due), r.retry_at))
        return min(times)

    def _next_job(self, now: float) -> _Job | None:
        with self._cond:
            for r in sorted(self._repos.values(), key=lambda r: r.name):
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
                if trigger != "events":
                    changes = FULL
                    if r.mode is WatchMode.POLLING:
                        r.next_poll = now + self.poll_seconds
                    if self.options.rescan_seconds > 0:
                        r.next_rescan = now + self.options.rescan_seconds
                job = _Job(r, changes, trigger, catch_up, r.first_event, r.first_wall,
                           r.newest_wall)
                r.rescan = None
                r.catch_up = False
                r.first_event = None
                r.in_flight = max(1, len(changes))
                return job
        return None

    # -- repositories --------------------------------------------------------------------

    def _check_observer(self) -> None:
        """Re-watch repositories whose event source died (a watchdog thread that raised,
        a watched root deleted and re-created), and rescan them: events may be lost."""
        observer = self._observer
        if observer is None or self.options.force_polling:
            return
        if not observer.is_alive():
            self._say("The file-event observer stopped; restarting it and rescanning.")
            with contextlib.suppress(Exception):
                observer.stop()
            self._observer = observer = self._make_observer()
            with self._cond:
                for repo in self._repos.values():
                    repo.watch = None
            if observer is None:
                return
        alive = {e.watch for e in observer.emitters if e.is_alive()}
        with self._cond:
            repos = [r for r in self._repos.values()
                     if r.error is None and r.mode is WatchMode.INOTIFY
                     and (r.watch is None or r.watch not in alive)]
        for repo in repos:
            if not os.path.isdir(repo.root):
                continue  # its deletion event turns it into an error
            log.info("file events for %s stopped; watching it again", repo.name)
            self._unwatch(repo)
            self._watch(repo)
            with self._cond:
                repo.rescan = repo.rescan or "watch restarted"
                self._cond.notify_all()

    def _refresh_repos(self) -> None:
        self._store_used = True
        self._check_observer()
        rows = self.service.store().repos()
        seen: set[str] = set()
        for row in rows:
            if self.roots is not None and row.root not in self.roots:
                continue
            seen.add(row.root)
            with self._cond:
                repo = self._repos.get(row.root)
            if repo is None:
                self._add_repo(row.id, row.name, row.root, row.options)
            elif row.options != repo.options or (repo.gone and os.path.isdir(row.root)):
                self._reconfigure(repo, row.options)
        with self._cond:
            gone = [r for root, r in self._repos.items() if root not in seen]
        for repo in gone:
            self._unwatch(repo)
            with self._cond:
                del self._repos[repo.root]
                self._status_dirty = True
                self._cond.notify_all()
            log.info("%s left the index; no longer watched", repo.name)
        if not self._setup_done:
            with self._cond:
                self._setup_done = True
                self._cond.notify_all()

    def _add_repo(self, repo_id: int, name: str, root: str, options: dict[str, Any]) -> None:
        walk_opts = walk_options_for(self.service.settings.walk, options)
        home_rel = relative_path(root, self._home)
        repo = _Repo(repo_id, name, root, dict(options), walk_opts, None, home_rel)
        now = time.monotonic()
        repo.next_rescan = now + max(self.options.rescan_seconds, 0)
        repo.next_poll = now + self.poll_seconds
        try:
            repo.filter = FileFilter(Path(root), walk_opts)
        except ValidationError as exc:
            repo.error = f"cannot watch {root}: {exc.message}"
            repo.gone = not os.path.isdir(root)
            self._say(repo.error)
        with self._cond:
            self._repos[root] = repo
            self._status_dirty = True
        if repo.error is None:
            self._watch(repo)
        with self._cond:
            self._cond.notify_all()

    def _reconfigure(self, repo: _Repo, options: dict[str, Any]) -> None:
        """The repository's stored options changed (or its folder came back)."""
        walk_opts = walk_options_for(self.service.settings.walk, options)
        try:
            flt = FileFilter(Path(repo.root), walk_opts)
        except ValidationError as exc:
            with self._cond:
                repo.options = dict(options)
                repo.error = f"cannot watch {repo.root}: {exc.message}"
                repo.gone = not os.path.isdir(repo.root)
            return
        with self._cond:
            was_error = repo.error is not None
            repo.options = dict(options)
            repo.walk = walk_opts
            repo.filter = flt
            repo.error = None
            repo.gone = False
            repo.rescan = repo.rescan or "options changed"
            repo.catch_up = True
            self._status_dirty = True
        if was_error or (repo.watch is None and repo.mode is not WatchMode.POLLING):
            self._watch(repo)
        with self._cond:
            self._cond.notify_all()

    def _watch(self, repo: _Repo) -> None:
        observer = self._observer
        if observer is None:
            reason = ("force_polling is set" if self.options.force_polling
                      else "the file-event observer could not start")
            self._poll_instead(repo, reason, quiet=self.options.force_polling)
            return
        headroom = _inotify_headroom()
        if headroom is not None:
            needed = _count_dirs(repo.root, headroom + 1)
            if needed > headroom:
                self._poll_instead(
                    repo,
                    f"it has {needed}+ folders and only {headroom} inotify watches are left "
                    "(raise fs.inotify.max_user_watches)",
                )
                return
        try:
            watch = observer.schedule(
                _Handler(self, repo), repo.root, recursive=True, event_filter=EVENT_TYPES
            )
        except OSError as exc:
            self._poll_instead(repo, f"watches cannot be added: {exc}")
            return
        with self._cond:
            repo.watch = watch
            repo.mode = WatchMode.INOTIFY
            repo.note = None
        log.info("watching %s (%s) with file events", repo.name, repo.root)

    def _poll_instead(self, repo: _Repo, reason: str, *, quiet: bool = False) -> None:
        note = f"polling every {self.poll_seconds:g} s: {reason}"
        with self._cond:
            repo.mode = WatchMode.POLLING
            repo.note = note
            repo.next_poll = time.monotonic() + self.poll_seconds
            self._status_dirty = True
        if not quiet:
            self._say(f"Cannot watch {repo.name} ({repo.root}) with file events; {note}.")

    def _unwatch(self, repo: _Repo) -> None:
        observer, watch = self._observer, repo.watch
        repo.watch = None
        if observer is not None and watch is not None:
            with contextlib.suppress(KeyError, OSError):
                observer.unschedule(watch)

    def _say(self, message: str) -> None:
        """Log a warning once per process."""
        if message not in self._said:
            self._said.add(message)
            log.warning("%s", message)

    # -- one batch -----------------------------------------------------------------------

    def _apply(self, job: _Job) -> None:
        repo = job.repo
        started = time.perf_counter()
        result: BatchResult | None = None
        try:
            result = self._apply_batch(job, started)
        except IndexLocked as exc:
            self._put_back(job, str(exc.details.get("pid", "?")))
            return
        except _Cancelled:
            log.info("stopped during a batch of %s; the next start catches up", repo.name)
        except ValidationError as exc:
            with self._cond:
                repo.error = f"{exc.message} ({repo.root})"
                repo.gone = not os.path.isdir(repo.root)
            self._unwatch(repo)
            self._say(f"Stopped watching {repo.name}: {exc.message} ({repo.root}).")
        except CtxdError as exc:
            result = self._failed(job, started, exc.message)
        except Exception as exc:
            log.exception("re-indexing %s failed", repo.name)
            result = self._failed(job, started, f"{type(exc).__name__}: {exc}")
        finally:
            with self._cond:
                repo.in_flight = 0
                self.batches_examined += 1
                self._status_dirty = True
                self._cond.notify_all()
        if result is not None and self.on_batch is not None:
            try:
                self.on_batch(result)
            except Exception:
                log.exception("on_batch callback failed")

    def _apply_batch(self, job: _Job, started: float) -> BatchResult | None:
        repo = job.repo
        on_wait = self._lock_waiter(repo, len(job.changes))
        # Wait for the write lock before the (possibly full) stat pass: while another
        # process writes for minutes, retries stay cheap. `Service.index` takes it again.
        probe = self.service.write_lock()
        probe.acquire(wait=self.lock_wait_seconds, on_wait=on_wait)
        probe.release()
        store = self.service.store()
        row = store.repo_by_root(repo.root)
        if row is None:
            return None  # removed from the index meanwhile: never re-create it
        if row.options != repo.options:
            # Re-indexed with other patterns since the last look: apply them now, and
            # re-evaluate everything, so this batch never writes the old options back.
            self._reconfigure(repo, row.options)
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
            return None
        stats = self._index(repo, found, on_wait)
        applied = time.time()
        self._remember_unindexable(store, repo, found, on_disk)
        newest = job.newest_wall
        if newest is None:
            stats_of = [on_disk.get(p) for p in found.changed]
            mtimes = [st.mtime_ns / 1e9 for st in stats_of if st is not None]
            newest = max(mtimes) if mtimes else None
        lag = None if newest is None else max(0, int((applied - newest) * 1000))
        row = store.repo_by_root(repo.root)
        result = BatchResult(
            repository=repo.name,
            root=repo.root,
            trigger=job.trigger,
            changed=len(found.changed),
            deleted=len(found.deleted),
            files_updated=stats.files_updated,
            files_removed=stats.files_removed,
            chunks_embedded=stats.chunks_embedded,
            duration_ms=int((time.perf_counter() - started) * 1000),
            lag_ms=lag,
            applied_at=now_rfc3339(applied),
            paths=tuple(found.paths[:20]),
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

    def _lock_waiter(self, repo: _Repo, count: int) -> Callable[[str], None]:
        """The `on_lock_wait` callback: records the holder, logs once per wait."""

        def on_wait(pid: str) -> None:
            with self._cond:
                first = repo.waiting_for_lock is None
                repo.waiting_for_lock = pid
                self._status_dirty = True
                self._cond.notify_all()
            if first:
                log.warning(
                    "Another ctxd process (pid %s) is writing the index; changes of %s "
                    "wait for it (%d pending).", pid, repo.name, count,
                )

        return on_wait

    def _index(self, repo: _Repo, found: Diff, on_wait: Callable[[str], None]) -> IndexStats:
        walk_opts = repo.walk
        return self.service.index(
            repo.root,
            include_patterns=list(walk_opts.include_patterns),
            exclude_patterns=list(walk_opts.exclude_patterns),
            max_file_size=walk_opts.max_file_size,
            only_paths=found.paths,
            lock_wait=self.lock_wait_seconds,
            on_lock_wait=on_wait,
            progress=self._progress,
        )

    def _progress(self, p: Progress) -> None:
        if self._stop_requested and p.phase in ("walk", "embed"):
            raise _Cancelled

    def _put_back(self, job: _Job, holder: str) -> None:
        repo = job.repo
        with self._cond:
            if job.trigger == "events":
                repo.acc.add_changes(job.changes)
            else:
                repo.rescan = repo.rescan or job.trigger
            repo.catch_up = repo.catch_up or job.catch_up
            if job.first_event is not None and (
                repo.first_event is None or job.first_event < repo.first_event
            ):
                repo.first_event = job.first_event
                repo.first_wall = job.first_wall
            elif repo.first_event is None:
                repo.first_event = time.monotonic()
                repo.first_wall = time.time()
            repo.retry_at = time.monotonic() + _LOCK_RETRY_SECONDS
            if repo.waiting_for_lock is None:
                repo.waiting_for_lock = holder
            self._status_dirty = True

    def _failed(self, job: _Job, started: float, message: str) -> BatchResult:
        repo = job.repo
        self._say(f"Re-indexing {repo.name} failed: {message}; the next rescan retries.")
        return BatchResult(
            repository=repo.name, root=repo.root, trigger=job.trigger, changed=0, deleted=0,
            files_updated=0, files_removed=0, chunks_embedded=0,
            duration_ms=int((time.perf_counter() - started) * 1000), lag_ms=None,
            applied_at=now_rfc3339(), error=message,
        )

    @staticmethod
    def _needs_finish(store: Store, repo: _Repo) -> bool:
        """An interrupted run left embeddings pending or the repository marked as indexing."""
        row = store.repo_by_root(repo.root)
        if row is not None and row.index_started_at is not None:
            return True
        return store.count_pending(repo.id) > 0

    def _stat_paths(
        self, repo: _Repo, changes: ChangeSet, stored: dict[str, Stat]
    ) -> dict[str, Stat | None]:
        """The current stat of every candidate path (None: gone or refused by the policy)."""
        scanned: dict[str, Stat] = {}
        dirs = sorted(changes.dirs)
        if dirs:
            if repo.filter is not None:
                repo.filter.reload()
            for item in walk(Path(repo.root), repo.walk):
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
    def _stat_one(repo: _Repo, path: str, parents: dict[str, bool]) -> Stat | None:
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
        store: Store, repo: _Repo, found: Diff, on_disk: dict[str, Stat | None]
    ) -> None:
        """Admitted files the re-index did not store (binary, unreadable): skip them until
        their stat changes, so every rescan does not read them again."""
        for p in found.deleted:
            repo.unindexable.pop(p, None)
        changed = list(found.changed)
        if not changed:
            return
        present: set[str] = set()
        for i in range(0, len(changed), _IN_QUERY_CHUNK):
            part = changed[i : i + _IN_QUERY_CHUNK]
            marks = ",".join("?" * len(part))
            present.update(
                r[0] for r in store.query(
                    f"SELECT path FROM files WHERE repo_id = ? AND path IN ({marks})",
                    [repo.id, *part],
                )
            )
        for p in changed:
            st = on_disk.get(p)
            if p in present or st is None:
                repo.unindexable.pop(p, None)
            else:
                repo.unindexable[p] = st

    # -- status file ---------------------------------------------------------------------

    def _write_status(self) -> None:
        with self._cond:
            self._status_dirty = False
            self._status_written = time.monotonic()
            active = self._role is Role.ACTIVE
        if not active:
            return
        data = self.health()
        data["updated_at"] = now_rfc3339()
        try:
            self.status_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.status_file.with_name(f".{self.status_file.name}.{os.getpid()}")
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(tmp, self.status_file)
        except OSError as exc:
            self._say(f"Cannot write the watch status file {self.status_file}: {exc}")
        with self._cond:
            self._cond.notify_all()


# --------------------------------------------------------------------------- entry points


def start_watching(service: Service, settings: Settings | None = None) -> Watcher:
    """Start keeping every indexed repository fresh (for `ctxd serve --watch`).

    Returns the running `Watcher`; call `stop()` on shutdown. A second process doing
    the same stays in standby (see `Watcher.health()["message"]`).
    """
    options = (settings or service.settings).watch
    return Watcher(service, options).start()


def status_path(settings: Settings) -> Path:
    """`<home>/watch-status.json`: the active watcher's state for other processes."""
    return Path(settings.home) / STATUS_FILE_NAME


def read_watch_status(settings: Settings) -> dict[str, Any] | None:
    """The state an active watcher (in any process) last wrote, or None when none runs.

    A status file whose writer is gone (killed, crashed) is ignored: the watcher's lock
    is free then.
    """
    path = status_path(settings)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    probe = WriteLock(Path(f"{settings.db_path}.watch"))
    try:
        probe.acquire(wait=0)
    except IndexLocked:
        pass  # held: the writer is alive
    else:
        probe.release()
        return None
    now = time.time()
    for repo in (data.get("repos") or {}).values():
        since = repo.get("pending_since")
        if repo.get("pending") and isinstance(since, int | float):
            repo["lag_ms"] = max(0, int((now - since) * 1000))
    return data


def watch_health(settings: Settings, watcher: Watcher | None = None) -> dict[str, Any]:
    """Watch state for `get_health` / `ctxd status`: this process's watcher if it runs
    one, else what another process's watcher wrote, else `{"running": False}`."""
    if watcher is not None and watcher.running:
        return watcher.health()
    other = read_watch_status(settings)
    if other is not None:
        other["in_this_process"] = False
        return other
    return {"running": False, "repos": {}}


# --------------------------------------------------------------------------- inotify limits


def quiet_watchdog_bookkeeping() -> None:
    """Silence watchdog's `Callback with id ... already exists / does not exist` warnings.

    Watchdog's inotify backend warns (from its own thread) when `mkdir -p` races its
    recursive watch registration; the watches are right afterwards. Shown, they flood
    `ctxd watch`'s stderr; under `-W error` they would kill the observer thread.
    """
    warnings.filterwarnings(
        "ignore",
        message=r"Callback with id '\d+' (already exists|does not exist)",
        category=RuntimeWarning,
    )


def _inotify_headroom() -> int | None:
    """inotify watches this user may still add (None where unknown or not Linux).

    Counts only this process's watches: others' are invisible here, so a partial
    failure caused by them is caught by the periodic rescan instead.
    """
    try:
        limit = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return max(0, limit - _watches_in_use())


def _watches_in_use() -> int:
    total = 0
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return 0
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="utf-8") as fh:
                total += sum(1 for line in fh if line.startswith("inotify wd:"))
        except OSError:
            continue
    return total


def _count_dirs(root: str, limit: int) -> int:
    """Folders a recursive watch of `root` needs (every one, as watchdog adds them), up
    to `limit`."""
    n = 0
    for _dirpath, _dirnames, _files in os.walk(root):
        n += 1
        if n >= limit:
            break
    return n


def describe(health: Iterable[RepoWatchHealth]) -> list[str]:
    """One line per repository: `name  inotify  pending 3  updated ...  lag 120 ms`."""
    lines = []
    for h in health:
        state = h.mode if h.watching else ("error" if h.error else "not watching")
        lag = "-" if h.lag_ms is None else f"{h.lag_ms} ms"
        line = (f"{h.name:<20} {state:<12} pending {h.pending:<5} "
                f"updated {h.last_update or 'never'}  lag {lag}")
        if h.waiting_for_lock:
            line += f"  (waiting for pid {h.waiting_for_lock})"
        if h.note or h.error:
            line += f"  [{h.error or h.note}]"
        lines.append(line)
    return lines
