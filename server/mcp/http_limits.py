"""Bounds on HTTP connections before they are authenticated: `GuardedH11Protocol`.

The bearer token is checked once a request's headers are in (`server.mcp.serve.BearerAuth`),
so a connection that never finishes its headers never meets it. uvicorn bounds neither
such connections nor their number: its keep-alive timer starts only after a first
response, and `limit_concurrency` answers 503 only to a request whose headers arrived.
Another local user could hold hundreds of half-open connections for as long as they
liked, and with a low descriptor limit the owner's own `initialize` timed out (issue 31,
item 7). As the daemon does for its socket, `ctxd serve --transport http` therefore:

- gives a request's headers `HEADER_TIMEOUT_S` (5 s) from the moment the connection opens,
  or its previous response ended, and closes the connection when they are not all in by
  then (a client that sends one byte at a time gains nothing: the deadline does not move);
- holds at most `MAX_CONNECTIONS` (256) connections: one more is answered `503` with the
  reason and closed at once, before a byte of it is read (a warning is logged, at most
  once a minute).

`GuardedH11Protocol` is uvicorn's h11 protocol with these two rules, handed to
`uvicorn.Config(http=...)` by `server.mcp.serve.run_http`. Imports uvicorn (only the HTTP
transport imports this module).
"""

from __future__ import annotations

import asyncio
import logging
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT_S", "MAX_CONNECTIONS", "GuardedH11Protocol"]

log = logging.getLogger("ctxd.serve")

HEADER_TIMEOUT_S = 5.0
"""Seconds a connection has to send a request's headers (from its opening or the end of
its previous response)."""
MAX_CONNECTIONS = 256
"""Connections the HTTP server holds at once; one more is refused."""
_WARN_EVERY_S = 60.0

_REFUSAL = f"Too many open connections ({MAX_CONNECTIONS}): try again when some close.\n"
TOO_MANY = (b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
            b"connection: close\r\ncontent-length: " + str(len(_REFUSAL)).encode()
            + b"\r\n\r\n" + _REFUSAL.encode())
"""The answer to a connection over `MAX_CONNECTIONS`, written before reading a byte."""


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a cap on connections (module
    docstring)."""

    _last_warning = 0.0
    _header_timer: asyncio.TimerHandle | None = None
    _armed_for: object = None
    """The request cycle current when the deadline was set: a new one means headers came."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        full = len(self.connections) >= MAX_CONNECTIONS
        super().connection_made(transport)
        if full:
            self._refuse()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._armed_for:
            self._disarm()

    def on_response_complete(self) -> None:
        before = self.cycle
        super().on_response_complete()
        if not self.transport.is_closing() and self.cycle is before:
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._armed_for = self.cycle
        self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            log.debug("HTTP connection from %s closed: no request headers within %.0f s",
                      self.client, HEADER_TIMEOUT_S)
            self.transport.close()

    def _refuse(self) -> None:
        now = time.monotonic()
        if now - GuardedH11Protocol._last_warning >= _WARN_EVERY_S:
            GuardedH11Protocol._last_warning = now
            log.warning("refusing HTTP connections: %d are open already (the most this "
                        "server holds); each one more is answered 503", MAX_CONNECTIONS)
        self.transport.write(TOO_MANY)
        self.transport.close()
