"""The indexed texts the lexical engine verifies, kept in the process between queries.

`TextCache.files(store, ids)` gives each file's `FileText`: its text, its UTF-8 bytes and
where its newlines are, read from the store (`IndexStore.file_texts`) the first time and
kept, by index and file id, while the index's text stays the same
(`IndexStore.text_generation`, which the engine reads before every query): a long-lived
process (the daemon, `ctxd serve`, `ctxd search --batch`) reads and encodes a file once,
as Zoekt keeps its shards mapped. The cache is bounded (`TEXT_CACHE_BYTES`, least
recently used out first); a file larger than an eighth of it is never kept. One process-wide
cache (`TEXTS`), shared by every connection and thread.

A file's definitions (`FileText.sections`), placed on their lines as the scoring needs them
(the first spelling of the name on its line: `search.lexical.file_score.sections`), are read
and kept with it on demand (`TextCache.sections`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.lru import Lru

TEXT_CACHE_BYTES = 64 << 20
"""What the kept texts may take, counted as their bytes three times (text, UTF-8, and the
line starts that showing them makes) plus their newline offsets."""

Placed = tuple[int, int, str, str]
"""A definition's name placed in its file: a `rank.Section`'s (start, end, kind, name) as
a plain tuple."""

_FOLD_HAZARDS = ("\u212a".encode(), "\u017f".encode())
"""KELVIN SIGN and LATIN SMALL LETTER LONG S: the only characters outside ASCII that RE2's
case folding equates with ASCII letters (k and s)."""


@dataclass(slots=True)
class FileText:
    """One indexed file's text, as the verifier reads it."""

    text: str
    data: bytes
    """The text as UTF-8 (lone surrogates kept, as the index stores them)."""
    clean: bool
    """The text has no lone surrogate: `data` is valid UTF-8."""
    ends: npt.NDArray[np.int64]
    """Byte offset of every newline, then `len(data)`: where each line ends."""
    fold_hazard: bool
    """`data` holds a character that RE2 folds to an ASCII letter (`_FOLD_HAZARDS`)."""
    sections: dict[int, tuple[Placed, ...]] | None = None
    """The file's definitions placed on their lines, by line (`TextCache.sections`), as
    plain tuples (`Placed`): the collector stops tracking them once it has seen them (a
    long-lived process keeps thousands, which its every full collection would walk)."""
    section_bounds: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] = (
        np.zeros(0, np.int64), np.zeros(0, np.int64))
    """Their (starts, ends) in `data`, as arrays."""
    starts: list[int] | None = None
    """`line_starts`, made when first asked."""

    @property
    def size(self) -> int:
        """What it takes in the cache (its line starts counted from the start)."""
        return 3 * len(self.data) + self.ends.nbytes

    @property
    def line_starts(self) -> list[int]:
        """`search.lexical.rank.line_starts` of `data`, kept (the shown files' lines are
        found by it)."""
        if self.starts is None:
            self.starts = [0, *(self.ends[:-1] + 1).tolist()]
        return self.starts


def file_text(text: str) -> FileText:
    try:
        data, clean = text.encode("utf-8"), True
    except UnicodeEncodeError:
        data, clean = text.encode("utf-8", "surrogatepass"), False
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = np.append(newlines, len(data)).astype(np.int64)
    hazard = not data.isascii() and any(h in data for h in _FOLD_HAZARDS)
    return FileText(text, data, clean, ends, hazard)


class TextCache:
    """Files' `FileText`, by (index location, text generation, file id): the texts of an
    older generation are never asked for again and go first."""

    def __init__(self, budget: int = TEXT_CACHE_BYTES) -> None:
        self.budget = budget
        self._files: Lru[tuple[str, int, int], FileText] = Lru(budget, lambda f: f.size)

    def files(
        self, store: IndexStore, ids: Sequence[int], generation: int
    ) -> dict[int, FileText]:
        """The files `ids` that exist (read from `store` when not kept)."""
        where = store.location
        out: dict[int, FileText] = {}
        for i in ids:
            found = self._files.get((where, generation, i))
            if found is not None:
                out[i] = found
        missing = [i for i in ids if i not in out]
        if missing:
            read = {i: file_text(t) for i, t in store.file_texts(missing).items()}
            out.update(read)
            for i, f in read.items():
                if f.size <= self.budget // 8:
                    self._files.put((where, generation, i), f)
        return out

    def sections(
        self, store: IndexStore, files: dict[int, FileText]
    ) -> None:
        """Fill `FileText.sections` of these files (one statement for those not yet read)."""
        todo = [i for i, f in files.items() if f.sections is None]
        if not todo:
            return
        cond, params = store.dialect.in_values("s.file_id", todo)
        by_file: dict[int, list[tuple[str, str, int]]] = {i: [] for i in todo}
        for file_id, name, kind, line in store.symbols_where(cond, params):
            by_file[file_id].append((name, kind, line))
        for i, symbols in by_file.items():
            f = files[i]
            sections = placed_sections(f, symbols)
            placed = [s for secs in sections.values() for s in secs]
            # the bounds first: another thread takes `sections` set as both being there
            f.section_bounds = (np.array([s[0] for s in placed], np.int64),
                                np.array([s[1] for s in placed], np.int64))
            f.sections = sections

    def clear(self) -> None:
        self._files.clear()


def placed_sections(
    f: FileText, symbols: Sequence[tuple[str, str, int]]
) -> dict[int, tuple[Placed, ...]]:
    """Each definition (name, kind, line) at the first spelling of its name on its line, as
    `search.lexical.file_score.sections` places it, by line (in the order given)."""
    out: dict[int, list[Placed]] = {}
    if not symbols:
        return {}
    ends, data = f.ends.tolist(), f.data
    lines = len(ends)
    for name, kind, line in symbols:
        if not 1 <= line <= lines:
            continue
        start = ends[line - 2] + 1 if line > 1 else 0
        raw = name.encode("utf-8", "surrogatepass")
        at = data.find(raw, start, ends[line - 1]) if raw else -1
        if at >= 0:
            out.setdefault(line, []).append((at, at + len(raw), kind, name))
    return {line: tuple(placed) for line, placed in out.items()}


TEXTS = TextCache()
"""The process's cache."""
