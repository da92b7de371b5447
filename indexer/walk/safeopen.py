"""Opening a path the walk verified, so that a folder swapped for a symlink meanwhile
cannot lead the open outside the repository.

`open_verified(real, flags)` opens `real`, an absolute path free of symlinks (the walker's
`FileEntry.abs_path`, a directory it is about to list, an ignore file), and returns a
descriptor only when the object opened is at that very path now: the final component is
opened with `O_NOFOLLOW`, and the descriptor's own path (`/proc/self/fd/N`, which the
kernel derives from the object opened, not from the name asked for) must equal `real`.
Where `/proc` cannot answer, the path is opened component by component from `/`, each
with `O_NOFOLLOW` relative to the descriptor of the one before (`openat`), which follows
no symlink at all. `PathChanged` (an `OSError`) says the path no longer leads where the
walk saw it.

`read_regular(path, limit)` reads a small metadata file (git's `HEAD`, refs, `index`,
`commondir`; a `package.json`) the same way, after resolving its symlinks: a regular file
only (a FIFO would block the reader, a device such as `/dev/zero` never ends), at most
`limit` bytes, never a sparse file when the whole file is asked for.

Every directory the walk lists, every file read (for the index, `ctxd cat`, MCP
`file_content`), every ignore file and git's metadata files are opened through it. Uses
`os` only.

Invariant: a descriptor returned refers to the object at `real` at the time of the open,
reached through no symlink; a swap before the open makes it fail, a swap after it changes
nothing (the descriptor stays on the object it opened).
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["O_DIR", "O_FILE", "PathChanged", "open_verified", "read_regular"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
O_FILE = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_NONBLOCK", 0)
"""Flags for a regular file: no final symlink, no blocking on a FIFO swapped in."""
O_DIR = os.O_RDONLY | _NOFOLLOW | _CLOEXEC | getattr(os, "O_DIRECTORY", 0)
"""Flags for a directory to list."""

_PROC_FD = "/proc/self/fd"


class PathChanged(OSError):
    """The path leads elsewhere than when the walk saw it (a folder on it was replaced
    by a symlink, or moved); `filename` is where it leads now."""

    def __init__(self, expected: str, actual: str) -> None:
        super().__init__(errno.ELOOP, f"changed since the walk: {expected} now leads to {actual}")
        self.filename = actual


def open_verified(real: str, flags: int = O_FILE) -> int:
    """Open the symlink-free absolute path `real` and check the descriptor is that path.

    Args:
        real: an absolute path without symlinks or `..` (e.g. from `os.path.realpath`).
        flags: `O_FILE` or `O_DIR` (`O_NOFOLLOW` is always added).

    Returns:
        An open descriptor (the caller closes it).

    Raises:
        PathChanged: the descriptor is somewhere else than `real`.
        OSError: the open failed (gone, permissions, a symlink met: ELOOP / ENOTDIR).
    """
    fd = os.open(real, flags | _NOFOLLOW)
    try:
        actual = os.readlink(f"{_PROC_FD}/{fd}")
    except OSError:  # no /proc, or a path longer than the kernel reports: go by steps
        os.close(fd)
        return open_by_steps(real, flags)
    if actual != real:
        os.close(fd)
        raise PathChanged(real, actual)
    return fd


def open_by_steps(real: str, flags: int = O_FILE) -> int:
    """Open `real` one component at a time from `/`, each relative to the one before and
    with `O_NOFOLLOW`: a symlink anywhere on the path fails the open (ELOOP / ENOTDIR)."""
    if not real.startswith("/"):
        raise OSError(errno.EINVAL, f"not an absolute path: {real}")
    parts = [p for p in real.split("/") if p]
    if not parts:
        return os.open("/", flags | _NOFOLLOW)
    dir_fd = os.open("/", O_DIR)
    try:
        for part in parts[:-1]:
            if part in (".", ".."):
                raise OSError(errno.EINVAL, f"not a resolved path: {real}")
            step = os.open(part, O_DIR, dir_fd=dir_fd)
            os.close(dir_fd)
            dir_fd = step
        return os.open(parts[-1], flags | _NOFOLLOW, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def read_regular(path: str | os.PathLike[str], limit: int, *, whole: bool = False) -> bytes | None:
    """The bytes of the regular file at `path` (symlinks followed), at most `limit` of them.

    `whole`: None for a file larger than `limit` (else its first `limit` bytes), or with
    holes (git never writes a sparse file: one is a planted `truncate -s 1G`). None too
    for anything but a regular file (a FIFO, a device, a folder), a path that changed
    while it was opened, and any OSError. Never blocks: the open is non-blocking.
    """
    try:
        fd = open_verified(os.path.realpath(path), O_FILE)
    except (OSError, ValueError):
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        if whole and (st.st_size > limit or _has_holes(fd, st.st_size)):
            return None
        chunks: list[bytes] = []
        left = limit + 1 if whole else limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return None if whole and len(data) > limit else data
    except OSError:
        return None
    finally:
        os.close(fd)


def _has_holes(fd: int, size: int) -> bool:
    """Whether the file has a hole before its end (`SEEK_HOLE`; False where unknown)."""
    seek_hole = getattr(os, "SEEK_HOLE", None)
    if seek_hole is None or size == 0:
        return False
    try:
        return os.lseek(fd, 0, seek_hole) < size
    except OSError:
        return False
    finally:
        os.lseek(fd, 0, os.SEEK_SET)
