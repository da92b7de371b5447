"""One index file shared by connections of several threads and processes.

SQLite's locks on a database file are POSIX advisory locks, which belong to the process:
closing *any* descriptor of the file in a process drops the locks of every connection that
process holds on it ("How To Corrupt An SQLite Database File", section 2.2). These tests
open real connections in real processes and check that opening one more connection (as
each daemon thread does) never lets another process delete the WAL under a live one, and
that first opens of a fresh index, several at once, all migrate it cleanly.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from ctxd.indexer.store.private import create_private
from ctxd.indexer.store.sqlite.schema import MIGRATIONS
from ctxd.indexer.store.sqlite.store import Store

WRITER = textwrap.dedent(
    """
    import sys, threading
    from ctxd.indexer.store.sqlite.store import Store

    path = sys.argv[1]
    first = Store.open(path)
    with first.transaction():
        first.set_meta("probe", "before")
    # A second connection of the same process, opened from another thread (as the
    # daemon's threads each open theirs) while the first one is live.
    opened = []
    t = threading.Thread(target=lambda: opened.append(Store.open(path)))
    t.start(); t.join()
    print("ready", flush=True)
    sys.stdin.readline()  # the test opens and closes a connection of its own meanwhile
    with first.transaction():
        first.set_meta("probe", "after")
    print("written", flush=True)
    sys.stdin.readline()
    """
)


def test_a_second_connection_in_a_process_keeps_the_first_ones_wal(tmp_path: Path) -> None:
    """Before the fix, `Store.open` opened and closed the database file outside SQLite,
    which dropped the first connection's locks: another process closing its connection
    then believed it was the last, checkpointed and deleted `-wal`/`-shm`, and the first
    connection's later writes went into a deleted WAL, invisible to every other process."""
    db = tmp_path / "home" / "index.db"
    Store.open(db).close()
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready"
        # Another process opens the index and closes it again (`ctxd --no-daemon status`).
        other = Store.open(db)
        assert other.get_meta("probe") == "before"
        other.close()
        assert Path(f"{db}-wal").exists(), "the WAL was deleted under a live connection"
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "written"
        reader = Store.open(db)
        try:
            assert reader.get_meta("probe") == "after"
            assert reader.query("PRAGMA integrity_check") == [("ok",)]
        finally:
            reader.close()
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0


PROBE_LOCK = (
    "import fcntl, os, sys\n"
    "fd = os.open(sys.argv[1], os.O_RDWR)\n"
    "try:\n"
    "    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "except OSError:\n"
    "    print('held')\n"
    "else:\n"
    "    print('free')\n"
)


def test_create_private_keeps_this_process_s_locks_on_an_existing_file(tmp_path: Path) -> None:
    """An existing file is never opened (and so never closed) by `create_private`: a POSIX
    lock this process holds on it, as SQLite does, stays held for other processes to see."""
    db = tmp_path / "index.db"
    db.write_bytes(b"x")
    fd = os.open(db, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX)
        create_private(db)
        probe = subprocess.run([sys.executable, "-c", PROBE_LOCK, str(db)],
                               capture_output=True, text=True, timeout=60, check=True)
        assert probe.stdout.strip() == "held"
    finally:
        os.close(fd)
    fresh = tmp_path / "new.db"
    create_private(fresh)
    assert fresh.stat().st_mode & 0o777 == 0o600


MIGRATE = ("import sys; from ctxd.indexer.store.sqlite.store import Store; "
           "Store.open(sys.argv[1]).close()")


def test_first_opens_of_a_fresh_index_race_cleanly(tmp_path: Path) -> None:
    """Several processes opening a new index at once (the CLI and the daemon it starts)
    all migrate it: one runs the migrations, the others find them done. Before the fix,
    each read `user_version` outside its transaction, and the losers failed with
    `table meta already exists`."""
    for attempt in range(4):
        db = tmp_path / f"fresh-{attempt}" / "index.db"
        procs = [
            subprocess.Popen([sys.executable, "-c", MIGRATE, str(db)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(6)
        ]
        # every process is waited for (and its pipes closed) before any is judged
        errors = [proc.communicate(timeout=120)[1] for proc in procs]
        for proc, err in zip(procs, errors, strict=True):
            assert proc.returncode == 0, err
        store = Store.open(db)
        try:
            assert store.query("PRAGMA integrity_check") == [("ok",)]
            assert store.query("PRAGMA user_version") == [(len(MIGRATIONS),)]
        finally:
            store.close()
