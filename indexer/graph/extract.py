"""A file's code graph from the tree-sitter parse the chunker already made.

`extract(language, parsed)` walks the tree once (an explicit stack, no recursion) and
returns a `FileGraph`: the definitions (the chunker's, with parents), the imports
(`indexer.graph.imports`), and every identifier that is code as a `Site` with its role
(call, reference, binding, parameter, attribute binding, base class, import), the
receiver of `recv.name`, the enclosing definition and, for bindings, what was assigned
(`()Session` for `s = Session()`, `:Session` for `s: Session`). Which node types mean
what is `indexer.graph.specs`; the rules beside the walk are `Values` (receivers, values,
binding targets), `Facts` (per-node-type facts) and `CFamily` (C/C++, Rust macros) over
`WalkBase` (the walk's state), and `type_text` reads annotations.

Invariants: nothing inside a comment or a string literal (docstrings included) is ever a
site, except the code inside interpolations (`f"{x}"`, `${x}`); a definition's own name
is not a site (the definition is in `defs`); sites are sorted by (line, column). Pure:
reads the tree and the source bytes only.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from operator import itemgetter

import tree_sitter

from ctxd.indexer.chunk.syntax import Definition, ParsedSource
from ctxd.indexer.graph.base import JS_LIKE, MAX_RECEIVER, Entry, new_site
from ctxd.indexer.graph.cfamily import CFamily
from ctxd.indexer.graph.cpp import cpp_qualified
from ctxd.indexer.graph.facts import Facts, go_inherited
from ctxd.indexer.graph.imports import IMPORT_NODES, imports_of
from ctxd.indexer.graph.langs_more import FINISH, PACKAGES, RULES, node_at, spec_paths
from ctxd.indexer.graph.model import Def, FileGraph, Role, Site
from ctxd.indexer.graph.rust_macros import RustMacros, with_made
from ctxd.indexer.graph.specs import SPECS, GraphSpec

__all__ = ["PLAIN", "SCOPE_KINDS", "extract"]

PLAIN = False
"""True: `_Walk.run` answers no node itself (`_fast`'s member accesses and calls go to
`_Walk.children` like every other rule): the same graphs, slower; what the fast paths
are checked against (tests/indexer/graph/test_fast_walk.py)."""

SCOPE_KINDS = frozenset({"function", "method", "constructor", "class", "struct",
                         "interface", "trait", "impl", "module", "namespace", "enum"})
"""Definition kinds that enclose sites (not variables, constants, type aliases)."""


_NAME_START = frozenset("_$#abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_NOT_BASES = frozenset({"keyword_argument", "comment", "type_arguments", "declaration_list",
                        "field_declaration_list", "line_comment", "block_comment",
                        "arguments"})  # (Scala's `extends Base(x)`: `x` is no base)

_BASE_LISTS = frozenset({"argument_list", "type_list", "interface_type_list",
                         "superclasses"})


class _Walk(Facts, CFamily, RustMacros):
    """One file's walk: every node once, each rule where its node type is (the rules
    themselves: `Values`, `Facts`, `CFamily`)."""

    def site(self, node: tree_sitter.Node, role: Role | None, recv: str | None,
             value: str | None) -> None:
        raw = self.source[node.start_byte : node.end_byte]
        name = raw.decode("utf-8", "replace") if not raw.isascii() else raw.decode("ascii")
        if not name or not (name[0] in _NAME_START or name[0].isalpha()):
            return
        if recv is None and name in self.spec.self_names and role in (None, Role.REF):
            return  # `self` / `this` itself: never a definition's reference
        if recv is not None and len(recv) > MAX_RECEIVER:
            recv = "?"
        row, byte = node.start_point
        scopes = self.scopes  # `record`, inline
        self.sites.append(new_site(Site, (
            name, row + 1, byte + 1 if self.ascii else self.column(node),
            role if role is not None else Role.REF, recv,
            scopes[row + 1] if row + 1 < len(scopes) else -1, value)))

    def run(self, root: tree_sitter.Node,  # noqa: C901 - one loop over the tree
            grammar: tree_sitter.Language) -> None:
        """Every node once, parents before children, in file order. The stack holds
        entries, or bare nodes for the commonest one (a node its parent imposes nothing
        on, `(node, None, None, None)`): those, unless of a type with a rule (told by
        the grammar's numeric kind, cheaper than the type's name), are an identifier's
        plain reference or just pass their children on."""
        stack: list[Entry | tree_sitter.Node] = [root]
        pop, push, extend = stack.pop, stack.append, stack.extend
        spec = self.spec
        names, skip, self_names = spec.names, spec.skip, spec.self_names
        import_nodes = IMPORT_NODES.get(self.language, {})
        special = _special(spec)
        name_kinds, ruled_kinds = _kinds(self.language, grammar)
        inside, marks = bool(spec.code_inside), _CODE_MARKS.get(self.language)
        source, sites, scopes, ascii_only = self.source, self.sites, self.scopes, self.ascii
        n_scopes = len(scopes)
        member_fast, call_fast = _fast(self.language, grammar) if not PLAIN else ({}, {})
        site, receiver = self.site, self.receiver
        while stack:
            item = pop()
            if isinstance(item, tuple):
                node, role, recv, value = item
                t = node.type
            else:
                node, role, recv, value = item, None, None, None
                kind = node.kind_id
                if kind in name_kinds:  # `site(node, None, None, None)`, inline
                    raw = source[node.start_byte : node.end_byte]
                    name = raw.decode("ascii") if raw.isascii() else raw.decode(
                        "utf-8", "replace")
                    if name and (name[0] in _NAME_START or name[0].isalpha()) and (
                            name not in self_names):
                        row, byte = node.start_point
                        sites.append(new_site(Site, (
                            name, row + 1, byte + 1 if ascii_only else self.column(node),
                            Role.REF, None, scopes[row + 1] if row + 1 < n_scopes else -1,
                            None)))
                    continue
                if kind not in ruled_kinds:
                    kids = node.named_children
                    kids.reverse()
                    extend(kids)
                    continue
                if kind in member_fast:  # `a.b`: `b` read with receiver `a`
                    obj_fid, name_fid = member_fast[kind]
                    kids = node.named_children
                    name_node = node.child_by_field_id(name_fid)
                    if name_node is not None and name_node.kind_id in name_kinds and (
                            rest := _without(kids, name_node.id)) is not None:
                        obj = node.child_by_field_id(obj_fid) if obj_fid else None
                        site(name_node, Role.REF, receiver(obj) if obj is not None else None,
                             None)
                        kids = rest
                    kids.reverse()
                    extend(kids)
                    continue
                if kind in call_fast:  # `f(x)`, `a.b(x)`: the callee read as a call
                    callee_fid, js_call = call_fast[kind]
                    callee = node.child_by_field_id(callee_fid)
                    kids = node.named_children
                    at = _index(kids, callee)
                    if at < 0 or callee.kind_id in name_kinds or (  # type: ignore[union-attr]
                            callee.kind_id in member_fast):  # type: ignore[union-attr]
                        if js_call:
                            if js_call == 1:
                                self.require(node, None)
                            if callee is not None:
                                self.callback_hints(node, callee, "new " if js_call == 2 else "")
                        if at >= 0:
                            kids[at:at + 1] = self.called(kids[at], name_kinds, member_fast)
                        kids.reverse()
                        extend(kids)
                        continue
                t = node.type
            if t in names:
                self.site(node, role, recv, value)
                continue
            if t in import_nodes:
                found = imports_of(self.language, node, self.text)
                if found is not None:
                    self.imports.extend(found[0])
                    for n in found[1]:
                        self.site(n, Role.IMPORT, None, None)
                    continue
            if t in _EXTRA:
                _EXTRA[t](self, node)
            if t in skip:
                if inside and (marks is None or marks.search(source, node.start_byte,
                                                             node.end_byte)):
                    for child in node.named_children:
                        if child.type in spec.code_inside:
                            push(child)
                continue
            if t not in special and role != Role.INHERIT:  # most nodes: nothing to say
                kids = node.named_children
                kids.reverse()
                extend(kids)
                continue
            got = self.children(node, role, recv, value)
            got.reverse()
            extend(got)

    def called(self, callee: tree_sitter.Node, name_kinds: frozenset[int],
               member_fast: dict[int, tuple[int, int]]) -> list[tree_sitter.Node]:
        """A plain call's callee, a name or a member access with no other rule, read as
        `children` would (its call site recorded at once): the nodes left to walk in its
        place."""
        kind = callee.kind_id
        if kind in name_kinds:
            self.site(callee, Role.CALL, None, None)
            return []
        obj_fid, name_fid = member_fast[kind]
        kids = callee.named_children
        name = callee.child_by_field_id(name_fid)
        if name is None or name.kind_id not in name_kinds or (
                rest := _without(kids, name.id)) is None:
            return kids
        obj = callee.child_by_field_id(obj_fid) if obj_fid else None
        self.site(name, Role.CALL, self.receiver(obj) if obj is not None else None, None)
        return rest

    def children(  # noqa: C901 - one table-driven rule per kind of node, read top-down
        self, node: tree_sitter.Node, role: Role | None, recv: str | None, value: str | None
    ) -> list[Entry | tree_sitter.Node] | list[tree_sitter.Node]:
        """The entries of a node's children, with what the node imposes on them (a bare
        node: nothing)."""
        spec, t = self.spec, node.type
        put: dict[int, list[Entry]] = {}  # child id -> the entries in its place ([]: skip)
        fids, by_id = self.fids, node.child_by_field_id

        paths = self.paths  # (fields that are paths: `specs_base`; most grammars none)
        if t in spec.members and (t != "call" or by_id(fids["receiver"]) is not None):
            obj_f, name_f = spec.members[t]
            if paths:
                obj, name = self.part(node, obj_f), self.part(node, name_f)
            else:
                obj = by_id(fids[obj_f]) if obj_f else None
                name = by_id(fids[name_f]) if name_f else None
            if name is not None and name.type in spec.names:
                slot = name if not paths else _slot(node, name)  # (Swift: in a suffix)
                if t in _member_only(spec) and role is None:  # the commonest: `a.b`
                    of = self.receiver(obj) if obj is not None else None
                    name_id = slot.id
                    plain: list[Entry | tree_sitter.Node] = [
                        (name, Role.REF, of, value) if c.id == name_id else c
                        for c in node.named_children]
                    return plain
                own = Role.CALL if t in spec.calls else role
                if own == Role.BIND:
                    own = Role.ATTR_BIND
                if own not in (Role.CALL, Role.ATTR_BIND, Role.INHERIT):
                    own = Role.REF
                put[slot.id] = [(name, own, self.receiver(obj) if obj is not None else None,
                                 value)]
        elif t in spec.calls:
            callee = by_id(fids[spec.calls[t]]) if not paths else self.part(node, spec.calls[t])
            if callee is not None:
                if callee.type in spec.names or callee.type in spec.members:
                    put[callee.id] = [(callee, Role.CALL, None, None)]
                elif callee.type in ("generic_type", "generic_function") and (
                        callee.named_child_count):  # (Scala's `f[T](x)`)
                    first = callee.named_children[0]
                    rest: list[Entry] = [(c, None, None, None)
                                         for c in callee.named_children[1:]]
                    put[callee.id] = [(first, Role.CALL, None, None), *rest]
                elif callee.type in _OPERATOR_CALLEES and callee.named_child_count and (
                        (last := callee.named_children[-1]).type in spec.names
                        or last.type in spec.members):  # Swift's `a.f() + s.g()`
                    put[callee.id] = [*((c, None, None, None)
                                        for c in callee.named_children[:-1]),
                                      (last, Role.CALL, None, None)]
            if t == "call_expression" and self.language in JS_LIKE:
                self.require(node, None)
            if self.language in JS_LIKE and callee is not None:
                self.callback_hints(node, callee, "new " if t == "new_expression" else "")
            if role is None and t in _call_only(spec):  # the commonest: `f(x)`, `a.b(x)`
                kids = node.named_children
                if not put:
                    return kids
                ((callee_id, in_place),) = put.items()
                out_call: list[Entry | tree_sitter.Node] = []
                for c in kids:
                    if c.id == callee_id:
                        out_call.extend(in_place)
                    else:
                        out_call.append(c)
                return out_call
        if t in spec.def_names and spec.def_names[t] and (
                name := by_id(fids[spec.def_names[t]])) is not None:
            put[name.id] = []
        if t in spec.bases:
            holder = self.part(node, spec.bases[t]) if spec.bases[t] else node
            if holder is not None and holder is not node and holder.type not in _BASE_LISTS:
                put[holder.id] = [(holder, Role.INHERIT, None, None)]
            elif holder is not None:
                kids = [c for c in holder.named_children if c.type not in _NOT_BASES]
                entries: list[Entry] = [(c, Role.INHERIT, None, None) for c in kids]
                entries += [(c, None, None, None) for c in holder.named_children
                            if c.type in ("keyword_argument", "type_arguments")]
                if holder is node:
                    for c, e in zip(kids, entries, strict=False):
                        put[c.id] = [e]
                else:
                    put[holder.id] = entries
        if t in spec.rules:  # a language's own rule (Elixir `def` heads: `langs_more`)
            RULES[self.language][t](self, node, put)
        if t in spec.params:
            for c in node.named_children:
                if c.type in spec.names:
                    put[c.id] = [(c, Role.PARAM, None, None)]
        if t in spec.param_nodes:
            name_f, type_f = spec.param_nodes[t]
            type_node = self.part(node, type_f)
            typed = self.param_type(type_node) or self.default_type(node)
            names = node.children_by_field_id(self.fids[name_f]) if name_f and (
                name_f not in paths) else [n for n in (node_at(node, name_f, fids),) if (
                    n is not None)] if name_f else [
                c for c in node.named_children if c.type in spec.names][:1]
            for n in names:
                hint = typed or self.hints.get(n.id)
                put[n.id] = [(e[0], Role.PARAM if e[1] == Role.BIND else e[1], e[2], e[3])
                             for e in self.targets(n, hint)]
        if t == "function_type" and (ps := by_id(fids["parameters"])) is not None:
            put[ps.id] = [(ty, None, None, None) for p in ps.named_children
                          if (ty := p.child_by_field_id(self.fids["type"])) is not None]
        if t == "arrow_function" and (one := by_id(fids["parameter"])) is not None and (
                one.type in spec.names):
            put[one.id] = [(one, Role.PARAM, None, self.hints.get(one.id))]
        if t in spec.binds:
            self.binding(node, put)
        if t == "token_tree":
            self.token_tree(node, put)
        if t == "as_pattern" and self.language == "python":
            self.python_as(node, put)
        if t in spec.bind_targets:
            f = spec.bind_targets[t]
            holders = (node.children_by_field_id(self.fids[f]) if f not in paths else [
                h for h in (node_at(node, f, fids),) if h is not None]) if f else list(
                    node.named_children)
            each = self.elements(node)
            for h in holders:
                put[h.id] = self.enumerated(node, h) or list(self.targets(h, each))
        if t in spec.not_refs:
            f = spec.not_refs[t]
            for i, c in enumerate(node.children):
                if c.is_named and c.type in spec.names and (
                        not f or node.field_name_for_child(i) == f):
                    put[c.id] = []
                    break
        inherit = role == Role.INHERIT and t not in spec.members
        kids = node.named_children
        if not put and not inherit:
            return kids
        out: list[Entry | tree_sitter.Node] = []
        for c in kids:
            got = put.get(c.id) if put else None
            if got is not None:
                out.extend(got)
            elif inherit:
                out.append((c, Role.INHERIT, None, None))
            else:
                out.append(c)
            inherit = False
        return out



_SPECIAL: dict[int, frozenset[str]] = {}
_POSITION = itemgetter(1, 2)
"""A recorded site's (line, column)."""


def _special(spec: GraphSpec) -> frozenset[str]:
    """The node types `_Walk.children` has a rule for (every other node just passes its
    children on)."""
    got = _SPECIAL.get(id(spec))
    if got is None:
        got = _SPECIAL[id(spec)] = frozenset({
            *spec.calls, *spec.members, *spec.def_names, *spec.bases, *spec.params,
            *spec.param_nodes, *spec.binds, *spec.bind_targets, *spec.not_refs, *spec.rules,
            "as_pattern", "function_type", "arrow_function", "token_tree"})
    return got


_MEMBER_ONLY: dict[int, frozenset[str]] = {}
_CALL_ONLY: dict[int, frozenset[str]] = {}


def _call_only(spec: GraphSpec) -> frozenset[str]:
    """Call node types with no rule but `spec.calls`' (not member accesses too, as
    Ruby's `call`): `_Walk.children` answers them once their callee is read."""
    got = _CALL_ONLY.get(id(spec))
    if got is None:
        others = {*spec.members, *spec.def_names, *spec.bases, *spec.params,
                  *spec.param_nodes, *spec.binds, *spec.bind_targets, *spec.not_refs,
                  *spec.rules, "as_pattern", "function_type", "arrow_function", "token_tree"}
        got = _CALL_ONLY[id(spec)] = frozenset(t for t in spec.calls if t not in others)
    return got


def _member_only(spec: GraphSpec) -> frozenset[str]:
    """Member access node types with no rule but `spec.members`' (`a.b` in Python, JS,
    Go): `_Walk.children` answers them at once."""
    got = _MEMBER_ONLY.get(id(spec))
    if got is None:
        others = {*spec.calls, *spec.def_names, *spec.bases, *spec.params, *spec.param_nodes,
                  *spec.binds, *spec.bind_targets, *spec.not_refs, *spec.rules, "as_pattern",
                  "function_type", "arrow_function", "token_tree"}
        got = _MEMBER_ONLY[id(spec)] = frozenset(t for t in spec.members if t not in others)
    return got


_FIELD_IDS: dict[str, defaultdict[str, int]] = {}


def _field_ids(language: str, grammar: tree_sitter.Language) -> defaultdict[str, int]:
    """The grammar's field ids by name (`child_by_field_id` is cheaper than
    `child_by_field_name`); a name it lacks reads 0, which finds no child."""
    got = _FIELD_IDS.get(language)
    if got is None:
        got = _FIELD_IDS[language] = defaultdict(int)
        for k in range(1, grammar.field_count + 1):
            if (name := grammar.field_name_for_id(k)) is not None:
                got[name] = k
    return got


_KINDS: dict[str, tuple[frozenset[int], frozenset[int]]] = {}
_FAST: dict[str, tuple[dict[int, tuple[int, int]], dict[int, tuple[int, int]]]] = {}


def _fast(language: str, grammar: tree_sitter.Language) -> tuple[
        dict[int, tuple[int, int]], dict[int, tuple[int, int]]]:
    """The grammar's numeric kinds that `_Walk.run` answers itself when its parent imposes
    nothing: member accesses with no other rule (kind -> (object field id or 0, name
    field id)) and calls with no other rule (kind -> (callee field id, 1 for a JS call,
    2 for a JS `new`, else 0)), of types no import, `_EXTRA` or skip rule is about."""
    got = _FAST.get(language)
    if got is None:
        spec, fids = SPECS[language], _field_ids(language, grammar)
        other = {*spec.names, *spec.skip, *IMPORT_NODES.get(language, {}), *_EXTRA}
        paths = spec_paths(spec)  # (a path is read by `children`, not by a field id)
        members = {t: (fids[o] if o else 0, fids[n] if n else 0)
                   for t, (o, n) in spec.members.items()
                   if t in _member_only(spec) and t != "call" and t not in other
                   and o not in paths and n not in paths}
        calls = {t: (fids[spec.calls[t]], 0 if language not in JS_LIKE else
                     1 if t == "call_expression" else 2 if t == "new_expression" else 0)
                 for t in _call_only(spec) if t not in other and t not in spec.members
                 and spec.calls[t] not in paths}
        kinds = [(k, grammar.node_kind_for_id(k)) for k in range(grammar.node_kind_count)]
        got = _FAST[language] = ({k: members[t] for k, t in kinds if t in members},
                                 {k: calls[t] for k, t in kinds if t in calls})
    return got


def _slot(node: tree_sitter.Node, inner: tree_sitter.Node) -> tree_sitter.Node:
    """The child of `node` that holds `inner` (a path's node may lie deeper: Swift's
    `x.name` keeps `name` in a `navigation_suffix`)."""
    while inner.parent is not None and inner.parent.id != node.id:
        inner = inner.parent
    return inner


def _without(nodes: list[tree_sitter.Node], node_id: int) -> list[tree_sitter.Node] | None:
    """`nodes` but the one of `node_id` (None: none is; a field can name a node of
    another parent, as `typeof A.b.c`'s `property` in TypeScript's grammar)."""
    if nodes and nodes[-1].id == node_id:
        nodes.pop()
        return nodes
    rest = [c for c in nodes if c.id != node_id]
    return rest if len(rest) < len(nodes) else None


def _index(nodes: list[tree_sitter.Node], node: tree_sitter.Node | None) -> int:
    """Where `node` is in `nodes` (-1: nowhere, or None)."""
    if node is not None:
        node_id = node.id
        for k, c in enumerate(nodes):
            if c.id == node_id:
                return k
    return -1

_CODE_MARKS: dict[str, re.Pattern[bytes]] = {
    "python": re.compile(rb"\{"), "javascript": re.compile(rb"\$\{"),
    "typescript": re.compile(rb"\$\{"), "tsx": re.compile(rb"\$\{"),
    "ruby": re.compile(rb"#\{"), "shell": re.compile(rb"[$`]")}
"""What a string or comment of the language holds when code is inside it (`f"{x}"`,
`${x}`, `#{x}`, `$(x)`): one without any is not looked into. A language with code
inside its strings but not listed here: every one is."""


def _kinds(language: str, grammar: tree_sitter.Language) -> tuple[frozenset[int],
                                                                   frozenset[int]]:
    """The grammar's numeric kinds of the identifier types, and of the types `_Walk.run`
    does more with than pass their children on (rules, imports, `_EXTRA`'s, subtrees
    that are not code)."""
    got = _KINDS.get(language)
    if got is None:
        spec = SPECS[language]
        ruled = {*_special(spec), *spec.skip, *IMPORT_NODES.get(language, {}), *_EXTRA}
        types = [(k, grammar.node_kind_for_id(k)) for k in range(grammar.node_kind_count)]
        got = _KINDS[language] = (frozenset(k for k, t in types if t in spec.names),
                                  frozenset(k for k, t in types if t in ruled))
    return got


_OPERATOR_CALLEES = frozenset({"additive_expression", "multiplicative_expression"})
"""Callees that are an operator's operands: tree-sitter-swift reads `a.f() + s.g()` as a
call of `a.f() + s.g` (the call's suffix binds to the whole sum); the called one is the
last operand."""

def _defs(forest: Sequence[Definition]) -> list[Def]:
    out: list[Def] = []

    def add(ds: Sequence[Definition], parent: int) -> None:
        for d in ds:
            out.append(Def(d.name, d.qualname, d.kind, d.line, d.end_line, parent))
            add(d.children, len(out) - 1)

    add(forest, -1)
    return out


def _scopes(defs: Sequence[Def], n_lines: int) -> list[int]:
    """Line (1-based) -> index of the innermost scoping definition holding it (-1: none)."""
    table = [-1] * (n_lines + 2)
    for k, d in enumerate(defs):  # parents come before their children
        if d.kind not in SCOPE_KINDS:
            continue
        first, last = max(d.line, 1), min(d.end_line, n_lines + 1)
        if first <= last:
            table[first:last + 1] = [k] * (last + 1 - first)
    return table


def extract(language: str, parsed: ParsedSource) -> FileGraph | None:
    """The code graph of a parsed file (None: no graph rules for `language`)."""
    spec = SPECS.get(language)
    if spec is None:
        return None
    source = parsed.source
    defs = _defs(parsed.definitions)
    walk = _Walk(language, spec, source, _scopes(defs, source.count(b"\n") + 1),
                 _field_ids(language, parsed.tree.language))
    enabled = gc.isenabled()  # its many short-lived tuples hold no cycles: no collections
    if enabled:
        gc.disable()
    try:
        walk.run(parsed.tree.root_node, parsed.tree.language)
    finally:
        if enabled:
            gc.enable()
    if language in FINISH:
        FINISH[language](walk)
    defs = with_made(walk, defs)  # (functions a Rust `macro_rules!` makes)
    if language == "cpp":
        cpp_qualified(walk)  # (`util::Box::make()`: one name, the whole qualifier)
    elif language == "go":
        go_inherited(walk)  # (an embedded field's type: a base, not also a reference)
    walk.sites.sort(key=_POSITION)
    return FileGraph(language, defs, walk.imports, walk.sites)


_EXTRA: dict[str, Callable[[_Walk, tree_sitter.Node], None]] = {
    "return_statement": _Walk.returns,
    "function_definition": _Walk.return_type,
    "function_declaration": _Walk.return_type,
    "method_declaration": _Walk.return_type,
    "function_item": _Walk.return_type,
    "method_definition": _Walk.return_type,
    "type": _Walk.python_type,
    "augmented_assignment": _Walk.augmented,
    "subscript": _Walk.python_subscript,
    "if_statement": _Walk.narrowing,
    "assert_statement": _Walk.asserted,
    "export_statement": _Walk.default_export,
    "public_field_definition": _Walk.class_field,
    "field_definition": _Walk.class_field,
    "property_signature": _Walk.class_field,
    "field_declaration": _Walk.struct_field,
    "preproc_arg": _Walk.c_macro_calls,
    "declaration": _Walk.c_prototype,
    "storage_class_specifier": _Walk.c_static,
    "required_parameter": _Walk.class_field,
    "optional_parameter": _Walk.class_field,
}
_EXTRA["macro_definition"] = _Walk.rust_macro_rules
_EXTRA["macro_invocation"] = _Walk.rust_macro_call
_EXTRA.update(PACKAGES)  # C# and PHP namespaces: the file's package (`langs_more`)
"""Node type -> what the walk records of it besides its children's identifiers."""
