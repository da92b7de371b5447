"""The HTTP token check says plainly that a static bearer token is expected, and OAuth
discovery ends at a 404 instead of a 401 (issue 9, item 2).

The real ASGI app of `ctxd serve --transport http` (the SDK's streamable-HTTP app behind
`BearerAuth`), driven in process through httpx2's ASGI transport; the end-to-end run over a
socket, with the right token getting through, is in test_mcp_e2e.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import anyio
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider, OAuthRegistrationError
from mcp.shared.auth import OAuthClientMetadata
from pydantic import AnyUrl

from ctxd.server.mcp.serve import http_app
from tests.server.conftest import Env

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
TOKEN = "s3cret-token"


def requests(env: Env, calls: list[tuple[str, str, dict[str, str]]]) -> list[httpx2.Response]:
    options = replace(env.settings.server, token=TOKEN)
    app = http_app(env.server, options)

    async def main() -> list[httpx2.Response]:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
            out = []
            for method, path, headers in calls:
                body: Any = INITIALIZE if method == "POST" else None
                out.append(await c.request(method, path, json=body,
                                           headers={**HEADERS, **headers}))
            return out

    return anyio.run(main)


def test_a_401_says_a_static_bearer_token_is_expected_and_offers_no_oauth(env: Env):
    bare, wrong = requests(env, [("POST", "/mcp", {}),
                                 ("POST", "/mcp", {"Authorization": "Bearer nope"})])
    assert bare.status_code == wrong.status_code == 401
    assert bare.headers["www-authenticate"] == 'Bearer realm="ctxd"'
    assert wrong.headers["www-authenticate"].startswith('Bearer realm="ctxd", '
                                                        'error="invalid_token"')
    for r in (bare, wrong):
        assert "resource_metadata" not in r.headers["www-authenticate"]
        body = r.json()
        assert body["jsonrpc"] == "2.0" and body["id"] is None
        message = body["error"]["message"]
        assert message.startswith("Unauthorized: ")
        assert "does not use OAuth" in message and "static bearer token" in message
        assert "Authorization: Bearer <token>" in message
        assert body["error"]["data"] == {"auth": "static-bearer-token", "oauth": False,
                                         "header": "Authorization: Bearer <CTXD_TOKEN>"}


def test_oauth_discovery_paths_answer_404_with_the_reason_not_401(env: Env):
    paths = ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
             "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration",
             "/register", "/authorize"]
    answers = requests(env, [("GET", p, {}) for p in paths])
    for path, r in zip(paths, answers, strict=True):
        assert r.status_code == 404, path
        assert "www-authenticate" not in r.headers
        assert "does not use OAuth" in json.loads(r.text)["error_description"]


class NoStorage:
    """Token storage of a client that has never logged in."""

    async def get_tokens(self) -> None:
        return None

    async def set_tokens(self, tokens: Any) -> None:
        raise AssertionError("no token can be issued: there is no OAuth here")

    async def get_client_info(self) -> None:
        return None

    async def set_client_info(self, info: Any) -> None:
        raise AssertionError("no client can be registered: there is no OAuth here")


def test_an_oauth_client_stops_at_discovery_with_the_reason_and_opens_no_login(env: Env):
    """The SDK's own OAuth client (what an OAuth-first MCP client runs on a 401) ends its
    discovery at our 404s with the explanation, without ever starting a browser login."""
    app = http_app(env.server, replace(env.settings.server, token=TOKEN))
    logins: list[str] = []

    async def redirect(url: str) -> None:
        logins.append(url)

    async def callback() -> Any:
        raise AssertionError("no login can complete")

    async def main() -> str:
        provider = OAuthClientProvider(
            "http://127.0.0.1/mcp",
            OAuthClientMetadata(redirect_uris=[AnyUrl("http://localhost:9/callback")]),
            NoStorage(), redirect, callback)
        async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app),
                                      base_url="http://127.0.0.1", auth=provider) as c:
            with pytest.raises(OAuthRegistrationError) as exc:
                await c.post("/mcp", json=INITIALIZE, headers=HEADERS)
            return str(exc.value)

    message = anyio.run(main)
    assert "404" in message and "does not use OAuth" in message
    assert "static bearer token" in message and logins == []
