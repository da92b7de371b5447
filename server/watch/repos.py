"""The repositories a watcher keeps fresh: each one's state, and how its changes are noticed.

`WatchedRepos` is the watcher's registry: it follows the store's list of indexed
repositories (`refresh`), owns the watchdog observer, schedules one recursive watch per
repository (inotify mode) or falls back to polling when watches cannot be added (or
`force_polling`), and turns observer events into pending changes (`RepoState.acc`).
`RepoState` is one repository's state (pending changes, mode, last update, error); `Job`
is the batch the worker took from it.

Used by `server/watch/watcher.py` (`Watcher`, which decides when a batch runs) and
`server/watch/batch.py` (which applies it). Calls the store's repository list, the
`indexer.walk.filefilter.FileFilter`, `server/watch/changes.py` and `server/watch/events.py`.

Invariants:
- `cond` (the watcher's condition, shared with `Watcher` and `BatchApplier`) guards
  `repos` and every `RepoState` field that observer threads or health readers touch;
  observer threads do nothing but add changes under it. Only the worker thread calls
  the other methods.
- A repository is watched one way at a time: `mode` is INOTIFY with a `watch`, or
  POLLING with a `note` saying why (logged once, unless polling is forced); `error`
  says why a repository is not watched at all.
- A repository removed from the index is dropped (and unwatched); one whose folder
  disappeared stays, with an error, and is re-watched when the folder comes back.
- `status_dirty` is set when a repository is added, dropped or re-watched, its mode
  changes, or changes start pending; the worker then rewrites the status file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from watchdog.events import FileSystemEvent
from watchdog.observers.api import BaseObserver, ObservedWatch

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.store.location import this_host
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.rootpin import RootMoved, root_moved, root_problem
from ctxd.indexer.walk.servable import stored_walk_options
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.config import WatchOptions
from ctxd.server.watch.changes import (
    ChangeAccumulator,
    ChangeSet,
    Stat,
    relative_path,
)
from ctxd.server.watch.events import (
    EVENT_TYPES,
    EventForwarder,
    count_dirs,
    fs_event,
    inotify_headroom,
)
from ctxd.server.watch.status import RepoWatchHealth

if TYPE_CHECKING:
    from ctxd.server.service import Service

log = logging.getLogger("ctxd.server.watch")  # one logger for the whole watcher


class WatchMode(StrEnum):
    """How a repository's changes are noticed."""

    INOTIFY = "inotify"
    """Native file-system events (inotify on Linux, FSEvents/kqueue elsewhere)."""
    POLLING = "polling"
    """A stat rescan every `poll_seconds` (watches could not be added, or forced)."""


@dataclass(slots=True)
class RepoState:
    """The watcher's state for one repository (guarded by the watcher's condition)."""

    id: int
    name: str
    root: str
    options: dict[str, Any]
    walk: WalkOptions
    filter: FileFilter | None
    home_rel: str | None
    root_id: str = ""
    """The root folder's identity when it was indexed (`indexer.walk.rootpin`): a root that
    is no longer that folder is not watched (`error`), and is looked at again each refresh."""
    acc: ChangeAccumulator = field(default_factory=ChangeAccumulator)
    mode: WatchMode | None = None
    watch: ObservedWatch | None = None
    first_event: float | None = None
    last_event: float = 0.0
    first_wall: float | None = None
    newest_wall: float | None = None
    looked_wall: float = field(default_factory=time.time)
    """Unix time of this watcher's last scan of the repository (at first: when it began
    watching it): a change a scan finds could not have been noticed before it."""
    rescan: str | None = "startup"
    catch_up: bool = True
    next_poll: float = 0.0
    next_rescan: float = 0.0
    retry_at: float = 0.0
    in_flight: int = 0
    scan_in_flight: str | None = None
    """Why the batch in flight is a stat scan (startup, periodic, poll, ...); None while
    none runs or the batch in flight carries file events."""
    last_update: str | None = None
    last_lag_ms: int | None = None
    waiting_for_lock: str | None = None
    note: str | None = None
    error: str | None = None
    gone: bool = False
    """Watching it stopped at a bad root (gone, moved, refused): each refresh looks again,
    and it is re-watched once its folder is back. Set whatever the folder looks like just
    after the failure: one renamed away and back at once was already back then, and a
    flag read there left it unwatched for good (issue 39, item 8)."""
    unindexable: dict[str, Stat] = field(default_factory=dict)
    embed_backlog: int = 0
    """Texts of this repository still without vectors (as last counted)."""
    embedding: bool = False
    """The worker is embedding this repository's backlog now."""
    embed_error: str | None = None
    """Why its embeddings cannot be computed (retried at the next rescan)."""

    @property
    def pending(self) -> int:
        return len(self.acc) + self.in_flight + (1 if self.rescan else 0)

    def health(self, now: float, active: bool) -> RepoWatchHealth:
        """This repository's health at Unix time `now` (`active`: the watcher is).

        `pending` counts changes the watcher knows of (file events); a stat scan queued or
        running is `rescan`, not a change: it has found nothing yet, so it has no lag (a
        startup scan waiting for this process's own index run is not a change waiting)."""
        pending = len(self.acc) + (0 if self.scan_in_flight else self.in_flight)
        lag = self.last_lag_ms
        if pending and self.first_wall is not None:
            lag = max(0, int((now - self.first_wall) * 1000))
        return RepoWatchHealth(
            name=self.name,
            root=self.root,
            watching=active and self.error is None and self.mode is not None,
            mode=None if self.mode is None else self.mode.value,
            pending=pending,
            pending_since=self.first_wall if pending else None,
            rescan=self.rescan or self.scan_in_flight,
            last_update=self.last_update,
            lag_ms=lag,
            waiting_for_lock=self.waiting_for_lock,
            note=self.note,
            error=self.error,
            embedding_backlog=self.embed_backlog,
            embedding=self.embedding,
        )


@dataclass(frozen=True, slots=True)
class Job:
    """One batch taken from a repository: its coalesced changes and why it runs."""

    repo: RepoState
    changes: ChangeSet
    trigger: str
    catch_up: bool
    first_event: float | None
    first_wall: float | None
    newest_wall: float | None
    looked_since: float | None = None
    """A scan (rescan, poll): Unix time of the scan before it (`RepoState.looked_wall`)."""


class WatchedRepos:
    """The indexed repositories being watched, and the observer watching them."""

    def __init__(
        self,
        service: Service,
        options: WatchOptions,
        cond: threading.Condition,
        *,
        roots: set[str] | None,
        observer_factory: Callable[[], BaseObserver],
        poll_seconds: float,
    ) -> None:
        self.service = service
        self.options = options
        self.cond = cond
        """Guards `repos`, every `RepoState` and `status_dirty`."""
        self.roots = roots
        self.observer_factory = observer_factory
        self.poll_seconds = poll_seconds
        self.repos: dict[str, RepoState] = {}
        """By resolved root."""
        self.observer: BaseObserver | None = None
        self.status_dirty = True
        """Something `health()` shows changed since the status file was last written."""
        self._home = str(Path(service.settings.home).expanduser().resolve())
        self._said: set[str] = set()

    def say(self, message: str) -> None:
        """Log a warning once per watcher."""
        if message not in self._said:
            self._said.add(message)
            log.warning("%s", message)

    # -- the observer --------------------------------------------------------------------

    def start_observer(self) -> None:
        """Start the file-event observer (none with `force_polling`, or when it fails)."""
        self.observer = self._make_observer()

    def stop_observer(self) -> None:
        observer, self.observer = self.observer, None
        if observer is not None:
            with contextlib.suppress(Exception):
                observer.stop()
                observer.join(10)

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

    def _check_observer(self) -> None:
        """Re-watch repositories whose event source died (a watchdog thread that raised,
        a watched root deleted and re-created), and rescan them: events may be lost."""
        observer = self.observer
        if observer is None or self.options.force_polling:
            return
        if not observer.is_alive():
            self.say("The file-event observer stopped; restarting it and rescanning.")
            with contextlib.suppress(Exception):
                observer.stop()
            self.observer = observer = self._make_observer()
            with self.cond:
                for repo in self.repos.values():
                    repo.watch = None
            if observer is None:
                return
        alive = {e.watch for e in observer.emitters if e.is_alive()}
        with self.cond:
            repos = [r for r in self.repos.values()
                     if r.error is None and r.mode is WatchMode.INOTIFY
                     and (r.watch is None or r.watch not in alive)]
        for repo in repos:
            if not os.path.isdir(repo.root):
                continue  # its deletion event turns it into an error
            log.info("file events for %s stopped; watching it again", repo.name)
            self.unwatch(repo)
            self._watch(repo)
            with self.cond:
                repo.rescan = repo.rescan or "watch restarted"
                self.cond.notify_all()

    # -- the list of repositories --------------------------------------------------------

    def refresh(self) -> None:
        """Follow the store's list of indexed repositories (and revive the observer). In a
        shared (PostgreSQL) store, only those this machine indexed itself and has checked
        out: the others are another machine's or a CI job's to keep fresh."""
        self._check_observer()
        rows = self.service.store().repos()
        shared = self.service.settings.store.shared
        seen: set[str] = set()
        for row in rows:
            if self.roots is not None and row.root not in self.roots:
                continue
            if shared and not (row.host == this_host() and os.path.isdir(row.root)):
                continue
            seen.add(row.root)
            with self.cond:
                repo = self.repos.get(row.root)
            if repo is None:
                self._add(row.id, row.name, row.root, row.options, row.root_id)
            elif repo.error is None and (moved := root_problem(row.root, row.root_id)):
                self._refuse(repo, root_moved(row.root, moved))
            elif (row.options != repo.options or row.root_id != repo.root_id
                  or (repo.gone and os.path.isdir(row.root))):
                self.reconfigure(repo, row.options, row.root_id)
        with self.cond:
            gone = [r for root, r in self.repos.items() if root not in seen]
        for repo in gone:
            self.unwatch(repo)
            with self.cond:
                del self.repos[repo.root]
                self.status_dirty = True
                self.cond.notify_all()
            log.info("%s left the index; no longer watched", repo.name)

    def _add(
        self, repo_id: int, name: str, root: str, options: dict[str, Any], root_id: str
    ) -> None:
        walk_opts = stored_walk_options(self.service.settings.walk, options)
        home_rel = relative_path(root, self._home)
        repo = RepoState(repo_id, name, root, dict(options), walk_opts, None, home_rel, root_id)
        now = time.monotonic()
        repo.next_rescan = now + max(self.options.rescan_seconds, 0)
        repo.next_poll = now + self.poll_seconds
        try:
            repo.filter = FileFilter(Path(root), walk_opts, pin=root_id)
        except ValidationError as exc:
            repo.error = f"cannot watch {root}: {exc.message}"
            repo.gone = True  # look again at the next refresh (`gone`)
            self.say(repo.error)
        with self.cond:
            self.repos[root] = repo
            self.status_dirty = True
        if repo.error is None:
            self._watch(repo)
        with self.cond:
            self.cond.notify_all()

    def reconfigure(
        self, repo: RepoState, options: dict[str, Any], root_id: str | None = None
    ) -> None:
        """The repository's stored options changed (or its folder came back, or its root's
        identity was recorded anew: `root_id`)."""
        walk_opts = stored_walk_options(self.service.settings.walk, options)
        if root_id is not None:
            repo.root_id = root_id
        try:
            flt = FileFilter(Path(repo.root), walk_opts, pin=repo.root_id)
        except ValidationError as exc:
            was_error = repo.error is not None
            with self.cond:
                repo.options = dict(options)
                repo.error = f"cannot watch {repo.root}: {exc.message}"
                repo.gone = True  # look again at the next refresh (`gone`)
                self.status_dirty = True
            self.unwatch(repo)
            if not was_error:
                self.say(repo.error)
            return
        with self.cond:
            was_error = repo.error is not None
            repo.options = dict(options)
            repo.walk = walk_opts
            repo.filter = flt
            repo.error = None
            repo.gone = False
            repo.rescan = repo.rescan or "options changed"
            repo.catch_up = True
            self.status_dirty = True
        if was_error or (repo.watch is None and repo.mode is not WatchMode.POLLING):
            self._watch(repo)
        with self.cond:
            self.cond.notify_all()

    def _refuse(self, repo: RepoState, exc: RootMoved) -> None:
        """Stop watching a repository whose root is no longer the folder indexed; each
        refresh looks again (`gone`), and a root put back is watched again."""
        with self.cond:
            repo.error = f"cannot watch {repo.root}: {exc.message}"
            repo.gone = True
            self.status_dirty = True
            self.cond.notify_all()
        self.unwatch(repo)
        self.say(repo.error)

    # -- one repository's watch ----------------------------------------------------------

    def _watch(self, repo: RepoState) -> None:
        observer = self.observer
        if observer is None:
            reason = ("force_polling is set" if self.options.force_polling
                      else "the file-event observer could not start")
            self._poll_instead(repo, reason, quiet=self.options.force_polling)
            return
        headroom = inotify_headroom()
        if headroom is not None:
            needed = count_dirs(repo.root, headroom + 1)
            if needed > headroom:
                self._poll_instead(
                    repo,
                    f"it has {needed}+ folders and only {headroom} inotify watches are left "
                    "(raise fs.inotify.max_user_watches)",
                )
                return
        try:
            watch = observer.schedule(
                EventForwarder(partial(self._on_event, repo)),
                repo.root,
                recursive=True,
                event_filter=EVENT_TYPES,
            )
        except OSError as exc:
            self._poll_instead(repo, f"watches cannot be added: {exc}")
            return
        with self.cond:
            repo.watch = watch
            repo.mode = WatchMode.INOTIFY
            repo.note = None
        log.info("watching %s (%s) with file events", repo.name, repo.root)

    def _poll_instead(self, repo: RepoState, reason: str, *, quiet: bool = False) -> None:
        note = f"polling every {self.poll_seconds:g} s: {reason}"
        with self.cond:
            repo.mode = WatchMode.POLLING
            repo.note = note
            repo.next_poll = time.monotonic() + self.poll_seconds
            self.status_dirty = True
        if not quiet:
            self.say(f"Cannot watch {repo.name} ({repo.root}) with file events; {note}.")

    def unwatch(self, repo: RepoState) -> None:
        observer, watch = self.observer, repo.watch
        repo.watch = None
        if observer is not None and watch is not None:
            with contextlib.suppress(KeyError, OSError):
                observer.unschedule(watch)

    def _on_event(self, repo: RepoState, event: FileSystemEvent) -> None:
        """An observer-thread event: add it to the repository's pending changes."""
        change = fs_event(repo.root, repo.home_rel, event)
        if change is None:
            return
        with self.cond:
            if not repo.acc.add(change):
                return
            now = time.monotonic()
            wall = time.time()
            repo.last_event = now
            repo.newest_wall = wall
            if repo.first_event is None:
                repo.first_event = now
                repo.first_wall = wall
                self.status_dirty = True
                self.cond.notify_all()
