"""`ctxd serve --transport http` is safe by default against other local users and hostile
clients (issue 23, items 1 and 2).

Real servers on 127.0.0.1 started by the tests (`ctxd serve`, stopped by them), the `mcp`
package's own client, raw HTTP for what a hostile client sends, and a second local user
created for the session (`tests/other_user.py`; skipped with the reason when not root).
"""

from __future__ import annotations

import contextlib
import json
import queue
import select
import socket
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import ListRootsResult, Root

from ctxd.server.config import load_settings
from ctxd.server.mcp.http_token import TOKEN_FILE
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.other_user import User, run_as
from tests.server.conftest import text
from tests.server.mcp.test_mcp_e2e import HEADERS, INITIALIZE
from tests.server.serving import LineReader, http_serve, serve_command
from tests.server.serving import server_env as base_env

MARKER = "OWNER_ONLY_7f3a9c"


@dataclass
class Http:
    """A running `ctxd serve --transport http`."""

    url: str
    port: int
    home: Path
    reader: LineReader

    def wait_for(self, needle: str, timeout: float = 60) -> None:
        self.reader.wait_for(needle, timeout)

    def rest(self) -> list[str]:
        """Every stderr line not consumed by `wait_for` (after the server stopped)."""
        out = []
        with contextlib.suppress(queue.Empty):
            while (line := self.reader.lines.get_nowait()) is not None:
                out.append(line)
        return [*self.reader.seen, *out]


@contextlib.contextmanager
def http_server(tmp_path: Path, *args: str, **env: str) -> Iterator[Http]:
    """`ctxd serve --transport http ARGS` on a free loopback port, with `env` on top of the
    test environment (no token and no allowed roots unless given); stopped afterwards."""
    full = {**base_env(tmp_path), **env}
    full = {k: v for k, v in full.items() if v != ""}
    if "CTXD_SERVER_ALLOWED_ROOTS" not in env:
        full.pop("CTXD_SERVER_ALLOWED_ROOTS", None)
    with http_serve(full, tmp_path, *args) as served:
        yield Http(served.url, served.port, Path(full["CTXD_HOME"]), served.reader)


def private_repo(tmp_path: Path) -> RepoBuilder:
    """The owner's repository, indexed (text only), with a marker only its owner may read."""
    repo = RepoBuilder(tmp_path / "private")
    repo.write("billing.py", f'API_NOTE = "{MARKER}"\n')
    service = Service(load_settings({"home": str(tmp_path / "ctxd-home")}),
                      embedder=FakeEmbedder())
    try:
        service.index(repo.root, embed=False)
    finally:
        service.close()
    return repo


ATTACK = """
import http.client, json
PORT, TOKEN_FILE, MARKER = {port}, {token_file!r}, {marker!r}
out = {{}}
try:
    open(TOKEN_FILE).read()
    out["token_file"] = "read"
except OSError as exc:
    out["token_file"] = type(exc).__name__
def post(body, sid=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    h = {{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}}
    if sid:
        h.update({{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}})
    c.request("POST", "/mcp", json.dumps(body), h)
    r = c.getresponse()
    return r.status, r.getheader("mcp-session-id"), r.read().decode()
status, sid, _ = post({initialize})
out["initialize"] = status
out["leaked"] = False
if status == 200:
    post({{"jsonrpc": "2.0", "method": "notifications/initialized"}}, sid)
    call = {{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {{
        "name": "file_content", "arguments": {{"repository": "private", "path": "billing.py"}}}}}}
    out["file_content"], _, body = post(call, sid)
    out["leaked"] = MARKER in body
print(json.dumps(out))
"""


# -- item 1: another local user -----------------------------------------------------------------


def test_a_server_started_without_a_token_setting_keeps_other_users_out(
    tmp_path: Path, other_user: User
):
    private_repo(tmp_path)
    with http_server(tmp_path) as server:
        token_file = server.home / TOKEN_FILE
        said = "\n".join(server.reader.seen)
        assert f"generated a bearer token into {token_file}" in said
        assert f'curl -H "Authorization: Bearer $(cat {token_file})"' in said
        out = run_as(other_user, ATTACK.format(port=server.port, token_file=str(token_file),
                                               marker=MARKER, initialize=INITIALIZE))
        assert out.returncode == 0, out.stderr
        seen = json.loads(out.stdout)
        assert seen == {"token_file": "PermissionError", "initialize": 401, "leaked": False}
        # The owner reads the token and gets in, with the real MCP client.
        token = token_file.read_text(encoding="utf-8").strip()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(server.home.stat().st_mode) == 0o700
        assert MARKER in anyio.run(owner_reads, server.url, token)
    # The next start uses the same token (clients keep working), and says where it is.
    with http_server(tmp_path) as again:
        assert f"bearer token required: it is in {token_file}" in "\n".join(again.reader.seen)
        assert MARKER in anyio.run(owner_reads, again.url, token)


async def owner_reads(url: str, token: str) -> str:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http),
                            read_timeout_seconds=120) as client:
        result = await client.call_tool("file_content", {"repository": "private",
                                                         "path": "billing.py"})
        assert not result.is_error, text(result)
        return text(result)


def test_auth_none_is_said_out_loud_and_still_refused_beyond_loopback(tmp_path: Path):
    with http_server(tmp_path, "--auth", "none") as server:
        assert "no bearer token (auth = none): every local user" in "\n".join(server.reader.seen)
        with httpx2.Client(timeout=60) as http:
            assert http.post(server.url, json=INITIALIZE, headers=HEADERS).status_code == 200
    assert not (tmp_path / "ctxd-home" / TOKEN_FILE).exists()
    refused = subprocess.run(
        [*serve_command(), "--transport", "http", "--host", "0.0.0.0", "--auth", "none"],
        env={**base_env(tmp_path)}, capture_output=True, text=True, timeout=120, check=False)
    assert refused.returncode == 2
    assert "refusing to bind 0.0.0.0 without a token" in refused.stderr


# -- item 1: a client never widens what may be indexed ------------------------------------------


async def index_as_client(url: str, token: str, path: Path, declared: str) -> tuple[bool, str]:
    """index_repository(path, force) from a client that declares `declared` as its root."""

    async def roots(_ctx: Any) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=declared, name="everything")])

    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http),
                            list_roots_callback=roots, read_timeout_seconds=120) as client:
        result = await client.call_tool("index_repository", {"path": str(path), "force": True})
        return result.is_error, text(result)


def test_over_http_client_roots_and_force_never_widen_what_is_indexed(tmp_path: Path):
    secret = RepoBuilder(tmp_path / "elsewhere")
    secret.write("shadow.txt", f"root:{MARKER}:19000:0:99999:7:::\n")
    with http_server(tmp_path, CTXD_TOKEN="t0ken") as server:
        refused, body = anyio.run(index_as_client, server.url, "t0ken", secret.root, "file:///")
        assert refused, body
        assert "validation_error: path" in body and "this HTTP server has no allowed roots" in body
        assert "CTXD_SERVER_ALLOWED_ROOTS" in body
    projects = RepoBuilder(tmp_path / "projects")
    projects.write("app/main.py", "def main():\n    return 1\n")
    with http_server(tmp_path, CTXD_TOKEN="t0ken", CTXD_SERVER_INDEX_WAIT_SECONDS="300",
                     CTXD_SERVER_ALLOWED_ROOTS=str(projects.root)) as server:
        refused, body = anyio.run(index_as_client, server.url, "t0ken", secret.root, "file:///")
        assert refused and "is outside the allowed roots" in body, body
        done, body = anyio.run(index_as_client, server.url, "t0ken", projects.root / "app",
                               "file:///")
        assert not done, body
        assert "## Indexed `app`" in body
    listing = subprocess.run([*serve_command()[:-1], "--no-daemon", "files", "shadow.txt",
                              "--json"], env=base_env(tmp_path), capture_output=True,
                             text=True, timeout=120, check=False)
    assert MARKER not in listing.stdout and listing.returncode == 1, listing.stdout


# -- item 2: sessions expire, are capped, and a hang-up is one debug line -----------------------


def initialize(http: httpx2.Client, url: str, token: str) -> httpx2.Response:
    return http.post(url, json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {token}"})


def test_idle_sessions_expire_and_their_number_is_capped(tmp_path: Path):
    with http_server(tmp_path, CTXD_TOKEN="t0ken", CTXD_SERVER_SESSION_IDLE_SECONDS="2",
                     CTXD_SERVER_MAX_SESSIONS="3") as server, httpx2.Client(timeout=60) as http:
        opened = [initialize(http, server.url, "t0ken") for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 200]
        full = initialize(http, server.url, "t0ken")
        assert full.status_code == 503 and "Too many open sessions" in full.text
        for _ in opened:  # each one ends by itself, without a client DELETE
            server.wait_for("idle timeout", timeout=60)
        assert initialize(http, server.url, "t0ken").status_code == 200
        stale = http.post(server.url, json={"jsonrpc": "2.0", "id": 5, "method": "ping"},
                          headers={**HEADERS, "Authorization": "Bearer t0ken",
                                   "mcp-session-id": opened[0].headers["mcp-session-id"],
                                   "mcp-protocol-version": "2025-11-25"})
        assert stale.status_code == 404  # the client starts a new session, as MCP says


def test_the_defaults_bound_sessions():
    options = load_settings(env={}).server
    assert options.session_idle_seconds == 600 and options.max_sessions == 100


def hang_up(port: int, token: str, session: str) -> None:
    """A POST that announces a body and closes the connection half-way through it."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}"
            f"\r\nmcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream"
            '\r\nContent-Length: 1000\r\n\r\n{"jsonrpc": "2.0", "id": 9, "meth'.encode())


def test_a_client_that_hangs_up_mid_request_is_one_debug_line(tmp_path: Path):
    with http_server(tmp_path, "--log-level", "debug", CTXD_TOKEN="t0ken") as server:
        with httpx2.Client(timeout=60) as http:
            session = initialize(http, server.url, "t0ken").headers["mcp-session-id"]
        for _ in range(3):
            hang_up(server.port, "t0ken", session)
            server.wait_for("HTTP client disconnected before its request was read", timeout=60)
    lines = server.rest()
    logged = "".join(lines)
    assert "Traceback" not in logged and "ClientDisconnect" not in logged
    assert not [ln for ln in lines if " ERROR " in ln], logged[-2000:]
    assert sum("HTTP client disconnected" in ln for ln in lines) == 3


# -- issue 31, item 7: connections that never authenticate are bounded ---------------------

HALF_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def half_open(port: int) -> socket.socket:
    """A connection that sends part of a request's headers and then nothing more."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(HALF_HEADERS)
    return s


def closed_by_server(s: socket.socket) -> bytes:
    """Everything the server sends until it closes `s` (a 60 s socket timeout fails it).

    A reset counts as closed: a connection the server closes before its event loop has read
    the bytes already sent on it (the oldest one, closed to make room while the machine is
    busy) ends in an RST rather than a FIN, and still never had an answer."""
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def test_connections_that_never_send_their_headers_are_capped_and_closed(tmp_path: Path):
    """Another local user opens 256 connections that never finish their headers: one
    more takes the place of the oldest of them (issue 39: the cap no longer answers 503
    while a connection that never sent the token waits; `test_http_lockout.py` has the
    503); every one of them is closed by the server (the header deadline, 5 s); a client
    that sends its headers a byte at a time is closed before they are complete; and then
    the owner's `initialize` is answered."""
    with http_server(tmp_path, CTXD_TOKEN="t0ken") as server:
        held = [half_open(server.port) for _ in range(256)]
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as probe:
                probe.sendall(HALF_HEADERS)
                # The deadline: the server closes each one, never having answered it.
                assert [closed_by_server(s) for s in held] == [b""] * len(held)
                assert closed_by_server(probe) == b""
        finally:
            for s in held:
                s.close()
        # A byte at a time does not move the deadline: closed before the headers are in.
        request = (HALF_HEADERS + b"Authorization: Bearer t0ken\r\n" + b"X-Pad: " + b"a" * 60
                   + b"\r\n\r\n")
        with socket.create_connection(("127.0.0.1", server.port), timeout=60) as slow:
            sent = 0
            while sent < len(request):
                slow.sendall(request[sent:sent + 1])
                sent += 1
                readable, _, _ = select.select([slow], [], [], 0.25)
                if readable:
                    break
            assert sent < len(request) and closed_by_server(slow) == b""
        with httpx2.Client(timeout=60) as http:
            assert initialize(http, server.url, "t0ken").status_code == 200
