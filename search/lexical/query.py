"""Zoekt's query language: `parse(query) -> Node`, an immutable syntax tree.

The grammar and every quirk follow Zoekt's `query/parse.go` (see docs/contracts/zoekt-api.md §6):

- Tokens are separated by spaces and tabs. `"..."` groups (and `\\x` inside quotes
  stands for `x`); outside quotes a backslash escapes the next character and is
  kept for the regex engine. A newline outside quotes ends the query (-> error).
- Juxtaposition is AND, `or` (lowercase, unquoted) is OR with lower precedence,
  `-expr` is NOT, `( ... )` groups only when whitespace occurs before its `)`
  (`foo(bar)` is a regex).
- Atoms: bare words / `regex:` (path or content), `content:`/`c:`, `file:`/`f:`,
  `repo:`/`r:`, `lang:`, `sym:`, `branch:`/`b:`, `archived:`, `fork:`, `public:`,
  `meta.<key>:`; modifiers `case:yes|no|auto` and `type:`/`t:`
  (`filematch|filename|file|repo`), which apply to their whole parenthesis level.
- Every pattern is an RE2 regular expression, validated here. `case:auto` (the
  default) makes a pattern case-sensitive iff it has an ASCII uppercase letter.

The tree (all frozen, slotted dataclasses; `Node` is their union):

    And(children) | Or(children) | Not(child) | Const(value)
    Text(pattern, field: Field.CONTENT|PATH|ANY, case_sensitive)   -- a regex atom
    Sym(pattern, case_sensitive)   -- symbol definitions whose name matches
    Repo(pattern)                  -- repository name regex, always case-sensitive
    Lang(name)                     -- language name or alias, case-insensitive
    Branch(pattern) | RepoFlag(flag, value) | Meta(key, pattern)
    Type(kind: ResultType, child)  -- result shape for the subtree
    RepoSet(names)                 -- never parsed: built by engines (repo filters)

`case:` is resolved while parsing (each atom carries `case_sensitive`); `type:`
becomes a `Type` node around its level. The tree is simplified like Zoekt's:
nested And/Or flattened, constants folded, single-child groups unwrapped.

Errors raise `QueryError("Query syntax error: ...", hint=..., details={"position": i})`
with `i` the 0-based character offset of the offending token. Two deliberate
differences from Zoekt: an empty or whitespace-only query is an error (Zoekt's
HTTP API rejects only ""), and a quoted `"("`/`")"` is text, not a parenthesis.

The tokens (quoting, escapes, atom prefixes) are read by `search.lexical.query_tokens`;
the parser and the tree are here, one grammar read side by side with Zoekt's. Pure: no
I/O; also validates a query before it is sent to Zoekt.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from ctxd.indexer.errors import QueryError
from ctxd.search.lexical.query_tokens import (
    HINT_REGEX,
    Tok,
    Token,
    next_token,
    syntax_error,
)
from ctxd.search.lexical.regex_trigrams import check_pattern, has_uppercase


class Field(StrEnum):
    """What a text pattern is matched against."""

    CONTENT = "content"
    """File content only (`content:`, `c:`)."""
    PATH = "path"
    """The repo-relative path only (`file:`, `f:`)."""
    ANY = "any"
    """Path or content (a bare term or `regex:`), as Zoekt does."""


class ResultType(StrEnum):
    """What a `type:` modifier asks results to be."""

    FILEMATCH = "filematch"
    """Files with their matching lines (the default)."""
    FILENAME = "filename"
    """Only the names of the matching files (a whole-path match, no lines)."""
    REPO = "repo"
    """The repositories that contain at least one matching file."""


class CaseMode(StrEnum):
    """The value of a `case:` modifier."""

    YES = "yes"
    """Every pattern at this level is case-sensitive."""
    NO = "no"
    """Every pattern at this level is case-insensitive."""
    AUTO = "auto"
    """Case-sensitive iff the pattern contains an ASCII uppercase letter."""


@dataclass(frozen=True, slots=True)
class Text:
    """A regex over path and/or content."""

    pattern: str
    field: Field
    case_sensitive: bool


@dataclass(frozen=True, slots=True)
class Sym:
    """Files with a symbol definition whose name matches the regex."""

    pattern: str
    case_sensitive: bool


@dataclass(frozen=True, slots=True)
class Repo:
    """Files of repositories whose name matches the (case-sensitive, unanchored) regex."""

    pattern: str


@dataclass(frozen=True, slots=True)
class RepoSet:
    """Files of these repositories (exact names). Built by engines, never parsed."""

    names: frozenset[str]


@dataclass(frozen=True, slots=True)
class Lang:
    """Files whose language is `name` (lowercased) or one of its aliases."""

    name: str


@dataclass(frozen=True, slots=True)
class Branch:
    """Files on a branch whose name contains `pattern` (plain directories have none)."""

    pattern: str


@dataclass(frozen=True, slots=True)
class RepoFlag:
    """`archived:`, `fork:` or `public:` with yes (True) or no (False)."""

    flag: str
    value: bool


@dataclass(frozen=True, slots=True)
class Meta:
    """Repositories whose metadata `key` matches the regex."""

    key: str
    pattern: str


@dataclass(frozen=True, slots=True)
class Const:
    """Every file (True) or none (False)."""

    value: bool


@dataclass(frozen=True, slots=True)
class And:
    """All children match the same file."""

    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """At least one child matches the file."""

    children: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Not:
    """The child does not match the file."""

    child: Node


@dataclass(frozen=True, slots=True)
class Type:
    """Shape the results of `child` as `kind`."""

    kind: ResultType
    child: Node


Node = Text | Sym | Repo | RepoSet | Lang | Branch | RepoFlag | Meta | Const | And | Or | Not | Type

TRUE = Const(True)
FALSE = Const(False)

_TYPE_ORDER = {ResultType.FILEMATCH: 0, ResultType.FILENAME: 1, ResultType.REPO: 2}

# -- raw tree (before case/type resolution) ----------------------------------------------


@dataclass(frozen=True, slots=True)
class _RawPattern:
    pattern: str
    field: Field | None
    """None: a `sym:` atom."""


@dataclass(frozen=True, slots=True)
class _OrMark:
    position: int


@dataclass(frozen=True, slots=True)
class _Directive:
    case: CaseMode | None
    type: ResultType | None


@dataclass(frozen=True, slots=True)
class _RawNot:
    child: _Raw


@dataclass(frozen=True, slots=True)
class _Level:
    items: tuple[_Raw | _OrMark, ...]
    case: CaseMode | None
    type: ResultType | None
    start: int


_Raw = _RawPattern | _RawNot | _Level | Node


def _check_regex(pattern: str, position: int) -> None:
    problem = check_pattern(pattern)
    if problem is not None:
        raise syntax_error(f"invalid regular expression `{pattern}`: {problem}", position,
                           HINT_REGEX)


def _yes_no(tok: Token, what: str) -> bool:
    if tok.text not in ("yes", "no"):
        raise syntax_error(f'unknown {what} argument "{tok.text}", want {{yes,no}}', tok.start)
    return tok.text == "yes"


def _directive(tok: Token) -> _Directive:
    """A `case:` or `type:` modifier."""
    if tok.kind == "case":
        try:
            return _Directive(CaseMode(tok.text), None)
        except ValueError:
            msg = f'unknown case argument "{tok.text}", want {{yes,no,auto}}'
            raise syntax_error(msg, tok.start) from None
    value = "filename" if tok.text == "file" else tok.text
    try:
        return _Directive(None, ResultType(value))
    except ValueError:
        msg = f'unknown type argument "{tok.text}", want {{filematch,filename,file,repo}}'
        raise syntax_error(msg, tok.start) from None


def _atom(tok: Token) -> _Raw | _Directive:
    """The raw node for an atom token (not parentheses, negation or `or`)."""
    kind, text, pos = tok.kind, tok.text, tok.start
    if kind in ("case", "type"):
        return _directive(tok)
    if kind == "repo":
        _check_regex(text, pos)
        return Repo(text)
    if kind in ("archived", "fork", "public"):
        return RepoFlag(str(kind), _yes_no(tok, str(kind)))
    if kind == "branch":
        return Branch(text)
    if kind == "lang":
        return Lang(text.strip().lower())
    if kind == "meta":
        key, sep, value = text.partition(":")
        if not sep:
            raise syntax_error(f'invalid meta field syntax "{text}", want meta.<key>:<regex>', pos)
        _check_regex(value, pos)
        return Meta(key, value)
    if kind == "sym" and not text:
        raise syntax_error("the sym: atom must have an argument", pos, "Write sym:<name regex>.")
    _check_regex(text, pos)
    if kind == "sym":
        return _RawPattern(text, None)
    field = {"file": Field.PATH, "content": Field.CONTENT}.get(str(kind), Field.ANY)
    return _RawPattern(text, field)


class _Parser:
    def __init__(self, q: str) -> None:
        self.q = q

    def _skip_blanks(self, i: int) -> int:
        while i < len(self.q) and self.q[i] in " \t":
            i += 1
        return i

    def expr_list(self, i: int, start: int) -> tuple[_Level, int]:
        """A parenthesis level: expressions until `)`, a newline or the end."""
        items: list[_Raw | _OrMark] = []
        case: CaseMode | None = None
        rtype: ResultType | None = None
        while i < len(self.q):
            i = self._skip_blanks(i)
            try:
                tok = next_token(self.q, i)
            except QueryError:
                tok = None  # parse_expr re-reads it and raises
            if tok is not None and tok.kind == Tok.PAREN_CLOSE:
                break
            if tok is not None and tok.kind == Tok.OR:
                items.append(_OrMark(tok.start))
                i = tok.end
                continue
            got, i2 = self.expr(i)
            if got is None:
                break
            i = i2
            if isinstance(got, _Directive):
                if got.case is not None:
                    case = got.case  # the last one wins
                if got.type is not None and (
                    rtype is None or _TYPE_ORDER[got.type] < _TYPE_ORDER[rtype]
                ):
                    rtype = got.type
                continue
            items.append(got)
        return _Level(tuple(items), case, rtype, start), i

    def expr(self, i: int) -> tuple[_Raw | _Directive | None, int]:
        """One expression starting at or after `i`; None at the end, a `)` or a newline."""
        i = self._skip_blanks(i)
        tok = next_token(self.q, i)
        if tok is None or tok.kind in (Tok.PAREN_CLOSE, Tok.OR):
            return None, i
        if tok.kind == Tok.PAREN_OPEN:
            level, j = self.expr_list(tok.end, tok.start)
            close = next_token(self.q, j)
            if close is None or close.kind != Tok.PAREN_CLOSE:
                raise syntax_error("missing close paren", tok.start, "Close every `(` with a `)`.")
            return level, close.end
        if tok.kind == Tok.NEGATE:
            sub, j = self.expr(tok.end)
            if sub is None:
                raise syntax_error(
                    "'-' operator needs an argument",
                    tok.start,
                    'To search for text starting with "-", quote it: "-foo".',
                )
            if isinstance(sub, _Directive):
                raise syntax_error("case: and type: cannot be negated", tok.end)
            return _RawNot(sub), j
        if tok.kind == Tok.TEXT:
            return _atom(Token("text", tok.text, tok.start, tok.end)), tok.end
        return _atom(tok), tok.end


def parse(query: str) -> Node:
    """Parse a Zoekt query into a simplified syntax tree.

    Args:
        query: the query text (single line).

    Returns:
        The root `Node`.

    Raises:
        QueryError: the query is empty or malformed, or a pattern is not valid RE2;
            `details["position"]` is the 0-based character offset of the problem.
    """
    if not query.strip(" \t"):
        raise QueryError(
            "Query syntax error: the query is empty",
            hint="Give at least one search term, e.g. `foo` or `lang:python def main`.",
            details={"position": 0},
        )
    try:
        level, end = _Parser(query).expr_list(0, 0)
        if end < len(query):
            rest = query[end:]
            what = "a newline (queries are one line)" if rest.startswith("\n") else repr(rest)
            raise syntax_error(f"extra tokens found at end of input: {what}", end)
        return simplify(_build(level, CaseMode.AUTO))
    except RecursionError:
        raise syntax_error("the query nests too deeply", 0,
                           "Use fewer nested parentheses.") from None


def _build(raw: _Raw, case: CaseMode) -> Node:
    """Resolve `case:`/`type:` and `or` into final nodes (inner levels keep their own case)."""
    if isinstance(raw, _RawPattern):
        if case == CaseMode.AUTO:
            sensitive = has_uppercase(raw.pattern)
        else:
            sensitive = case == CaseMode.YES
        if raw.field is None:
            return Sym(raw.pattern, sensitive)
        return Text(raw.pattern, raw.field, sensitive)
    if isinstance(raw, _RawNot):
        return Not(_build(raw.child, case))
    if isinstance(raw, _Level):
        level_case = raw.case or case
        groups: list[list[Node]] = [[]]
        for item in raw.items:
            if isinstance(item, _OrMark):
                if not groups[-1]:
                    raise syntax_error("OR operator should have operand", item.position)
                groups.append([])
            else:
                groups[-1].append(_build(item, level_case))
        if len(groups) > 1 and not groups[-1]:
            marks = [m for m in raw.items if isinstance(m, _OrMark)]
            raise syntax_error("OR operator should have operand", marks[-1].position)
        node: Node = (
            And(tuple(groups[0])) if len(groups) == 1 else Or(tuple(And(tuple(g)) for g in groups))
        )
        return Type(raw.type, node) if raw.type is not None else node
    return raw


def simplify(node: Node) -> Node:
    """Flatten nested And/Or, fold constants, unwrap single children (as Zoekt's Simplify)."""
    if isinstance(node, And | Or):
        is_and = isinstance(node, And)
        kids: list[Node] = []
        for child in node.children:
            s = simplify(child)
            if isinstance(s, Const):
                if s.value != is_and:  # False in And, True in Or: decides
                    return s
                continue
            if type(s) is type(node):
                assert isinstance(s, And | Or)
                kids.extend(s.children)
            else:
                kids.append(s)
        if not kids:
            return Const(is_and)
        if len(kids) == 1:
            return kids[0]
        return And(tuple(kids)) if is_and else Or(tuple(kids))
    if isinstance(node, Not):
        child = simplify(node.child)
        return Const(not child.value) if isinstance(child, Const) else Not(child)
    if isinstance(node, Type):
        return Type(node.kind, simplify(node.child))
    return node


def format_node(node: Node) -> str:
    """A compact, readable form of a tree, e.g. `and(text:any:"foo", lang:python)`."""
    if isinstance(node, Text):
        case = "" if node.case_sensitive else "/i"
        return f"{node.field.value}:{node.pattern!r}{case}"
    if isinstance(node, Sym):
        return f"sym:{node.pattern!r}{'' if node.case_sensitive else '/i'}"
    if isinstance(node, Repo):
        return f"repo:{node.pattern!r}"
    if isinstance(node, RepoSet):
        return "repos:{" + ",".join(sorted(node.names)) + "}"
    if isinstance(node, Lang):
        return f"lang:{node.name}"
    if isinstance(node, Branch):
        return f"branch:{node.pattern!r}"
    if isinstance(node, RepoFlag):
        return f"{node.flag}:{'yes' if node.value else 'no'}"
    if isinstance(node, Meta):
        return f"meta.{node.key}:{node.pattern!r}"
    if isinstance(node, Const):
        return "all" if node.value else "none"
    if isinstance(node, Not):
        return f"not({format_node(node.child)})"
    if isinstance(node, Type):
        return f"type:{node.kind.value}({format_node(node.child)})"
    op = "and" if isinstance(node, And) else "or"
    return f"{op}(" + ", ".join(format_node(c) for c in node.children) + ")"


def names_repositories(query: str) -> bool:
    """Whether a query chooses its repositories itself (a `repo:`/`r:` or `meta.` atom
    anywhere), so a default scope (the repository a search runs in) must not narrow it.
    A query that does not parse does not: the search reports its error."""
    try:
        node = parse(query)
    except QueryError:
        return False
    todo: list[Node] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Repo | RepoSet | Meta):
            return True
        if isinstance(n, And | Or):
            todo.extend(n.children)
        elif isinstance(n, Not | Type):
            todo.append(n.child)
    return False
