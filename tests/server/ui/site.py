"""A real `ctxd ui` over a real index, shared by the page's tests.

`build_site(tmp)` writes two small repositories (one with a hostile file name and a file
holding `<script>`, one a scratch repository the tests may remove), indexes them in this
process with the fake embedder, and `start_ui(tmp)` runs `ctxd --no-daemon ui --no-open
--port 0` as a real process, returning it with the login address it printed. `request()`
is a bare HTTP call (no redirects followed, any Host header).
"""

from __future__ import annotations

import http.client
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ctxd.server.cli.ui_cmd import bind
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from ctxd.server.ui.app import build_app
from ctxd.server.ui.security import Gate
from tests.conftest import FakeEmbedder
from tests.server.serving import LineReader, serve_command, server_env, stop

HOSTILE_NAME = "<img src=x onerror=alert(1)>.py"
HOSTILE_TEXT = 'BANNER = "<script>document.title=\'pwned\'</script>"\n'

FILES = {
    "pkg/retry.py": '''"""Retry helpers."""


class Retry:
    """Retries with backoff."""

    def __init__(self, total: int = 3) -> None:
        self.total = total

    def increment(self) -> "Retry":
        return Retry(self.total - 1)


def backoff(retry: Retry) -> float:
    return 0.5 * (3 - retry.total)
''',
    "pkg/use.py": '''from pkg.retry import Retry, backoff


def fetch_with_retry(url: str) -> str:
    r = Retry()
    r = r.increment()
    return f"{url} {backoff(r)}"
''',
    "pkg/page.py": HOSTILE_TEXT,
    HOSTILE_NAME: "hostile_marker = 1\n",
    ".env": "API_KEY=sk-live-do-not-serve\n",
    "README.md": "# Demo\n\nRetry helpers for the page tests.\n\n## Usage\n\nCall backoff.\n",
}


@dataclass
class Site:
    tmp: Path
    home: Path
    repo: Path
    scratch: Path


def build_site(tmp: Path) -> Site:
    repo, scratch, home = tmp / "demo", tmp / "scratch", tmp / "ctxd-home"
    for rel, text in FILES.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    scratch.mkdir()
    (scratch / "tmp.py").write_text("def throwaway():\n    return 1\n")
    service = Service(load_settings({"home": str(home)}), embedder=FakeEmbedder())
    try:
        service.index(repo)
        service.index(scratch)
    finally:
        service.close()
    return Site(tmp, home, repo, scratch)


@contextmanager
def start_ui(site: Site, *args: str, daemon: bool = False, **env: str
             ) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`ctxd --no-daemon ui --no-open --port 0 ARGS` (with `env` added to its environment;
    `daemon`: without `--no-daemon`, answered by the running daemon) until the block ends;
    yields the process and the login address it printed on its own line."""
    cmd = [serve_command()[0], *([] if daemon else ["--no-daemon"]), "ui", "--no-open",
           "--port", "0", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=server_env(site.tmp, **env), cwd=site.tmp)
    out, err = LineReader(proc.stdout), LineReader(proc.stderr)
    try:
        line = out.lines.get(timeout=60)
        assert line and line.startswith("http://127.0.0.1:"), (line, err.seen)
        yield proc, line.strip()
    finally:
        stop(proc, 10)
        for reader, stream in ((out, proc.stdout), (err, proc.stderr)):
            reader.thread.join(timeout=5)
            if stream is not None:
                stream.close()


@contextmanager
def serve_in_thread(service: Service) -> Iterator[tuple[str, Gate]]:
    """The page's app over `service` (this process's, e.g. with the fake embedder, so index
    runs from the page succeed) on a real uvicorn on 127.0.0.1, until the block ends;
    yields the base address and the gate (its token and CSRF value)."""
    import uvicorn

    sock = bind("127.0.0.1", 0)
    gate = Gate(host="127.0.0.1", port=sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(build_app(service, gate), log_level="warning",
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("the page's server did not start")
            thread.join(0.01)
        yield f"http://127.0.0.1:{gate.port}", gate
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: str

    @property
    def cookie(self) -> str:
        """`name=value` of the cookie the answer sets."""
        return self.headers.get("set-cookie", "").split(";", 1)[0]


def request(url: str, method: str = "GET", *, cookie: str = "", host: str | None = None,
            headers: dict[str, str] | None = None, body: str | None = None) -> Answer:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    try:
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        all_headers: dict[str, Any] = {"Host": parts.netloc if host is None else host,
                                       **(headers or {})}
        if cookie:
            all_headers["Cookie"] = cookie
        if body is not None:
            all_headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        conn.request(method, target or "/", body=body, headers=all_headers)
        res = conn.getresponse()
        text = res.read().decode("utf-8", "replace")
        return Answer(res.status, {k.lower(): v for k, v in res.getheaders()}, text)
    finally:
        conn.close()
