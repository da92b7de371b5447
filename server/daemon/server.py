"""The daemon process: one per index home, holding the model, the vectors and the watcher.

`Daemon(settings).run(ready=...)` takes the daemon lock (`paths.daemon_lock`; a second
daemon of the same home gives up within half a second), listens on the Unix socket (mode
0600), writes its record, starts the file watcher, loads the model and the vector matrix
in the background (when the index has vectors), and answers requests (`protocol`) until
`shutdown`, SIGTERM/SIGINT, or `daemon.idle_minutes` without requests or watched
repositories.

One thread waits on the listener and on every connection between requests (a selector),
answers handshakes itself and hands each whole request to a worker of a fixed pool (so
the service's per-thread SQLite connections stay bounded); a request runs the `Service`
method of the same name, with the request's own search/walk/chunk settings when it
carries other ones (`dispatch`: a view sharing the model and the vectors). The
daemon is the index's single writer: `index`, `remove` and `compact` run here, the
watcher too.

Invariants:
- Only this user's processes are answered: the socket is 0600 and, where the platform
  has `SO_PEERCRED`, a peer with another uid is refused before it can send a request.
  The home is private (0700, files 0600: `indexer.store.private`).
- No worker waits for a client's input: idle connections cost a descriptor; a new one
  must say hello within `HANDSHAKE_TIMEOUT`; past `MAX_CONNECTIONS` one is refused.
- The daemon exits within `HOME_CHECK_INTERVAL` once its home, lock or socket is removed
  or replaced, and then deletes only its own socket and record.
- A request never takes the daemon down (`dispatch`: errors are answers). A message that
  is not the protocol (not JSON, nested deeper than `protocol.MAX_DEPTH`) is answered
  with a `validation_error` and its connection closed.

The selector loop, the worker hand-off and the lifecycle checks share the daemon's state
(connections, in-flight requests, the stop event) under one lock, so they are one module;
how one request is answered is `dispatch`, the wire format `protocol`, the start and
discovery `lifecycle`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ctxd.indexer.errors import CtxdError, DaemonError, ValidationError
from ctxd.indexer.memory import release_free_memory
from ctxd.indexer.models import now_rfc3339
from ctxd.indexer.store.private import PRIVATE_UMASK, private_home
from ctxd.server.config import Settings
from ctxd.server.daemon import dispatch, protocol
from ctxd.server.daemon.paths import DaemonPaths, daemon_lock
from ctxd.server.first_search import LAUNCHED_ENV, remember
from ctxd.server.service import Service
from ctxd.server.watch.watcher import start_watching

log = logging.getLogger("ctxd.daemon")

WORKERS = 16
"""Requests served at once (each worker holds one SQLite connection while it lives)."""

MAX_CONNECTIONS = 256
"""Open connections at most; one more is answered with a `DaemonError` and closed."""

HANDSHAKE_TIMEOUT = 5.0
"""Seconds a new connection has to send its first message before it is closed."""

IDLE_TIMEOUT = 300.0
"""Seconds a connection may wait between requests before it is closed."""

SEND_TIMEOUT = 60.0
"""Seconds a worker's send to a client may block (one that never reads) before it gives up."""

SELECTOR_SEND_TIMEOUT = 0.5
"""The same for the handshake answers the selector thread sends itself."""

HOME_CHECK_INTERVAL = 2.0
"""How often the daemon checks that its home, lock and socket are still there."""


@dataclass(eq=False)
class _Peer:
    """One client connection, as the selector thread tracks it."""

    conn: socket.socket
    reader: protocol.LineReader
    deadline: float
    """When it is closed if it sends nothing more (monotonic)."""
    waiting: bool = True
    """Between requests (registered with the selector), not in a worker."""
    failed: bool = False
    fd: int = -1

    def __post_init__(self) -> None:
        self.fd = self.conn.fileno()


def rss_bytes() -> int | None:
    """Resident memory of this process (Linux /proc), or None where unknown."""
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end (Linux `SO_PEERCRED`), None elsewhere."""
    opt = getattr(socket, "SO_PEERCRED", None)
    if opt is None:
        return None
    creds = conn.getsockopt(socket.SOL_SOCKET, opt, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return int(uid)


class Daemon:
    """A running daemon; `run()` blocks until it stops."""

    def __init__(self, settings: Settings, *, paths: DaemonPaths | None = None) -> None:
        self.settings = settings
        self.paths = paths or DaemonPaths.for_home(settings.home)
        self.service = Service(settings, long_lived=True)
        self.started = time.time()
        self.started_at = now_rfc3339()
        self.requests = 0
        """Use-case requests answered (for `daemon_info` and the tests)."""
        self._lock = daemon_lock(self.paths.lock)
        self._digest = protocol.settings_digest(settings)
        self._state = threading.Lock()
        self._in_flight = 0
        self._last_request = time.monotonic()
        self._wake_r, self._wake_w = os.pipe()
        self._old_wakeup: int | None = None
        """The wake-up fd before `_install_signals` set ours (put back at shutdown)."""
        self._stopping = threading.Event()
        self._watcher: Any = None
        self._peers: dict[int, _Peer] = {}
        self._back: list[_Peer] = []
        self._socket_id: tuple[int, int] = (0, 0)
        self._sel: selectors.BaseSelector = selectors.DefaultSelector()
        """Made here, used (and closed) by `_serve`."""
        self._pool: ThreadPoolExecutor | None = None
        self._views = dispatch.Views(self.service, settings)

    # -- life cycle ----------------------------------------------------------------------

    def run(self, ready: Callable[[str], None] | None = None) -> int:
        """Serve until stopped. `ready(line)` is told `ready <pid>` once the socket listens,
        or `running <pid>` when another daemon already serves this home (then returns 3).

        Raises:
            DaemonError: the socket folder is unusable.
        """
        os.umask(PRIVATE_UMASK)  # whatever this process creates is its owner's only
        if not self._take_lock():
            holder = (self.paths.read_record() or {}).get("pid", "?")
            log.info("another ctxd daemon (pid %s) already serves %s", holder, self.paths.home)
            if ready is not None:
                ready(f"running {holder}")
            return 3
        self.paths.rotate_log()
        listener = self._listen()
        try:
            self.paths.write_record({
                "pid": os.getpid(), "socket": str(self.paths.socket),
                "version": protocol.CTXD_VERSION, "protocol": protocol.PROTOCOL,
                "started_at": self.started_at, "home": str(self.paths.home),
            })
            # The query encoder first: a client's first search waits for it, not for the
            # watcher (issue 41).
            threading.Thread(target=self._warm, name="ctxd-daemon-warm", daemon=True).start()
            self._start_watcher()
            self._install_signals()
            log.info("ctxd daemon %s (pid %d) listening on %s", protocol.CTXD_VERSION,
                     os.getpid(), self.paths.socket)
            if ready is not None:
                ready(f"ready {os.getpid()}")
            self._serve(listener)
        finally:
            self._shutdown(listener)
        return 0

    def _take_lock(self) -> bool:
        """The daemon lock; retried for half a second, because a client checking for a dead
        daemon holds it (shared) for an instant (`paths.lock_is_held`)."""
        return self._lock.try_acquire(wait=0.5)

    def stop(self) -> None:
        """Ask `run` to return (safe from any thread and from a signal handler)."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _listen(self) -> socket.socket:
        private_home(self.paths.home)
        self.paths.remove_leftovers()  # we hold the lock: whatever is there is stale
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is created 0600, never briefly open to others
        try:
            listener.bind(str(self.paths.socket))
        finally:
            os.umask(old)
        os.chmod(self.paths.socket, 0o600)
        st = os.stat(self.paths.socket)
        self._socket_id = (st.st_dev, st.st_ino)
        listener.listen(64)
        return listener

    def _install_signals(self) -> None:
        """SIGTERM and SIGINT stop the daemon. The kernel hands a signal to any one of the
        process's threads, and Python runs the handler in the main thread only at its next
        bytecode: a worker's signal would wait for the selector's next timeout (the home
        check, `HOME_CHECK_INTERVAL`). So the signal's C-level handler also writes to the wake pipe
        (`signal.set_wakeup_fd`), which wakes the selector at once."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda _s, _f: self.stop())
        os.set_blocking(self._wake_w, False)  # set_wakeup_fd wants it; `stop` skips a full pipe
        self._old_wakeup = signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)

    def _start_watcher(self) -> None:
        try:
            # Not handed to the service as its `watcher`: status and health read the
            # watcher's status file, as they do in any other process, so an answer is the
            # same whether the daemon or the client computed it.
            self._watcher = start_watching(self.service, self.settings)
        except (CtxdError, OSError) as err:
            log.warning("not watching files: %s", getattr(err, "message", err))

    def _warm(self) -> None:
        """Load the model and the vector matrix now, and start building the keyword
        postings and symbol names (large indexes), so the first query does not wait."""
        try:
            if not self.settings.store.shared and not self.settings.db_path.exists():
                return  # nothing indexed yet: the first index run loads the model
            store = self.service.store()
            self.service.postings(store)  # start the background builds where due
            self.service.symbol_names(store)
            if store.vector_state()[0] == 0:
                return
            vector = self.service.embedder.embed(["warm up"])[0].tolist()
            if self.service.matrix is not None:  # loaded, and its first product run
                self.service.matrix.knn(store, vector, 1)
            self.service.warm_caches(store)
            launched = os.environ.get(LAUNCHED_ENV)  # what a client's first search waited
            if launched:
                with contextlib.suppress(ValueError):
                    remember(self.paths.home, time.time() - float(launched))
        except Exception:
            log.exception("warming the model failed; queries will load it")

    def _shutdown(self, listener: socket.socket) -> None:
        listener.close()
        if self._watcher is not None:
            with contextlib.suppress(Exception):
                self._watcher.stop()
        self._remove_own_files()
        self.service.close()  # the views' connections too: they are the service's
        self._lock.release()
        if self._old_wakeup is not None:
            signal.set_wakeup_fd(self._old_wakeup)
            self._old_wakeup = None
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)
        log.info("ctxd daemon (pid %d) stopped", os.getpid())

    # -- serving -------------------------------------------------------------------------

    def _idle_timeout(self) -> float | None:
        """Seconds until the idle exit, None when it cannot happen now."""
        limit = self.settings.daemon.idle_minutes * 60
        if limit <= 0:
            return None
        with self._state:
            if self._in_flight:
                return None
            left = self._last_request + limit - time.monotonic()
        if self._watching():
            return None
        return max(0.0, left)

    def _watching(self) -> bool:
        w = self._watcher
        if w is None or not w.running:
            return False
        health = w.health()
        return bool(health.get("repos")) and health.get("role") == "active"

    def _serve(self, listener: socket.socket) -> None:
        """One thread waits on the listener and on every connection between requests
        (a selector): it reads what arrives, answers `hello` itself and hands each whole
        request to a worker. So no worker waits for a client's input, a connection that
        says nothing within `HANDSHAKE_TIMEOUT` (or stays idle `IDLE_TIMEOUT`) is closed,
        and past `MAX_CONNECTIONS` a new one is refused with an error answer."""
        sel = self._sel
        sel.register(listener, selectors.EVENT_READ, None)
        sel.register(self._wake_r, selectors.EVENT_READ, None)
        last_rotate = last_check = time.monotonic()
        with ThreadPoolExecutor(WORKERS, thread_name_prefix="ctxd-daemon") as pool:
            self._pool = pool
            while not self._stopping.is_set():
                idle = self._idle_timeout()
                now = time.monotonic()
                wake = min([now + HOME_CHECK_INTERVAL, now + (60.0 if idle is None else idle),
                            *(p.deadline for p in self._waiting())])
                events = sel.select(max(0.0, wake - now))
                # Connections first: those that closed free their place before a new one
                # is counted against MAX_CONNECTIONS.
                for key, _ in sorted(events, key=lambda e: e[0].fileobj is listener):
                    if key.fileobj is listener:
                        self._accept(listener)
                    elif key.fileobj == self._wake_r:
                        os.read(self._wake_r, 4096)
                    else:
                        self._readable(key.data)
                self._take_back()
                now = time.monotonic()
                self._expire(now)
                if now - last_check >= HOME_CHECK_INTERVAL:
                    last_check = now
                    if (lost := self._home_lost()) is not None:
                        log.warning("%s: exiting", lost)
                        self.stop()
                if idle is not None and self._idle_timeout() == 0.0:
                    log.info("idle for %.1f minutes: exiting", self.settings.daemon.idle_minutes)
                    self.stop()
                elif now - last_rotate >= 60.0:
                    last_rotate = now
                    self.paths.rotate_log()
                    release_free_memory()
            self._stopping.set()
            self._hang_up()
        self._take_back()  # the connections whose last request finished: closed
        sel.close()

    def _waiting(self) -> list[_Peer]:
        with self._state:
            return [p for p in self._peers.values() if p.waiting]

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except OSError as exc:  # out of descriptors, say: the others are still served
            log.warning("accepting a connection failed: %s", exc)
            return
        # Between requests this thread only reads what select says is there; a send of
        # a handshake answer to a client that never reads gives up quickly.
        conn.settimeout(SELECTOR_SEND_TIMEOUT)
        uid = peer_uid(conn)
        refusal = None
        if uid is not None and uid != os.getuid():
            log.warning("refused a connection from uid %d", uid)
            refusal = DaemonError(
                f"this ctxd daemon serves uid {os.getuid()} only; refused uid {uid}",
                hint="Each user runs their own daemon for their own index home "
                "(CTXD_HOME); use yours, or work without one (--no-daemon).",
                details={"uid": uid, "serves": os.getuid()})
        elif len(self._peers) >= MAX_CONNECTIONS:
            log.warning("refused a connection: %d connections are open", len(self._peers))
            refusal = DaemonError(
                f"the ctxd daemon (pid {os.getpid()}) has {MAX_CONNECTIONS} connections open "
                "and takes no more now",
                hint="Close idle clients of this daemon, or work without it (--no-daemon).",
                details={"connections": len(self._peers)})
        if refusal is not None:
            with contextlib.suppress(OSError):
                protocol.send(conn, {"id": None, "error": protocol.error_to_wire(refusal)})
            conn.close()
            return
        peer = _Peer(conn, protocol.LineReader(conn), time.monotonic() + HANDSHAKE_TIMEOUT)
        with self._state:
            self._peers[conn.fileno()] = peer
        self._sel.register(conn, selectors.EVENT_READ, peer)

    def _readable(self, peer: _Peer) -> None:
        """Read what a waiting connection sent; hand a whole request to a worker. Nothing
        a client sends can end this thread (and with it the daemon): a message that is not
        the protocol is answered with a `validation_error` and its connection closed."""
        try:
            if not peer.reader.fill():
                self._drop(peer)
                return
            self._next(peer)
        except protocol.ProtocolError as exc:
            self._refuse(peer, exc)
        except OSError as exc:
            log.debug("connection ended: %s", exc)
            self._drop(peer)
        except Exception:
            log.exception("reading a request failed; closing that connection")
            self._drop(peer)

    def _refuse(self, peer: _Peer, exc: protocol.ProtocolError) -> None:
        """Answer a message that is not the protocol (id unknown: null), then close."""
        log.info("refused a message that is not the protocol: %s", exc)
        err = ValidationError(f"not a ctxd daemon request: {exc}",
                              hint="Send one JSON object per line: {\"id\", \"method\", "
                              "\"params\"} (server/daemon/protocol.py).",
                              details={"field": "message"})
        with contextlib.suppress(OSError):
            protocol.send(peer.conn, {"id": None, "error": protocol.error_to_wire(err)})
        self._drop(peer)

    def _next(self, peer: _Peer) -> None:
        """Start the next request `peer` has sent in full, if any (it waits meanwhile)."""
        while (msg := peer.reader.take()) is not None:
            protocol.check_depth(msg)  # before anything recurses over it
            if msg.get("method") == "hello":  # answered here: a handshake never queues
                protocol.send(peer.conn, {"id": msg.get("id"), "result": self.info()})
                peer.deadline = time.monotonic() + IDLE_TIMEOUT
                continue
            self._sel.unregister(peer.conn)
            peer.waiting = False
            assert self._pool is not None  # set by `_serve` before any connection
            self._pool.submit(self._work, peer, msg)
            return

    def _work(self, peer: _Peer, msg: dict[str, Any]) -> None:
        try:
            peer.conn.settimeout(SEND_TIMEOUT)
            self._request(peer.conn, msg)
            peer.conn.settimeout(SELECTOR_SEND_TIMEOUT)
        except OSError as exc:
            log.debug("connection ended: %s", exc)
            peer.failed = True
        except Exception:  # a bug here must reach the log, not vanish in the executor
            log.exception("connection failed")
            peer.failed = True
        with self._state:
            self._back.append(peer)
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")

    def _take_back(self) -> None:
        """Connections whose request is answered wait for their next one (selector thread)."""
        with self._state:
            back, self._back = self._back, []
        for peer in back:
            if peer.failed or self._stopping.is_set():
                self._drop(peer, registered=False)
                continue
            peer.waiting = True
            peer.deadline = time.monotonic() + IDLE_TIMEOUT
            self._sel.register(peer.conn, selectors.EVENT_READ, peer)
            try:
                self._next(peer)
            except protocol.ProtocolError as exc:
                self._refuse(peer, exc)
            except OSError:
                self._drop(peer)

    def _expire(self, now: float) -> None:
        for peer in self._waiting():
            if peer.deadline <= now:
                log.debug("closing a connection idle past its deadline")
                self._drop(peer)

    def _drop(self, peer: _Peer, *, registered: bool = True) -> None:
        if registered:
            with contextlib.suppress(KeyError, ValueError):
                self._sel.unregister(peer.conn)
        with self._state:
            self._peers.pop(peer.fd, None)
        peer.conn.close()

    def _home_lost(self) -> str | None:
        """Why this daemon no longer serves its home (its folder, lock or socket was
        removed or replaced), or None."""
        if not self.paths.home.is_dir():
            return f"the index home {self.paths.home} is gone"
        if not self._lock.still_at_path():
            return f"the daemon lock {self.paths.lock} was removed or replaced"
        if not self._socket_is_ours():
            return f"the socket {self.paths.socket} was removed or replaced"
        return None

    def _remove_own_files(self) -> None:
        """Delete our socket and record, not those of a daemon started since for a new home
        at the same path (after ours was removed)."""
        if self._socket_is_ours():
            with contextlib.suppress(OSError):
                self.paths.socket.unlink()
        if (self.paths.read_record() or {}).get("pid") == os.getpid():
            with contextlib.suppress(OSError):
                self.paths.record.unlink()

    def _socket_is_ours(self) -> bool:
        try:
            st = os.stat(self.paths.socket)
        except OSError:
            return False
        return (st.st_dev, st.st_ino) == self._socket_id

    def _hang_up(self) -> None:
        """Close every connection waiting for input; a request in progress still sends its
        answer, then its connection ends, so the pool's shutdown never waits on a client."""
        for peer in self._waiting():
            self._drop(peer)
        with self._state:
            conns = [p.conn for p in self._peers.values()]
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RD)

    def _request(self, conn: socket.socket, msg: dict[str, Any]) -> None:
        method = str(msg.get("method"))
        with self._state:
            self._in_flight += 1
            self._last_request = time.monotonic()
            if method not in ("hello", "daemon_info"):
                self.requests += 1
        try:
            answer = dispatch.answer(conn, msg, views=self._views,
                                     info=lambda detail: self.info(detail=detail),
                                     should_stop=self._stopping.is_set)
        finally:
            with self._state:
                self._in_flight -= 1
                self._last_request = time.monotonic()
        protocol.send(conn, answer)
        if method == "shutdown":
            self.stop()

    def info(self, *, detail: bool = False) -> dict[str, Any]:
        """What the handshake and `ctxd daemon status` report."""
        out: dict[str, Any] = {
            "protocol": protocol.PROTOCOL,
            "version": protocol.CTXD_VERSION,
            "pid": os.getpid(),
            "started_at": self.started_at,
            "settings": self._digest,
            "held": protocol.held_settings(self.settings),
            "socket": str(self.paths.socket),
            "home": str(self.paths.home),
        }
        if detail:
            w = self._watcher
            out.update({
                "uptime_s": round(time.time() - self.started, 1),
                "rss_bytes": rss_bytes(),
                "model": self.settings.embedding.model,
                "model_loaded": self.service.model_loaded,
                "requests": self.requests,
                "watching": sorted(w.health().get("repos", {})) if w is not None else [],
                "idle_minutes": self.settings.daemon.idle_minutes,
            })
        return out
