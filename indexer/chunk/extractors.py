"""Per-language rules for what a tree-sitter definition node is called and where it ends.

`extractor_for(language)` returns an `Extractor`: given a node matched by the
definition query of `indexer.chunk.grammars.SYNTAX` and the kind the table gives its type,
it returns `Extracted` `(name, kind, outer node, scope)` or None to skip the node. The
rules cover what the grammars leave implicit: JS/TS `const f = () => ...`, CommonJS
and prototype assignments; Go receivers, single-spec `type`/`const` declarations;
Rust `impl` blocks; C/C++ declarator chains, `A::f` scopes and typedef'd structs;
Ruby `A::B` names; Python 3.12 `type` aliases (C#, PHP, Kotlin, Swift, Scala and Lua:
`indexer.chunk.extractors_more`). `python_module_variables(root, nav)` lists
a Python module's top-level assignments. `node_text` / `node_field` / `outer_node` are
the small node accessors the rules (and `indexer.chunk.syntax`) share.

Parents come from `indexer.chunk.treenav.TreeNav`, not tree-sitter's `Node.parent`, which
costs time in the number of siblings (quadratic under long comment runs). Pure: no
parsing, no I/O, no state.

Invariants: the outer node contains the matched node (wrappers such as `export` and
`decorated_definition` are climbed only through `SyntaxTable.wrappers`); `scope` is
a container written in the definition itself, joined with `.` (`fmt::Display` ->
`fmt.Display`), never the enclosing definition, which `indexer.chunk.syntax` adds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TypeAlias

import tree_sitter

from ctxd.indexer.chunk.extractors_more import MORE_EXTRACTORS
from ctxd.indexer.chunk.grammars import SyntaxTable
from ctxd.indexer.chunk.treenav import TreeNav

__all__ = [
    "Extracted",
    "Extractor",
    "extractor_for",
    "node_field",
    "node_text",
    "outer_node",
    "python_module_variables",
]


def node_text(node: tree_sitter.Node | None, nav: TreeNav) -> str:
    """The node's source text (`""` for no node)."""
    return "" if node is None else nav.text(node)


def node_field(node: tree_sitter.Node, name: str) -> tree_sitter.Node | None:
    """The node's child in the grammar field `name`, or None."""
    return node.child_by_field_name(name)


def outer_node(
    node: tree_sitter.Node, wrappers: frozenset[str], nav: TreeNav
) -> tree_sitter.Node:
    """The outermost of the node's ancestors whose types are all in `wrappers` (or itself)."""
    outer = node
    while (parent := nav.parent(outer)) is not None and parent.type in wrappers:
        outer = parent
    return outer


_GENERIC_ARGS = re.compile(r"<.*>|\[.*\]", re.DOTALL)


def _type_name(node: tree_sitter.Node | None, nav: TreeNav) -> str:
    """`*Server` -> `Server`, `List[T]` -> `List`, `fmt::Display<T>` -> `fmt.Display`."""
    text = _GENERIC_ARGS.sub("", node_text(node, nav))
    text = text.replace("&", "").replace("*", "").replace("mut ", "").strip()
    text = re.sub(r"'\w+\s*", "", text).strip()
    return text.replace("::", ".")


Extracted: TypeAlias = tuple[str, str, tree_sitter.Node, str | None] | None
"""(name, kind, outer node, scope) or None to skip the node."""

Extractor: TypeAlias = Callable[[tree_sitter.Node, str, SyntaxTable, TreeNav], Extracted]
"""(node matched by the definition query, its kind from the syntax table, the table, the
tree's parents: `TreeNav`, never `Node.parent`, whose cost grows with the siblings)."""


def _named(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    name = node_text(node_field(node, "name"), nav)
    if not name:
        return None
    return name, kind, outer_node(node, table.wrappers, nav), None


_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})


def _is_constant_name(name: str) -> bool:
    letters = name.replace("_", "")
    return (
        len(name) > 1
        and letters.isalnum()
        and letters.upper() == letters
        and any(c.isalpha() for c in letters)
    )


def _at_top_level(decl: tree_sitter.Node | None, nav: TreeNav) -> bool:
    """A JS/TS declaration directly in the program (or in a top-level `export`)."""
    parent = nav.parent(decl) if decl is not None else None
    if parent is not None and parent.type == "export_statement":
        parent = nav.parent(parent)
    return parent is not None and parent.type == "program"


def _js_declarator(node: tree_sitter.Node, table: SyntaxTable, nav: TreeNav) -> Extracted:
    """`const f = () => ...` (function), `const C = class {}`, top-level `const MAX = 1`."""
    name_node = node_field(node, "name")
    if name_node is None or name_node.type != "identifier":
        return None
    value = node_field(node, "value")
    name = node_text(name_node, nav)
    decl = nav.parent(node)
    if value is not None and value.type in _FUNCTION_VALUES:
        kind = "function"
    elif value is not None and value.type == "class":
        kind = "class"
    elif _is_constant_name(name) and _at_top_level(decl, nav):
        kind = "constant"
    else:
        return None
    outer = node
    if decl is not None and decl.type in _JS_DECLARATIONS:
        declarators = [c for c in decl.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            outer = outer_node(decl, table.wrappers, nav)
    return name, kind, outer, None


def _js_assignment(node: tree_sitter.Node, nav: TreeNav) -> Extracted:
    """`exports.f = function ...`, `Foo.prototype.bar = () => ...` (CommonJS, prototypes)."""
    left, right = node_field(node, "left"), node_field(node, "right")
    if left is None or right is None or right.type not in _FUNCTION_VALUES:
        return None
    if left.type != "member_expression":
        return None
    name = node_text(node_field(left, "property"), nav)
    if not name or name == "exports":
        return None
    obj = node_text(node_field(left, "object"), nav)
    if obj == "this":
        return None
    scope = None
    if obj.endswith(".prototype"):
        scope = obj.removesuffix(".prototype")
    parent = nav.parent(node)
    outer = parent if parent is not None and parent.type == "expression_statement" else node
    return name, ("method" if scope else "function"), outer, scope


def _js(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    t = node.type
    if t == "variable_declarator":
        return _js_declarator(node, table, nav)
    if t == "assignment_expression":
        return _js_assignment(node, nav)
    if t in ("field_definition", "public_field_definition"):
        value = node_field(node, "value")
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
        name = node_text(node_field(node, "property") or node_field(node, "name"), nav)
        return (name, "method", node, None) if name else None
    if t == "method_definition":
        name = node_text(node_field(node, "name"), nav)
        if not name:
            return None
        return name, ("constructor" if name == "constructor" else "method"), node, None
    if t == "module":
        name = node_text(node_field(node, "name"), nav).strip("'\"")
        return (name, kind, outer_node(node, table.wrappers, nav), None) if name else None
    return _named(node, kind, table, nav)


def _go_single_spec_outer(node: tree_sitter.Node, nav: TreeNav) -> tree_sitter.Node:
    decl = nav.parent(node)
    if decl is None:
        return node
    if decl.type.endswith("_spec_list"):
        decl = nav.parent(decl)
        if decl is None:
            return node
    specs = [c for c in decl.named_children if c.type == node.type]
    return decl if len(specs) == 1 and decl.type.endswith("_declaration") else node


def _go(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    t = node.type
    if t == "method_declaration":
        name = node_text(node_field(node, "name"), nav)
        receiver = node_field(node, "receiver")
        scope = None
        if receiver is not None:
            params = [c for c in receiver.named_children if c.type == "parameter_declaration"]
            if params:
                scope = _type_name(node_field(params[0], "type"), nav) or None
        return (name, "method", node, scope) if name else None
    if t in ("type_spec", "type_alias"):
        name = node_text(node_field(node, "name"), nav)
        type_node = node_field(node, "type")
        if type_node is not None and type_node.type == "struct_type":
            kind = "struct"
        elif type_node is not None and type_node.type == "interface_type":
            kind = "interface"
        return (name, kind, _go_single_spec_outer(node, nav), None) if name else None
    if t in ("const_spec", "var_spec"):
        decl = nav.parent(node)
        while decl is not None and not decl.type.endswith("_declaration"):
            decl = nav.parent(decl)
        top = nav.parent(decl) if decl is not None else None
        if top is None or top.type != "source_file":
            return None
        name = node_text(node_field(node, "name"), nav)
        return (name, kind, _go_single_spec_outer(node, nav), None) if name else None
    return _named(node, kind, table, nav)


def _rust(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    t = node.type
    if t == "impl_item":
        name = _type_name(node_field(node, "type"), nav)
        return (name, kind, node, None) if name else None
    if t == "mod_item" and node_field(node, "body") is None:
        return None
    return _named(node, kind, table, nav)


_C_NAME_TYPES = frozenset(
    {"identifier", "field_identifier", "destructor_name", "operator_name", "type_identifier"}
)


def _c_declarator_name(node: tree_sitter.Node, nav: TreeNav) -> tuple[str, str | None] | None:
    """(name, scope) of a function definition's declarator chain."""
    decl = node_field(node, "declarator")
    depth = 0
    while decl is not None and decl.type != "function_declarator" and depth < 8:
        decl = node_field(decl, "declarator")
        depth += 1
    if decl is None:
        return None
    target = node_field(decl, "declarator")
    scope: list[str] = []
    while target is not None and target.type == "qualified_identifier":
        scope_node = node_field(target, "scope")
        if scope_node is not None:
            scope.append(_type_name(scope_node, nav))
        target = node_field(target, "name")
    if target is None:
        return None
    if target.type == "template_function":
        target = node_field(target, "name")
    name = node_text(target, nav)
    if not name or (target is not None and target.type not in _C_NAME_TYPES):
        return None
    return name, (".".join(s for s in scope if s) or None)


_C_SPECIFIERS = frozenset(
    {"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}
)


def _typedef_name(node: tree_sitter.Node, nav: TreeNav) -> str:
    decl = node_field(node, "declarator")
    depth = 0
    while decl is not None and decl.type != "type_identifier" and depth < 8:
        decl = node_field(decl, "declarator")
        depth += 1
    return node_text(decl, nav) if decl is not None else ""


def _c(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    t = node.type
    if t == "function_definition":
        named = _c_declarator_name(node, nav)
        if named is None:
            return None
        name, scope = named
        return name, kind, outer_node(node, table.wrappers, nav), scope
    if t in _C_SPECIFIERS:
        if node_field(node, "body") is None:
            return None
        name = node_text(node_field(node, "name"), nav)
        outer = node
        parent = nav.parent(node)
        if parent is not None and parent.type == "type_definition":
            outer = parent
            name = _typedef_name(parent, nav) or name
        elif parent is not None and parent.type == "declaration":
            outer = parent
        if not name:
            return None
        return name.replace("::", "."), kind, outer_node(outer, table.wrappers, nav), None
    if t == "type_definition":
        type_node = node_field(node, "type")
        if type_node is not None and type_node.type in _C_SPECIFIERS:
            if node_field(type_node, "body") is not None:
                return None
        name = _typedef_name(node, nav)
        return (name, kind, outer_node(node, table.wrappers, nav), None) if name else None
    if t == "namespace_definition":
        name = node_text(node_field(node, "name"), nav).replace("::", ".")
        return (name, kind, node, None) if name else None
    return _named(node, kind, table, nav)


def _ruby(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    name_node = node_field(node, "name")
    if name_node is None:
        return None
    if name_node.type == "scope_resolution":
        full = node_text(name_node, nav).replace("::", ".").lstrip(".")
        scope, _, name = full.rpartition(".")
        return name, kind, node, (scope or None)
    name = node_text(name_node, nav)
    return (name, kind, node, None) if name else None


def _default(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> Extracted:
    if node.type == "type_alias_statement":  # Python 3.12 `type X[T] = ...`
        name = _GENERIC_ARGS.sub("", node_text(node_field(node, "left"), nav)).strip()
        return (name, kind, node, None) if name else None
    return _named(node, kind, table, nav)


_EXTRACTORS: dict[str, Extractor] = {
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "rust": _rust,
    "c": _c,
    "cpp": _c,
    "ruby": _ruby,
}


def extractor_for(language: str) -> Extractor:
    """The language's extractor; the generic one (the `name` field) when it has no rules."""
    return _EXTRACTORS.get(language) or MORE_EXTRACTORS.get(language, _default)


def python_module_variables(
    root: tree_sitter.Node, nav: TreeNav
) -> Iterator[tuple[str, str, tree_sitter.Node]]:
    """Module-level `NAME = ...` / `NAME: T = ...` (dunder names left out)."""
    for child in root.named_children:
        if child.type != "expression_statement" or child.named_child_count != 1:
            continue
        assign = child.named_children[0]
        if assign.type != "assignment":
            continue
        left = node_field(assign, "left")
        if left is None or left.type != "identifier":
            continue
        name = node_text(left, nav)
        if name.startswith("__") and name.endswith("__"):
            continue
        yield name, ("constant" if _is_constant_name(name) else "variable"), child
