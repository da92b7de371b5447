"""What a walk reads of expressions: receivers, assigned values, binding targets.

`Values.receiver(node)` is the text of `recv` in `recv.name` (`a.b`, `self`, `Session()`,
`xs[]`; `?` when not a plain chain); `Values.value(node)` is what a binding assigns, as
`Site.value` writes it (`()Session` made, `=x` aliased, `:T` typed, `*xs` an element of,
`[()X` a list of, `{a ()X}` an object's fields, `|a|b` either); `Values.targets` yields
the entries of a binding's target (names bound, attributes bound, the rest read).

Invariants: pure reads of the tree and the source; a receiver or value longer than
`MAX_RECEIVER` is not kept (`?` / None).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import tree_sitter

from ctxd.indexer.graph.base import JS_LIKE, MAX_RECEIVER, Entry, WalkBase
from ctxd.indexer.graph.langs_more import call_labels, named_receiver
from ctxd.indexer.graph.model import Role
from ctxd.indexer.graph.typetext import type_text

__all__ = ["Values"]

_GENERIC_HOLDERS = frozenset({"Map", "WeakMap", "Set", "Array"})
_TYPED_VALUES = frozenset({"ternary_expression", "conditional_expression", "object", "array",
                           "list", "binary_expression", "boolean_operator",
                           "as_expression", "type_assertion",
                           "non_null_expression", "satisfies_expression", "subscript",
                           "subscript_expression", "index_expression"})
_MORE_CALLS = {("scala", "generic_function"): "function"}
"""Values that are calls though no call node: Scala's `OParser.builder[C]` (a method
without parentheses, given type arguments) -> the field of the callee."""
MAX_CHAIN = 48
"""How deep a receiver chain is read (`a.b().c()...`: two levels a link; `MAX_RECEIVER`
bounds its text too)."""
MAX_SHAPE = 300
"""The longest object shape (`{a ()X;b :Y}`) kept as a value."""
_FIELD = re.compile(r"[A-Za-z_$#][\w$]*")
_SHAPE_VALUE = re.compile(r"[^\s;{}]+(?:\{\})?")
_SUBSCRIPTS = {"subscript": "value", "subscript_expression": "object",
               "index_expression": "operand"}
"""Element access node type -> the field holding the container."""


_CASTS = frozenset({b"cast", b"t.cast", b"typing.cast"})
"""The callees `Values.cast` reads (as written, bytes)."""

_MEMBER_CALLS = frozenset({"method_invocation", "member_call_expression",
                           "nullsafe_member_call_expression", "scoped_call_expression"})
"""Member accesses that are calls too (Java, PHP): `a.b()`'s receiver text ends in `()`."""


class Values(WalkBase):
    """The expression readers of a file's walk."""

    def receiver(  # noqa: C901 - one rule per kind of expression, read top-down
            self, node: tree_sitter.Node | None, depth: int = 0) -> str:
        """`a.b`, `self`, `Session()`, `super()`; `?` for anything else."""
        if node is None or depth > MAX_CHAIN:
            return "?"
        spec, t = self.spec, node.type
        if spec.receivers and (own := named_receiver(spec, node, self.text)) is not None:
            return own  # (`$this`, `this_expression`, `base`: as the resolver reads them)
        if t in spec.names or t in ("this", "self", "super", "crate", "base", "cls"):
            return self.text(node)
        if t in spec.members:
            obj_f, name_f = spec.members[t]
            obj = self.part(node, obj_f)
            name = self.part(node, name_f)
            if name is None:
                return "?"
            called = "()" if t in _MEMBER_CALLS else ""  # Java: `a.b()` is a call
            if obj is None:
                return self.text(name) + called if t == "call" or called else "?"
            inner = self.receiver(obj, depth + 1)
            last = self.receiver(name, depth + 1) if name.type == t else self.text(name)
            return "?" if "?" in (inner, last) else f"{inner}.{last}{called}"  # (`a::b::c`)
        if t in spec.calls:
            callee = self.part(node, spec.calls[t])
            inner = self.receiver(callee, depth + 1)
            return "?" if inner == "?" else f"{self._labelled(inner, node)}()"
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

    def _labelled(self, callee: str, call: tree_sitter.Node) -> str:
        """A Swift call's callee in a chain with its argument labels (`request#_,to`:
        `search.graph.receivers` tells overloads apart by them)."""
        if self.language != "swift" or callee[-1:] in (")", "]"):
            return callee
        return f"{callee}#{call_labels(self.text, call)}"

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
        if t == "call":  # (no other form below is a `call`)
            typed = self.cast(node)
            return ":" + typed if typed else None
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
        if t == "object" and self.language in JS_LIKE:  # `{ request: new Manager() }`
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
        """`new Map<K, T>()` / `new Set<T>()` / `new Array<T>()`: `:T{}` / `:T[]`; C++
        `new util::Box(2)`: `()util.Box` ('' for anything else)."""
        if self.language == "cpp":  # `new util::Box(2)`: an instance (`()util.Box`)
            made = type_text(self.text(node.child_by_field_id(self.fids["type"])))
            return "()" + made if made else ""
        ctor = node.child_by_field_id(self.fids["constructor"])
        args = node.child_by_field_id(self.fids["type_arguments"])
        if ctor is None or args is None or self.text(ctor) not in _GENERIC_HOLDERS:
            return ""
        typed = type_text(self.text(ctor) + self.text(args))
        return ":" + typed if typed.endswith(("[]", "{}")) else ""

    def cast(self, call: tree_sitter.Node) -> str:
        """`cast(T, x)` / `t.cast("T", x)`: the class named by its first argument."""
        fn = call.child_by_field_id(self.fids["function"])
        if fn is None or self.source[fn.start_byte : fn.end_byte] not in _CASTS:
            return ""  # (most calls: no decode, no arguments looked up)
        args = call.child_by_field_id(self.fids["arguments"])
        if args is None or not args.named_child_count:
            return ""
        return type_text(self.text(args.named_children[0]))

    def value(self, node: tree_sitter.Node | None) -> str | None:
        """What a binding assigns, as `Site.value` says."""
        if node is None:
            return None
        t = node.type
        if (t in ("await", "await_expression", "parenthesized_expression",
                  "try_expression", "unary_expression", "reference_expression",
                  "pointer_expression") or (  # Lua's `return M`, `local x = f()`:
                t == "expression_list" and self.language == "lua" and (
                    node.named_child_count == 1))) and node.named_child_count:
            return self.value(node.named_children[-1])  # `&Store{}`, `&mut x`, `await f()`
        if t in _TYPED_VALUES or (t == "call" and self.language == "python"):
            got = self.typed_value(node)
            if got is not None or t != "call":
                return got or None
        if t == "new_expression" and (typed := self.generic_new(node)):
            return typed  # `new Map<string, Query>()`: a mapping to `Query`s (C++: `new X`)
        callee = self.spec.calls.get(t) or _MORE_CALLS.get((self.language, t))
        if callee:
            got = self.receiver(self.part(node, callee))
            if t in self.spec.members:  # Java, Ruby: `obj.m()` as one node
                got = self.receiver(node).removesuffix("()")  # (Java's: the call, once)
            if got == "?" or len(got) > MAX_RECEIVER:
                return None
            if t == "call" and self.language == "ruby" and got.endswith(".new"):
                got = got.removesuffix(".new")
            return "()" + self._labelled(got, node)
        if t in ("struct_expression", "composite_literal"):
            return "()" + type_text(self.text(node.child_by_field_id(self.fids[
                "name" if t == "struct_expression" else "type"])))
        if t in self.spec.names or t in self.spec.members or t == "this":
            got = self.receiver(node)
            return None if got == "?" else "=" + got
        return None


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
        elif t in spec.target_types:  # Kotlin's `val x: T`: `T` is read, not bound
            yield node, None, None, None
        else:
            inner = value if t in spec.wrappers else None  # (`x: T` wraps one name)
            for i, child in enumerate(node.children):
                if not child.is_named:
                    continue
                field = node.field_name_for_child(i)
                if t in spec.not_refs and spec.not_refs[t] in ("", field):
                    continue
                if t == "pair_pattern" and field == "key":
                    continue
                yield from self.targets(child, inner)

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


    def annotation(self, type_node: tree_sitter.Node) -> str:
        """An annotation as `Site.value`: `:T`, `:T[]`, or an object type's fields
        (`{ subs: Subscription }` -> `{subs :Subscription}`)."""
        inner = type_node.named_children[0] if (
            type_node.type == "type_annotation" and type_node.named_child_count) else type_node
        if inner.type == "object_type" and self.language in JS_LIKE:
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



def _choices(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    """The two values of `c ? a : b` / `a if c else b` (comments between them left out)."""
    if node.type == "ternary_expression":
        return [c for f in ("consequence", "alternative")
                if (c := node.child_by_field_name(f)) is not None]
    kids = [c for c in node.named_children if c.type != "comment"]
    return [kids[0], kids[2]] if len(kids) == 3 else []


