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
- holds at most `MAX_CONNECTIONS` (256) connections. One more closes the connection
  that has waited longest for a request's headers among those that never sent the
  server's token (issue 39, item 3: 300 unauthenticated clients reconnecting as soon as
  they were closed kept the cap full, and the owner's `initialize` got 503s), and is
  taken in its place. Only when every held connection has sent the token or is in the
  middle of a request is it answered `503` with the reason and closed at once, before a
  byte of it is read (a warning is logged, at most once a minute). A new connection is
  the newest, so 255 more must arrive before it could be closed this way: the owner's
  headers, sent at once, are in long before.

`guarded_protocol(token)` is uvicorn's h11 protocol with these rules (`GuardedH11Protocol`,
knowing the token, so it can tell whose connections sent it), handed to
`uvicorn.Config(http=...)` by `server.mcp.serve.run_http`. Imports uvicorn (only the HTTP
transport imports this module).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEADER_TIMEOUT_S", "MAX_CONNECTIONS", "GuardedH11Protocol", "guarded_protocol"]

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
    _armed_at = 0.0
    """When it began waiting for a request's headers (`time.monotonic`)."""
    _authed = False
    """Whether a request on it carried the server's token."""
    expected_authorization = b""
    """`Bearer <token>` (`guarded_protocol`); empty: no token, nobody is told apart."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        full = len(self.connections) >= MAX_CONNECTIONS
        super().connection_made(transport)
        if full and not self._make_room():
            self._refuse()
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._header_timer is not None and self.cycle is not self._armed_for:
            self._disarm()
            self._check_token()

    def _check_token(self) -> None:
        """Mark the connection authenticated when the request whose headers just came in
        carries the token (the app checks it again: this only decides who makes room)."""
        expected = self.expected_authorization
        if self._authed or not expected or self.cycle is None:
            return
        given = dict(self.cycle.scope.get("headers") or ()).get(b"authorization", b"")
        self._authed = hmac.compare_digest(given, expected)

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for headers among those that never
        sent the token; whether there was one."""
        waiting = [c for c in self.connections
                   if isinstance(c, GuardedH11Protocol) and c is not self and not c._authed
                   and c._header_timer is not None and not c.transport.is_closing()]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda c: c._armed_at)
        log.debug("HTTP connection from %s closed to make room: it never sent the token and "
                  "has waited %.1f s for headers", oldest.client,
                  time.monotonic() - oldest._armed_at)
        oldest._disarm()
        oldest.transport.close()
        return True

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
        self._armed_at = time.monotonic()
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
                        "server holds), each one authenticated or in a request; each one "
                        "more is answered 503", MAX_CONNECTIONS)
        self.transport.write(TOO_MANY)
        self.transport.close()


def guarded_protocol(token: str) -> type[GuardedH11Protocol]:
    """`GuardedH11Protocol` for a server whose token is `token` ("" without one)."""
    expected = f"Bearer {token}".encode() if token else b""
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"expected_authorization": expected})
