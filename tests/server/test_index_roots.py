"""Machine-wide roots are refused unless the user insists, and dry runs show progress
(issue 9, item 24). CLI through CliRunner, MCP through the SDK's in-memory client, the
pipeline with a real SQLite file; temporary folders stand in for the home directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.indexer.models import Progress
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.rootguard import check_index_root
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.cli.main import main
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import Env, text


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "users" / "me"
    RepoBuilder(home / "src" / "app").write("main.py", "def main():\n    return 1\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_refuses_the_filesystem_root_and_the_home_directory(user_home: Path):
    for path, why in (("/", "the filesystem root"), (str(user_home), "your home directory"),
                      ("~", "your home directory"),
                      (str(user_home.parent), "every user's home directory")):
        r = run("index", path, "--dry-run", "--json")
        assert r.exit_code == 2, r.output
        err = json.loads(r.output)
        assert err["error"] == "validation_error" and why in err["message"], err
        assert err["details"]["field"] == "path" and "--force" in err["hint"]


def test_cli_indexes_the_home_directory_when_forced_and_projects_without(user_home: Path):
    assert run("index", str(user_home / "src" / "app"), "--json").exit_code == 0
    r = run("index", str(user_home), "--force", "--dry-run", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["files_indexed"] == 1


def test_index_repository_refuses_the_home_directory_unless_forced(
    env_factory: Any, user_home: Path
):
    env: Env = env_factory(**{"server.allowed_roots": [str(user_home.parent)]})
    refused = env.call("index_repository", {"path": str(user_home)})
    body = text(refused)
    assert refused.is_error and ": validation_error: refusing to index" in body, body
    forced = env.call("index_repository", {"path": str(user_home), "force": True})
    assert not forced.is_error, text(forced)
    assert forced.structured_content is not None
    assert forced.structured_content["files_indexed"] == 1


def test_check_index_root_lets_project_folders_through(tmp_path: Path):
    check_index_root(tmp_path / "proj", home=tmp_path / "users" / "me")
    check_index_root("/", force=True)
    with pytest.raises(Exception, match="refusing to index /"):
        check_index_root("/", home=tmp_path / "users" / "me")


def test_dry_run_reports_progress_while_walking_refused_files_and_planning(tmp_path: Path):
    repo = RepoBuilder(tmp_path / "tree")
    for i in range(120):
        repo.write(f"logs/run_{i:03d}.log", f"line {i}\n")  # refused by the exclude
    repo.write("src/app.py", "def main():\n    return 1\n")
    seen: list[Progress] = []
    store = Store.open(tmp_path / "index.db")
    try:
        stats = Indexer(store, FakeEmbedder()).index(
            repo.root, WalkOptions(exclude_patterns=("*.log",)), dry_run=True,
            progress=seen.append)
    finally:
        store.close()
    assert stats.dry_run and stats.files_indexed == 1
    walking = [p for p in seen if p.phase == "walk" and p.total is None]
    assert len(walking) >= 4 and all("examined" in p.message for p in walking)
    planning = [p for p in seen if p.phase == "plan"]
    assert planning and planning[-1].done == planning[-1].total == stats.chunks_to_embed
