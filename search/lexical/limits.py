"""Bounds on search input, checked before any work is done.

`check_query_length(field, value)` refuses a query longer than `MAX_QUERY_CHARS` with a
`ValidationError` naming the field, the length and the limit. Every search entry point of
the service (search in every mode, lexical `search`, symbols, references, files, explain)
calls it, so the CLI and the MCP tools answer alike. The bound keeps each request's cost
small (query words, FTS5 terms, regex compilation and the embedding tokenizer all grow with
it), so one request cannot hold a worker, or the GIL, for long. `check_term_count(root)` bounds
the atoms of a parsed Zoekt query for the embedded engine, whose candidate SQL nests one
condition per atom (SQLite refuses expression trees deeper than 1,000).
"""

from __future__ import annotations

from ctxd.indexer.errors import QueryError, ValidationError
from ctxd.search.lexical.query import And, Node, Not, Or, Type

MAX_QUERY_CHARS = 4096
"""The longest query (or pattern, or symbol) any search accepts, in characters."""


def check_query_length(field: str, value: str) -> None:
    """Refuse `value` when it is longer than `MAX_QUERY_CHARS`.

    Raises:
        ValidationError: the value is too long (details: field, length, max).
    """
    if len(value) > MAX_QUERY_CHARS:
        raise ValidationError(
            f"{field} is too long: {len(value)} characters, at most {MAX_QUERY_CHARS}",
            hint=f"Shorten the {field} to its distinctive words or pattern "
            f"({MAX_QUERY_CHARS} characters at most).",
            details={"field": field, "length": len(value), "max": MAX_QUERY_CHARS},
        )


MAX_QUERY_TERMS = 256
"""The most atoms (words, patterns, filters) one Zoekt-syntax query may have."""


def count_terms(node: Node) -> int:
    """The atoms (leaves) of a parsed query."""
    if isinstance(node, And | Or):
        return sum(count_terms(c) for c in node.children)
    if isinstance(node, Not | Type):
        return count_terms(node.child)
    return 1


def check_term_count(root: Node) -> None:
    """Refuse a parsed query with more than `MAX_QUERY_TERMS` atoms.

    Raises:
        QueryError: too many terms (details: field, terms, max).
    """
    n = count_terms(root)
    if n > MAX_QUERY_TERMS:
        raise QueryError(
            f"Query syntax error: the query has {n} terms, at most {MAX_QUERY_TERMS}",
            hint="Search for the few distinctive words or one regular expression instead.",
            details={"field": "query", "terms": n, "max": MAX_QUERY_TERMS},
        )


def check_page_limits(*, max_files: int, context_lines: int, offset: int) -> None:
    """Refuse a page of the embedded engine's answer with a limit below its least.

    Raises:
        ValidationError: `max_files` below 1, `context_lines` or `offset` below 0.
    """
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
