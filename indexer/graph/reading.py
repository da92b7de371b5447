"""Stored code graphs read for a query: only the parts it looks at.

A query peeks at a hundred candidate files and resolves the sites of a few dozen that
bear one name; `indexer.graph.model.decode` builds every site of a file (thousands) and
`peek` inflates the whole blob for its head. Here, for blobs of the current format
(`model.FORMAT`; older ones go through `model.decode` / `model.peek`):

- `peek(blob)`: the same `Peek`, inflating the blob only up to the newline that ends its
  JSON head (the sites' columns after it, most of the blob, stay compressed).
- `decode_lazy(blob)`: the same `FileGraph`, its `sites` a `Sites`: each site built from
  the blob's columns when first asked; `Sites.named(name)` and `Sites.having(roles)` find
  which sites bear a name or have a role from the columns alone, `Sites.pick` builds several
  at once.

Invariants: `decode_lazy(b) == model.decode(b)` and `peek(b) == model.peek(b)` for every
blob; a `Sites` compares equal to the list of its sites, and hands out the same object
for a site asked twice; it is never changed once built, except its cache of built sites
(safe to share between threads: two threads at worst build a site twice).
"""

from __future__ import annotations

import json
import sys
import zlib
from array import array
from collections.abc import Collection, Iterator, Sequence
from functools import partial
from itertools import accumulate, compress, repeat
from operator import itemgetter, sub
from typing import overload

from ctxd.indexer.graph import model
from ctxd.indexer.graph.model import FORMAT, Def, FileGraph, Import, Peek, Role, Site

__all__ = ["Sites", "decode_lazy", "peek"]

_ROLES = list(Role)
_BIG_ENDIAN = sys.byteorder == "big"
_new_site = partial(tuple.__new__, Site)
"""`Site` from a tuple of its fields, without its Python-level `__new__`."""
_HEAD_STEP = 4096
"""Bytes first inflated while looking for the end of a blob's head (twice as many at
each next step; a head is ~3 KB of a file's ~14)."""


def _head(blob: bytes) -> tuple[bytes, int]:
    """A blob inflated up to the newline that ends its JSON head at least (the rest
    left compressed), and where that newline is (-1: none, the whole blob inflated)."""
    inflate, step = zlib.decompressobj(), _HEAD_STEP
    text = inflate.decompress(blob, step)
    start = 0
    while (cut := text.find(b"\n", start)) < 0:
        if not inflate.unconsumed_tail:
            return text + inflate.flush(), -1
        start, step = len(text), step * 2
        text += inflate.decompress(inflate.unconsumed_tail, step)
    return text, cut


def _current(head: object) -> bool:
    return isinstance(head, list) and len(head) == 5 and head[0] == FORMAT


def peek(blob: bytes) -> Peek | None:
    """`model.peek(blob)`, inflating only the blob's head (None: another format)."""
    text, cut = _head(blob)
    head = json.loads(text[:cut]) if cut >= 0 else None
    if not _current(head):
        return model.peek(blob)  # (format 1, or one `model` does not read: None)
    assert isinstance(head, list)
    _, language, table, _, imports = head
    strs: list[str | None] = [None, *table]
    return Peek(language, [Import(str(strs[m]), strs[n], strs[a], lv, ln, bool(r))
                           for m, n, a, lv, ln, r in imports], frozenset(table))


def decode_lazy(blob: bytes) -> FileGraph | None:
    """`model.decode(blob)`, its sites built only when asked (`FileGraph.sites` is a
    `Sites`, equal to `decode`'s list; None: another format)."""
    text = zlib.decompress(blob)
    cut = text.find(b"\n")  # JSON escapes every newline inside its strings
    head = json.loads(text[:cut]) if cut >= 0 else None
    if not _current(head):
        return model.decode(blob)  # (format 1: every site now)
    assert isinstance(head, list)
    _, language, table, defs, imports = head
    numbers = array("i")
    numbers.frombytes(text[cut + 1:])
    if _BIG_ENDIAN:
        numbers.byteswap()
    if len(numbers) % 7:
        raise ValueError(f"a code graph's sites hold {len(numbers)} numbers, not 7 each")
    strs: list[str | None] = [None, *table]
    out_defs = [Def(str(strs[a]), str(strs[b]), str(strs[c]), ln, ln + n, p)
                for a, b, c, ln, n, p in defs]
    out_imports = [Import(str(strs[m]), strs[n], strs[a], lv, ln, bool(r))
                   for m, n, a, lv, ln, r in imports]
    return FileGraph(str(language), out_defs, out_imports,
                     Sites(strs, numbers))  # type: ignore[arg-type]


class Sites(Sequence[Site]):
    """A decoded graph's sites, built from the blob's columns when first asked (`named`,
    `having`: which sites bear a name, which have a role, read off the columns without
    building the others; `pick`: several at once). Compares equal to the list of them;
    a site asked twice is the same object."""

    __slots__ = ("_all", "_built", "_cols", "_lines", "_n", "_names", "_strs")

    def __init__(self, strs: list[str | None], numbers: array[int]) -> None:
        n = len(numbers) // 7
        self._strs = strs
        self._n = n
        self._cols = tuple(numbers[k * n:(k + 1) * n] for k in range(7))
        """name, line delta, column, role, receiver, scope + 1, value (strings as
        indexes in `strs`), `n` integers each (`model.encode`'s columns)."""
        self._lines = list(accumulate(self._cols[1]))
        self._built: dict[int, Site] = {}
        self._all: list[Site] | None = None
        self._names: bytes | None = None

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, k: int) -> Site: ...

    @overload
    def __getitem__(self, k: slice) -> list[Site]: ...

    def __getitem__(self, k: int | slice) -> Site | list[Site]:
        if self._all is not None:
            return self._all[k]
        if isinstance(k, slice):
            return self.all()[k]
        if k < 0:
            k += self._n
        if not 0 <= k < self._n:
            raise IndexError(f"site {k} of {self._n}")
        got = self._built.get(k)
        if got is None:
            s, (a, _, c, r, v, sc, val) = self._strs, self._cols
            got = self._built[k] = _new_site((s[a[k]], self._lines[k], c[k], _ROLES[r[k]],
                                              s[v[k]], sc[k] - 1, s[val[k]]))
        return got

    def __iter__(self) -> Iterator[Site]:
        return iter(self.all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, list | Sites):
            return self.all() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Sites({self.all()!r})"

    def all(self) -> list[Site]:
        """Every site, in file order (built once)."""
        if self._all is None:
            got = self._make(self._cols, self._lines)
            for k, site in self._built.items():  # (the objects handed out already)
                got[k] = site
            self._all = got
        return self._all

    def pick(self, ks: list[int]) -> list[Site]:
        """The sites at indexes `ks` (built together: cheaper than one by one)."""
        if len(ks) < 2 or self._all is not None:
            return [self[k] for k in ks]
        take = itemgetter(*ks)
        got = self._make([take(c) for c in self._cols], take(self._lines))
        built = self._built
        return [built.setdefault(k, site) for k, site in zip(ks, got, strict=True)]

    def _make(self, cols: Sequence[Sequence[int]], lines: Sequence[int]) -> list[Site]:
        name, (a, _, c, r, v, sc, val) = self._strs.__getitem__, cols
        return list(map(_new_site, zip(
            map(name, a), lines, c, map(_ROLES.__getitem__, r), map(name, v),
            map(sub, sc, repeat(1)), map(name, val), strict=True)))

    def named(self, name: str) -> list[int]:
        """The indexes of the sites that bear `name`, in file order."""
        try:
            want = self._strs.index(name, 1)
        except ValueError:
            return []
        if self._names is None:
            self._names = self._cols[0].tobytes()
        column, pattern, out = self._names, array("i", [want]).tobytes(), []
        at = column.find(pattern)
        while at >= 0:  # (a match across two integers is skipped)
            if at % 4:
                at = column.find(pattern, at + 1)
            else:
                out.append(at // 4)
                at = column.find(pattern, at + 4)
        return out

    def grouped(self, roles: Collection[Role]) -> dict[str, list[int]]:
        """The indexes of the sites whose role is one of `roles`, by name, in file
        order."""
        names, strs = self._cols[0], self._strs
        out: dict[str, list[int]] = {}
        for k in self.having(roles):
            name = strs[names[k]]
            assert name is not None  # (every site has a name)
            if name in out:
                out[name].append(k)
            else:
                out[name] = [k]
        return out

    def having(self, roles: Collection[Role]) -> list[int]:
        """The indexes of the sites whose role is one of `roles`, in file order."""
        mask = bytearray(256)  # (a role is one byte of its integer: the rest are 0)
        for r in roles:
            mask[r] = 1
        lowest = self._cols[3].tobytes()[3 if _BIG_ENDIAN else 0::4]
        return list(compress(range(self._n), lowest.translate(mask)))
