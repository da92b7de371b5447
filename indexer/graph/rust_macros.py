"""Functions a Rust `macro_rules!` makes, in a file's walk.

axum defines its routing functions by macro: `top_level_handler_fn!(get, GET);` expands
`pub fn $name<H, T, S>(handler: H) -> MethodRouter<S, Infallible>`, so `get(h)` has no
definition of its own, and `get(h).merge(..)` could not be typed. The walk reads each
`macro_rules!` of the file: an arm whose body writes `fn $NAME ... -> TYPE` makes a
function named by the invocation's argument in `$NAME`'s place (`$NAME:ident`, the k-th
of the matcher's comma-separated parts). An invocation of such a macro later in the file
(at the top level, in a `mod` or in an `impl`, whose function then is a method) adds a
definition (`Def`, after the chunker's; its line the argument's) and a `return` binding
of its type (`:MethodRouter`, `:Self`).

Invariants: a macro is read only when every arm that makes a function agrees on the
argument's place, the number of parts and the return type (else: nothing); the argument
must be one identifier; a return type written with a metavariable (`-> $ret`) makes
nothing; only macros defined earlier in the same file (as `macro_rules!` requires) are
read. Nothing here adds a site of code the file does not write but the `return` binding.
"""

from __future__ import annotations

from collections.abc import Callable

import tree_sitter

from ctxd.indexer.graph.base import WalkBase
from ctxd.indexer.graph.model import Def, Role, Site

__all__ = ["RustMacros", "with_made"]

Text = Callable[[tree_sitter.Node | None], str]
"""The walk's text of a node."""
_SKIPPED = frozenset({"line_comment", "block_comment"})
_IMPLS = frozenset({"impl", "trait"})


class RustMacros(WalkBase):
    """The walk's reading of `macro_rules!` definitions and their invocations."""

    rust_templates: dict[str, tuple[int, int, str]]
    """Macro name -> (the argument's part, how many parts, the return type)."""
    made: list[tuple[str, int, int, int, int, str]]
    """(name, line, column, last line, enclosing definition, return type) of each
    function an invocation makes."""

    def rust_macro_rules(self, node: tree_sitter.Node) -> None:
        """`macro_rules! m { ... }`: the function its arms make, when they agree."""
        if self.language != "rust":
            return
        name = node.child_by_field_id(self.fids["name"])
        found: set[tuple[int, int, str]] = set()
        for rule in node.named_children:
            left = rule.child_by_field_id(self.fids["left"])
            right = rule.child_by_field_id(self.fids["right"])
            if rule.type != "macro_rule" or left is None or right is None:
                continue
            for meta, ret in self._fn_templates(right):
                place = _place(left, meta, self.text)
                found.add((*place, ret) if place is not None else (-1, -1, ""))
        if name is not None and len(found) == 1 and (one := found.pop())[0] >= 0:
            if not hasattr(self, "rust_templates"):
                self.rust_templates = {}
            self.rust_templates[self.text(name)] = one

    def _fn_templates(self, body: tree_sitter.Node) -> list[tuple[str, str]]:
        """(`$NAME`, return type) of each `fn $NAME ... -> TYPE` written at the top of an
        arm's body ('' as the type: none, or one that cannot be read)."""
        kids = [c for c in body.children if c.type not in _SKIPPED]
        out: list[tuple[str, str]] = []
        for i, c in enumerate(kids[:-1]):
            if c.type != "fn" or kids[i + 1].type != "metavariable":
                continue
            ret = ""
            for j in range(i + 2, len(kids)):
                k = kids[j]
                if (k.type == "token_tree" and self.text(k).startswith("{")) or k.type == ";":
                    break  # the body, or no return type
                if k.type == "->":
                    ret = _type_after(kids, j + 1, self.text)
                    break
            out.append((self.text(kids[i + 1]), ret))
        return out

    def rust_macro_call(self, node: tree_sitter.Node) -> None:
        """`m!(get, GET)` of a macro read before: the function it makes, by name."""
        templates = getattr(self, "rust_templates", None)
        macro = node.child_by_field_id(self.fids["macro"])
        if not templates or macro is None or macro.type != "identifier" or (
                (template := templates.get(self.text(macro))) is None):
            return
        place, count, ret = template
        if not ret:
            return
        args = next((c for c in node.named_children if c.type == "token_tree"), None)
        parts = _parts(args) if args is not None else []
        if len(parts) != count or len(parts[place]) != 1 or (
                parts[place][0].type != "identifier"):
            return
        made = parts[place][0]
        row = made.start_point[0] + 1
        if not hasattr(self, "made"):
            self.made = []
        self.made.append((self.text(made), row, self.column(made), node.end_point[0] + 1,
                          self.scopes[row] if row < len(self.scopes) else -1, ret))


def with_made(walk: RustMacros, defs: list[Def]) -> list[Def]:
    """The file's definitions with those its macro invocations made (after them), and
    each made function's `return` binding among the walk's sites."""
    made = getattr(walk, "made", None)
    if not made:
        return defs
    out = list(defs)
    named = {(name, line, col) for name, line, col, *_ in made}  # (a definition's own name
    walk.sites[:] = [s for s in walk.sites if (s.name, s.line, s.col) not in named]  # is no site)
    for name, line, col, end, parent, ret in made:
        owner = out[parent] if parent >= 0 else None
        kind = "method" if owner is not None and owner.kind in _IMPLS else "function"
        qual = f"{owner.qualname}.{name}" if owner is not None else name
        out.append(Def(name, qual, kind, line, end, parent))
        walk.sites.append(Site("return", line, col, Role.BIND, None, len(out) - 1, ":" + ret))
    return out


def _place(pattern: tree_sitter.Node, meta: str,
           text: Text) -> tuple[int, int] | None:
    """(the part, how many parts) of a matcher where `meta` is bound as an `ident`
    (`($(#[$m:meta])+ $name:ident, $method:ident)`: `$name` is part 0 of 2)."""
    parts = _parts(pattern)
    for k, part in enumerate(parts):
        for c in part:
            if c.type == "token_binding_pattern" and text(
                    c.child_by_field_name("name")) == meta and text(
                    c.child_by_field_name("type")) == "ident":
                return k, len(parts)
    return None


def _parts(tree: tree_sitter.Node) -> list[list[tree_sitter.Node]]:
    """A token tree's top-level tokens split at its commas (comments, `#[...]`
    attributes and a trailing comma left out)."""
    kids = tree.children[1:-1]  # (the brackets)
    parts: list[list[tree_sitter.Node]] = [[]]
    skip_next = False
    for c in kids:
        if skip_next:
            skip_next = False
            continue
        if c.type in _SKIPPED:
            continue
        if c.type == "#":  # `#[doc = ..]`: an attribute, with its bracketed tree
            skip_next = True
            continue
        if c.type == ",":
            parts.append([])
        else:
            parts[-1].append(c)
    return parts[:-1] if len(parts) > 1 and not parts[-1] else parts


def _type_after(kids: list[tree_sitter.Node], start: int, text: Text) -> str:
    """The type named after `->` (`MethodRouter<S, E>` -> `MethodRouter`, `a::B` ->
    `a.B`, `Self`); '' for a metavariable, a reference or anything else."""
    names: list[str] = []
    j = start
    while j < len(kids):
        k = kids[j]
        if k.type in ("identifier", "self", "crate", "super") or text(k) == "Self":
            names.append(text(k))
            if j + 1 < len(kids) and kids[j + 1].type == "::":
                j += 2
                continue
        break
    return ".".join(names) if names and not text(kids[start]).startswith("$") else ""
