"""Memory and log lines of `ctxd serve --transport http` under abandoned sessions.

    .venv/bin/python bench/bench_http_sessions.py [--requests 3000] [--ctxd PATH]
        [--json out.json]

Starts the real server (`ctxd serve --transport http`, a subprocess on a free loopback
port, in-process use cases, a bearer token, an empty index in a temporary home) and, after
20 warm-up sessions, sends `--requests` hostile requests, one after another, a third of
each kind:

- initialize, read the answer, never come back (the session stays open);
- a POST in an open session that announces a 1,000-byte body and hangs up half-way
  (the SDK logged a `ClientDisconnect` traceback at ERROR for each);
- initialize and hang up before reading the answer.

Reports the server's resident memory (`VmRSS`) before and after, how many requests were
refused with 503 (the session cap), and the ERROR and traceback lines on its stderr.
With `--expire S` the server's sessions expire after S idle seconds
(`CTXD_SERVER_SESSION_IDLE_SECONDS`): the run then waits S + 5 s, counts the sessions
that expired, reads the memory again and opens one more session.
`--ctxd` runs another checkout's console script (e.g. main's, for the baseline), which
must accept the same environment (`CTXD_TOKEN`, `CTXD_HOME`, `MCP_*`).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.stats import emit

TOKEN = "bench-token"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "bench", "version": "0"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
           "Authorization": f"Bearer {TOKEN}"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def raw(port: int, head: str, body: bytes, read: bool) -> None:
    """Send a request head and (part of) a body; read the answer's first bytes or not."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(head.encode() + body)
        if read:
            s.recv(1)


def head(port: int, length: int, session: str | None = None) -> str:
    extra = (f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-11-25\r\n"
             if session else "")
    return (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"{extra}Content-Type: application/json\r\nAccept: application/json, "
            f"text/event-stream\r\nContent-Length: {length}\r\n\r\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=3000)
    ap.add_argument("--ctxd", default=str(Path(sys.executable).parent / "ctxd"))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--expire", type=int, default=0)
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="ctxd-bench-sessions-"))
    port = free_port()
    env = {**os.environ, "CTXD_HOME": str(home / "home"), "CTXD_TOKEN": TOKEN,
           "CTXD_DAEMON_AUTOSTART": "false", "HF_HUB_OFFLINE": "1",
           "XDG_CONFIG_HOME": str(home / "xdg")}
    if args.expire:
        env["CTXD_SERVER_SESSION_IDLE_SECONDS"] = str(args.expire)
    log_path = home / "stderr.log"
    with log_path.open("w", encoding="utf-8") as log, subprocess.Popen(
        [args.ctxd, "serve", "--transport", "http", "--port", str(port)], env=env,
        stdout=subprocess.DEVNULL, stderr=log, cwd=str(home),
    ) as proc:
        try:
            result = run(port, proc, args.requests, log_path)
            if args.expire:
                time.sleep(args.expire + 5)
                with httpx2.Client(timeout=60) as http:
                    again = http.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE,
                                      headers=HEADERS)
                text = log_path.read_text(encoding="utf-8", errors="replace")
                result.update({"expired_sessions": text.count("idle timeout"),
                               "rss_after_expiry_mb": round(rss(proc.pid) / 2**20, 1),
                               "initialize_after_expiry": again.status_code})
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    result.update({
        "ctxd": args.ctxd, "requests": args.requests,
        "error_lines": sum(" ERROR " in ln for ln in text.splitlines()),
        "traceback_lines": text.count("Traceback (most recent call last)"),
        "client_disconnect_mentions": text.count("ClientDisconnect"),
    })
    emit(result, args.json)


def run(port: int, proc: subprocess.Popen[bytes], n: int, log_path: Path) -> dict[str, Any]:
    deadline = time.monotonic() + 180
    while "listening on" not in log_path.read_text(encoding="utf-8", errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("the server did not start:\n" + log_path.read_text())
        time.sleep(0.2)
    statuses: dict[int, int] = {}
    with httpx2.Client(timeout=60) as http:
        warm = [http.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=HEADERS)
                for _ in range(20)]
        session = warm[0].headers["mcp-session-id"]
        time.sleep(2)  # let the warm-up settle before the first reading
        before = rss(proc.pid)
        t0 = time.perf_counter()
        body = b'{"jsonrpc": "2.0", "id": 9, "method": "ping"'
        init = httpx2.Request("POST", "x", json=INITIALIZE).read()
        for i in range(n):
            kind = i % 3
            if kind == 0:
                r = http.post(f"http://127.0.0.1:{port}/mcp", json=INITIALIZE, headers=HEADERS)
                statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
            elif kind == 1:
                raw(port, head(port, 1000, session), body, read=False)
            else:
                raw(port, head(port, len(init)), init, read=False)
        took = time.perf_counter() - t0
        time.sleep(5)  # the hung-up requests finish on the server
        after = rss(proc.pid)
    return {"rss_before_mb": round(before / 2**20, 1), "rss_after_mb": round(after / 2**20, 1),
            "rss_growth_mb": round((after - before) / 2**20, 1),
            "bytes_per_request": round((after - before) / n),
            "initialize_statuses": statuses, "seconds": round(took, 1)}


if __name__ == "__main__":
    main()
