"""Long runs of whole-line comments, blanked before tree-sitter parses a file.

tree-sitter's Python grammar takes time quadratic in the length of a run of consecutive
comment lines that follows code (its parse of 10,000 of them after a function took 48 s
on a loaded 2-core machine, of 2,500 3 s; the same lines blank, at the top of a file, or
in other languages' grammars cost a fraction of a second: `bench/bench_hostile.py`).
`blank_long_runs(language, source)` replaces the text of every run of at least
`LONG_RUN` whole-line comments of one indentation, but its first and last lines, with
spaces, byte for byte, so that every offset, row and column of the tree stays that of
the file, and returns the runs (0-based first and last rows). The two comments left keep
the run where the tree puts comments (the end of the block above when indented like it,
a definition's attached comments directly above it). `attach_runs` then does what the
tree would have done with the blanked lines: a definition whose attached comments reach
a run's last line starts at its first (`indexer.chunk.syntax._attached_start`).

Called by `indexer.chunk.syntax.parse_definitions`. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

__all__ = ["LINE_COMMENT", "LONG_RUN", "attach_runs", "blank_long_runs"]

LONG_RUN = 200
"""Whole-line comments in a row from which a run is blanked (a few tens of ms of parse
before; license headers and doc blocks stay far below it, so ordinary files parse as
they always did)."""
LINE_COMMENT = {"python": b"#"}
"""The languages whose grammar is slow on comment runs, and their line-comment mark
(measured: JavaScript, TypeScript, Go, Rust, C, C++, Java, Ruby and shell parse 2,000
comment lines after a function, indented or not, in under 0.1 s; Python in 2.4-2.8 s)."""


def blank_long_runs(language: str, source: bytes) -> tuple[bytes, list[tuple[int, int]]]:
    """`source` with the inside of each run of `LONG_RUN`+ whole-line comments of one
    indentation blanked (same length; the run's first and last lines stay, so the tree
    still places the run where it placed its comments: in the block above it when
    indented, directly above a definition...), and those runs as (first row, last row),
    0-based."""
    mark = LINE_COMMENT.get(language)
    if mark is None or source.count(mark) < LONG_RUN:
        return source, []
    lines = source.split(b"\n")
    runs: list[tuple[int, int]] = []
    start, indent = -1, b""
    for i, line in enumerate([*lines, b""]):
        body = line.lstrip(b" \t")
        comment = (i < len(lines) and body.startswith(mark)
                   and b'"""' not in line and b"'''" not in line)  # in a string: may close it
        if comment and start >= 0 and line[:len(line) - len(body)] == indent:
            continue
        if start >= 0 and i - start >= LONG_RUN:
            runs.append((start, i - 1))
        start, indent = (i, line[:len(line) - len(body)]) if comment else (-1, b"")
    for first, last in runs:
        for i in range(first + 1, last):
            lines[i] = b" " * len(lines[i])
    return (b"\n".join(lines) if runs else source), runs


class _Extent(Protocol):
    start_row: int


def attach_runs(found: Iterable[_Extent], runs: list[tuple[int, int]]) -> None:
    """Start each definition of `found` that the last line of a blanked run is attached to
    (its first row) at the run's first row, as the whole run would have attached had it
    been parsed; and through a run of another indentation directly above, likewise."""
    first_of = {last: first for first, last in runs}
    for item in found:
        while (first := first_of.get(item.start_row)) is not None:
            item.start_row = first
            if first - 1 not in first_of:
                break
            item.start_row = first - 1
