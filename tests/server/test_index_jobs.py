"""Background index jobs as an MCP client sees them (issue 9, items 9, 12, 14): the default
wait fits a client's request timeout, a second call with other arguments is not silently
merged into a running job, the tool says honestly what left the index, and "indexing"
means a live writer holds the index lock. SDK in-memory client, real SQLite index."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ctxd.server.config import load_settings
from tests.conftest import RepoBuilder
from tests.server.conftest import Env, run_client, text


def details(body: str) -> dict[str, Any]:
    line = next(ln for ln in body.splitlines() if ln.startswith("Details: "))
    return dict(json.loads(line[len("Details: "):]))


def test_default_index_wait_answers_within_a_clients_request_timeout(
    env_factory: Any, sample_repo: RepoBuilder, tmp_path: Path
):
    assert load_settings({"home": str(tmp_path / "h")}).server.index_wait_seconds == 20
    env: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)]})
    env.embedder.arm(after=1)  # the job stops in its walk until released
    started = time.monotonic()
    # A client with the common 60 s request timeout (the former default waited 300 s,
    # so the client gave up and never learnt the job id).
    result = env.call("index_repository", {"path": str(sample_repo.root)},
                      read_timeout_seconds=60)
    waited = time.monotonic() - started
    body = text(result)
    assert result.is_error and ": timeout_error: " in body, body
    assert 19 <= waited < 40
    info = details(body)
    assert info["job_id"] == "idx-1" and info["timeout"] == "20s"
    assert info["state"] == "running" and info["phase"] == "walk"
    assert info["progress"] >= 0 and "total" in info
    assert 'index_status` with `job_id: "idx-1"`' in body
    listed = run_client(env.server, lambda c: c.list_tools())
    tool = next(t for t in listed.tools if t.name == "index_repository")
    assert "default 20 s" in (tool.description or "")
    env.embedder.release()
