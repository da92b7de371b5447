"""What a file watcher publishes for other code to read, and how it is read.

The watcher (`server/watch/`) writes its state to `<home>/watch-status.json` while it
holds `<db>.watch.lock`; the service layer reads it here (`watch_health`) or asks a
`HealthSource` it was handed (the watcher of its own process). This module is the seam
that keeps the service from importing the watcher.

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
from pathlib import Path
from typing import Any, Protocol

from ctxd.indexer.store.lock import IndexFileLock
from ctxd.server.config import Settings

STATUS_FILE_NAME = "watch-status.json"


class HealthSource(Protocol):
    """What `watch_health` reads from a watcher of this process (`server.watch.Watcher`)."""

    @property
    def running(self) -> bool: ...

    def health(self) -> dict[str, Any]: ...


def watch_lock(settings: Settings) -> IndexFileLock:
    """`<db>.watch.lock`: held by the one active watcher of an index for its lifetime."""
    return IndexFileLock(Path(f"{settings.db_path}.watch"))


def status_path(settings: Settings) -> Path:
    """`<home>/watch-status.json`: the active watcher's state for other processes."""
    return Path(settings.home) / STATUS_FILE_NAME


def write_status(path: Path, data: dict[str, Any]) -> None:
    """Replace the JSON file at `path` with `data` at once (a temporary file renamed over
    it): the watcher's status, the daemon's record. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # owner only
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=1))
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
    if not watch_lock(settings).is_held():  # a shared probe: never steals a starting watcher's turn
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
