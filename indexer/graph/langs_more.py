"""What the graph walk does for C#, PHP, Kotlin, Swift, Scala, Lua and Elixir beyond their
node tables (`indexer.graph.specs_more`).

- `node_at(node, path, fids)`: the child a spec's field path names (`#0`, `@a|b`,
  `f@a|b`, `f#-1`, `^`, steps joined by `.`; see `indexer.graph.specs_base`).
- `package(walk, node)`: a C# or PHP namespace block (`namespace A.B { ... }`, `namespace
  A\\B;`) as the file's package record (Kotlin's and Scala's `package` lines are import
  statements: `indexer.graph.imports_more`).
- `elixir_call(walk, node, put)`: an Elixir `def name(a, b)` / `defp` / `defmacro` head
  names the definition (not a call) and binds its parameters; `alias`/`if`/`case`/...
  name nothing. `swift_extension`: `extension T {}` refers to `T`.
- `finish(walk)`: in Elixir a bare name that is not called is a variable (a function
  without parentheses is called only through a pipe or a capture), so such sites are
  dropped rather than read as references to a function of that name.

Pure: reads the tree and the source; writes the walk's imports and sites only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import tree_sitter

from ctxd.indexer.graph.imports_more import package_of
from ctxd.indexer.graph.model import Import, Role, Site
from ctxd.indexer.graph.specs_base import GraphSpec
from ctxd.indexer.graph.typetext import type_text

__all__ = [
    "FINISH",
    "PACKAGES",
    "RULES",
    "call_labels",
    "is_path",
    "named_receiver",
    "node_at",
    "package",
    "spec_paths",
]

Entry = tuple[tree_sitter.Node, Role | None, str | None, str | None]


class Walk(Protocol):
    """What these rules read of the walk (`indexer.graph.extract`)."""

    language: str
    imports: list[Import]
    sites: list[Site]

    def text(self, node: tree_sitter.Node | None) -> str: ...

    def add(self, name: str, node: tree_sitter.Node, role: Role, recv: str | None = None,
            value: str | None = None, offset: int = 0) -> None: ...


def is_path(field: str) -> bool:
    """Whether a spec's field is a path rather than one grammar field."""
    return any(c in field for c in "#@^.")


_PATHS: dict[int, frozenset[str]] = {}


def spec_paths(spec: GraphSpec) -> frozenset[str]:
    """The fields of a spec that are paths, not grammar fields (memoised per spec)."""
    got = _PATHS.get(id(spec))
    if got is None:
        fields = [*spec.calls.values(), *(f for pair in spec.members.values() for f in pair),
                  *spec.def_names.values(), *(f for pair in spec.param_nodes.values()
                                              for f in pair),
                  *(f for pair in spec.binds.values() for f in pair), *spec.bind_types.values(),
                  *spec.bind_targets.values(), *spec.bases.values(), *spec.not_refs.values()]
        got = _PATHS[id(spec)] = frozenset(f for f in fields if is_path(f))
    return got


_KEYWORDS = frozenset({"this", "self", "super", "crate", "base", "cls"})


def named_receiver(spec: GraphSpec, node: tree_sitter.Node,
                   text: Callable[[tree_sitter.Node | None], str]) -> str | None:
    """A receiver node as `spec.receivers` renames it (its type, or its text: PHP `$this`
    is `this`, C#'s `base` and Kotlin's `super_expression` are `super()`, the class's
    base); None: not one it renames."""
    t = node.type
    mapped = spec.receivers.get(t)
    if mapped is not None and mapped != "=":
        return mapped
    if mapped == "=" or t in spec.names or t in _KEYWORDS:
        raw = text(node)
        return spec.receivers.get(raw, raw if mapped == "=" else None)
    return None


def _step(node: tree_sitter.Node, step: str, fids: Mapping[str, int]) -> tree_sitter.Node | None:
    if step == "^":
        return node.parent
    field, at, types = step.partition("@")
    field, hash_, place = field.partition("#")
    if field:
        kids = node.children_by_field_id(fids[field])
        kids = [c for c in kids if c.is_named] if hash_ or at else kids
    else:
        kids = node.named_children
    if at:
        wanted = types.split("|")
        kids = [c for c in kids if c.type in wanted]
    if not kids:
        return None
    if hash_:
        k = int(place)
        return kids[k] if -len(kids) <= k < len(kids) else None
    return kids[0]


def node_at(node: tree_sitter.Node | None, path: str,
            fids: Mapping[str, int]) -> tree_sitter.Node | None:
    """The node a field path names from `node` (None: none there)."""
    for step in path.split("."):
        if node is None:
            return None
        node = _step(node, step, fids)
    return node


def package(walk: Walk, node: tree_sitter.Node) -> None:
    """A C# namespace or PHP namespace: the file's package record (its first)."""
    if walk.language not in ("csharp", "php"):
        return
    got = package_of(node, walk.text)
    if got is not None and not any(i.level == got.level for i in walk.imports):
        walk.imports.append(got)


PACKAGES: dict[str, Callable[[Walk, tree_sitter.Node], None]] = {
    "namespace_declaration": package, "file_scoped_namespace_declaration": package,
    "namespace_definition": package,
}
"""Node type -> the package rule (beside the node's children, which stay code)."""

_EX_DEFS = frozenset({"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp",
                      "defdelegate", "defn", "defnp"})
_EX_FORMS = frozenset({"defmodule", "defprotocol", "defimpl", "defstruct", "defexception",
                       "defoverridable", "if", "unless", "case", "cond", "with", "for",
                       "receive", "try", "quote", "unquote", "fn", "raise", "reraise",
                       "throw", "import", "alias", "require", "use", "describe", "test",
                       "setup", "doctest", "assert", "refute", "not", "and", "or", "in",
                       "when", "is_nil"})
"""Call targets that are language forms (or the test DSL), not functions of the project."""


def _params(walk: Walk, node: tree_sitter.Node, out: list[Entry]) -> None:
    """The identifiers of a head's argument patterns, as parameters (`%{a: b}`, `[h | t]`,
    `x \\\\ 1`: the default is code)."""
    stack = [node]
    while stack:
        c = stack.pop()
        if c.type == "identifier":
            out.append((c, Role.PARAM, None, None))
        elif c.type == "binary_operator" and walk.text(c.child_by_field_name("operator")) == (
                "\\\\"):
            left, right = c.child_by_field_name("left"), c.child_by_field_name("right")
            if left is not None:
                stack.append(left)
            if right is not None:
                out.append((right, None, None, None))
        elif c.type not in ("string", "charlist", "sigil", "comment"):
            stack.extend(reversed(c.named_children))


def elixir_call(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`def name(a, b) when guard` heads and language forms (see the module docstring)."""
    if walk.language != "elixir":
        return
    target = node.child_by_field_name("target")
    if target is None or target.type != "identifier":
        return
    verb = walk.text(target)
    if verb in _EX_FORMS or verb in _EX_DEFS:
        put[target.id] = []
    if verb not in _EX_DEFS:
        return
    args = next((c for c in node.named_children if c.type == "arguments"), None)
    if args is None or not args.named_child_count:
        return
    head = args.named_children[0]
    entries: list[Entry] = []
    call = head
    if head.type == "binary_operator" and walk.text(
            head.child_by_field_name("operator")) == "when":
        call = head.child_by_field_name("left") or head
        guard = head.child_by_field_name("right")
        if guard is not None:
            entries.append((guard, None, None, None))
    if call.type == "call":
        for c in call.named_children:
            if c.type == "arguments":
                _params(walk, c, entries)
    elif call.type != "identifier":  # `def a + b`: an operator's operands
        _params(walk, call, entries)
    put[args.id] = [*entries, *((c, None, None, None) for c in args.named_children[1:])]


_EX_SPECS = frozenset({"spec", "callback", "macrocallback", "type", "typep", "opaque",
                       "doc", "moduledoc", "typedoc", "impl", "deprecated", "behaviour"})
"""Module attributes whose value is a typespec or documentation, not code that runs."""


def elixir_attribute(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`@doc "..."`, `@spec f(t) :: t`, `@attr`: a module attribute, not a call of a
    function named like it (its value is code)."""
    operand = node.child_by_field_name("operand")
    if walk.language != "elixir" or operand is None or walk.text(
            node.child_by_field_name("operator")) != "@":
        return
    if operand.type == "identifier" or walk.text(
            operand.child_by_field_name("target")) in _EX_SPECS:
        put[operand.id] = []  # (`@spec f(t) :: t` names types, `@doc` documents)
    elif operand.type == "call":
        target = operand.child_by_field_name("target")
        put[operand.id] = [(c, None, None, None) for c in operand.named_children
                           if target is None or c.id != target.id]


def elixir_pipe(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`conn |> halt`: a function piped into without parentheses is called."""
    right = node.child_by_field_name("right")
    if walk.language == "elixir" and right is not None and right.type == "identifier" and (
            walk.text(node.child_by_field_name("operator")) == "|>"):
        put[right.id] = [(right, Role.CALL, None, None)]


_ANON_BODIES = frozenset({"template_body", "class_body"})
_ANON_TYPES = frozenset({"type_identifier", "stable_type_identifier", "generic_type",
                         "user_type", "compound_type", "constructor_invocation",
                         "delegation_specifiers", "delegation_specifier"})


def _base_names(walk: Walk, node: tree_sitter.Node) -> list[str]:
    """The class names an anonymous class's header names (`A[T] with B`, `Foo(1), Bar`)."""
    t = node.type
    if t in ("type_identifier", "identifier"):
        return [walk.text(node)]
    if t == "stable_type_identifier":  # `scopt.OptionParser`: in full
        return ["".join(walk.text(node).split())]
    if t in ("generic_type", "user_type", "constructor_invocation"):  # the type, not its args
        first = node.named_children[0] if node.named_child_count else None
        return _base_names(walk, first) if first is not None else []
    return [n for c in node.named_children if c.type in _ANON_TYPES or c.type == "identifier"
            for n in _base_names(walk, c)]


def anonymous_this(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`new scopt.OptionParser[C]("x") { checkConfig(..) }` (Scala), `object : Foo(), Bar
    { ... }` (Kotlin): a class without a name, whose body's bare names are its bases'
    members; recorded as `this` parameters of the enclosing scope, one per base, valued
    `~END()Base` (END: the body's last line). Scala's `new A with B { .. }` calls `A`."""
    made = node.named_children[0] if node.named_child_count else None
    if walk.language == "scala" and made is not None and made.type == "compound_type" and (
            made.named_child_count):  # `new A with B { .. }` calls A's constructor
        first, *rest = made.named_children
        called = first.named_children[0] if first.type == "generic_type" and (
            first.named_child_count) else first
        put[made.id] = [(called, Role.CALL, None, None),
                        *((c, None, None, None) for c in first.named_children[1:]
                          if called is not first), *((c, None, None, None) for c in rest)]
    body = next((c for c in node.named_children if c.type in _ANON_BODIES), None)
    if body is None or walk.language not in ("scala", "kotlin"):
        return
    end = body.end_point[0] + 1
    for c in node.named_children:
        if c.type in _ANON_TYPES:
            for name in _base_names(walk, c):
                walk.add("this", body, Role.PARAM, value=f"~{end}(){name}")


def type_parameter(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`<T : Base<T>>` (Kotlin), `<T: Runner>` (Swift): `T` is bound to its bound's class
    (`=Base`), so that a parameter `x: T` is a `Base`."""
    kids = node.named_children
    if len(kids) < 2 or walk.language not in ("kotlin", "swift"):
        return
    name, bound = kids[0], kids[-1]
    typed = type_text(walk.text(bound))
    if name.type in ("identifier", "type_identifier") and typed and "[" not in typed:
        put[name.id] = [(name, Role.BIND, None, "=" + typed)]


_RETURN_TYPES = frozenset({"user_type", "optional_type", "nullable_type", "array_type",
                           "dictionary_type"})
_OWNERS = frozenset({"class_declaration", "protocol_declaration", "object_declaration"})


def declared_return(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """A Kotlin function's declared return type (`: Base?`) as its `return` value
    (`:Base`), a Swift protocol requirement's (`-> Request?`); a Swift `-> Self` is the
    enclosing type (`request.validate().response()` chains)."""
    if walk.language == "swift":
        kids = [c for i, c in enumerate(node.children) if c.type in _RETURN_TYPES
                and node.field_name_for_child(i) == "name"]
    elif walk.language == "kotlin":
        after = False
        kids = []
        for c in node.named_children:
            after = after or c.type == "function_value_parameters"
            if after and c.type in _RETURN_TYPES:
                kids.append(c)
    else:
        return
    typed = type_text(walk.text(kids[-1])) if kids else ""
    if walk.language == "swift" and typed != "Self" and node.type == "function_declaration":
        return  # (its `return_type` field: `Facts.return_type` reads it)
    if typed == "Self":
        owner = node.parent
        while owner is not None and owner.type not in _OWNERS:
            owner = owner.parent
        typed = type_text(walk.text(owner.child_by_field_name("name"))) if (
            owner is not None) else ""
    if typed and "[" not in typed:
        walk.add("return", kids[-1], Role.BIND, value=":" + typed)


def swift_extension(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`extension Session { ... }` names the type it extends (a reference, as Swift's
    language server counts it), not a definition of its own."""
    name = node.child_by_field_name("name")
    if walk.text(node.child_by_field_name("declaration_kind")) == "extension" and (
            name is not None):
        put[name.id] = [(name, None, None, None)]


LABELS = "(labels)"
"""The name of the bind site a Swift function's argument labels are the value of."""
_TRAILING = frozenset({"lambda_literal", "annotated_lambda"})


def swift_labels(walk: Walk, node: tree_sitter.Node) -> str | None:
    """A Swift function's argument labels as written in its calls, each parameter's
    external name (`_`: none) with `=` when it has a default and `...` when variadic:
    `(queue=,closure)` for `uploadProgress(queue: Q = .main, closure: H)`."""
    out: list[str] = []
    for i, c in enumerate(node.children):
        if c.type == "parameter":
            ext = c.child_by_field_name("external_name")
            own = ext if ext is not None else next((
                n for n in c.children_by_field_name("name") if n.type == "simple_identifier"),
                None)
            if own is None:
                return None
            out.append(walk.text(own) + ("..." if walk.text(c).endswith("...") else ""))
        elif out and node.field_name_for_child(i) == "default_value":
            out[-1] += "="
    return "(" + ",".join(out) + ")"


def swift_function(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """A Swift function: its argument labels (a `LABELS` bind site at its name, so that
    a call names one of its type's overloads by them), and its declared return type."""
    name = next((c for c in node.children_by_field_name("name")
                 if c.type == "simple_identifier"), None)
    labels = swift_labels(walk, node)
    if name is not None and labels is not None:
        walk.add(LABELS, name, Role.BIND, value=labels)
    declared_return(walk, node, put)


def kotlin_function(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """A Kotlin function: an extension's receiver type (`fun <U : Base> U.context()`,
    `fun Cmd.test()`) as its `this` parameter (`:U`), and its declared return type."""
    for i, c in enumerate(node.children):
        if node.field_name_for_child(i) == "name":
            break
        if c.type in ("user_type", "nullable_type") and (typed := type_text(walk.text(c))) and (
                "[" not in typed):
            walk.add("this", c, Role.PARAM, value=":" + typed)
            break
    declared_return(walk, node, put)


def kotlin_argument(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`f(help = "x")`: a named argument's name is the parameter's, no code of the file."""
    kids = node.children
    if len(kids) >= 3 and kids[0].type == "identifier" and kids[1].type == "=":
        put[kids[0].id] = []


def kotlin_reference(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """`::listOf`: a function named without a call (valued `::`; a bare name not called
    is never a function in Kotlin otherwise)."""
    kids = node.named_children
    if kids and kids[-1].type == "identifier":
        put[kids[-1].id] = [(kids[-1], Role.REF, None, "::")]


def call_labels(text: Callable[[tree_sitter.Node | None], str], node: tree_sitter.Node) -> str:
    """A Swift call's argument labels, comma-separated (`queue,{`; see `swift_call`)."""
    suffix = next((c for c in node.named_children if c.type == "call_suffix"), None)
    labels: list[str] = []
    label = ""
    for c in suffix.named_children if suffix is not None else ():
        if c.type == "value_arguments":
            for a in c.named_children:
                if a.type == "value_argument":
                    named = a.child_by_field_name("name")
                    labels.append(text(named).strip() if named is not None else "_")
        elif c.type == "simple_identifier":
            label = text(c)
        elif c.type in _TRAILING:
            labels.append(label or "{")
            label = ""
    return ",".join(labels)


def swift_call(walk: Walk, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
    """A Swift call's argument labels, as its call site's value: `(queue,{)` for
    `f(queue: q) { .. }` (`_`: an unlabelled argument, `{`: an unlabelled trailing
    closure); a labelled trailing closure's label (`} label: {`) names nothing."""
    suffix = next((c for c in node.named_children if c.type == "call_suffix"), None)
    if suffix is None:
        return
    put[suffix.id] = [(c, None, None, None) for c in suffix.named_children
                      if c.type != "simple_identifier"]
    text = "(" + call_labels(walk.text, node) + ")"
    for entries in put.values():
        for k, (n, role, recv, _) in enumerate(entries):
            if role == Role.CALL:
                entries[k] = (n, role, recv, text)


RULES: dict[str, dict[str, Callable[[Walk, tree_sitter.Node, dict[int, list[Entry]]], None]]] = {
    "elixir": {"call": elixir_call, "unary_operator": elixir_attribute,
               "binary_operator": elixir_pipe},
    "swift": {"class_declaration": swift_extension, "type_parameter": type_parameter,
              "function_declaration": swift_function,
              "protocol_function_declaration": swift_function, "call_expression": swift_call},
    "scala": {"instance_expression": anonymous_this},
    "kotlin": {"object_literal": anonymous_this, "type_parameter": type_parameter,
               "function_declaration": kotlin_function, "callable_reference": kotlin_reference,
               "value_argument": kotlin_argument},
}
"""Language -> node type -> a rule that says what the node's children are (`put`, as the
walk's own rules)."""


def _elixir_finish(walk: Walk) -> None:
    walk.sites[:] = [s for s in walk.sites if not (
        s.role == Role.REF and s.receiver is None and s.name[:1].islower())]


FINISH: dict[str, Callable[[Walk], None]] = {"elixir": _elixir_finish}
"""Language -> what is done with the walk's sites once it ends."""
