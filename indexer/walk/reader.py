"""Reads one admitted file as text, in blocks, within a hard ceiling on memory.

`read_file(entry, max_size=0)` opens the file through `indexer.walk.safeopen.open_verified`
(the object at `entry.abs_path` now, reached through no symlink: a folder swapped for a
link since the walk is refused) and reads it in `BLOCK` pieces: each piece is checked for
NUL bytes and decoded as UTF-8 as it comes, so a binary file is refused after its first
bad piece, and the content hash is computed piece by piece (`FileText.digest`, the
`xxh3_128` of the normalised text's UTF-8, equal to `indexer.pipeline.content_hash(text)`
without a second copy of the file). `read_text(entry, max_size=0)` is the text alone.

Every read of a file for the index (`indexer.walk.judge`) and for a file request goes
through it.

Invariants: never holds more than `policy.READ_LIMIT` bytes of a file, whatever
`max_size` says (0, "no limit", included): a larger file is TOO_LARGE before a byte is
read, one that grows past it while read is TOO_LARGE as soon as it does; never follows a
symlink on the way to the file; never raises for a bad file (a `Skipped` says why).
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from dataclasses import dataclass

import xxhash

from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.policy import READ_LIMIT, READ_LIMIT_TEXT
from ctxd.indexer.walk.safeopen import O_FILE, PathChanged, open_verified

__all__ = ["BLOCK", "FileText", "read_file", "read_text"]

BLOCK = 1 << 20
"""Bytes read, checked and hashed at a time."""


@dataclass(frozen=True, slots=True)
class FileText:
    """A file's text and the hash of its normalised UTF-8."""

    text: str
    digest: str


def read_text(entry: FileEntry, *, max_size: int = 0) -> str | Skipped:
    """`read_file`'s text."""
    got = read_file(entry, max_size=max_size)
    return got if isinstance(got, Skipped) else got.text


def read_file(entry: FileEntry, *, max_size: int = 0) -> FileText | Skipped:
    """Read an admitted file as text.

    Args:
        entry: a file from `walk` or `FileFilter.entry` (`abs_path` symlink-free).
        max_size: refuse a file of more bytes (a file that grew since it was stat'ed);
            0 = no limit of its own, `policy.READ_LIMIT` still applies.

    Returns:
        The text (UTF-8, a leading BOM stripped, `\\r\\n` and bare `\\r` line ends turned
        into `\\n`, so lines are numbered as editors number them) with its hash, or a
        `Skipped`: BINARY (NUL byte, invalid UTF-8), TOO_LARGE, NOT_REGULAR, or UNREADABLE
        (any OSError: permissions, vanished, a path that now leads through a symlink).
    """
    limit = max_size if 0 < max_size <= READ_LIMIT else READ_LIMIT
    try:
        fd = open_verified(entry.abs_path, O_FILE)
    except PathChanged as exc:
        return Skipped(entry.path, SkipReason.UNREADABLE, f"refused: {exc.strerror}")
    except OSError as exc:
        detail = str(exc)
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            detail = f"became a symlink since the walk, or a folder on its way did, refused: {exc}"
        return Skipped(entry.path, SkipReason.UNREADABLE, detail)
    try:
        return _read(fd, entry, limit, max_size)
    except OSError as exc:
        return Skipped(entry.path, SkipReason.UNREADABLE, str(exc))
    finally:
        os.close(fd)


def _too_large(entry: FileEntry, size: int, limit: int, max_size: int, grew: bool) -> Skipped:
    if 0 < max_size <= READ_LIMIT:
        why = f"grew past max_file_size {max_size}" if grew else (
            f"{size} bytes > max_file_size {max_size}")
    else:
        why = f"{'grew past' if grew else f'{size} bytes >'} {READ_LIMIT_TEXT}"
    return Skipped(entry.path, SkipReason.TOO_LARGE, why)


def _read(fd: int, entry: FileEntry, limit: int, max_size: int) -> FileText | Skipped:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return Skipped(entry.path, SkipReason.NOT_REGULAR, "not a regular file")
    if st.st_size > limit:
        return _too_large(entry, st.st_size, limit, max_size, grew=False)
    decoder = codecs.getincrementaldecoder("utf-8")()
    digest = xxhash.xxh3_128()
    parts: list[str] = []
    done = 0  # bytes read so far
    carry = b""  # a `\r` at the end of the last block: its `\n` may open the next
    while block := os.read(fd, min(BLOCK, limit + 1 - done)):
        if done == 0 and block.startswith(codecs.BOM_UTF8):
            block = block[len(codecs.BOM_UTF8):]
            done = len(codecs.BOM_UTF8)
        if b"\x00" in block:
            return Skipped(entry.path, SkipReason.BINARY, "contains NUL bytes")
        pending = len(decoder.getstate()[0])
        try:
            parts.append(decoder.decode(block))
        except UnicodeDecodeError as exc:
            at = done - pending + exc.start
            return Skipped(entry.path, SkipReason.BINARY, f"not valid UTF-8 (byte {at})")
        done += len(block)
        if done > limit:
            return _too_large(entry, done, limit, max_size, grew=True)
        block = carry + block
        carry = b"\r" if block.endswith(b"\r") else b""
        digest.update(_newlines(block[:-1] if carry else block))
    try:
        parts.append(decoder.decode(b"", final=True))
    except UnicodeDecodeError:
        return Skipped(entry.path, SkipReason.BINARY, f"not valid UTF-8 (byte {done})")
    if carry:
        digest.update(b"\n")
    text = "".join(parts)
    del parts
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return FileText(text, digest.hexdigest())


def _newlines(data: bytes) -> bytes:
    """`\\r\\n` and bare `\\r` as `\\n` (byte-wise: no UTF-8 sequence holds a `\\r` byte)."""
    if b"\r" not in data:
        return data
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
