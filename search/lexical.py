"""The embedded lexical engine: Zoekt's query language over the index's trigram table.

`EmbeddedLexical(store).search(query)` answers a Zoekt query (see `search/query.py`)
from the SQLite index alone, with Zoekt's semantics, so that results agree with a
real Zoekt server on the same files (tests/search/test_zoekt_agreement.py checks
this against recorded Zoekt answers). It implements `search.models.LexicalBackend`
and is used by the service layer when no Zoekt server is configured;
`search_files` backs file-name search and `explain` backs `ctxd search --explain`.

How a query runs:

1. Plan: every atom becomes a SQL condition on `files` (built by pure functions,
   user text always bound or quoted): content regexes become an FTS5 trigram
   `MATCH` over the literals every match must contain (`search/regex_trigrams.py`),
   path regexes `instr()` tests on `files.path`, `repo:` / `lang:` / `sym:` exact
   id or name sets. Conditions that cannot narrow (`foo.*` has no 3-character
   literal, a negated regex) become TRUE; a condition marked exact may be negated.
2. Candidates: one `SELECT` over `files` with that condition. When the query needs
   file content but nothing narrows it (no usable trigram), the engine scans
   instead, reading at most `scan_limit_bytes` of text: `partial=True` and a note.
3. Verify: the query tree is evaluated on each candidate as Zoekt does (a bare term
   matches path OR content; AND/OR/NOT per file; every atom that holds contributes
   its matches, negated ones none), with RE2 over the whole text (`^`/`$` at line
   boundaries), giving exact byte spans.
4. Rank: Zoekt's default scoring, simplified: the best line's score (whole word +500,
   word edge +50; a match on a symbol definition +7000 exact, +5500 at an edge,
   +4000 inside, plus a kind bonus; file base-name matches alike) plus up to +400
   when several atoms matched. Ties: repository, then path.
5. Shape: the top files are re-read and turned into `FileMatch` records: one
   `LineMatch` per matching line (sorted by line; 1-based character columns, end
   exclusive, split at newlines, empty matches dropped) and context `Block`s
   (windows of `context_lines`, merged when they overlap or touch).

Zoekt conventions kept on purpose: a file that matched only by its path, or was
selected without any match position (`r:`, `lang:`, `type:filename`), comes back
with no `LineMatch` (Zoekt's `FileName` pseudo-match, which the Zoekt client drops
too); so does a file whose only matches were empty (`x*`). `match_count` counts
matching lines, plus one per such path-only file (Zoekt's `MatchCount` in line
mode). `type:repo` returns one `FileMatch` per repository, with an empty path.

Reads the index through `Store.query` only; writes nothing. The SQL conditions
live in `search/lexical_sql.py`, scoring and line shaping in `search/lexical_rank.py`.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import re2

from indexer.errors import QueryError, ValidationError
from indexer.store import Store
from search.lexical_rank import (
    Section,
    Span,
    atom_bonus,
    columns,
    content_fragment_score,
    dedupe_spans,
    line_starts,
    merge_windows,
    path_fragment_score,
    split_on_newlines,
)
from search.lexical_sql import (
    CANDIDATES_SQL,
    Cond,
    CondOp,
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
from search.models import Block, FileMatch, LexicalResult, LineMatch
from search.query import (
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
    format_node,
    parse,
    simplify,
)
from search.regex_trigrams import (
    AllOf,
    AnyOf,
    Lit,
    LitQuery,
    check_pattern,
    describe,
    fold_ascii,
    has_uppercase,
    literal_text,
    quote_meta,
    required_literals,
    to_fts_match,
    trigrams,
)

CONTENT_BATCH = 64
"""Candidate files whose text is read per SQL statement."""


# -- evaluation ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Row:
    id: int
    repo_id: int
    repo: str
    path: str
    language: str
    size: int


@dataclass(slots=True)
class _Doc:
    row: _Row
    text: str | None = None
    _data: bytes | None = None
    _starts: list[int] | None = None
    path_bytes: bytes = b""

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = _utf8(self.text or "")
        return self._data

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

    @property
    def line_count(self) -> int:
        """Lines in the file (a final newline does not start another line)."""
        return len(self.starts) - (1 if self.data.endswith(b"\n") else 0)


@dataclass(frozen=True, slots=True)
class _SymbolRow:
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
    if isinstance(node, Text):
        return node.field != Field.PATH
    if isinstance(node, And | Or):
        return any(_needs_content(c) for c in node.children)
    if isinstance(node, Not | Type):
        return _needs_content(node.child)
    return False


def _walk(node: Node) -> Iterable[Node]:
    yield node
    if isinstance(node, And | Or):
        for c in node.children:
            yield from _walk(c)
    elif isinstance(node, Not | Type):
        yield from _walk(node.child)


def _compile(pattern: str, case_sensitive: bool, multiline: bool = True) -> Any:
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
    needle = _utf8(lit if case_sensitive else fold_ascii(lit))
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


class _Plan:
    """Everything one query needs across files: compiled regexes, symbol hits, repo matches."""

    def __init__(self, store: Store, root: Node) -> None:
        self.store = store
        self.root = root
        self.needs_content = _needs_content(root)
        self._regex: dict[tuple[str, bool], Any] = {}
        self._finders: dict[tuple[str, bool], Finder] = {}
        self._symbols: dict[int, list[_SymbolRow]] = {}
        self._repo_memo: dict[tuple[str, str], bool] = {}
        self.sym_hits: dict[int, dict[int, list[_SymbolRow]]] = {}
        self.repo_ids: dict[str, int] = {
            str(name): int(rid) for rid, name in store.query("SELECT id, name FROM repos")
        }
        self._order: dict[int, tuple[Node, ...]] = {}
        for node in _walk(root):
            if isinstance(node, Sym):
                self.sym_hits[id(node)] = self._find_symbols(node)
            if isinstance(node, And):
                self._order[id(node)] = tuple(sorted(node.children, key=_cost))

    def regex(self, pattern: str, case_sensitive: bool) -> Any:
        key = (pattern, case_sensitive)
        if key not in self._regex:
            self._regex[key] = _compile(pattern, case_sensitive)
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

    def _find_symbols(self, node: Sym) -> dict[int, list[_SymbolRow]]:
        cond = path_cond(node.pattern, node.case_sensitive, column="s.name")
        where, params = render_cond(cond)
        rows = self.store.query(
            f"SELECT s.file_id, s.name, s.kind, s.line FROM symbols s WHERE {where}", params
        )
        rx = _compile(node.pattern, node.case_sensitive, multiline=False)
        out: dict[int, list[_SymbolRow]] = {}
        for file_id, name, kind, line in rows:
            if rx.search(str(name).encode("utf-8", "surrogatepass")) is not None:
                out.setdefault(int(file_id), []).append(_SymbolRow(name, kind, int(line)))
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

    def load_text(self, doc: _Doc) -> None:
        if doc.text is None:
            rows = self.store.query("SELECT content FROM file_text WHERE rowid = ?", (doc.row.id,))
            doc.text = str(rows[0][0]) if rows else ""

    def prefetch_symbols(self, file_ids: Sequence[int]) -> None:
        """Load the definitions of a batch of candidates in one statement (for scoring)."""
        marks = ", ".join("?" for _ in file_ids)
        rows = self.store.query(
            f"SELECT file_id, name, kind, line FROM symbols WHERE file_id IN ({marks})",
            list(file_ids),
        )
        self._symbols = {i: [] for i in file_ids}
        for file_id, name, kind, line in rows:
            self._symbols[int(file_id)].append(_SymbolRow(str(name), str(kind), int(line)))

    def symbols_of(self, file_id: int) -> list[_SymbolRow]:
        """A file's definitions (from the prefetched batch when there is one)."""
        if file_id in self._symbols:
            return self._symbols[file_id]
        rows = self.store.query(
            "SELECT name, kind, line FROM symbols WHERE file_id = ?", (file_id,)
        )
        return [_SymbolRow(str(n), str(k), int(ln)) for n, k, ln in rows]


class _Eval:
    """One file against the query tree: Zoekt's evaluation with remembered results."""

    def __init__(self, plan: _Plan, doc: _Doc) -> None:
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


@dataclass(slots=True)
class _Hit:
    row: _Row
    score: float
    lines: int


@dataclass(slots=True)
class _Shaped:
    """A file's matches in byte terms, before text is attached."""

    content: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    path: list[tuple[int, int]] | None = None
    whole_path: bool = False


def shape(spans: Sequence[Span], doc: _Doc) -> _Shaped:
    """Zoekt's rule: content matches if any, else path matches, else the whole path."""
    kept = dedupe_spans(spans)
    content = [(s, e) for is_path, s, e in kept if not is_path]
    if content:
        return _Shaped(content=split_on_newlines(content, doc.starts, len(doc.data)))
    path = [(s, e) for is_path, s, e in kept if is_path]
    if path:
        return _Shaped(path=[(s, e) for s, e in path if e > s])
    return _Shaped(whole_path=True)


def _sections(
    doc: _Doc, symbols: Sequence[_SymbolRow], lines: Iterable[int]
) -> dict[int, list[Section]]:
    """Definition names on the given lines, as byte ranges (first spelling on the line)."""
    out: dict[int, list[Section]] = {}
    wanted = set(lines)
    for sym in symbols:
        if sym.line not in wanted or not doc.has_line(sym.line):
            continue
        line = doc.line_bytes(sym.line)
        name = sym.name.encode("utf-8", "surrogatepass")
        at = line.find(name) if name else -1
        if at >= 0:
            start = doc.line_start(sym.line) + at
            out.setdefault(sym.line, []).append(
                Section(start, start + len(name), sym.kind, sym.name)
            )
    return out


def score_file(
    shaped: _Shaped, doc: _Doc, atoms: int, symbols: Sequence[_SymbolRow] | None
) -> float:
    """Zoekt's default file score (without its shard-order tie-breakers)."""
    best = 0.0
    if shaped.content:
        sections = _sections(doc, symbols or (), shaped.content)
        for line, pieces in shaped.content.items():
            secs = sections.get(line, [])
            for s, e in pieces:
                best = max(best, content_fragment_score(doc.data, s, e, secs, doc.row.language))
    elif shaped.path:
        best = max(path_fragment_score(doc.path_bytes, s, e) for s, e in shaped.path)
    return float(math.trunc(best + atom_bonus(atoms)))


# -- the engine ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Outcome:
    plan: _Plan
    hits: list[_Hit]
    scanned_files: int
    scanned_bytes: int
    bounded: bool
    """No condition narrowed the text: files were scanned under the byte budget."""
    stopped: str | None = None
    """Why evaluation stopped early: "scan" (byte budget) or "matches" (match limit)."""

    @property
    def partial(self) -> bool:
        return self.stopped is not None


class EmbeddedLexical:
    """Zoekt-compatible lexical search over the index's trigram table (no server)."""

    name = "embedded"

    def __init__(
        self, store: Store, *, scan_limit_bytes: int = 64 << 20, match_limit: int = 100_000
    ) -> None:
        """An engine over one open index.

        Args:
            store: the index (read through `Store.query` only).
            scan_limit_bytes: text read at most when nothing narrows a query (no trigram).
            match_limit: matching lines after which evaluation stops (partial result),
                like Zoekt's per-shard match limit.
        """
        self.store = store
        self.scan_limit_bytes = scan_limit_bytes
        self.match_limit = match_limit

    # -- public API ----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        max_files: int = 30,
        context_lines: int = 3,
        repos: Sequence[str] | None = None,
        offset: int = 0,
    ) -> LexicalResult:
        """Run a Zoekt query; return up to `max_files` files (after `offset`), best first.

        Args:
            query: Zoekt query syntax (see `search/query.py`).
            max_files: files to return; `file_count` still counts every match.
            context_lines: lines of context around each match, merged into `blocks`.
            repos: restrict to these repository names (None: all).
            offset: skip this many ranked files (paging).

        Raises:
            QueryError: the query does not parse (message has the position, plus a hint).
            ValidationError: a negative or zero limit.
        """
        started = time.perf_counter()
        _check_limits(max_files=max_files, context_lines=context_lines, offset=offset)
        root = self._restrict(parse(query), repos)
        notes = self._notes(root, repos)
        if isinstance(root, Type) and root.kind == ResultType.REPO:
            return self._repo_result(root.child, started, notes)
        root = self._resolve_repo_types(root)
        outcome = self._run(root)
        hits = sorted(outcome.hits, key=lambda h: (-h.score, h.row.repo, h.row.path))
        page = hits[offset : offset + max_files]
        files = [self._file_match(outcome.plan, h, context_lines) for h in page]
        notes += self._scan_notes(outcome)
        return LexicalResult(
            files=files,
            match_count=sum(h.lines for h in hits),
            file_count=len(hits),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            partial=outcome.partial,
            notes=tuple(notes),
        )

    def search_files(
        self, pattern: str, *, max_files: int = 50, repos: Sequence[str] | None = None
    ) -> LexicalResult:
        """Files whose path matches a glob (`*.py`, `src/**/test_*.py`), a regex or text.

        A pattern with regex operators (`\\ ^ $ ( ) | + { }`) is an RE2 regex; one
        with `*`, `?` or `[` is a glob (matched against the whole path, and against
        the base name when it has no `/`); anything else is a substring. Case:
        sensitive iff the pattern has an uppercase letter. Files come back without
        line matches, best path match first (base-name matches before others).

        Raises:
            QueryError: empty pattern or invalid regex.
        """
        started = time.perf_counter()
        _check_limits(max_files=max_files, context_lines=0, offset=0)
        regex, kind = file_pattern_regex(pattern)
        case_sensitive = has_uppercase(pattern)
        rx = _compile(regex, case_sensitive, multiline=False)
        conds: list[Cond] = [path_cond(regex, case_sensitive)] if kind != "glob" else []
        if repos is not None:
            conds.append(
                Cond(
                    CondOp.SQL,
                    sql="r.name IN (SELECT value FROM json_each(?))",
                    params=(json.dumps(list(repos)),),
                )
            )
        where, params = render_cond(c_and(conds))
        rows = self.store.query(CANDIDATES_SQL.format(where=where), params)
        hits: list[tuple[float, _Row, list[tuple[int, int]]]] = []
        for raw in rows:
            row = _Row(*raw)
            path = _utf8(row.path)
            found = [m.span() for m in rx.finditer(path)]
            if not found:
                continue
            spans = [(s + (path[s : s + 1] == b"/" and kind == "glob"), e) for s, e in found]
            spans = [(s, e) for s, e in spans if e > s] or [(0, len(path))]
            score = max(path_fragment_score(path, s, e) for s, e in spans)
            hits.append((score, row, spans))
        hits.sort(key=lambda h: (-h[0], len(h[1].path), h[1].repo, h[1].path))
        files = [
            FileMatch(
                repository=row.repo, path=row.path, language=row.language, score=score, matches=()
            )
            for score, row, _ in hits[:max_files]
        ]
        return LexicalResult(
            files=files,
            match_count=len(hits),
            file_count=len(hits),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            notes=(f"pattern read as a {kind}: {regex}",),
        )

    def explain(self, query: str) -> str:
        """The parsed query, each atom's literal/trigram plan and the candidate SQL.

        Raises:
            QueryError: the query does not parse.
        """
        parsed = parse(query)
        lines = [f"query: {query}", f"parsed: {format_node(parsed)}", "atoms:"]
        for node in _walk(parsed):
            if isinstance(node, Text | Sym):
                lines.append("  " + _explain_atom(node))
            elif isinstance(node, Lang):
                lines.append(
                    f"  lang:{node.name} -> lower(language) IN "
                    f"({', '.join(sorted(language_names(node.name)))})"
                )
            elif isinstance(node, Repo):
                lines.append(
                    f"  repo:{node.pattern!r} -> repository name regex (case-sensitive, unanchored)"
                )
        target = parsed.child if isinstance(parsed, Type) else parsed
        plan = _Plan(self.store, target)
        cond = plan.cond(plan.root)
        where, params = render_cond(cond)
        lines.append("candidate SQL:")
        lines.append("  " + CANDIDATES_SQL.format(where=where))
        lines.append(f"  params: {params!r}")
        lines.extend(
            f"FTS MATCH: {to_fts_match(c.lq)}" for c in _cond_walk(cond) if c.op == CondOp.FTS
        )
        if plan.needs_content and not cond.selective:
            lines.append(
                "verification: bounded scan (no literal of 3+ characters narrows the content): "
                f"at most {self.scan_limit_bytes} bytes of text are read; the result is "
                "partial beyond that"
            )
        elif plan.needs_content:
            lines.append("verification: RE2 on the text of each candidate, line by line ranges")
        else:
            lines.append("verification: paths, names and file facts only (no text read)")
        if isinstance(parsed, Type) and parsed.kind == ResultType.REPO:
            lines.append("results: one per repository with a matching file (type:repo)")
        return "\n".join(lines)

    # -- internals ---------------------------------------------------------------------------

    def _restrict(self, root: Node, repos: Sequence[str] | None) -> Node:
        if repos is None:
            return root
        only = RepoSet(frozenset(repos))
        if isinstance(root, Type):
            return Type(root.kind, simplify(And((only, root.child))))
        return simplify(And((only, root)))

    def _notes(self, root: Node, repos: Sequence[str] | None) -> list[str]:
        notes: list[str] = []
        if repos is not None:
            known = {str(r[0]) for r in self.store.query("SELECT name FROM repos")}
            missing = sorted(set(repos) - known)
            if missing:
                notes.append(f"unknown repositories ignored: {', '.join(missing)}")
        langs = [n for n in _walk(root) if isinstance(n, Lang)]
        if langs:
            present = {
                str(r[0]).lower() for r in self.store.query("SELECT DISTINCT language FROM files")
            }
            notes.extend(
                f"lang:{lang.name} matches no indexed file; languages in the index: "
                + ", ".join(sorted(present))
                for lang in langs
                if not language_names(lang.name) & present
            )
        return notes

    def _resolve_repo_types(self, root: Node) -> Node:
        """Replace nested `type:repo` groups by the set of repositories they select."""

        def resolve(node: Node) -> Node:
            if isinstance(node, Type):
                if node.kind == ResultType.REPO:
                    return RepoSet(frozenset(self._matching_repos(resolve(node.child))))
                return Type(node.kind, resolve(node.child))
            if isinstance(node, Not):
                return Not(resolve(node.child))
            if isinstance(node, And | Or):
                kids = tuple(resolve(c) for c in node.children)
                return And(kids) if isinstance(node, And) else Or(kids)
            return node

        return simplify(resolve(root))

    def _matching_repos(self, node: Node) -> list[str]:
        return sorted({h.row.repo for h in self._run(node, score=False).hits})

    def _repo_result(self, child: Node, started: float, notes: list[str]) -> LexicalResult:
        outcome = self._run(self._resolve_repo_types(child), score=False)
        counts: dict[str, int] = {}
        for h in outcome.hits:
            counts[h.row.repo] = counts.get(h.row.repo, 0) + 1
        files = [
            FileMatch(repository=name, path="", language="", score=float(n), matches=())
            for name, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        notes = [
            *notes,
            "type:repo: one result per repository with a matching file "
            "(path is empty; score = number of matching files)",
        ]
        notes += self._scan_notes(outcome)
        return LexicalResult(
            files=files,
            match_count=len(files),
            file_count=len(files),
            duration_ms=(time.perf_counter() - started) * 1000.0,
            partial=outcome.partial,
            notes=tuple(notes),
        )

    def _run(self, root: Node, *, score: bool = True) -> _Outcome:
        """Select candidates, verify each, score the matches."""
        plan = _Plan(self.store, root)
        cond = plan.cond(root)
        if cond.op == CondOp.FALSE:
            return _Outcome(plan, [], 0, 0, False)
        where, params = render_cond(cond)
        rows = [_Row(*r) for r in self.store.query(CANDIDATES_SQL.format(where=where), params)]
        bounded = plan.needs_content and not cond.selective
        hits: list[_Hit] = []
        scanned_files = scanned_bytes = matched_lines = 0
        for i in range(0, len(rows), CONTENT_BATCH):
            batch = rows[i : i + CONTENT_BATCH]
            ids = [r.id for r in batch]
            texts = self._texts(ids) if plan.needs_content else {}
            if score and plan.needs_content:
                plan.prefetch_symbols(ids)
            for row in batch:
                stop = (
                    "scan"
                    if bounded and scanned_bytes >= self.scan_limit_bytes
                    else ("matches" if matched_lines >= self.match_limit else None)
                )
                if stop is not None:
                    return _Outcome(plan, hits, scanned_files, scanned_bytes, bounded, stop)
                doc = _Doc(row, texts.get(row.id), path_bytes=_utf8(row.path))
                ev = _Eval(plan, doc)
                matched = ev.eval(root)
                if doc.text is not None:
                    scanned_files += 1
                    scanned_bytes += len(doc.data)
                if matched:
                    hits.append(self._hit(plan, ev, doc) if score else _Hit(row, 0.0, 0))
                    matched_lines += hits[-1].lines
        return _Outcome(plan, hits, scanned_files, scanned_bytes, bounded)

    def _hit(self, plan: _Plan, ev: _Eval, doc: _Doc) -> _Hit:
        spans: list[Span] = []
        atoms = ev.collect(plan.root, spans)
        shaped = shape(spans, doc)
        symbols = plan.symbols_of(doc.row.id) if shaped.content else None
        if shaped.content:
            lines = len(shaped.content)
        else:
            lines = 1 if shaped.path is not None or shaped.whole_path else 0
        return _Hit(doc.row, score_file(shaped, doc, atoms, symbols), lines)

    def _texts(self, ids: list[int]) -> dict[int, str]:
        marks = ", ".join("?" for _ in ids)
        rows = self.store.query(
            f"SELECT rowid, content FROM file_text WHERE rowid IN ({marks})", ids
        )
        return {int(r[0]): str(r[1]) for r in rows}

    def _file_match(self, plan: _Plan, hit: _Hit, context_lines: int) -> FileMatch:
        """Re-evaluate one ranked file and attach line text, columns and context blocks."""
        row = hit.row
        doc = _Doc(row, path_bytes=_utf8(row.path))
        if plan.needs_content:
            plan.load_text(doc)
        ev = _Eval(plan, doc)
        ev.eval(plan.root)
        spans: list[Span] = []
        ev.collect(plan.root, spans)
        shaped = shape(spans, doc)
        matches: list[LineMatch] = []
        blocks: tuple[Block, ...] = ()
        if shaped.content:
            for line in sorted(shaped.content):
                raw = doc.line_bytes(line)
                base = doc.line_start(line)
                text = doc.line_text(line)
                ranges = tuple(
                    (a, min(b, len(text) + 1))
                    for a, b in (columns(raw, s - base, e - base) for s, e in shaped.content[line])
                )
                matches.append(LineMatch(line=line, text=text, ranges=ranges))
            windows = merge_windows(shaped.content, context_lines, doc.line_count)
            blocks = tuple(
                Block(lo, tuple(doc.line_text(n) for n in range(lo, hi + 1))) for lo, hi in windows
            )
        return FileMatch(
            repository=row.repo,
            path=row.path,
            language=row.language,
            score=hit.score,
            matches=tuple(matches),
            blocks=blocks,
        )

    def _scan_notes(self, outcome: _Outcome) -> list[str]:
        notes = []
        if outcome.stopped == "matches":
            notes.append(
                f"stopped after {self.match_limit} matching lines: results are partial "
                "(files after that were not searched). Narrow the query with a longer "
                "literal or a repo:/lang:/file: filter."
            )
        if outcome.stopped == "scan":
            notes.append(
                "bounded scan: the query has no literal of 3+ characters for the trigram index, "
                f"so files were scanned; stopped after {outcome.scanned_files} files "
                f"({outcome.scanned_bytes} bytes, limit {self.scan_limit_bytes}): results are "
                "partial. Add a longer literal or a repo:/lang:/file: filter."
            )
        elif outcome.bounded:
            notes.append(
                "bounded scan: the query has no literal of 3+ characters for the trigram index; "
                f"{outcome.scanned_files} candidate files ({outcome.scanned_bytes} bytes) "
                "were scanned"
            )
        return notes


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _cond_walk(cond: Cond) -> Iterable[Cond]:
    yield cond
    for c in cond.children:
        yield from _cond_walk(c)


def _explain_atom(node: Text | Sym) -> str:
    lq = required_literals(node.pattern)
    lit = literal_text(node.pattern)
    where = (
        "symbol names"
        if isinstance(node, Sym)
        else {Field.CONTENT: "content", Field.PATH: "path", Field.ANY: "path or content"}[
            node.field
        ]
    )
    case = "case-sensitive" if node.case_sensitive else "case-insensitive"
    kind = f"literal {lit!r}" if lit is not None else "regex"
    grams = [g for t in _lits(lq) for g in trigrams(t)]
    shown = ", ".join(repr(g) for g in grams[:12]) + (" ..." if len(grams) > 12 else "")
    return f"{format_node(node)}: {kind} on {where}, {case}; required literals: {describe(lq)}" + (
        f"; trigrams: {shown}" if grams else ""
    )


def _lits(lq: LitQuery) -> list[str]:
    if isinstance(lq, Lit):
        return [lq.text]
    if isinstance(lq, AllOf | AnyOf):
        return [t for c in lq.children for t in _lits(c)]
    return []


def _check_limits(*, max_files: int, context_lines: int, offset: int) -> None:
    for name, value, low in (
        ("max_files", max_files, 1),
        ("context_lines", context_lines, 0),
        ("offset", offset, 0),
    ):
        if value < low:
            raise ValidationError(
                f"{name} must be at least {low}, got {value}",
                hint=f"Pass {name}={low} or more.",
                details={"field": name, "value": value},
            )


_GLOB_CHARS = re.compile(r"[*?\[]")
_REGEX_CHARS = re.compile(r"[\\^$()|+{}]")


def file_pattern_regex(pattern: str) -> tuple[str, str]:
    """(RE2 regex, kind) for a file pattern: kind is 'regex', 'glob' or 'substring'.

    Raises:
        QueryError: empty pattern or invalid regex.
    """
    if not pattern.strip():
        raise QueryError(
            "Query syntax error: the file pattern is empty",
            hint="Give a glob (`*.py`), a regex (`^src/.*_test\\.go$`) or part of a path.",
            details={"position": 0},
        )
    if _REGEX_CHARS.search(pattern):
        problem = check_pattern(pattern)
        if problem is not None:
            raise QueryError(
                f"Query syntax error: invalid regular expression `{pattern}`: {problem}",
                hint="Escape metacharacters with a backslash, or use a glob such as `*.py`.",
                details={"position": 0},
            )
        return pattern, "regex"
    if _GLOB_CHARS.search(pattern):
        return glob_to_regex(pattern), "glob"
    return quote_meta(pattern), "substring"


def glob_to_regex(glob: str) -> str:
    """An anchored RE2 regex for a glob: `**` spans folders, `*`/`?` stay within one.

    A glob without `/` also matches the base name of any path.
    """
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(quote_meta(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        else:
            out.append(quote_meta(c))
        i += 1
    body = "".join(out)
    if "/" not in glob:
        return f"(?:^|/){body}$"
    return f"^{body}$"
