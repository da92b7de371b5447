"""Definitions of a file: tree-sitter for code, heading scanners for Markdown and RST.

`parse_definitions(language, text)` parses source with the language's tree-sitter
grammar (see `indexer.languages`) and returns a forest of `Definition`s (functions,
classes, methods, structs, ...) with qualified names, containers and 1-based line
extents; None when the language has no grammar or the parse is mostly errors, so
the caller falls back to line windows. `markdown_sections(lines)` and
`rst_sections(lines)` return the same shape for document headings (kind `section`,
qualified names joined with `" > "`).

Called by `indexer.chunker`. Pure apart from cached grammars, queries and
per-thread parsers (a tree-sitter `Parser` is not shared between threads).

Invariants:
- `start_line <= line <= end_line`; `start_line` includes decorators, attributes and
  the comments directly above a definition (no blank line in between); `line` is the
  line of the definition's name; `end_line` is its last line.
- Children lie inside their parent's extent; siblings are sorted by `start_line`.
- Qualified names join containers with `.` for code (`Retry.increment`, Go
  `Server.Start`, Rust `Point.new`, C++ `ns.Widget.size`) and with `" > "` for
  document sections (`Usage > Retries`).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

import tree_sitter

from indexer.languages import SYNTAX, SyntaxTable, load_grammar

logger = logging.getLogger(__name__)

MAX_ERROR_FRACTION = 0.3
"""A parse whose ERROR nodes cover more than this share of the lines is not trusted."""

SECTION_SEPARATOR = " > "


@dataclass(frozen=True, slots=True)
class Definition:
    """A definition (or document section) with its extent and nested definitions."""

    name: str
    kind: str
    qualname: str
    container: str | None
    start_line: int
    """1-based first line, including decorators and attached comments."""
    line: int
    """1-based line of the name."""
    end_line: int
    """1-based last line (inclusive)."""
    children: tuple[Definition, ...] = ()


def iter_definitions(defs: Sequence[Definition]) -> Iterator[Definition]:
    """All definitions of a forest, parents before children, in file order."""
    for d in defs:
        yield d
        yield from iter_definitions(d.children)


# ---------------------------------------------------------------- tree-sitter


@dataclass(slots=True)
class _Raw:
    """A definition found in the tree, before nesting."""

    name: str
    kind: str
    outer_start: int
    outer_end: int
    start_row: int
    name_row: int
    end_row: int
    scope: str | None = None
    """A container written in the definition itself (Go receiver, C++ `A::f`, Ruby `A::B`)."""
    children: list[_Raw] = field(default_factory=list)


_local = threading.local()
_query_lock = threading.Lock()
_queries: dict[str, tuple[tree_sitter.Query, tree_sitter.Query]] = {}


def _parser(language: str, grammar: tree_sitter.Language) -> tree_sitter.Parser:
    parsers: dict[str, tree_sitter.Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(language)
    if parser is None:
        parser = tree_sitter.Parser(grammar)
        parsers[language] = parser
    return parser


def _queries_for(
    language: str, grammar: tree_sitter.Language, table: SyntaxTable
) -> tuple[tree_sitter.Query, tree_sitter.Query]:
    cached = _queries.get(language)
    if cached is not None:
        return cached
    with _query_lock:
        types = [t for t in table.defs if grammar.id_for_node_kind(t, True)]
        defs = tree_sitter.Query(grammar, " ".join(f"({t}) @def" for t in types))
        errors = tree_sitter.Query(grammar, "(ERROR) @err")
        _queries[language] = (defs, errors)
        return defs, errors


def _end_row(node: tree_sitter.Node) -> int:
    """0-based last row that holds a character of the node (a trailing newline doesn't count)."""
    row, col = node.end_point
    if col == 0 and row > node.start_point[0]:
        return row - 1
    return row


def _text(node: tree_sitter.Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _field(node: tree_sitter.Node, name: str) -> tree_sitter.Node | None:
    return node.child_by_field_name(name)


def _error_fraction(root: tree_sitter.Node, query: tree_sitter.Query, n_lines: int) -> float:
    nodes = tree_sitter.QueryCursor(query).captures(root).get("err", [])
    spans = sorted((n.start_point[0], _end_row(n)) for n in nodes)
    covered = 0
    last = -1
    for start, end in spans:
        start = max(start, last + 1)
        if end >= start:
            covered += end - start + 1
            last = end
    return covered / max(n_lines, 1)


def _outer(node: tree_sitter.Node, wrappers: frozenset[str]) -> tree_sitter.Node:
    outer = node
    while outer.parent is not None and outer.parent.type in wrappers:
        outer = outer.parent
    return outer


def _attached_start(outer: tree_sitter.Node, attached: frozenset[str]) -> int:
    """First row of the comments/attributes directly above `outer` (no blank line between)."""
    start = outer.start_point[0]
    prev = outer.prev_sibling
    while prev is not None and prev.type in attached:
        if _end_row(prev) < start - 1:
            break
        before = prev.prev_sibling
        if before is not None and before.type not in attached:
            if _end_row(before) >= prev.start_point[0]:
                break  # a trailing comment of the code before it
        start = prev.start_point[0]
        prev = before
    return start


_GENERIC_ARGS = re.compile(r"<.*>|\[.*\]", re.DOTALL)


def _type_name(node: tree_sitter.Node | None) -> str:
    """`*Server` -> `Server`, `List[T]` -> `List`, `fmt::Display<T>` -> `fmt.Display`."""
    text = _GENERIC_ARGS.sub("", _text(node))
    text = text.replace("&", "").replace("*", "").replace("mut ", "").strip()
    text = re.sub(r"'\w+\s*", "", text).strip()
    return text.replace("::", ".")


Extracted: TypeAlias = tuple[str, str, tree_sitter.Node, str | None] | None
"""(name, kind, outer node, scope) or None to skip the node."""


def _named(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    name = _text(_field(node, "name"))
    if not name:
        return None
    return name, kind, _outer(node, table.wrappers), None


_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)
_JS_DECLARATIONS = frozenset({"lexical_declaration", "variable_declaration"})


def _is_constant_name(name: str) -> bool:
    letters = name.replace("_", "")
    return (
        len(name) > 1
        and letters.isalnum()
        and letters.upper() == letters
        and any(c.isalpha() for c in letters)
    )


def _at_top_level(decl: tree_sitter.Node | None) -> bool:
    """A JS/TS declaration directly in the program (or in a top-level `export`)."""
    parent = decl.parent if decl is not None else None
    if parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is not None and parent.type == "program"


def _js_declarator(node: tree_sitter.Node, table: SyntaxTable) -> Extracted:
    """`const f = () => ...` (function), `const C = class {}`, top-level `const MAX = 1`."""
    name_node = _field(node, "name")
    if name_node is None or name_node.type != "identifier":
        return None
    value = _field(node, "value")
    name = _text(name_node)
    decl = node.parent
    if value is not None and value.type in _FUNCTION_VALUES:
        kind = "function"
    elif value is not None and value.type == "class":
        kind = "class"
    elif _is_constant_name(name) and _at_top_level(decl):
        kind = "constant"
    else:
        return None
    outer = node
    if decl is not None and decl.type in _JS_DECLARATIONS:
        declarators = [c for c in decl.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            outer = _outer(decl, table.wrappers)
    return name, kind, outer, None


def _js_assignment(node: tree_sitter.Node) -> Extracted:
    """`exports.f = function ...`, `Foo.prototype.bar = () => ...` (CommonJS, prototypes)."""
    left, right = _field(node, "left"), _field(node, "right")
    if left is None or right is None or right.type not in _FUNCTION_VALUES:
        return None
    if left.type != "member_expression":
        return None
    name = _text(_field(left, "property"))
    if not name or name == "exports":
        return None
    obj = _text(_field(left, "object"))
    if obj == "this":
        return None
    scope = None
    if obj.endswith(".prototype"):
        scope = obj.removesuffix(".prototype")
    outer = node.parent if node.parent is not None else node
    if outer.type != "expression_statement":
        outer = node
    return name, ("method" if scope else "function"), outer, scope


def _js(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    t = node.type
    if t == "variable_declarator":
        return _js_declarator(node, table)
    if t == "assignment_expression":
        return _js_assignment(node)
    if t in ("field_definition", "public_field_definition"):
        value = _field(node, "value")
        if value is None or value.type not in _FUNCTION_VALUES:
            return None
        name = _text(_field(node, "property") or _field(node, "name"))
        return (name, "method", node, None) if name else None
    if t == "method_definition":
        name = _text(_field(node, "name"))
        if not name:
            return None
        return name, ("constructor" if name == "constructor" else "method"), node, None
    if t == "module":
        name = _text(_field(node, "name")).strip("'\"")
        return (name, kind, _outer(node, table.wrappers), None) if name else None
    return _named(node, kind, table)


def _go_single_spec_outer(node: tree_sitter.Node) -> tree_sitter.Node:
    decl = node.parent
    if decl is None:
        return node
    if decl.type.endswith("_spec_list"):
        decl = decl.parent
        if decl is None:
            return node
    specs = [c for c in decl.named_children if c.type == node.type]
    return decl if len(specs) == 1 and decl.type.endswith("_declaration") else node


def _go(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    t = node.type
    if t == "method_declaration":
        name = _text(_field(node, "name"))
        receiver = _field(node, "receiver")
        scope = None
        if receiver is not None:
            params = [c for c in receiver.named_children if c.type == "parameter_declaration"]
            if params:
                scope = _type_name(_field(params[0], "type")) or None
        return (name, "method", node, scope) if name else None
    if t in ("type_spec", "type_alias"):
        name = _text(_field(node, "name"))
        type_node = _field(node, "type")
        if type_node is not None and type_node.type == "struct_type":
            kind = "struct"
        elif type_node is not None and type_node.type == "interface_type":
            kind = "interface"
        return (name, kind, _go_single_spec_outer(node), None) if name else None
    if t in ("const_spec", "var_spec"):
        decl = node.parent
        while decl is not None and not decl.type.endswith("_declaration"):
            decl = decl.parent
        if decl is None or decl.parent is None or decl.parent.type != "source_file":
            return None
        name = _text(_field(node, "name"))
        return (name, kind, _go_single_spec_outer(node), None) if name else None
    return _named(node, kind, table)


def _rust(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    t = node.type
    if t == "impl_item":
        name = _type_name(_field(node, "type"))
        return (name, kind, node, None) if name else None
    if t == "mod_item" and _field(node, "body") is None:
        return None
    return _named(node, kind, table)


_C_NAME_TYPES = frozenset(
    {"identifier", "field_identifier", "destructor_name", "operator_name", "type_identifier"}
)


def _c_declarator_name(node: tree_sitter.Node) -> tuple[str, str | None] | None:
    """(name, scope) of a function definition's declarator chain."""
    decl = _field(node, "declarator")
    depth = 0
    while decl is not None and decl.type != "function_declarator" and depth < 8:
        decl = _field(decl, "declarator")
        depth += 1
    if decl is None:
        return None
    target = _field(decl, "declarator")
    scope: list[str] = []
    while target is not None and target.type == "qualified_identifier":
        scope_node = _field(target, "scope")
        if scope_node is not None:
            scope.append(_type_name(scope_node))
        target = _field(target, "name")
    if target is None:
        return None
    if target.type == "template_function":
        target = _field(target, "name")
    name = _text(target)
    if not name or (target is not None and target.type not in _C_NAME_TYPES):
        return None
    return name, (".".join(s for s in scope if s) or None)


_C_SPECIFIERS = frozenset(
    {"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}
)


def _typedef_name(node: tree_sitter.Node) -> str:
    decl = _field(node, "declarator")
    depth = 0
    while decl is not None and decl.type != "type_identifier" and depth < 8:
        decl = _field(decl, "declarator")
        depth += 1
    return _text(decl) if decl is not None else ""


def _c(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    t = node.type
    if t == "function_definition":
        named = _c_declarator_name(node)
        if named is None:
            return None
        name, scope = named
        return name, kind, _outer(node, table.wrappers), scope
    if t in _C_SPECIFIERS:
        if _field(node, "body") is None:
            return None
        name = _text(_field(node, "name"))
        outer = node
        parent = node.parent
        if parent is not None and parent.type == "type_definition":
            outer = parent
            name = _typedef_name(parent) or name
        elif parent is not None and parent.type == "declaration":
            outer = parent
        if not name:
            return None
        return name.replace("::", "."), kind, _outer(outer, table.wrappers), None
    if t == "type_definition":
        type_node = _field(node, "type")
        if type_node is not None and type_node.type in _C_SPECIFIERS:
            if _field(type_node, "body") is not None:
                return None
        name = _typedef_name(node)
        return (name, kind, _outer(node, table.wrappers), None) if name else None
    if t == "namespace_definition":
        name = _text(_field(node, "name")).replace("::", ".")
        return (name, kind, node, None) if name else None
    return _named(node, kind, table)


def _ruby(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    name_node = _field(node, "name")
    if name_node is None:
        return None
    if name_node.type == "scope_resolution":
        full = _text(name_node).replace("::", ".").lstrip(".")
        scope, _, name = full.rpartition(".")
        return name, kind, node, (scope or None)
    name = _text(name_node)
    return (name, kind, node, None) if name else None


def _default(node: tree_sitter.Node, kind: str, table: SyntaxTable) -> Extracted:
    if node.type == "type_alias_statement":  # Python 3.12 `type X[T] = ...`
        name = _GENERIC_ARGS.sub("", _text(_field(node, "left"))).strip()
        return (name, kind, node, None) if name else None
    return _named(node, kind, table)


_EXTRACTORS: dict[str, Callable[[tree_sitter.Node, str, SyntaxTable], Extracted]] = {
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "rust": _rust,
    "c": _c,
    "cpp": _c,
    "ruby": _ruby,
}


def _python_module_variables(root: tree_sitter.Node) -> Iterator[tuple[str, str, tree_sitter.Node]]:
    """Module-level `NAME = ...` / `NAME: T = ...` (dunder names left out)."""
    for child in root.named_children:
        if child.type != "expression_statement" or child.named_child_count != 1:
            continue
        assign = child.named_children[0]
        if assign.type != "assignment":
            continue
        left = _field(assign, "left")
        if left is None or left.type != "identifier":
            continue
        name = _text(left)
        if name.startswith("__") and name.endswith("__"):
            continue
        yield name, ("constant" if _is_constant_name(name) else "variable"), child


def _raw(
    name: str,
    kind: str,
    outer: tree_sitter.Node,
    name_node: tree_sitter.Node | None,
    table: SyntaxTable,
    scope: str | None = None,
) -> _Raw:
    start_row = _attached_start(outer, table.attached)
    name_row = (name_node or outer).start_point[0]
    end_row = max(_end_row(outer), name_row)
    return _Raw(
        name=name,
        kind=kind,
        outer_start=outer.start_byte,
        outer_end=outer.end_byte,
        start_row=min(start_row, name_row),
        name_row=name_row,
        end_row=end_row,
        scope=scope,
    )


def _collect(language: str, root: tree_sitter.Node, query: tree_sitter.Query) -> list[_Raw]:
    table = SYNTAX[language]
    extract = _EXTRACTORS.get(language, _default)
    nodes = tree_sitter.QueryCursor(query).captures(root).get("def", [])
    raws: list[_Raw] = []
    seen: set[tuple[int, int]] = set()
    for node in nodes:
        kind = table.defs.get(node.type)
        if kind is None:
            continue
        got = extract(node, kind, table)
        if got is None:
            continue
        name, kind, outer, scope = got
        key = (outer.start_byte, outer.end_byte)
        if key in seen:
            continue
        seen.add(key)
        name_node = _field(node, "name")
        if name_node is None:
            name_node = _field(node, "declarator")
        raws.append(_raw(name, kind, outer, name_node, table, scope))
    if language == "python":
        for name, kind, stmt in _python_module_variables(root):
            raws.append(_raw(name, kind, stmt, None, table))
    return raws


def _nest(raws: list[_Raw]) -> list[_Raw]:
    """Parent/child by byte containment of the outer nodes."""
    raws.sort(key=lambda r: (r.outer_start, -r.outer_end))
    top: list[_Raw] = []
    stack: list[_Raw] = []
    for raw in raws:
        while stack and stack[-1].outer_end <= raw.outer_start:
            stack.pop()
        if stack and raw.outer_end <= stack[-1].outer_end:
            stack[-1].children.append(raw)
        else:
            top.append(raw)
        stack.append(raw)
    return top


def _build(
    raws: Sequence[_Raw],
    parent: Definition | None,
    table: SyntaxTable,
    class_names: frozenset[str],
    parent_start: int,
) -> tuple[Definition, ...]:
    out: list[Definition] = []
    for raw in raws:
        kind = raw.kind
        container = parent.qualname if parent is not None else None
        if raw.scope:
            container = f"{container}.{raw.scope}" if container else raw.scope
        last_scope = (container or "").rpartition(".")[2]
        if kind == "function":
            if parent is not None and parent.kind in table.method_containers:
                kind = "method"
            elif raw.scope and last_scope in class_names:
                kind = "method"
            if kind == "method" and raw.name == last_scope and class_names:
                kind = "constructor"
        qualname = f"{container}.{raw.name}" if container else raw.name
        # keep attached comments inside the parent's extent
        start = max(raw.start_row + 1, parent_start)
        shell = Definition(raw.name, kind, qualname, container, start, raw.name_row + 1, 0)
        children = _build(raw.children, shell, table, class_names, start)
        out.append(
            Definition(
                name=raw.name,
                kind=kind,
                qualname=qualname,
                container=container,
                start_line=start,
                line=raw.name_row + 1,
                end_line=raw.end_row + 1,
                children=children,
            )
        )
    out.sort(key=lambda d: (d.start_line, -d.end_line))
    return tuple(out)


def parse_definitions(language: str, text: str) -> list[Definition] | None:
    """Definitions in source code, by tree-sitter.

    Args:
        language: a language id from `indexer.languages.detect_language`.
        text: the whole file (lines split on `\\n`).

    Returns:
        The top-level definitions (with nested ones as children), or None when the
        language has no syntax table or loadable grammar, or when ERROR nodes cover
        more than `MAX_ERROR_FRACTION` of the lines.
    """
    table = SYNTAX.get(language)
    if table is None:
        return None
    grammar = load_grammar(language)
    if grammar is None:
        return None
    defs_query, errors_query = _queries_for(language, grammar, table)
    source = text.encode("utf-8", "replace")
    tree = _parser(language, grammar).parse(source)
    root = tree.root_node
    if root.has_error:
        fraction = _error_fraction(root, errors_query, text.count("\n") + 1)
        if fraction > MAX_ERROR_FRACTION:
            logger.debug("%s parse mostly errors (%.0f%%): windows", language, fraction * 100)
            return None
    raws = _collect(language, root, defs_query)
    class_names = frozenset(r.name for r in raws if r.kind in ("class", "struct"))
    return list(_build(_nest(raws), None, table, class_names, 1))


# ---------------------------------------------------------------- documents


@dataclass(frozen=True, slots=True)
class _Heading:
    level: int
    name: str
    start: int
    """0-based first line (the overline or the text line)."""
    line: int
    """0-based line of the heading text."""


def _sections(headings: Sequence[_Heading], lines: Sequence[str]) -> list[Definition]:
    """Nest headings by level into section definitions spanning to the next heading of
    the same or a higher level (trailing blank lines left out)."""

    def last_nonblank(start: int, end: int) -> int:
        while end > start and not lines[end].strip():
            end -= 1
        return end

    n = len(lines)
    ends: list[int] = []
    for i, h in enumerate(headings):
        end = n - 1
        for later in headings[i + 1 :]:
            if later.level <= h.level:
                end = later.start - 1
                break
        ends.append(last_nonblank(h.line, end))

    def build(lo: int, hi: int, parent: Definition | None) -> tuple[Definition, ...]:
        out: list[Definition] = []
        i = lo
        while i < hi:
            h = headings[i]
            j = i + 1
            while j < hi and headings[j].level > h.level:
                j += 1
            container = parent.qualname if parent is not None else None
            qualname = f"{container}{SECTION_SEPARATOR}{h.name}" if container else h.name
            d = Definition(
                name=h.name,
                kind="section",
                qualname=qualname,
                container=container,
                start_line=h.start + 1,
                line=h.line + 1,
                end_line=ends[i] + 1,
            )
            children = build(i + 1, j, d)
            out.append(
                Definition(
                    name=d.name,
                    kind=d.kind,
                    qualname=d.qualname,
                    container=d.container,
                    start_line=d.start_line,
                    line=d.line,
                    end_line=d.end_line,
                    children=children,
                )
            )
            i = j
        return tuple(out)

    return list(build(0, len(headings), None))


_MD_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_MD_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_MD_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_MD_NOT_PARAGRAPH = re.compile(r"^(?: {4,}|\t| {0,3}(?:[-*+>]|\d+[.)])(?:\s|$)| {0,3}<)")
_MD_INLINE = re.compile(r"[*_`]+")


def _md_heading_text(raw: str) -> str:
    return _MD_INLINE.sub("", raw).strip()


def markdown_sections(lines: Sequence[str]) -> list[Definition]:
    """Sections of a Markdown file by ATX (`## Title`) and setext headings.

    Fenced code blocks and a leading YAML front matter block are skipped.
    """
    headings: list[_Heading] = []
    n = len(lines)
    i = 0
    if n and lines[0].strip() == "---":
        for j in range(1, n):
            if lines[j].strip() in ("---", "..."):
                i = j + 1
                break
    fence: str | None = None
    prev_paragraph = False
    while i < n:
        line = lines[i]
        if fence is not None:
            stripped = line.strip()
            if stripped.startswith(fence) and set(stripped) == {fence[0]}:
                fence = None
            i += 1
            prev_paragraph = False
            continue
        fence_match = _MD_FENCE.match(line)
        if fence_match:
            fence = fence_match.group(1)
            i += 1
            prev_paragraph = False
            continue
        atx = _MD_ATX.match(line)
        if atx:
            name = _md_heading_text(atx.group(2) or "")
            if name:
                headings.append(_Heading(len(atx.group(1)), name, i, i))
            prev_paragraph = False
            i += 1
            continue
        setext = _MD_SETEXT.match(line)
        if setext and prev_paragraph and len(setext.group(1)) >= 2:
            name = _md_heading_text(lines[i - 1])
            level = 1 if setext.group(1)[0] == "=" else 2
            if name:
                headings.append(_Heading(level, name, i - 1, i - 1))
            prev_paragraph = False
            i += 1
            continue
        prev_paragraph = bool(line.strip()) and not _MD_NOT_PARAGRAPH.match(line)
        i += 1
    return _sections(headings, lines)


_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")


def rst_sections(lines: Sequence[str]) -> list[Definition]:
    """Sections of a reStructuredText file by underlined (and over+underlined) titles.

    Levels follow the order in which adornment styles first appear, as in docutils.
    A title needs a blank line (or another title) above it and an adornment at least
    as long as the title (or at least 4 characters).
    """
    styles: list[tuple[str, bool]] = []
    headings: list[_Heading] = []
    n = len(lines)
    i = 0
    after_title = True  # start of file counts as "blank above"

    def level_of(style: tuple[str, bool]) -> int:
        if style not in styles:
            styles.append(style)
        return styles.index(style) + 1

    while i < n:
        line = lines[i]
        adorn = _RST_ADORNMENT.match(line)
        blank_above = i == 0 or not lines[i - 1].strip() or after_title
        if adorn and i + 2 < n and blank_above:
            title = lines[i + 1].strip()
            under = _RST_ADORNMENT.match(lines[i + 2])
            if (
                title
                and not _RST_ADORNMENT.match(lines[i + 1])
                and under
                and under.group(1) == adorn.group(1)
                and len(lines[i + 2].rstrip()) == len(line.rstrip())
            ):
                level = level_of((adorn.group(1), True))
                headings.append(_Heading(level, title, i, i + 1))
                i += 3
                after_title = True
                continue
        if (
            i + 1 < n
            and blank_above
            and line.strip()
            and not line[0].isspace()
            and not adorn
            and not line.startswith(".. ")
        ):
            under = _RST_ADORNMENT.match(lines[i + 1])
            title = line.rstrip()
            if under:
                length = len(lines[i + 1].rstrip())
                if length >= len(title) or length >= 4:
                    level = level_of((under.group(1), False))
                    headings.append(_Heading(level, title.strip(), i, i))
                    i += 2
                    after_title = True
                    continue
        after_title = False
        i += 1
    return _sections(headings, lines)
