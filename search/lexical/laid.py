"""A batch of kept texts laid end to end, as the batch verifier reads them, and the search
of a literal over such a buffer without splitting it.

`Laid.of(files)`: the texts joined by one newline (`buf`), each file's first byte and end
in it, and every line's end in `buf` (made when the line counts ask). Not kept between
queries: two queries' candidates rarely make the same batches (one file more or less
shifts every batch after it).

`find_literal(buf, needle, fold)` gives the offsets of `needle`'s leftmost non-overlapping
occurrences, as `bytes.split` (and `bytes.find`) would: numpy compares the whole buffer,
read as 16-bit numbers, with the needle's least common pair of adjacent bytes (`_COMMON`)
and checks the other bytes only at those places, with no Python per match and no copy of
the text; case-insensitive by a bit mask on ASCII letters. Where two occurrences overlap
(`aa` in `aaa`), the leftmost is kept, as `bytes.find` goes. A needle of one byte, or a
buffer under `SMALL` bytes, goes through `bytes.split`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ctxd.search.lexical.texts import FileText

Ints = npt.NDArray[np.int64]

_COMMON = b' etsornail\ncd"p_fum.h,:()g=bywkv-x`012/[]{}3>qj#\'%\\5z*48697|'
"""Lower-case source text's bytes, most frequent first (measured on the eval-dev corpus):
the pair of a needle's adjacent bytes found first is the one least likely to occur."""
_WEIGHT = np.zeros(256, np.int64)
_WEIGHT[np.frombuffer(_COMMON, np.uint8)] = np.arange(len(_COMMON), 0, -1)
_EMPTY = np.zeros(0, np.int64)
SMALL = 1 << 15
"""Buffers shorter than this go through `bytes.split`: quicker than numpy's dozen calls."""


@dataclass(slots=True, eq=False)
class Laid:
    """One batch's texts laid end to end, one newline between two files."""

    files: tuple[FileText, ...]
    buf: bytes
    first: Ints
    """Each file's first byte in `buf`."""
    last: Ints
    """Each file's end in `buf` (the newline after it, or the buffer's end)."""
    _lines: tuple[Ints, Ints] | None = field(default=None)

    @classmethod
    def of(cls, files: Sequence[FileText]) -> Laid:
        n = len(files)
        sizes = np.fromiter((len(f.data) for f in files), np.int64, n)
        first = np.zeros(n, np.int64)
        np.cumsum(sizes[:-1] + 1, out=first[1:])
        return cls(tuple(files), b"\n".join(f.data for f in files), first, first + sizes)

    @property
    def lines(self) -> tuple[Ints, Ints]:
        """(the end of every line of every file, in `buf`; each file's first line's index
        in that array)."""
        if self._lines is None:
            files, n = self.files, len(self.files)
            counts = np.fromiter((len(f.ends) for f in files), np.int64, n)
            line0 = np.zeros(n, np.int64)
            np.cumsum(counts[:-1], out=line0[1:])
            ends = (np.concatenate([f.ends for f in files]) if n else _EMPTY)
            self._lines = (ends + np.repeat(self.first, counts), line0)
        return self._lines


def find_literal(buf: bytes, needle: bytes, fold: bool = False) -> tuple[Ints, Ints]:
    """(starts, ends) of `needle`'s leftmost non-overlapping occurrences in `buf`; with
    `fold`, in `buf.lower()` (`needle` lowered already): an ASCII letter of `needle` then
    matches either case, as `bytes.lower` folds them, and nothing else does."""
    n, size = len(needle), len(buf)
    if n < 2 or size < SMALL:
        return _split(buf.lower() if fold else buf, needle)
    if size < n:
        return _EMPTY, _EMPTY
    a = np.frombuffer(buf, np.uint8)
    code = np.frombuffer(needle, np.uint8)
    # `x | 0x20 == c` holds for c and its capital alone when c is a lower-case letter
    case = np.where(fold & (code >= 0x61) & (code <= 0x7A), 0x20, 0).astype(np.uint8)
    pairs = _WEIGHT[code]
    k = int(np.argmin(pairs[:-1] * pairs[1:]))  # the pair least likely to occur
    pair = needle[k] | needle[k + 1] << 8
    mask = int(case[k]) | int(case[k + 1]) << 8
    # The buffer as 16-bit numbers from an even and from an odd offset: every pair of
    # adjacent bytes is one of them, so one comparison per byte finds the pair.
    found = []
    for at, count in ((0, size // 2), (1, (size - 1) // 2)):
        words = np.frombuffer(buf, "<u2", count=count, offset=at)
        found.append(np.flatnonzero((words | mask if mask else words) == pair) * 2 + at)
    starts = np.concatenate(found)
    starts.sort()
    starts -= k
    starts = starts[(starts >= 0) & (starts <= size - n)]
    for j in range(n):
        if j != k and j != k + 1 and len(starts):
            got = a[starts + j]
            starts = starts[(got | case[j] if case[j] else got) == code[j]]
    starts = starts.astype(np.int64, copy=False)
    if len(starts) > 1 and bool(np.any(np.diff(starts) < n)):  # `aa` in `aaa`: overlaps
        starts = _leftmost(starts, n)
    return starts, starts + n


def _leftmost(starts: Ints, n: int) -> Ints:
    """Of every occurrence (sorted), those `bytes.find` finds: the first, then the first
    that starts after it ends, and so on."""
    kept, after = [], -n
    for at in starts.tolist():
        if at >= after:
            kept.append(at)
            after = at + n
    return np.array(kept, np.int64)


def _split(buf: bytes, needle: bytes) -> tuple[Ints, Ints]:
    """`find_literal` by the lengths of `bytes.split`'s pieces."""
    pieces = buf.split(needle)
    if len(pieces) == 1:
        return _EMPTY, _EMPTY
    size = len(needle)
    lengths = np.fromiter(map(len, pieces), np.int64, len(pieces) - 1)
    lengths[1:] += size
    starts = np.cumsum(lengths)
    return starts, starts + size


def unique_ints(values: np.ndarray) -> np.ndarray:
    """`np.unique` of a 1-D integer array (sorted, each value once), without the import of
    `numpy.ma` that `np.unique`'s first call makes (14 ms once a process: about 5% of a
    fresh `ctxd search --batch` process's lexical queries; docs/BENCHMARKS.md, issue 30
    item 3)."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]
