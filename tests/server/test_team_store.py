"""ctxd over a team's PostgreSQL store, end to end: every CLI command, two machines sharing
one index (a CI job indexes, a laptop with nothing indexed locally answers from the store
through its daemon, which watches only the laptop's own checkouts), and stateless
`ctxd serve` replicas behind a round-robin balancer answering one MCP client.

The session's real PostgreSQL (a fresh schema per test), the real model, real processes.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psycopg
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ctxd.indexer.store.location import redact_url
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths
from tests.conftest import RepoBuilder
from tests.server.conftest import RETRY, text, write_sample
from tests.server.serving import http_serve, server_env

pytestmark = pytest.mark.model

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def ctxd(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`ctxd ARGS` in a fresh process (this test's environment plus `env`)."""
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env}, check=False)


@pytest.fixture
def team(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """This test talks to a team store (CTXD_STORE_URL), in this process."""
    monkeypatch.setenv("CTXD_STORE_URL", pg_url)
    monkeypatch.setenv("CTXD_NO_DAEMON", "1")
    return pg_url


def test_every_command_works_on_a_team_store(team: str, tmp_path: Path) -> None:
    repo = write_sample(RepoBuilder(tmp_path / "sample"))
    r = run("index", str(repo.root), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["files_indexed"] == 4
    r = run("search", "wait longer after each failed attempt", "--json")
    assert json.loads(r.output)["results"][0]["path"] == "net/retry.py"
    r = run("search", "exponential backoff delays", "--mode", "semantic", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["results"][0]["path"] == "net/retry.py"
    r = run("search", "backoff delays", "--mode", "keyword", "--json")
    assert r.exit_code == 0
    assert "net/retry.py" in {h["path"] for h in json.loads(r.output)["results"]}
    r = run("search", "backoff_delays", "--mode", "lexical", "--json")
    assert {f["path"] for f in json.loads(r.output)["results"]} == {"net/retry.py", "main.py"}
    r = run("search", "area of all shapes", "--explain")
    assert "PostgreSQL full text" in r.output and "pgvector HNSW" in r.output
    r = run("symbols", "Circle", "--json")
    assert json.loads(r.output)["items"][0]["path"] == "shapes.py"
    r = run("refs", "total_area", "--json")
    refs = json.loads(r.output)
    assert {d["path"] for d in refs["definitions"]} == {"shapes.py"}
    assert {u["path"] for u in refs["usages"]} == {"main.py"}
    r = run("files", "*.md", "--json")
    assert [f["path"] for f in json.loads(r.output)["results"]] == ["README.md"]
    r = run("cat", "sample", "shapes.py", "--lines", "4:5")
    assert r.exit_code == 0 and "class Shape:" in r.output
    r = run("status", "--json")
    status = json.loads(r.output)
    assert status["engine"] == "postgresql" and status["database"] == redact_url(team)
    assert status["repositories"][0]["name"] == "sample"
    assert status["repositories"][0]["coverage"] == 1.0
    assert run("repos", "--json").exit_code == 0
    r = run("remove", "sample", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["removed"] == "sample"
    assert json.loads(run("status", "--json").output)["repositories"] == []
    r = run("compact", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["database"] == redact_url(team)


def test_two_machines_share_one_index(pg_url: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """CI indexes a repository into the store; a laptop with nothing indexed locally finds
    it through its daemon, reads its files from the store, and watches only its own
    checkout."""
    ci_repo = RepoBuilder(tmp_path / "ci" / "billing")
    ci_repo.write("billing/refund.py", "def refund_order(order):\n"
                  '    """Give the customer their money back for a cancelled order."""\n'
                  "    return order.total\n")
    ci = ctxd("--store", pg_url, "--home", str(tmp_path / "ci-home"), "--no-daemon",
              "index", str(ci_repo.root))
    assert ci.returncode == 0, ci.stderr
    with psycopg.connect(pg_url, autocommit=True) as conn:  # it ran on the CI's runner
        conn.execute("UPDATE repos SET host = 'ci-runner-7'")
    shutil.rmtree(tmp_path / "ci")  # and its checkout is not on the laptop
    laptop = tmp_path / "laptop-home"
    monkeypatch.setenv("CTXD_HOME", str(laptop))
    monkeypatch.setenv("CTXD_STORE_URL", pg_url)
    settings = load_settings()
    paths = DaemonPaths.for_home(settings.home)
    try:
        lifecycle.start(settings, paths)
        found = ctxd("search", "give the money back for a cancelled order", "--json")
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["path"] == "billing/refund.py"
        assert not (laptop / "index.db").exists()  # nothing indexed locally
        cat = ctxd("cat", "billing", "billing/refund.py")
        assert cat.returncode == 0 and "def refund_order" in cat.stdout
        own = RepoBuilder(tmp_path / "laptop" / "shop")
        own.write("net/retry.py", RETRY)
        assert ctxd("index", str(own.root)).returncode == 0  # through the daemon
        status = json.loads(ctxd("status", "--json").stdout)
        assert sorted(r["name"] for r in status["repositories"]) == ["billing", "shop"]
        assert status["engine"] == "postgresql"
        hosts = {r["name"]: r.get("host") for r in status["repositories"]}
        assert hosts["billing"] == "ci-runner-7"
        # the daemon watches the laptop's checkout, not the CI's repository
        own.write("net/fresh.py", "def zebracorn_turbo():\n    return 'fresh'\n")

        def watched_edit() -> bool:
            r = ctxd("search", "zebracorn_turbo", "--mode", "lexical", "--json")
            return r.returncode == 0 and bool(json.loads(r.stdout)["results"])

        for _ in range(60):  # each probe is a whole CLI process: ~0.3-1 s
            if watched_edit():
                break
        else:
            raise AssertionError("the laptop's daemon never indexed the edit")
        health = json.loads(ctxd("status", "--json").stdout)["watch"]
        assert health["running"]
        watched = json.loads((laptop / "watch-status.json").read_text(encoding="utf-8"))
        assert set(watched["repos"]) == {"shop"}
    finally:
        lifecycle.stop(paths, timeout=30)


class RoundRobin(httpx2.AsyncBaseTransport):
    """A load balancer in miniature: each request goes to the next replica's port."""

    def __init__(self, ports: list[int]) -> None:
        self._next = itertools.cycle(ports)
        self.sent: list[int] = []
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        port = next(self._next)
        self.sent.append(port)
        request.url = request.url.copy_with(port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


@pytest.fixture
def replicas(team: str, tmp_path: Path) -> Iterator[list[int]]:
    """Two `ctxd serve --transport http --stateless` replicas over the team store."""
    token = "team-token"
    with contextlib.ExitStack() as stack:
        ports = []
        for i in range(2):
            served = stack.enter_context(http_serve(
                server_env(tmp_path / f"replica-{i}", CTXD_TOKEN=token, CTXD_STORE_URL=team),
                tmp_path, "--stateless"))
            assert any("(stateless)" in line for line in served.reader.seen)
            ports.append(served.port)
        yield ports


def test_stateless_replicas_behind_a_balancer_answer_one_client(
        replicas: list[int], tmp_path: Path) -> None:
    repo = write_sample(RepoBuilder(tmp_path / "sample"))
    assert run("index", str(repo.root)).exit_code == 0  # CI's job, straight into the store
    balancer = RoundRobin(replicas)

    async def main_() -> None:
        http = httpx2.AsyncClient(transport=balancer, timeout=240,
                                  headers={"Authorization": "Bearer team-token"})
        async with http, Client(
                streamable_http_client(f"http://127.0.0.1:{replicas[0]}/mcp", http_client=http),
                read_timeout_seconds=240) as client:
            for _ in range(2):  # every call lands on the other replica than the last
                found = await client.call_tool("search", {"query": "backoff_delays"})
                assert not found.is_error, text(found)
                assert "### sample - net/retry.py" in text(found)
                meaning = await client.call_tool(
                    "semantic_search", {"query": "wait longer after each failed attempt"})
                assert not meaning.is_error, text(meaning)
                assert meaning.structured_content["results"][0]["path"] == "net/retry.py"

    anyio.run(main_)
    assert set(balancer.sent) == set(replicas)
