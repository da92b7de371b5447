"""Agents get their project without asking (issue 24 item 9), end to end: the `mcp`
package's own client launches `ctxd serve` (stdio) in an unindexed project folder, as
coding agents do, and finds the project's code without calling `index_repository`; answers
stay in that project (and the folders the client asks it to index) unless a tool says
`all_repos`; `get_health` and `index_status` show
the background job. Started in the home directory instead, the server indexes nothing.
Once more through a running daemon, which then watches the project."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ctxd.server.daemon.client import exchange
from tests.conftest import RepoBuilder
from tests.server.conftest import RETRY, SHAPES, text
from tests.server.daemon.test_daemon import daemons as daemons  # the fixture
from tests.server.serving import serve_command, server_env

pytestmark = pytest.mark.model


def project(root: Path) -> RepoBuilder:
    """A Python project (a manifest, no git) that nobody indexed."""
    proj = RepoBuilder(root)
    proj.write("pyproject.toml", "[project]\nname = 'webshop'\n")
    proj.write("webshop/net/retry.py", RETRY)
    proj.write("webshop/shapes.py", SHAPES)
    return proj


def other_repo(root: Path) -> RepoBuilder:
    other = RepoBuilder(root)
    other.write("legacy/backoff.py", "def backoff_delays(n):\n    \"\"\"Wait longer after each "
                                     "failed attempt, linearly.\"\"\"\n    return list(range(n))\n")
    return other


async def call(client: Client, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, text(result)
    return result


async def wait_for_project(client: Client, root: Path) -> dict[str, Any]:
    """The project as `get_health` shows it, once `index_status` says its job finished."""
    health = (await call(client, "get_health", {})).structured_content
    info = health["project"]
    assert info["root"] == str(root.resolve())
    assert info["job"]["job_id"]
    jobs = (await call(client, "index_status", {})).structured_content["jobs"]
    assert [j["path"] for j in jobs] == [str(root.resolve())]
    done = await call(client, "index_status", {"job_id": info["job"]["job_id"],
                                               "wait_seconds": 180})
    assert done.structured_content["jobs"][0]["state"] == "succeeded", text(done)
    return dict((await call(client, "get_health", {})).structured_content["project"])


def run_server(params: StdioServerParameters, errlog: Path, body: Any) -> None:
    async def main() -> None:
        with errlog.open("a", encoding="utf-8") as log:
            async with Client(stdio_client(params, errlog=log),
                              read_timeout_seconds=240) as client:
                await body(client)

    anyio.run(main)
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


def test_a_server_started_in_a_project_indexes_it_and_answers_from_it(tmp_path: Path):
    proj = project(tmp_path / "webshop")
    other = other_repo(tmp_path / "legacy")
    cmd = serve_command()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "--transport", "stdio"],
                                   env=server_env(tmp_path), cwd=str(proj.root / "webshop"))

    async def body(client: Client) -> None:
        info = await wait_for_project(client, proj.root)
        assert info["repository"] == "webshop" and info["state"] == "indexed"
        assert info["watched_by"] == "this server"
        # found without index_repository
        found = await call(client, "semantic_search",
                           {"query": "wait longer after each failed attempt"})
        assert found.structured_content["results"][0]["path"] == "webshop/net/retry.py"
        # another repository in the index (indexed by someone else): answers stay in the
        # project ...
        q = {"query": "backoff_delays wait longer after each failed attempt"}
        scoped = await call(client, "semantic_search", q)
        assert {r["repository"] for r in scoped.structured_content["results"]} == {"webshop"}
        lexical = await call(client, "search", {"query": "backoff_delays"})
        assert {f["repository"] for f in lexical.structured_content["files"]} == {"webshop"}
        # ... unless a tool argument widens them
        wide = await call(client, "semantic_search", {**q, "all_repos": True})
        assert {r["repository"] for r in wide.structured_content["results"]} == {
            "webshop", "legacy"}
        listed = await call(client, "list_repos", {})
        assert {r["name"] for r in listed.structured_content["repositories"]} == {
            "webshop", "legacy"}
        # a folder the client asks this server to index is searched beside the project
        await call(client, "index_repository", {"path": str(asked.root)})
        both = await call(client, "search", {"query": "backoff_delays"})
        assert {f["repository"] for f in both.structured_content["files"]} == {
            "webshop", "asked"}

    indexed = subprocess.run([*cmd[:-1], "index", str(other.root)], env=params.env,
                             capture_output=True, text=True, timeout=600, check=False)
    assert indexed.returncode == 0, indexed.stderr
    asked = other_repo(tmp_path / "asked")
    run_server(params, tmp_path / "stderr.log", body)


def test_a_server_started_in_the_home_directory_indexes_nothing(tmp_path: Path):
    project(tmp_path / "webshop")  # a project below, but the server is not in it
    cmd = serve_command()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "--transport", "stdio"],
                                   env=server_env(tmp_path), cwd=str(tmp_path))

    async def body(client: Client) -> None:
        health = (await call(client, "get_health", {})).structured_content
        assert health["project"] is None
        assert (await call(client, "index_status", {})).structured_content["jobs"] == []
        listed = await call(client, "list_repos", {})
        assert listed.structured_content["repositories"] == []

    run_server(params, tmp_path / "stderr.log", body)
    assert "started outside any project" in (tmp_path / "stderr.log").read_text(encoding="utf-8")


def test_through_the_daemon_the_project_is_indexed_and_watched_there(tmp_path: Path, daemons):
    proj = project(tmp_path / "webshop")
    daemons.start()
    paths = daemons.paths()
    cmd = serve_command()
    params = StdioServerParameters(
        command=cmd[0], args=[*cmd[1:], "--transport", "stdio"], cwd=str(proj.root),
        env={**server_env(tmp_path, CTXD_DAEMON_AUTOSTART="true"),
             "CTXD_HOME": os.environ["CTXD_HOME"]})
    before = exchange(paths, "daemon_info")["requests"]

    async def body(client: Client) -> None:
        info = await wait_for_project(client, proj.root)
        assert info["repository"] == "webshop" and info["watched_by"] == "daemon"
        found = await call(client, "semantic_search",
                           {"query": "wait longer after each failed attempt"})
        assert found.structured_content["results"][0]["path"] == "webshop/net/retry.py"

    run_server(params, tmp_path / "stderr.log", body)
    assert exchange(paths, "daemon_info")["requests"] > before  # the run and searches went there
    # The daemon's watcher takes up repositories indexed while it runs at its next look at
    # the index (every 2 s): another process's state, read until it shows or time runs out.
    deadline = time.monotonic() + 60
    while "webshop" not in (watching := exchange(paths, "daemon_info")["watching"]):
        assert time.monotonic() < deadline, watching
        time.sleep(0.2)
