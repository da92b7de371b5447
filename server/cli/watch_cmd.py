"""`ctxd watch [PATH...]`: keep repositories' indexes fresh in the foreground.

`watch` is a click command registered on the `ctxd` group by `server/cli/main.py`
(`main.add_command(watch)`); `run_watch(service, paths, stop=...)` is its body, usable
without click or signals (tests). Repositories given as PATHs that are not indexed yet
are indexed first; with no PATH every indexed repository is watched, and repositories
indexed later are picked up. Each applied batch, and each round of embedding that
follows, is shown as it happens (one line, or one JSON object per line with `--json`).
SIGINT/SIGTERM stop it within `STOP_GRACE_S`: a step still running then (an embedding
that loads the model) is abandoned, its transaction rolled back by SQLite and redone by
the next run; the exit code is 0.

Calls `Service` and `server/watch/watcher.py` (`Watcher`; its `BatchResult` from
`server/watch/batch.py`, `describe` from `server/watch/status.py`); prints through
`server/cli/render.py`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path

import click

from ctxd.indexer.walk.walker import validate_root
from ctxd.server.cli import render
from ctxd.server.cli.stop_signals import stop_on_signals
from ctxd.server.config import settings_from_cli
from ctxd.server.service import Service
from ctxd.server.watch.batch import BatchResult
from ctxd.server.watch.status import describe
from ctxd.server.watch.watcher import Role, Watcher

READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 0.3
"""How long Ctrl-C waits for the watcher's current step before the command exits."""


def format_batch(result: BatchResult) -> str:
    """One line for a batch: `12:00:01 myrepo: 2 changed, 1 deleted in 40 ms ...`. A batch
    indexes without embedding (its checkpoints' vectors follow: `format_embedded`), so
    it names a count of embedded checkpoints only when it has one."""
    clock = time.strftime("%H:%M:%S")
    if result.error:
        return render.safe(f"{clock} {result.repository}: error: {result.error}")
    lag = "" if result.lag_ms is None else f", lag {result.lag_ms} ms"
    embedded = f", {result.chunks_embedded} embedded" if result.chunks_embedded else ""
    shown = ", ".join(result.paths[:5])
    more = result.changed + result.deleted - min(len(result.paths), 5)
    if more > 0:
        shown += f", +{more} more"
    return render.safe(
        f"{clock} {result.repository}: {result.changed} changed, {result.deleted} deleted"
        f"{embedded} in {result.duration_ms} ms ({result.trigger}{lag})"
        + (f"  {shown}" if shown else "")
    )


def format_embedded(repository: str, count: int) -> str:
    """One line for a round of embedding: `12:00:02 myrepo: embedded 3 checkpoints`."""
    return render.safe(f"{time.strftime('%H:%M:%S')} {repository}: embedded {count} checkpoints")


def run_watch(
    service: Service,
    paths: Sequence[str | Path] = (),
    *,
    stop: threading.Event,
    as_json: bool = False,
    emit: Callable[[str], None] = render.emit,
    on_started: Callable[[Watcher], None] | None = None,
    stop_grace: float | None = 60.0,
) -> tuple[Watcher, bool]:
    """Index what is not indexed yet, watch until `stop` is set, then stop cleanly.

    Args:
        service: the service whose index is kept fresh.
        paths: repositories to watch (none = every indexed repository, and new ones).
        stop: set it (e.g. from a signal handler) to stop.
        as_json: one JSON object per batch instead of a line of text.
        emit: where lines go (stdout by default).
        on_started: called once the watcher watches (or stands by).
        stop_grace: how long to wait for the watcher's current step once stopped.

    Returns:
        The stopped watcher (its `results` and `batches` tell what it did) and whether
        its worker ended within `stop_grace` (False: its last step, e.g. loading the
        model, still runs; the caller should exit).

    Raises:
        ValidationError: a PATH that is not a folder.
        IndexLocked: never; another writer is waited for, with a message.
    """
    roots = [validate_root(p) for p in paths]
    store = service.store()
    for root in roots:
        if store.repo_by_root(str(root)) is None:
            emit(f"{root} is not indexed yet: indexing it first...")
            stats = service.index(
                root,
                lock_wait=None,
                on_lock_wait=lambda pid: emit(
                    f"waiting for another ctxd process (pid {pid}) that is writing the index..."
                ),
            )
            emit(render.index_stats_text(stats))

    def show(result: BatchResult) -> None:
        emit(json.dumps({"event": "batch", **asdict(result)}) if as_json
             else format_batch(result))

    def embedded(repository: str, count: int) -> None:
        emit(json.dumps({"event": "embedded", "repository": repository, "checkpoints": count})
             if as_json else format_embedded(repository, count))

    watcher = Watcher(service, roots=roots or None, on_batch=show, on_embedded=embedded,
                      log_standby=False)
    watcher.start()
    try:
        watcher.wait_ready(READY_TIMEOUT_S)
        if as_json:
            emit(json.dumps({"event": "watching" if watcher.role is Role.ACTIVE
                             else "standby", **watcher.health()}))
        else:
            _announce(watcher, emit)
        if on_started is not None:
            on_started(watcher)
        while not stop.wait(1.0):
            if not watcher.running:
                break
    finally:
        finished = watcher.stop(timeout=stop_grace)
    if not as_json:
        unfinished = "" if finished else " (the step in progress is redone on the next run)"
        n = watcher.batches
        emit(f"stopped after {n} update{'' if n == 1 else 's'}{unfinished}")
    return watcher, finished


def _announce(watcher: Watcher, emit: Callable[[str], None]) -> None:
    health = watcher.health()
    if watcher.role is Role.STANDBY:
        emit(f"standby: {health.get('message', '')}")
        return
    repos = watcher.repos_health()
    if not repos:
        emit("No repositories are indexed yet; watching for new ones (`ctxd index PATH`).")
    else:
        emit(f"watching {len(repos)} "
             f"{'repository' if len(repos) == 1 else 'repositories'} (Ctrl-C to stop):")
        for line in describe(repos):
            emit(f"  {render.safe(line)}")


@click.command("watch")
@click.argument("paths", nargs=-1, type=click.Path(file_okay=False))
@click.option("--debounce-ms", type=click.IntRange(0, 60_000), metavar="MS",
              help="Quiet time before a batch is applied (default 300).")
@click.option("--rescan-seconds", type=click.IntRange(0), metavar="S",
              help="Stat rescan interval that catches dropped events (default 300, 0 = off).")
@click.option("--poll", "force_polling", is_flag=True,
              help="Poll by stat instead of using file-system events.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per update.")
@click.pass_context
def watch(
    ctx: click.Context,
    paths: tuple[str, ...],
    debounce_ms: int | None,
    rescan_seconds: int | None,
    force_polling: bool,
    as_json: bool,
) -> None:
    """Keep the index of PATH... (default: every indexed repository) fresh as files change.

    Runs in the foreground and shows each update as it happens; Ctrl-C stops it at once
    (an update in progress is redone on the next run). A second `ctxd watch` on the same
    index waits in standby.

    \b
    Example:
      ctxd watch ~/src/myrepo --debounce-ms 200
    """
    settings = settings_from_cli(ctx.obj)
    watch_opts = settings.watch
    if debounce_ms is not None:
        watch_opts = replace(watch_opts, debounce_ms=debounce_ms)
    if rescan_seconds is not None:
        watch_opts = replace(watch_opts, rescan_seconds=rescan_seconds)
    if force_polling:
        watch_opts = replace(watch_opts, force_polling=True)
    service = Service(replace(settings, watch=watch_opts))
    ctx.call_on_close(service.close)  # on an error; the normal end exits below
    stop = threading.Event()
    with stop_on_signals(stop, (signal.SIGINT, signal.SIGTERM)):
        watcher, finished = run_watch(service, paths, stop=stop, as_json=as_json,
                                      stop_grace=STOP_GRACE_S)
    # Ctrl-C answers within STOP_GRACE_S: a step still running in the worker thread
    # (loading the model alone takes seconds) is not waited for, nor is the interpreter's
    # teardown (about a second once torch is loaded). SQLite rolls an open transaction
    # back, the next run redoes it, and the locks go with the process; the status file
    # goes here.
    if finished:
        service.close()
    elif watcher.role is Role.ACTIVE:
        with contextlib.suppress(OSError):
            watcher.status_file.unlink()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
