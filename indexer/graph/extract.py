"""A file's code graph from the tree-sitter parse the chunker already made.

`extract(language, parsed)` walks the tree once (an explicit stack, no recursion) and
returns a `FileGraph`: the definitions (the chunker's, with parents), the imports
(`indexer.graph.imports`), and every identifier that is code as a `Site` with its role
(call, reference, binding, parameter, attribute binding, base class, import), the
receiver of `recv.name`, the enclosing definition and, for bindings, what was assigned
(`()Session` for `s = Session()`, `:Session` for `s: Session`). Which node types mean
what is `indexer.graph.specs`.

Invariants: nothing inside a comment or a string literal (docstrings included) is ever a
site, except the code inside interpolations (`f"{x}"`, `${x}`); a definition's own name
is not a site (the definition is in `defs`); sites are sorted by (line, column). Pure:
reads the tree and the source bytes only.
"""

from __future__ import annotations

import gc
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from operator import itemgetter

import tree_sitter

from ctxd.indexer.chunk.syntax import Definition, ParsedSource
from ctxd.indexer.graph.imports import IMPORT_NODES, imports_of, string_value
from ctxd.indexer.graph.model import Def, FileGraph, Import, Role, Site
from ctxd.indexer.graph.specs import SPECS, GraphSpec

__all__ = ["SCOPE_KINDS", "extract"]

SCOPE_KINDS = frozenset({"function", "method", "constructor", "class", "struct",
                         "interface", "trait", "impl", "module", "namespace", "enum"})
"""Definition kinds that enclose sites (not variables, constants, type aliases)."""

MAX_RECEIVER = 120
"""A longer receiver chain is kept as `?` (not resolvable anyway)."""

_TYPE_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")
_WRAPPERS = re.compile(r"^(?:(?:typing|t|te|typing_extensions)\.)?(?:Optional|Type|type|"
                       r"ClassVar|Final|Annotated|Box|Rc|Arc|Option|Ref|RefCell|Mutex|"
                       r"Required|NotRequired|ReadOnly|Awaitable)\[|"
                       r"^(?:Box|Rc|Arc|Option|Ref|Readonly|Promise|PromiseLike)<")
_LISTS = re.compile(r"^(?:(?:typing|t|collections\.abc|abc)\.)?(?:List|list|Sequence|"
                    r"MutableSequence|Iterable|Iterator|Collection|Set|set|FrozenSet|frozenset|"
                    r"AbstractSet|MutableSet|Deque|deque|Generator|AsyncIterator|AsyncIterable|"
                    r"AsyncGenerator)\[|^(?:Array|ReadonlyArray|Set|ReadonlySet|Iterable|"
                    r"Iterator|IterableIterator|Vec|VecDeque)<")
"""Container annotations whose elements are the class named inside (`X[]` in values)."""
_FUNCTIONS = frozenset({"function_definition", "function_declaration", "method_definition",
                        "arrow_function", "function_expression", "function",
                        "generator_function_declaration", "lambda"})
_EXITS = frozenset({"return_statement", "raise_statement", "throw_statement",
                    "continue_statement", "break_statement"})
_TYPING_SELF = re.compile(r"^(?:typing|t|te|typing_extensions)\.Self$")
_MAPS = re.compile(r"^(?:(?:typing|t|collections\.abc|abc|collections)\.)?(?:Dict|dict|"
                   r"Mapping|MutableMapping|DefaultDict|defaultdict|OrderedDict)\[|"
                   r"^(?:Map|ReadonlyMap|WeakMap|Record)<")
"""Mapping annotations whose values are the class named second (`X{}` in values)."""
_GENERIC_HOLDERS = frozenset({"Map", "WeakMap", "Set", "Array"})
_NULLISH = re.compile(r"^(?:None|null|undefined|void)\s*\|\s*")

_JS_LIKE = frozenset({"javascript", "typescript", "tsx"})
_NAME_START = frozenset("_$#abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")
_NOT_BASES = frozenset({"keyword_argument", "comment", "type_arguments", "declaration_list",
                        "field_declaration_list", "line_comment", "block_comment"})

_REASSIGNS = frozenset({"assignment_expression", "assignment_statement"})
"""JS and Go assignments that bind no new name (`x = 1`, not `let x = 1`, `x := 1`): their
targets' values read `+VALUE`, and the name is the one of an enclosing scope."""
_TYPED_VALUES = frozenset({"ternary_expression", "conditional_expression", "object", "array",
                           "list", "binary_expression", "boolean_operator",
                           "as_expression", "type_assertion",
                           "non_null_expression", "satisfies_expression", "subscript",
                           "subscript_expression", "index_expression"})
MAX_SHAPE = 300
"""The longest object shape (`{a ()X;b :Y}`) kept as a value."""
_FIELD = re.compile(r"[A-Za-z_$#][\w$]*")
_SHAPE_VALUE = re.compile(r"[^\s;{}]+(?:\{\})?")
_TYPING_FORMS = frozenset({
    "Union", "Optional", "List", "Dict", "Set", "FrozenSet", "Tuple", "Type", "Sequence",
    "MutableSequence", "Mapping", "MutableMapping", "Iterable", "Iterator", "Collection",
    "ClassVar", "Final", "Deque", "DefaultDict", "OrderedDict", "AbstractSet", "Awaitable",
    "Generator", "AsyncIterator", "AsyncIterable", "list", "dict", "set", "frozenset",
    "tuple", "type"})
"""Generic types whose string arguments are forward references (`Literal` is not one)."""
_SUBSCRIPTS = {"subscript": "value", "subscript_expression": "object",
               "index_expression": "operand"}
"""Element access node type -> the field holding the container."""

_BASE_LISTS = frozenset({"argument_list", "type_list", "interface_type_list",
                         "superclasses"})

Entry = tuple[tree_sitter.Node, Role | None, str | None, str | None]
"""(node, role imposed by its parent, receiver, value)."""


class _Walk:
    """One file's walk: the source, the spec, and what it found."""

    def __init__(self, language: str, spec: GraphSpec, source: bytes,
                 scopes: Sequence[int], fids: dict[str, int]) -> None:
        self.language = language
        self.spec = spec
        self.source = source
        self.lines = source.split(b"\n")
        self.ascii = source.isascii()
        self.fids = fids
        """The grammar's field ids by name (0: a field it lacks, which finds nothing)."""
        self.scopes = scopes
        """Line -> the index of the innermost definition holding it (`_scopes`)."""
        self.sites: list[Site] = []
        self.imports: list[Import] = []
        self.hints: dict[int, str] = {}
        self.forward: set[int] = set()
        """String nodes read as forward references already (nested annotations)."""
        """Parameter node id -> `@CALLEE#ARG#PARAM`: a callback's parameter typed by the
        callee's own parameter type (`operate((src, sub) => ...)`)."""

    # ------------------------------------------------------------ text helpers

    def text(self, node: tree_sitter.Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def column(self, node: tree_sitter.Node) -> int:
        row, byte = node.start_point
        line = self.lines[row] if row < len(self.lines) else b""
        if line.isascii():
            return byte + 1
        return len(line[:byte].decode("utf-8", "replace")) + 1

    def receiver(self, node: tree_sitter.Node | None, depth: int = 0) -> str:
        """`a.b`, `self`, `Session()`, `super()`; `?` for anything else."""
        if node is None or depth > 12:
            return "?"
        spec, t = self.spec, node.type
        if t in spec.names or t in ("this", "self", "super", "crate", "base", "cls"):
            return self.text(node)
        if t in spec.members:
            obj_f, name_f = spec.members[t]
            obj = node.child_by_field_id(self.fids[obj_f]) if obj_f else None
            name = node.child_by_field_id(self.fids[name_f]) if name_f else None
            if name is None:
                return "?"
            if obj is None:
                return self.text(name) if t == "call" else "?"
            inner = self.receiver(obj, depth + 1)
            return "?" if inner == "?" else f"{inner}.{self.text(name)}"
        if t in spec.calls:
            callee = node.child_by_field_id(self.fids[spec.calls[t]])
            inner = self.receiver(callee, depth + 1)
            return "?" if inner == "?" else f"{inner}()"
        if t in ("parenthesized_expression", "await", "await_expression",
                 "non_null_expression") and node.named_child_count == 1:
            return self.receiver(node.named_children[0], depth + 1)
        if t == "generic_type" and node.named_child_count:
            return self.receiver(node.named_children[0], depth + 1)
        if t == "as_expression" and node.named_child_count == 2:  # `(x as T).m()`
            typed = type_text(self.text(node.named_children[1]))
            return f"{typed}()" if typed and not typed.endswith("[]") else "?"
        if t == "ternary_expression":  # the same either way
            got = {self.receiver(c, depth + 1) for c in _choices(node)}
            return got.pop() if len(got) == 1 else "?"
        if t in _SUBSCRIPTS:  # `xs[i]`: an element of `xs`
            inner = self.receiver(node.child_by_field_id(self.fids[_SUBSCRIPTS[t]]), depth + 1)
            return "?" if inner == "?" else f"{inner}[]"
        return "?"

    def typed_value(self, node: tree_sitter.Node) -> str | None:
        """A value whose type is written: `x as Session`, `<Session>x`, `cast(Session, x)`;
        `x!` and `x satisfies T` are `x`; `xs[0]` is an element of `xs` (`=xs[]`); a
        list of one class's instances `[new X()]` reads `[()X`; `c ? a : b` the branch
        that constructs, else either (`|()a|()b`: the class both give).
        None: none of these ('' : one of these, of no known type)."""
        t = node.type
        if t in ("as_expression", "type_assertion") and node.named_child_count == 2:
            kids = node.named_children
            typed = type_text(self.text(kids[1] if t == "as_expression" else kids[0]))
            return ":" + typed if typed else ""
        if t in ("non_null_expression", "satisfies_expression") and node.named_child_count:
            return self.value(node.named_children[0]) or ""
        if t in _SUBSCRIPTS:
            got = self.receiver(node)
            return "" if got == "?" else "=" + got
        if t == "call" and (typed := self.cast(node)):
            return ":" + typed
        if t in ("ternary_expression", "conditional_expression"):
            values = [self.value(b) for b in _choices(node)]
            made = [v for v in values if v and v.startswith("()")]
            if len(made) == 1:  # the branch that constructs, if one does
                return made[0]
            if len(values) == 2 and all(v and "|" not in v and v[0] in "(:=" for v in values):
                return "|" + "|".join(v or "" for v in values)  # `c ? timer() : from(x)`
            return ""
        if t in ("binary_expression", "boolean_operator") and self.text(
                node.child_by_field_id(self.fids["operator"])) in ("||", "??", "or"):
            sides = {v for side in ("left", "right")  # `a ?? new X()`: the side that makes one
                     if (v := self.value(node.child_by_field_id(self.fids[side])))
                     and v[:2] == "()"}
            return sides.pop() if len(sides) == 1 else ""
        if t == "object" and self.language in _JS_LIKE:  # `{ request: new Manager() }`
            return self.shape(
                (self.text(c.child_by_field_id(self.fids["key"])),
                 self.value(c.child_by_field_id(self.fids["value"]))) if c.type == "pair" else
                (self.text(c), "=" + self.text(c))
                for c in node.named_children
                if c.type in ("pair", "shorthand_property_identifier"))
        if t in ("array", "list"):  # `[new Subject()]`: a list of one class's instances
            items = {self.value(c) for c in node.named_children}
            one = items.pop() if len(items) == 1 else None
            return "[" + one if one and one.startswith("()") else ""
        return None

    def default_type(self, param: tree_sitter.Node) -> str | None:
        """An unannotated parameter's type from its default (`def f(s=Session())`)."""
        default = param.child_by_field_id(self.fids[
            "right" if param.type == "assignment_pattern" else "value"])
        made = self.value(default) if default is not None else None
        return made if made and made.startswith("()") else None

    def elements(self, loop: tree_sitter.Node) -> str | None:
        """`for x in xs` / `for (const x of xs)`: `x` is an element of `xs` (`*xs`)."""
        if loop.type not in ("for_statement", "for_in_clause", "for_in_statement") or (
                loop.type == "for_in_statement" and self.text(
                    loop.child_by_field_id(self.fids["operator"])) != "of"):
            return None
        left = loop.child_by_field_id(self.fids["left"])
        if left is None or left.type not in self.spec.names:
            return None  # `for k, v in ...`: no element type for a tuple
        got = self.receiver(loop.child_by_field_id(self.fids["right"]))
        return None if got == "?" or len(got) > MAX_RECEIVER else "*" + got

    def enumerated(self, loop: tree_sitter.Node, left: tree_sitter.Node) -> list[Entry]:
        """`for i, x in enumerate(xs)`: `x` is an element of `xs` (`*xs`)."""
        right = loop.child_by_field_id(self.fids["right"])
        if left.type not in ("pattern_list", "tuple_pattern") or right is None or (
                right.type != "call" or self.text(right.child_by_field_id(
                    self.fids["function"])) != "enumerate") or loop.child_by_field_id(
                        self.fids["left"]) != left:
            return []
        names = left.named_children
        args = right.child_by_field_id(self.fids["arguments"])
        seq = args.named_children[0] if args is not None and args.named_child_count else None
        got = self.receiver(seq) if seq is not None else "?"
        if len(names) != 2 or names[1].type not in self.spec.names or got == "?":
            return []
        return [*self.targets(names[0], None), (names[1], Role.BIND, None, "*" + got)]

    def generic_new(self, node: tree_sitter.Node) -> str:
        """`new Map<K, T>()` / `new Set<T>()` / `new Array<T>()`: `T{}` / `T[]` ('' for
        anything else)."""
        ctor = node.child_by_field_id(self.fids["constructor"])
        args = node.child_by_field_id(self.fids["type_arguments"])
        if ctor is None or args is None or self.text(ctor) not in _GENERIC_HOLDERS:
            return ""
        typed = type_text(self.text(ctor) + self.text(args))
        return typed if typed.endswith(("[]", "{}")) else ""

    def cast(self, call: tree_sitter.Node) -> str:
        """`cast(T, x)` / `t.cast("T", x)`: the class named by its first argument."""
        fn = call.child_by_field_id(self.fids["function"])
        args = call.child_by_field_id(self.fids["arguments"])
        if fn is None or args is None or not args.named_child_count or (
                self.text(fn) not in ("cast", "t.cast", "typing.cast")):
            return ""
        return type_text(self.text(args.named_children[0]))

    def value(self, node: tree_sitter.Node | None) -> str | None:
        """What a binding assigns, as `Site.value` says."""
        if node is None:
            return None
        t = node.type
        if t in ("await", "await_expression", "parenthesized_expression",
                 "try_expression", "unary_expression", "reference_expression",
                 "pointer_expression") and node.named_child_count:
            return self.value(node.named_children[-1])  # `&Store{}`, `&mut x`, `await f()`
        if t in _TYPED_VALUES or (t == "call" and self.language == "python"):
            got = self.typed_value(node)
            if got is not None or t != "call":
                return got or None
        if t == "new_expression" and (typed := self.generic_new(node)):
            return ":" + typed  # `new Map<string, Query>()`: a mapping to `Query`s
        if t in self.spec.calls:
            got = self.receiver(node.child_by_field_id(self.fids[self.spec.calls[t]]))
            if t in self.spec.members:  # Java, Ruby: `obj.m()` as one node
                got = self.receiver(node)
            if got == "?" or len(got) > MAX_RECEIVER:
                return None
            if t == "call" and self.language == "ruby" and got.endswith(".new"):
                got = got.removesuffix(".new")
            return "()" + got
        if t in ("struct_expression", "composite_literal"):
            return "()" + type_text(self.text(node.child_by_field_id(self.fids[
                "name" if t == "struct_expression" else "type"])))
        if t in self.spec.names or t in self.spec.members or t == "this":
            got = self.receiver(node)
            return None if got == "?" else "=" + got
        return None

    # ------------------------------------------------------------ the walk

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
        self.sites.append(_new_site(Site, (
            name, row + 1, byte + 1 if self.ascii else self.column(node),
            role if role is not None else Role.REF, recv,
            scopes[row + 1] if row + 1 < len(scopes) else -1, value)))

    def record(self, name: str, line: int, col: int, role: Role, recv: str | None,
               value: str | None) -> None:
        """A site, with the definition that encloses its line."""
        scopes = self.scopes
        self.sites.append(_new_site(Site, (name, line, col, role, recv,
                                           scopes[line] if line < len(scopes) else -1, value)))

    def targets(self, node: tree_sitter.Node | None, value: str | None) -> Iterator[Entry]:
        """The entries of a binding's target: names bound, attributes bound, the rest read."""
        if node is None:
            return
        spec, t = self.spec, node.type
        if t in spec.names:
            yield node, Role.BIND, None, value
        elif t in spec.members:
            yield node, Role.ATTR_BIND, None, value
        elif t in spec.calls or t in ("subscript", "subscript_expression", "index_expression"):
            yield node, None, None, None
        elif t == "object_pattern" and value and value[0] in "=:" and value[:2] != "=>":
            yield from self.fields(node, value)
        else:
            for i, child in enumerate(node.children):
                if not child.is_named:
                    continue
                field = node.field_name_for_child(i)
                if t in spec.not_refs and spec.not_refs[t] in ("", field):
                    continue
                if t == "pair_pattern" and field == "key":
                    continue
                yield from self.targets(child, None)

    def fields(self, pattern: tree_sitter.Node, value: str) -> Iterator[Entry]:
        """`{ a, b: c, d: { e } } = x` (or `: T`): `a` is `x.a`, `c` is `x.b`, `e` is
        `x.d.e` (`=x.a`, `:T.a`: a field of what `x` is, of the type `T`)."""
        for c in pattern.named_children:
            key = c.child_by_field_id(self.fids["key"]) if c.type == "pair_pattern" else None
            if c.type == "shorthand_property_identifier_pattern":
                yield c, Role.BIND, None, f"{value}.{self.text(c)}"
            elif key is not None and key.type == "property_identifier":
                yield from self.targets(c.child_by_field_id(self.fids["value"]),
                                        f"{value}.{self.text(key)}")
            elif c.type == "object_assignment_pattern" and (
                    left := c.child_by_field_id(self.fids["left"])) is not None:
                yield from self.fields_default(c, left, value)
            elif c.type != "pair_pattern":
                yield from self.targets(c, None)
            elif (v := c.child_by_field_id(self.fids["value"])) is not None:
                yield from self.targets(v, None)

    def fields_default(self, node: tree_sitter.Node, left: tree_sitter.Node,
                       value: str) -> Iterator[Entry]:
        """`{ a = 1 }`: `a` as `fields` says, its default read."""
        if left.type == "shorthand_property_identifier_pattern":
            yield left, Role.BIND, None, f"{value}.{self.text(left)}"
        else:
            yield from self.targets(left, None)
        right = node.child_by_field_id(self.fids["right"])
        if right is not None:
            yield right, None, None, None

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
                        sites.append(_new_site(Site, (
                            name, row + 1, byte + 1 if ascii_only else self.column(node),
                            Role.REF, None, scopes[row + 1] if row + 1 < n_scopes else -1,
                            None)))
                    continue
                if kind not in ruled_kinds:
                    kids = node.named_children
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

    def children(  # noqa: C901 - one table-driven rule per kind of node, read top-down
        self, node: tree_sitter.Node, role: Role | None, recv: str | None, value: str | None
    ) -> list[Entry | tree_sitter.Node] | list[tree_sitter.Node]:
        """The entries of a node's children, with what the node imposes on them (a bare
        node: nothing)."""
        spec, t = self.spec, node.type
        put: dict[int, list[Entry]] = {}  # child id -> the entries in its place ([]: skip)
        fids, by_id = self.fids, node.child_by_field_id

        if t in spec.members and (t != "call" or by_id(fids["receiver"]) is not None):
            obj_f, name_f = spec.members[t]
            obj = by_id(fids[obj_f]) if obj_f else None
            name = by_id(fids[name_f]) if name_f else None
            if name is not None and name.type in spec.names:
                if t in _member_only(spec) and role is None:  # the commonest: `a.b`
                    of = self.receiver(obj) if obj is not None else None
                    name_id = name.id
                    plain: list[Entry | tree_sitter.Node] = [
                        (c, Role.REF, of, value) if c.id == name_id else c
                        for c in node.named_children]
                    return plain
                own = Role.CALL if t in spec.calls else role
                if own == Role.BIND:
                    own = Role.ATTR_BIND
                if own not in (Role.CALL, Role.ATTR_BIND, Role.INHERIT):
                    own = Role.REF
                put[name.id] = [(name, own, self.receiver(obj) if obj is not None else None,
                                 value)]
        elif t in spec.calls:
            callee = by_id(fids[spec.calls[t]])
            if callee is not None:
                if callee.type in spec.names or callee.type in spec.members:
                    put[callee.id] = [(callee, Role.CALL, None, None)]
                elif callee.type == "generic_type" and callee.named_child_count:
                    first = callee.named_children[0]
                    rest: list[Entry] = [(c, None, None, None)
                                         for c in callee.named_children[1:]]
                    put[callee.id] = [(first, Role.CALL, None, None), *rest]
            if t == "call_expression" and self.language in _JS_LIKE:
                self.require(node, None)
            if self.language in _JS_LIKE and callee is not None:
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
            holder = by_id(fids[spec.bases[t]]) if spec.bases[t] else node
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
        if t in spec.params:
            for c in node.named_children:
                if c.type in spec.names:
                    put[c.id] = [(c, Role.PARAM, None, None)]
        if t in spec.param_nodes:
            name_f, type_f = spec.param_nodes[t]
            type_node = by_id(fids[type_f]) if type_f else None
            typed = self.param_type(type_node) or self.default_type(node)
            names = node.children_by_field_id(self.fids[name_f]) if name_f else [
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
            holders = node.children_by_field_id(self.fids[f]) if f else list(node.named_children)
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

    def add(self, name: str, node: tree_sitter.Node, role: Role, recv: str | None = None,
            value: str | None = None, offset: int = 0) -> None:
        """A site that is not an identifier node of its own (a return value, the names in a
        string annotation)."""
        self.record(name, node.start_point[0] + 1, self.column(node) + offset, role, recv,
                    value)

    def returns(self, node: tree_sitter.Node) -> None:
        """`return X(...)` / `return self`: what the enclosing function gives back."""
        if node.named_child_count:
            value = self.value(node.named_children[0])
            if value:
                self.add("return", node, Role.BIND, value=value)

    def return_type(self, node: tree_sitter.Node) -> None:
        """`def f() -> Session:` / `f(): Session`: the type the function gives back."""
        ret = node.child_by_field_id(self.fids["return_type"]) or node.child_by_field_id(
            self.fids["result"])
        if ret is not None and ret.type == "parameter_list":  # Go `(c *Context, err error)`
            first = next((c for c in ret.named_children
                          if c.type == "parameter_declaration"), None)
            ret = first.child_by_field_id(self.fids["type"]) if first is not None else None
        if ret is not None and (name := type_text(self.text(ret))):
            self.add("return", ret, Role.BIND, value=":" + name)

    def string_names(self, node: tree_sitter.Node, role: Role = Role.REF) -> None:
        """The names written in a string that is code: a forward-reference annotation
        (`"Session"`, `"models.Request"`, `"t.Callable[..., V]"`)."""
        for c in node.named_children:
            if c.type != "string_content":
                continue
            text = self.text(c)
            start = c.start_byte - node.start_byte
            for m in _DOTTED.finditer(text):
                *parts, last = m.group(0).split(".")
                self.add(last, node, role, ".".join(parts) or None,
                         offset=start + m.end() - len(last))

    def python_type(self, node: tree_sitter.Node) -> None:
        """The forward references (strings) anywhere in an annotation."""
        stack = list(node.named_children)
        while stack:
            c = stack.pop()
            if c.type == "string" and c.id not in self.forward:
                self.forward.add(c.id)
                self.string_names(c)
            elif c.type not in ("lambda", "call", "string"):
                stack.extend(c.named_children)

    def narrowing(self, node: tree_sitter.Node) -> None:
        """`if isinstance(x, Session):` / `if (x instanceof Session) {`: in the block, `x`
        is a `Session` (a binding `~END()Session`, END the block's last line); after
        `if not isinstance(x, Session): return` (no else), to the function's end."""
        body = node.child_by_field_id(self.fids["consequence"])
        cond = node.child_by_field_id(self.fids["condition"])
        if body is None or cond is None or self.language not in ("python", *_JS_LIKE):
            return
        for name, cls in self.type_tests(cond):
            self.add(name, body, Role.BIND, value=f"~{body.end_point[0] + 1}()" + cls)
        negated = _negated(cond)
        if negated is not None and node.child_by_field_id(self.fids["alternative"]) is None and (
                _exits(body)):
            self.narrow_rest(node, negated, node.end_point[0] + 1)

    def asserted(self, node: tree_sitter.Node) -> None:
        """`assert isinstance(x, Session)`: `x` is a `Session` to the function's end."""
        if self.language == "python" and node.named_child_count:
            self.narrow_rest(node, node.named_children[0], node.start_point[0] + 1)

    def narrow_rest(self, node: tree_sitter.Node, cond: tree_sitter.Node, line: int) -> None:
        """The names `cond` tests narrowed from `line` to the end of the enclosing function."""
        scope = node.parent
        while scope is not None and scope.type not in _FUNCTIONS:
            scope = scope.parent
        end = (scope.end_point[0] if scope is not None else len(self.lines)) + 1
        for name, cls in self.type_tests(cond):
            self.record(name, line, self.column(node), Role.BIND, None, f"~{end}()" + cls)

    def type_tests(self, cond: tree_sitter.Node) -> list[tuple[str, str]]:
        """(name, class) of each `isinstance(name, Cls)` / `name instanceof Cls` that
        `cond` requires (alone, or within `and` / `&&`)."""
        out: list[tuple[str, str]] = []
        stack = [cond]
        while stack:
            c = stack.pop()
            op = self.text(c.child_by_field_id(self.fids["operator"]))
            if c.type == "parenthesized_expression" and c.named_child_count == 1:
                stack.append(c.named_children[0])
            elif c.type in ("binary_expression", "boolean_operator") and op in ("&&", "and"):
                stack += [x for f in ("left", "right")
                          if (x := c.child_by_field_id(self.fids[f])) is not None]
            elif (got := self.type_test(c, op)) is not None:
                out.append((self.text(got[0]), got[1]))
        return out

    def type_test(self, node: tree_sitter.Node, op: str) -> tuple[tree_sitter.Node, str] | None:
        """(the name, the class) of `isinstance(name, Cls)` / `name instanceof Cls`."""
        if node.type == "binary_expression" and op == "instanceof":
            name = node.child_by_field_id(self.fids["left"])
            cls = node.child_by_field_id(self.fids["right"])
        elif node.type == "call" and self.text(node.child_by_field_id(self.fids["function"])) == (
                "isinstance") and (args := node.child_by_field_id(
                    self.fids["arguments"])) is not None:
            kids = args.named_children
            name, cls = (kids[0], kids[1]) if len(kids) == 2 else (None, None)
        else:
            return None
        if name is None or cls is None or name.type != "identifier":
            return None
        text = self.receiver(cls)
        return (name, text) if text != "?" and "(" not in text else None

    def python_subscript(self, node: tree_sitter.Node) -> None:
        """`Union["Headers", Mapping[str, str]]` outside an annotation (a type alias): its
        strings are forward references, as in an annotation (not `Literal["x"]`'s)."""
        head = node.child_by_field_id(self.fids["value"])
        if self.language != "python" or head is None or (
                self.text(head).rpartition(".")[2] not in _TYPING_FORMS):
            return
        for c in node.children_by_field_id(self.fids["subscript"]):
            if c.type == "string" and c.id not in self.forward and _DOTTED.fullmatch(
                    self.text(c).strip("'\"")):
                self.forward.add(c.id)
                self.string_names(c)

    def annotation(self, type_node: tree_sitter.Node) -> str:
        """An annotation as `Site.value`: `:T`, `:T[]`, or an object type's fields
        (`{ subs: Subscription }` -> `{subs :Subscription}`)."""
        inner = type_node.named_children[0] if (
            type_node.type == "type_annotation" and type_node.named_child_count) else type_node
        if inner.type == "object_type" and self.language in _JS_LIKE:
            return self.shape(
                (self.text(c.child_by_field_id(self.fids["name"])), ":" + type_text(self.text(ty)))
                for c in inner.named_children if c.type == "property_signature"
                and (ty := c.child_by_field_id(self.fids["type"])) is not None) or ":"
        return ":" + type_text(self.text(type_node))

    @staticmethod
    def shape(fields: Iterable[tuple[str, str | None]]) -> str:
        """An object's known fields as `Site.value`: `{a ()X;b :Y}` ('' when none is
        known)."""
        known = [f"{k} {v}" for k, v in fields if v and v not in (":", "()")
                 and _FIELD.fullmatch(k) and _SHAPE_VALUE.fullmatch(v)]
        text = "{" + ";".join(known) + "}"
        return text if known and len(text) <= MAX_SHAPE else ""

    def param_type(self, type_node: tree_sitter.Node | None) -> str | None:
        """A parameter's annotated type as `Site.value`: `:T`, or for a callback type
        `(a: A, b: B) => R` the types of its parameters, `=>A,B` (`this:` left out)."""
        if type_node is None:
            return None
        inner = type_node.named_children[0] if (
            type_node.type == "type_annotation" and type_node.named_child_count) else type_node
        if inner.type != "function_type":
            return self.annotation(type_node)
        params = inner.child_by_field_id(self.fids["parameters"])
        types = []
        for p in params.named_children if params is not None else []:
            if self.text(p.child_by_field_id(self.fids["pattern"])) == "this":
                continue
            types.append(type_text(self.text(p.child_by_field_id(self.fids["type"]))))
        return "=>" + ",".join(types)

    def callback_hints(self, call: tree_sitter.Node, callee: tree_sitter.Node,
                       prefix: str) -> None:
        """The untyped parameters of functions passed to a call, each hinted with where
        its type is written: the callee's parameter (`Site.value` `@CALLEE#ARG#PARAM`)."""
        args = call.child_by_field_id(self.fids["arguments"])
        if args is None:
            return
        text = self.receiver(callee)
        if text == "?" or len(text) > MAX_RECEIVER:
            return
        for i, arg in enumerate(args.named_children):
            for fn in _branches(arg):
                self.hint_params(fn, f"@{prefix}{text}#{i}")

    def hint_params(self, fn: tree_sitter.Node, hint: str) -> None:
        """A function argument's untyped parameters, hinted `HINT#PARAM`."""
        if fn.type in ("arrow_function", "function_expression", "function"):
            arg = fn
            one = arg.child_by_field_id(self.fids["parameter"])
            params = arg.child_by_field_id(self.fids["parameters"])
            names = [one] if one is not None else [
                p if p.type in self.spec.names else (
                    p.child_by_field_id(self.fids["pattern"])
                    if p.child_by_field_id(self.fids["type"]) is None else None)
                for p in (params.named_children if params is not None else [])]
            for j, n in enumerate(names):  # typed ones keep their place, with their type
                if n is not None and n.type in self.spec.names:
                    self.hints[n.id] = f"{hint}#{j}"

    def struct_field(self, node: tree_sitter.Node) -> None:
        """A Go or Rust struct field (`writermem responseWriter`, `router: PathRouter<S>`):
        `self.NAME` / `recv.NAME` with its type."""
        if self.language not in ("go", "rust"):
            return
        typed = type_text(self.text(node.child_by_field_id(self.fids["type"])))
        if typed:
            for name in node.children_by_field_id(self.fids["name"]):
                self.add(self.text(name), name, Role.ATTR_BIND, "self", ":" + typed)

    def this_param(self, node: tree_sitter.Node) -> bool:
        """`function (this: SchedulerAction<T>)`: a `this` parameter site with its type."""
        pattern = node.child_by_field_id(self.fids["pattern"])
        if pattern is None or pattern.type != "this":
            return False
        typed = type_text(self.text(node.child_by_field_id(self.fids["type"])))
        if typed:
            self.add("this", pattern, Role.PARAM, value=":" + typed)
        return True

    def class_field(self, node: tree_sitter.Node) -> None:
        """A TS/JS class field (`private d: Sub<T>`, `x = new Y()`, `#d: Sub`), an
        interface's property (`cache?: Cache`) and a constructor's parameter property
        (`constructor(private s: Sched)`): `this.NAME` with a type."""
        if self.language not in _JS_LIKE:
            return
        if node.type == "property_signature" and (
                node.parent is None or node.parent.type != "interface_body"):
            return  # a type literal's field: `Site.value` `{...}` of what it types
        if node.type == "required_parameter" or node.type == "optional_parameter":
            if self.this_param(node) or not any(
                    c.type in ("accessibility_modifier", "readonly") for c in node.children):
                return
            name = node.child_by_field_id(self.fids["pattern"])
        else:
            name = node.child_by_field_id(self.fids["name"]) or node.child_by_field_id(
                self.fids["property"])
        if name is None or name.type not in self.spec.names:
            return
        type_node = node.child_by_field_id(self.fids["type"])
        value = (self.annotation(type_node) if type_node is not None
                 else self.value(node.child_by_field_id(self.fids["value"])))
        if value and value not in (":", "()"):
            self.add(self.text(name), name, Role.ATTR_BIND, "this", value)

    def default_export(self, node: tree_sitter.Node) -> None:
        """`export default X` / `export default class X` / `export default {a, b}`: what a
        default import of the module binds (a `default` binding: `=X`, or `{}` for an
        object of the module's own names)."""
        if self.language not in _JS_LIKE or not any(c.type == "default" for c in node.children):
            return
        decl = node.child_by_field_id(self.fids["declaration"])
        value = node.child_by_field_id(self.fids["value"])
        name = decl.child_by_field_id(self.fids["name"]) if decl is not None else None
        if name is not None:
            self.add("default", node, Role.BIND, value="=" + self.text(name))
        elif value is not None and value.type == "identifier":
            self.add("default", node, Role.BIND, value="=" + self.text(value))
        elif value is not None and value.type == "object":
            self.add("default", node, Role.BIND, value="{}")

    def python_as(self, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
        """`with Session() as s`: `s` is given what the `with` opened."""
        alias = node.child_by_field_id(self.fids["alias"])
        kids = [c for c in node.named_children if alias is None or c.id != alias.id]
        if alias is None or not kids:
            return
        value = self.value(kids[0])
        if value and value.startswith("="):
            value = "()" + value[1:] if kids[0].type == "call" else value
        put[alias.id] = [e for c in alias.named_children for e in self.targets(c, value)]

    def binding(self, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
        """The targets of an assignment or declarator, each with the value it is given."""
        target_f, value_f = self.spec.binds[node.type]
        targets = node.children_by_field_id(self.fids[target_f])
        value_node = node.child_by_field_id(self.fids[value_f])
        if self.language in _JS_LIKE and targets:
            self.require(value_node, targets[0])
        type_node = node.child_by_field_id(self.fids["type"])
        typed = self.annotation(type_node) if type_node is not None else None
        if len(targets) == 1 and targets[0].type in ("expression_list", "pattern_list",
                                                     "tuple_pattern"):
            values = (value_node.named_children if value_node is not None
                      and value_node.type == "expression_list" else [])
            inner = targets[0].named_children
            given: list[tree_sitter.Node | None] = list(values)
            if self.language == "go" and len(values) == 1 and len(inner) > 1:
                given += [None] * (len(inner) - 1)  # `c, err := f()`: c is f's first result
            put[targets[0].id] = [
                e for k, tgt in enumerate(inner)
                for e in self.targets(tgt, self.value(given[k])
                                      if len(given) == len(inner) else None)]
            return
        summary = typed or self.value(value_node)
        for tgt in targets:
            got = list(self.targets(tgt, summary))
            if node.type in _REASSIGNS:  # `x = ...` where `x` was declared before
                got = [(n, r, rv, "+" + (v or "")) if r == Role.BIND else (n, r, rv, v)
                       for n, r, rv, v in got]
            put[tgt.id] = got
        if self.language == "python" and [self.text(x) for x in targets] == ["__all__"]:
            self.exported(value_node)
        if self.language in _JS_LIKE and len(targets) == 1 and value_node is not None:
            self.prototype(targets[0], value_node)

    def prototype(self, target: tree_sitter.Node, value: tree_sitter.Node) -> None:
        """`Cls.prototype[name] = function () {...}`: `this` in the function is a `Cls`
        (a `this` parameter site; `Cls.prototype.m = ...` is a method of its own)."""
        holder = target.child_by_field_id(self.fids["object"])
        if target.type != "subscript_expression" or holder is None or value.type not in (
                "function_expression", "function"):
            return
        cls = self.receiver(holder)
        if cls.endswith(".prototype") and "(" not in cls:
            self.add("this", value, Role.PARAM, value=":" + cls.removesuffix(".prototype"))

    def augmented(self, node: tree_sitter.Node) -> None:
        """`__all__ += [...]`."""
        if self.language == "python" and self.text(node.child_by_field_id(self.fids["left"])) == (
                "__all__"):
            self.exported(node.child_by_field_id(self.fids["right"]))

    def exported(self, node: tree_sitter.Node | None) -> None:
        """The names listed in `__all__ = [...]` / `(...)`: each string is a reference."""
        for c in node.named_children if node is not None and node.type in (
                "list", "tuple", "parenthesized_expression") else ():
            if c.type == "string" and _DOTTED.fullmatch(self.text(c).strip("'\"")):
                self.string_names(c)

    def require(self, value: tree_sitter.Node | None, target: tree_sitter.Node | None) -> None:
        """`const x = require("m")`, `const {a, b: c} = require("m")`, `require("m")`."""
        if value is None or value.type != "call_expression":
            return
        fn = value.child_by_field_id(self.fids["function"])
        if fn is None or self.text(fn) != "require":
            return
        args = value.child_by_field_id(self.fids["arguments"])
        strings = [c for c in (args.named_children if args else []) if c.type == "string"]
        if not strings:
            return
        module, line = string_value(strings[0], self.text), value.start_point[0] + 1
        if target is None:
            if not any(i.module == module and i.line == line for i in self.imports):
                self.imports.append(Import(module, None, None, 0, line))
        elif target.type == "identifier":
            self.imports[:] = [i for i in self.imports
                               if not (i.module == module and i.line == line and not i.alias)]
            self.imports.append(Import(module, None, self.text(target), 0, line))
        elif target.type == "object_pattern":
            for c in target.named_children:
                if c.type == "shorthand_property_identifier_pattern":
                    self.imports.append(Import(module, self.text(c), None, 0, line))
                elif c.type == "pair_pattern":
                    key = c.child_by_field_id(self.fids["key"])
                    val = c.child_by_field_id(self.fids["value"])
                    self.imports.append(Import(module, self.text(key), self.text(val), 0, line))


    # ------------------------------------------------------------ C/C++ and Rust macros

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


def _branches(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """An argument's possible values: both branches of `c ? a : b`, inside parentheses."""
    while node.type == "parenthesized_expression" and node.named_child_count == 1:
        node = node.named_children[0]
    if node.type == "ternary_expression":
        return [b for f in ("consequence", "alternative")
                if (c := node.child_by_field_name(f)) is not None for b in _branches(c)]
    return [node]


def _negated(cond: tree_sitter.Node) -> tree_sitter.Node | None:
    """`X` of `not X` / `!X` / `!(X)` (None: not a negation)."""
    while cond.type == "parenthesized_expression" and cond.named_child_count == 1:
        cond = cond.named_children[0]
    if cond.type == "not_operator" or (cond.type == "unary_expression" and cond.child_count
                                       and cond.children[0].type == "!"):
        return cond.child_by_field_name("argument")
    return None


def _exits(body: tree_sitter.Node) -> bool:
    """Whether a block always leaves (its last statement returns, raises, breaks)."""
    last = [c for c in body.named_children if c.type != "comment"][-1:] if body.type in (
        "block", "statement_block") else [body]
    return bool(last) and last[0].type in _EXITS


def _choices(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The two values of `c ? a : b` / `a if c else b` (comments between them left out)."""
    if node.type == "ternary_expression":
        return [c for f in ("consequence", "alternative")
                if (c := node.child_by_field_name(f)) is not None]
    kids = [c for c in node.named_children if c.type != "comment"]
    return [kids[0], kids[2]] if len(kids) == 3 else []


def type_text(text: str) -> str:
    """The class named by an annotation: `Optional[Session]` -> `Session`, `*Server` ->
    `Server`, `: Sess` -> `Sess`, `"Session"` -> `Session`, `t.Optional["Ctx"]` -> `Ctx`,
    `T | null` -> `T`; a list of a class's instances reads `X[]` (`Sub[]`, `Array<Sub>`,
    `List[Cmd]`, `&mut Vec<T>`), a mapping to them `X{}` (`Dict[str, Cmd]`,
    `Map<string, Sub>`, `Record<K, Sub>`); a container of containers: ``."""
    text = text.strip().lstrip(":").strip()
    holder = ""
    for _ in range(8):
        text = text.strip("'\" ").lstrip("&*").strip()
        text = text.removeprefix("mut ").removeprefix("const ").removeprefix("readonly ")
        text = _NULLISH.sub("", text)
        if (m := _WRAPPERS.match(text)) is not None:
            text = text[m.end():]
        elif (m := _LISTS.match(text) or _MAPS.match(text)) is not None:
            if holder:
                return ""
            holder = "[]" if m.re is _LISTS else "{}"
            text = text[m.end():] if holder == "[]" else _after_key(text[m.end():])
        else:
            break
    m = _TYPE_NAME.match(text)
    if m is None:
        return ""
    rest = text[m.end():]
    if rest.startswith("<"):  # `Foo<T>[]`: past the type arguments
        depth = 0
        for k, ch in enumerate(rest):
            depth += (ch == "<") - (ch == ">")
            if depth == 0:
                rest = rest[k + 1:]
                break
    if rest.startswith("[]"):
        if holder:
            return ""
        holder = "[]"
    name = _TYPING_SELF.sub("Self", m.group(0).replace("::", "."))
    return name + holder


def _after_key(args: str) -> str:
    """A mapping's type arguments past the key's (`str, Cmd]` -> `Cmd]`; '' if none)."""
    depth = 0
    for k, ch in enumerate(args):
        depth += (ch in "[<(") - (ch in "]>)")
        if depth < 0:
            return ""
        if ch == "," and depth == 0:
            return args[k + 1:]
    return ""


_SPECIAL: dict[int, frozenset[str]] = {}
_POSITION = itemgetter(1, 2)
"""A recorded site's (line, column)."""
_new_site = tuple.__new__
"""`Site`'s own constructor without its Python-level `__new__` (a file has thousands)."""


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


def _special(spec: GraphSpec) -> frozenset[str]:
    """The node types `_Walk.children` has a rule for (every other node just passes its
    children on)."""
    got = _SPECIAL.get(id(spec))
    if got is None:
        got = _SPECIAL[id(spec)] = frozenset({
            *spec.calls, *spec.members, *spec.def_names, *spec.bases, *spec.params,
            *spec.param_nodes, *spec.binds, *spec.bind_targets, *spec.not_refs,
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
                  "as_pattern", "function_type", "arrow_function", "token_tree"}
        got = _CALL_ONLY[id(spec)] = frozenset(t for t in spec.calls if t not in others)
    return got


def _member_only(spec: GraphSpec) -> frozenset[str]:
    """Member access node types with no rule but `spec.members`' (`a.b` in Python, JS,
    Go): `_Walk.children` answers them at once."""
    got = _MEMBER_ONLY.get(id(spec))
    if got is None:
        others = {*spec.calls, *spec.def_names, *spec.bases, *spec.params, *spec.param_nodes,
                  *spec.binds, *spec.bind_targets, *spec.not_refs, "as_pattern",
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
    walk.sites.sort(key=_POSITION)
    return FileGraph(language, defs, walk.imports, walk.sites)


_EXTRA = {
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
"""Node type -> what the walk records of it besides its children's identifiers."""
