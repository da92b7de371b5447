"""The few SQL predicates that differ between the store's engines: `Dialect`.

The store's shared reads (`indexer.store.lookups`) and the conditions the search layer
passes them are written in the SQL both engines speak (plain joins, `IN (?, ...)`,
`lower()`, `coalesce`, `count`, `?` placeholders; a store's `query()` takes it as it is).
What differs is asked of the store's `dialect`, one object per engine behind this one
interface, so that no search module tests which engine it talks to:

- `contains(column, text, fold=...)`: a substring test (`instr` / `strpos`);
- `in_values(column, values)`: membership in a list of any length, bound as one
  parameter (`json_each` / `= ANY`);
- `like_nocase(column, pattern)`: `LIKE` ignoring ASCII case (SQLite's `LIKE`, PostgreSQL's
  `ILIKE`), `\\` escaping;
- `in_nocase(column, names)`: equality to one of `names` ignoring case;
- `text_match(lq, file_id)`: the files whose text holds a literal formula
  (`indexer.store.text_formula`), through the engine's trigram index (an FTS5 trigram
  `MATCH`; `ILIKE` tests served by `pg_trgm`).

Each returns `(sql, params)`: SQL with `?` placeholders and the values to bind, in order.
The engines' dialects are `indexer.store.sqlite.dialect` and `indexer.store.pg.dialect`.
Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ctxd.indexer.store.text_formula import LitQuery

Fragment = tuple[str, list[object]]
"""SQL with `?` placeholders and the values to bind."""


class Dialect(Protocol):
    """The engine-specific predicates of the search layer's SQL (see the module)."""

    @property
    def name(self) -> str:
        """`sqlite` or `postgresql`."""
        ...

    def contains(self, column: str, text: str, *, fold: bool) -> Fragment:
        """`column` holds `text` (with `fold`: `lower(column)` holds it; the caller
        lowercases `text`'s ASCII letters)."""
        ...

    def in_values(self, column: str, values: Sequence[int] | Sequence[str]) -> Fragment:
        """`column` is one of `values` (any number of them, bound as one parameter)."""
        ...

    def like_nocase(self, column: str, pattern: str) -> Fragment:
        """`column` matches the `LIKE` pattern ignoring ASCII case (`\\` escapes)."""
        ...

    def in_nocase(self, column: str, names: Sequence[str]) -> Fragment:
        """`column` equals one of `names` ignoring ASCII case (at most `max_params`)."""
        ...

    def text_match(self, lq: LitQuery, file_id: str) -> Fragment | None:
        """`file_id` (a `files.id` column) is a file whose text satisfies `lq`, through
        the trigram index; None when the formula narrows nothing."""
        ...

    def describe_text_match(self, lq: LitQuery) -> str:
        """How `text_match` asks the trigram index, for `ctxd search --explain`."""
        ...

    @property
    def max_params(self) -> int:
        """Parameters one statement may bind."""
        ...
