"""Where a daemon's files live, and the daemon lock that makes it one per index home.

`DaemonPaths.for_home(home)` names them:

- `<home>/daemon.sock`: the Unix domain socket (mode 0600). When that path is longer than
  `AF_UNIX` allows (107 bytes on Linux, 103 on macOS), the socket goes to
  `$XDG_RUNTIME_DIR/ctxd-<hash>.sock`, else `/tmp/ctxd-<uid>/ctxd-<hash>.sock` (the folder
  mode 0700 and owned by this user; when another user took that name first, a private
  `/tmp/ctxd-<uid>-XXXXXXXX` named in `<home>/daemon.rundir`). `<hash>` is derived from
  the home, so the client and the daemon compute the same path; the daemon also records
  it. The home itself must be this user's and private (`private.check_home`).
- `<home>/daemon.lock`: held (`flock`) by the running daemon for its whole life. The kernel
  drops it when the process dies, even on `kill -9`, so "is the lock free?" tells a stale
  socket from a live one, and of two daemons started at once only one gets it.
- `<home>/daemon.json`: the running daemon's record (pid, socket, version, start time).
- `<home>/daemon.log`: stdout and stderr of a daemon started in the background; the
  daemon moves it to `daemon.log.1` past 1 MiB (at start and once a minute when idle).

Reads and writes only these files; knows nothing of requests.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ctxd.indexer.errors import DaemonError
from ctxd.indexer.store.lock import FileLock
from ctxd.indexer.store.private import check_home, private_home
from ctxd.server.watch_state import write_status

log = logging.getLogger("ctxd.daemon")

LOG_MAX_BYTES = 1 << 20
"""`daemon.log` is rotated (one old copy, `daemon.log.1`) once it grows past this."""

MAX_SOCKET_PATH = 103 if sys.platform == "darwin" else 107
"""Longest `AF_UNIX` path in bytes (the kernel's `sun_path` less its terminating NUL)."""


def fits_af_unix(path: Path) -> bool:
    return len(os.fsencode(str(path))) <= MAX_SOCKET_PATH


def runtime_dir(env: dict[str, str] | None = None, home: Path | None = None) -> Path:
    """A private folder for sockets: `$XDG_RUNTIME_DIR`, else `/tmp/ctxd-<uid>` (0700).

    When `/tmp/ctxd-<uid>` is taken (another user created it first, or it is open to
    others) and `home` is given, a folder of this user's own with a random name
    (`/tmp/ctxd-<uid>-XXXXXXXX`, 0700, made by `mkdtemp`) is used instead, and its path
    kept in the private home (`daemon.rundir`), so the client and the daemon find the same
    one (issue 39, item 13): nobody can deny the daemon by guessing a name first.

    Raises:
        DaemonError: `/tmp/ctxd-<uid>` exists but belongs to another user or is open to
            others, and no `home` to record a private folder in was given.
    """
    env = dict(os.environ) if env is None else env
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg)
    folder = Path(tempfile.gettempdir()) / f"ctxd-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = folder.lstat()
    if _private_folder(folder):
        return folder
    why = (f"it must be a folder owned by uid {os.getuid()} with mode 0700 (found uid "
           f"{st.st_uid}, mode {stat.S_IMODE(st.st_mode):o})")
    if home is not None:
        return _fallback_dir(folder, why, home)
    raise DaemonError(
        f"refusing the socket folder {folder}: {why}",
        hint=f"Remove {folder}, or set XDG_RUNTIME_DIR to a private folder, or use a "
        "shorter CTXD_HOME.",
        details={"field": "socket", "value": str(folder)},
    )


RUNDIR_RECORD = "daemon.rundir"
"""The file in the home that names its private socket folder when `/tmp/ctxd-<uid>` is
taken (`runtime_dir`)."""


def _private_folder(folder: Path) -> bool:
    try:
        st = folder.lstat()
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & 0o077)


def _fallback_dir(taken: Path, why: str, home: Path) -> Path:
    """The private socket folder recorded in `home`, or a new one (`runtime_dir`)."""
    record = home / RUNDIR_RECORD
    private_home(home)
    for _attempt in range(3):
        try:
            recorded = Path(record.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            recorded = None
        if (recorded is not None and recorded.parent == taken.parent
                and recorded.name.startswith(f"{taken.name}-") and _private_folder(recorded)):
            return recorded
        made = Path(tempfile.mkdtemp(prefix=f"{taken.name}-", dir=taken.parent))
        tmp = home / f".{RUNDIR_RECORD}.{os.getpid()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"{made}\n")
        if recorded is None:
            try:
                os.link(tmp, record)  # the first process to record one wins
            except FileExistsError:
                os.unlink(tmp)
                os.rmdir(made)
                continue
            os.unlink(tmp)
        else:
            os.replace(tmp, record)  # the recorded one is gone or no longer private
        log.warning("the socket folder %s is not usable (%s): using the private folder %s",
                    taken, why, made)
        return made
    raise DaemonError(
        f"refusing the socket folder {taken}: {why}; no private folder could be recorded "
        f"in {record}",
        hint=f"Remove {taken}, or set XDG_RUNTIME_DIR to a private folder, or use a "
        "shorter CTXD_HOME.",
        details={"field": "socket", "value": str(taken)},
    )


@dataclass(frozen=True, slots=True)
class DaemonPaths:
    """The files of the daemon of one index home."""

    home: Path
    socket: Path
    lock: Path
    record: Path
    log: Path

    @classmethod
    def for_home(cls, home: Path, env: dict[str, str] | None = None) -> DaemonPaths:
        """Raises: DaemonError (see `runtime_dir`); ConfigError: the home, or a daemon
        file in it, is another user's or writable by others (`private.check_home`)."""
        home = Path(os.path.abspath(home))
        check_home(home)  # before its record is believed
        sock = home / "daemon.sock"
        if not fits_af_unix(sock):
            digest = hashlib.sha256(os.fsencode(str(home))).hexdigest()[:16]
            sock = runtime_dir(env, home) / f"ctxd-{digest}.sock"
            if not fits_af_unix(sock):
                raise DaemonError(
                    f"no usable socket path for {home}: {sock} is longer than "
                    f"{MAX_SOCKET_PATH} bytes",
                    hint="Set XDG_RUNTIME_DIR to a short private folder, or use a shorter "
                    "CTXD_HOME.",
                    details={"field": "socket", "value": str(sock)},
                )
        paths = cls(home=home, socket=sock, lock=home / "daemon.lock",
                    record=home / "daemon.json", log=home / "daemon.log")
        recorded = (paths.read_record() or {}).get("socket")
        if isinstance(recorded, str) and recorded != str(sock) and os.path.exists(recorded):
            # A daemon started with another XDG_RUNTIME_DIR (a systemd unit, say).
            paths = replace(paths, socket=Path(recorded))
        return paths

    # -- the record -------------------------------------------------------------------

    def read_record(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def write_record(self, data: dict[str, Any]) -> None:
        write_status(self.record, data)

    def rotate_log(self, max_bytes: int = LOG_MAX_BYTES) -> bool:
        """Move `daemon.log` to `daemon.log.1` (replacing it) once it is over `max_bytes`,
        and point this process's stdout and stderr at a fresh `daemon.log`. Only when they
        write to that file (a daemon started in the background; call with the daemon lock
        held, so one process rotates); returns whether it rotated."""
        try:
            st = os.fstat(1)
            log = os.stat(self.log)
        except OSError:
            return False
        if (st.st_dev, st.st_ino) != (log.st_dev, log.st_ino) or log.st_size <= max_bytes:
            return False
        sys.stdout.flush()
        sys.stderr.flush()
        os.replace(self.log, self.log.with_name(self.log.name + ".1"))
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.dup2(fd, 1)
            os.dup2(fd, 2)
        finally:
            os.close(fd)
        return True

    def remove_leftovers(self) -> None:
        """Delete the socket and record of a daemon that is gone (call only while the
        daemon lock is free or held by us)."""
        for p in (self.socket, self.record):
            try:
                p.unlink()
            except FileNotFoundError:
                pass


def daemon_lock(path: Path) -> FileLock:
    """The lock a daemon holds for its lifetime (`<home>/daemon.lock`, mode 0600)."""
    return FileLock(path, mode=0o600)


def lock_is_held(path: Path) -> bool:
    """Whether a live daemon holds the lock at `path` (`FileLock.is_held`)."""
    return daemon_lock(path).is_held()


def wait_lock_free(path: Path, timeout: float) -> bool:
    """Block until no process holds the lock at `path` (the daemon exited), or `timeout`.

    A blocking `flock` in a helper thread: woken by the kernel when the holder goes, no
    polling. Returns whether it became free in time.
    """
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDWR)
    freed = threading.Event()

    def take() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.flock(fd, fcntl.LOCK_UN)
            freed.set()
        finally:
            os.close(fd)

    threading.Thread(target=take, name="ctxd-daemon-wait", daemon=True).start()
    return freed.wait(timeout)
