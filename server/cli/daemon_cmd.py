"""`ctxd daemon start|stop|status|run`: the background process of an index home.

Thin adapters over `server/daemon/lifecycle.py` (start, stop, find) and
`server/daemon/server.py` (`run`: the daemon itself, in the foreground, for systemd,
launchd and tests). Also `daemon_summary(settings)`, the daemon part of `ctxd status`.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from ctxd.indexer.errors import CtxdError
from ctxd.server.cli import render
from ctxd.server.config import Settings, settings_from_cli
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.client import DaemonGone, exchange
from ctxd.server.daemon.paths import DaemonPaths


def daemon_summary(settings: Settings) -> dict[str, Any]:
    """`{"running": False}` or the running daemon's pid, uptime, memory, model, socket."""
    try:
        paths = DaemonPaths.for_home(settings.home)
        info: dict[str, Any] = exchange(paths, "daemon_info")
    except DaemonGone:
        lifecycle.probe(paths)  # no answer: clears a dead daemon's leftovers
        return {"running": False, "socket": str(paths.socket)}
    except CtxdError:
        return {"running": False}
    return {"running": True, **info}


def summary_text(d: dict[str, Any]) -> str:
    if not d.get("running"):
        return "daemon: not running (`ctxd daemon start` keeps the model warm)"
    mem = f", {d['rss_bytes'] / 1e6:.0f} MB" if d.get("rss_bytes") else ""
    model = f"{d.get('model')} ({'loaded' if d.get('model_loaded') else 'not loaded yet'})"
    return (f"daemon: pid {d['pid']}, up {_duration(float(d.get('uptime_s', 0)))}{mem}, "
            f"model {model}, socket {d['socket']}")


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


@click.group()
def daemon() -> None:
    """Run ctxd in the background: one process per index home keeps the model, the vectors
    and the file watcher warm; `ctxd` commands and `ctxd serve` use it when it runs.

    \b
    Example:
      ctxd daemon start && ctxd search "where is the retry policy"
    """


@daemon.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def start(ctx: click.Context, as_json: bool) -> None:
    """Start the daemon in the background (or report the one running).

    \b
    Example:
      ctxd daemon start
    """
    settings = settings_from_cli(ctx.obj)
    info = lifecycle.start(settings)
    if as_json:
        render.emit_json(info)
    else:
        render.emit(f"ctxd daemon running (pid {info['pid']}), socket {info['socket']}")


@daemon.command()
@click.pass_context
def stop(ctx: click.Context) -> None:
    """Stop the daemon (it finishes the request in progress first).

    \b
    Example:
      ctxd daemon stop
    """
    settings = settings_from_cli(ctx.obj)
    pid = lifecycle.stop(DaemonPaths.for_home(settings.home))
    if pid is None:
        render.emit("no ctxd daemon is running")
    else:
        render.emit(f"stopped ctxd daemon (pid {pid})")


@daemon.command()
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """Show whether the daemon runs: pid, uptime, memory, model, socket. Exit 1 if not.

    \b
    Example:
      ctxd daemon status --json
    """
    summary = daemon_summary(settings_from_cli(ctx.obj))
    if as_json:
        render.emit_json(summary)
    else:
        render.emit(summary_text(summary))
    if not summary["running"]:
        sys.exit(1)


@daemon.command()
@click.option("--ready-fd", type=int, hidden=True,
              help="Write `ready <pid>` to this file descriptor once listening.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]),
              default="info", show_default=True, help="Log verbosity on stderr.")
@click.pass_context
def run(ctx: click.Context, ready_fd: int | None, log_level: str) -> None:
    """Run the daemon in the foreground (for systemd, launchd and tests); logs to stderr.

    \b
    Example:
      ctxd daemon run
    """
    # Imported here: the daemon needs the whole service; the other commands do not.
    from ctxd.server.daemon.server import Daemon

    logging.basicConfig(level=log_level.upper(), stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = settings_from_cli(ctx.obj)

    def ready(line: str) -> None:
        if ready_fd is not None:
            os.write(ready_fd, line.encode() + b"\n")
            os.close(ready_fd)

    code = Daemon(settings).run(ready=ready)
    if code:
        render.emit(f"another ctxd daemon already serves {settings.home}", err=True)
    sys.exit(code)
