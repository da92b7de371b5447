"""The walk's fast path: `run(walk, root)` is `_Walk.run`'s loop with one table lookup
per node, a node with nothing to say pushing its children in one go, and the node kinds
met most (a member access, a call, a keyword argument) handled without
`_Walk.children`'s general rules.

`plain_kinds(spec, language)` names the node types whose only rule in
`indexer.graph.extract._Walk.children` is one of `MEMBER` (`a.b`: the name gets the
node's role and its receiver), `CALL` (`f(x)`: the callee is called) or `NOT_REF` (`f(x=1)`:
the keyword names no code), and `push_plain` pushes such a node's children onto the walk's
stack exactly as the general rules would order and label them. A type that is in two
tables (Java's `method_invocation`, Ruby's `call`), a JS/TS call (it reads `require` and
callback hints) or a node under a base-class role takes the general path.

Invariant: `extract` gives the same `FileGraph` with the fast path as without it
(`FAST = False`: `_Walk.run`, the reference; tests/indexer/graph/test_extract_fast.py
compares the two on real code of every grammar); a new rule in `_Walk.run` must be
mirrored in `run`, a new rule in `_Walk.children` for one of the plain kinds in
`push_plain` (or the type left out of `plain_kinds`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import tree_sitter

from ctxd.indexer.graph.imports import IMPORT_NODES, imports_of
from ctxd.indexer.graph.model import Role
from ctxd.indexer.graph.specs import GraphSpec

if TYPE_CHECKING:
    from ctxd.indexer.graph.extract import Entry, _Walk

__all__ = ["CALL", "FAST", "MEMBER", "NOT_REF", "plain_kinds", "push_plain", "run"]

FAST = True
"""Whether the walk takes the fast paths (off: every node through `_Walk.children`)."""

NAME, MEMBER, CALL, NOT_REF, OTHER = 0, 1, 2, 3, 9
_JS_LIKE = frozenset({"javascript", "typescript", "tsx"})
_ADHOC = frozenset({"as_pattern", "function_type", "arrow_function", "call"})
"""Types `_Walk.children` has rules for outside the spec's tables."""
_KINDS: dict[tuple[int, str], dict[str, int]] = {}
_ROUTES: dict[tuple[int, str], dict[str, int]] = {}
_OWN_ROLES = (Role.CALL, Role.ATTR_BIND, Role.INHERIT)


def plain_kinds(spec: GraphSpec, language: str) -> dict[str, int]:
    """Node type -> its one rule (`MEMBER`, `CALL`, `NOT_REF`), for the types that have
    no other rule in `_Walk.children`."""
    key = (id(spec), language)
    got = _KINDS.get(key)
    if got is not None:
        return got
    tables: list[set[str]] = [set(spec.members), set(spec.calls), set(spec.not_refs),
                              set(spec.def_names), set(spec.bases), set(spec.params),
                              set(spec.param_nodes), set(spec.binds),
                              set(spec.bind_targets), set(_ADHOC)]
    got = {}
    for kind, table in ((MEMBER, tables[0]), (CALL, tables[1]), (NOT_REF, tables[2])):
        for t in table:
            if sum(t in other for other in tables) != 1:
                continue
            if kind == CALL and language in _JS_LIKE:
                continue
            got[t] = kind
    _KINDS[key] = got
    return got


def push_plain(  # noqa: C901 - one branch per plain kind
        walk: _Walk, node: tree_sitter.Node, kind: int, role: Role | None,
        value: str | None, push: Callable[[Entry], None]) -> bool:
    """Push the children of a `plain_kinds` node as `_Walk.children` would (reversed, so
    that they pop in order); False: not handled, take the general path."""
    spec = walk.spec
    if kind == MEMBER:
        obj_f, name_f = spec.members[node.type]
        name = node.child_by_field_name(name_f) if name_f else None
        kids = node.named_children
        if name is None or name.type not in spec.names:
            for k in range(len(kids) - 1, -1, -1):
                push((kids[k], None, None, None))
            return True
        obj = node.child_by_field_name(obj_f) if obj_f else None
        own = Role.ATTR_BIND if role == Role.BIND else role
        if own not in _OWN_ROLES:
            own = Role.REF
        entry: Entry = (name, own, walk.receiver(obj) if obj is not None else None, value)
        nid = name.id
        for k in range(len(kids) - 1, -1, -1):
            c = kids[k]
            push(entry if c.id == nid else (c, None, None, None))
        return True
    if role == Role.INHERIT:
        return False
    if kind == CALL:
        callee = node.child_by_field_name(spec.calls[node.type])
        cid = -1
        if callee is not None:
            ct = callee.type
            if ct in spec.names or ct in spec.members:
                cid = callee.id
            elif ct == "generic_type":
                return False
        kids = node.named_children
        for k in range(len(kids) - 1, -1, -1):
            c = kids[k]
            push((c, Role.CALL, None, None) if c.id == cid else (c, None, None, None))
        return True
    f = spec.not_refs[node.type]
    skip = -1
    for c in (node.children_by_field_name(f) if f else node.children):
        if c.is_named and c.type in spec.names:
            skip = c.id
            break
    kids = node.named_children
    for k in range(len(kids) - 1, -1, -1):
        c = kids[k]
        if c.id != skip:
            push((c, None, None, None))
    return True


def routes(walk: _Walk) -> dict[str, int]:
    """Node type -> `NAME`, a plain kind, or `OTHER` (any other rule of `_Walk.run`);
    a type not in it passes its children on."""
    from ctxd.indexer.graph.extract import _EXTRA, _special

    key = (id(walk.spec), walk.language)
    got = _ROUTES.get(key)
    if got is None:
        spec = walk.spec
        others = {*IMPORT_NODES.get(walk.language, {}), *_EXTRA, *spec.skip, *_special(spec)}
        got = dict.fromkeys(others, OTHER)
        for t, kind in plain_kinds(spec, walk.language).items():
            if t not in IMPORT_NODES.get(walk.language, {}) and t not in _EXTRA and (
                    t not in spec.skip):
                got[t] = kind
        got.update(dict.fromkeys(spec.names, NAME))
        _ROUTES[key] = got
    return got


def run(walk: _Walk, root: tree_sitter.Node) -> None:  # noqa: C901 - one loop over the tree
    """`_Walk.run`, faster (see the module docstring)."""
    from ctxd.indexer.graph.extract import _EXTRA, _special

    spec = walk.spec
    route = routes(walk)
    special = _special(spec)
    import_nodes = IMPORT_NODES.get(walk.language, {})
    stack: list[Entry] = [(root, None, None, None)]
    pop, push, extend = stack.pop, stack.append, stack.extend
    site, children = walk.site, walk.children
    inherit = Role.INHERIT
    while stack:
        entry = pop()
        node = entry[0]
        t = node.type
        r = route.get(t)
        if r is None and entry[1] is not inherit:  # most nodes: nothing to say
            extend([(c, None, None, None) for c in node.named_children[::-1]])
            continue
        _, role, recv, value = entry
        if r == NAME:
            site(node, role, recv, value)
            continue
        if r is not None and r != OTHER:
            if push_plain(walk, node, r, role, value, push):
                continue
        elif r == OTHER:
            if t in import_nodes:
                found = imports_of(walk.language, node, walk.text)
                if found is not None:
                    walk.imports.extend(found[0])
                    for n in found[1]:
                        site(n, Role.IMPORT, None, None)
                    continue
            if t in _EXTRA:
                _EXTRA[t](walk, node)
            if t in spec.skip:
                for child in node.named_children:
                    if child.type in spec.code_inside:
                        push((child, None, None, None))
                continue
            if t not in special and role != inherit:
                extend([(c, None, None, None) for c in node.named_children[::-1]])
                continue
        for e in reversed(children(node, role, recv, value)):
            push(e)
