"""Facts a walk records beside the identifiers, node type by node type.

What a function returns (`return X()`, `-> T`), narrowing (`isinstance`, `instanceof`,
`assert`), forward references in string annotations, `__all__`, class fields and struct
fields with their types, callbacks' parameter hints, `export default`, `require(...)`
imports, and the bindings of assignments and declarators. Each `Facts` method named in
`indexer.graph.extract`'s `EXTRA` runs on a node of its type before its children are
walked; `binding` and `python_as` fill the walk's `put` table of a node's children.

Invariants: every fact is a `Site` (or an `Import`) at a real place of the file; nothing
here reads a comment or a string except as the code it is (annotations, `__all__`).
"""

from __future__ import annotations

import re

import tree_sitter

from ctxd.indexer.graph.base import JS_LIKE, MAX_RECEIVER, Entry
from ctxd.indexer.graph.cpp import cpp_class_member
from ctxd.indexer.graph.imports import string_value
from ctxd.indexer.graph.model import Import, Role
from ctxd.indexer.graph.typetext import type_text
from ctxd.indexer.graph.values import Values

__all__ = ["Facts"]

_FUNCTIONS = frozenset({"function_definition", "function_declaration", "method_definition",
                        "arrow_function", "function_expression", "function",
                        "generator_function_declaration", "lambda"})
_EXITS = frozenset({"return_statement", "raise_statement", "throw_statement",
                    "continue_statement", "break_statement"})
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*")
_DECLARATIONS = {"java": frozenset({"local_variable_declaration", "field_declaration",
                                     "constant_declaration"}),
                 "cpp": frozenset({"declaration"})}
"""Declarations whose `type` types each of their declarators (`Builder b = ...`,
`util::Box b(1);`; not `var` / `auto`)."""
_DECLARED_TYPES = frozenset({"type_identifier", "scoped_type_identifier", "generic_type",
                             "qualified_identifier", "template_type", "array_type"})
_WRITTEN_RETURNS = frozenset({("java", "method_declaration"), ("cpp", "function_definition")})
"""Definitions whose return type is their `type` field."""
_JAVA_PRIMITIVES = frozenset({"void", "int", "long", "short", "byte", "char", "boolean",
                              "float", "double", "var"})
_REASSIGNS = frozenset({"assignment_expression", "assignment_statement"})
"""JS and Go assignments that bind no new name (`x = 1`, not `let x = 1`, `x := 1`): their
targets' values read `+VALUE`, and the name is the one of an enclosing scope."""
_TYPING_FORMS = frozenset({
    "Union", "Optional", "List", "Dict", "Set", "FrozenSet", "Tuple", "Type", "Sequence",
    "MutableSequence", "Mapping", "MutableMapping", "Iterable", "Iterator", "Collection",
    "ClassVar", "Final", "Deque", "DefaultDict", "OrderedDict", "AbstractSet", "Awaitable",
    "Generator", "AsyncIterator", "AsyncIterable", "list", "dict", "set", "frozenset",
    "tuple", "type"})
"""Generic types whose string arguments are forward references (`Literal` is not one)."""


class Facts(Values):
    """The per-node-type facts of a file's walk."""

    def returns(self, node: tree_sitter.Node) -> None:
        """`return X(...)` / `return self`: what the enclosing function gives back."""
        if node.named_child_count:
            value = self.value(node.named_children[0])
            if value:
                self.add("return", node, Role.BIND, value=value)

    def return_type(self, node: tree_sitter.Node) -> None:
        """`def f() -> Session:` / `f(): Session`: the type the function gives back."""
        ret = node.child_by_field_id(self.fids["return_type"]) or node.child_by_field_id(
            self.fids["result"]) or node.child_by_field_id(self.fids["returns"])  # (C#)
        if ret is not None and ret.type == "parameter_list":  # Go `(c *Context, err error)`
            first = next((c for c in ret.named_children
                          if c.type == "parameter_declaration"), None)
            ret = first.child_by_field_id(self.fids["type"]) if first is not None else None
        if ret is None and (self.language, node.type) in _WRITTEN_RETURNS:
            ret = self.java_return(node)  # `public Builder addMethod(...)`, `Box Box::make()`
        if ret is not None and (name := type_text(self.text(ret))):
            named = node.child_by_field_id(self.fids["declarator"]) or node.child_by_field_id(
                self.fids["name"])  # (`ParseResult\nOptions::parse(..)`: the type is on a
            at = named if named is not None and named.start_point[0] > ret.start_point[0] else (
                ret)  # line before the function's, whose scope holds its name's line on)
            self.add("return", at, Role.BIND, value=":" + name)

    def java_return(self, method: tree_sitter.Node) -> tree_sitter.Node | None:
        """A Java method's (a C++ function's) declared return type (None: `void`, a
        primitive, `auto`, or one of the method's own type parameters, `<T> T get()`)."""
        ret = method.child_by_field_id(self.fids["type"])
        if ret is None or ret.type not in _DECLARED_TYPES or (
                self.text(ret) in _JAVA_PRIMITIVES):
            return None
        params = method.child_by_field_id(self.fids["type_parameters"])
        own = {self.text(p.named_children[0]) for p in (
            params.named_children if params is not None else ()) if p.named_child_count}
        return None if type_text(self.text(ret)).partition(".")[0] in own else ret

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
        written = self.source[node.start_byte : node.end_byte]
        if self.language == "python" and b'"' not in written and b"'" not in written:
            return  # (no string in it: most annotations)
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
        if body is None or cond is None or self.language not in ("python", *JS_LIKE):
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
        tests = self.type_tests(cond)
        if not tests:
            return  # (most: no parents looked up, each a walk from the root)
        scope = node.parent
        while scope is not None and scope.type not in _FUNCTIONS:
            scope = scope.parent
        end = (scope.end_point[0] if scope is not None else len(self.lines)) + 1
        for name, cls in tests:
            self.record(name, line, self.column(node), Role.BIND, None, f"~{end}()" + cls)

    def type_tests(self, cond: tree_sitter.Node) -> list[tuple[str, str]]:
        """(name, class) of each `isinstance(name, Cls)` / `name instanceof Cls` that
        `cond` requires (alone, or within `and` / `&&`)."""
        out: list[tuple[str, str]] = []
        written = self.source[cond.start_byte : cond.end_byte]
        if b"isinstance" not in written and b"instanceof" not in written:
            return out  # (`type_test`'s two forms: neither is written)
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
        `self.NAME` / `recv.NAME` with its type (C++: `indexer.graph.cpp`)."""
        if self.language == "cpp":
            cpp_class_member(self, node)
        if self.language not in ("go", "rust"):
            return
        kind = node.child_by_field_id(self.fids["type"])
        typed = type_text(self.text(kind))
        names = node.children_by_field_id(self.fids["name"])
        if typed:
            for name in names:
                self.add(self.text(name), name, Role.ATTR_BIND, "self", ":" + typed)
        if not names and typed and kind is not None and self.language == "go":
            self.go_embedded(kind, typed)

    def go_embedded(self, kind: tree_sitter.Node, typed: str) -> None:
        """A Go struct's embedded field (`RouterGroup`, `*Other`, `pkg.Remote`): the type
        is a base of the struct (its methods and fields are promoted: `engine.GET(..)` is
        `RouterGroup.GET`), and `x.RouterGroup` is the field, of that type. Its `INHERIT`
        site replaces the type's plain reference (`go_inherited`)."""
        name = kind.child_by_field_id(self.fids["name"]) if kind.type == "qualified_type" else kind
        package = kind.child_by_field_id(self.fids["package"]) if (
            kind.type == "qualified_type") else None
        if name is None or name.type != "type_identifier":
            return
        self.add(self.text(name), name, Role.INHERIT, self.text(package) if package else None)
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
        if self.language not in JS_LIKE:
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
        if self.language not in JS_LIKE or not any(c.type == "default" for c in node.children):
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

    def bind_parts(self, node: tree_sitter.Node) -> tuple[
            list[tree_sitter.Node], tree_sitter.Node | None, tree_sitter.Node | None]:
        """A binding's targets, value and declared type (`spec.bind_types`: C#'s `Job j =
        ...` types the declarator from its declaration), where the spec's fields may be
        paths (`specs_base`; the value None where the path finds the target itself: `#-1`
        of `val x` without a value)."""
        target_f, value_f = self.spec.binds[node.type]
        declared = self.part(node, self.spec.bind_types[node.type]) if (
            node.type in self.spec.bind_types) else None
        if not self.paths:
            return (node.children_by_field_id(self.fids[target_f]),
                    node.child_by_field_id(self.fids[value_f]), declared)
        got = self.part(node, target_f)
        value_node = self.part(node, value_f)
        if value_node is not None and got is not None and value_node.id == got.id:
            value_node = None
        return ([got] if got is not None else []), value_node, declared

    def binding(self, node: tree_sitter.Node, put: dict[int, list[Entry]]) -> None:
        """The targets of an assignment or declarator, each with the value it is given."""
        targets, value_node, declared = self.bind_parts(node)
        if self.language in JS_LIKE and targets:
            self.require(value_node, targets[0])
        type_node = node.child_by_field_id(self.fids["type"]) or declared
        if type_node is None and self.language in _DECLARATIONS and (
                node.parent is not None) and (  # (`parent`: a walk from the root)
                node.parent.type in _DECLARATIONS[self.language]):
            type_node = node.parent.child_by_field_id(self.fids["type"])  # `Builder b = ..`
            if type_node is not None and (self.text(type_node) in ("var", "auto") or (
                    type_node.type not in _DECLARED_TYPES)):
                type_node = None
        typed = self.annotation(type_node) if type_node is not None else None
        if not typed and node.type in ("var_spec", "const_spec") and value_node is not None and (
                value_node.type == "expression_list"):
            self.go_var_list(targets, value_node, put)  # `var x, y = &T{}, U{}`
            return
        if len(targets) == 1 and targets[0].type in ("expression_list", "pattern_list",
                                                     "tuple_pattern", "variable_list"):
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
            got = list(self.targets(_pointee(tgt) if self.language == "cpp" else tgt, summary))
            if node.type in _REASSIGNS:  # `x = ...` where `x` was declared before
                got = [(n, r, rv, "+" + (v or "")) if r == Role.BIND else (n, r, rv, v)
                       for n, r, rv, v in got]
            put[tgt.id] = got
        if self.language == "python" and len(targets) == 1 and self.source[
                targets[0].start_byte : targets[0].end_byte] == b"__all__":
            self.exported(value_node)
        if self.language in JS_LIKE and len(targets) == 1 and value_node is not None:
            self.prototype(targets[0], value_node)

    def go_var_list(self, names: list[tree_sitter.Node], values: tree_sitter.Node,
                    put: dict[int, list[Entry]]) -> None:
        """Go `var x = &T{}` / `var a, b = f(), T{}` (the value is an expression list):
        each name is given its own value; `var c, err = f()` the first result to `c`."""
        given: list[tree_sitter.Node | None] = list(values.named_children)
        if len(given) == 1 and len(names) > 1:
            given += [None] * (len(names) - 1)
        for k, name in enumerate(names):
            value = self.value(given[k]) if len(given) == len(names) else None
            put[name.id] = list(self.targets(name, value))

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




def _pointee(node: tree_sitter.Node) -> tree_sitter.Node:
    """The name a C++ declarator declares through `*` / `&` (`Box* p = ...`: `p`)."""
    d = node
    while d.type in ("pointer_declarator", "reference_declarator") and d.named_child_count:
        d = d.child_by_field_name("declarator") or d.named_children[-1]
    return d if d.type == "identifier" else node


def go_inherited(walk: Facts) -> None:
    """Go: an embedded field's type is an `INHERIT` site (`Facts.go_embedded`), not also a
    plain reference at the same place."""
    bases = {(s.line, s.col, s.name) for s in walk.sites if s.role == Role.INHERIT}
    if bases:
        walk.sites[:] = [s for s in walk.sites if s.role != Role.REF or (
            (s.line, s.col, s.name) not in bases)]
