"""`ctxd serve` end to end, as a subprocess, driven by the `mcp` package's own client.

Over stdio: list the tools, index a temp repository, search it (lexical and semantic, with
the real embedding model), read a file; stdout must carry nothing but protocol. Both run
against each store (the SQLite file; a PostgreSQL store through CTXD_STORE_URL). Over
streamable HTTP on 127.0.0.1 with a bearer token: the same calls with the token, and
requests without it (or with a foreign Host header) are refused. The bind policy
(no non-loopback address without a token) is checked through the click command.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from ctxd.server.mcp.serve import serve
from tests.conftest import RepoBuilder
from tests.server.conftest import TOOLS_EXPECTED, text, write_sample
from tests.server.serving import http_serve, serve_command, server_env

pytestmark = pytest.mark.model


async def exercise(client: Client, repo: Path) -> None:
    """The calls both transports must answer: tools, index, search, semantic search, read."""
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == TOOLS_EXPECTED
    indexed = await client.call_tool("index_repository", {"path": str(repo)})
    assert not indexed.is_error, text(indexed)
    assert indexed.structured_content and indexed.structured_content["files_indexed"] == 4
    found = await client.call_tool("search", {"query": "backoff_delays"})
    assert not found.is_error, text(found)
    assert "### sample - net/retry.py" in text(found)
    meaning = await client.call_tool("semantic_search",
                                     {"query": "wait longer after each failed attempt"})
    assert not meaning.is_error, text(meaning)
    assert meaning.structured_content is not None
    assert meaning.structured_content["results"][0]["path"] == "net/retry.py"
    content = await client.call_tool("file_content",
                                     {"repository": "sample", "path": "shapes.py"})
    assert not content.is_error, text(content)
    assert "class Circle(Shape):" in text(content)


def test_serve_over_stdio_with_the_sdk_client(tmp_path: Path, store_url: str):
    repo = write_sample(RepoBuilder(tmp_path / "sample")).root
    cmd = serve_command()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "--transport", "stdio"],
                                   env=server_env(tmp_path), cwd=str(tmp_path))
    problems: list[BaseException] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a line on stdout that is not protocol
            problems.append(message)

    async def main() -> None:
        with (tmp_path / "stderr.log").open("w", encoding="utf-8") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog), message_handler=on_message,
                              read_timeout_seconds=240) as client:
                await exercise(client, repo)

    anyio.run(main)
    assert problems == []
    log = (tmp_path / "stderr.log").read_text(encoding="utf-8")
    assert "Traceback" not in log


@pytest.fixture
def http_server(tmp_path: Path, store_url: str) -> Iterator[tuple[str, str]]:
    """`ctxd serve --transport http` on a free loopback port with a token."""
    token = "s3cret-token"
    with http_serve(server_env(tmp_path, CTXD_TOKEN=token), tmp_path,
                    "--log-level", "info") as served:
        yield served.url, token


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "test", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_serve_over_http_requires_the_token(http_server: tuple[str, str], tmp_path: Path):
    url, token = http_server
    with httpx2.Client(timeout=30) as http:
        bare = http.post(url, json=INITIALIZE, headers=HEADERS)
        assert bare.status_code == 401
        assert bare.headers["www-authenticate"].startswith("Bearer")
        wrong = http.post(url, json=INITIALIZE,
                          headers={**HEADERS, "Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        rebound = http.post(url, json=INITIALIZE, headers={
            **HEADERS, "Authorization": f"Bearer {token}", "Host": "evil.example:80"})
        assert rebound.status_code == 421
        foreign = http.post(url, json=INITIALIZE, headers={
            **HEADERS, "Authorization": f"Bearer {token}", "Origin": "http://evil.example"})
        assert foreign.status_code == 403
        good = http.post(url, json=INITIALIZE,
                         headers={**HEADERS, "Authorization": f"Bearer {token}"})
        assert good.status_code == 200

    repo = write_sample(RepoBuilder(tmp_path / "sample")).root

    async def main() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(url, http_client=http),
                                read_timeout_seconds=240) as client:
            await exercise(client, repo)

    anyio.run(main)


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path):
    """Only with `--auth none`: by default HTTP always has a token (issue 23)."""
    result = CliRunner().invoke(serve, ["--transport", "http", "--host", "0.0.0.0",
                                        "--auth", "none"],
                                env={"CTXD_HOME": str(tmp_path / "h")})
    assert result.exit_code != 0
    assert "refusing to bind 0.0.0.0 without a token" in str(result.exception or result.output)
