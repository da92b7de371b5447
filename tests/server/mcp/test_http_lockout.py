"""The owner is never locked out of the HTTP server by unauthenticated clients (issue 39,
item 3).

Before: the 256-connection cap was global and a half-open connection lived 5 s, so 300
unauthenticated clients that reconnect as soon as they are closed got 47 of the owner's
48 `initialize` calls a 503. Now a new connection past the cap closes the oldest idle
connection that never sent the token (one waiting for a request's headers) instead of
being refused, and only when every held connection has sent the token or is in the middle
of a request is one more answered 503.

A real `ctxd serve --transport http` (`tests/server/serving.py`); the attackers are a
separate process (300 reconnecting asyncio clients); the owner uses `httpx2`.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx2

from tests.server.mcp.test_http_security import HALF_HEADERS, closed_by_server, http_server
from tests.server.mcp.test_mcp_e2e import HEADERS, INITIALIZE

ATTACKERS = """
import asyncio, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
half = sys.argv[3].encode().decode("unicode_escape").encode("latin-1")
opened = 0

async def one():
    global opened
    while True:
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.01)
            continue
        opened += 1
        try:
            w.write(half)
            await w.drain()
            while await r.read(4096):
                pass
        except OSError:
            pass
        w.close()

async def main():
    tasks = [asyncio.create_task(one()) for _ in range(n)]
    while opened < 2 * n:
        await asyncio.sleep(0.05)
    print("flooding", flush=True)
    await asyncio.gather(*tasks)

asyncio.run(main())
"""


def test_reconnecting_unauthenticated_clients_never_lock_the_owner_out(tmp_path: Path):
    with http_server(tmp_path, CTXD_TOKEN="t0ken") as server:
        with subprocess.Popen(
            [sys.executable, "-c", ATTACKERS, str(server.port), "300",
             HALF_HEADERS.decode("latin-1").encode("unicode_escape").decode()],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        ) as flood:
            try:
                assert flood.stdout is not None
                assert flood.stdout.readline().strip() == "flooding"
                statuses = []
                for _ in range(24):
                    # A new connection each time, as a client started afresh would open.
                    with httpx2.Client(timeout=60) as http:
                        answer = http.post(server.url, json=INITIALIZE, headers={
                            **HEADERS, "Authorization": "Bearer t0ken"})
                    statuses.append(answer.status_code)
                assert flood.poll() is None  # the flood went on the whole time
            finally:
                flood.kill()
        assert statuses == [200] * len(statuses), statuses


def test_the_oldest_unauthenticated_connection_makes_room(tmp_path: Path):
    """256 half-open connections held: one more is taken, and the oldest held one is
    closed by the server without an answer."""
    with http_server(tmp_path, CTXD_TOKEN="t0ken") as server:
        held = []
        try:
            for _ in range(256):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=60)
                s.sendall(HALF_HEADERS)
                held.append(s)
            with httpx2.Client(timeout=60) as http:
                answer = http.post(server.url, json=INITIALIZE,
                                   headers={**HEADERS, "Authorization": "Bearer t0ken"})
            assert answer.status_code == 200, answer.text
            assert closed_by_server(held[0]) == b""
        finally:
            for s in held:
                s.close()


def answered(s: socket.socket) -> bytes:
    """One whole response on `s` (its headers, and a body of its content-length)."""
    got = b""
    while b"\r\n\r\n" not in got:
        got += s.recv(4096)
    head, _, body = got.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        body += s.recv(4096)
    return head


def test_past_the_cap_with_every_connection_authenticated_one_more_is_refused(
        tmp_path: Path):
    """256 connections that sent the token (each answered once, then in the middle of a
    second request): none is closed to make room, and one more is answered 503 with the
    reason."""
    token = b"Authorization: Bearer t0ken\r\nAccept: application/json, text/event-stream\r\n"
    first = b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + token + b"\r\n"
    busy = HALF_HEADERS + token + b"Content-Length: 1000\r\n\r\n{"
    with http_server(tmp_path, CTXD_TOKEN="t0ken") as server:
        held = []
        try:
            for _ in range(256):
                s = socket.create_connection(("127.0.0.1", server.port), timeout=60)
                s.sendall(first)
                assert answered(s).startswith(b"HTTP/1.1 ")
                s.sendall(busy)
                held.append(s)
            with socket.create_connection(("127.0.0.1", server.port), timeout=60) as probe:
                answer = closed_by_server(probe)
            assert answer.startswith(b"HTTP/1.1 503 "), answer
            assert b"Too many open connections (256)" in answer
        finally:
            for s in held:
                s.close()
