"""`UseCases`: the one interface the CLI and the MCP tools call.

Two things implement it: `Service` (the use cases run in this process) and
`server.daemon.client.DaemonClient` (the same calls sent to the `ctxd daemon` of the index
home, which runs them on its own `Service`). Both return the same records and raise the
same `CtxdError`s, so an edge renders one result the same way whichever ran it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ctxd.search.models import FileContent, References, SymbolPage
from ctxd.server.config import Settings
from ctxd.server.pages import LexicalPage, SearchPage

if TYPE_CHECKING:  # annotations only: importing the pipeline costs start-up time
    from ctxd.indexer.models import IndexStats, ProgressFn


class UseCases(Protocol):
    """What `Service` offers the edges (see its methods for arguments and errors)."""

    settings: Settings

    def index(
        self,
        path: str | Path,
        *,
        include_patterns: list[str] | None = None,
        exclude_patterns: list[str] | None = None,
        max_file_size: int | None = None,
        dry_run: bool = False,
        progress: ProgressFn | None = None,
        lock_wait: float | None = None,
        on_lock_wait: Callable[[str], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        force: bool = False,
        reset_options: bool = False,
    ) -> IndexStats: ...

    def search(
        self,
        query: str,
        *,
        mode: str = "semantic",
        limit: int | None = None,
        cursor: str | None = None,
        repositories: list[str] | None = None,
        path_glob: str | None = None,
        language: str | None = None,
        context_lines: int | None = None,
    ) -> SearchPage: ...

    def explain(self, query: str, mode: str) -> str: ...

    def lexical(
        self, query: str, *, limit: int = 30, context_lines: int = 3, cursor: str | None = None
    ) -> LexicalPage: ...

    def files(
        self,
        pattern: str,
        *,
        limit: int = 50,
        cursor: str | None = None,
        repositories: list[str] | None = None,
    ) -> LexicalPage: ...

    def references(
        self,
        symbol: str,
        *,
        language: str | None = None,
        repositories: list[str] | None = None,
        limit: int = 100,
    ) -> References: ...

    def symbols(
        self,
        query: str,
        *,
        kinds: list[str] | None = None,
        max_items: int | None = None,
        start_index: int = 0,
        pagination_id: str | None = None,
        repositories: list[str] | None = None,
    ) -> SymbolPage: ...

    def file_content(
        self,
        repository: str,
        path: str,
        *,
        branch: str = "HEAD",
        start_line: int | None = None,
        end_line: int | None = None,
    ) -> FileContent: ...

    def status(self) -> dict[str, Any]: ...

    def list_repos(self, filter: str | None = None) -> dict[str, Any]: ...

    def health(self) -> dict[str, Any]: ...

    def repo_roots(self) -> dict[str, str]: ...

    def freshness(self) -> list[dict[str, Any]]: ...

    def remove(self, name_or_path: str) -> dict[str, Any]: ...

    def compact(self) -> dict[str, Any]: ...

    def close(self) -> None: ...
