"""What the first search of a session waits for, measured on this machine and said.

A search that needs the model and finds no daemon warm either starts one (the CLI's
default) or loads the model in its own process (`--no-daemon`); both say so on stderr,
with how long it took here the last time (`first-search.json` in the index home), not a
figure from a quiet machine: a 4 s estimate took 15.9 s on a loaded 2-core machine (issue
30).

- `remember(home, seconds)`: record a measure (the daemon's, from the client's launch to
  its model, vectors and caches loaded; the CLI's, its in-process search that loaded the
  model). Never raises: a home that cannot be written only loses the figure.
- `loading_text(home)`: "loading the model: 15.9 s the last time here", or before any
  measure, what it costs in general.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ctxd.server.watch_state import write_status

__all__ = ["FILE", "LAUNCHED_ENV", "loading_text", "remember"]

FILE = "daemon.first-search.json"
"""In the home (a `daemon.` name: the home's privacy rules cover it)."""
LAUNCHED_ENV = "CTXD_LAUNCHED_AT"
"""The wall-clock time (seconds since the epoch) a client launched the daemon at: the
daemon measures its start-up from there, its interpreter's own start included. (Not
`CTXD_DAEMON_*`: those name settings of `[daemon]`.)"""
UNMEASURED = "a few seconds on a quiet machine, 15 s or more on a busy one"
"""Before any measure on this machine (4 s quiet; 15.9 s measured on a loaded 2-core
machine, issue 30)."""


def remember(home: Path, seconds: float) -> None:
    """Record that a first search waited `seconds` for the model (and the rest)."""
    try:
        write_status(home / FILE, {"seconds": round(seconds, 1),
                                   "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    except OSError:
        pass


def last(home: Path) -> float | None:
    """The last recorded measure, if any."""
    try:
        seconds = json.loads((home / FILE).read_text(encoding="utf-8")).get("seconds")
    except (OSError, ValueError, AttributeError):
        return None
    return float(seconds) if isinstance(seconds, int | float) and seconds > 0 else None


def loading_text(home: Path) -> str:
    """`loading the model: <what it costs here>`."""
    seconds = last(home)
    if seconds is None:
        return f"loading the model: {UNMEASURED}"
    return f"loading the model: {seconds:.1f} s the last time here"
