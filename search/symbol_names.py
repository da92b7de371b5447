"""The distinct symbol names in memory, for symbol search over large indexes.

Symbol search ranks by name first (`search.symbols.rank_symbol`: exact, prefix,
substring, fuzzy), so it needs every name that holds the query's letters in order. In
SQLite that is a `LIKE '%q%u%e%r%y%'` scan of every symbol row, plus ranking each row in
Python, slow at a million symbols (docs/BENCHMARKS.md, issue 18). Names repeat
(`__init__`, `get`, `String`), so the distinct names are fewer, and kept here as one
ASCII-lower-cased string, one name a line: a query's subsequence is found by one
regular expression over that string (possessive, so linear: `r[^\\ne]*+e[^\\nt]*+t...`),
and each matching name is ranked once; only the rows of the names that make the page
are read from the store, through the name index.

`SymbolNames` is one immutable snapshot for one `Store.text_generation()`;
`SymbolIndex` holds it for the long-lived service and rebuilds it in the background
when the text changes (`search.snapshots`), answering None meanwhile (then symbol
search scans the store, with the same results).

Reads the store only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.snapshots import LARGE_INDEX_CHECKPOINTS, Snapshots

__all__ = ["SymbolIndex", "SymbolNames", "ascii_lower", "letter_mask", "load_symbol_names",
           "snapshot_of"]

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """`text` with ASCII letters lower-cased only: what SQLite's LIKE ignores."""
    return text.translate(_ASCII_LOWER)


@dataclass(frozen=True)
class SymbolNames:
    """The distinct symbol names of one text generation, with their row counts."""

    generation: int
    names: tuple[str, ...]
    counts: npt.NDArray[np.int64]
    """Symbol rows per name."""
    folded: str
    """`ascii_lower` of every name, one a line (a newline inside a name is a blank)."""
    starts: npt.NDArray[np.int64]
    """Where each name's line starts in `folded`."""
    letters: npt.NDArray[np.uint64]
    """Which of a-z, 0-9 and `_` each folded name holds (`letter_mask`)."""

    @property
    def nbytes(self) -> int:
        return (len(self.folded) + sum(len(n) + 49 for n in self.names)
                + self.counts.nbytes * 2 + self.letters.nbytes)

    def matching(self, query: str) -> list[int]:
        """Indexes of the names that hold `query`'s characters in order, ignoring ASCII
        case (what `LIKE '%q%u%e%r%y%'` finds).

        The names holding every letter of the query (one vectorized test of the
        `letters` masks) are the candidates; when they are a small share, each is
        matched alone, else one expression runs over all of `folded`."""
        q = ascii_lower(query)
        if not q or "\n" in q:
            return []
        pattern = re.compile(re.escape(q[0]) + "".join(
            f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in q[1:]))
        need = np.uint64(letter_mask(q))
        candidates = np.flatnonzero((self.letters & need) == need)
        if len(candidates) * 4 < len(self.names):
            lines = [self.folded[self.starts[i]:self.starts[i] + len(self.names[i])]
                     for i in candidates.tolist()]
            return [i for i, line in zip(candidates.tolist(), lines, strict=True)
                    if pattern.search(line)]
        found = np.fromiter((m.start() for m in pattern.finditer(self.folded)), np.int64)
        if not len(found):
            return []
        return [int(i) for i in np.unique(np.searchsorted(self.starts, found, "right") - 1)]


def letter_mask(text: str) -> int:
    """Bits 0-25 for the letters a-z in (ASCII-folded) `text`, 26-35 for the digits, 36 for
    `_`: a name can hold a query's characters in order only if it holds all of them."""
    mask = 0
    for ch in set(text):
        o = ord(ch)
        if 97 <= o <= 122:
            mask |= 1 << (o - 97)
        elif 48 <= o <= 57:
            mask |= 1 << (o - 22)
        elif ch == "_":
            mask |= 1 << 36
    return mask


def load_symbol_names(store: IndexStore) -> SymbolNames:
    """Read a snapshot in one read transaction of `store`'s connection."""
    with store.read_snapshot():
        generation = store.text_generation()
        rows = store.symbol_name_counts()
    return snapshot_of(generation, [name for name, _n in rows], [n for _name, n in rows])


def snapshot_of(generation: int, names: Sequence[str], counts: Sequence[int]) -> SymbolNames:
    """A `SymbolNames` of distinct `names` and their row counts."""
    lines = [ascii_lower(n).replace("\n", " ") for n in names]
    starts = np.zeros(len(lines), np.int64)
    if lines:
        np.cumsum([len(line) + 1 for line in lines[:-1]], out=starts[1:])
    letters = np.fromiter((letter_mask(line) for line in lines), np.uint64, len(lines))
    return SymbolNames(generation, tuple(names), np.asarray(counts, dtype=np.int64),
                       "\n".join(lines) + "\n", starts, letters)


class SymbolIndex(Snapshots[SymbolNames]):
    """The long-lived service's symbol names (`search.snapshots`)."""

    def __init__(self, *, above: int = LARGE_INDEX_CHECKPOINTS, spacing: float = 4.0) -> None:
        super().__init__(load_symbol_names, above=above, spacing=spacing,
                         name="ctxd-symbol-names")
