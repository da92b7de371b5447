"""What a definition is called in C#, PHP, Kotlin, Swift, Scala, Lua and Elixir.

The same contract as `indexer.chunk.extractors` (which hands these languages to
`MORE_EXTRACTORS`): given a node matched by the definition query of
`indexer.chunk.grammars.SYNTAX` and the kind the table gives its type, return
`(name, kind, outer node, scope)` or None to skip the node. The rules cover what the
grammars leave implicit:

- C#: only `const` fields (and `static readonly` ones named in capitals) are constants,
  one symbol per declarator; `record struct` is a struct.
- PHP: `__construct` is a constructor; each `const` element is a constant.
- Kotlin: `interface` and `enum class` are `class_declaration`s with a keyword; an unnamed
  `companion object` is no definition (its members belong to the class); a secondary
  `constructor` is named after its class; an extension function `fun T.f()` has the
  receiver `T` as its scope (not when `T` is a type parameter); `const val` is a constant,
  other `val`/`var` of a class body are properties, of a file variables (locals are left
  out).
- Swift: `class_declaration` is a class, struct, enum, actor or extension by its keyword
  (an extension is named after the type it extends, kind `extension`); `let`/`var` of a
  type body are properties, of the file constants/variables.
- Scala: `def this(...)` is a constructor; `val`/`var` of a class, object or trait body,
  or of the file, are definitions (locals are left out).
- Lua: `function M.f()` / `M:f()` have `M` as their scope (`:` makes a method).
- Elixir: definitions are calls (`defmodule`, `def`, ...): see `_elixir`.

Namespaces and packages (C# `namespace`, PHP `namespace`, Kotlin/Scala `package`) are not
definitions, as Java's `package` is not: a file is their unit, and they would wrap every
definition of the file. Pure: no parsing, no I/O, no state; parents come from `TreeNav`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeAlias

import tree_sitter

from ctxd.indexer.chunk.grammars import SyntaxTable
from ctxd.indexer.chunk.treenav import TreeNav

__all__ = ["MORE_EXTRACTORS"]

_Extracted: TypeAlias = tuple[str, str, tree_sitter.Node, str | None] | None
_Extractor: TypeAlias = Callable[[tree_sitter.Node, str, SyntaxTable, TreeNav], _Extracted]

_GENERIC_ARGS = re.compile(r"<.*>|\[.*\]", re.DOTALL)


def _text(node: tree_sitter.Node | None, nav: TreeNav) -> str:
    return "" if node is None else nav.text(node)


def _field(node: tree_sitter.Node, name: str) -> tree_sitter.Node | None:
    return node.child_by_field_name(name)


def _child(node: tree_sitter.Node, *types: str) -> tree_sitter.Node | None:
    """The first named child of one of `types`."""
    for child in node.named_children:
        if child.type in types:
            return child
    return None


def _keywords(node: tree_sitter.Node) -> set[str]:
    """The anonymous (keyword) children's types: `interface`, `struct`, `let`, ..."""
    return {c.type for c in node.children if not c.is_named}


def _named(node: tree_sitter.Node, kind: str, nav: TreeNav) -> _Extracted:
    name = _text(_field(node, "name"), nav)
    return (name, kind, node, None) if name else None


def _type_name(node: tree_sitter.Node | None, nav: TreeNav) -> str:
    """`Foo<T>` -> `Foo`, `Outer.Inner` stays, `?`/`!` dropped."""
    return _GENERIC_ARGS.sub("", _text(node, nav)).strip().rstrip("?!").strip()


def _single_or_own(node: tree_sitter.Node, decl: tree_sitter.Node, outer: tree_sitter.Node,
                   ) -> tree_sitter.Node:
    """`outer` (the whole declaration) when `decl` declares only `node`, else `node`."""
    same = [c for c in decl.named_children if c.type == node.type]
    return outer if len(same) == 1 else node


# ---------------------------------------------------------------- C#


def _csharp_constant(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    decl = nav.parent(node)
    field = nav.parent(decl) if decl is not None else None
    if decl is None or field is None or field.type != "field_declaration":
        return None
    name = _text(_field(node, "name"), nav)
    if not name:
        return None
    modifiers = {_text(c, nav) for c in field.named_children if c.type == "modifier"}
    is_static_readonly = {"static", "readonly"} <= modifiers and name[:1].isupper()
    if "const" not in modifiers and not is_static_readonly:
        return None
    return name, "constant", _single_or_own(node, decl, field), None


def _csharp(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    t = node.type
    if t == "variable_declarator":
        return _csharp_constant(node, nav)
    if t == "record_declaration" and "struct" in _keywords(node):
        kind = "struct"
    return _named(node, kind, nav)


# ---------------------------------------------------------------- PHP


def _php(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    t = node.type
    if t == "const_element":
        name = _text(_child(node, "name"), nav)
        decl = nav.parent(node)
        if not name or decl is None:
            return None
        return name, kind, _single_or_own(node, decl, decl), None
    got = _named(node, kind, nav)
    if got is not None and t == "method_declaration" and got[0] == "__construct":
        return got[0], "constructor", got[2], None
    return got


# ---------------------------------------------------------------- Kotlin

_KOTLIN_BODIES = frozenset({"class_body", "enum_class_body"})


def _kotlin_owner(node: tree_sitter.Node, nav: TreeNav) -> tree_sitter.Node | None:
    """The class, object or companion whose body holds `node` (None: not in a body)."""
    body = nav.parent(node)
    if body is None or body.type not in _KOTLIN_BODIES:
        return None
    return nav.parent(body)


def _kotlin_class(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    name = _text(_field(node, "name"), nav)
    if not name:
        return None
    keywords = _keywords(node)
    kind = "class"
    if "interface" in keywords:
        kind = "interface"
    else:
        modifiers = _child(node, "modifiers")
        if modifiers is not None and any(
            c.type == "class_modifier" and _text(c, nav) == "enum"
            for c in modifiers.named_children
        ):
            kind = "enum"
    return name, kind, node, None


def _kotlin_function(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    name_node = _field(node, "name")
    name = _text(name_node, nav)
    if not name or name_node is None:
        return None
    owner = nav.parent(node)
    if owner is not None and owner.type not in ("source_file", *_KOTLIN_BODIES):
        return None  # a local function
    scope = None
    type_params: set[str] = set()
    for child in node.named_children:  # `fun Receiver.name(...)`: the type before the name
        if child.start_byte >= name_node.start_byte:
            break
        if child.type == "type_parameters":
            type_params = {_text(_child(p, "identifier"), nav) for p in child.named_children}
        elif child.type in ("user_type", "nullable_type"):
            scope = _type_name(child, nav) or None
    if scope in type_params:
        scope = None  # `fun <T : Base> T.name()`: no one type
    return name, "function", node, scope


def _kotlin_property(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    parent = nav.parent(node)
    if parent is None or (parent.type != "source_file" and parent.type not in _KOTLIN_BODIES):
        return None
    var = _child(node, "variable_declaration")
    name = _text(_child(var, "identifier") if var is not None else None, nav)
    if not name:
        return None
    modifiers = _child(node, "modifiers")
    const = modifiers is not None and any(
        c.type == "property_modifier" and _text(c, nav) == "const"
        for c in modifiers.named_children
    )
    if const:
        kind = "constant"
    elif parent.type == "source_file":
        kind = "variable"
    else:
        kind = "property"
    return name, kind, node, None


def _kotlin(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    t = node.type
    if t == "class_declaration":
        return _kotlin_class(node, nav)
    if t == "function_declaration":
        return _kotlin_function(node, nav)
    if t == "property_declaration":
        return _kotlin_property(node, nav)
    if t == "secondary_constructor":
        owner = _kotlin_owner(node, nav)
        name = _text(_field(owner, "name"), nav) if owner is not None else ""
        return (name, kind, node, None) if name else None
    if t == "type_alias":
        name = _text(_field(node, "type"), nav)
        return (name, kind, node, None) if name else None
    return _named(node, kind, nav)  # object_declaration; an unnamed companion: None


# ---------------------------------------------------------------- Swift

_SWIFT_KINDS = {"class": "class", "struct": "struct", "enum": "enum", "actor": "class",
                "extension": "extension"}
_SWIFT_BODIES = frozenset({"class_body", "enum_class_body", "protocol_body"})


def _swift_property(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    parent = nav.parent(node)
    if parent is None or (parent.type != "source_file" and parent.type not in _SWIFT_BODIES):
        return None
    pattern = _field(node, "name")
    name = _text(_field(pattern, "bound_identifier") if pattern is not None else None, nav)
    if not name:
        name = _text(pattern, nav) if pattern is not None and pattern.named_child_count <= 1 else ""
    name = name.strip("`")
    if not name or not (name[:1].isalpha() or name[:1] == "_"):
        return None
    if parent.type != "source_file":
        return name, "property", node, None
    binding = _child(node, "value_binding_pattern")
    is_let = binding is not None and _text(binding, nav).startswith("let")
    return name, ("constant" if is_let else "variable"), node, None


def _swift(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    t = node.type
    if t == "class_declaration":
        keyword = _text(_field(node, "declaration_kind"), nav)
        name = _type_name(_field(node, "name"), nav)
        return (name, _SWIFT_KINDS.get(keyword, "class"), node, None) if name else None
    if t == "init_declaration":
        return "init", kind, node, None
    if t in ("property_declaration", "protocol_property_declaration"):
        return _swift_property(node, nav)
    if t == "function_declaration":
        parent = nav.parent(node)
        if parent is not None and parent.type not in ("source_file", *_SWIFT_BODIES):
            return None  # a nested function
    got = _named(node, kind, nav)
    return None if got is None else (got[0].strip("`"), got[1], got[2], None)


# ---------------------------------------------------------------- Scala

_SCALA_BODIES = frozenset({"template_body", "compilation_unit", "enum_body"})


def _scala_value(node: tree_sitter.Node, nav: TreeNav) -> _Extracted:
    body = nav.parent(node)
    if body is None or body.type not in _SCALA_BODIES:
        return None
    pattern = _field(node, "pattern")
    if pattern is None or pattern.type != "identifier":
        return None
    name = _text(pattern, nav)
    owner = nav.parent(body) if body.type != "compilation_unit" else None
    is_val = node.type == "val_definition"
    if owner is not None and owner.type not in ("object_definition", "package_object"):
        kind = "property"
    else:
        kind = "constant" if is_val else "variable"
    return name, kind, node, None


def _scala(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    t = node.type
    if t in ("val_definition", "var_definition"):
        return _scala_value(node, nav)
    if t in ("function_definition", "function_declaration"):
        parent = nav.parent(node)
        if parent is not None and parent.type not in (*_SCALA_BODIES, "extension_definition"):
            return None  # a local `def`
        got = _named(node, kind, nav)
        if got is not None and got[0] == "this":
            return got[0], "constructor", node, None
        return got
    return _named(node, kind, nav)


# ---------------------------------------------------------------- Lua


def _lua(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    name_node = _field(node, "name")
    if name_node is None:
        return None
    if name_node.type in ("dot_index_expression", "method_index_expression"):
        full = _text(name_node, nav)
        scope, sep, name = max((full.rpartition(s) for s in (":", ".")), key=lambda p: len(p[0]))
        if not name or not scope:
            return None
        return name, ("method" if sep == ":" else "function"), node, scope
    name = _text(name_node, nav)
    return (name, kind, node, None) if name else None


# ---------------------------------------------------------------- Elixir

_EX_MODULES = {"defmodule": "module", "defprotocol": "interface", "defimpl": "impl"}
_EX_FUNCTIONS = frozenset({"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp",
                           "defdelegate", "defn", "defnp"})


def _elixir_head(args: tree_sitter.Node, nav: TreeNav) -> str:
    """The name of `def name(args) when guard`, `def name, do: ...`, `def a + b`."""
    head = args.named_children[0] if args.named_child_count else None
    if head is not None and head.type == "binary_operator":  # `name(x) when is_atom(x)`
        head = _field(head, "left")
    if head is not None and head.type == "call":
        head = _field(head, "target")
    return _text(head, nav) if head is not None and head.type == "identifier" else ""


def _elixir(node: tree_sitter.Node, kind: str, table: SyntaxTable, nav: TreeNav) -> _Extracted:
    """`defmodule A.B` (module `B` in scope `A`), `defprotocol` (interface), `defimpl P,
    for: T` (impl named after `T`, else `P`), and `def`/`defp`/`defmacro`/... (functions)."""
    target = _text(_field(node, "target"), nav)
    if target not in _EX_MODULES and target not in _EX_FUNCTIONS:
        return None
    args = _child(node, "arguments")
    if args is None or not args.named_child_count:
        return None
    if target in _EX_FUNCTIONS:
        name = _elixir_head(args, nav)
        return (name, "function", node, None) if name else None
    alias = args.named_children[0]
    if target == "defimpl":
        for pair in (p for k in args.named_children if k.type == "keywords"
                     for p in k.named_children):
            if _text(_field(pair, "key"), nav).rstrip(": ") == "for":
                alias = _field(pair, "value") or alias
    if alias.type != "alias":
        return None
    scope, _, name = _text(alias, nav).rpartition(".")
    return name, _EX_MODULES[target], node, (scope or None)


MORE_EXTRACTORS: dict[str, _Extractor] = {
    "csharp": _csharp,
    "php": _php,
    "kotlin": _kotlin,
    "swift": _swift,
    "scala": _scala,
    "lua": _lua,
    "elixir": _elixir,
}
"""The extractor of each language this module covers."""
