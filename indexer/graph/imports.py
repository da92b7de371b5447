"""What an import statement imports, per grammar: `imports_of(language, node, text)`.

Python `import a.b as c` / `from ..m import x as y`; ES `import`, `export ... from`,
`require("m")`; Go import specs; Rust `use` trees and `mod m;`; Java imports; C/C++
`#include`; Ruby `require` / `require_relative`. Each gives `Import` records (module as
written, name, alias, relative level) and, for the local names an import binds, the
identifier nodes to record as `Role.IMPORT` sites. Pure: reads the tree and the source.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import tree_sitter

from ctxd.indexer.graph.imports_more import MORE_IMPORT_NODES
from ctxd.indexer.graph.model import Import

__all__ = ["IMPORT_NODES", "Found", "imports_of", "string_value"]

Found = tuple[list[Import], list[tree_sitter.Node]]
"""(imports, identifier nodes they bind)."""
Handler = Callable[[tree_sitter.Node, "Text"], "Found | None"]
"""An import statement's imports, or None where the node is no import (descend into it)."""
Text = Callable[[tree_sitter.Node | None], str]


def string_value(node: tree_sitter.Node | None, text: Text) -> str:
    """A string literal's content without its quotes (`"./x"` -> `./x`)."""
    return text(node).strip().strip("'\"`<>") if node is not None else ""


def _line(node: tree_sitter.Node) -> int:
    return node.start_point[0] + 1


def _python(node: tree_sitter.Node, text: Text) -> Found:  # noqa: C901 - two statement forms
    out: list[Import] = []
    bound: list[tree_sitter.Node] = []
    line = _line(node)
    if node.type == "import_statement":
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
                out.append(Import(text(name), None, text(alias) or None, 0, line))
                if alias is not None:
                    bound.append(alias)
            else:
                out.append(Import(text(child), None, None, 0, line))
                if child.named_child_count:
                    bound.append(child.named_children[0])
        return out, bound
    module = node.child_by_field_name("module_name")
    level, mod = 0, ""
    if module is not None and module.type == "relative_import":
        for c in module.children:
            if c.type == "import_prefix":
                level = text(c).count(".")
            elif c.type == "dotted_name":
                mod = text(c)
    else:
        mod = text(module)
    names = node.children_by_field_name("name")
    if any(c.type == "wildcard_import" for c in node.children):
        out.append(Import(mod, "*", None, level, line))
    for child in names:
        if child.type == "aliased_import":
            name, alias = child.child_by_field_name("name"), child.child_by_field_name("alias")
            out.append(Import(mod, text(name), text(alias) or None, level, line))
            if alias is not None:
                bound.append(alias)
            if name is not None and name.named_child_count:  # the imported name, too
                bound.append(name.named_children[-1])
        else:
            out.append(Import(mod, text(child), None, level, line))
            if child.named_child_count:
                bound.append(child.named_children[-1])
    return out, bound


def _js_clause(clause: tree_sitter.Node, module: str, line: int, text: Text,
               reexport: bool, out: list[Import], bound: list[tree_sitter.Node]) -> None:
    for c in clause.named_children:
        if c.type == "identifier":  # default import
            out.append(Import(module, "default", text(c), 0, line))
            bound.append(c)
        elif c.type == "namespace_import":
            ids = [x for x in c.named_children if x.type == "identifier"]
            out.append(Import(module, "*", text(ids[0]) if ids else None, 0, line, reexport))
            bound.extend(ids)
        elif c.type in ("named_imports", "export_clause"):
            for spec in c.named_children:
                if spec.type not in ("import_specifier", "export_specifier"):
                    continue
                name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
                out.append(Import(module, text(name).strip("'\""), text(alias) or None, 0, line,
                                  reexport))
                bound.extend(n for n in (name, alias) if n is not None)


def _js(node: tree_sitter.Node, text: Text) -> Found | None:
    out: list[Import] = []
    bound: list[tree_sitter.Node] = []
    source = node.child_by_field_name("source")
    if source is None:
        return None
    module, line = string_value(source, text), _line(node)
    if node.type == "export_statement":
        clauses = [c for c in node.named_children if c.type in ("export_clause",
                                                                 "namespace_export")]
        if not clauses:
            out.append(Import(module, "*", None, 0, line, True))
        for c in clauses:
            if c.type == "namespace_export":
                ids = [x for x in c.named_children if x.type in ("identifier", "string")]
                out.append(Import(module, "*", text(ids[0]) if ids else None, 0, line, True))
            else:
                _js_clause_wrap(c, module, line, text, out, bound)
        return out, bound
    clauses = [c for c in node.named_children if c.type == "import_clause"]
    if not clauses:
        out.append(Import(module, None, None, 0, line))  # import "./side-effect"
    for clause in clauses:
        _js_clause(clause, module, line, text, False, out, bound)
    return out, bound


def _js_clause_wrap(clause: tree_sitter.Node, module: str, line: int, text: Text,
                    out: list[Import], bound: list[tree_sitter.Node]) -> None:
    holder = clause
    for spec in holder.named_children:
        if spec.type != "export_specifier":
            continue
        name, alias = spec.child_by_field_name("name"), spec.child_by_field_name("alias")
        out.append(Import(module, text(name).strip("'\""), text(alias) or None, 0, line, True))
        if name is not None and name.type == "identifier":
            bound.append(name)


def _go_package(path: str) -> str:
    """The name a Go import binds by default: its path's last element, less a major
    version (`example.com/x/v2` -> `x`, `gopkg.in/yaml.v3` -> `yaml`)."""
    parts = [p for p in path.split("/") if p]
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()
    last = parts[-1] if parts else path
    return re.sub(r"\.v\d+$", "", last)


def _go(node: tree_sitter.Node, text: Text) -> Found:
    out: list[Import] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "import_spec":
            path = string_value(n.child_by_field_name("path"), text)
            name = n.child_by_field_name("name")
            out.append(Import(path, None, text(name) or _go_package(path), 0, _line(n)))
        else:
            stack.extend(reversed(n.named_children))
    return out, []


def _rust_use(node: tree_sitter.Node | None, prefix: str, line: int, text: Text,
              out: list[Import], bound: list[tree_sitter.Node]) -> None:
    if node is None:
        return
    t = node.type
    if t in ("scoped_identifier", "identifier", "crate", "self", "super"):
        full = text(node)
        full = f"{prefix}::{full}" if prefix else full
        module, _, name = full.rpartition("::")
        out.append(Import(module, name, None, 0, line))
        if t == "scoped_identifier":
            last = node.child_by_field_name("name")
            if last is not None:
                bound.append(last)
        elif t == "identifier":
            bound.append(node)
    elif t == "use_as_clause":
        path, alias = node.child_by_field_name("path"), node.child_by_field_name("alias")
        full = text(path)
        full = f"{prefix}::{full}" if prefix else full
        module, _, name = full.rpartition("::")
        out.append(Import(module, name, text(alias) or None, 0, line))
        if alias is not None:
            bound.append(alias)
    elif t == "scoped_use_list":
        path = node.child_by_field_name("path")
        base = text(path) if path is not None else ""
        base = f"{prefix}::{base}" if prefix and base else (base or prefix)
        _rust_use(node.child_by_field_name("list"), base, line, text, out, bound)
    elif t == "use_list":
        for c in node.named_children:
            _rust_use(c, prefix, line, text, out, bound)
    elif t == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        base = text(inner) if inner is not None else ""
        base = f"{prefix}::{base}" if prefix and base else (base or prefix)
        out.append(Import(base, "*", None, 0, line))


def _rust(node: tree_sitter.Node, text: Text) -> Found | None:
    out: list[Import] = []
    bound: list[tree_sitter.Node] = []
    if node.type == "use_declaration":
        _rust_use(node.child_by_field_name("argument"), "", _line(node), text, out, bound)
    elif node.type == "mod_item" and node.child_by_field_name("body") is None:
        out.append(Import("self", text(node.child_by_field_name("name")), None, 0, _line(node)))
    elif node.type == "extern_crate_declaration":  # (`extern crate grep_searcher as searcher`)
        name, alias = node.child_by_field_name("name"), node.child_by_field_name("alias")
        out.append(Import(text(name), None, text(alias) if alias is not None else None, 0,
                          _line(node)))
    else:
        return None
    return out, bound


def _java(node: tree_sitter.Node, text: Text) -> Found | None:
    parts = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not parts:
        return [], []
    full = text(parts[0])
    if any(c.type == "asterisk" for c in node.children):
        return [Import(full, "*", None, 0, _line(node))], []
    module, _, name = full.rpartition(".")
    return [Import(module, name, None, 0, _line(node))], []


def _c(node: tree_sitter.Node, text: Text) -> Found:
    path = node.child_by_field_name("path")
    value = string_value(path, text)
    return ([Import(value, None, None, 0, _line(node))] if value else []), []


def _ruby(node: tree_sitter.Node, text: Text) -> Found | None:
    method = text(node.child_by_field_name("method"))
    if node.child_by_field_name("receiver") is not None or method not in (
            "require", "require_relative", "load", "autoload"):
        return None
    args = node.child_by_field_name("arguments")
    strings = [c for c in (args.named_children if args is not None else []) if c.type == "string"]
    if not strings:
        return [], []
    value = string_value(strings[-1], text)
    level = 1 if method == "require_relative" else 0
    return [Import(value, None, None, level, _line(node))], []


IMPORT_NODES: dict[str, dict[str, Handler]] = {
    "python": {"import_statement": _python, "import_from_statement": _python},
    "javascript": {"import_statement": _js, "export_statement": _js},
    "go": {"import_declaration": _go},
    "rust": {"use_declaration": _rust, "mod_item": _rust, "extern_crate_declaration": _rust},
    "java": {"import_declaration": _java},
    "c": {"preproc_include": _c},
    "ruby": {"call": _ruby},
}
IMPORT_NODES["typescript"] = IMPORT_NODES["tsx"] = IMPORT_NODES["javascript"]
IMPORT_NODES["cpp"] = IMPORT_NODES["c"]
IMPORT_NODES.update(MORE_IMPORT_NODES)  # C#, PHP, Kotlin, Swift, Scala, Lua, Elixir


def imports_of(language: str, node: tree_sitter.Node, text: Text) -> Found | None:
    """The imports of `node` when it is an import statement of `language` (else None)."""
    handler = IMPORT_NODES.get(language, {}).get(node.type)
    return handler(node, text) if handler is not None else None
