"""Definitions in source code, by tree-sitter: functions, classes, methods, structs, ...

`parse_definitions(language, text, budget_s=...)` parses source with the language's
tree-sitter grammar (see `indexer.chunk.languages`) and returns a forest of `Definition`s
with qualified names, containers and 1-based line extents; None when the language has no
grammar or the parse is mostly errors, so the caller falls back to line windows; it raises
`ParseBudgetExceeded` when the parse and the walk over its tree take longer than
`budget_s` (the caller falls back to line windows too, and says so). What a matched
node is called, per language, is `indexer.chunk.extractors`; document headings (Markdown,
RST) come back as the same `Definition` shape from `indexer.chunk.headings`.
`iter_definitions(defs)` flattens a forest.

Long `#` comment runs are blanked before the parse, offsets kept
(`indexer.chunk.comment_runs`: Python's grammar is quadratic in them); a C# file whose
parse has errors is parsed again with its `#else` branches blanked
(`indexer.chunk.conditionals`), and the parse with fewer errors is kept. Parents and previous
siblings come from `indexer.chunk.treenav` (tree-sitter's own accessors cost time in the
number of siblings, quadratic under long comment runs). Pure apart from cached grammars,
queries and per-thread parsers (a tree-sitter `Parser` is not shared between threads) and
the clock the budget reads.

Invariants:
- `start_line <= line <= end_line`; `start_line` includes decorators, attributes and
  the comments directly above a definition (no blank line in between); `line` is the
  line of the definition's name; `end_line` is its last line.
- Children lie inside their parent's extent; siblings are sorted by `start_line`.
- Qualified names join containers with `.` (`Retry.increment`, Go `Server.Start`,
  Rust `Point.new`, C++ `ns.Widget.size`).
- Time is linear in the size of the tree (tree-sitter's parse, two query passes, one
  cursor walk down to the definitions); with a budget, no file takes much longer than it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import tree_sitter

from ctxd.indexer.chunk.comment_runs import attach_runs, blank_long_runs
from ctxd.indexer.chunk.conditionals import PREPROCESSED, first_branches
from ctxd.indexer.chunk.extractors import extractor_for, node_field, python_module_variables
from ctxd.indexer.chunk.grammars import SYNTAX, SyntaxTable, load_grammar
from ctxd.indexer.chunk.treenav import ParseBudgetExceeded, TreeNav

__all__ = [
    "MAX_ERROR_FRACTION",
    "Definition",
    "ParseBudgetExceeded",
    "ParsedSource",
    "iter_definitions",
    "parse_definitions",
    "parse_source",
]

logger = logging.getLogger(__name__)

MAX_ERROR_FRACTION = 0.3
"""A parse whose ERROR nodes cover more than this share of the lines is not trusted."""


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


@dataclass(frozen=True, slots=True)
class ParsedSource:
    """A file's definitions with the tree-sitter tree they came from and the bytes it was
    parsed from (long comment runs blanked, offsets kept): what the code graph reads
    (`indexer.graph.extract`) without parsing again."""

    definitions: list[Definition]
    tree: tree_sitter.Tree
    source: bytes


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


_READ_CHUNK = 1 << 16
"""Bytes handed to tree-sitter per read callback (the form of `parse` that reports progress)."""


class _Clock:
    """The budget of one file: `over()` for tree-sitter's progress callbacks, `check()` in
    our own loops (raises `ParseBudgetExceeded`)."""

    def __init__(self, budget_s: float | None) -> None:
        self.deadline = None if budget_s is None else time.monotonic() + budget_s

    def over(self, *_progress: object) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def check(self) -> None:
        if self.over():
            raise ParseBudgetExceeded


def _parse(
    parser: tree_sitter.Parser, source: bytes, clock: _Clock
) -> tree_sitter.Tree:
    if clock.deadline is None:
        return parser.parse(source)
    try:
        return parser.parse(lambda byte, _point: source[byte : byte + _READ_CHUNK],
                            progress_callback=clock.over)
    except ValueError:  # tree-sitter's "Parsing failed": the callback cancelled it
        parser.reset()  # a cancelled parse would otherwise resume on the next file
        if clock.over():
            raise ParseBudgetExceeded from None
        raise


def _captures(
    query: tree_sitter.Query, root: tree_sitter.Node, name: str, clock: _Clock
) -> list[tree_sitter.Node]:
    """One query pass (linear in the tree; tree-sitter 0.26 does not call a query's
    progress callback, so the clock is read after it)."""
    found = tree_sitter.QueryCursor(query).captures(root).get(name, [])
    clock.check()
    return found


def _error_fraction(
    root: tree_sitter.Node, query: tree_sitter.Query, n_lines: int, clock: _Clock
) -> float:
    nodes = _captures(query, root, "err", clock)
    spans = sorted((n.start_point[0], _end_row(n)) for n in nodes)
    covered = 0
    last = -1
    for start, end in spans:
        start = max(start, last + 1)
        if end >= start:
            covered += end - start + 1
            last = end
    return covered / max(n_lines, 1)


def _attached_start(outer: tree_sitter.Node, attached: frozenset[str], nav: TreeNav) -> int:
    """First row of the comments/attributes directly above `outer` (no blank line between)."""
    start = outer.start_point[0]
    prev = nav.prev_sibling(outer)
    while prev is not None and prev.type in attached:
        if _end_row(prev) < start - 1:
            break
        before = nav.prev_sibling(prev)
        if before is not None and before.type not in attached:
            if _end_row(before) >= prev.start_point[0]:
                break  # a trailing comment of the code before it
        start = prev.start_point[0]
        prev = before
    return start


def _raw(
    name: str,
    kind: str,
    outer: tree_sitter.Node,
    name_node: tree_sitter.Node | None,
    table: SyntaxTable,
    nav: TreeNav,
    scope: str | None = None,
) -> _Raw:
    start_row = _attached_start(outer, table.attached, nav)
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


def _collect(
    language: str, source: bytes, root: tree_sitter.Node, query: tree_sitter.Query,
    clock: _Clock,
) -> list[_Raw]:
    table = SYNTAX[language]
    extract = extractor_for(language)
    nodes = _captures(query, root, "def", clock)
    nav = TreeNav(source, root, nodes, clock.deadline)
    variables = list(python_module_variables(root, nav)) if language == "python" else []
    raws: list[_Raw] = []
    seen: set[tuple[int, int]] = set()
    for i, node in enumerate(nodes):
        if i % 256 == 255:
            clock.check()
        kind = table.defs.get(node.type)
        if kind is None:
            continue
        got = extract(node, kind, table, nav)
        if got is None:
            continue
        name, kind, outer, scope = got
        key = (outer.start_byte, outer.end_byte)
        if key in seen:
            continue
        seen.add(key)
        name_node = node_field(node, "name")
        if name_node is None:
            name_node = node_field(node, "declarator")
        raws.append(_raw(name, kind, outer, name_node, table, nav, scope))
    raws.extend(_raw(name, kind, stmt, None, table, nav) for name, kind, stmt in variables)
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


def parse_definitions(
    language: str, text: str, *, budget_s: float | None = None
) -> list[Definition] | None:
    """Definitions in source code, by tree-sitter (`parse_source`'s definitions)."""
    parsed = parse_source(language, text, budget_s=budget_s)
    return None if parsed is None else parsed.definitions


def parse_source(
    language: str, text: str, *, budget_s: float | None = None
) -> ParsedSource | None:
    """Definitions in source code, by tree-sitter, with the tree they came from.

    Args:
        language: a language id from `indexer.chunk.languages.detect_language`.
        text: the whole file (lines split on `\\n`).
        budget_s: the most time the parse and the walk over its tree may take (None: no
            limit); tree-sitter is cancelled through its progress callbacks, our loops
            look at the clock.

    Returns:
        The top-level definitions (with nested ones as children) and the tree, or None when the
        language has no syntax table or loadable grammar, or when ERROR nodes cover
        more than `MAX_ERROR_FRACTION` of the lines.

    Raises:
        ParseBudgetExceeded: the work took longer than `budget_s`.
    """
    table = SYNTAX.get(language)
    if table is None:
        return None
    grammar = load_grammar(language)
    if grammar is None:
        return None
    defs_query, errors_query = _queries_for(language, grammar, table)
    clock = _Clock(budget_s)
    source, runs = blank_long_runs(language, text.encode("utf-8", "replace"))
    tree = _parse(_parser(language, grammar), source, clock)
    root = tree.root_node
    if root.has_error:
        n_lines = text.count("\n") + 1
        fraction = _error_fraction(root, errors_query, n_lines, clock)
        if language in PREPROCESSED and (other := first_branches(source)) is not source:
            other_tree = _parse(_parser(language, grammar), other, clock)
            other_fraction = _error_fraction(other_tree.root_node, errors_query, n_lines, clock)
            if other_fraction < fraction:
                source, tree, root, fraction = other, other_tree, other_tree.root_node, \
                    other_fraction
        if fraction > MAX_ERROR_FRACTION:
            logger.debug("%s parse mostly errors (%.0f%%): windows", language, fraction * 100)
            return None
    raws = _collect(language, source, root, defs_query, clock)
    attach_runs(raws, runs)
    class_names = frozenset(r.name for r in raws if r.kind in ("class", "struct"))
    return ParsedSource(list(_build(_nest(raws), None, table, class_names, 1)), tree, source)
