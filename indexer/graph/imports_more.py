"""What an import statement imports in C#, PHP, Kotlin, Swift, Scala, Lua and Elixir
(`indexer.graph.imports` merges these handlers into `IMPORT_NODES`).

C# `using A.B;` (a namespace: name `*`), `using static A.B;`, `using X = A.B.C;`; PHP
`use A\\B\\C;`, `use A\\{B, C as D};`, `use function A\\f;` (separators read as `.`);
Kotlin `import a.b.C`, `import a.b.*`, `import a.b.C as D`, and `package a.b`; Scala
`import a.b.C`, `import a.b._` / `a.b.*`, `import a.b.{C, D => E}`, and `package a.b`;
Swift `import Module`; Lua `local m = require("a.b")`; Elixir `alias A.B` (binds `B`),
`alias A.B, as: C`, `alias A.{B, C}`, `import A.B` / `use A.B` (every function: `*`),
`require A.B`. A file's own package or namespace is an `Import` of level -1 (binds no
name; `link_keys` keys the file under its last part, as the files that import it are).
Pure: reads the tree and the source.
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter

from ctxd.indexer.graph.model import Import

__all__ = ["GLOBAL_LEVEL", "MORE_IMPORT_NODES", "PACKAGE_LEVEL", "package_of"]

Found = tuple[list[Import], list[tree_sitter.Node]]
Text = Callable[[tree_sitter.Node | None], str]
Handler = Callable[[tree_sitter.Node, Text], "Found | None"]

PACKAGE_LEVEL = -1
"""`Import.level` of a file's own package or namespace record."""
GLOBAL_LEVEL = -2
"""`Import.level` of a C# `global using A.B;` (every file of the project sees `A.B`)."""


def _line(node: tree_sitter.Node) -> int:
    return node.start_point[0] + 1


def _dotted(text: str) -> str:
    """A qualified name with `.` between its parts (`A\\B` -> `A.B`, `a . b` -> `a.b`)."""
    return ".".join(p for p in text.replace("\\", ".").replace(" ", "").split(".") if p)


def package_of(node: tree_sitter.Node, text: Text) -> Import | None:
    """The package record of a C# namespace, PHP namespace, Kotlin or Scala package node."""
    name = node.child_by_field_name("name")
    if name is None:
        name = next((c for c in node.named_children if c.type in (
            "qualified_identifier", "identifier", "package_identifier")), None)
    module = _dotted(text(name)) if name is not None else ""
    return Import(module, None, None, PACKAGE_LEVEL, _line(node)) if module else None


def _csharp(node: tree_sitter.Node, text: Text) -> Found:
    alias = node.child_by_field_name("name")
    target = next((c for c in node.named_children if c.type in (
        "qualified_name", "identifier", "generic_name", "alias_qualified_name")
                   and (alias is None or c.id != alias.id)), None)
    full = _dotted(text(target))
    if not full:
        return [], []
    if alias is not None:
        module, _, name = full.rpartition(".")
        return [Import(module, name, text(alias), 0, _line(node))], [alias]
    level = GLOBAL_LEVEL if any(c.type == "global" for c in node.children) else 0
    return [Import(full, "*", None, level, _line(node))], []


def _php_clause(clause: tree_sitter.Node, prefix: str, line: int, text: Text,
                out: list[Import], bound: list[tree_sitter.Node]) -> None:
    alias = clause.child_by_field_name("alias")
    target = next((c for c in clause.named_children if c.type in ("qualified_name", "name")
                   and (alias is None or c.id != alias.id)), None)
    full = _dotted(".".join(p for p in (prefix, text(target)) if p))
    module, _, name = full.rpartition(".")
    if not name:
        return
    out.append(Import(module, name, text(alias) or None, 0, line))
    last = alias if alias is not None else (
        target.named_children[-1] if target is not None and target.type == (
            "qualified_name") and target.named_child_count else target)
    if last is not None:
        bound.append(last)


def _php(node: tree_sitter.Node, text: Text) -> Found:
    out: list[Import] = []
    bound: list[tree_sitter.Node] = []
    prefix = next((_dotted(text(c)) for c in node.named_children
                   if c.type == "namespace_name"), "")
    group = node.child_by_field_name("body")
    clauses = group.named_children if group is not None else node.named_children
    for c in clauses:
        if c.type == "namespace_use_clause":
            _php_clause(c, prefix, _line(node), text, out, bound)
    return out, bound


def _kotlin(node: tree_sitter.Node, text: Text) -> Found:
    if node.type == "package_header":
        got = package_of(node, text)
        return ([got] if got is not None else []), []
    path = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    if path is None:
        return [], []
    full, line = _dotted(text(path)), _line(node)
    if any(c.type == "*" for c in node.children):
        return [Import(full, "*", None, 0, line)], []
    alias = next((c for c in node.named_children if c.type == "identifier"), None)
    module, _, name = full.rpartition(".")
    last = alias if alias is not None else (path.named_children[-1]
                                            if path.named_child_count else None)
    return ([Import(module, name, text(alias) or None, 0, line)],
            [last] if last is not None else [])


def _scala(node: tree_sitter.Node, text: Text) -> Found | None:
    line = _line(node)
    if node.type == "package_clause":
        if node.child_by_field_name("body") is not None:
            return None  # `package a { ... }`: its body is code
        got = package_of(node, text)
        return ([got] if got is not None else []), []
    parts = [text(c) for c in node.children_by_field_name("path") if c.is_named]
    out: list[Import] = []
    bound: list[tree_sitter.Node] = []
    tail = [c for c in node.named_children if c.type in (
        "namespace_wildcard", "namespace_selectors", "as_renamed_identifier")]
    module = ".".join(parts)
    if not tail:
        named = [c for c in node.children_by_field_name("path") if c.is_named]
        if len(parts) >= 2:
            out.append(Import(".".join(parts[:-1]), parts[-1], None, 0, line))
            bound.append(named[-1])
        return out, bound
    for t in tail:
        _scala_selectors(t, module, line, text, out, bound)
    return out, bound


def _scala_selectors(t: tree_sitter.Node, module: str, line: int, text: Text,
                     out: list[Import], bound: list[tree_sitter.Node]) -> None:
    """`_`/`*`, `{C, D => E, F => _}` after `import a.b.`."""
    if t.type == "namespace_wildcard":
        out.append(Import(module, "*", None, 0, line))
        return
    for c in t.named_children:
        if c.type == "identifier":
            out.append(Import(module, text(c), None, 0, line))
            bound.append(c)
        elif c.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
            name, alias = c.child_by_field_name("name"), c.child_by_field_name("alias")
            if text(alias) in ("_", ""):
                continue  # `{A => _}`: hides A
            out.append(Import(module, text(name), text(alias), 0, line))
            if alias is not None:
                bound.append(alias)
        elif c.type == "namespace_wildcard":
            out.append(Import(module, "*", None, 0, line))


def _swift(node: tree_sitter.Node, text: Text) -> Found:
    path = next((c for c in node.named_children if c.type == "identifier"), None)
    module = _dotted(text(path))
    return ([Import(module, None, None, 0, _line(node))] if module else []), []


def _lua(node: tree_sitter.Node, text: Text) -> Found | None:
    """`require("a.b")`: the module, bound to the name it is assigned to (`local m =
    require(...)`; `local a, b = require(...), ...` pairs them by place)."""
    if text(node.child_by_field_name("name")) != "require":
        return None
    args = node.child_by_field_name("arguments")
    strings = [c for c in (args.named_children if args is not None else []) if c.type == "string"]
    if len(strings) != 1:
        return None
    content = strings[0].child_by_field_name("content")
    module = text(content).strip()
    if not module:
        return None
    alias: str | None = None
    values, assign = node.parent, node.parent.parent if node.parent is not None else None
    if values is not None and assign is not None and values.type == "expression_list" and (
            assign.type == "assignment_statement"):
        place = [c.id for c in values.named_children].index(node.id)
        targets = next((c for c in assign.named_children if c.type == "variable_list"), None)
        names = targets.named_children if targets is not None else []
        if place < len(names) and names[place].type == "identifier":
            alias = text(names[place])
    return [Import(module, None, alias, 0, _line(node))], []


_EX_IMPORTS = frozenset({"alias", "import", "require", "use"})


def _elixir(node: tree_sitter.Node, text: Text) -> Found | None:
    """`alias`/`import`/`require`/`use` calls (any other call: None, its children are
    code)."""
    target = node.child_by_field_name("target")
    verb = text(target) if target is not None and target.type == "identifier" else ""
    if verb not in _EX_IMPORTS:
        return None
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    first = args.named_children[0] if args is not None and args.named_child_count else None
    if first is None:
        return [], []
    line = _line(node)
    as_name = ""
    for kw in (k for k in args.named_children if k.type == "keywords") if args else ():
        for pair in kw.named_children:
            if text(pair.child_by_field_name("key")).rstrip(": ") == "as":
                as_name = text(pair.child_by_field_name("value"))
    modules: list[str] = []
    if first.type == "alias":
        modules.append(text(first))
    elif first.type == "dot" and (right := first.child_by_field_name("right")) is not None and (
            right.type == "tuple"):  # `alias A.{B, C.D}`
        base = text(first.child_by_field_name("left"))
        modules += [f"{base}.{text(c)}" for c in right.named_children if c.type == "alias"]
    elif first.type == "identifier" and text(first) == "__MODULE__":
        return [], []
    out: list[Import] = []
    for m in modules:
        last = m.rpartition(".")[2]
        if verb in ("import", "use"):
            out.append(Import(m, "*", None, 0, line))
        else:
            out.append(Import(m, None, (as_name or last) if verb == "alias" else last, 0, line))
    return out, []


MORE_IMPORT_NODES: dict[str, dict[str, Handler]] = {
    "csharp": {"using_directive": _csharp},
    "php": {"namespace_use_declaration": _php},
    "kotlin": {"import": _kotlin, "package_header": _kotlin},
    "scala": {"import_declaration": _scala, "package_clause": _scala},
    "swift": {"import_declaration": _swift},
    "lua": {"function_call": _lua},
    "elixir": {"call": _elixir},
}
