"""MCP clients for `bench/torture.py`: one session of the `mcp` package's own client against
`ctxd serve`, over stdio or over streamable HTTP, in the torture run's home.

Each session optionally calls `index_repository`, then `search` (lexical) and
`semantic_search`, and returns everything the server printed plus the tools' answers, so
the caller can look for internal errors. A tool error the model should read (`is_error`
with a code such as `storage_error`) is fine; a crash or an internal error is not.
"""

from __future__ import annotations

import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.server.serving import stop

CTXD = str(Path(sys.executable).with_name("ctxd"))


async def _exercise(client: Client, repo: str, query: str, index: bool) -> str:
    out = []
    calls: list[tuple[str, dict[str, Any]]] = []
    if index:
        calls.append(("index_repository", {"path": repo}))
    calls += [("search", {"query": query.split()[0]}),
              ("semantic_search", {"query": query})]
    for tool, args in calls:
        result = await client.call_tool(tool, args)
        out.extend(getattr(c, "text", "") for c in result.content)
    return "\n".join(out)


def stdio_session(env: dict[str, str], repo: str, query: str, *, index: bool) -> str:
    """One stdio session; the server's stderr and the answers."""
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        # Launched in the repository, as an agent launches it in its project: started
        # anywhere else, `server.auto_project` would index that folder (the checkout the
        # harness runs from) and every round after would wait for its embedding.
        params = StdioServerParameters(command=CTXD, args=["serve"], cwd=repo, env={
            **env, "CTXD_SERVER_ALLOWED_ROOTS": str(Path(repo).parent)})

        async def main() -> str:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=900) as client:
                return await _exercise(client, repo, query, index)

        try:
            answers = anyio.run(main)
        except BaseException as exc:  # the server's stderr says why the session ended
            errlog.seek(0)
            raise RuntimeError(f"stdio session failed: {exc!r}; the server's stderr:\n"
                               f"{errlog.read()}") from exc
        errlog.seek(0)
        return answers + "\n" + errlog.read()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def http_session(env: dict[str, str], work: Path, repo: str, query: str, *,
                 index: bool) -> str:
    """Start `ctxd serve --transport http` on a free loopback port with a token, run one
    session, stop the server (SIGTERM); its output and the answers."""
    token, port = secrets.token_urlsafe(16), _free_port()
    log_path = work / "http-serve.log"
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [CTXD, "serve", "--transport", "http", "--port", str(port)],
            env={**env, "CTXD_TOKEN": token,
                 "CTXD_SERVER_ALLOWED_ROOTS": str(Path(repo).parent)},
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, cwd=repo)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("`ctxd serve --transport http` did not start:\n"
                                       + log_path.read_text(encoding="utf-8")) from None
                time.sleep(0.1)
        url = f"http://127.0.0.1:{port}/mcp"

        async def main() -> str:
            http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            async with http, Client(streamable_http_client(url, http_client=http),
                                    read_timeout_seconds=900) as client:
                return await _exercise(client, repo, query, index)

        answers = anyio.run(main)
    finally:
        stop(proc, timeout=120)
    return answers + "\n" + log_path.read_text(encoding="utf-8") + f"\nexit {proc.returncode}"


__all__ = ["http_session", "stdio_session"]
