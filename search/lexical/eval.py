"""Verifying a parsed Zoekt query against one file, as Zoekt evaluates it.

Provides `Plan` (what one query needs across all files: compiled RE2 patterns and
literal finders, the `sym:` hits, repository-name matches, the candidate `Cond` of
each subtree, and reads of file text and definitions) and `FileEval` (one file
against the query tree), with the records they work on: `Row` (a candidate file),
`Doc` (its text, bytes and line starts, loaded lazily) and `SymbolRow` (a
definition). Reads the index through `IndexStore` methods only.

Invariants (Zoekt's semantics):
- A bare term matches path OR content; AND/OR/NOT are per file; an AND evaluates
  cheap file facts before content, an OR evaluates every branch (for its matches).
- `FileEval.collect` gathers the matches of every atom that holds, never of a negated
  one; repository atoms never count as matched atoms.
- Content patterns run over the whole text with `^`/`$` at line boundaries and give
  byte spans; a plain literal takes a `bytes.find` fast path with the same result.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import re2

from ctxd.indexer.errors import QueryError
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.lexical.query import (
    And,
    Branch,
    Const,
    Field,
    Lang,
    Meta,
    Node,
    Not,
    Or,
    Repo,
    RepoFlag,
    RepoSet,
    ResultType,
    Sym,
    Text,
    Type,
)
from ctxd.search.lexical.rank import Span, line_starts
from ctxd.search.lexical.regex_trigrams import fold_ascii, literal_text
from ctxd.search.lexical.sql import (
    Cond,
    c_and,
    c_not,
    c_or,
    fact_cond,
    id_list_cond,
    language_names,
    path_cond,
    render_cond,
    text_cond,
)


@dataclass(frozen=True, slots=True)
class Row:
    """A candidate file: one row of `IndexStore.candidate_files`."""

    id: int
    repo_id: int
    repo: str
    path: str
    language: str
    size: int
    role: str = ""
    """`files.role` (`indexer.walk.textclass.Role`): '' for code and prose."""


@dataclass(slots=True)
class Doc:
    """A candidate file being verified: its text (loaded on demand), bytes and lines."""

    row: Row
    text: str | None = None
    _data: bytes | None = None
    _starts: list[int] | None = None
    path_bytes: bytes = b""

    _clean: bool = False
    """The text has no lone surrogate: `data` is valid UTF-8."""

    @property
    def data(self) -> bytes:
        if self._data is None:
            text = self.text or ""
            try:
                self._data = text.encode("utf-8")
                self._clean = True
            except UnicodeEncodeError:  # lone surrogates: lines are decoded from bytes
                self._data = utf8(text)
        return self._data

    @property
    def clean(self) -> bool:
        """The text has no lone surrogate: `data` is valid UTF-8 (and decodes to `text`)."""
        return bool(self.data) and self._clean

    @property
    def starts(self) -> list[int]:
        """Byte offset of each line's start (see `lexical_rank.line_starts`)."""
        if self._starts is None:
            self._starts = line_starts(self.data)
        return self._starts

    def has_line(self, line: int) -> bool:
        return 1 <= line <= len(self.starts)

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_bytes(self, line: int) -> bytes:
        """The line's bytes without its newline."""
        starts = self.starts
        end = starts[line] - 1 if line < len(starts) else len(self.data)
        return self.data[starts[line - 1] : end]

    def line_text(self, line: int) -> str:
        """The line as text, without its newline or a trailing carriage return."""
        return self.line_bytes(line).decode("utf-8", "replace").rstrip("\r")

    def lines_text(self, first: int, last: int) -> tuple[str, ...]:
        """Lines `first..last` (1-based, inclusive), each as `line_text` gives it: one
        decode for all of them when the bytes are valid UTF-8 (a clean text)."""
        if not (self.data and self._clean):
            return tuple(self.line_text(n) for n in range(first, last + 1))
        starts = self.starts
        end = starts[last] - 1 if last < len(starts) else len(self.data)
        text = self.data[starts[first - 1] : end].decode("utf-8")
        if "\r" not in text:
            return tuple(text.split("\n"))
        return tuple(t.rstrip("\r") for t in text.split("\n"))

    @property
    def line_count(self) -> int:
        """Lines in the file (a final newline does not start another line)."""
        return len(self.starts) - (1 if self.data.endswith(b"\n") else 0)


@dataclass(frozen=True, slots=True)
class SymbolRow:
    """One definition from the `symbols` table (1-based line)."""

    name: str
    kind: str
    line: int


def _cost(node: Node) -> int:
    """Evaluation order inside an AND: cheap file facts first, content last."""
    if isinstance(node, Text):
        return 1 if node.field == Field.PATH else 3
    if isinstance(node, Sym):
        return 2
    if isinstance(node, And | Or):
        return max((_cost(c) for c in node.children), default=0)
    if isinstance(node, Not | Type):
        return _cost(node.child)
    return 0


def _needs_content(node: Node) -> bool:
    """Whether evaluating the tree reads file text (a content or path-or-content term)."""
    if isinstance(node, Text):
        return node.field != Field.PATH
    if isinstance(node, And | Or):
        return any(_needs_content(c) for c in node.children)
    if isinstance(node, Not | Type):
        return _needs_content(node.child)
    return False


def walk_nodes(node: Node) -> Iterable[Node]:
    """Every node of a query tree, parents before children."""
    yield node
    if isinstance(node, And | Or):
        for c in node.children:
            yield from walk_nodes(c)
    elif isinstance(node, Not | Type):
        yield from walk_nodes(node.child)


def compile_regex(pattern: str, case_sensitive: bool, multiline: bool = True) -> Any:
    """An RE2 program over UTF-8 bytes (no captures; `^`/`$` per line when multiline).

    Raises:
        QueryError: the pattern passed parsing but RE2 cannot compile it (size limits).
    """
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.never_capture = True
    options.log_errors = False
    source = ("(?m)" + pattern) if multiline else pattern
    try:
        return re2.compile(source.encode("utf-8", "surrogatepass"), options)
    except re2.error as e:  # validated at parse time; only resource limits remain
        raise QueryError(
            f"Query error: the regular expression `{pattern}` cannot be compiled: {e}",
            hint="Simplify the pattern (fewer or smaller repetitions).",
            details={"pattern": pattern},
        ) from None


Finder = Callable[[bytes], list[tuple[int, int]]]


def make_finder(pattern: str, case_sensitive: bool, rx: Any) -> Finder:
    """A match function for a compiled pattern, with a `bytes.find` fast path for literals.

    For a plain literal the result equals RE2's leftmost non-overlapping matches: when
    case-sensitive always, and when case-insensitive on ASCII text (where RE2's folding
    is exactly ASCII lowercasing); other texts go through RE2.
    """
    lit = literal_text(pattern)
    if lit is None or not (case_sensitive or lit.isascii()):
        return lambda data: [m.span() for m in rx.finditer(data)]
    needle = utf8(lit if case_sensitive else fold_ascii(lit))
    size = len(needle)

    def find_all(data: bytes) -> list[tuple[int, int]]:
        if not case_sensitive:
            if not data.isascii():
                return [m.span() for m in rx.finditer(data)]
            data = data.lower()
        out: list[tuple[int, int]] = []
        i = data.find(needle)
        while i >= 0:
            out.append((i, i + size))
            i = data.find(needle, i + size)
        return out

    return find_all


class Plan:
    """Everything one query needs across files: compiled regexes, symbol hits, repo matches."""

    def __init__(self, store: IndexStore, root: Node) -> None:
        self.store = store
        self.root = root
        self.needs_content = _needs_content(root)
        self._regex: dict[tuple[str, bool], Any] = {}
        self._finders: dict[tuple[str, bool], Finder] = {}
        self._symbols: dict[int, list[SymbolRow]] = {}
        self._repo_memo: dict[tuple[str, str], bool] = {}
        self.sym_hits: dict[int, dict[int, list[SymbolRow]]] = {}
        self.repo_ids: dict[str, int] = store.repo_ids()
        self._order: dict[int, tuple[Node, ...]] = {}
        for node in walk_nodes(root):
            if isinstance(node, Sym):
                self.sym_hits[id(node)] = self._find_symbols(node)
            if isinstance(node, And):
                self._order[id(node)] = tuple(sorted(node.children, key=_cost))

    def regex(self, pattern: str, case_sensitive: bool) -> Any:
        key = (pattern, case_sensitive)
        if key not in self._regex:
            self._regex[key] = compile_regex(pattern, case_sensitive)
        return self._regex[key]

    def finder(self, pattern: str, case_sensitive: bool) -> Finder:
        """All non-overlapping matches of a pattern in bytes, as (start, end) offsets."""
        key = (pattern, case_sensitive)
        if key not in self._finders:
            self._finders[key] = make_finder(
                pattern, case_sensitive, self.regex(pattern, case_sensitive)
            )
        return self._finders[key]

    def repo_matches(self, pattern: str, repo: str) -> bool:
        key = (pattern, repo)
        if key not in self._repo_memo:
            rx = self.regex(pattern, True)
            self._repo_memo[key] = rx.search(repo.encode("utf-8")) is not None
        return self._repo_memo[key]

    def ordered(self, node: And) -> tuple[Node, ...]:
        return self._order.get(id(node), node.children)

    def _find_symbols(self, node: Sym) -> dict[int, list[SymbolRow]]:
        cond = path_cond(node.pattern, node.case_sensitive, column="s.name")
        where, params = render_cond(cond, self.store.dialect)
        rows = self.store.symbols_where(where, params)
        rx = compile_regex(node.pattern, node.case_sensitive, multiline=False)
        out: dict[int, list[SymbolRow]] = {}
        for file_id, name, kind, line in rows:
            if rx.search(str(name).encode("utf-8", "surrogatepass")) is not None:
                out.setdefault(int(file_id), []).append(SymbolRow(name, kind, int(line)))
        return out

    def cond(self, node: Node) -> Cond:
        """The candidate condition for a (sub)tree."""
        if isinstance(node, Not):
            return c_not(self.cond(node.child))
        if isinstance(node, Type):
            return self.cond(node.child)
        if isinstance(node, And):
            return c_and(self.cond(c) for c in node.children)
        if isinstance(node, Or):
            return c_or(self.cond(c) for c in node.children)
        if isinstance(node, Text):
            return text_cond(node)
        if isinstance(node, Sym):
            return id_list_cond("f.id", self.sym_hits[id(node)], selective=True)
        if isinstance(node, Repo):
            ids = [i for name, i in self.repo_ids.items() if self.repo_matches(node.pattern, name)]
            return id_list_cond("f.repo_id", ids, selective=False)
        if isinstance(node, RepoSet):
            ids = [i for name, i in self.repo_ids.items() if name in node.names]
            return id_list_cond("f.repo_id", ids, selective=False)
        return fact_cond(node)

    def load_text(self, doc: Doc) -> None:
        if doc.text is None:
            doc.text = self.store.file_texts([doc.row.id]).get(doc.row.id, "")

    def prefetch_symbols(self, lines: Mapping[int, Iterable[int]]) -> None:
        """Load the definitions on given lines of a batch of files in one statement (for
        scoring, which looks at the matching lines only): `lines` maps file id to line
        numbers; other definitions are filtered out in SQL, never made Python objects."""
        rows = self.store.symbols_on_lines(lines)
        self._symbols = {i: [] for i in lines}
        for file_id, name, kind, line in rows:
            self._symbols[file_id].append(SymbolRow(name, kind, line))

    def symbols_of(self, file_id: int) -> list[SymbolRow]:
        """A file's definitions (from the prefetched batch when there is one)."""
        if file_id in self._symbols:
            return self._symbols[file_id]
        return [SymbolRow(n, k, ln) for n, k, ln in self.store.file_symbols(file_id)]


class FileEval:
    """One file against the query tree: Zoekt's evaluation with remembered results."""

    def __init__(self, plan: Plan, doc: Doc) -> None:
        self.plan = plan
        self.doc = doc
        self.known: dict[int, bool] = {}
        self.spans: dict[int, list[Span]] = {}
        self.atoms: dict[int, int] = {}

    def eval(self, node: Node) -> bool:
        key = id(node)
        if key not in self.known:
            self.known[key] = self._eval(node)
        return self.known[key]

    def _eval(self, node: Node) -> bool:
        doc = self.doc
        if isinstance(node, Text):
            return self._text(node)
        if isinstance(node, Sym):
            return bool(self.plan.sym_hits[id(node)].get(doc.row.id))
        if isinstance(node, Repo):
            return self.plan.repo_matches(node.pattern, doc.row.repo)
        if isinstance(node, RepoSet):
            return doc.row.repo in node.names
        if isinstance(node, Lang):
            return doc.row.language.lower() in language_names(node.name)
        if isinstance(node, Branch | Meta):
            return False
        if isinstance(node, RepoFlag):
            return node.value is False
        if isinstance(node, Const):
            return node.value
        if isinstance(node, Not):
            return not self.eval(node.child)
        if isinstance(node, Type):
            return self.eval(node.child)
        if isinstance(node, And):
            return all(self.eval(c) for c in self.plan.ordered(node))
        results = [self.eval(c) for c in node.children]  # Or: every branch, for its matches
        return any(results)

    def _text(self, node: Text) -> bool:
        doc, found, atoms = self.doc, [], 0
        find_all = self.plan.finder(node.pattern, node.case_sensitive)
        if node.field != Field.PATH:
            self.plan.load_text(doc)
            content = [(False, s, e) for s, e in find_all(doc.data)]
            found.extend(content)
            atoms += bool(content)
        if node.field != Field.CONTENT:
            path = [(True, s, e) for s, e in find_all(doc.path_bytes)]
            found.extend(path)
            atoms += bool(path)
        self.spans[id(node)] = found
        self.atoms[id(node)] = atoms
        return atoms > 0

    def collect(self, node: Node, out: list[Span]) -> int:
        """Add the matches of every atom that holds (not under NOT); return how many atoms."""
        if isinstance(node, And | Or):
            return sum(self.collect(c, out) for c in node.children if self.known.get(id(c)))
        if isinstance(node, Not):
            return 0
        if isinstance(node, Type):
            return 0 if node.kind == ResultType.FILENAME else self.collect(node.child, out)
        if isinstance(node, Text):
            out.extend(self.spans.get(id(node), ()))
            return self.atoms.get(id(node), 0)
        if isinstance(node, Sym):
            out.extend(self._symbol_spans(node))
            return 1
        # Zoekt keeps one shard per repository and simplifies repo atoms away there,
        # so they never count as matched atoms.
        return 0 if isinstance(node, Repo | RepoSet) else 1

    def _symbol_spans(self, node: Sym) -> list[Span]:
        """The part of each matching definition's name that the pattern matched."""
        self.plan.load_text(self.doc)
        rx = self.plan.regex(node.pattern, node.case_sensitive)
        out: list[Span] = []
        for sym in self.plan.sym_hits[id(node)].get(self.doc.row.id, ()):
            if not self.doc.has_line(sym.line):
                continue
            line = self.doc.line_bytes(sym.line)
            base = self.doc.line_start(sym.line)
            name = sym.name.encode("utf-8", "surrogatepass")
            at = line.find(name)
            m = rx.search(name)
            if at >= 0 and m is not None and m.end() > m.start():
                out.append((False, base + at + m.start(), base + at + m.end()))
                continue
            m = rx.search(line)  # the name is not spelled out on its line
            if m is not None and m.end() > m.start():
                out.append((False, base + m.start(), base + m.end()))
            else:
                stripped = line.strip()
                if stripped:
                    lead = line.find(stripped)
                    out.append((False, base + lead, base + lead + len(stripped)))
        return out


def utf8(text: str) -> bytes:
    """Text as UTF-8 bytes (lone surrogates kept, as the index stores them)."""
    return text.encode("utf-8", "surrogatepass")
