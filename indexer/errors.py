"""One error hierarchy for ctxd.

`CtxdError(message, *, hint=None, details=None)` carries a machine-readable `code`
(the contract's error codes), a CLI `exit_code` and structured `details`. Each
subclass lives here so that every layer can raise and every edge can render them
without importing upward::

    CtxdError                      internal_error
    ├── ValidationError            validation_error   (bad input: field, value, what to do)
    │   ├── ConfigError            validation_error   (config file / env / flag)
    │   ├── PathOutsideRoot        validation_error   (path traversal, allowed roots)
    │   ├── FileRefused            validation_error   (a file the index policy keeps out)
    │   └── AmbiguousSymbol        validation_error   (a name several definitions bear)
    ├── IndexNotFound              NOT_FOUND          (repository not indexed)
    ├── FileNotFound               NOT_FOUND
    ├── JobNotFound                NOT_FOUND          (unknown background job id)
    ├── ToolNotFound               NOT_FOUND          (an MCP tool name this server lacks)
    ├── SymbolNotFound             NOT_FOUND          (no such definition: graph queries)
    ├── ModelMismatch              validation_error   (index built with another model)
    ├── IndexLocked                LOCKED             (another process writes this index)
    ├── QueryError                 QUERY_ERROR
    ├── InvalidCursor              INVALID_CURSOR
    ├── BackendUnavailable         UNAVAILABLE
    ├── BackendTimeout             TIMEOUT
    ├── DaemonError                DAEMON_ERROR       (`ctxd daemon`: cannot start, reach, trust)
    └── StorageError               storage_error      (disk full, read-only, permission, I/O)

The CLI prints `error: <code>: <message>` and the hint; MCP tools raise them and the
server turns them into readable tool errors.
"""

from __future__ import annotations

from typing import Any


class ErrorCode:
    """The error codes on the wire (CLI `--json`, MCP tool errors, the daemon's socket),
    each written once here. They stay as clients already read them: the lower-case ones
    (`validation_error`, `internal_error`, `storage_error`) beside the contract's upper-case
    ones."""

    INTERNAL = "internal_error"
    VALIDATION = "validation_error"
    NOT_FOUND = "NOT_FOUND"
    LOCKED = "LOCKED"
    QUERY_ERROR = "QUERY_ERROR"
    INVALID_CURSOR = "INVALID_CURSOR"
    UNAVAILABLE = "UNAVAILABLE"
    TIMEOUT = "TIMEOUT"
    DAEMON_ERROR = "DAEMON_ERROR"
    STORAGE = "storage_error"


class CtxdError(Exception):
    """Base of every error ctxd reports to a person or an agent."""

    code = ErrorCode.INTERNAL
    exit_code = 2

    def __init__(
        self, message: str, *, hint: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details: dict[str, Any] = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        """The contract's error object: `{"error", "message", "details"}` (+ `hint`)."""
        out: dict[str, Any] = {"error": self.code, "message": self.message, "details": self.details}
        if self.hint:
            out["hint"] = self.hint
        return out


class ValidationError(CtxdError):
    """Invalid input: names the field, the value and what to do next."""

    code = ErrorCode.VALIDATION


class ConfigError(ValidationError):
    """A bad configuration key or value (file, environment or flag)."""


class PathOutsideRoot(ValidationError):
    """A path that resolves outside the allowed root(s)."""


class RootMoved(ValidationError):
    """A stored repository root that is no longer the folder indexed (a symlink or another
    folder in its place): never read, watched or re-indexed (`indexer.walk.rootpin`)."""


class FileRefused(ValidationError):
    """A file a request asked for that the index policy keeps out (a likely secret, an
    ignored, excluded, binary or over-size file): never served, the hint says how to allow
    it."""


class IndexNotFound(CtxdError):
    """The repository asked for is not in the index."""

    code = ErrorCode.NOT_FOUND


class FileNotFound(CtxdError):
    """The file asked for is not in an indexed repository."""

    code = ErrorCode.NOT_FOUND


class JobNotFound(CtxdError):
    """An `index_status` job id this server does not know (ids do not survive a restart)."""

    code = ErrorCode.NOT_FOUND


class ToolNotFound(CtxdError):
    """An MCP tool name this server does not have."""

    code = ErrorCode.NOT_FOUND


class ModelMismatch(ValidationError):
    """The index was built with a different embedding model or dimension."""

    @classmethod
    def check(cls, recorded: tuple[str, int] | None, name: str, dimension: int | None,
              where: str, use_it: str) -> None:
        """Raise one when `recorded` (the store's model and dimension, None before its
        first use) is not `name` (and `dimension`, when known). `where` names the store
        ("The index at PATH"), `use_it` ends the hint after "Set `model = ...`"."""
        if recorded is None:
            return
        rname, rdim = recorded
        if rname != name or (dimension is not None and rdim != dimension):
            raise cls(
                f"{where} was built with model {rname!r} ({rdim} dimensions), "
                f"but the configured model is {name!r}"
                + (f" ({dimension} dimensions)." if dimension else "."),
                hint=f"Set `model = \"{rname}\"` (or CTXD_MODEL) {use_it}",
                details={"field": "model", "index_model": rname, "configured_model": name},
            )


class IndexLocked(CtxdError):
    """Another process holds the write lock on this index."""

    code = ErrorCode.LOCKED


class SymbolNotFound(CtxdError):
    """No definition has the name a graph query was given (or none is at that PATH:LINE)."""

    code = ErrorCode.NOT_FOUND
    exit_code = 1


class AmbiguousSymbol(ValidationError):
    """A name several definitions bear: the graph query lists them and asks which."""


class QueryError(CtxdError):
    """A search query that cannot be parsed or run."""

    code = ErrorCode.QUERY_ERROR


class InvalidCursor(CtxdError):
    """A paging cursor that is malformed or belongs to another query."""

    code = ErrorCode.INVALID_CURSOR


class BackendUnavailable(CtxdError):
    """A service the index depends on cannot be reached: the Zoekt server (or it does not
    speak JSON), or the PostgreSQL store."""

    code = ErrorCode.UNAVAILABLE


class BackendTimeout(CtxdError):
    """The Zoekt server did not answer in time."""

    code = ErrorCode.TIMEOUT


class DaemonError(CtxdError):
    """The background daemon cannot be started, reached or trusted (`ctxd daemon`)."""

    code = ErrorCode.DAEMON_ERROR


class StorageError(CtxdError):
    """The index cannot be written or read: disk full, read-only file system, permission
    denied, I/O error (`indexer.store.storage_errors`). Details name the path, the kind and the
    free space where known; the index stays consistent (a file's rows change in one
    transaction) and the next run completes it."""

    code = ErrorCode.STORAGE
