"""The definition a lexical hit's first matching line lies in, so that every hit names
its function or class (checkpoint hits carry theirs already).

One indexed lookup per hit: the innermost definition of the file whose lines (from its
name's line to its end) hold that line, named as checkpoints name theirs (`Class.method`:
its container, a dot, its name). A file the local index does not hold (a repository only
Zoekt indexes) or a line outside every definition keeps no symbol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.models import Hit

_ENCLOSING = (
    "SELECT s.name, s.container FROM repos r JOIN files f ON f.repo_id = r.id "
    "JOIN symbols s ON s.file_id = f.id "
    "WHERE r.name = ? AND f.path = ? AND s.line <= ? AND s.end_line >= ? "
    "ORDER BY s.end_line - s.line, s.line DESC LIMIT 1"
)


def with_enclosing_symbols(store: IndexStore, hits: Sequence[Hit]) -> list[Hit]:
    """`hits`, each without a symbol named after the definition around its first
    matching line (when the index has one there)."""
    out = []
    for h in hits:
        if h.symbol is None and h.matches:
            line = min(m.line for m in h.matches)
            rows = store.query(_ENCLOSING, (h.repository, h.path, line, line))
            if rows:
                name, container = rows[0]
                h = replace(h, symbol=f"{container}.{name}" if container else str(name))
        out.append(h)
    return out
