"""The distinct symbol names in memory, for symbol search over large indexes.

Symbol search ranks by name first (`search.symbols.rank_symbol`: exact, prefix,
substring, fuzzy), so it needs every name that holds the query's letters in order. In
SQLite that is a `LIKE '%q%u%e%r%y%'` scan of every symbol row, plus ranking each row in
Python: 0.2-1.3 s at a million symbols (docs/BENCHMARKS.md, issue 18). Names repeat
(`__init__`, `get`, `String`), so the distinct names are fewer, and kept here as one
ASCII-lower-cased string, one name a line: a query's subsequence is found by one
regular expression over that string (possessive, so linear: `r[^\\ne]*+e[^\\nt]*+t...`),
and each matching name is ranked once; only the rows of the names that make the page
are read from SQLite, through the name index.

`SymbolNames` is one immutable snapshot for one `Store.text_generation()`;
`SymbolIndex` holds it for the long-lived service and rebuilds it in the background
when the text changes (`search.snapshots`), answering None meanwhile (then symbol
search scans SQLite, with the same results).

Called by `search.symbols` and `server.service`. Reads the store only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.store import Store
from ctxd.search.snapshots import Snapshots

__all__ = ["SymbolIndex", "SymbolNames", "ascii_lower", "load_symbol_names"]

MEMORY_ABOVE_CHECKPOINTS = 150_000
"""Indexes up to this size scan SQLite (tens of ms at 100k symbols)."""

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

    @property
    def nbytes(self) -> int:
        return len(self.folded) + sum(len(n) + 49 for n in self.names) + self.counts.nbytes * 2

    def matching(self, query: str) -> list[int]:
        """Indexes of the names that hold `query`'s characters in order, ignoring ASCII
        case (what `LIKE '%q%u%e%r%y%'` finds)."""
        q = ascii_lower(query)
        if not q or "\n" in q:
            return []
        pattern = re.escape(q[0]) + "".join(
            f"[^\\n{re.escape(c)}]*+{re.escape(c)}" for c in q[1:])
        found = np.fromiter((m.start() for m in re.finditer(pattern, self.folded)), np.int64)
        if not len(found):
            return []
        return [int(i) for i in np.unique(np.searchsorted(self.starts, found, "right") - 1)]


def load_symbol_names(store: Store) -> SymbolNames:
    """Read a snapshot in one read transaction of `store`'s connection."""
    store.db.execute("BEGIN")
    try:
        generation = store.text_generation()
        rows = store.query("SELECT name, count(*) FROM symbols GROUP BY name")
    finally:
        store.db.execute("COMMIT")
    names = tuple(str(r[0]) for r in rows)
    counts = np.fromiter((int(r[1]) for r in rows), np.int64, len(rows))
    lines = [ascii_lower(n).replace("\n", " ") for n in names]
    starts = np.zeros(len(lines), np.int64)
    if lines:
        np.cumsum([len(line) + 1 for line in lines[:-1]], out=starts[1:])
    return SymbolNames(generation, names, counts, "\n".join(lines) + "\n", starts)


class SymbolIndex(Snapshots[SymbolNames]):
    """The long-lived service's symbol names (`search.snapshots`)."""

    def __init__(self, *, above: int = MEMORY_ABOVE_CHECKPOINTS, spacing: float = 4.0) -> None:
        super().__init__(load_symbol_names, above=above, spacing=spacing,
                         name="ctxd-symbol-names")
