"""Patterns stick (issue 15, item 5): the include/exclude/size options given to a run are
kept by a plain refresh (CLI, MCP, dry run, the watcher), replaced by giving them again,
dropped by `--reset-options` / `reset_options`, and shown by `status`, `get_health` and
`list_repos`.

Real repositories on disk, a real SQLite index; the CLI runs in-process with the real
model, the MCP tools through the `mcp` package's client.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxd.indexer.walk.repo_options import options_view, pinned_options
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.server.cli.daemon_cmd import daemon_summary
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.service import Service
from ctxd.server.watch_state import read_watch_status
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import Env, text
from tests.server.watch.test_watch import TIMEOUT, paths, start


def seed(repo: RepoBuilder) -> RepoBuilder:
    repo.write("src/app.py", "def start_engine(speed):\n    return speed * 2\n")
    repo.write("gen/api_pb2.py", "def generated_stub():\n    return 'protobuf'\n")
    repo.write("docs/guide.md", "# Guide\n\nHow to start the engine.\n")
    return repo


def cli(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def stored_row() -> dict[str, Any]:
    (repo,) = json.loads(cli("status", "--json").output)["repositories"]
    return dict(repo)


def stored(path: Path) -> dict[str, Any]:
    repo = stored_row()
    assert repo["root"] == str(path.resolve())
    return dict(repo["options"])


@pytest.mark.model
def test_cli_plain_refresh_and_dry_run_keep_the_exclude_until_reset(repo: RepoBuilder):
    root = str(seed(repo).root)
    first = json.loads(cli("index", root, "--exclude", "gen/**", "--json").output)
    assert first["files_indexed"] == 2 and first["exclude_patterns"] == ["gen/**"]

    dry = json.loads(cli("index", root, "--dry-run", "--json").output)
    assert dry["exclude_patterns"] == ["gen/**"]
    assert dry["files_updated"] == 0 and dry["chunks_to_embed"] == 0  # nothing to re-embed
    assert dry["files_skipped"] == {"excluded": 1}

    again = json.loads(cli("index", root, "--json").output)
    assert again["exclude_patterns"] == ["gen/**"] and again["files_indexed"] == 2
    assert again["files_updated"] == 0 and again["chunks_embedded"] == 0
    assert stored(repo.root) == {"include_patterns": [], "exclude_patterns": ["gen/**"],
                                 "max_file_size": 1048576, "explicit": ["exclude_patterns"]}
    status = cli("status").output
    assert "exclude gen/**" in status and "--reset-options" in status

    other = json.loads(cli("index", root, "--exclude", "*.md", "--json").output)
    assert other["exclude_patterns"] == ["*.md"]  # given again: replaced, not added
    assert other["files_indexed"] == 2 and other["removed_reasons"] == {"excluded": 1}

    reset = json.loads(cli("index", root, "--reset-options", "--json").output)
    assert reset["exclude_patterns"] == [] and reset["files_indexed"] == 3
    assert stored(repo.root)["explicit"] == []


def ok(result: Any) -> dict[str, Any]:
    assert not result.is_error, text(result)
    return dict(result.structured_content)


def test_mcp_index_without_patterns_keeps_them_and_lists_them(env: Env, tmp_path: Path):
    repo = seed(RepoBuilder(tmp_path / "messy"))
    path = str(repo.root)
    first = ok(env.call("index_repository", {"path": path,
                                             "exclude_patterns": ["gen/**"],
                                             "max_file_size": 4096}))
    assert first["exclude_patterns"] == ["gen/**"] and first["files_indexed"] == 2
    again = ok(env.call("index_repository", {"path": path}))
    assert again["exclude_patterns"] == ["gen/**"] and again["max_file_size"] == 4096
    assert again["files_indexed"] == 2 and again["files_removed"] == 0

    (listed,) = [r for r in ok(env.call("list_repos", {}))["repositories"]
                 if r["name"] == "messy"]
    assert listed["options"] == {"include_patterns": [], "exclude_patterns": ["gen/**"],
                                 "max_file_size": 4096,
                                 "explicit": ["exclude_patterns", "max_file_size"]}
    assert "Options: include all; exclude gen/**" in text(env.call("list_repos", {}))
    health = env.call("get_health", {})
    (row,) = [r for r in ok(health)["repositories"] if r["name"] == "messy"]
    assert row["options"]["exclude_patterns"] == ["gen/**"]
    assert "gen/**" in text(health)

    reset = ok(env.call("index_repository", {"path": path, "reset_options": True}))
    assert reset["exclude_patterns"] == [] and reset["max_file_size"] == 1048576
    assert reset["files_indexed"] == 3
    after = ok(env.call("index_repository", {"path": path}))
    assert after["exclude_patterns"] == [] and after["files_indexed"] == 3


def test_watcher_keeps_the_stored_exclude_after_a_plain_refresh(tmp_path: Path):
    settings = load_settings({"home": str(tmp_path / "home")})
    service = Service(replace(settings, watch=replace(settings.watch, debounce_ms=50,
                                                      rescan_seconds=0)),
                      embedder=FakeEmbedder())
    repo = seed(RepoBuilder(tmp_path / "repo"))
    try:
        service.index(repo.root, exclude_patterns=["gen/**"])
        service.index(repo.root)  # a plain refresh
        watcher = start(service)
        try:
            repo.write("gen/more_pb2.py", "X = 'okapi'\n")
            repo.write("src/sentinel.py", "S = 'okapi'\n")
            assert watcher.wait_for(lambda: "src/sentinel.py" in paths(service), TIMEOUT)
            assert not any(p.startswith("gen/") for p in paths(service))
        finally:
            watcher.stop()
    finally:
        service.close()


def test_only_explicit_options_are_pinned_and_the_rest_follow_the_configuration():
    config = WalkOptions(exclude_patterns=("*.log",), max_file_size=2048)
    row = {"include_patterns": [], "exclude_patterns": ["gen/**"], "max_file_size": 2048,
           "explicit": ["exclude_patterns"]}
    assert pinned_options(config, row) == {"exclude_patterns": ("gen/**",)}
    changed = replace(config, max_file_size=999)  # the configuration changed since
    assert options_view(changed, row)["max_file_size"] == 999
    # A row written before `explicit` existed pins what differs from the configuration.
    legacy = {"include_patterns": ["*.py"], "exclude_patterns": ["*.log"],
              "max_file_size": 2048}
    assert pinned_options(config, legacy) == {"include_patterns": ("*.py",)}
    assert pinned_options(config, {"exclude_patterns": "not a list"}) == {}


@pytest.mark.model
def test_through_the_daemon_options_stick_and_its_start_keeps_indexed_at(
        repo: RepoBuilder):
    """A real daemon: its watcher's start-up scan over old mtimes and a PNG changes
    nothing (indexed_at stays, no lag of years), and `ctxd index` through it keeps the
    stored exclude until `--reset-options`."""
    root = str(seed(repo).root)
    repo.write_bytes("assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(64))
    for dirpath, _dirs, files in os.walk(repo.root):
        for name in files:
            os.utime(os.path.join(dirpath, name), (1577836800, 1577836800))  # 2020
    cli("--no-daemon", "index", root, "--exclude", "gen/**")
    settings = load_settings()
    before = stored_row()["indexed_at"]
    paths_ = DaemonPaths.for_home(settings.home)
    try:
        lifecycle.start(settings, paths_)
        deadline = time.monotonic() + 120
        while True:  # another process: its status file is the only signal
            st = (read_watch_status(settings) or {}).get("repos", {}).get("repo") or {}
            if st.get("watching") and st.get("pending") == 0:
                break
            assert time.monotonic() < deadline, st
            time.sleep(0.05)
        assert st["last_update"] is None  # nothing to report: the PNG is no change
        assert daemon_summary(settings)["running"]
        assert stored_row()["indexed_at"] == before
        again = json.loads(cli("index", root, "--json").output)
        assert again["exclude_patterns"] == ["gen/**"] and again["files_indexed"] == 2
        reset = json.loads(cli("index", root, "--reset-options", "--json").output)
        assert reset["exclude_patterns"] == [] and reset["files_indexed"] == 3
    finally:
        lifecycle.stop(paths_, timeout=20)
