"""A full disk is always a `storage_error`, never hidden by a second ROLLBACK (issue 23,
item 8).

SQLite rolls a transaction back by itself when a statement fails for want of space (a
large write spills the page cache to the WAL mid-statement): a ROLLBACK after that fails
with "cannot rollback - no transaction is active", and that error used to replace the
disk-full one (an `internal_error`). Real small tmpfs mounts (root only; skipped with the
reason otherwise), real SQLite files, the real pipeline and the real CLI.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlean as sqlite3

from ctxd.indexer.errors import StorageError
from ctxd.indexer.store.sqlite.connection import Connection
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """`tmpfs("4m")`: a fresh tmpfs of that size (root and mount(2) only)."""
    mounted: list[Path] = []
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the disk-full tests needs root")

    def mount(size: str) -> Path:
        mnt = tmp_path / f"disk{len(mounted)}"
        mnt.mkdir()
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                               str(mnt)], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted.append(mnt)
        return mnt

    yield mount
    for mnt in mounted:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def big_file(repo: RepoBuilder, mb: int = 6) -> RepoBuilder:
    """One file of `mb` MB of distinct lines: its full-text rows spill SQLite's page cache
    to the WAL in the middle of the statement that writes them."""
    lines = (f"def handler_{k}(request, session):\n"
             f"    return session.fetch(request.key_{k}, {k}, 'v{k * 7919 % 100003}')\n"
             for k in range(mb * 10_000))
    repo.write("big.py", "".join(lines))
    return repo


def fill(disk: Path) -> None:
    """Take every free byte of `disk`."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(disk).free == 0


def test_a_statement_that_fills_the_disk_raises_the_disk_full_error(tmpfs):
    disk = tmpfs("2m")
    db = Connection.open(disk / "index.db")
    try:
        db.db.execute("CREATE TABLE blobs(b)")
        for nested in (False, True):
            with pytest.raises(sqlite3.OperationalError, match="database or disk is full"):
                with db.transaction():
                    if nested:
                        db.db.execute("INSERT INTO blobs VALUES (1)")
                        with db.transaction():  # a savepoint, as phase 1 writes a file
                            db.db.execute("INSERT INTO blobs SELECT randomblob(8 << 20)")
                    else:
                        db.db.execute("INSERT INTO blobs SELECT randomblob(8 << 20)")
            assert not db.db.in_transaction  # nothing left open behind the error
        with db.transaction():  # and the connection still works
            db.db.execute("INSERT INTO blobs VALUES (2)")
        assert db.db.execute("SELECT b FROM blobs").fetchall() == [(2,)]
    finally:
        db.close()


def test_indexing_into_a_fresh_home_on_a_full_disk_is_a_storage_error(tmpfs, tmp_path):
    disk = tmpfs("4m")
    repo = big_file(RepoBuilder(tmp_path / "repo"))
    settings = load_settings({"home": str(disk / "home"), "walk.max_file_size": 10 << 20})
    service = Service(settings, embedder=FakeEmbedder())
    try:
        with pytest.raises(StorageError) as err:
            service.index(repo.root)
    finally:
        service.close()
    assert err.value.details["kind"] == "disk_full", err.value.message
    assert "cannot rollback" not in err.value.message
    shutil.rmtree(disk / "home")
    big = tmpfs("64m")  # the same run with room completes
    settings = load_settings({"home": str(big / "home"), "walk.max_file_size": 10 << 20})
    service = Service(settings, embedder=FakeEmbedder())
    try:
        assert service.index(repo.root).files_indexed == 1
    finally:
        service.close()


@pytest.mark.model
def test_the_cli_on_a_full_fresh_home_says_storage_error(tmpfs, tmp_path):
    disk = tmpfs("4m")
    repo = big_file(RepoBuilder(tmp_path / "repo"))
    env = {**os.environ, "CTXD_HOME": str(disk / "home"), "CTXD_DAEMON_AUTOSTART": "false"}
    out = subprocess.run([*CLI, "index", str(repo.root), "--max-file-size", str(10 << 20)],
                         capture_output=True, text=True, env=env, timeout=300, check=False)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith("error: storage_error: cannot write the index at"), out.stderr
    assert "the disk is full" in out.stderr and "internal_error" not in out.stderr
    assert "cannot rollback" not in out.stderr and "bug in ctxd" not in out.stderr


def test_a_write_that_names_no_file_is_a_storage_error_too(tmpfs, tmp_path):
    """The write lock records its holder's pid with `os.write` on a descriptor: ENOSPC
    there names no file, and used to be an internal error."""
    disk = tmpfs("1m")
    home = disk / "home"
    settings = load_settings({"home": str(home)})
    service = Service(settings, embedder=FakeEmbedder())
    try:
        service.store()  # the index exists; now fill what is left of the disk
        fill(disk)
        repo = RepoBuilder(tmp_path / "repo")
        repo.write("a.py", "def a():\n    return 1\n")
        with pytest.raises(StorageError) as err:
            service.index(repo.root)
        assert err.value.details["kind"] == "disk_full"
    finally:
        service.close()
