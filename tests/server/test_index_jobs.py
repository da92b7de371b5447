"""Background index jobs as an MCP client sees them (issue 9, items 9, 12, 14): the default
wait fits a client's request timeout, a second call with other arguments is not silently
merged into a running job, the tool says honestly what left the index, and "indexing"
means a live writer holds the index lock. SDK in-memory client, real SQLite index."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ctxd.server.config import load_settings
from tests.conftest import RepoBuilder
from tests.server.conftest import Env, run_client, text


def test_default_index_wait_answers_within_a_clients_request_timeout(
    env_factory: Any, sample_repo: RepoBuilder, tmp_path: Path
):
    assert load_settings({"home": str(tmp_path / "h")}).server.index_wait_seconds == 20
    env: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)]})
    env.embedder.arm(after=1)  # the job stops in its chunking until released
    started = time.monotonic()
    # A client with the common 60 s request timeout (the former default waited 300 s,
    # so the client gave up and never learnt the job id).
    result = env.call("index_repository", {"path": str(sample_repo.root)},
                      read_timeout_seconds=60)
    waited = time.monotonic() - started
    body = text(result)
    assert not result.is_error, body  # a job going on in the background is no error
    assert waited >= 19  # it waited its 20 s; the client's 60 s read timeout bounds the rest
    info = result.structured_content or {}
    assert info["job_id"] == "idx-1" and "after 20s" in body
    assert info["state"] == "running" and info["phase"] == "chunk"  # text written first
    assert info["progress"] >= 0 and "total" in info
    assert 'index_status` and `job_id: "idx-1"`' in body
    # One progress figure: the walk's count, not a second one in other units.
    assert f"{info['progress']} files walked so far" in body
    assert len(re.findall(r"\d+ (?:of \d+ work items|files walked)", body)) == 1
    listed = run_client(env.server, lambda c: c.list_tools())
    tool = next(t for t in listed.tools if t.name == "index_repository")
    assert "default 20 s" in (tool.description or "")
    env.embedder.release()


WRITER = """
import sys, threading
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder

class Stuck(FakeEmbedder):
    def embed(self, texts):
        print("embedding", flush=True)  # phase 1 is written; the run holds the lock
        threading.Event().wait()

Service(load_settings({"home": sys.argv[1]}), embedder=Stuck()).index(sys.argv[2])
"""


def test_indexing_state_follows_a_live_lock_holder_not_a_stale_start_time(
    env_factory: Any, sample_repo: RepoBuilder, tmp_path: Path
):
    # Issue 9, item 14: a writer killed mid-run leaves `index_started_at` behind; the
    # servers must not report "re-indexing now" for ever after.
    env: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)]})
    home = str(env.settings.home)
    root = Path(__file__).resolve().parents[2]
    writer = subprocess.Popen([sys.executable, "-c", WRITER, home, str(sample_repo.root)],
                              stdout=subprocess.PIPE, text=True, cwd=root,
                              env={**os.environ, "PYTHONPATH": str(root)})
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "embedding"
        (live,) = env.service.freshness()
        assert live["indexing"] is True
        assert "re-indexing now" in text(env.call("index_status", {}))
    finally:
        writer.kill()  # SIGKILL: no cleanup runs, the start time stays in the index
        writer.wait(timeout=30)
        if writer.stdout is not None:
            writer.stdout.close()
    (row,) = env.service.store().repos()
    assert row.index_started_at is not None
    assert env.service.freshness() == [{"repository": "sample", "indexed_at": None,
                                        "indexing": False}]
    assert [r["indexing"] for r in env.service.repos()] == [False]
    assert "re-indexing now" not in text(env.call("index_status", {}))
    listing = env.call("list_repos", {})
    assert listing.structured_content is not None
    assert [r["indexing"] for r in listing.structured_content["repositories"]] == [False]


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return dict(result.structured_content)


def test_a_second_call_with_other_patterns_runs_after_the_first_and_says_what_left(
    env_factory: Any, sample_repo: RepoBuilder
):
    # Issue 9, item 9: the second call used to join the running job, silently dropping
    # its narrower include_patterns; and removals went unreported under a tool annotated
    # non-destructive.
    env: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                              "server.index_wait_seconds": 0})
    path = str(sample_repo.root)
    env.embedder.arm(after=0)
    first = env.call("index_repository", {"path": path}).structured_content or {}
    assert first["job_id"] == "idx-1"
    same = env.call("index_repository", {"path": path}).structured_content or {}
    assert same["job_id"] == "idx-1"  # same arguments: joins the running job
    narrower = env.call("index_repository", {"path": path, "include_patterns": ["*.py"]})
    body = text(narrower)
    assert not narrower.is_error, body
    info = narrower.structured_content or {}
    assert info["job_id"] == "idx-2" and info["after"] == "idx-1"
    assert "queued after job `idx-1`" in body
    env.embedder.release()
    done = ok(env.call("index_status", {"job_id": "idx-2", "wait_seconds": 60}))
    (job,) = done["jobs"]
    assert job["state"] == "succeeded"
    result = job["result"]
    assert result["include_patterns"] == ["*.py"]
    assert result["files_removed"] == 1
    assert result["removed_reasons"] == {"not_included": 1}
    assert result["removed"] == [{"file": "README.md", "reason": "not_included"}]
    assert ok(env.call("index_status", {"job_id": "idx-1"}))["jobs"][0]["state"] == "succeeded"
    (sample_repo.root / "main.py").unlink()
    waiting: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)]})
    again = waiting.call("index_repository", {"path": path, "include_patterns": ["*.py"]})
    assert "Removed from the index: 1 files (deleted from disk 1)" in text(again)
    assert ok(again)["removed"] == [{"file": "main.py", "reason": "deleted"}]
    listed = run_client(env.server, lambda c: c.list_tools())
    tool = next(t for t in listed.tools if t.name == "index_repository")
    assert tool.annotations is not None and tool.annotations.destructive_hint is True


def test_a_call_joins_only_the_last_queued_run_of_its_path(
    env_factory: Any, sample_repo: RepoBuilder
):
    """Running: idx-1 (all files: the configured options); queued: idx-2 (*.py). The first
    arguments again must not join idx-1, or idx-2, which runs later, would have the last
    word. (Without `reset_options` a call keeps idx-2's stuck `*.py`.)"""
    env: Env = env_factory(**{"server.allowed_roots": [str(sample_repo.root.parent)],
                              "server.index_wait_seconds": 0})
    path = str(sample_repo.root)
    all_files = {"path": path, "reset_options": True}
    env.embedder.arm(after=0)
    assert ok(env.call("index_repository", all_files))["job_id"] == "idx-1"
    narrower = ok(env.call("index_repository", {"path": path, "include_patterns": ["*.py"]}))
    assert narrower["job_id"] == "idx-2"
    again = ok(env.call("index_repository", all_files))
    assert again["job_id"] == "idx-3" and again["after"] == "idx-2"
    env.embedder.release()
    (job,) = ok(env.call("index_status", {"job_id": "idx-3", "wait_seconds": 60}))["jobs"]
    assert job["state"] == "succeeded" and job["result"]["include_patterns"] == []
