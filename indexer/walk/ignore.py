"""Ignore files: `.gitignore`, `.ctxdignore` and `.git/info/exclude`, with git's semantics.

`load_ignore_file(path, base, source)` reads and compiles one file into an `IgnoreFile`
(`pathspec.GitIgnoreSpec`, patterns relative to the folder `base`);
`ignore_sources(rel_dir)` names the ignore files a folder may hold, lowest precedence
first; `ignored_by(chain, rel, is_dir)` answers whether the chain of files from the root
down to a path's folder ignores it, and by which rule. `IgnoreCache` keeps each folder's
files between calls and re-reads one when its stat changes.

Callers: `indexer.walk.walker` (`walk` loads each folder's files as it descends) and
`indexer.walk.filefilter` (`FileFilter` keeps an `IgnoreCache`). Calls `pathspec`; reads
the ignore files and nothing else.

Invariants: a nested file applies relative to its folder; in a chain the deepest file
with an opinion decides (a negation is an opinion), so a deeper file overrides a
shallower one and `.ctxdignore` overrides `.gitignore` in the same folder; lines
pathspec refuses are dropped, as git drops them; an unreadable file or one without a
rule counts as absent.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass

from pathspec import GitIgnoreSpec

from ctxd.indexer.walk.pathguard import is_inside
from ctxd.indexer.walk.safeopen import O_FILE, open_verified

log = logging.getLogger(__name__)

__all__ = [
    "IGNORE_FILE_NAMES",
    "IgnoreCache",
    "IgnoreFile",
    "ignore_sources",
    "ignored_by",
    "load_ignore_file",
]

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ctxdignore")
"""Per-directory ignore files, lowest precedence first."""

GIT_INFO_EXCLUDE = ".git/info/exclude"

MAX_IGNORE_FILE = 100 << 20
"""An ignore file larger than this is not read (git's own limit, 100 MiB)."""


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """One compiled ignore file and the directory its patterns are relative to."""

    base: str
    """Repo-relative directory (`""` = root)."""
    source: str
    """Repo-relative path of the file, for `Skipped.detail`."""
    spec: GitIgnoreSpec


def load_ignore_file(path: str, base: str, source: str) -> IgnoreFile | None:
    """Read and compile one ignore file; None when unreadable or without a rule.

    `path` is symlink-free: the file is opened through `safeopen.open_verified`, so a
    symlinked ignore file, or one reached through a folder swapped for a link, counts as
    absent (git too leaves symlinked `.gitignore` files alone), as does anything but a
    regular file (a FIFO would block) or a file over `MAX_IGNORE_FILE`. Lines pathspec
    refuses (e.g. a lone `!`) are dropped, as git drops them.
    """
    lines = _read_lines(path)
    if lines is None:
        return None
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except ValueError:
        spec = GitIgnoreSpec.from_lines([line for line in lines if _valid_ignore_line(line)])
    if not any(p.include is not None for p in spec.patterns):
        return None
    return IgnoreFile(base, source, spec)


def _read_lines(path: str) -> list[str] | None:
    try:
        fd = open_verified(path, O_FILE)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > MAX_IGNORE_FILE:
                log.warning("ignoring %s: %d bytes, over %d", path, st.st_size, MAX_IGNORE_FILE)
                return None
            return fh.read(MAX_IGNORE_FILE).splitlines()
        except OSError:
            return None


def _valid_ignore_line(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def ignore_sources(rel_dir: str) -> tuple[str, ...]:
    """Repo-relative paths of the ignore files of one directory, lowest precedence first."""
    if not rel_dir:
        return (GIT_INFO_EXCLUDE, *IGNORE_FILE_NAMES)
    return tuple(f"{rel_dir}/{name}" for name in IGNORE_FILE_NAMES)


def ignored_by(chain: tuple[IgnoreFile, ...], rel: str, is_dir: bool) -> str | None:
    """The rule that ignores `rel`, as `source: pattern`, or None.

    The deepest file with an opinion decides (a negation is an opinion), which is git's
    "last matching pattern wins" over the files concatenated from the root down.
    """
    for ig in reversed(chain):
        sub = rel[len(ig.base) + 1 :] if ig.base else rel
        result = ig.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            if not result.include or result.index is None:
                return None
            return f"{ig.source}: {ig.spec.patterns[result.index].pattern!s}"
    return None


_IgnoreKey = tuple[tuple[int, int, int] | None, ...]
"""The `(mtime_ns, size, inode)` of each of a folder's ignore sources (None: absent)."""


class IgnoreCache:
    """Each folder's ignore files, kept between calls, for one repository root.

    A folder's entry is re-read when the `(mtime_ns, size, inode)` of one of its ignore
    sources changes, checked on every call (one `stat` per source); `clear()` drops
    everything, for an edit that keeps all three (same size within one timestamp tick).
    """

    def __init__(self, root_real: str) -> None:
        self._root_real = root_real
        self._entries: dict[str, tuple[_IgnoreKey, tuple[IgnoreFile, ...]]] = {}

    def clear(self) -> None:
        """Forget every cached ignore file; the next call re-reads them."""
        self._entries.clear()

    def dir_ignores(self, rel_dir: str) -> tuple[IgnoreFile, ...]:
        """The compiled ignore files of the folder `rel_dir` (`""` = root), current on disk."""
        sources = ignore_sources(rel_dir)
        # The folder may be reached through a symlink (the walk follows those that stay
        # inside): read its files at its real path, as the walk does.
        try:
            real_dir = os.path.realpath(os.path.join(self._root_real, rel_dir))
        except OSError:  # a link on the way changed while it was resolved
            return ()
        if not is_inside(self._root_real, real_dir):
            return ()
        start = len(rel_dir) + 1 if rel_dir else 0
        paths = [os.path.join(real_dir, s[start:]) for s in sources]
        key = tuple(_file_key(p) for p in paths)
        cached = self._entries.get(rel_dir)
        if cached is not None and cached[0] == key:
            return cached[1]
        loaded = [
            load_ignore_file(p, rel_dir, s)
            for p, s, k in zip(paths, sources, key, strict=True)
            if k is not None
        ]
        files = tuple(ig for ig in loaded if ig is not None)
        self._entries[rel_dir] = (key, files)
        return files


def _file_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
