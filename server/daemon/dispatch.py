"""How the daemon answers one request: params decoded, the service picked, the use case
called, the answer or the error encoded.

`answer(conn, msg, views=..., info=..., should_stop=...)` turns one request message into
its answer message (`{"id", "result"}` or `{"id", "error"}`); `Views` keeps the services
for requests that carry other search/walk/chunk settings than the daemon's (a view sharing
the model, the vectors and the index); `index_events` streams an `index` run's progress to
its client. Called by `server.daemon.server.Daemon` from a worker thread; the wire format
is `protocol`.

Invariants:
- A request never takes the daemon down: a `CtxdError` goes back as an error answer, any
  other exception is logged with its traceback and answered as `internal_error`; params
  naming an unknown record type or enum value, an unknown method or arguments the use
  case does not take are a `validation_error`.
- Only `USE_CASES` are called by name; `hello`, `daemon_info` and `shutdown` are answered
  here with `info` (the caller stops the daemon after answering `shutdown`).
- A client that goes away during `index` does not stop the run (its files are committed
  one by one; the events are just no longer sent).
"""

from __future__ import annotations

import inspect
import logging
import os
import socket
import threading
from collections.abc import Callable
from typing import Any

from ctxd.indexer.errors import CtxdError, ValidationError
from ctxd.indexer.models import Progress
from ctxd.server.config import Settings
from ctxd.server.daemon import protocol
from ctxd.server.service import Service

log = logging.getLogger("ctxd.daemon")

USE_CASES = frozenset({
    "index", "search", "explain", "lexical", "files", "references", "symbols",
    "file_content", "status", "list_repos", "health", "freshness", "remove", "repos",
    "compact", "repo_roots", "graph_refs", "calls", "call_path", "impact",
})
"""`Service` methods a client may call by name."""

MAX_VIEWS = 4
"""Services kept for requests with other request settings (`Views`)."""


class Views:
    """The daemon's service, and views of it for requests with their own settings."""

    def __init__(self, service: Service, settings: Settings) -> None:
        self.service = service
        self.settings = settings
        self._lock = threading.Lock()
        self._views: dict[Settings, Service] = {}

    def service_for(self, wire: Any) -> Service:
        """The service that answers with a request's own settings (search, walk, chunk):
        ours when they are the same, else a view sharing our model, vectors and index
        (kept for the next request with the same settings; `MAX_VIEWS` at most)."""
        try:
            settings = protocol.apply_request_settings(self.settings, wire)
        except protocol.ProtocolError as exc:
            raise ValidationError(str(exc), details={"field": "settings"}) from None
        if settings == self.settings:
            return self.service
        with self._lock:
            view = self._views.pop(settings, None)
            if view is None:
                view = self.service.view(settings)
            self._views[settings] = view  # the most recently used last
            for key in list(self._views)[:-MAX_VIEWS]:
                del self._views[key]  # nothing to close: a view's connections are ours
        return view


def answer(conn: socket.socket, msg: dict[str, Any], *, views: Views,
           info: Callable[[bool], dict[str, Any]],
           should_stop: Callable[[], bool]) -> dict[str, Any]:
    """The answer to request `msg` from `conn`: its result, or its error on the wire.
    `info(detail)` answers `hello` and `daemon_info`; `should_stop` ends an `index` run
    at its next checkpoint."""
    rid = msg.get("id")
    method = str(msg.get("method"))
    try:
        result = _dispatch(conn, rid, method, msg.get("params") or {}, msg.get("settings"),
                           views=views, info=info, should_stop=should_stop)
        return {"id": rid, "result": protocol.encode(result)}
    except CtxdError as err:
        return {"id": rid, "error": protocol.error_to_wire(err)}
    except Exception as exc:
        log.exception("request %s failed", method)
        return {"id": rid, "error": protocol.error_to_wire(CtxdError(
            f"{type(exc).__name__}: {exc}",
            hint="This is a bug in ctxd. Re-run with LOG_LEVEL=debug for the traceback."))}


def _dispatch(conn: socket.socket, rid: Any, method: str, raw: Any, settings: Any, *,
              views: Views, info: Callable[[bool], dict[str, Any]],
              should_stop: Callable[[], bool]) -> Any:
    try:
        params = protocol.decode(raw)
    except protocol.ProtocolError as exc:
        raise ValidationError(f"bad params for {method}: {exc}",
                              details={"field": "params", "method": method}) from None
    if not isinstance(params, dict):
        raise ValidationError("params must be an object", details={"field": "params"})
    if method == "hello":
        return info(False)
    if method == "daemon_info":
        return info(True)
    if method == "shutdown":
        return {"pid": os.getpid()}
    if method not in USE_CASES:
        raise ValidationError(f"unknown method {method!r}",
                              details={"field": "method", "value": method})
    if method == "index":
        params.update(index_events(conn, rid, should_stop))
    fn = getattr(views.service_for(settings), method)
    try:
        inspect.signature(fn).bind(**params)
    except TypeError as exc:
        raise ValidationError(f"bad arguments for {method}: {exc}",
                              details={"field": "params", "method": method}) from None
    return fn(**params)


def index_events(conn: socket.socket, rid: Any,
                 should_stop: Callable[[], bool]) -> dict[str, Any]:
    """Progress and lock-wait callbacks that stream events to the client."""
    gone = threading.Event()

    def event(kind: str, data: Any) -> None:
        if gone.is_set():
            return
        try:
            protocol.send(conn, {"id": rid, "event": kind, "data": protocol.encode(data)})
        except OSError:
            gone.set()  # the client left; the run goes on

    def progress(p: Progress) -> None:
        event("progress", p)

    def lock_wait(pid: str) -> None:
        event("lock_wait", pid)

    # `ctxd daemon stop` ends a run at its next checkpoint (the next run resumes it).
    return {"progress": progress, "on_lock_wait": lock_wait, "lock_wait": None,
            "should_stop": should_stop}
