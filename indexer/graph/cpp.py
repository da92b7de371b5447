"""C++ classes in a file's walk: what a class body declares, and qualified names.

A class's methods are usually declared in its body (`int get() const;`, in a header) and
defined outside it (`int Box::get() const {...}`, in a `.cpp`): each declaration in the
body binds its name `~decl` in the class (as a C prototype does at file level), so the
resolver can follow `#include`s to the class that declares a method; a field with a named
type (`Box box_;`) is `this->box_` of that type. A name qualified more than once
(`util::Box::make()`, a nested `qualified_identifier` in the grammar) is read as one: the
last name with the whole qualifier as its receiver (`util.Box`), a call when `(` follows.

Invariants: only for `cpp`; nothing is added that the file does not write; a declaration
binds a marker (`~decl`), never a value.
"""

from __future__ import annotations

import re

import tree_sitter

from ctxd.indexer.graph.base import WalkBase
from ctxd.indexer.graph.model import Role
from ctxd.indexer.graph.typetext import type_text

__all__ = ["cpp_class_member", "cpp_qualified"]

_QUALIFIER = re.compile(r"((?:[A-Za-z_]\w*\s*::\s*)+)$")
"""The `a::b::` before a name (on its line)."""
_CLASS_BODIES = frozenset({"field_declaration_list"})
_INDIRECT = frozenset({"pointer_declarator", "reference_declarator", "array_declarator",
                       "parenthesized_declarator"})


def cpp_class_member(walk: WalkBase, node: tree_sitter.Node) -> None:
    """A `field_declaration` in a C++ class body: a method's declaration binds `~decl`
    (`int get() const;`), a field of a named type is `this->NAME` of that type."""
    if walk.language != "cpp" or node.parent is None or node.parent.type not in _CLASS_BODIES:
        return
    kind = node.child_by_field_name("type")
    typed = type_text(walk.text(kind)) if kind is not None and kind.type in (
        "type_identifier", "qualified_identifier", "template_type") else ""
    for top in node.children_by_field_name("declarator"):
        d: tree_sitter.Node | None = top
        while d is not None and d.type in _INDIRECT:
            d = d.child_by_field_name("declarator") or (
                d.named_children[-1] if d.named_child_count else None)
        if d is None:
            continue
        if d.type == "function_declarator":
            name = d.child_by_field_name("declarator")
            if name is not None and name.type in ("field_identifier", "identifier",
                                                  "operator_name", "destructor_name"):
                walk.add(walk.text(name), name, Role.BIND, value="~decl")
        elif d.type == "field_identifier" and typed:
            walk.add(walk.text(d), d, Role.ATTR_BIND, "this", ":" + typed)


def cpp_qualified(walk: WalkBase) -> None:
    """The sites of names qualified more than once (`util::Box::make()`): the whole
    qualifier as the receiver (`util.Box`), and a call when `(` follows the name."""
    lines = walk.lines
    for k, s in enumerate(walk.sites):
        if s.role not in (Role.REF, Role.CALL):
            continue
        row = lines[s.line - 1] if s.line - 1 < len(lines) else b""
        text = row.decode("utf-8", "replace")
        before = text[: s.col - 1]
        if not before.rstrip().endswith("::"):
            continue
        m = _QUALIFIER.search(before)
        if m is None or not text[s.col - 1:].startswith(s.name):
            continue
        start = m.start()
        if start and (text[start - 1].isalnum() or text[start - 1] in "_:>"):
            continue  # (`a.b::c`, `T<X>::c`, `::c`: not a plain qualifier)
        qualifier = ".".join(p.strip() for p in m.group(1).split("::") if p.strip())
        if qualifier == s.receiver and s.role == Role.CALL:
            continue
        after = text[s.col - 1 + len(s.name):].lstrip()
        role = Role.CALL if s.role == Role.CALL or after.startswith("(") else s.role
        walk.sites[k] = s._replace(receiver=qualifier, role=role)
