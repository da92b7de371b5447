"""`GraphSpec`: one grammar's node types that the graph extractor reads
(`indexer.graph.specs` and `indexer.graph.specs_more` hold the tables). Pure data.

A field named in a spec is a grammar field (`function`, `name`) or, for grammars that
keep fewer parts in fields, a path: `#0` / `#-1` the first / last named child, `@a|b`
the first named child of type `a` or `b`, `f@a|b` the first child in field `f` of one
of those types, `f#-1` the last child in field `f`, `^` the parent, steps joined by `.`
(`suffix.suffix`); `indexer.graph.extract` reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["GraphSpec"]


@dataclass(frozen=True, slots=True)
class GraphSpec:
    """The node types of one grammar that the graph extractor reads."""

    names: frozenset[str]
    """Identifier-like leaves (`identifier`, `property_identifier`, `type_identifier`...)."""
    skip: frozenset[str]
    """Subtrees that are not code: comments, strings, characters."""
    code_inside: frozenset[str] = frozenset()
    """Node types inside a skipped subtree that are code again (interpolations)."""
    calls: Mapping[str, str] = field(default_factory=dict)
    """Call node type -> the field of its callee."""
    members: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Member access node type -> (object field, member name field)."""
    def_names: Mapping[str, str] = field(default_factory=dict)
    """Definition node type -> the field holding its name (not a reference)."""
    params: frozenset[str] = frozenset()
    """Parameter list node types: identifiers directly in them are parameters."""
    param_nodes: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Parameter node type -> (name field, type field) (`''`: none)."""
    binds: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Binding node type -> (target field, value field): assignments, declarators."""
    bind_targets: Mapping[str, str] = field(default_factory=dict)
    """Node type -> field whose identifiers are bound without a known value (`for x in`)."""
    bases: Mapping[str, str] = field(default_factory=dict)
    """Node type -> field holding base classes (`''`: every named child of the node)."""
    not_refs: Mapping[str, str] = field(default_factory=dict)
    """Node type -> a field whose identifier names no code (`f(x=1)`'s `x`, `{key: 1}`)."""
    self_names: frozenset[str] = frozenset({"self", "this", "cls"})
    bind_types: Mapping[str, str] = field(default_factory=dict)
    """Binding node type -> the field (path) of its declared type, where it is not the
    node's own `type` field (C#'s `Job j = ...`: the declaration's)."""
    wrappers: frozenset[str] = frozenset()
    """Binding target node types that wrap one name and its type (Kotlin's
    `variable_declaration`, Swift's `pattern`): the value passes to the name."""
    target_types: frozenset[str] = frozenset()
    """Type node types inside a binding target: read (references), not bound."""
    rules: frozenset[str] = frozenset()
    """Node types with a rule of the language's own (`indexer.graph.langs_more.RULES`)."""
    receivers: Mapping[str, str] = field(default_factory=dict)
    """A receiver node's type or text -> the receiver it reads as (`this_expression` ->
    `this`, PHP `$this` -> `this`, `base` / `super` -> `super()`: the class's base)."""
