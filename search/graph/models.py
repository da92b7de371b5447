"""The records the code graph's queries return (`search.graph.queries`).

`GraphDef` is one definition as every answer names it; `Usage` one reference to it;
`Edge` one call between two definitions (the call site and the definition at the other
end, with its depth in a tree); `Refs`, `Calls`, `CallPaths`, `Impact` the answers.
Paths are repository-relative POSIX strings, lines and columns 1-based.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["NOTHING_RESOLVED", "CallPaths", "Calls", "Edge", "GraphDef", "Impact", "ImpactItem",
           "Refs", "Usage"]

NOTHING_RESOLVED = ("No use resolves to it from the files that import its module (a dynamic "
                    "call, or one the graph cannot follow to it, is not counted)")
"""What `refs` says when nothing resolved and no site bearing the name was left
unresolved: the text matches may still exist elsewhere."""


@dataclass(frozen=True, slots=True)
class GraphDef:
    """A definition: its name, qualified name (containers joined with `.`), kind, place."""

    name: str
    qualified_name: str
    kind: str
    repository: str
    path: str
    line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class Usage:
    """One reference to a definition."""

    path: str
    line: int
    column: int
    kind: str
    """`call`, `import`, `inherit`, `reference`, `override` (resolved), `text` (by name)."""
    resolved: bool
    enclosing: str | None
    """The qualified name of the definition the site is in (None: module level)."""
    text: str = ""
    """The site's line, stripped."""


@dataclass(frozen=True, slots=True)
class Refs:
    """`ctxd refs`: the definition and its usages, resolved first, then by name."""

    definitions: list[GraphDef]
    usages: list[Usage]
    total: int
    """Usages before the limit cut them."""
    truncated: bool
    unresolved: int = 0
    """Sites that bear the name in the files searched but did not resolve (by-name
    candidates: `--by-name` lists every text match)."""
    duration_ms: float = 0.0
    note: str = ""
    """Why the answer may be short (the definition's file has no code graph yet)."""
    tests_left_out: int = 0
    """Of the usages the limit cut, those in test files (code comes first, tests after)."""


@dataclass(frozen=True, slots=True)
class Edge:
    """A call: the site and the definition at the other end (the caller for `callers`,
    the callee for `callees`), `depth` 1 for a direct one."""

    site_path: str
    site_line: int
    site_column: int
    definition: GraphDef | None
    """None for a call that did not resolve (`name` says what was called)."""
    name: str
    depth: int
    resolved: bool = True
    parent: int = -1
    """Index in the answer's edges of the edge this one continues (-1: depth 1)."""


@dataclass(frozen=True, slots=True)
class Calls:
    """`ctxd callers` / `ctxd callees`: the edges of a tree down to `depth`, parents first."""

    definition: GraphDef
    direction: str
    """`callers` or `callees`."""
    edges: list[Edge]
    depth: int
    truncated: bool
    duration_ms: float = 0.0
    note: str = ""
    """Why the answer may be short (the definition's file has no code graph yet)."""
    left_out: int = 0
    """Direct calls the limit cut (known when the cut fell among them; 0 otherwise)."""
    tests_left_out: int = 0
    """Of `left_out`, those in test files (each definition's callers list code first)."""


@dataclass(frozen=True, slots=True)
class CallPaths:
    """`ctxd path`: the shortest call chains from one definition to another."""

    source: GraphDef
    target: GraphDef
    paths: list[list[Edge]]
    """Each chain's calls in order (the first called from `source`)."""
    max_depth: int
    duration_ms: float = 0.0
    note: str = ""
    """Why the answer may be short (an end's file has no code graph yet)."""
    truncated: bool = False
    """More shortest chains were found than the limit lists."""


@dataclass(frozen=True, slots=True)
class ImpactItem:
    """A definition (or file) that depends on the subject, `distance` calls/uses away."""

    distance: int
    path: str
    line: int
    name: str | None
    """Qualified name of the dependent definition (None: module-level code of `path`)."""
    is_test: bool
    via: str
    """What it uses: the qualified name at the previous distance."""


@dataclass(frozen=True, slots=True)
class Impact:
    """`ctxd impact`: the transitive dependents, nearest first, and the tests among them."""

    subject: str
    definitions: list[GraphDef]
    items: list[ImpactItem]
    tests: list[ImpactItem] = field(default_factory=list)
    truncated: bool = False
    duration_ms: float = 0.0
    note: str = ""
    """Why the answer may be short (a definition's file has no code graph yet)."""
