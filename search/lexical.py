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

Reads the index through `Store.query` only; writes nothing.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import re2

from indexer.errors import QueryError, ValidationError
from indexer.languages import normalize_language
from indexer.store import Store
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
    MATCH_ALL,
    AllOf,
    AnyOf,
    Lit,
    LitQuery,
    MatchAll,
    all_of,
    any_of,
    check_pattern,
    describe,
    fold_ascii,
    has_uppercase,
    literal_text,
    required_literals,
    to_fts_match,
    trigrams,
)

CONTENT_BATCH = 64
"""Candidate files whose text is read per SQL statement."""

# -- languages -------------------------------------------------------------------------


def language_names(name: str) -> frozenset[str]:
    """The `files.language` ids that `lang:name` matches: the id of the name or alias
    (`py`, `golang`, `C++` ...), or none for an unknown language (as Zoekt: no error)."""
    lang = normalize_language(name)
    return frozenset({lang}) if lang is not None else frozenset()


# -- candidate conditions (pure) ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Cond:
    """A SQL condition on `files f` that every matching file satisfies.

    `exact`: the condition is equivalent to the atom (so it may be negated);
    `selective`: it narrows by text (trigrams, paths, symbols), not only by
    repository or language. `op` is one of sql, fts, and, or, not, true, false.
    """

    op: str
    sql: str = ""
    params: tuple[Any, ...] = ()
    lq: LitQuery = MATCH_ALL
    children: tuple[Cond, ...] = ()
    exact: bool = True
    selective: bool = False


def c_true(exact: bool = True) -> Cond:
    return Cond("true", exact=exact)


C_FALSE = Cond("false", selective=True)


def c_and(children: Iterable[Cond]) -> Cond:
    """AND: constants folded, FTS conditions merged into one MATCH."""
    kids = list(children)
    exact = all(c.exact for c in kids)
    if any(c.op == "false" for c in kids):
        return replace(C_FALSE, exact=exact)
    kids = [c for c in kids if c.op != "true"]
    fts = [c for c in kids if c.op == "fts"]
    if len(fts) > 1:
        merged = Cond("fts", lq=all_of(c.lq for c in fts), exact=all(c.exact for c in fts),
                      selective=True)
        kids = [merged] + [c for c in kids if c.op != "fts"]
    if not kids:
        return c_true(exact)
    if len(kids) == 1:
        return replace(kids[0], exact=exact)
    return Cond("and", children=tuple(kids), exact=exact,
                selective=any(c.selective for c in kids))


def c_or(children: Iterable[Cond]) -> Cond:
    """OR: one TRUE child makes it TRUE; all-FTS children merge into one MATCH."""
    kids = list(children)
    exact = all(c.exact for c in kids)
    if any(c.op == "true" for c in kids):
        return c_true(exact)
    kids = [c for c in kids if c.op != "false"]
    if not kids:
        return replace(C_FALSE, exact=exact)
    if len(kids) > 1 and all(c.op == "fts" for c in kids):
        return Cond("fts", lq=any_of(c.lq for c in kids), exact=exact, selective=True)
    if len(kids) == 1:
        return replace(kids[0], exact=exact)
    return Cond("or", children=tuple(kids), exact=exact,
                selective=all(c.selective for c in kids))


def c_not(child: Cond) -> Cond:
    """NOT: only an exact condition can be negated; otherwise nothing is known (TRUE)."""
    if not child.exact:
        return c_true(exact=False)
    if child.op == "true":
        return C_FALSE
    if child.op == "false":
        return c_true()
    return Cond("not", children=(child,))


def render_cond(cond: Cond) -> tuple[str, list[Any]]:
    """The SQL text (for `WHERE`) and its bound parameters."""
    if cond.op == "true":
        return "1", []
    if cond.op == "false":
        return "0", []
    if cond.op == "sql":
        return cond.sql, list(cond.params)
    if cond.op == "fts":
        match = to_fts_match(cond.lq)
        return "f.id IN (SELECT rowid FROM file_text WHERE file_text MATCH ?)", [match]
    parts = [render_cond(c) for c in cond.children]
    params = [p for _, ps in parts for p in ps]
    if cond.op == "not":
        return f"NOT ({parts[0][0]})", params
    joiner = " AND " if cond.op == "and" else " OR "
    return "(" + joiner.join(s for s, _ in parts) + ")", params


def _instr_cond(lq: LitQuery, column: str) -> Cond:
    """`instr(lower(column), lit)` tests for a literal formula (ASCII literals only)."""
    if isinstance(lq, MatchAll):
        return c_true(exact=False)
    if isinstance(lq, Lit):
        if not lq.text.isascii():
            return c_true(exact=False)
        return Cond("sql", sql=f"instr(lower({column}), ?) > 0", params=(lq.text,),
                    exact=False, selective=True)
    kids = [_instr_cond(c, column) for c in lq.children]
    out = c_and(kids) if isinstance(lq, AllOf) else c_or(kids)
    return replace(out, exact=False)


def path_cond(pattern: str, case_sensitive: bool, column: str = "f.path") -> Cond:
    """A condition on a path (or name) column for a regex; exact for plain literals."""
    lit = literal_text(pattern)
    if lit:
        if case_sensitive:
            return Cond("sql", sql=f"instr({column}, ?) > 0", params=(lit,), selective=True)
        if lit.isascii():
            return Cond("sql", sql=f"instr(lower({column}), ?) > 0", params=(fold_ascii(lit),),
                        selective=True)
    return _instr_cond(required_literals(pattern), column)


def content_cond(pattern: str, case_sensitive: bool) -> Cond:
    """An FTS trigram condition for a content regex; exact for case-insensitive ASCII text."""
    lq = required_literals(pattern)
    if isinstance(lq, MatchAll):
        return c_true(exact=False)
    lit = literal_text(pattern)
    exact = lit is not None and len(lit) >= 3 and lit.isascii() and not case_sensitive
    return Cond("fts", lq=lq, exact=exact, selective=True)


def _id_list_cond(column: str, ids: Iterable[int], selective: bool) -> Cond:
    values = sorted(set(ids))
    if not values:
        return C_FALSE
    return Cond("sql", sql=f"{column} IN (SELECT value FROM json_each(?))",
                params=(json.dumps(values),), selective=selective)


# -- scoring (pure, after Zoekt's index/score.go) ----------------------------------------

SCORE_WORD = 500.0
SCORE_PARTIAL_WORD = 50.0
SCORE_SYMBOL = 7000.0
SCORE_PARTIAL_SYMBOL = 4000.0
SCORE_KIND = 100.0
SCORE_ATOMS = 400.0


def _byte_class(c: int) -> int:
    if 97 <= c <= 122:
        return 0
    if 65 <= c <= 90:
        return 1
    if 48 <= c <= 57:
        return 2
    if c in (32, 10):
        return 5
    if c in (46, 44, 59, 34, 39):  # . , ; " '
        return 3
    return 4


_CLASS = bytes(_byte_class(c) for c in range(256))

_KIND_FACTOR: dict[str, float] = {
    "class": 10, "struct": 9.5, "enum": 9, "interface": 8, "trait": 8, "type": 8,
    "typealias": 8, "type_alias": 8, "function": 7, "func": 7, "method": 7,
    "constructor": 7, "field": 5.5, "member": 5.5, "property": 5.5, "constant": 5,
    "const": 5, "variable": 4, "var": 4, "chapter": 4, "heading": 3, "section": 3,
    "subsection": 2,
}
_LANGUAGE_KIND_FACTOR: dict[str, dict[str, float]] = {
    "python": {"class": 10, "function": 8, "method": 8, "field": 4, "variable": 3},
    "go": {"interface": 10, "struct": 9, "type": 9, "typealias": 9, "function": 8,
           "func": 8, "method": 8, "field": 7, "constant": 6, "const": 6, "variable": 5},
    "java": {"class": 10, "enum": 9, "interface": 8, "method": 7, "field": 6},
}


def kind_score(language: str, kind: str, name: str) -> float:
    """The bonus for a match on a definition of this kind (Zoekt's scoreSymbolKind)."""
    lang, k = language.lower(), kind.lower()
    factor = _LANGUAGE_KIND_FACTOR.get(lang, {}).get(k, _KIND_FACTOR.get(k, 1.0))
    if lang == "go" and name[:1].isupper():
        factor += 0.5
    return factor * SCORE_KIND


def word_score(data: bytes, start: int, end: int) -> float:
    """+500 when the match starts and ends at a character-class change, +50 for one end."""
    n = len(data)
    at_start = start < n and (start == 0 or _CLASS[data[start - 1]] != _CLASS[data[start]])
    at_end = end > 0 and (end == n or _CLASS[data[end - 1]] != _CLASS[data[end]])
    if at_start and at_end:
        return SCORE_WORD
    return SCORE_PARTIAL_WORD if at_start or at_end else 0.0


def path_fragment_score(path: bytes, start: int, end: int) -> float:
    """A match in a file path: word score plus the base-name bonus."""
    score = word_score(path, start, end)
    sep = path.rfind(b"/")
    start_match, end_match = start == sep + 1, end == len(path)
    if start_match and end_match:
        score += SCORE_SYMBOL
    elif start_match or end_match:
        score += (SCORE_SYMBOL + SCORE_PARTIAL_SYMBOL) / 2
    elif sep < start:
        score += SCORE_PARTIAL_SYMBOL
    return score


@dataclass(frozen=True, slots=True)
class Section:
    """A symbol definition's name in a file: byte range and kind."""

    start: int
    end: int
    kind: str
    name: str


def content_fragment_score(
    data: bytes, start: int, end: int, sections: Sequence[Section], language: str
) -> float:
    """A content match: word score plus the symbol bonus of the best-overlapping definition."""
    score = word_score(data, start, end)
    best: Section | None = None
    best_overlap = 0.0
    for sec in sections:
        overlap = min(sec.end, end) - max(sec.start, start)
        if overlap > 0 and sec.end > sec.start:
            rel = overlap / (sec.end - sec.start)
            if rel > best_overlap:
                best, best_overlap = sec, rel
    if best is not None:
        s_match, e_match = best.start == start, best.end == end
        if s_match and e_match:
            score += SCORE_SYMBOL
        elif s_match or e_match:
            score += (SCORE_SYMBOL + SCORE_PARTIAL_SYMBOL) / 2
        else:
            score += SCORE_PARTIAL_SYMBOL
        score += kind_score(language, best.kind, best.name)
    return score


def atom_bonus(atoms: int) -> float:
    """Up to +400 when several query atoms matched the file."""
    return (1.0 - 1.0 / atoms) * SCORE_ATOMS if atoms > 0 else 0.0


# -- match shaping (pure) ------------------------------------------------------------------

Span = tuple[bool, int, int]
"""(is_path, start byte, end byte): one match of one atom."""


def dedupe_spans(spans: Iterable[Span]) -> list[Span]:
    """Sort (path matches first, then by offset, longer first) and drop overlapping ones."""
    ordered = sorted(spans, key=lambda s: (not s[0], s[1], -(s[2] - s[1])))
    out: list[Span] = []
    for s in ordered:
        if out and out[-1][0] == s[0] and s[1] < out[-1][2]:
            continue
        out.append(s)
    return out


def newline_offsets(data: bytes) -> list[int]:
    """Byte offsets of every `\\n` in the text."""
    out: list[int] = []
    i = data.find(b"\n")
    while i >= 0:
        out.append(i)
        i = data.find(b"\n", i + 1)
    return out


def split_on_newlines(
    spans: Iterable[tuple[int, int]], newlines: Sequence[int]
) -> dict[int, list[tuple[int, int]]]:
    """Content spans cut at newlines, empty pieces dropped, grouped by 1-based line."""
    by_line: dict[int, list[tuple[int, int]]] = {}
    for start, end in spans:
        s = start
        k = bisect.bisect_left(newlines, s)
        while True:
            line_end = newlines[k] if k < len(newlines) else None
            stop = end if line_end is None or end <= line_end else line_end
            if stop > s:
                by_line.setdefault(k + 1, []).append((s, stop))
            if line_end is None or end <= line_end + 1:
                break
            s = line_end + 1
            k += 1
    return by_line


def merge_windows(lines: Iterable[int], context: int, last_line: int) -> list[tuple[int, int]]:
    """Windows of `context` lines around each line, merged when they overlap or touch."""
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        lo, hi = max(1, line - context), min(last_line, line + context)
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _columns(line: bytes, start: int, end: int) -> tuple[int, int]:
    """1-based character columns (end exclusive) of a byte range within one line."""
    a = len(line[:start].decode("utf-8", "replace")) + 1
    return a, a + len(line[start:end].decode("utf-8", "replace"))


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
    _newlines: list[int] | None = None
    path_bytes: bytes = b""

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = (self.text or "").encode("utf-8", "surrogatepass")
        return self._data

    @property
    def newlines(self) -> list[int]:
        if self._newlines is None:
            self._newlines = newline_offsets(self.data)
        return self._newlines

    def line_start(self, line: int) -> int:
        return 0 if line <= 1 else self.newlines[line - 2] + 1

    def line_bytes(self, line: int) -> bytes:
        start = self.line_start(line)
        end = self.newlines[line - 1] if line - 1 < len(self.newlines) else len(self.data)
        return self.data[start:end]


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


class _Plan:
    """Everything one query needs across files: compiled regexes, symbol hits, repo matches."""

    def __init__(self, store: Store, root: Node) -> None:
        self.store = store
        self.root = root
        self.needs_content = _needs_content(root)
        self._regex: dict[tuple[str, bool], Any] = {}
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
        if isinstance(node, Text):
            if node.field == Field.CONTENT:
                return content_cond(node.pattern, node.case_sensitive)
            if node.field == Field.PATH:
                return path_cond(node.pattern, node.case_sensitive)
            return c_or([content_cond(node.pattern, node.case_sensitive),
                         path_cond(node.pattern, node.case_sensitive)])
        if isinstance(node, Sym):
            return _id_list_cond("f.id", self.sym_hits[id(node)], selective=True)
        if isinstance(node, Repo):
            ids = [i for name, i in self.repo_ids.items() if self.repo_matches(node.pattern, name)]
            return _id_list_cond("f.repo_id", ids, selective=False)
        if isinstance(node, RepoSet):
            ids = [i for name, i in self.repo_ids.items() if name in node.names]
            return _id_list_cond("f.repo_id", ids, selective=False)
        if isinstance(node, Lang):
            names = sorted(language_names(node.name))
            if not names:
                return C_FALSE
            marks = ", ".join("?" for _ in names)
            return Cond("sql", sql=f"lower(f.language) IN ({marks})", params=tuple(names))
        if isinstance(node, Branch | Meta):
            return C_FALSE
        if isinstance(node, RepoFlag):
            # Plain-directory repositories are private, not forks, not archived.
            return c_true() if node.value is False else C_FALSE
        if isinstance(node, Const):
            return c_true() if node.value else C_FALSE
        if isinstance(node, Not):
            return c_not(self.cond(node.child))
        if isinstance(node, Type):
            return self.cond(node.child)
        if isinstance(node, And):
            return c_and(self.cond(c) for c in node.children)
        return c_or(self.cond(c) for c in node.children)

    def load_text(self, doc: _Doc) -> None:
        if doc.text is None:
            rows = self.store.query("SELECT content FROM file_text WHERE rowid = ?", (doc.row.id,))
            doc.text = str(rows[0][0]) if rows else ""

    def symbols_of(self, file_id: int) -> list[_SymbolRow]:
        rows = self.store.query(
            "SELECT name, kind, line FROM symbols WHERE file_id = ? ORDER BY line", (file_id,)
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

    def _eval(self, node: Node) -> bool:  # noqa: C901 - one branch per node type
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
        rx = self.plan.regex(node.pattern, node.case_sensitive)
        if node.field != Field.PATH:
            self.plan.load_text(doc)
            content = [(False, m.start(), m.end()) for m in rx.finditer(doc.data)]
            found.extend(content)
            atoms += bool(content)
        if node.field != Field.CONTENT:
            path = [(True, m.start(), m.end()) for m in rx.finditer(doc.path_bytes)]
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
        return 1

    def _symbol_spans(self, node: Sym) -> list[Span]:
        """The part of each matching definition's name that the pattern matched."""
        self.plan.load_text(self.doc)
        rx = self.plan.regex(node.pattern, node.case_sensitive)
        out: list[Span] = []
        last = len(self.doc.newlines) + 1
        for sym in self.plan.sym_hits[id(node)].get(self.doc.row.id, ()):
            if not 1 <= sym.line <= last:
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
        return _Shaped(content=split_on_newlines(content, doc.newlines))
    path = [(s, e) for is_path, s, e in kept if is_path]
    if path:
        return _Shaped(path=[(s, e) for s, e in path if e > s])
    return _Shaped(whole_path=True)


def _sections(doc: _Doc, symbols: Sequence[_SymbolRow]) -> dict[int, list[Section]]:
    out: dict[int, list[Section]] = {}
    last = len(doc.newlines) + 1
    for sym in symbols:
        if not 1 <= sym.line <= last:
            continue
        line = doc.line_bytes(sym.line)
        name = sym.name.encode("utf-8", "surrogatepass")
        at = line.find(name) if name else -1
        if at >= 0:
            start = doc.line_start(sym.line) + at
            out.setdefault(sym.line, []).append(Section(start, start + len(name), sym.kind,
                                                        sym.name))
    return out


def score_file(
    shaped: _Shaped, doc: _Doc, atoms: int, symbols: Sequence[_SymbolRow] | None
) -> float:
    """Zoekt's default file score (without its shard-order tie-breakers)."""
    best = 0.0
    if shaped.content:
        sections = _sections(doc, symbols or ())
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
    partial: bool


class EmbeddedLexical:
    """Zoekt-compatible lexical search over the index's trigram table (no server)."""

    name = "embedded"

    def __init__(self, store: Store, *, scan_limit_bytes: int = 64 << 20) -> None:
        self.store = store
        self.scan_limit_bytes = scan_limit_bytes

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
            conds.append(Cond("sql", sql="r.name IN (SELECT value FROM json_each(?))",
                              params=(json.dumps(list(repos)),)))
        where, params = render_cond(c_and(conds))
        rows = self.store.query(_CANDIDATES_SQL.format(where=where), params)
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
            FileMatch(repository=row.repo, path=row.path, language=row.language, score=score,
                      matches=())
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
                lines.append(f"  lang:{node.name} -> lower(language) IN "
                             f"({', '.join(sorted(language_names(node.name)))})")
            elif isinstance(node, Repo):
                lines.append(f"  repo:{node.pattern!r} -> repository name regex "
                             "(case-sensitive, unanchored)")
        target = parsed.child if isinstance(parsed, Type) else parsed
        plan = _Plan(self.store, target)
        cond = plan.cond(plan.root)
        where, params = render_cond(cond)
        lines.append("candidate SQL:")
        lines.append("  " + _CANDIDATES_SQL.format(where=where))
        lines.append(f"  params: {params!r}")
        fts = [c for c in _cond_walk(cond) if c.op == "fts"]
        for c in fts:
            lines.append(f"FTS MATCH: {to_fts_match(c.lq)}")
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
            for lang in langs:
                if not language_names(lang.name) & present:
                    notes.append(
                        f"lang:{lang.name} matches no indexed file; languages in the index: "
                        + ", ".join(sorted(present))
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
        notes = [*notes, "type:repo: one result per repository with a matching file "
                 "(path is empty; score = number of matching files)"]
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
        if cond.op == "false":
            return _Outcome(plan, [], 0, 0, False, False)
        where, params = render_cond(cond)
        rows = [_Row(*r) for r in self.store.query(_CANDIDATES_SQL.format(where=where), params)]
        bounded = plan.needs_content and not cond.selective
        hits: list[_Hit] = []
        scanned_files = scanned_bytes = 0
        for i in range(0, len(rows), CONTENT_BATCH):
            batch = rows[i : i + CONTENT_BATCH]
            texts = self._texts([r.id for r in batch]) if plan.needs_content else {}
            for row in batch:
                if bounded and scanned_bytes >= self.scan_limit_bytes:
                    return _Outcome(plan, hits, scanned_files, scanned_bytes, True, True)
                doc = _Doc(row, texts.get(row.id), path_bytes=_utf8(row.path))
                ev = _Eval(plan, doc)
                matched = ev.eval(root)
                if doc.text is not None:
                    scanned_files += 1
                    scanned_bytes += len(doc.data)
                if matched:
                    hits.append(self._hit(plan, ev, doc) if score else _Hit(row, 0.0, 0))
        return _Outcome(plan, hits, scanned_files, scanned_bytes, bounded, False)

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
        if _has_content(spans):
            plan.load_text(doc)
        shaped = shape(spans, doc)
        matches: list[LineMatch] = []
        blocks: tuple[Block, ...] = ()
        if shaped.content:
            for line in sorted(shaped.content):
                raw = doc.line_bytes(line)
                base = doc.line_start(line)
                text = raw.decode("utf-8", "replace").rstrip("\r")
                ranges = tuple(
                    (a, min(b, len(text) + 1))
                    for a, b in (_columns(raw, s - base, e - base)
                                 for s, e in shaped.content[line])
                )
                matches.append(LineMatch(line=line, text=text, ranges=ranges))
            all_lines = doc.data.decode("utf-8", "replace").split("\n")
            if doc.data.endswith(b"\n"):
                all_lines.pop()
            windows = merge_windows(shaped.content, context_lines, len(all_lines))
            blocks = tuple(
                Block(lo, tuple(t.rstrip("\r") for t in all_lines[lo - 1 : hi]))
                for lo, hi in windows
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
        if not outcome.bounded:
            return []
        if outcome.partial:
            return [
                "bounded scan: the query has no literal of 3+ characters for the trigram index, "
                f"so files were scanned; stopped after {outcome.scanned_files} files "
                f"({outcome.scanned_bytes} bytes, limit {self.scan_limit_bytes}): results are "
                "partial. Add a longer literal or a repo:/lang:/file: filter."
            ]
        return [
            "bounded scan: the query has no literal of 3+ characters for the trigram index; "
            f"all {outcome.scanned_files} candidate files ({outcome.scanned_bytes} bytes) "
            "were scanned"
        ]


_CANDIDATES_SQL = (
    "SELECT f.id, f.repo_id, r.name, f.path, f.language, f.size "
    "FROM files f JOIN repos r ON r.id = f.repo_id WHERE {where} ORDER BY r.name, f.path"
)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _has_content(spans: Iterable[Span]) -> bool:
    return any(not is_path for is_path, _, _ in spans)


def _cond_walk(cond: Cond) -> Iterable[Cond]:
    yield cond
    for c in cond.children:
        yield from _cond_walk(c)


def _explain_atom(node: Text | Sym) -> str:
    lq = required_literals(node.pattern)
    lit = literal_text(node.pattern)
    where = "symbol names" if isinstance(node, Sym) else {
        Field.CONTENT: "content", Field.PATH: "path", Field.ANY: "path or content"}[node.field]
    case = "case-sensitive" if node.case_sensitive else "case-insensitive"
    kind = f"literal {lit!r}" if lit is not None else "regex"
    grams = [g for t in _lits(lq) for g in trigrams(t)]
    shown = ", ".join(repr(g) for g in grams[:12]) + (" ..." if len(grams) > 12 else "")
    return (f"{format_node(node)}: {kind} on {where}, {case}; required literals: "
            f"{describe(lq)}" + (f"; trigrams: {shown}" if grams else ""))


def _lits(lq: LitQuery) -> list[str]:
    if isinstance(lq, Lit):
        return [lq.text]
    if isinstance(lq, AllOf | AnyOf):
        return [t for c in lq.children for t in _lits(c)]
    return []


def _check_limits(*, max_files: int, context_lines: int, offset: int) -> None:
    for name, value, low in (("max_files", max_files, 1), ("context_lines", context_lines, 0),
                             ("offset", offset, 0)):
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
    return re2.escape(pattern), "substring"


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
                out.append(re2.escape(c))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end + 1
                continue
        else:
            out.append(re2.escape(c))
        i += 1
    body = "".join(out)
    if "/" not in glob:
        return f"(?:^|/){body}$"
    return f"^{body}$"
