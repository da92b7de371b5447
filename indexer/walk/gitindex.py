"""The paths git tracks, read from a working tree's index file (`.git/index`) without git.

`parse_index(data, hash_size)` reads the entries of an index file (versions 2, 3 and 4:
prefix-compressed paths; SHA-1 or SHA-256 object ids; sparse-index directory entries)
and returns their paths, or None for a form it does not read (a split index, whose
entries live in a second file; a corrupt or truncated file). `tracked_paths(layout)`
loads the index of a `indexer.walk.gitrefs.GitLayout` as a `TrackedPaths` seen from the
indexed root, cached by the index file's `(mtime_ns, size, inode)` so that a daemon's
rescans parse it once per change.

Why read the file rather than run `git ls-files`: no dependency on git being on PATH, no
subprocess per walk, and nothing of a hostile repository's own configuration runs (git
reads `core.fsmonitor` and hooks from `.git/config`); parsing costs about the same
(docs/BENCHMARKS.md).

A `.gitignore` rule never refuses a tracked path (`indexer.walk.ignore`): git keeps
tracked files whatever the ignore files say. Reads the file system only.

The index is read only when it is a regular file without holes, of at most 1 GiB
(`safeopen.read_regular`): a FIFO, a link to `/dev/zero` or a sparse file planted as
`.git/index` is no index.

Invariants: never raises for a bad index (None: the caller then treats nothing as tracked,
the behaviour before); paths are `/`-separated, relative to the indexed root, with
undecodable bytes as surrogate escapes like `os.listdir`'s.
"""

from __future__ import annotations

import os
import struct
import threading
from bisect import bisect_left
from dataclasses import dataclass

from ctxd.indexer.walk.gitrefs import GitLayout
from ctxd.indexer.walk.safeopen import read_regular

__all__ = ["TrackedPaths", "parse_index", "tracked_paths"]

_MAX_INDEX = 1 << 30
"""An index file larger than this (1 GiB, tens of millions of paths) is not read."""
_FIXED = 40
"""ctime, mtime, dev, ino, mode, uid, gid, size: the fixed fields before the object id."""
_FLAGS = struct.Struct(">H")


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """git's offset varint (`decode_varint`): 7 bits a byte, each continuation adds one."""
    c = data[pos]
    pos += 1
    value = c & 0x7F
    while c & 0x80:
        c = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (c & 0x7F)
    return value, pos


def parse_index(data: bytes, hash_size: int = 20) -> list[str] | None:
    """The paths of an index file's entries (directory entries end with `/`), or None.

    Args:
        data: the whole index file.
        hash_size: 20 for SHA-1 repositories, 32 for SHA-256 ones.
    """
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4) or count * (_FIXED + hash_size + 3) > len(data):
        return None
    try:
        paths = _entries(data, version, count, hash_size)
    except (IndexError, ValueError):
        return None
    if paths is None or _has_split_link(data, paths[1], hash_size):
        return None
    return paths[0]


def _entries(
    data: bytes, version: int, count: int, hash_size: int
) -> tuple[list[str], int] | None:
    """(paths, offset after the last entry). A sparse index's directory entries keep the
    trailing `/` git gives their names."""
    names: list[bytes] = []
    pos = 12
    flags_at = _FIXED + hash_size
    extended = 0x4000 if version >= 3 else 0
    flags_of = _FLAGS.unpack_from
    find = data.index
    prev = b""
    for _ in range(count):
        flags = flags_of(data, pos + flags_at)[0]
        name_at = pos + flags_at + (4 if flags & extended else 2)
        if version == 4:
            strip, name_at = _varint(data, name_at)
            end = find(b"\x00", name_at)
            if strip > len(prev):
                return None
            prev = prev[: len(prev) - strip] + data[name_at:end]
            names.append(prev)
            pos = end + 1
            continue
        size = flags & 0xFFF
        if size == 0xFFF:  # a name of 4095 bytes or more: up to its NUL
            size = find(b"\x00", name_at) - name_at
        elif data[name_at + size] != 0:
            return None
        names.append(data[name_at : name_at + size])
        pos += (name_at - pos + size + 8) & ~7
    # One decode for all names (as os.listdir decodes names: surrogate escapes).
    return b"\x00".join(names).decode("utf-8", "surrogateescape").split("\x00"), pos


def _has_split_link(data: bytes, pos: int, hash_size: int) -> bool:
    """Whether the extensions after the entries hold `link` (a split index)."""
    end = len(data) - hash_size
    while pos + 8 <= end:
        signature = data[pos : pos + 4]
        size = int.from_bytes(data[pos + 4 : pos + 8], "big")
        if signature == b"link":
            return True
        pos += 8 + size
    return False


@dataclass(frozen=True, slots=True)
class TrackedPaths:
    """The paths git tracks under the indexed root, relative to it."""

    files: frozenset[str]
    ordered: tuple[str, ...]
    """The same paths sorted (a sparse index's folder entries with their `/`), to answer
    for folders by bisection."""

    def keeps(self, rel: str, is_dir: bool) -> bool:
        """Whether git tracks the file `rel`, or tracks something in the folder `rel`."""
        if not is_dir:
            return rel in self.files
        lead = rel + "/"
        i = bisect_left(self.ordered, lead)
        return i < len(self.ordered) and self.ordered[i].startswith(lead)

    @classmethod
    def of(cls, paths: list[str], prefix: str) -> TrackedPaths:
        """From index paths (relative to the working tree's top), those under `prefix`
        (the indexed root's path from the top; `""` for the top itself), relative to it."""
        if prefix:
            lead = prefix + "/"
            paths = [p[len(lead):] for p in paths if p.startswith(lead)]
        ordered = tuple(sorted(paths))
        return cls(frozenset(p for p in ordered if not p.endswith("/")), ordered)


_cache: dict[tuple[str, str], tuple[tuple[int, int, int], TrackedPaths | None]] = {}
_cache_lock = threading.Lock()
_CACHE_SIZE = 8


def tracked_paths(layout: GitLayout) -> TrackedPaths | None:
    """What git tracks under `layout.root`, or None (no index yet, a split index, an
    unreadable or corrupt one: then nothing counts as tracked)."""
    index = os.path.join(layout.git_dir, "index")
    try:
        st = os.stat(index)
    except OSError:
        return None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    where = (index, layout.prefix)
    with _cache_lock:
        cached = _cache.get(where)
    if cached is not None and cached[0] == key:
        return cached[1]
    paths = _load(index, st.st_size, layout.hash_size)
    tracked = None if paths is None else TrackedPaths.of(paths, layout.prefix)
    with _cache_lock:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[where] = (key, tracked)
    return tracked


def _load(index: str, size: int, hash_size: int) -> list[str] | None:
    if size > _MAX_INDEX:
        return None
    data = read_regular(index, _MAX_INDEX, whole=True)  # a regular file, no holes
    return None if data is None else parse_index(data, hash_size)
