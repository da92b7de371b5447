"""Repository names a request scopes itself to: `check_repositories` refuses a name that
neither the index nor Zoekt (when configured) knows, with `not_indexed`, the one
`NOT_FOUND` error for it (the MCP tools raise it too). A Zoekt-only repository is a valid
scope.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxd.indexer.errors import IndexNotFound
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.zoekt.client import ZoektClient


def check_repositories(store: IndexStore, names: tuple[str, ...],
                       zoekt: Callable[[], ZoektClient | None]) -> None:
    """Refuse a repository name that neither the index nor Zoekt (asked only when a name
    is missing from the index) knows.

    Raises:
        IndexNotFound: the first unknown name.
    """
    if not names:
        return
    known = {r.name for r in store.repos()}
    missing = [n for n in names if n not in known]
    client = zoekt() if missing else None
    if client is not None:
        known |= {z.name for z in client.list_repos()}
    for name in missing:
        if name not in known:
            raise not_indexed(name, known)


def not_indexed(name: str, known: set[str]) -> IndexNotFound:
    """The one `NOT_FOUND` error for a repository name that is not indexed."""
    return IndexNotFound(
        f"Repository not indexed: {name}",
        hint=f"Indexed repositories: {', '.join(sorted(known)) or 'none'}. "
        "Run `ctxd index PATH` first (`list_repos` lists them).",
        details={"field": "repository", "value": name},
    )
