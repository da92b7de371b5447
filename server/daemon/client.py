"""Talking to a running daemon: `DaemonClient`, the `UseCases` of the daemon's `Service`.

`DaemonClient(settings, paths, info, local=...)` sends each use case over the daemon's
socket (`protocol`) and returns the records the daemon's service returned, so the CLI and
`ctxd serve` render them exactly as they render an in-process `Service`'s. `index`
relays the daemon's progress events to the caller's `progress` callback.

When the daemon goes away in the middle of a request (killed, crashed, restarted), the
client says so through `note` (the CLI prints it on stderr) and runs that request, and
every later one, on `local()`: an in-process `Service`.

`exchange(paths, method, params)` is the bare request used by discovery and
`ctxd daemon status|stop`. Imports no model, watcher or MCP code.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxd.indexer.errors import CtxdError, DaemonError
from ctxd.server.config import Settings
from ctxd.server.daemon import protocol
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.use_cases import UseCases

if TYPE_CHECKING:  # annotations only (start-up time)
    from ctxd.indexer.models import IndexStats, ProgressFn

log = logging.getLogger("ctxd.daemon.client")

CONNECT_TIMEOUT = 5.0
"""Seconds to connect and finish the handshake (the daemon answers it without waiting for
a worker, so only a stuck daemon takes longer: on a busy machine a daemon loading its
model took over 2 s, and a client that gave up then loaded a second model in-process);
requests themselves have no time limit (a first query may wait for the model to load, an
index run takes what it takes)."""

_ids = itertools.count(1)

_BACKLOG_RETRY = 0.01
"""Seconds between tries while the daemon's listen backlog is full."""


def connect_socket(path: Path, timeout: float) -> socket.socket:
    """A stream socket connected to the Unix socket at `path`, with `timeout` set.

    A Unix socket with a timeout is non-blocking underneath, and Linux answers its
    `connect` with EAGAIN at once when the listener's backlog is full (a daemon busy
    accepting a burst of clients) instead of waiting as a blocking connect would: retry
    until `timeout` runs out, then raise that error.

    Raises:
        OSError: refused, no such socket, or the backlog stayed full for `timeout` s.
    """
    deadline = time.monotonic() + timeout
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
            return sock
        except BlockingIOError:
            sock.close()
            if time.monotonic() + _BACKLOG_RETRY >= deadline:
                raise
            time.sleep(_BACKLOG_RETRY)
        except BaseException:
            sock.close()
            raise


def _check_peer(sock: socket.socket, path: Path) -> None:
    """Refuse (closing `sock`) a socket whose other end is not a process of this user
    (Linux `SO_PEERCRED`; unchecked where there is none): another user listening at the
    path is never taken for the daemon, and never sees a request (issue 39, item 2).

    Raises:
        DaemonError: naming the socket and the uid found there.
    """
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return
    try:
        _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, opt,
                                                              struct.calcsize("3i")))
    except OSError:
        return
    if uid != os.geteuid():
        sock.close()
        raise DaemonError(
            f"refusing the daemon socket {path}: the process listening on it runs as uid "
            f"{uid}, not as you (uid {os.geteuid()})",
            hint="Another user may have put it there: check the index home and the socket "
            "folder (XDG_RUNTIME_DIR); ctxd works in this process meanwhile.",
            details={"field": "socket", "value": str(path), "uid": uid})


class DaemonGone(Exception):
    """The daemon's socket refused us or closed before the answer came."""


class Connection:
    """One connection to the daemon, handshake done."""

    def __init__(self, paths: DaemonPaths, settings_digest: str = "") -> None:
        try:
            sock = connect_socket(paths.socket, CONNECT_TIMEOUT)
        except OSError as exc:
            raise DaemonGone(f"cannot connect to {paths.socket}: {exc.strerror or exc}") from exc
        _check_peer(sock, paths.socket)
        self.sock = sock
        self.reader = protocol.LineReader(sock)
        try:
            self.info: dict[str, Any] = self.request("hello", {
                "protocol": protocol.PROTOCOL, "version": protocol.CTXD_VERSION,
                "settings": settings_digest})
        except BaseException:
            sock.close()  # a refused or timed-out handshake must not leak the socket
            raise
        sock.settimeout(None)

    def close(self) -> None:
        self.sock.close()

    def request(
        self, method: str, params: dict[str, Any],
        on_event: Callable[[str, Any], None] | None = None,
        settings: dict[str, Any] | None = None,
    ) -> Any:
        """Send one request (with the `protocol.request_settings` it is to be answered
        with, when given); return its decoded result.

        Raises:
            CtxdError: the daemon answered with an error (the same class it raised).
            DaemonGone: the connection broke before the answer.
        """
        rid = next(_ids)
        try:
            message = {"id": rid, "method": method, "params": protocol.encode(params)}
            if settings is not None:
                message["settings"] = settings
            try:
                protocol.send(self.sock, message)
            except OSError:
                # A daemon that refuses a connection (all taken, another user) answers
                # at once and closes: its reason may be waiting to be read.
                refusal = self.reader.receive()
                if refusal is not None and "error" in refusal:
                    raise protocol.error_from_wire(refusal["error"]) from None
                raise
            while True:
                msg = self.reader.receive()
                if msg is None:
                    raise DaemonGone("the daemon closed the connection")
                if "event" in msg:
                    if on_event is not None:
                        on_event(str(msg["event"]), protocol.decode(msg.get("data")))
                    continue
                if "error" in msg:
                    raise protocol.error_from_wire(msg["error"])
                return protocol.decode(msg.get("result"))
        except (OSError, protocol.ProtocolError) as exc:
            raise DaemonGone(str(exc) or type(exc).__name__) from exc


def exchange(paths: DaemonPaths, method: str, params: dict[str, Any] | None = None) -> Any:
    """Connect, shake hands, send one request, close.

    Raises:
        DaemonGone: no daemon answers at `paths.socket`.
        CtxdError: the daemon's error answer.
    """
    conn = Connection(paths)
    try:
        return conn.request(method, params or {})
    finally:
        conn.close()


class DaemonClient(UseCases):
    """`UseCases` answered by the daemon, with an in-process fallback."""

    def __init__(
        self,
        settings: Settings,
        paths: DaemonPaths,
        info: dict[str, Any],
        *,
        local: Callable[[], UseCases],
        note: Callable[[str], None] = lambda _text: None,
    ) -> None:
        self.settings = settings
        self.paths = paths
        self.info = info
        self._digest = protocol.settings_digest(settings)
        self._request_settings = protocol.request_settings(settings)
        self._make_local = local
        self._local: UseCases | None = None
        self._note = note
        self._said_gone = False

    @property
    def pid(self) -> int:
        return int(self.info.get("pid", 0))

    def _fallback(self) -> UseCases:
        if self._local is None:
            self._local = self._make_local()
        return self._local

    def _call(
        self, method: str, params: dict[str, Any], *,
        progress: ProgressFn | None = None,
        on_lock_wait: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> Any:
        def on_event(kind: str, data: Any) -> None:
            if kind == "progress" and progress is not None:
                progress(data)
            elif kind == "lock_wait" and on_lock_wait is not None:
                on_lock_wait(str(data))

        # Every call tries the daemon first: one that left (idle exit, `ctxd daemon stop`,
        # a crash) may be back, started by another client; until then this process works.
        try:
            try:
                conn = Connection(self.paths, self._digest)
            except CtxdError as err:  # refused: too many connections, say
                raise DaemonGone(err.message) from err
            if not (protocol.trusted(conn.info) and conn.info.get("settings") == self._digest):
                conn.close()  # replaced since `connect` checked it
                raise DaemonGone(f"the daemon answering now (pid {conn.info.get('pid')}) runs "
                                 "another ctxd or holds another model")
        except DaemonGone as exc:
            if not self._said_gone:
                self._note(f"ctxd daemon (pid {self.pid}) does not answer ({exc}); "
                           "working in this process until one answers again.")
                self._said_gone = True
            log.info("daemon unreachable for %s: %s", method, exc)
        else:
            self._said_gone = False
            try:
                return conn.request(method, params, on_event, self._request_settings)
            except DaemonGone as exc:
                self._note(f"ctxd daemon (pid {self.pid}) went away during `{method}` "
                           f"({exc}); running it in this process instead.")
                log.info("daemon gone during %s: %s", method, exc)
            finally:
                conn.close()
        fn = getattr(self._fallback(), method)
        if method == "index":
            return fn(**params, progress=progress, on_lock_wait=on_lock_wait, lock_wait=None,
                      should_stop=should_stop)
        return fn(**params)

    # -- the use cases -------------------------------------------------------------------

    def answer(self, name: str, request: Any) -> Any:
        """Send a request record's fields as the params of use case `name`."""
        return self._call(name, asdict(request))

    def index(
        self,
        path: str | Path,
        *,
        include_patterns: list[str] | None = None,
        exclude_patterns: list[str] | None = None,
        max_file_size: int | None = None,
        dry_run: bool = False,
        progress: ProgressFn | None = None,
        lock_wait: float | None = None,
        on_lock_wait: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        force: bool = False,
        reset_options: bool = False,
    ) -> IndexStats:
        """Index through the daemon. `should_stop` applies only when the run falls back to
        this process: the daemon is the index's writer and finishes a run it started even
        when this client goes away (the next run would resume it anyway)."""
        from ctxd.indexer.walk.walker import validate_root  # the walker loads lazily

        # The daemon has its own working folder: resolve here, with the same errors.
        root = str(validate_root(path))
        stats: IndexStats = self._call(
            "index", {"path": root, "include_patterns": include_patterns,
                      "exclude_patterns": exclude_patterns, "max_file_size": max_file_size,
                      "dry_run": dry_run, "force": force, "reset_options": reset_options},
            progress=progress, on_lock_wait=on_lock_wait, should_stop=should_stop)
        return stats

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = self._call("status", {})
        return out

    def list_repos(self, filter: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = self._call("list_repos", {"filter": filter})
        return out

    def health(self) -> dict[str, Any]:
        out: dict[str, Any] = self._call("health", {})
        return out

    def repo_roots(self) -> dict[str, str]:
        out: dict[str, str] = self._call("repo_roots", {})
        return out

    def freshness(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = self._call("freshness", {})
        return out

    def remove(self, name_or_path: str) -> dict[str, Any]:
        target = name_or_path
        if not os.path.isabs(target) and os.path.isdir(target):
            # A folder relative to our working folder, unless it is also a repository name.
            names = {r["name"] for r in self._call("repos", {})}
            if target not in names:
                target = str(Path(target).resolve())
        out: dict[str, Any] = self._call("remove", {"name_or_path": target})
        return out

    def compact(self) -> dict[str, Any]:
        out: dict[str, Any] = self._call("compact", {})
        return out

    def close(self) -> None:
        if self._local is not None:
            self._local.close()
