"""Symbol search over the symbol table: exact > prefix > substring > fuzzy.

`search_symbols(store, query, kinds, repositories)` returns every matching
`SymbolItem`, ranked; `find_symbols` a first page and the total. Candidates come from
one SQL `LIKE '%q%u%e%r%y%'` (a case-insensitive subsequence match, so fuzzy candidates
cost one indexed-table scan; the store's dialect spells it: `ILIKE` on PostgreSQL), or,
in a long-lived service over a large index, from the distinct names in memory
(`search.symbol_names`, the same matches): then each name is ranked once and only the
page's rows are read.
`rank_symbol` (pure) orders them: exact name (case matching first), prefix, substring,
fuzzy; fuzzy matches that land on word starts (camelCase humps, snake_case parts) rank
above scattered ones. A qualified query `Container.name` matches the name part and
requires the container to contain the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxd.indexer.chunk.grammars import SYNTAX
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.models import SymbolItem
from ctxd.search.symbol_names import SymbolNames

TIER_NAMES = ("exact", "prefix", "substring", "fuzzy")

CTAGS_KINDS = {
    "member": "method",
    "func": "function",
    "f": "function",
    "m": "method",
    "c": "class",
    "typedef": "type",
    "macro": "constant",
    "var": "variable",
    "field": "variable",
}
"""Universal Ctags kind names (as Zoekt reports them) -> the kinds ctxd's own index uses."""


SYMBOL_KINDS = frozenset(
    {kind for table in SYNTAX.values() for kind in table.defs.values()}
    | {"class", "constant", "constructor", "extension", "function", "interface", "method",
       "section", "struct", "variable"}
)
"""Every kind ctxd's own index gives a symbol (the syntax tables' kinds, plus those the
extractors and the Markdown heading reader assign)."""


def normalize_kind(kind: str) -> str:
    """A symbol kind in ctxd's vocabulary (`member` -> `method`, `func` -> `function`)."""
    return CTAGS_KINDS.get(kind.lower(), kind.lower())


def stored_kinds(store: IndexStore) -> list[str]:
    """The distinct (lower-case) kinds of the symbols in the index."""
    return store.symbol_kinds()


def unknown_kinds(kinds: Sequence[str], also: Iterable[str] = ()) -> list[str]:
    """The `kinds` that are neither in `SYMBOL_KINDS` (after `normalize_kind`) nor in
    `also` (e.g. kinds the index actually holds), in the order given."""
    known = SYMBOL_KINDS | {k.lower() for k in also}
    return [k for k in kinds if normalize_kind(k) not in known]


def like_pattern(query: str) -> str:
    """`%q%u%e%r%y%` with LIKE's wildcards escaped (ESCAPE '\\')."""
    esc = [c if c not in "%_\\" else "\\" + c for c in query]
    return "%" + "%".join(esc) + "%"


_ASCII_WORD_START = re.compile(
    r"(?<=[_\-.$])[^_\-.$]|(?<=[a-z0-9])[A-Z]|(?<=[A-Z])[A-Z](?=[a-z])")
"""`word_starts`' three rules for ASCII names, as one expression."""


def word_starts(name: str) -> set[int]:
    """Indexes where a word begins: the first char, after `_`/`-`/`.`, and camelCase humps."""
    if name.isascii():
        return {0, *(m.start() for m in _ASCII_WORD_START.finditer(name))}
    return word_starts_by_chars(name)


def word_starts_by_chars(name: str) -> set[int]:
    """`word_starts`, character by character (any alphabet's cases)."""
    starts = {0}
    for i in range(1, len(name)):
        prev, cur = name[i - 1], name[i]
        if prev in "_-.$" and cur not in "_-.$":
            starts.add(i)
        elif cur.isupper() and (prev.islower() or prev.isdigit()):
            starts.add(i)
        elif cur.isupper() and i + 1 < len(name) and name[i + 1].islower() and prev.isupper():
            starts.add(i)
    return starts


def fuzzy_score(query: str, name: str) -> int | None:
    """How well `query` matches `name` as a subsequence (higher is better), or None when
    `name` does not hold `query`'s characters in order (case-insensitively).

    Greedy, preferring word starts: each query char that lands on a word start earns 2,
    each consecutive char 1. When jumping to word starts leaves later characters
    unmatched (`ab` in `xa_b_a`), the plain leftmost match is scored instead.
    """
    q, n = query.lower(), name.lower()
    starts = word_starts(name)
    ordered = sorted(starts)
    for prefer_starts in (True, False):
        score, pos, last = 0, 0, -2
        for ch in q:
            nxt = n.find(ch, pos)
            if nxt < 0:
                break
            if prefer_starts:  # the next word start holding ch, else the next occurrence
                boundary = next((i for i in ordered if i >= pos and n[i] == ch), None)
                if boundary is not None and nxt != last + 1:
                    nxt = boundary
            score += 2 if nxt in starts else 0
            score += 1 if nxt == last + 1 else 0
            last, pos = nxt, nxt + 1
        else:
            return score
    return None


def rank_symbol(query: str, name: str) -> tuple[int, int] | None:
    """(tier, -quality) for sorting, or None if `name` does not match `query`.

    Tier 0 exact, 1 prefix, 2 substring, 3 fuzzy; within a tier case-exact and
    word-start matches come first.
    """
    if not query:
        return None
    ql, nl = query.lower(), name.lower()
    if nl == ql:
        return (0, -(1 if name == query else 0))
    if nl.startswith(ql):
        return (1, -(1 if name.startswith(query) else 0))
    idx = nl.find(ql)
    if idx >= 0:
        return (2, -(2 if idx in word_starts(name) else 0) - (1 if query in name else 0))
    score = fuzzy_score(query, name)
    if score is None:
        return None
    return (3, -score)


Row = tuple[Any, ...]
RankKey = tuple[int, int, int, str, str, int]
"""(tier, -quality, name length, repository, path, line): the order of symbol results."""

_IN_CHUNK = 5_000
"""Names per `IN (...)` list (SQLite allows 32,766 parameters a statement, PostgreSQL
65,535)."""


def split_query(query: str) -> tuple[str, str]:
    """(container part, name part) of a query: `Console.print` -> (`Console`, `print`);
    Rust's, C++'s and PHP's `Router::merge` the same."""
    query = query.strip()
    if "::" in query.strip(":") and " " not in query:  # not a heading's words
        query = query.replace("::", ".")
    if "." in query.strip("."):
        container, _, name = query.rpartition(".")
        return container, name
    return "", query


def search_symbols(
    store: IndexStore,
    query: str,
    *,
    kinds: Sequence[str] | None = None,
    repositories: Sequence[str] | None = None,
    limit: int | None = None,
    names: SymbolNames | None = None,
) -> list[SymbolItem]:
    """Every symbol matching `query`, best first (see module docstring); the first
    `limit` only when given."""
    return find_symbols(store, query, kinds=kinds, repositories=repositories, limit=limit,
                        names=names)[0]


def find_symbols(
    store: IndexStore,
    query: str,
    *,
    kinds: Sequence[str] | None = None,
    repositories: Sequence[str] | None = None,
    limit: int | None = None,
    names: SymbolNames | None = None,
) -> tuple[list[SymbolItem], int]:
    """(the first `limit` symbols matching `query`, best first; how many match in all).

    `names`: the distinct names in memory (`search.symbol_names`), current for this
    store's text; the answer is the same with or without them, but with them only the
    rows of the names on the page are read."""
    container_q, name_q = split_query(query)
    if not name_q:
        return [], 0
    filters, params = _filter_sql(store, container_q, kinds, repositories)
    if names is None:
        like, like_params = store.dialect.like_nocase("s.name", like_pattern(name_q))
        rows = store.symbol_rows(like + filters, [*like_params, *params])
        ranked = _ranked_rows(name_q, rows, {})
        return ranked[:limit] if limit is not None else ranked, len(ranked)
    if filters or limit is None:  # every row of every matching name is needed
        ranks = {n: r for i in names.matching(name_q)
                 if (r := rank_symbol(name_q, n := names.names[i])) is not None}
        rows = _rows_named(store, list(ranks), filters, params)
        ranked = _ranked_rows(name_q, rows, ranks)
        return ranked[:limit] if limit is not None else ranked, len(ranked)
    page, ranks, total = page_names(name_q, names, limit)
    rows = _rows_named(store, page, "", [])
    return _ranked_rows(name_q, rows, ranks)[:limit], total


def page_names(name_q: str, names: SymbolNames, limit: int
               ) -> tuple[list[str], dict[str, tuple[int, int]], int]:
    """(the names whose rows make the first `limit` results, best first, in whole groups
    of equal (tier, quality, length); the ranks known; how many rows match in all), from
    the names in memory and their row counts, without reading a row."""
    count = {names.names[i]: int(names.counts[i]) for i in names.matching(name_q)}
    ranks, fuzzy = _ranked_names(name_q, list(count))
    total = sum(count[n] for n in ranks) + sum(count[n] for n in fuzzy)
    order = sorted(ranks, key=lambda n: (*ranks[n], len(n)))
    if fuzzy and sum(count[n] for n in order if ranks[n][0] < 3) < limit:  # page goes fuzzy
        ranks.update((n, r) for n in fuzzy if (r := rank_symbol(name_q, n)) is not None)
        order = sorted(ranks, key=lambda n: (*ranks[n], len(n)))
    taken, rows_due = 0, 0
    while taken < len(order) and rows_due < limit:  # whole groups of equal keys only
        key = (*ranks[order[taken]], len(order[taken]))
        while taken < len(order) and (*ranks[order[taken]], len(order[taken])) == key:
            rows_due += count[order[taken]]
            taken += 1
    return order[:taken], ranks, total


def _ranked_names(name_q: str, matched: Sequence[str]
                  ) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """(ranks of the exact, prefix and substring matches; the fuzzy ones, not ranked yet)
    of names that hold `name_q`'s characters in order. An ASCII name that does always
    ranks (`fuzzy_score`), so the fuzzy ones count without their costlier score."""
    ql = name_q.lower()
    ranks: dict[str, tuple[int, int]] = {}
    fuzzy: list[str] = []
    for n in matched:
        if name_q.isascii() and n.isascii() and ql not in n.lower():
            fuzzy.append(n)
        elif (r := rank_symbol(name_q, n)) is not None:
            ranks[n] = r
    return ranks, fuzzy


def _filter_sql(store: IndexStore, container_q: str, kinds: Sequence[str] | None,
                repositories: Sequence[str] | None) -> tuple[str, list[object]]:
    """The SQL after the name condition (` AND ...`) for a container, kinds and
    repositories, and its parameters."""
    sql: list[str] = []
    params: list[object] = []
    if container_q:
        like, like_params = store.dialect.like_nocase(
            "s.container", "%" + re.sub(r"([%_\\])", r"\\\1", container_q) + "%")
        sql.append(" AND " + like)
        params.extend(like_params)
    if kinds:
        sql.append(f" AND lower(s.kind) IN ({','.join('?' * len(kinds))})")
        params.extend(normalize_kind(k) for k in kinds)
    if repositories:
        sql.append(f" AND r.name IN ({','.join('?' * len(repositories))})")
        params.extend(repositories)
    return "".join(sql), params


def _rows_named(store: IndexStore, wanted: Sequence[str], filters: str,
                params: Sequence[object]) -> list[Row]:
    """The symbol rows named exactly one of `wanted` (read through the name index)."""
    keep = set(wanted)
    rows: list[Row] = []
    for i in range(0, len(wanted), _IN_CHUNK):
        named, named_params = store.dialect.in_nocase("s.name", list(wanted[i:i + _IN_CHUNK]))
        rows.extend(r for r in store.symbol_rows(named + filters, [*named_params, *params])
                    if r[0] in keep)
    return rows


def _ranked_rows(name_q: str, rows: Iterable[Row],
                 ranks: Mapping[str, tuple[int, int] | None]) -> list[SymbolItem]:
    """`rows` (`IndexStore.symbol_rows`) that match `name_q`, as items in rank order: one
    `rank_symbol` per distinct name (`ranks` holds those already known)."""
    known = dict(ranks)
    ranked: list[tuple[RankKey, SymbolItem]] = []
    for name, kind, repo, path, line, container, lang, end in rows:
        if name not in known:
            known[name] = rank_symbol(name_q, name)
        rank = known[name]
        if rank is None:
            continue
        item = SymbolItem(name, kind, repo, path, int(line), container, lang, int(end))
        ranked.append(((rank[0], rank[1], len(name), repo, path, int(line)), item))
    ranked.sort(key=lambda pair: pair[0])
    return [item for _key, item in ranked]


def merge_symbols(
    query: str, local: Sequence[SymbolItem], remote: Sequence[SymbolItem]
) -> list[SymbolItem]:
    """Local and Zoekt symbols in one ranking (duplicates by repository, path and line dropped)."""
    name_q = query.strip().rsplit(".", 1)[-1]
    seen: set[tuple[str, str, int]] = set()
    ranked: list[tuple[tuple[int, int, int, str, str, int], SymbolItem]] = []
    for item in [*local, *remote]:
        key = (item.repository, item.path, item.line)
        rank = rank_symbol(name_q, item.name)
        if key in seen or rank is None:
            continue
        seen.add(key)
        ranked.append(((rank[0], rank[1], len(item.name), item.repository, item.path,
                        item.line), item))
    ranked.sort(key=lambda pair: pair[0])
    return [item for _key, item in ranked]
