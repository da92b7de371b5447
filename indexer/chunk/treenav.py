"""Parents and previous siblings in a tree-sitter tree, at constant cost per question.

`TreeNav(source, root, targets, deadline)` walks the tree once with a `TreeCursor`,
descending only into nodes that hold a target (the definitions a query found), and records
the parent and the previous sibling of every node it meets; `parent(node)` and
`prev_sibling(node)` then answer from those records, and `text(node)` slices the source
(`Node.text` calls back into Python for every node of a tree parsed through a read
callback, which the parse budget needs). Needed because tree-sitter's own `Node.parent`,
`prev_sibling` and `next_sibling` walk their parent's children from the first one (and
`parent` from the root down), which made `indexer.chunk.syntax` quadratic under a long
run of comments (extras, which tree-sitter keeps in one flat list; figures in
docs/BENCHMARKS.md).

Pure: no I/O; each instance belongs to one tree.

Invariants: a node the walk met (every target, its ancestors, and the siblings of each
of those) is answered from the records, in time independent of the tree's shape; any
other node falls back to tree-sitter's own accessor. `prev_sibling` counts anonymous
nodes and extras, like `Node.prev_sibling`. The walk raises `ParseBudgetExceeded` once
`deadline` (a `time.monotonic()` value) has passed.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Sequence

import tree_sitter

__all__ = ["ParseBudgetExceeded", "TreeNav"]

_CHECK_EVERY = 1024
"""Nodes between two looks at the clock."""


class ParseBudgetExceeded(Exception):
    """The time allowed for one file's definitions ran out."""


class TreeNav:
    """The parent and previous sibling of each node on the way to a set of targets."""

    def __init__(
        self,
        source: bytes,
        root: tree_sitter.Node,
        targets: Sequence[tree_sitter.Node],
        deadline: float | None = None,
    ) -> None:
        self._source = source
        self._parent: dict[int, tree_sitter.Node] = {}
        self._prev: dict[int, tree_sitter.Node | None] = {}
        self._starts = sorted({t.start_byte for t in targets})
        self._ids = {t.id for t in targets}
        self._walk(root, deadline)

    def text(self, node: tree_sitter.Node) -> str:
        """The node's source text."""
        return self._source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def parent(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The node's parent (None for the root)."""
        found = self._parent.get(node.id)
        return found if found is not None else node.parent

    def prev_sibling(self, node: tree_sitter.Node) -> tree_sitter.Node | None:
        """The sibling just before the node, named or not (None for a first child)."""
        if node.id in self._prev:
            return self._prev[node.id]
        return node.prev_sibling

    def _holds_target(self, node: tree_sitter.Node) -> bool:
        """Whether a target starts inside `node` (and is not `node` itself)."""
        start, end = node.start_byte, node.end_byte
        starts = self._starts
        i = bisect_left(starts, start)
        if i == len(starts) or starts[i] >= end:
            return False
        if starts[i] > start or node.id not in self._ids:
            return True
        return i + 1 < len(starts) and starts[i + 1] < end

    def _walk(self, root: tree_sitter.Node, deadline: float | None) -> None:
        cursor = root.walk()
        if not self._starts or not cursor.goto_first_child():
            return
        parents: list[tree_sitter.Node] = [root]
        prevs: list[tree_sitter.Node | None] = [None]
        seen = 0
        while True:
            node = cursor.node
            assert node is not None  # a cursor on a child always has a node
            key = node.id
            self._parent[key] = parents[-1]
            self._prev[key] = prevs[-1]
            prevs[-1] = node
            seen += 1
            if deadline is not None and seen % _CHECK_EVERY == 0 and time.monotonic() > deadline:
                raise ParseBudgetExceeded
            if self._holds_target(node) and cursor.goto_first_child():
                parents.append(node)
                prevs.append(None)
                continue
            while not cursor.goto_next_sibling():
                cursor.goto_parent()
                parents.pop()
                prevs.pop()
                if not parents:
                    return
