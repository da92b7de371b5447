"""C/C++ declarations and macro bodies, and Rust macro arguments, in a file's walk.

A C/C++ prototype at file level binds its name `~decl` (the resolver follows `#include`s
to it), `static` binds `~static` (file-local), a declaration without a value binds a
variable (`:Type`); a `#define` body's `name(` is a call site; a Rust macro's token tree
gives calls and receivers (`assert_eq!(x.len(), f(y))`).

Invariants: only for `c`/`cpp` (declarations, macros) and `rust` (token trees); comments
and string literals in a macro body are never sites.
"""

from __future__ import annotations

import re

import tree_sitter

from ctxd.indexer.graph.base import Entry, WalkBase
from ctxd.indexer.graph.model import Role

__all__ = ["CFamily"]


class CFamily(WalkBase):
    """The C-family rules of a file's walk."""

    def c_prototype(self, node: tree_sitter.Node) -> None:
        """A C/C++ declaration. A function prototype outside any function (`jv
        jv_parse(const char*);`): a module-level `BIND` of its name with value `~decl` (a
        marker, never a value: the resolver follows `#include`s to the headers that
        declare a name; a `static` prototype is `c_static`'s). A variable declared without
        a value (`int count;`, `jv x;`, `util::Box b;`): a `BIND` of its name (`:Type` for
        a named type), so that the name is the variable's, never a function's."""
        if self.language not in ("c", "cpp") or node.parent is None:
            return
        if node.parent.type in _C_TOP and not any(
                c.type == "storage_class_specifier" and self.text(c) == "static"
                for c in node.children):
            for name in _c_functions(node):
                self.add(self.text(name), name, Role.BIND, value="~decl")
        kind = node.child_by_field_id(self.fids["type"])
        if kind is not None and kind.type in ("struct_specifier", "union_specifier",
                                              "class_specifier", "enum_specifier"):
            kind = kind.child_by_field_id(self.fids["name"])
        typed = self.text(kind).replace("::", ".") if kind is not None and kind.type in (
            "type_identifier", "qualified_identifier") else ""
        for name in _c_variables(node):
            self.add(self.text(name), name, Role.BIND, value=":" + typed if typed else None)

    def c_static(self, node: tree_sitter.Node) -> None:
        """`static` on a C/C++ function's definition or prototype: `BIND` `~static` of its
        name (the function is the file's own; no other file's call reaches it)."""
        owner = node.parent
        if self.language not in ("c", "cpp") or owner is None or self.text(node) != (
                "static") or owner.type not in ("function_definition", "declaration"):
            return
        for name in _c_functions(owner):
            self.add(self.text(name), name, Role.BIND, value="~static")

    def c_macro_calls(self, node: tree_sitter.Node) -> None:
        """A C/C++ macro's body (`#define F(x) ... jv_free(x) ...`: raw text to the
        grammar): each name followed by `(` is a call site at its place, unless it is a
        parameter of the macro, a keyword, a member (`p->f(`, `s.f(`) or pasted (`a ## f(`);
        comments and string literals in the body are skipped."""
        owner = node.parent
        if self.language not in ("c", "cpp") or owner is None or owner.type not in (
                "preproc_def", "preproc_function_def"):
            return
        params = owner.child_by_field_id(self.fids["parameters"])
        own = {self.text(c) for c in params.named_children} if params is not None else set()
        body = _C_MACRO_NOISE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), self.text(node))
        row, col = node.start_point[0] + 1, self.column(node)
        for m in _C_MACRO_CALL.finditer(body):
            name = m.group(1)
            before = body[:m.start()].rstrip(" \t")
            if name in own or name in _C_KEYWORDS or before.endswith((".", "->", "#")):
                continue
            lines = body.count("\n", 0, m.start())
            at = m.start() - body.rfind("\n", 0, m.start()) if lines else col + m.start()
            self.record(name, row + lines, at, Role.CALL, None, None)

    def token_tree(self, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
        """A Rust macro's arguments (`assert_eq!(x.len(), unescape(y))`: a token tree,
        not an expression): a name followed by `(...)` is a call, and a name after
        `a.b.` / `A::` has that receiver (`x`, `A`; `?` after anything else)."""
        if self.language != "rust":
            return
        kids = node.children
        for i, c in enumerate(kids):
            if c.type != "identifier":
                continue
            after = kids[i + 1] if i + 1 < len(kids) else None
            call = after is not None and after.type == "token_tree" and self.text(
                after).startswith("(")
            recv: str | None = None
            if i and kids[i - 1].type in (".", "::"):
                parts: list[str] = []
                j = i - 1
                while j >= 1 and kids[j].type in (".", "::") and kids[j - 1].type in (
                        "identifier", "self", "crate", "super"):
                    parts.insert(0, self.text(kids[j - 1]))
                    j -= 2
                complete = parts and not (j >= 0 and kids[j].type in (".", "::"))
                recv = ".".join(parts) if complete else "?"
            if call or recv is not None:
                put[c.id] = [(c, Role.CALL if call else None, recv, None)]



_C_TOP = frozenset({"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else",
                    "preproc_elif", "preproc_elifdef", "linkage_specification",
                    "declaration_list"})
"""Where a C/C++ declaration is a file's own (not a function's local)."""


_C_MACRO_NOISE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                            re.DOTALL)
_C_MACRO_CALL = re.compile(r"(?<![\w$])([A-Za-z_]\w*)\s*\(")
_C_KEYWORDS = frozenset({"if", "while", "for", "switch", "return", "sizeof", "defined",
                         "do", "case", "else", "typeof", "__typeof__", "_Alignof", "alignof",
                         "_Generic", "__attribute__", "__declspec", "static_assert",
                         "_Static_assert", "decltype", "__builtin_expect"})
"""Names followed by `(` in a macro body that call nothing."""


def _c_variables(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The names a C/C++ declaration declares as variables without a value (`int a, *b,
    c[4];`; `int d = 1;` is an `init_declarator`: a binding of its own)."""
    out: list[tree_sitter.Node] = []
    for top in node.children_by_field_name("declarator"):
        d: tree_sitter.Node | None = top
        while d is not None and d.type in ("pointer_declarator", "array_declarator",
                                           "parenthesized_declarator",
                                           "reference_declarator"):
            d = d.child_by_field_name("declarator") or (
                d.named_children[-1] if d.named_child_count else None)
        if d is not None and d.type == "identifier":
            out.append(d)
    return out


def _c_functions(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The names of the functions a C/C++ declaration or definition declares (through
    pointer and parenthesized declarators)."""
    out: list[tree_sitter.Node] = []
    for top in node.children_by_field_name("declarator"):
        d: tree_sitter.Node | None = top
        while d is not None and d.type in ("pointer_declarator", "parenthesized_declarator",
                                           "reference_declarator"):
            d = d.child_by_field_name("declarator") or (
                d.named_children[-1] if d.named_child_count else None)
        if d is not None and d.type == "function_declarator":
            name = d.child_by_field_name("declarator")
            if name is not None and name.type == "identifier":
                out.append(name)
    return out

