"""The watchdog side of the file watcher: what the observer asks for, how its events
become `FsEvent`s, and the workarounds watchdog needs.

`fs_event(root, home_rel, event)` turns one watchdog event into the repository-relative
`FsEvent` that `server/watch/changes.py` coalesces (None: not ours to index). `EventForwarder`
is the handler scheduled per repository; `OverflowSignal` turns watchdog's "inotify queue
overflowed" warning into a rescan request; `quiet_watchdog_bookkeeping` silences its
harmless registration-race warnings; `inotify_headroom` and `count_dirs` tell, before a
recursive watch is scheduled, whether it fits in the user's inotify watch limit.

Called by `server/watch/repos.py` (handlers, headroom) and `server/watch/watcher.py` (overflow
signal, warnings filter). Reads `/proc` on Linux; knows nothing of the index, the store
or the watcher's locks.

Invariants:
- Handlers run in watchdog's observer threads and only hand the event to a callback:
  they never block on the index.
- Every `FsEvent` path is relative to its repository: a move in from outside becomes a
  creation, a move out a deletion, and events inside ctxd's own home (when it lies in
  the repository) are dropped.
- Headroom counts this process's watches only (others' are invisible), so a partial
  failure caused by other processes is caught by the periodic rescan instead.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Callable
from pathlib import Path

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

from ctxd.server.watch.changes import EventKind, FsEvent, relative_path, under_any

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


def fs_event(root: str, home_rel: str | None, event: FileSystemEvent) -> FsEvent | None:
    """The change `event` makes to the repository at `root`, or None when it makes none
    we index: an event type we ignore, a path outside `root`, or a path inside ctxd's
    home (`home_rel`, relative to `root`, when the home lies in the repository).

    A move from outside into the repository is a creation; a move out of it, a deletion.
    """
    kind = _KINDS.get(event.event_type)
    if kind is None:
        return None
    src = relative_path(root, os.fsdecode(event.src_path))
    dest = None
    if kind is EventKind.MOVED and event.dest_path:
        dest = relative_path(root, os.fsdecode(event.dest_path))
    if src is None:
        if dest is None:
            return None
        kind, src, dest = EventKind.CREATED, dest, None
    elif kind is EventKind.MOVED and dest is None:
        kind = EventKind.DELETED
    if home_rel is not None and (
        under_any(src, (home_rel,)) and (dest is None or under_any(dest, (home_rel,)))
    ):
        return None
    return FsEvent(kind, src, event.is_directory, dest)


class EventForwarder(FileSystemEventHandler):
    """Hands every watchdog event of one repository to `on_event` (observer thread)."""

    def __init__(self, on_event: Callable[[FileSystemEvent], None]) -> None:
        self._on_event = on_event

    def dispatch(self, event: FileSystemEvent) -> None:
        self._on_event(event)


class OverflowSignal(logging.Handler):
    """Turns watchdog's "inotify queue overflowed" warning into a rescan request.

    Watchdog rebuilds its watches after an overflow but does not replay lost events and
    offers no callback; its warning is the only signal. Attach it to the
    `watchdog.observers` logger.
    """

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self._on_overflow()


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


# --------------------------------------------------------------------------- inotify limits


def inotify_headroom() -> int | None:
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


def count_dirs(root: str, limit: int) -> int:
    """Folders a recursive watch of `root` needs (every one, as watchdog adds them), up
    to `limit`."""
    n = 0
    for _dirpath, _dirnames, _files in os.walk(root):
        n += 1
        if n >= limit:
            break
    return n
