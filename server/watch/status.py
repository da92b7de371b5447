"""The file watcher's state as others see it: health records and lines.

`RepoWatchHealth` is one repository's watch state (`Watcher.repos_health()`); `describe`
renders health as one line per repository. The status file itself (written by the
watcher, read by the service) lives in `server/watch_state.py`, re-exported here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ctxd.indexer.models import now_rfc3339 as pipeline_clock
from ctxd.server.watch_state import (  # re-exported for the watcher
    HealthSource,
    read_watch_status,
    status_path,
    watch_health,
    watch_lock,
    write_status,
)

__all__ = [
    "HealthSource", "RepoWatchHealth", "describe", "now_rfc3339", "read_watch_status",
    "status_path", "watch_health", "watch_lock", "write_status",
]


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
    rescan: str | None = None
    """A stat scan of the repository queued or running, and why (`startup`, `periodic`,
    `poll`, `inotify queue overflow`, ...); what it finds becomes pending changes."""
    waiting_for_lock: str | None = None
    """The pid of the process holding the write lock (this one's own index run included),
    while a batch waits for it."""
    note: str | None = None
    """Why the mode is polling (said once in the log too)."""
    error: str | None = None
    embedding_backlog: int = 0
    """Checkpoints whose embeddings are still to compute: text and symbol search see them,
    semantic search does not yet. Embedding runs in slices that yield to edits."""
    embedding: bool = False
    """The watcher is embedding this repository's backlog now."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def now_rfc3339(ts: float | None = None) -> str:
    """Watch times carry milliseconds (edit-to-index lag is sub-second)."""
    return pipeline_clock(ts, timespec="milliseconds")


def describe(health: Iterable[RepoWatchHealth]) -> list[str]:
    """One line per repository: `name  inotify  pending 3  updated ...  lag 120 ms`."""
    lines = []
    for h in health:
        state = h.mode if h.watching else ("error" if h.error else "not watching")
        lag = "-" if h.lag_ms is None else f"{h.lag_ms} ms"
        line = (f"{h.name:<20} {state:<12} pending {h.pending:<5} "
                f"updated {h.last_update or 'never'}  lag {lag}")
        if h.rescan:
            line += f"  (rescan: {h.rescan})"
        if h.waiting_for_lock:
            line += f"  (waiting for pid {h.waiting_for_lock})"
        if h.note or h.error:
            line += f"  [{h.error or h.note}]"
        lines.append(line)
    return lines
