"""Argument checks shared by the search use cases: a text that must not be empty (nor
too long, nor hold a NUL character) and a number within bounds.

`require_text`, `check_bound` and `reject_nul` raise `ValidationError` or `QueryError`
naming the field, the value and what to do; they are called once per request by
`server.search_cases` and `server.symbol_cases`, before anything is searched. Pure.
"""

from __future__ import annotations

from ctxd.indexer.errors import QueryError, ValidationError
from ctxd.search.lexical.limits import check_query_length

__all__ = ["check_bound", "reject_nul", "require_text"]


def require_text(field: str, value: str, *, hint: str, nul: bool = False,
                 syntax: bool = False) -> None:
    """Refuse an empty (or blank) text argument, one past the length limit
    (`search.lexical.limits`) and, with `nul`, one holding a NUL character.

    Raises:
        ValidationError: empty or too long; `QueryError` when empty and `syntax` (a
            Zoekt-syntax query: an empty one is a syntax error).
        QueryError: a NUL character (`reject_nul`).
    """
    if not value.strip():
        if syntax:
            raise QueryError(f"Query syntax error: empty {field}", hint=hint,
                             details={"field": field, "value": value})
        raise ValidationError(f"{field} must not be empty", hint=hint,
                              details={"field": field, "value": value})
    check_query_length(field, value)
    if nul:
        reject_nul(value)


def check_bound(field: str, value: int, lo: int, hi: int, *, hint: str | None = None) -> None:
    """Refuse a number outside `lo..hi` (inclusive), naming the field and the bounds.

    Raises:
        ValidationError: `{field} must be between {lo} and {hi}, got {value}`.
    """
    if not lo <= value <= hi:
        raise ValidationError(
            f"{field} must be between {lo} and {hi}, got {value}", hint=hint,
            details={"field": field, "value": value, "min": lo, "max": hi},
        )


def reject_nul(query: str) -> None:
    """Refuse a query holding a NUL character: no indexed text contains one (files with
    NUL bytes are binary and never indexed), and SQLite's FTS5 cannot parse it.

    Raises:
        QueryError: names the character's position.
    """
    if (at := query.find("\x00")) >= 0:
        raise QueryError(
            f"Query syntax error: the query contains a NUL character (\\x00) at position {at}",
            hint="Remove the NUL character: indexed files never contain one (files with NUL "
            "bytes are binary and left out).",
            details={"field": "query", "position": at},
        )
