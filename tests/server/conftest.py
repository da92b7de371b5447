"""Fixtures for the MCP server tests: a service over a real SQLite file with the fake
embedder, the server built on it, a sample repository, and helpers that call tools through
the SDK's own in-memory client.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from ctxd.server.config import Settings, load_settings
from ctxd.server.jobs import JobManager
from ctxd.server.mcp.tools import build_server
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder

T = TypeVar("T")

TOOLS_EXPECTED = {
    "index_repository", "index_status", "search", "semantic_search", "search_symbols",
    "find_references", "search_files", "file_content", "list_repos", "get_health",
    "find_callers", "find_callees", "trace_call_path",
}

RETRY = '''"""Retrying failed requests with exponential backoff."""
import time


def backoff_delays(attempts, base=0.5, cap=30.0):
    """Exponential backoff: wait longer after every failed attempt, up to a cap."""
    return [min(cap, base * 2 ** n) for n in range(attempts)]


def retry(call, attempts=5):
    """Call `call` until it succeeds, sleeping between attempts."""
    for delay in backoff_delays(attempts):
        try:
            return call()
        except ConnectionError:
            time.sleep(delay)
    raise RuntimeError("gave up")
'''

SHAPES = '''"""Geometric shapes."""


class Shape:
    """A shape with an area."""

    def area(self):
        raise NotImplementedError


class Circle(Shape):
    def __init__(self, radius):
        self.radius = radius

    def area(self):
        return 3.14159 * self.radius ** 2


def total_area(shapes):
    """Sum of the areas of all shapes."""
    return sum(s.area() for s in shapes)
'''

MAIN = '''from shapes import Circle, total_area
from net.retry import retry, backoff_delays


def main():
    print(total_area([Circle(1), Circle(2)]))
    print(backoff_delays(3))
    retry(lambda: None)
'''

README = """# Sample

A sample project: shapes and retries with exponential backoff.

## Usage

Run `python main.py`.
"""


def write_sample(repo: RepoBuilder) -> RepoBuilder:
    repo.write("net/retry.py", RETRY)
    repo.write("shapes.py", SHAPES)
    repo.write("main.py", MAIN)
    repo.write("README.md", README)
    return repo


@pytest.fixture
def sample_repo(tmp_path: Path) -> RepoBuilder:
    return write_sample(RepoBuilder(tmp_path / "sample"))


class GateEmbedder(FakeEmbedder):
    """The fake embedder, plus a gate that can hold an index run in the middle of its walk.

    `count_tokens` is called by the pipeline for every file it chunks, outside the
    embedder's lock, so holding it stops indexing after some files were written without
    blocking query embeddings. `arm(after)` lets `after` more calls through, then blocks
    until `release()`; `reached` is set when a call blocks.
    """

    def __init__(self) -> None:
        super().__init__()
        self.reached = threading.Event()
        self._open = threading.Event()
        self._open.set()
        self._left: int | None = None
        self._lock = threading.Lock()

    def arm(self, after: int = 0) -> None:
        with self._lock:
            self._left = after
            self._open.clear()
            self.reached.clear()

    def release(self) -> None:
        with self._lock:
            self._left = None
        self._open.set()

    def count_tokens(self, texts: list[str]) -> list[int]:
        with self._lock:
            hold = self._left is not None and self._left <= 0
            if self._left is not None:
                self._left -= 1
        if hold:
            self.reached.set()
            if not self._open.wait(timeout=60):
                raise TimeoutError("GateEmbedder was never released")
        return super().count_tokens(texts)


@dataclass
class Env:
    """A running MCP server over a real index."""

    settings: Settings
    service: Service
    jobs: JobManager
    server: MCPServer[Any]
    embedder: GateEmbedder

    def call(self, tool: str, args: dict[str, Any] | None = None, **client: Any) -> CallToolResult:
        """Call one tool through a fresh in-memory client."""
        return run_client(self.server, lambda c: c.call_tool(tool, args or {}), **client)

    def index(self, path: Path | str, **args: Any) -> CallToolResult:
        result = self.call("index_repository", {"path": str(path), **args})
        assert not result.is_error, text(result)
        return result


def run_client(
    server: MCPServer[Any], fn: Callable[[Client], Awaitable[T]], **client: Any
) -> T:
    """Run `fn(client)` with an in-memory client connected to `server`."""

    async def main() -> T:
        async with Client(server, **client) as c:
            return await fn(c)

    return anyio.run(main)


def text(result: CallToolResult) -> str:
    """The text of a tool result (one text block)."""
    return "\n".join(getattr(c, "text", "") for c in result.content)


def make_env(tmp_path: Path, **flags: Any) -> Env:
    settings = load_settings({"home": str(tmp_path / "ctxd-home"), **flags})
    embedder = GateEmbedder()
    service = Service(settings, embedder=embedder)
    jobs = JobManager(service)
    return Env(settings, service, jobs, build_server(service, jobs), embedder)


@pytest.fixture
def env_factory(tmp_path: Path) -> Iterator[Callable[..., Env]]:
    """Build servers with setting overrides (`server.token_budget` etc. as flags)."""
    made: list[Env] = []

    def factory(**flags: Any) -> Env:
        e = make_env(tmp_path, **flags)
        made.append(e)
        return e

    yield factory
    for e in made:
        e.embedder.release()
        e.jobs.shutdown(wait=30)  # joined: no job thread outlives its test
        e.service.close()


@pytest.fixture
def env(env_factory: Callable[..., Env], sample_repo: RepoBuilder) -> Env:
    """A server whose allowed root is the sample repository's parent folder."""
    return env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)]})


@pytest.fixture
def indexed(env: Env, sample_repo: RepoBuilder) -> Env:
    """`env` with the sample repository indexed (as repository `sample`)."""
    env.index(sample_repo.root)
    return env
