"""A hostile MCP client gets a clear answer to everything it sends (issue 23, items 4 and
13): arguments validated strictly against the published schema, nothing echoed back in
bulk, deep nesting refused, and on stdio every request with an id answered, however
malformed.

Tools through the SDK's in-memory client over a real index (fake embedder); `ctxd serve`
over stdio as a real process fed raw JSON lines; the CLI through CliRunner.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.mcp.stdio import MAX_DEPTH, depth, refusal, top_level_id
from ctxd.server.service import Service
from ctxd.server.text_args import MAX_FILTER_LENGTH
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import Env, text
from tests.server.mcp.test_mcp_tools import err, ok
from tests.server.serving import serve_command, server_env

# -- item 13: arguments are held to the schema tools/list publishes ----------------------------


@pytest.mark.parametrize(("value", "sent"), [("10", '"10"'), (True, "true"), (5.5, "5.5"),
                                             ("5.5", '"5.5"'), (False, "false")])
def test_a_limit_that_is_not_an_integer_is_refused_whatever_its_type(
    indexed: Env, value: Any, sent: str
):
    body = err(indexed.call("search", {"query": "retry", "limit": value}), "validation_error")
    assert (f"invalid arguments for search: limit: got {sent}, expected an integer from 1 to "
            "100") in body
    body = err(indexed.call("semantic_search", {"query": "retry", "limit": value,
                                                "mode": "keyword"}), "validation_error")
    assert f"limit: got {sent}, expected an integer" in body


def test_an_integral_number_is_an_integer_as_json_schema_says(indexed: Env):
    assert ok(indexed.call("search", {"query": "retry", "limit": 10.0}))["files"]


def test_a_huge_list_repos_filter_is_refused_without_being_echoed(indexed: Env):
    result = indexed.call("list_repos", {"filter": "a" * 1_000_000})
    body = err(result, "validation_error")
    assert len(body) < 2000, len(body)
    assert f"of at most {MAX_FILTER_LENGTH} characters" in body
    assert ok(indexed.call("list_repos", {"filter": "^sam"}))["repositories"]


def test_the_cli_refuses_a_huge_repos_filter_too(isolated_env: Path):
    r = CliRunner().invoke(main, ["--no-daemon", "repos", "--filter", "x" * 5000, "--json"])
    assert r.exit_code == 2, r.output
    body = json.loads(r.output)
    assert body["error"] == "validation_error" and len(r.output) < 2000
    assert body["message"] == f"filter is 5000 characters long; at most {MAX_FILTER_LENGTH}"


@pytest.mark.parametrize("tool_args", [
    ("search", {"query": "retry", "limit": "7" * 100_000}),
    ("search", {"query": "retry", "nonsense": "n" * 100_000}),
    ("search", {"query": "retry\x01" + "q" * 100_000}),
])
def test_no_error_echoes_a_long_value_back(indexed: Env, tool_args: tuple[str, dict[str, Any]]):
    tool, args = tool_args
    body = err(indexed.call(tool, args), "validation_error")
    assert len(body) < 3000, body[:500]


def test_arguments_nested_too_deep_are_refused_without_recursion(indexed: Env):
    value: Any = "retry"
    for _ in range(40):
        value = [value]
    body = err(indexed.call("search", {"query": value}), "validation_error")
    assert "invalid arguments for search: nested deeper than 8 levels" in body
    assert "[[[[" not in body


# -- item 13: `cat --lines 0` is refused like `start_line: 0` ---------------------------------


@pytest.fixture
def indexed_cli(isolated_env: Path, repo: RepoBuilder) -> Iterator[RepoBuilder]:
    repo.write("m.py", "a = 1\nb = 2\nc = 3\n")
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    yield repo


@pytest.mark.parametrize("lines", ["0", "0:2", ":0", "-1", "2:-1"])
def test_cat_refuses_line_zero_as_file_content_does(indexed_cli: RepoBuilder, lines: str):
    r = CliRunner().invoke(main, ["--no-daemon", "cat", "repo", "m.py", "--lines", lines,
                                  "--json"])
    assert r.exit_code == 2, r.output
    assert json.loads(r.output)["error"] == "validation_error"


def test_file_content_of_the_service_refuses_line_zero(indexed_cli: RepoBuilder):
    service = Service(load_settings({}), embedder=FakeEmbedder())
    try:
        with pytest.raises(Exception, match=r"invalid line range 0:3"):
            service.file_content("repo", "m.py", start_line=0)
    finally:
        service.close()


# -- item 13 and 4: on stdio, every request with an id is answered ----------------------------


def test_refusal_reads_the_id_of_a_line_too_deep_to_parse():
    deep = '{"jsonrpc": "2.0", "id": 42, "method": "tools/call", "params": {"a": ' + (
        "[" * 100_000 + "]" * 100_000) + "}}"
    assert depth(deep) == 100_002 and top_level_id(deep) == 42
    answer = refusal(deep)
    assert answer is not None and answer.id == 42 and answer.code == -32600
    assert top_level_id('{"params": {"id": 1}, "id": "x"}') == "x"
    assert refusal('{"jsonrpc": "2.0", "method": "notifications/x", "params": 5}') is None
    assert refusal('{"jsonrpc": "2.0", "id": 3, "result": {}}') is None


class StdioServer:
    """`ctxd serve` over stdio as a real process, fed raw lines."""

    def __init__(self, tmp_path: Path) -> None:
        self.errlog = (tmp_path / "stderr.log").open("wb")
        self.proc = subprocess.Popen(
            [*serve_command(), "--transport", "stdio"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.errlog, env=server_env(tmp_path),
            cwd=str(tmp_path))
        self.buffer = b""

    def send(self, line: bytes | dict[str, Any]) -> None:
        data = line if isinstance(line, bytes) else json.dumps(line).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(data + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 60) -> dict[str, Any]:
        """The next message on stdout (fails when none comes within `timeout`)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            assert ready, "no answer: the client would wait forever"
            chunk = os.read(fd, 1 << 16)
            assert chunk, "the server closed stdout"
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def close(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=60)
        finally:
            self.proc.stdout.close()
            self.errlog.close()


MALFORMED = [
    (b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":5}', 11, -32602),
    (b'{"jsonrpc":"2.0","id":"s-12","method":"tools/call","params":[1,2]}', "s-12", -32602),
    (b'{"jsonrpc":"2.0","id":13,"method":5}', 13, -32600),
    (b'{"jsonrpc":"1.0","id":14,"method":"tools/list"}', 14, -32600),
    (b'{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"search","arguments":'
     b'{"query":' + b"[" * 500 + b"]" * 500 + b"}}}", 15, -32600),
    (b'{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"search","arguments":'
     b'{"query":' + b"[" * 100_000 + b"]" * 100_000 + b"}}}", 16, -32600),
    (b"this is not json", None, -32700),
]


def test_every_malformed_request_on_stdio_gets_an_answer(tmp_path: Path):
    server = StdioServer(tmp_path)
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "hostile", "version": "0"}}})
        assert server.receive(timeout=120)["id"] == 1
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for line, rid, code in MALFORMED:
            server.send(line)
            answer = server.receive()
            assert answer["id"] == rid and answer["error"]["code"] == code, (line[:80], answer)
            if code != -32700:
                assert str(MAX_DEPTH) in answer["error"]["message"] or "Invalid" in (
                    answer["error"]["message"])
        server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "list_repos", "arguments": {}}})
        alive = server.receive()
        assert alive["id"] == 2 and "result" in alive  # and it still serves
    finally:
        assert server.close() == 0
    assert "Traceback" not in (tmp_path / "stderr.log").read_text(encoding="utf-8")


def test_the_answers_are_plain_text_for_the_model(indexed: Env):
    """A refusal is a tool error the model reads, with the hint: no JSON dump of the value."""
    body = text(indexed.call("search", {"query": "retry", "limit": "10"}))
    assert body.startswith("Error executing tool search: validation_error: ")
    assert "Hint: Fix the named arguments" in body
