"""Searches while an `index_repository` job writes: parallel `search` and `semantic_search`
calls through the SDK client all succeed (no "database is locked") and agree with the
answers given before the job started.

The job is held in the middle of its chunking by the gate embedder (every file's text is
written, some files are chunked, the rest are not), so the overlap is certain rather than
a matter of timing;
then it is released and the searching goes on until the job has written and embedded
everything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_types import CallToolResult

from tests.conftest import RepoBuilder
from tests.server.conftest import Env, run_client, text, write_sample

LEXICAL = {"query": "backoff_delays", "limit": 10, "contextLines": 1}
SEMANTIC = {"query": "exponential backoff between attempts", "repository": "sample",
            "limit": 5}


def big_repo(root: Path, files: int = 120) -> RepoBuilder:
    repo = RepoBuilder(root)
    for i in range(files):
        body = "\n\n".join(
            f"def handler_{i}_{j}(request):\n    \"\"\"Handle request kind {j}.\"\"\"\n"
            f"    return request.get('payload_{i}_{j}')" for j in range(6))
        repo.write(f"svc/handlers_{i:03d}.py", body + "\n")
    return repo


def lexical_view(result: CallToolResult) -> Any:
    data = result.structured_content or {}
    return [(f["repository"], f["path"], [m["line"] for m in f["matches"]]) for f in data["files"]]


def semantic_view(result: CallToolResult) -> Any:
    # Ranks, not scores: hybrid fusion uses the keyword leg's BM25 scores, whose term
    # statistics are index-wide, so another repository's files landing moves the numbers.
    data = result.structured_content or {}
    return [(h["repository"], h["path"], h["start_line"]) for h in data["results"]]


async def burst(client: Client, n: int) -> list[tuple[str, CallToolResult]]:
    """`n` search and `n` semantic_search calls at once."""
    out: list[tuple[str, CallToolResult]] = []

    async def one(tool: str, args: dict[str, Any]) -> None:
        out.append((tool, await client.call_tool(tool, args)))

    async with anyio.create_task_group() as tg:
        for _ in range(n):
            tg.start_soon(one, "search", LEXICAL)
            tg.start_soon(one, "semantic_search", SEMANTIC)
    return out


def check(results: list[tuple[str, CallToolResult]], expected: dict[str, Any]) -> None:
    for tool, result in results:
        assert not result.is_error, f"{tool}: {text(result)}"
        assert "database is locked" not in text(result)
        view = lexical_view(result) if tool == "search" else semantic_view(result)
        assert view == expected[tool], tool


def test_parallel_searches_succeed_and_agree_while_an_index_job_runs(
    env_factory: Any, tmp_path: Path
):
    sample = write_sample(RepoBuilder(tmp_path / "sample"))
    big = big_repo(tmp_path / "big")
    env: Env = env_factory(**{"server.allowed_roots": [str(tmp_path)],
                              "server.index_wait_seconds": 0})
    first = env.call("index_repository", {"path": str(sample.root)})
    job = (first.structured_content or {}).get("job_id") or "idx-1"
    assert not env.call("index_status", {"job_id": job, "wait_seconds": 60}).is_error
    expected = {"search": lexical_view(env.call("search", LEXICAL)),
                "semantic_search": semantic_view(env.call("semantic_search", SEMANTIC))}
    assert expected["search"] and expected["semantic_search"]

    env.embedder.arm(after=40)  # hold the big job partway through its chunking
    started = env.call("index_repository", {"path": str(big.root)})
    assert not started.is_error and (started.structured_content or {})["job_id"] == "idx-2"
    assert env.embedder.reached.wait(30), "the index job never reached the gate"

    async def while_held(client: Client) -> tuple[list[Any], CallToolResult]:
        results = await burst(client, 6)
        return results, await client.call_tool("search", LEXICAL)

    for mode in ("auto", "legacy"):
        results, probe = run_client(env.server, while_held, mode=mode)
        check(results, expected)
        fresh = {f["repository"]: f for f in (probe.structured_content or {})["freshness"]}
        assert fresh["big"]["indexing"] is True and fresh["sample"]["indexing"] is False
    held = env.jobs.get("idx-2").snapshot()
    assert held.state.value == "running" and held.phase == "chunk"
    written = env.call("search_files", {"pattern": "handlers_*.py", "limit": 500})
    # a job half done: every file's text is written (searchable), chunking is under way
    assert (written.structured_content or {})["file_count"] == 120

    env.embedder.release()

    async def until_done(client: Client) -> int:
        rounds = 0
        while not env.jobs.get("idx-2").snapshot().finished:
            check(await burst(client, 3), expected)
            rounds += 1
        check(await burst(client, 3), expected)
        return rounds

    run_client(env.server, until_done)
    final = env.call("index_status", {"job_id": "idx-2", "wait_seconds": 60})
    job_data = (final.structured_content or {})["jobs"][0]
    assert job_data["state"] == "succeeded", text(final)
    assert job_data["result"]["files_indexed"] == 120
    sym = env.call("search_symbols", {"query": "handler_119_5"})
    assert "| `handler_119_5` | function |" in text(sym)
