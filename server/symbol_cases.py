"""The symbol search use case: names ranked exact > prefix > substring > fuzzy, one page.

`symbol_page(resources, request)` checks the request (`server.argument_checks`), the kinds
(known ones, or ones the index holds) and the repositories, finds the symbols in the index
(`search.symbols`) and, with a Zoekt server, merges its `sym:` definitions; it says how the
best one matched (`best_match`) and how many match exactly. Called by
`server.search_cases.SearchCases.symbols`; returns a `SymbolPage` record, renders nothing.
"""

from __future__ import annotations

from dataclasses import replace

from ctxd.indexer.errors import ValidationError
from ctxd.search.cursor import decode_cursor, encode_cursor
from ctxd.search.models import SymbolItem, SymbolPage
from ctxd.search.symbols import (
    SYMBOL_KINDS,
    TIER_NAMES,
    find_symbols,
    merge_symbols,
    normalize_kind,
    rank_symbol,
    search_symbols,
    split_query,
    stored_kinds,
    unknown_kinds,
)
from ctxd.search.zoekt.client import ZoektClient
from ctxd.search.zoekt.query import escape_regex
from ctxd.server.argument_checks import require_text
from ctxd.server.repo_names import check_repositories
from ctxd.server.requests import SymbolsRequest
from ctxd.server.resources import Resources

__all__ = ["best_match", "exact_count", "symbol_page", "zoekt_symbols"]


def symbol_page(resources: Resources, request: SymbolsRequest) -> SymbolPage:
    """Fuzzy symbol search: exact > prefix > substring > fuzzy, one page.

    Raises:
        ValidationError: empty query or bad paging values.
        InvalidCursor: a pagination_id from another query.
    """
    query, kinds, repositories = request.query, request.kinds, request.repositories
    start_index, max_items = request.start_index, request.max_items
    require_text("query", query,
                 hint="Pass a symbol name or part of one, e.g. `AuthService` or `calc`.")
    if start_index < 0 or (max_items is not None and max_items < 1):
        raise ValidationError(
            "start_index must be >= 0 and max_items >= 1",
            details={"field": "start_index" if start_index < 0 else "max_items",
                     "value": start_index if start_index < 0 else max_items},
        )
    params = {"symbols": query, "kinds": sorted(kinds or []),
              "repositories": sorted(repositories or [])}
    if request.pagination_id:
        start_index, max_items = decode_cursor(request.pagination_id, params)
    store = resources.store()
    check_repositories(store, tuple(repositories or ()), resources.zoekt)
    zoekt = resources.zoekt()
    # Without Zoekt, a kind must be a known one or one the index holds (read only
    # when a kind is not known); Zoekt may know others.
    if kinds and zoekt is None and unknown_kinds(kinds) and (
            bad := unknown_kinds(kinds, in_index := stored_kinds(store))):
        allowed = sorted(SYMBOL_KINDS | set(in_index))
        raise ValidationError(
            f"unknown symbol kind {bad[0]!r} in kinds",
            hint=f"Use one or more of: {', '.join(allowed)}.",
            details={"field": "kinds", "value": bad[0] if len(bad) == 1 else bad,
                     "allowed": allowed},
        )
    if zoekt is None:
        items, total = find_symbols(
            store, query, kinds=kinds, repositories=repositories,
            limit=None if max_items is None else start_index + max_items,
            names=resources.symbol_names(store))
    else:
        items = merge_symbols(
            query, search_symbols(store, query, kinds=kinds, repositories=repositories),
            zoekt_symbols(zoekt, query, kinds, repositories))
        total = len(items)
    end = total if max_items is None else start_index + max_items
    page = items[start_index:end]
    has_more = end < total
    return SymbolPage(
        best_match=best_match(query, items),
        exact=exact_count(query, items),
        query=query,
        items=page,
        total=total,
        start_index=start_index,
        has_more=has_more,
        pagination_id=encode_cursor(params, end, max_items or total) if has_more else None,
    )


def exact_count(query: str, ranked: list[SymbolItem]) -> int:
    """How many of `ranked` (best first) match `query`'s name part exactly."""
    name = split_query(query)[1]
    return sum(1 for i in ranked if (r := rank_symbol(name, i.name)) is not None and r[0] == 0)


def best_match(query: str, ranked: list[SymbolItem]) -> str | None:
    """How the best of `ranked` (symbol results, best first) matches `query`'s name part:
    `exact`, `prefix`, `substring` or `fuzzy` (`search.symbols.TIER_NAMES`); None when
    nothing matched. Fuzzy means no name holds the query at all."""
    if not ranked:
        return None
    rank = rank_symbol(split_query(query)[1], ranked[0].name)
    return TIER_NAMES[rank[0]] if rank is not None else None


def zoekt_symbols(
    client: ZoektClient, query: str, kinds: list[str] | None, repositories: list[str] | None
) -> list[SymbolItem]:
    """Zoekt `sym:` definitions for a symbol query, kind-filtered on the client."""
    name = query.strip().rsplit(".", 1)[-1]
    pattern = escape_regex(name)  # Zoekt matches it as a substring; fuzzy stays local
    wanted = {k.lower() for k in kinds or []}
    found = [replace(s, kind=normalize_kind(s.kind))
             for s in client.symbols(f"sym:{pattern}", max_files=200)]
    return [
        s for s in found
        if (not wanted or s.kind in wanted)
        and (not repositories or s.repository in repositories)
    ]
