"""What every part of a file's graph walk shares: the source, the spec, what was found.

`WalkBase` holds one file's walk state (source bytes and lines, the grammar's field ids,
the line -> enclosing definition table, the sites, imports and callback hints recorded so
far) and the text helpers every rule uses. The rules live in mixins over it:
`indexer.graph.values` (receivers, assigned values, binding targets),
`indexer.graph.facts` (per-language facts beside the identifiers), `indexer.graph.cfamily`
(C/C++ declarations and macros, Rust macro arguments); `indexer.graph.extract` is the walk.

Invariants: a column is 1-based in characters (not bytes); a site's scope is the innermost
scoping definition of its line (-1: none).
"""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter

from ctxd.indexer.graph.langs_more import node_at, spec_paths
from ctxd.indexer.graph.model import Import, Role, Site
from ctxd.indexer.graph.specs import GraphSpec

__all__ = ["JS_LIKE", "MAX_RECEIVER", "Entry", "WalkBase", "new_site"]

MAX_RECEIVER = 240
"""A longer receiver chain is kept as `?` (not resolvable anyway; JavaPoet's builder
chains reach ~200 characters)."""

JS_LIKE = frozenset({"javascript", "typescript", "tsx"})

Entry = tuple[tree_sitter.Node, Role | None, str | None, str | None]
"""(node, role imposed by its parent, receiver, value)."""

new_site = tuple.__new__
"""`Site`'s own constructor without its Python-level `__new__` (a file has thousands)."""


class WalkBase:
    """One file's walk: the source, the spec, and what it found."""

    def __init__(self, language: str, spec: GraphSpec, source: bytes,
                 scopes: Sequence[int], fids: dict[str, int]) -> None:
        self.language = language
        self.spec = spec
        self.source = source
        self.lines = source.split(b"\n")
        self.ascii = source.isascii()
        self.fids = fids
        """The grammar's field ids by name (0: a field it lacks, which finds nothing)."""
        self.scopes = scopes
        """Line -> the index of the innermost definition holding it (`extract._scopes`)."""
        self.sites: list[Site] = []
        self.imports: list[Import] = []
        self.hints: dict[int, str] = {}
        """Parameter node id -> `@CALLEE#ARG#PARAM`: a callback's parameter typed by the
        callee's own parameter type (`operate((src, sub) => ...)`)."""
        self.forward: set[int] = set()
        """String nodes read as forward references already (nested annotations)."""
        self.paths = spec_paths(spec)
        """The spec's fields that are paths (`specs_base`; none in most grammars)."""

    # ------------------------------------------------------------ text helpers

    def text(self, node: tree_sitter.Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def part(self, node: tree_sitter.Node, field: str) -> tree_sitter.Node | None:
        """The child a spec's field names: a grammar field, or a path (`specs_base`)."""
        if field in self.paths:
            return node_at(node, field, self.fids)
        return node.child_by_field_id(self.fids[field]) if field else None

    def column(self, node: tree_sitter.Node) -> int:
        row, byte = node.start_point
        line = self.lines[row] if row < len(self.lines) else b""
        if line.isascii():
            return byte + 1
        return len(line[:byte].decode("utf-8", "replace")) + 1


    def record(self, name: str, line: int, col: int, role: Role, recv: str | None,
               value: str | None) -> None:
        """A site, with the definition that encloses its line."""
        scopes = self.scopes
        self.sites.append(new_site(Site, (name, line, col, role, recv,
                                           scopes[line] if line < len(scopes) else -1, value)))


    def add(self, name: str, node: tree_sitter.Node, role: Role, recv: str | None = None,
            value: str | None = None, offset: int = 0) -> None:
        """A site that is not an identifier node of its own (a return value, the names in a
        string annotation)."""
        self.record(name, node.start_point[0] + 1, self.column(node) + offset, role, recv,
                    value)

