"""The page's guard: who may ask, from where, and what every answer carries.

`Guard(app, gate)` wraps the ASGI app. For every HTTP request, in order:

1. The `Host` header must name the bound address or a loopback name with the bound port
   (`127.0.0.1:P`, `localhost:P`, `[::1]:P`; with a wildcard bind, any IP literal with the
   port): a foreign host is a DNS-rebinding page reaching this server through a name it
   controls; 421, no data.
2. Only GET, HEAD and POST; 405 otherwise.
3. `GET ...?token=T` with the run's token (compared in constant time) logs in: it sets the
   session cookie (HttpOnly, SameSite=Strict, Path=/; named per port, as cookies do not
   tell ports apart) on a page that moves on to the same address without the token
   (`SIGNED_IN_PAGE`).
4. Every other request needs that cookie: without it, 401 and a page saying to open the
   printed address; no data.
5. A POST also needs an `Origin` equal to this server's own (`http://` + the Host checked
   in 1); the form's CSRF field is checked by the endpoint (`Gate.csrf_ok`).

Every answer carries a Content-Security-Policy with scripts and styles from this server
only (no inline script, no `unsafe-inline`), `frame-ancestors 'none'`, `nosniff`,
`Referrer-Policy: same-origin` (no other site sees an address, which may hold the token;
`no-referrer` would make Chromium send `Origin: null` on the page's own forms) and
`no-store`.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from html import escape
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::")

SIGNED_IN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url={target}"><title>ctxd: signed in</title></head>
<body><main><p>Signed in: <a href="{target}">continue</a>.</p></main></body></html>"""
"""The answer to the login address: it sets the cookie and moves on by itself. Not a
redirect: a SameSite=Strict cookie is not sent along a redirect chain that began on
another site (a login link clicked in a web page), but is on this page's own navigation."""

LOGIN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>ctxd: sign in</title></head><body><main><h1>Not signed in</h1>
<p>Open the address <code>ctxd ui</code> printed (it ends in <code>?token=...</code>)
to use this page.</p></main></body></html>"""


@dataclass
class Gate:
    """The run's secrets and the addresses it answers to."""

    host: str
    """The address bound (`127.0.0.1` by default)."""
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    """The login token in the printed address (good for this run)."""
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    """The cookie's value once logged in."""

    @property
    def cookie(self) -> str:
        return f"ctxd_ui_{self.port}"

    @property
    def csrf(self) -> str:
        """The CSRF token the page's forms carry (derived from the session)."""
        return hmac.new(self.session.encode(), b"csrf", hashlib.sha256).hexdigest()[:32]

    def hosts(self) -> set[str]:
        names = {*LOOPBACK_NAMES, self.host if ":" not in self.host else f"[{self.host}]"}
        out = {f"{n}:{self.port}" for n in names}
        if self.port == 80:
            out |= names
        return out

    def host_ok(self, host: str) -> bool:
        """Whether a `Host` header names this server: the bound address or a loopback name
        with the bound port; for a wildcard bind (`0.0.0.0`, `::`) also any IP literal with
        the port (a rebinding attack needs a DNS name; an address is no name)."""
        host = host.lower()
        if host in self.hosts():
            return True
        if self.host not in WILDCARDS:
            return False
        name, _, port = host.rpartition(":")
        try:
            ipaddress.ip_address(name.strip("[]"))
        except ValueError:
            return False
        return port == str(self.port)

    def login_url(self) -> str:
        shown = self.host if ":" not in self.host else f"[{self.host}]"
        if self.host in WILDCARDS:
            shown = "127.0.0.1"
        return f"http://{shown}:{self.port}/?token={self.token}"

    def signed_in(self, request: Request) -> bool:
        return hmac.compare_digest(request.cookies.get(self.cookie, ""), self.session)

    def csrf_ok(self, value: str | None) -> bool:
        return value is not None and hmac.compare_digest(value, self.csrf)


class Guard:
    """The ASGI middleware enforcing `Gate` (see the module's docstring)."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *(h for h in HEADERS if h[0] not in names)]
            await send(message)

        refusal = self.check(Request(scope))
        if refusal is not None:
            await refusal(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)

    def check(self, request: Request) -> Response | None:
        """The refusal (or login redirect) for this request, None to let it through."""
        gate = self.gate
        host = request.headers.get("host", "")
        if not gate.host_ok(host):
            return PlainTextResponse(
                "This ctxd page answers only to its own address "
                f"(http://127.0.0.1:{gate.port}/); the Host header named another.\n",
                status_code=421)
        if request.method not in ("GET", "HEAD", "POST"):
            return PlainTextResponse("Method not allowed.\n", status_code=405,
                                     headers={"allow": "GET, HEAD, POST"})
        token = request.query_params.get("token")
        if token is not None and request.method == "GET":
            if not hmac.compare_digest(token, gate.token):
                return HTMLResponse(LOGIN_PAGE, status_code=401)
            rest = [(k, v) for k, v in parse_qsl(request.url.query, keep_blank_values=True)
                    if k != "token"]
            target = "/" + request.url.path.lstrip("/") + (f"?{urlencode(rest)}" if rest else "")
            response = HTMLResponse(SIGNED_IN_PAGE.format(target=escape(target, quote=True)))
            response.set_cookie(gate.cookie, gate.session, httponly=True, samesite="strict",
                                path="/")
            return response
        if not gate.signed_in(request):
            return HTMLResponse(LOGIN_PAGE, status_code=401)
        if request.method == "POST":
            origin = request.headers.get("origin")
            if origin is None or origin.lower() != f"http://{host.lower()}":
                return PlainTextResponse(
                    "Refused: a change must come from this page (the Origin header was "
                    f"{origin or 'missing'}).\n", status_code=403)
        return None
