"""A stdio client that goes away while `index_repository` runs (issue 9, item 13).

`ctxd serve` runs as a subprocess (wrapped in `sh` so that its exit status is recorded)
driven by the `mcp` package's own stdio client with the real embedding model. The client
starts indexing, waits for the first embedding progress notification, and leaves: it
closes the server's stdin, sends SIGTERM after its 2 s grace period and SIGKILL 2 s later.
The server must notice the disconnect, stop the job at its next checkpoint (the index
stays consistent and the next run resumes), and exit 0 before the SIGKILL: no abort, no
traceback, no "This is a bug in ctxd".
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from ctxd.indexer.store.sqlite.store import Store
from tests.server.serving import serve_command, server_env

pytestmark = pytest.mark.model


def write_big_repo(root: Path, files: int = 150) -> Path:
    """Enough distinct text that embedding takes several seconds on this machine."""
    for i in range(files):
        body = "\n".join(
            f"def handler_{i}_{j}(request):\n    \"\"\"Handle request {i}.{j}: validate the "
            f"payload, look up account {j * 7 + i}, and answer with its balance.\"\"\"\n"
            f"    return lookup(request, {i}, {j})\n"
            for j in range(12)
        )
        (root / f"pkg{i % 10}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 10}" / f"mod_{i}.py").write_text(body, encoding="utf-8")
    return root


@pytest.mark.timeout(1800)
def test_client_disconnect_during_an_index_job_ends_the_server_cleanly(tmp_path: Path):
    repo = write_big_repo(tmp_path / "big")
    status_file = tmp_path / "exit-status"
    errlog_path = tmp_path / "stderr.log"
    serve = " ".join(shlex.quote(a) for a in [*serve_command(), "--transport", "stdio"])
    # The shell survives the client's SIGTERM (a trap with a command, which its child does
    # not inherit) to record how the server ended; only SIGKILL would stop it.
    script = f'trap "echo shell-got-sigterm >&2" TERM; {serve}; echo "$?" > ' + shlex.quote(
        str(status_file))
    params = StdioServerParameters(command="/bin/sh", args=["-c", script],
                                   env=server_env(tmp_path), cwd=str(tmp_path))
    progressed = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if "embedding" in (message or ""):
            progressed.set()

    async def main() -> None:
        with errlog_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=1200) as client:
                async with anyio.create_task_group() as tg:

                    async def index() -> Any:
                        await client.call_tool("index_repository", {"path": str(repo)},
                                               progress_callback=on_progress)

                    tg.start_soon(index)
                    with anyio.fail_after(1200):  # a safety net: slow on a busy machine
                        await progressed.wait()
                    tg.cancel_scope.cancel()  # the client leaves mid-job

    anyio.run(main)
    log = errlog_path.read_text(encoding="utf-8")
    assert status_file.exists(), f"the server was killed, it did not exit by itself:\n{log}"
    assert status_file.read_text(encoding="utf-8").strip() == "0", log
    for bad in ("This is a bug in ctxd", "Traceback", "terminate called", "internal_error"):
        assert bad not in log, log
    assert "client disconnected" in log
    # The index is consistent and says it is not being written.
    store = Store.open(tmp_path / "ctxd-home" / "index.db")
    try:
        (repo_row,) = store.repos()
        assert repo_row.name == "big"
    finally:
        store.close()
