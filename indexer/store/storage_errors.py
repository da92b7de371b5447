"""Storage failures of the index as their own error, with the path, free space and a fix.

`with storage_errors(home): ...` turns an SQLite or OS error that means the index's
storage failed (disk full, read-only file system, permission denied, I/O error) into a
`StorageError`; anything else passes through unchanged. An `OSError` counts only when it
names a path inside `home`, or for a home that cannot be created the home or a folder
above it (a repository file that cannot be read is the walker's business, not the
index's). The last one is remembered for `get_health`
(`last_storage_error`).
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ctxd.indexer.errors import StorageError
from ctxd.indexer.store.sqlite.connection import SQLiteError

_SQLITE_KINDS = (
    ("database or disk is full", "disk_full"),
    ("readonly database", "read_only"),
    ("unable to open database file", "permission_denied"),
    ("disk i/o error", "io_error"),
)
_ERRNO_KINDS = {
    errno.ENOSPC: "disk_full", errno.EDQUOT: "disk_full", errno.EROFS: "read_only",
    errno.EACCES: "permission_denied", errno.EPERM: "permission_denied", errno.EIO: "io_error",
}
_WRITE_ONLY_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
"""Errors only a write raises: inside `storage_errors(home)` only the index is written, so
they count even when they name no file (`os.write` to a descriptor)."""
_CREATE_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.EEXIST)
"""What `mkdir` of the home (or of a folder above it) fails with where no folder can be
made (`/proc/1/x`, a file in the way): `cannot_create`."""
_WHAT = {
    "cannot_create": "its folder cannot be created there",
    "disk_full": "the disk is full",
    "read_only": "the file system is read-only",
    "permission_denied": "permission denied",
    "io_error": "an I/O error",
}
_FIX = {
    "cannot_create": "Set CTXD_HOME (or --home, or `home` in the config file) to a folder "
    "you can create and write, e.g. one under your home directory.",
    "disk_full": "Free space on that file system (or set CTXD_HOME to a folder on another "
    "one), then run the same command again: the index is consistent and the next run "
    "completes it.",
    "read_only": "Remount that file system read-write, or set CTXD_HOME to a writable folder.",
    "permission_denied": "Check the owner and mode of the index folder and its files "
    "(`ls -la`): they must be yours; or set CTXD_HOME to a folder you own.",
    "io_error": "The disk reported an I/O error: check it (`dmesg`), then run the command "
    "again; `ctxd compact` rewrites the index once the disk is sound.",
}

_last: dict[str, Any] | None = None
_last_lock = threading.Lock()


def free_bytes(path: Path) -> int | None:
    """Free space for this user on the file system of `path` (or its nearest existing
    parent), None where unknown."""
    for p in (path, *path.parents):
        try:
            return shutil.disk_usage(p).free
        except OSError:
            continue
    return None


def _kind(exc: BaseException, home: Path) -> str | None:
    if isinstance(exc, SQLiteError):
        text = str(exc).lower()
        return next((kind for needle, kind in _SQLITE_KINDS if needle in text), None)
    if isinstance(exc, OSError) and not exc.filename and exc.errno in _WRITE_ONLY_ERRNOS:
        return "disk_full"  # a write to a descriptor (a lock file's pid): ours, in the home
    if isinstance(exc, OSError) and exc.filename:
        name = os.path.abspath(os.fsdecode(exc.filename))
        if exc.errno in _CREATE_ERRNOS and (name == str(home) or name in map(str, home.parents)):
            return "cannot_create"
        inside = name == str(home) or name.startswith(str(home) + os.sep)
        return _ERRNO_KINDS.get(exc.errno or 0) if inside else None
    return None


def as_storage_error(exc: BaseException, home: Path) -> StorageError | None:
    """The `StorageError` `exc` stands for (remembered for `last_storage_error`), or None
    when it is not a storage failure of the index in `home`."""
    home = Path(os.path.abspath(home))
    kind = _kind(exc, home)
    if kind is None:
        return None
    path = os.fsdecode(exc.filename) if isinstance(exc, OSError) and exc.filename else str(home)
    free = free_bytes(home)
    if kind == "io_error" and free == 0:
        kind = "disk_full"  # SQLite reports a write that found no room (its -shm) as I/O
    where = f"; {free} bytes free there" if free is not None and kind != "cannot_create" else ""
    err = StorageError(
        f"cannot write the index at {path}: {_WHAT[kind]} ({exc}){where}",
        hint=_FIX[kind],
        details={"kind": kind, "path": path, "free_bytes": free},
    )
    global _last
    with _last_lock:
        _last = {"code": err.code, "kind": kind, "message": err.message, "path": path,
                 "free_bytes": free, "at": time.time()}
    return err


@contextmanager
def storage_errors(home: Path) -> Iterator[None]:
    """Raise a `StorageError` for a storage failure of the index in `home`."""
    try:
        yield
    except (SQLiteError, OSError) as exc:
        err = as_storage_error(exc, home)
        if err is None:
            raise
        raise err from exc


def last_storage_error() -> dict[str, Any] | None:
    """The last storage failure this process reported (`at`: Unix time), or None."""
    with _last_lock:
        return dict(_last) if _last is not None else None
