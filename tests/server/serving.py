"""Starting `ctxd serve` as a real process, shared by the MCP and team-store tests.

`serve_command()` and `server_env()` make the command and its environment, `free_port()` a
loopback port, `LineReader` reads the server's stderr on a thread (so waits time out), and
`http_serve()` runs `ctxd serve --transport http --port P ...` until its block ends: it
yields once the server says it listens, then terminates it (killing it if it lingers).
"""

from __future__ import annotations

import contextlib
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def serve_command() -> list[str]:
    """`ctxd serve`, run by the console script the install put beside this Python."""
    return [str(Path(sys.executable).parent / "ctxd"), "serve"]


def server_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),
        "CTXD_HOME": str(tmp_path / "ctxd-home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "CTXD_SERVER_ALLOWED_ROOTS": str(tmp_path),
        "CTXD_DAEMON_AUTOSTART": "false",  # in-process; test_daemon.py covers the daemon
        # index_repository answers with the result, not a background job, however slow
        # a busy machine is (tests/server/test_index_jobs.py covers background jobs).
        "CTXD_SERVER_INDEX_WAIT_SECONDS": "1200",
        **({"CTXD_STORE_URL": os.environ["CTXD_STORE_URL"]}
           if os.environ.get("CTXD_STORE_URL") else {}),
        **extra,
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def stop(proc: subprocess.Popen[Any], timeout: float) -> None:
    """End a server process: SIGTERM, and SIGKILL if it has not exited within `timeout`
    seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class LineReader:
    """Reads a subprocess pipe line by line on a thread, so waits can time out."""

    def __init__(self, stream: Any) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        self.thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self.thread.start()

    def _pump(self, stream: Any) -> None:
        for line in iter(stream.readline, ""):
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, needle: str, timeout: float) -> None:
        """Block until a line containing `needle` arrives."""
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError("server exited before it was ready:\n" + "".join(self.seen))
            self.seen.append(line)
            if needle in line:
                return


@dataclass
class Served:
    """A running `ctxd serve --transport http`: its port and its stderr."""

    port: int
    reader: LineReader

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


@contextlib.contextmanager
def http_serve(env: dict[str, str], cwd: Path, *args: str) -> Iterator[Served]:
    """`ctxd serve --transport http --port P ARGS` with exactly `env`, on a free loopback
    port; yields once it listens, stops it afterwards (SIGTERM, then SIGKILL)."""
    port = free_port()
    with subprocess.Popen(
        [*serve_command(), "--transport", "http", "--port", str(port), *args],
        env=env, cwd=str(cwd), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, encoding="utf-8",
    ) as proc:
        reader = LineReader(proc.stderr)
        try:
            reader.wait_for("listening on", timeout=120)
            yield Served(port, reader)
        finally:
            stop(proc, timeout=30)
            reader.thread.join(timeout=10)
