"""The daemon and the index home under stress, faults and other users (issue 16).

Real daemons in temporary homes (the `daemons` fixture of test_daemon.py stops them), real
sockets, real SQLite files: a private home, idle connections that must not starve the
daemon, a home removed under a running daemon, a full disk, an index that gives its space
back, request settings that travel with the request.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from ctxd.indexer.private import private_home
from ctxd.indexer.store import Store
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.client import exchange
from ctxd.server.daemon.paths import DaemonPaths
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.test_daemon import ctxd, daemons  # noqa: F401  (the fixture)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- 1. the home is private ---------------------------------------------------------------


def test_a_new_index_home_and_every_file_in_it_are_owner_only(isolated_env, repo: RepoBuilder):
    repo.write("a.py", "def alpha():\n    return 1\n")
    old = os.umask(0o022)  # the usual umask: what ctxd creates must not depend on it
    service = Service(load_settings(), embedder=FakeEmbedder())
    try:
        service.index(repo.root)
        db = service.settings.db_path
        assert Path(f"{db}-wal").exists()  # the WAL is created by SQLite, not by us
        assert mode(isolated_env) == 0o700
        files = [p for p in isolated_env.iterdir() if p.is_file()]
        assert {p.name for p in files} >= {"index.db", "index.db-wal", "index.db-shm",
                                            "index.db.lock"}
        assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    finally:
        service.close()
        os.umask(old)


def test_an_existing_open_home_is_tightened_on_open_and_said_once(tmp_path, caplog):
    home = tmp_path / "old-home"
    Store.open(home / "index.db").close()
    os.chmod(home, 0o755)
    os.chmod(home / "index.db", 0o644)
    (home / "daemon.log").write_text("old log\n")
    os.chmod(home / "daemon.log", 0o644)
    (home / "notes.txt").write_text("not ctxd's\n")
    os.chmod(home / "notes.txt", 0o644)
    with caplog.at_level(logging.WARNING, logger="ctxd.indexer.private"):
        Store.open(home / "index.db").close()
        Store.open(home / "index.db").close()
    assert mode(home) == 0o700
    assert mode(home / "index.db") == 0o600 and mode(home / "daemon.log") == 0o600
    assert mode(home / "notes.txt") == 0o644  # not one of ctxd's files: left alone
    said = [r.getMessage() for r in caplog.records if "readable by other users" in r.message]
    assert len(said) == 1 and str(home) in said[0] and "index.db" in said[0]
    assert private_home(home) == []  # nothing left to tighten


def test_the_daemon_files_are_owner_only(isolated_env, daemons):  # noqa: F811
    isolated_env.mkdir(mode=0o755)
    os.chmod(isolated_env, 0o755)
    daemons.start()
    paths = daemons.paths()
    assert mode(isolated_env) == 0o700
    for p in (paths.record, paths.log, paths.lock, paths.socket):
        assert mode(p) == 0o600, p
