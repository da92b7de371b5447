"""`UseCases`: the one interface the CLI and the MCP tools call.

Two things implement it: `Service` (the use cases run in this process) and
`server.daemon.client.DaemonClient` (the same calls sent to the `ctxd daemon` of the index
home, which runs them on its own `Service`). Both return the same records and raise the
same `CtxdError`s, so an edge renders one result the same way whichever ran it.

The use cases with a request record (`server.requests`) are a table here: `UseCase(record,
result)` gives the method the record's signature, builds the record from the call and hands
it to the implementation's `answer(name, request)`. A use case's arguments are written
once, in its record. `index` keeps its own signature: its callbacks (progress, lock wait,
stop) never cross the daemon's socket.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

from ctxd.search.graph.models import CallPaths, Calls, Impact, Refs
from ctxd.search.models import FileContent, References, SymbolPage
from ctxd.server.config import Settings
from ctxd.server.pages import LexicalPage, SearchPage
from ctxd.server.requests import (
    CallPathRequest,
    CallsRequest,
    ExplainRequest,
    FileContentRequest,
    FilesRequest,
    GraphRefsRequest,
    ImpactRequest,
    LexicalRequest,
    ReferencesRequest,
    SearchRequest,
    SymbolsRequest,
)

if TYPE_CHECKING:  # annotations only: importing the pipeline costs start-up time
    from ctxd.indexer.models import IndexStats, ProgressFn

P = ParamSpec("P")
R = TypeVar("R")


class UseCase(Generic[P, R]):
    """A use case answered with a request record: on an instance, a method taking the
    record's arguments (and carrying its signature, which the daemon checks params
    against)."""

    def __init__(self, record: Callable[P, Any], result: type[R]) -> None:
        self.record = record
        self.result = result
        self.name = ""
        self.signature = inspect.signature(record).replace(return_annotation=result.__name__)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> UseCase[P, R]: ...

    @overload
    def __get__(self, obj: UseCases, owner: type) -> Callable[P, R]: ...

    def __get__(self, obj: UseCases | None, owner: type) -> UseCase[P, R] | Callable[P, R]:
        if obj is None:
            return self
        record, name = self.record, self.name

        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            out: R = obj.answer(name, record(*args, **kwargs))
            return out

        call.__name__ = call.__qualname__ = name
        call.__signature__ = self.signature  # type: ignore[attr-defined]
        return call


class UseCases:
    """What `Service` offers the edges (see the collaborators' methods for arguments and
    errors: `server.search_cases`, `server.file_access`, `server.inventory`,
    `server.indexing`)."""

    settings: Settings

    search = UseCase(SearchRequest, SearchPage)
    explain = UseCase(ExplainRequest, str)
    lexical = UseCase(LexicalRequest, LexicalPage)
    files = UseCase(FilesRequest, LexicalPage)
    references = UseCase(ReferencesRequest, References)
    symbols = UseCase(SymbolsRequest, SymbolPage)
    file_content = UseCase(FileContentRequest, FileContent)
    graph_refs = UseCase(GraphRefsRequest, Refs)
    calls = UseCase(CallsRequest, Calls)
    call_path = UseCase(CallPathRequest, CallPaths)
    impact = UseCase(ImpactRequest, Impact)

    def answer(self, name: str, request: Any) -> Any:
        """Run the use case `name` for its request record."""
        raise NotImplementedError

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
    ) -> IndexStats:
        raise NotImplementedError

    def status(self) -> dict[str, Any]:
        raise NotImplementedError

    def list_repos(self, filter: str | None = None) -> dict[str, Any]:
        raise NotImplementedError

    def health(self) -> dict[str, Any]:
        raise NotImplementedError

    def repo_roots(self) -> dict[str, str]:
        raise NotImplementedError

    def freshness(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def remove(self, name_or_path: str) -> dict[str, Any]:
        raise NotImplementedError

    def compact(self) -> dict[str, Any]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError
