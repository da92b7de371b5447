"""`ctxd search --explain` for the embedded lexical engine: how a query would run.

Provides `explain_query(store, query, scan_limit_bytes)`: the parsed query, each atom's
literal and trigram plan, the candidate SQL with its parameters, how the store's trigram
index is asked (an FTS5 `MATCH`, or `pg_trgm`), and how candidates would be verified.
Backs `EmbeddedLexical.explain`; calls `search/lexical/query.py`, `search/lexical/sql.py`,
`search/lexical/regex_trigrams.py` and `Plan` from `search/lexical/eval.py`. Reads only
the repository names and the definitions a `sym:` atom selects (through
`IndexStore.query`); runs no candidate query and reads no file text.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxd.indexer.store.lookups import CANDIDATES_SQL
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.lexical.eval import Plan, walk_nodes
from ctxd.search.lexical.query import (
    Field,
    Lang,
    Repo,
    ResultType,
    Sym,
    Text,
    Type,
    format_node,
    parse,
)
from ctxd.search.lexical.regex_trigrams import (
    AllOf,
    AnyOf,
    Lit,
    LitQuery,
    describe,
    literal_text,
    required_literals,
    trigrams,
)
from ctxd.search.lexical.sql import Cond, CondOp, language_names, render_cond


def explain_query(store: IndexStore, query: str, scan_limit_bytes: int) -> str:
    """The parsed query, each atom's literal/trigram plan and the candidate SQL.

    Raises:
        QueryError: the query does not parse.
    """
    parsed = parse(query)
    lines = [f"query: {query}", f"parsed: {format_node(parsed)}", "atoms:"]
    for node in walk_nodes(parsed):
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
    plan = Plan(store, target)
    cond = plan.cond(plan.root)
    where, params = render_cond(cond, store.dialect)
    lines.append("candidate SQL:")
    lines.append("  " + CANDIDATES_SQL.format(where=where))
    lines.append(f"  params: {params!r}")
    lines.extend(store.dialect.describe_text_match(c.lq)
                 for c in _cond_walk(cond) if c.op == CondOp.FTS)
    if plan.needs_content and not cond.selective:
        lines.append(
            "verification: bounded scan (no literal of 3+ characters narrows the content): "
            f"at most {scan_limit_bytes} bytes of text are read; the result is "
            "partial beyond that"
        )
    elif plan.needs_content:
        lines.append("verification: RE2 on the text of each candidate, line by line ranges")
    else:
        lines.append("verification: paths, names and file facts only (no text read)")
    if isinstance(parsed, Type) and parsed.kind == ResultType.REPO:
        lines.append("results: one per repository with a matching file (type:repo)")
    return "\n".join(lines)


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
