"""The definition a lexical hit's first matching line lies in, so that every hit names
its function or class (checkpoint hits carry theirs already).

One statement for a page's hits (`IndexStore.enclosing_symbols`): for each, the innermost
definition of the file whose lines (from its name's line to its end) hold that line,
named as checkpoints name theirs (`Class.method`: its container, a dot, its name). A file
the local index does not hold (a repository only Zoekt indexes) or a line outside every
definition keeps no symbol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.models import Hit


def with_enclosing_symbols(store: IndexStore, hits: Sequence[Hit]) -> list[Hit]:
    """`hits`, each without a symbol named after the definition around its first
    matching line (when the index has one there)."""
    asked = [k for k, h in enumerate(hits) if h.symbol is None and h.matches]
    found = store.enclosing_symbols(
        [(hits[k].repository, hits[k].path, min(m.line for m in hits[k].matches))
         for k in asked]) if asked else []
    out = list(hits)
    for k, row in zip(asked, found, strict=True):
        if row is not None:
            name, container = row
            out[k] = replace(out[k], symbol=f"{container}.{name}" if container else name)
    return out
