"""`ctxd serve` over stdio, where every request gets an answer.

The SDK's stdio transport drops a line it cannot parse as a JSON-RPC message (it only logs
it), so a client that sent a request with an id but bad params (`"params": 5`), a method
that is not a string, or arguments nested too deeply for the parser waited forever.
`serve_stdio(server)` runs the SDK's transport over stdin lines that pass through
`refusal(line)` first: a line the SDK would drop that carries a request id is answered
here with the JSON-RPC error (`-32600` invalid request, `-32602` invalid params; `-32700`
with a null id for a line that is not JSON), and never reaches the server.

`refusal` is pure. Notifications and responses are never answered (JSON-RPC), so they go
on to the SDK as before. The protocol's fd 0 is moved to a private descriptor and fd 0
itself points at the null device while serving, as the SDK does, so child processes
cannot read the protocol.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a message may have (MCP requests need fewer
than ten levels); deeper is refused before any parser recurses into it."""

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|'
                    r"false|null")


@dataclass(frozen=True, slots=True)
class Refusal:
    """The JSON-RPC error that answers a line the server cannot take."""

    id: str | int | None
    code: int
    message: str

    def message_out(self) -> SessionMessage:
        return SessionMessage(types.JSONRPCError(
            jsonrpc="2.0", id=self.id,
            error=types.ErrorData(code=self.code, message=self.message)))


def depth(line: str) -> int:
    """How deeply arrays and objects nest in a JSON text (strings skipped), without
    parsing it."""
    deepest = level = 0
    for m in _TOKEN.finditer(line):
        token = m.group()
        if token in ("[", "{"):
            level += 1
            deepest = max(deepest, level)
        elif token in ("]", "}"):
            level -= 1
    return deepest


def top_level_id(line: str) -> str | int | None:
    """The `id` member of the top-level object of a JSON text, read without parsing the
    rest (which may be too deep to parse); None when there is none to read."""
    level, tokens = 0, []
    for m in _TOKEN.finditer(line):
        token = m.group()
        if level == 1:
            tokens.append(token)
            if len(tokens) >= 3 and tokens[-3] == '"id"' and tokens[-2] == ":":
                try:
                    value = json.loads(token)
                except ValueError:
                    return None
                if isinstance(value, str) or (isinstance(value, int)
                                              and not isinstance(value, bool)):
                    return value
                return None
        if token in ("[", "{"):
            level += 1
        elif token in ("]", "}"):
            level -= 1
    return None


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def refusal(line: str) -> Refusal | None:
    """The answer to a line the SDK would drop without one, or None to pass it on (a valid
    message, or one nobody waits for: a notification, a response, a blank line)."""
    if not line.strip():
        return None
    if depth(line) > MAX_DEPTH:
        rid = top_level_id(line)
        return Refusal(rid, types.INVALID_REQUEST,
                       f"Invalid Request: nested deeper than {MAX_DEPTH} levels")
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except (pydantic.ValidationError, ValueError):
        pass
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return Refusal(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    if not isinstance(msg, dict):
        return Refusal(None, types.INVALID_REQUEST,
                       "Invalid Request: a message must be a JSON object")
    if "method" not in msg or "id" not in msg:
        return None  # a response or a notification: nobody waits for an answer
    rid = msg["id"] if _is_id(msg["id"]) else None
    if not isinstance(msg["method"], str):
        return Refusal(rid, types.INVALID_REQUEST, "Invalid Request: method must be a string")
    if "params" in msg and not isinstance(msg["params"], dict):
        return Refusal(rid, types.INVALID_PARAMS,
                       f"Invalid params: params of {msg['method']} must be an object")
    if not _is_id(msg["id"]):
        return Refusal(None, types.INVALID_REQUEST,
                       "Invalid Request: id must be a string or an integer")
    return Refusal(rid, types.INVALID_REQUEST,
                   "Invalid Request: not a JSON-RPC 2.0 request (jsonrpc must be \"2.0\")")


class GuardedStdin:
    """The stdin lines the SDK's transport reads, less those `refusal` answers."""

    def __init__(self, fd: int) -> None:
        self._file = anyio.wrap_file(io.TextIOWrapper(
            os.fdopen(fd, "rb", closefd=False), encoding="utf-8", errors="replace"))
        self._answers: Any = None
        self._ready = anyio.Event()

    def answer_with(self, write_stream: Any) -> None:
        """Where refusals are sent: the transport's write stream (the SDK writes it)."""
        self._answers = write_stream
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self._file:
            refused = refusal(line)
            if refused is None:
                yield line
                continue
            await self._ready.wait()
            await self._answers.send(refused.message_out())


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve `server` over this process's stdin and stdout until stdin closes."""
    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # children read EOF, not the protocol
    os.close(null)
    stdin = GuardedStdin(private)
    lines: Any = stdin  # the transport iterates it by line, as it would an AsyncFile
    # The low-level server, as MCPServer.run_stdio_async runs it (mcp 2.x has no public
    # handle on it); the SDK claims stdout (fd 1 goes to stderr while serving) as usual.
    low = server._lowlevel_server
    try:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):
            stdin.answer_with(write_stream)
            await low.run(read_stream, write_stream, low.create_initialization_options())
    finally:
        # fd 0 is the protocol again; `private` stays open: a worker thread may still be
        # blocked reading it (the client's stdout broke), and a closed descriptor could be
        # reused under it.
        os.dup2(private, 0)
