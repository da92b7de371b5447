"""A repository root swapped for a symlink, or for another folder, after it was indexed
(issue 31, item 1): `mv proj proj.real && ln -s /etc proj` must not make `ctxd cat`,
`file_content`, the watcher or a re-index read what the link leads to.

Real temporary folders, a real SQLite index (fake embedder), `ctxd` in a real process for
`cat`, `status` and `repos`, and a real watcher (inotify) for the watch. "Outside" is a
folder of the test standing in for `/etc`, with a marker no repository file holds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import sqlean as sqlite3

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.sqlite.schema import MIGRATIONS
from ctxd.indexer.walk.rootpin import RootMoved, root_moved
from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.daemon import protocol
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import make_env, text

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]
MARKER = "root:x:0:0:zanzibar_outside_marker"
FAST = WatchOptions(debounce_ms=50, rescan_seconds=0, force_polling=False)
TIMEOUT = 30.0
NOW = "2026-11-27T00:00:00Z"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ctxd-home"


@pytest.fixture
def service(home: Path) -> Iterator[Service]:
    settings = replace(load_settings({"home": str(home)}), watch=FAST)
    svc = Service(settings, embedder=FakeEmbedder())
    yield svc
    svc.close()


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside every repository (the `/etc` of the attack)."""
    out = RepoBuilder(tmp_path / "etc")
    out.write("passwd", MARKER + "\n")
    out.write("app.py", f"SECRET = {MARKER!r}\n")
    return out.root


@pytest.fixture
def indexed(service: Service, tmp_path: Path) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "proj")
    repo.write("app.py", "def start():\n    return 1\n")
    service.index(repo.root)
    return repo


def swap_for_link(root: Path, target: Path) -> None:
    """`mv proj proj.real && ln -s TARGET proj`."""
    root.rename(root.with_name(root.name + ".real"))
    root.symlink_to(target, target_is_directory=True)


def ctxd(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "false"}
    return subprocess.run([*CLI, "--no-daemon", *args], capture_output=True, text=True,
                          env=env, timeout=120, check=False)


def names(service: Service) -> list[str]:
    return [r.name for r in service.store().repos()]


def test_a_root_swapped_for_a_symlink_is_never_read(service, indexed, outside, home):
    swap_for_link(indexed.root, outside)

    with pytest.raises(RootMoved) as exc:
        service.file_content("proj", "passwd")
    assert f"now leads to {outside}" in exc.value.message or "symlink" in exc.value.message
    with pytest.raises(RootMoved):
        service.file_content("proj", "app.py")

    cat = ctxd(home, "cat", "proj", "passwd")
    assert cat.returncode != 0 and MARKER not in cat.stdout + cat.stderr
    assert "no longer the folder that was indexed" in cat.stderr

    status = json.loads(ctxd(home, "status", "--json").stdout)
    (repo,) = status["repositories"]
    assert str(outside) in repo["root_moved"]
    text = ctxd(home, "status").stdout
    assert "ROOT MOVED" in text and str(outside) in text
    listing = service.list_repos()["repositories"]
    assert "root_moved" in listing[0] and listing[0]["branches"] == []
    assert "ROOT MOVED" in ctxd(home, "repos").stdout
    assert service.health()["repositories"][0]["root_moved"]


def test_a_swapped_root_is_never_re_indexed_as_a_new_repository(service, indexed, outside):
    swap_for_link(indexed.root, outside)
    # The watcher's runs (partial) and a refresh by the stored path (full) both refuse.
    with pytest.raises(RootMoved):
        service.index(indexed.root, only_paths=["passwd", "app.py"])
    with pytest.raises(RootMoved):
        service.index(indexed.root, only_paths=[])
    with pytest.raises(RootMoved):
        service.index(indexed.root)
    assert names(service) == ["proj"]
    assert MARKER not in json.dumps(service.store().query("SELECT content FROM file_text"))
    # Asked by its own path, the folder the link leads to is the user's to index.
    service.index(outside)
    assert names(service) == ["etc", "proj"]


def test_a_root_replaced_by_another_users_folder_is_refused_until_indexed_again(
    service, indexed, home
):
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user needs root")
    indexed.root.rename(indexed.root.with_name("proj.real"))
    planted = RepoBuilder(indexed.root)
    planted.write("passwd", MARKER + "\n")
    os.chown(planted.root, 4242, 4242)  # another user's folder in its place

    with pytest.raises(RootMoved) as exc:
        service.file_content("proj", "passwd")
    assert "another user's folder is there (uid 4242" in exc.value.message
    with pytest.raises(RootMoved):
        service.index(indexed.root, only_paths=["passwd"])
    moved = service.repos()[0]["root_moved"]
    assert "it was moved or replaced" in moved

    # The user indexing the path again is consent: the new folder is pinned.
    service.index(indexed.root)
    assert "root_moved" not in service.repos()[0]
    assert service.file_content("proj", "passwd").content.startswith(MARKER)


def test_your_own_folder_re_created_in_its_place_is_the_repository_again(service, indexed):
    """A repository deleted and cloned again is yours: served and re-pinned (the watcher's
    promise of re-watching a folder that came back holds: tests/server/watch/test_watch.py)."""
    indexed.root.rename(indexed.root.with_name("proj.old"))
    again = RepoBuilder(indexed.root)
    again.write("app.py", "def start():\n    return 2\n")
    assert "root_moved" not in service.repos()[0]
    assert "return 2" in service.file_content("proj", "app.py").content
    service.index(indexed.root, only_paths=["app.py"])
    assert service.store().repos()[0].root_id == "{0.st_dev}:{0.st_ino}".format(
        os.stat(indexed.root))


def test_a_gone_root_is_a_plain_not_found_not_a_move(service, indexed):
    indexed.root.rename(indexed.root.with_name("proj.gone"))
    assert "root_moved" not in service.repos()[0]
    with pytest.raises(ValidationError) as exc:
        service.index(indexed.root, only_paths=["app.py"])
    assert not isinstance(exc.value, RootMoved)


def test_the_watcher_stops_at_a_swapped_root_and_never_indexes_its_target(
    service, indexed, outside
):
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2)
    watcher.start()
    try:
        assert watcher.wait_ready(TIMEOUT) and watcher.wait_idle(TIMEOUT)
        swap_for_link(indexed.root, outside)
        (outside / "new.py").write_text(f"X = {MARKER!r}\n", encoding="utf-8")

        def refused() -> bool:
            state = watcher.health()["repos"].get("proj") or {}
            return "no longer the folder that was indexed" in (state.get("error") or "")

        assert watcher.wait_for(refused, TIMEOUT)
        assert watcher.wait_idle(TIMEOUT)
        assert names(service) == ["proj"]
        assert MARKER not in json.dumps(service.store().query("SELECT content FROM file_text"))

        # Put back, it is watched again.
        indexed.root.unlink()
        indexed.root.with_name("proj.real").rename(indexed.root)
        assert watcher.wait_for(lambda: watcher.health()["repos"]["proj"]["error"] is None,
                                TIMEOUT)
    finally:
        watcher.stop()


def test_an_index_from_before_root_identities_is_migrated_and_checked_by_path(
    home, tmp_path, outside
):
    repo = RepoBuilder(tmp_path / "old")
    repo.write("app.py", "x = 1\n")
    home.mkdir(mode=0o700)
    db = sqlite3.connect(home / "index.db")
    for migrate in MIGRATIONS[:4]:  # the schema before root identities
        migrate(db)  # type: ignore[arg-type]
    db.execute("PRAGMA user_version = 4")
    db.execute("INSERT INTO repos(name, root, options, created_at) VALUES ('old', ?, '{}', "
               "'2026-01-01T00:00:00Z')", (str(repo.root),))
    db.commit()
    db.close()
    svc = Service(load_settings({"home": str(home)}), embedder=FakeEmbedder())
    try:
        (row,) = svc.store().repos()
        assert row.root_id == ""
        swap_for_link(repo.root, outside)
        with pytest.raises(RootMoved):
            svc.file_content("old", "passwd")
        repo.root.unlink()
        repo.root.with_name("old.real").rename(repo.root)
        svc.index(repo.root, only_paths=["app.py"])  # the watcher's run pins it
        assert svc.store().repos()[0].root_id == "{0.st_dev}:{0.st_ino}".format(
            os.stat(repo.root))
    finally:
        svc.close()


def test_the_refusal_crosses_the_daemon_protocol_as_itself():
    err = root_moved("/src/proj", "it now leads to /etc")
    back = protocol.error_from_wire(json.loads(json.dumps(protocol.error_to_wire(err))))
    assert type(back) is RootMoved and back.code == "validation_error"
    assert back.message == err.message and back.details["kind"] == "root_moved"


def test_both_stores_keep_the_roots_identity(tmp_path, store_url):
    """`repos.root_id` on either engine: recorded, kept by a run that does not know it,
    replaced by one that does."""
    with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as store:
        a = store.upsert_repo("/src/app", {}, NOW, "64769:1234")
        assert a.root_id == "64769:1234"
        assert store.upsert_repo("/src/app", {"x": 1}, NOW).root_id == "64769:1234"
        assert store.upsert_repo("/src/app", {}, NOW, "64769:99").root_id == "64769:99"
        assert store.repo_by_name("app").root_id == "64769:99"
        assert store.upsert_repo("/src/old", {}, NOW).root_id == ""


def test_the_mcp_tools_refuse_the_swapped_root_and_say_so(tmp_path, outside):
    env = make_env(tmp_path)
    try:
        repo = RepoBuilder(tmp_path / "proj")
        repo.write("app.py", "def start():\n    return 1\n")
        env.service.index(repo.root)
        swap_for_link(repo.root, outside)
        served = env.call("file_content", {"repository": "proj", "path": "passwd"})
        assert served.is_error and MARKER not in text(served)
        assert "no longer the folder that was indexed" in text(served)
        listed = env.call("list_repos")
        assert "Root moved" in text(listed) and str(outside) in text(listed)
        assert listed.structured_content["repositories"][0]["root_moved"]
        health = env.call("get_health")
        assert "root_moved" in text(health)
    finally:
        env.jobs.shutdown(wait=30)
        env.service.close()
