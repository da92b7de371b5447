"""Finding, starting and stopping the daemon of an index home.

- `probe(paths)`: the handshake answer of the daemon serving `paths`, or None. A socket
  nobody listens on while the daemon lock is free is a leftover of a killed daemon
  (`kill -9`): it is removed on the spot.
- `connect(settings, autostart=...)`: a `DaemonClient` for the edges, or None (then they
  work in-process). A daemon of another ctxd version or protocol is not trusted: it is
  asked to stop and, with `autostart`, replaced. A daemon answering for other settings
  (another model, config file, Zoekt) is left alone and the caller works in-process.
- `start(settings)`: spawn `ctxd daemon run` in the background and wait until its socket
  listens (it reports through a pipe: no polling). Of two starts at once, one daemon wins
  the daemon lock; the other start reports the winner.
- `stop(paths)`: ask it to shut down and wait until its lock is free.

Failures to reach or start a daemon are never fatal to a command: `connect` reports them
through `note` and returns None.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ctxd.indexer.errors import CtxdError, DaemonError
from ctxd.indexer.store.private import create_private, private_home
from ctxd.server.config import Settings
from ctxd.server.daemon import protocol
from ctxd.server.daemon.client import (
    CONNECT_TIMEOUT,
    Connection,
    DaemonClient,
    DaemonGone,
    exchange,
)
from ctxd.server.daemon.paths import DaemonPaths, lock_is_held, wait_lock_free
from ctxd.server.first_search import LAUNCHED_ENV, loading_text
from ctxd.server.use_cases import UseCases

log = logging.getLogger("ctxd.daemon")

START_TIMEOUT = 60.0
"""Seconds a start waits for the new daemon's socket (imports, not the model: the model
loads after the socket listens)."""

STOP_TIMEOUT = 15.0

_spawned: list[subprocess.Popen[bytes]] = []
"""Daemons this process started: kept (and polled on the next start) so that one that
exits is reaped rather than left a zombie of a long-lived client such as `ctxd serve`."""


def probe(
    paths: DaemonPaths, on_refusal: Callable[[CtxdError], None] | None = None
) -> dict[str, Any] | None:
    """The running daemon's handshake info, or None (stale files are cleaned up). A daemon
    that answers with a refusal (all its connections taken, another user's daemon) is
    told to `on_refusal`."""
    try:
        conn = Connection(paths)  # the handshake's answer is the info
        conn.close()
        return conn.info
    except DaemonGone:
        pass
    except CtxdError as err:  # e.g. refused by a daemon of another user
        log.info("daemon at %s refused us: %s", paths.socket, err.message)
        if on_refusal is not None:
            on_refusal(err)
        return None
    if (paths.socket.exists() or paths.record.exists()) and not lock_is_held(paths.lock):
        log.info("removing the leftovers of a dead daemon: %s", paths.socket)
        paths.remove_leftovers()
        _reap(None)
    return None


def daemon_argv(settings: Settings, *extra: str) -> list[str]:
    """The command that runs the daemon for these settings (the client's own flags, so
    its settings digest matches; the environment is inherited)."""
    argv = [sys.executable, "-m", "ctxd.server.cli.main", "--home", str(settings.home)]
    if settings.config_file is not None:
        argv += ["--config", str(settings.config_file)]
    argv += ["--model", settings.embedding.model, "daemon", "run", *extra]
    return argv


def start(settings: Settings, paths: DaemonPaths | None = None) -> dict[str, Any]:
    """Start a daemon for `settings.home` (or find the one running) and return its info.

    Raises:
        DaemonError: it did not come up (the message quotes the end of its log).
    """
    paths = paths or DaemonPaths.for_home(settings.home)
    info = probe(paths)
    if info is not None:
        return info
    try:
        private_home(paths.home)
        create_private(paths.log)
    except OSError as exc:
        raise DaemonError(
            f"cannot start the ctxd daemon in {paths.home}: {exc.strerror or exc}",
            hint="Check that the index folder (CTXD_HOME / --home) is writable.",
            details={"home": str(paths.home)},
        ) from exc
    r, w = os.pipe()
    try:
        with open(paths.log, "ab") as logf:
            proc = subprocess.Popen(
                daemon_argv(settings, "--ready-fd", str(w)), stdin=subprocess.DEVNULL,
                stdout=logf, stderr=logf, pass_fds=(w,), cwd="/", start_new_session=True,
                env=daemon_env(settings) | {LAUNCHED_ENV: repr(time.time())})
        _spawned[:] = [p for p in _spawned if p.poll() is None]
        _spawned.append(proc)
        os.close(w)
        w = -1
        line = _read_line(r, START_TIMEOUT)
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
    if line.startswith("ready"):
        info = probe(paths)
        if info is not None:
            return info
    elif line.startswith("running"):
        # Another start won the daemon lock a moment ago: wait for its socket.
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline and lock_is_held(paths.lock):
            info = probe(paths)
            if info is not None:
                return info
            time.sleep(0.05)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=0.1)
    raise DaemonError(
        f"the ctxd daemon for {paths.home} did not start"
        + (f" (exit status {proc.returncode})" if proc.returncode is not None else ""),
        hint=f"See its log: {paths.log}\n{_tail(paths)}".rstrip(),
        details={"home": str(paths.home), "log": str(paths.log)},
    )


def daemon_env(settings: Settings | None = None) -> dict[str, str]:
    """The daemon's environment: ours, with glibc's malloc arenas capped (unless set): its
    many threads would each keep an arena of freed embedding buffers; and the store URL,
    when one is set, as `CTXD_STORE_URL` (never on the command line, where every local
    user could read its password)."""
    env = {**os.environ, "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2")}
    if settings is not None and settings.store.url:
        env["CTXD_STORE_URL"] = settings.store.url
    return env


def _read_line(fd: int, timeout: float) -> str:
    """One line from a pipe, or what came before EOF / the time-out."""
    deadline = time.monotonic() + timeout
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 256)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()


def _tail(paths: DaemonPaths, lines: int = 5) -> str:
    try:
        text = paths.log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])


def stop(paths: DaemonPaths, timeout: float = STOP_TIMEOUT) -> int | None:
    """Stop the daemon of `paths` (politely, then SIGTERM, then SIGKILL); its pid, or None
    when none was running.

    Raises:
        DaemonError: the lock's holder is still alive after all that (or its pid is
            unknown); its socket and record are left in place.
    """
    info = probe(paths)
    record = paths.read_record() or {}
    pid = int((info or record).get("pid") or 0) or None
    if info is None and not lock_is_held(paths.lock):
        _reap(None)
        return None
    with contextlib.suppress(DaemonGone, CtxdError):
        exchange(paths, "shutdown")
    if wait_lock_free(paths.lock, timeout):
        _reap(pid)
        return pid
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if pid is None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if wait_lock_free(paths.lock, timeout):
            break
    if lock_is_held(paths.lock):
        # Still alive (no pid to signal, or it survived SIGKILL): its socket stays.
        raise DaemonError(
            f"the ctxd daemon for {paths.home} does not answer and did not stop"
            + (f" (pid {pid})" if pid else "; its pid is unknown"),
            hint=f"Find the process holding {paths.lock} (e.g. `fuser {paths.lock}`) and "
            "stop it; then run `ctxd daemon start` again.",
            details={"lock": str(paths.lock), "pid": pid},
        )
    paths.remove_leftovers()
    _reap(pid)
    return pid


def _reap(pid: int | None) -> None:
    """Collect the exit status of a daemon this process started (no zombie left)."""
    for proc in list(_spawned):
        if proc.pid == pid:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        if proc.poll() is not None:
            _spawned.remove(proc)


def connect(
    settings: Settings,
    *,
    autostart: bool,
    local: Callable[[], UseCases],
    note: Callable[[str], None] = lambda _text: None,
) -> DaemonClient | None:
    """A client of the daemon serving `settings`, or None to work in-process.

    Args:
        autostart: start a daemon when none runs (or replace an untrusted one).
        local: makes the in-process fallback (used if the daemon dies mid-request).
        note: tells the user about trouble, and that a daemon is being started (the
            CLI prints it on stderr).
    """
    try:
        paths = DaemonPaths.for_home(settings.home)
        refusals: list[CtxdError] = []
        info = probe(paths, refusals.append)
        if refusals:  # it answered, with a reason: say it, and start no second daemon
            pid = (paths.read_record() or {}).get("pid", "?")
            note(f"the ctxd daemon (pid {pid}) refused this connection: "
                 f"{refusals[0].message}; working in this process.")
            return None
        if info is not None and not protocol.trusted(info):
            note(f"the running ctxd daemon (pid {info.get('pid')}) is version "
                 f"{info.get('version')} (protocol {info.get('protocol')}); this is "
                 f"{protocol.CTXD_VERSION}: stopping it.")
            stop(paths)
            info = None
        if info is None and paths.socket.exists() and lock_is_held(paths.lock):
            # A live daemon that does not answer (stuck, or every connection taken):
            # starting another would only find its lock held.
            pid = (paths.read_record() or {}).get("pid", "?")
            note(f"the ctxd daemon (pid {pid}) does not answer within {CONNECT_TIMEOUT:g} s; "
                 "working in this process. `ctxd daemon stop` stops it.")
            return None
        if info is None and autostart:
            # The only wait a search cannot explain itself: say what takes the time.
            note(f"starting the ctxd daemon ({loading_text(paths.home)})...")
            info = start(settings, paths)
    except CtxdError as err:
        note(f"not using the ctxd daemon: {err.message}")
        return None
    if info is None:
        return None
    if info.get("settings") != protocol.settings_digest(settings):
        # Only what the daemon holds (home, model, device, precision) gets here: the
        # settings that shape a request travel with it.
        why = protocol.held_difference(settings, info.get("held") or {})
        note(f"the running ctxd daemon (pid {info.get('pid')}) holds other settings "
             f"({why or 'another ctxd'}); working in this process (the model loads here). "
             "`ctxd daemon stop` lets the next command start one with these settings.")
        return None
    return DaemonClient(settings, paths, info, local=local, note=note)


EARLY_START = "ctxd.daemon_start"
"""`ctx.meta` key of the thread `start_early` runs (`ctxd serve` joins it before `connect`)."""


def start_early(settings: Settings) -> threading.Thread:
    """Start the daemon for `settings` in a thread, now, when `connect` would start one
    (none answers, none refuses, none holds the lock): `ctxd serve` calls it before it
    imports the MCP SDK (1-3 s on a busy machine), so the two overlap (issue 41), then
    joins the thread and connects as usual. Never raises: `connect` reports trouble."""

    def run() -> None:
        try:
            paths = DaemonPaths.for_home(settings.home)
            refusals: list[CtxdError] = []
            if probe(paths, refusals.append) is None and not refusals and not (
                    paths.socket.exists() and lock_is_held(paths.lock)):
                start(settings, paths)
        except Exception:  # `connect` says what is wrong
            log.debug("starting the daemon early failed", exc_info=True)

    thread = threading.Thread(target=run, name="ctxd-daemon-start", daemon=True)
    thread.start()
    return thread
