"""The daemon under hostile input from its own user and others (issue 23, items 4 and 13).

Real daemons (the `daemons` fixture stops them), raw Unix-socket clients speaking the
protocol's JSON lines, the CLI as a subprocess, and a second local user created for the
session (`tests/other_user.py`).
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

import pytest

from ctxd.server.daemon import protocol, server
from ctxd.server.daemon.client import exchange
from ctxd.server.daemon.paths import DaemonPaths
from tests.other_user import User, run_as
from tests.server.daemon.test_daemon import ctxd, daemons, short_dir  # noqa: F401  (fixtures)


class Raw:
    """A client that sends whatever bytes it is given, after a real handshake."""

    def __init__(self, paths: DaemonPaths) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(30)
        self.sock.connect(str(paths.socket))
        self.reader = protocol.LineReader(self.sock)
        self.send(b'{"id": 0, "method": "hello", "params": {}}')
        hello = self.reader.receive()
        assert hello is not None and "result" in hello

    def send(self, line: bytes) -> None:
        self.sock.sendall(line + b"\n")

    def ask(self, line: bytes) -> dict[str, Any] | None:
        self.send(line)
        return self.reader.receive()

    def close(self) -> None:
        self.sock.close()


def ask(paths: DaemonPaths, line: bytes) -> dict[str, Any] | None:
    raw = Raw(paths)
    try:
        return raw.ask(line)
    finally:
        raw.close()


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def validation(answer: dict[str, Any] | None) -> str:
    """The message of a `validation_error` answer."""
    assert answer is not None and "error" in answer, answer
    assert answer["error"]["code"] == "validation_error", answer
    assert "bug in ctxd" not in (answer["error"]["hint"] or "")
    return str(answer["error"]["message"])


# -- item 4: deep nesting, unknown records and enum values ----------------------------------


@pytest.mark.parametrize("depth", [100_000, 500, 65])
def test_deeply_nested_params_are_refused_and_the_daemon_lives_on(
    isolated_env, daemons, depth: int  # noqa: F811
):
    info = daemons.start()
    paths = daemons.paths()
    answer = ask(paths, b'{"id": 7, "method": "search", "params": {"query": '
                 + nested(depth) + b"}}")
    message = validation(answer)
    assert f"nested deeper than {protocol.MAX_DEPTH} levels" in message, message
    assert exchange(paths, "daemon_info")["pid"] == info["pid"]  # still serving
    out = ctxd("status", "--json")
    assert out.returncode == 0 and "note:" not in out.stderr, out.stderr


@pytest.mark.parametrize(("params", "said"), [
    (b'{"query": {"$t": "Popen", "args": ["rm"]}}', "unknown record type 'Popen'"),
    (b'{"query": "x", "mode": {"$enum": "MatchSource", "value": "nope"}}',
     "'nope' is not a MatchSource value (one of: semantic"),
    (b'{"query": "x", "mode": {"$enum": "Signals", "value": 9}}', "unknown enum 'Signals'"),
    (b'{"query": {"$t": "LineMatch", "line": 1, "surprise": 2}}', "bad LineMatch record"),
    (b'{"query": {"$tuple": 5}}', "cannot decode"),
    (b'{"query": {"$dict": [1, 2]}}', "cannot decode"),
])
def test_unknown_records_and_enum_values_are_validation_errors(
    isolated_env, daemons, params: bytes, said: str  # noqa: F811
):
    daemons.start()
    paths = daemons.paths()
    message = validation(ask(paths, b'{"id": 3, "method": "search", "params": ' + params + b"}"))
    assert message.startswith("bad params for search: ") and said in message, message
    settings = (b'{"id": 4, "method": "status", "params": {}, "settings": {"search": '
                + params + b"}}")
    settled = validation(ask(paths, settings))
    assert said in settled, settled


def test_a_line_that_is_not_the_protocol_is_answered_then_closed(isolated_env, daemons):  # noqa: F811
    daemons.start()
    paths = daemons.paths()
    raw = Raw(paths)
    try:
        message = validation(raw.ask(b"this is not json"))
        assert message.startswith("not a ctxd daemon request: not a JSON line")
        assert raw.reader.receive() is None  # then closed
    finally:
        raw.close()
    assert exchange(paths, "daemon_info")["pid"]


# -- item 13: refusals say what they are ------------------------------------------------------


def test_the_connection_past_the_cap_is_told_as_a_refusal_not_as_silence(
    isolated_env, daemons  # noqa: F811
):
    info = daemons.start()
    paths = daemons.paths()
    held = [Raw(paths) for _ in range(server.MAX_CONNECTIONS)]  # past their handshake
    try:
        out = ctxd("status", "--json")
        assert out.returncode == 0, out.stderr
        assert (f"note: the ctxd daemon (pid {info['pid']}) refused this connection: the ctxd "
                f"daemon (pid {info['pid']}) has {server.MAX_CONNECTIONS} connections open") in (
                    out.stderr), out.stderr
        assert "does not answer" not in out.stderr
    finally:
        for raw in held:
            raw.close()


def test_another_users_connection_is_refused_as_a_daemon_error(
    isolated_env, daemons, short_dir, other_user: User  # noqa: F811
):
    if not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("needs SO_PEERCRED (Linux) to know the peer's uid")
    info = daemons.start()
    paths = daemons.paths()
    public = short_dir("ctxd-uid-")  # the home is private: a second name for the socket
    public.chmod(0o755)
    link = public / "d.sock"
    os.link(paths.socket, link)
    os.chmod(paths.socket, 0o666)  # even with a wrong mode, the peer check refuses
    try:
        out = run_as(other_user, (
            "import socket\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            f"s.connect({str(link)!r})\n"
            "print(s.makefile().readline().strip())\n"))
    finally:
        link.unlink()
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["error"]["code"] == "DAEMON_ERROR", answer
    assert answer["error"]["message"] == (f"this ctxd daemon serves uid {os.getuid()} only; "
                                          f"refused uid {other_user.uid}")
    assert "--no-daemon" in answer["error"]["hint"]
    assert exchange(paths, "daemon_info")["pid"] == info["pid"]
