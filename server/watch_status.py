"""The file watcher's state as others see it: health records, the status file, and lines.

`RepoWatchHealth` is one repository's watch state (`Watcher.repos_health()`).
`watch_health(settings, watcher)` is what `get_health` / `ctxd status` show: this
process's watcher if it runs one, else what another process's watcher last wrote to
`<home>/watch-status.json` (`read_watch_status`), else `{"running": False, "repos": {}}`.
`write_status` writes that file; `describe` renders health as one line per repository.

Called by `server/watch.py` (writes the file, builds the records), `server/service.py`
(`watch_health`) and `server/watch_cli.py` (`describe`). Probes the watcher lock
(`indexer/lock.py`) to tell a live writer from a dead one; knows nothing of watchdog, the
store or the `Watcher` class (it reads any object with `running` and `health()`).

Invariants:
- A status file is believed only while its writer holds `<db>.watch.lock`: the file of a
  killed or crashed watcher reads as None.
- The file is replaced whole (written under a temporary name, then renamed), so a reader
  never sees half of it.
- A pending repository's `lag_ms` is recomputed at read time from `pending_since`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

from indexer.errors import IndexLocked
from indexer.lock import WriteLock
from indexer.pipeline import now_rfc3339 as pipeline_clock
from server.config import Settings

STATUS_FILE_NAME = "watch-status.json"


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


class HealthSource(Protocol):
    """What `watch_health` reads from a watcher of this process (`server.watch.Watcher`)."""

    @property
    def running(self) -> bool: ...

    def health(self) -> dict[str, Any]: ...


def now_rfc3339(ts: float | None = None) -> str:
    """Watch times carry milliseconds (edit-to-index lag is sub-second)."""
    return pipeline_clock(ts, timespec="milliseconds")


def watch_lock(settings: Settings) -> WriteLock:
    """`<db>.watch.lock`: held by the one active watcher of an index for its lifetime."""
    return WriteLock(Path(f"{settings.db_path}.watch"))


def status_path(settings: Settings) -> Path:
    """`<home>/watch-status.json`: the active watcher's state for other processes."""
    return Path(settings.home) / STATUS_FILE_NAME


def write_status(path: Path, data: dict[str, Any]) -> None:
    """Replace the status file at `path` with `data` (raises OSError)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    os.replace(tmp, path)


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
    probe = watch_lock(settings)
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


def watch_health(settings: Settings, watcher: HealthSource | None = None) -> dict[str, Any]:
    """Watch state for `get_health` / `ctxd status`: this process's watcher if it runs
    one, else what another process's watcher wrote, else `{"running": False}`."""
    if watcher is not None and watcher.running:
        return watcher.health()
    other = read_watch_status(settings)
    if other is not None:
        other["in_this_process"] = False
        return other
    return {"running": False, "repos": {}}


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
