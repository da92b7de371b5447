"""The daemon and the index home under stress, faults and other users (issue 16).

Real daemons in temporary homes (the `daemons` fixture of test_daemon.py stops them), real
sockets, real SQLite files: a private home, idle connections that must not starve the
daemon, a home removed under a running daemon, a full disk, an index that gives its space
back, request settings that travel with the request.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.store.private import private_home
from ctxd.indexer.store.sqlite.store import Store
from ctxd.server.config import load_settings
from ctxd.server.daemon import lifecycle, protocol, server
from ctxd.server.daemon.client import CONNECT_TIMEOUT, connect_socket, exchange
from ctxd.server.daemon.paths import DaemonPaths, daemon_lock
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.conftest import text
from tests.server.daemon.test_daemon import ctxd, daemons  # noqa: F401  (the fixture)
from tests.server.mcp.test_mcp_tools import err


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
    with caplog.at_level(logging.WARNING, logger="ctxd.indexer.store.private"):
        Store.open(home / "index.db").close()
        Store.open(home / "index.db").close()
    assert mode(home) == 0o700
    assert mode(home / "index.db") == 0o600 and mode(home / "daemon.log") == 0o600
    assert mode(home / "notes.txt") == 0o644  # not one of ctxd's files: left alone
    said = [r.getMessage() for r in caplog.records if "readable by other users" in r.message]
    assert len(said) == 1 and str(home) in said[0] and "index.db" in said[0]
    assert private_home(home) == []  # nothing left to tighten


def test_an_index_in_a_shared_folder_leaves_the_folder_alone(tmp_path: Path):
    """An index file opened directly in a sticky, world-writable folder (like /tmp) makes
    its own files private but never the shared folder."""
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    store = Store.open(shared / "index.db")
    store.close()
    assert mode(shared) == 0o1777
    assert mode(shared / "index.db") == 0o600
    assert private_home(shared) == []


def test_the_daemon_files_are_owner_only(isolated_env, daemons):  # noqa: F811
    isolated_env.mkdir(mode=0o755)
    os.chmod(isolated_env, 0o755)
    daemons.start()
    paths = daemons.paths()
    assert mode(isolated_env) == 0o700
    for p in (paths.record, paths.log, paths.lock, paths.socket):
        assert mode(p) == 0o600, p


# -- 2. idle connections do not starve the daemon ------------------------------------------


def _idle_connections(paths: DaemonPaths, n: int) -> list[socket.socket]:
    out = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.connect(str(paths.socket))  # connected, never says hello
        out.append(s)
    return out


def _still_open(s: socket.socket) -> bool:
    """Whether the daemon has not closed `s` (no end of file waiting on it)."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True


def test_idle_connections_do_not_starve_the_daemon(isolated_env, daemons):  # noqa: F811
    info = daemons.start()
    paths = daemons.paths()
    idle = _idle_connections(paths, 3 * server.WORKERS)
    try:
        for _ in range(3):
            assert exchange(paths, "daemon_info")["pid"] == info["pid"]
        # Answered while every idle connection is still open: the daemon did not wait for
        # their handshake deadline to free a worker (no clock: a busy machine is slow).
        assert all(_still_open(s) for s in idle)
        out = ctxd("status", "--json")  # a whole CLI command through the daemon
        assert out.returncode == 0, out.stderr
        assert "note:" not in out.stderr
        assert exchange(paths, "daemon_info")["requests"] >= 1  # `status` reached it
        # A connection that never says hello is closed after the handshake deadline.
        idle[0].settimeout(60)  # bounds a failure only
        assert idle[0].recv(1) == b""
    finally:
        for s in idle:
            s.close()


def test_connections_past_the_cap_are_refused_with_a_clear_answer(isolated_env, daemons):  # noqa: F811
    daemons.start()
    paths = daemons.paths()
    idle = _idle_connections(paths, server.MAX_CONNECTIONS)
    try:
        # The daemon may not have accepted all of `idle` yet (a busy machine): its backlog
        # is full until it does, and a bare connect with a timeout fails with EAGAIN.
        extra = connect_socket(paths.socket, 30)
        try:
            answer = protocol.LineReader(extra).receive()
        finally:
            extra.close()
        assert answer is not None and answer["error"]["code"] == "DAEMON_ERROR"
        assert "connections open" in answer["error"]["message"]
        assert "--no-daemon" in answer["error"]["hint"]
    finally:
        for s in idle:
            s.close()
    # Once they are gone, the daemon answers again.
    assert exchange(paths, "daemon_info")["pid"]


def test_the_cli_gives_up_on_an_unresponsive_daemon_within_two_seconds(isolated_env):
    """A daemon that holds the lock and accepts connections but never answers: the CLI
    says so once on stderr, starts no second daemon and works in-process."""
    paths = DaemonPaths.for_home(isolated_env)
    lock = daemon_lock(paths.lock)
    assert lock.try_acquire()
    stuck = socket.socket(socket.AF_UNIX)
    stuck.bind(str(paths.socket))
    stuck.listen(64)  # accepts into its backlog, never answers
    paths.write_record({"pid": os.getpid(), "socket": str(paths.socket)})
    try:
        out = ctxd("search", "anything", "--json", autostart=True)
        assert f"does not answer within {CONNECT_TIMEOUT:g} s" in out.stderr
        assert out.stderr.count("note:") == 1, out.stderr
        assert "did not start" not in out.stderr and "exit status 3" not in out.stderr
        assert '"results": []' in out.stdout  # answered in-process (nothing indexed)
        assert lock.still_at_path()  # nobody took or replaced the lock
    finally:
        stuck.close()
        lock.release()


# -- 3. a daemon notices its home is gone ----------------------------------------------------


def _spawned(pid: int) -> subprocess.Popen[bytes]:
    return next(p for p in lifecycle._spawned if p.pid == pid)


def test_a_daemon_whose_home_is_removed_exits_and_a_new_one_serves_the_path(isolated_env,
                                                                            daemons):  # noqa: F811
    old = daemons.start()
    for _ in range(50):  # like `rm -rf` again: the live daemon may write a file meanwhile
        shutil.rmtree(isolated_env, ignore_errors=True)
        if not isolated_env.exists():
            break
    assert not isolated_env.exists()
    assert _spawned(old["pid"]).wait(timeout=60) == 0  # it noticed by itself, and exited
    new = daemons.start()  # a new home at the same path gets its own daemon
    assert new["pid"] != old["pid"]
    assert exchange(daemons.paths(), "daemon_info")["pid"] == new["pid"]


def test_a_daemon_whose_socket_is_replaced_exits_without_touching_the_new_one(isolated_env,
                                                                             daemons):  # noqa: F811
    old = daemons.start()
    paths = daemons.paths()
    paths.socket.unlink()
    other = socket.socket(socket.AF_UNIX)
    other.bind(str(paths.socket))  # someone else's socket now
    try:
        assert _spawned(old["pid"]).wait(timeout=server.HOME_CHECK_INTERVAL + 8) == 0
        assert paths.socket.exists()  # the old daemon left the new socket alone
    finally:
        other.close()


# -- 9. bad arguments: control characters, unknown arguments ---------------------------------


@pytest.mark.parametrize(("tool", "args", "field"), [
    ("index_repository", {"path": "/tmp/repo\x00x"}, "path"),
    ("index_repository", {"path": "/tmp", "exclude_patterns": ["*.log", "a\x00"]},
     "exclude_patterns[1]"),
    ("search_symbols", {"query": "Shape", "kinds": ["cl\x01ass"]}, "kinds[0]"),
    ("file_content", {"repository": "sample", "path": "shapes.py\x00"}, "path"),
    ("find_references", {"symbol": "area\x07"}, "symbol"),
    ("list_repos", {"filter": "\x1b[31m"}, "filter"),
    ("semantic_search", {"query": "area", "path": "src/\x00"}, "path"),
    ("search_files", {"pattern": "py", "repository": "samp\x7fle"}, "repository"),
    ("index_status", {"job_id": "idx-1\x00"}, "job_id"),
    ("search", {"query": "area\x1f"}, "query"),
])
def test_control_characters_in_any_text_argument_are_a_validation_error(
    indexed, tool: str, args: dict, field: str
):
    body = err(indexed.call(tool, args), "validation_error")
    assert f"{field} contains a control character" in body
    assert "internal_error" not in body and "bug in ctxd" not in body


def test_a_nul_in_a_query_stays_the_searchs_own_query_error(indexed):
    err(indexed.call("search", {"query": "area\x00"}), "QUERY_ERROR")


@pytest.mark.parametrize("value", [-1, 10**9])
def test_an_argument_a_tool_does_not_have_is_refused_not_ignored(indexed, value: int):
    body = err(indexed.call("search_symbols", {"query": "Shape", "limit": value}),
               "validation_error")
    assert "unknown argument limit" in body and "max_items" in body  # names the right one


def test_the_cli_refuses_control_characters_in_any_argument(isolated_env, repo: RepoBuilder):
    repo.write("a.py", "x = 1\n")
    out = ctxd("--no-daemon", "index", str(repo.root), "--exclude", "a\x01b", "--json")
    assert out.returncode == 2
    answer = json.loads(out.stdout)
    assert answer["error"] == "validation_error"
    assert answer["details"]["field"] == "--exclude[0]"
    assert not (isolated_env / "index.db").exists()  # refused before anything was written


# -- 5. the index gives its space back ------------------------------------------------------


def _fill(repo: RepoBuilder, n: int) -> RepoBuilder:
    for i in range(n):
        body = "\n".join(
            f"def handler_{i}_{k}(request):\n" + "".join(
                f"    value_{j} = request.get('field_{i}_{k}_{j}', 'payload {i * k * j}')\n"
                for j in range(20)) + f"    return value_{k}\n"
            for k in range(12))
        repo.write(f"pkg/mod_{i}.py", body)
    return repo


def test_remove_checkpoints_the_wal_and_compact_gives_the_space_back(isolated_env, tmp_path):
    keep = _fill(RepoBuilder(tmp_path / "keep"), 40)
    drop = _fill(RepoBuilder(tmp_path / "drop"), 160)
    service = Service(load_settings(), embedder=FakeEmbedder())
    try:
        service.index(keep.root)
        service.index(drop.root)
        before = service.search("handler payload", mode="semantic", limit=10,
                                repositories=["keep"]).results
    finally:
        service.close()
    db = isolated_env / "index.db"
    wal = Path(f"{db}-wal")
    out = ctxd("--no-daemon", "remove", "drop")
    assert out.returncode == 0, out.stderr
    assert "`ctxd compact` gives it back" in out.stdout
    assert not wal.exists() or wal.stat().st_size == 0  # checkpointed and truncated
    size = db.stat().st_size
    out = ctxd("--no-daemon", "compact", "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["freed_bytes"] > size // 2 and db.stat().st_size < size // 2
    assert result["after_bytes"] == db.stat().st_size + (wal.stat().st_size if wal.exists()
                                                         else 0)
    service = Service(load_settings(), embedder=FakeEmbedder())
    try:  # the kept repository answers exactly as before
        after = service.search("handler payload", mode="semantic", limit=10,
                               repositories=["keep"]).results
        assert len(after) == 10
        assert [(h.path, h.start_line, h.score) for h in after] == [
            (h.path, h.start_line, h.score) for h in before]
    finally:
        service.close()


def test_a_remove_through_the_daemon_leaves_no_grown_wal(isolated_env, daemons, tmp_path):  # noqa: F811
    service = Service(load_settings(), embedder=FakeEmbedder())
    try:  # embedded too: the daemon's watcher finds no backlog to embed (holding the lock)
        service.index(_fill(RepoBuilder(tmp_path / "keep"), 20).root)
        service.index(_fill(RepoBuilder(tmp_path / "drop"), 120).root)
    finally:
        service.close()
    daemons.start()
    paths = daemons.paths()
    exchange(paths, "status")  # the daemon's connections stay open from now on
    before = exchange(paths, "daemon_info")["requests"]
    out = ctxd("remove", "drop")
    assert out.returncode == 0, out.stderr
    assert exchange(paths, "daemon_info")["requests"] > before  # removed by the daemon
    wal = Path(f"{isolated_env / 'index.db'}-wal")
    assert wal.stat().st_size == 0  # checkpointed and truncated, though connections live
    assert "`ctxd compact` gives it back" in out.stdout


# -- 7. settings that shape a request travel with it ----------------------------------------


def test_request_settings_travel_and_only_held_settings_bypass_the_daemon(
    isolated_env, daemons, repo: RepoBuilder, tmp_path  # noqa: F811
):
    for i in range(8):
        repo.write(f"m{i}.py", f"def needle_{i}():\n    return 'needle {i}'\n")
    service = Service(load_settings(), embedder=FakeEmbedder())
    try:
        service.index(repo.root)  # embedded: the daemon's watcher has no backlog to embed
    finally:
        service.close()
    info = daemons.start()
    paths = daemons.paths()
    limited = tmp_path / "limited.toml"
    limited.write_text("[search]\ndefault_limit = 3\n")
    same = tmp_path / "same.toml"
    same.write_text("")  # another config file, default content
    before = exchange(paths, "daemon_info")["requests"]
    for config, expected in ((limited, 3), (same, 8)):
        out = ctxd("--config", str(config), "search", "needle", "--mode", "keyword", "--json")
        assert out.returncode == 0, out.stderr
        assert "note:" not in out.stderr, out.stderr
        assert len(json.loads(out.stdout)["results"]) == expected  # the client's limit
    # both via the daemon: each asks for the repositories' folders (the one the command
    # runs in is its default scope, issue 24), then searches
    assert exchange(paths, "daemon_info")["requests"] == before + 4
    # The daemon holds its model: another model is answered in-process, and said so.
    out = ctxd("--model", "other/model", "search", "needle", "--mode", "keyword", "--json")
    assert out.returncode == 0, out.stderr
    assert f"daemon (pid {info['pid']}) holds other settings (model" in out.stderr
    assert "'other/model' (here)" in out.stderr and "ctxd daemon stop" in out.stderr
    assert exchange(paths, "daemon_info")["requests"] == before + 4


# -- 4. a full disk is a storage error the daemon survives -----------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MiB tmpfs (needs root and mount(2); skipped with the reason otherwise)."""
    mnt = tmp_path / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs for the disk-full test needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs",
                           str(mnt)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mnt
    finally:  # lazily: a daemon the fixture stops later may still hold files there
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.model
def test_a_full_disk_is_a_storage_error_the_daemon_survives_and_reports(
    isolated_env, small_disk: Path, daemons, monkeypatch, tmp_path  # noqa: F811
):
    home = small_disk / "home"
    monkeypatch.setenv("CTXD_HOME", str(home))
    repo = RepoBuilder(tmp_path / "repo")
    for i in range(20):  # ~60 KB of text: with its trigram index, more than fits
        repo.write(f"m{i}.py", "".join(f"def handler_{i}_{k}(request, session):\n"
                                       f"    return session.fetch(request.key_{k}, {i * k})\n"
                                       for k in range(40)))
    daemons.start(load_settings())
    paths = daemons.track(DaemonPaths.for_home(home))
    filler = small_disk / "filler"  # leaves ~200 KB free (the index needs over 1 MB)
    with open(filler, "wb") as f:
        with contextlib.suppress(OSError):  # the daemon may have written meanwhile
            f.write(b"\0" * max(0, shutil.disk_usage(small_disk).free - (200 << 10)))
    short = (100 << 10) - shutil.disk_usage(small_disk).free
    if short > 0:  # keep room for the daemon's own small files
        os.truncate(filler, max(0, filler.stat().st_size - short))
    out = ctxd("index", str(repo.root))
    assert out.returncode == 2, out.stdout + out.stderr
    assert "error: storage_error: cannot write the index at" in out.stderr
    assert "the disk is full" in out.stderr and "bytes free there" in out.stderr
    assert "bug in ctxd" not in out.stderr and "internal_error" not in out.stderr
    health = exchange(paths, "health")  # the daemon survived, and says what happened
    assert health["storage"]["last_error"]["kind"] == "disk_full"
    assert health["storage"]["home"] == str(home)
    filler.unlink()  # space freed: the next run completes the index
    out = ctxd("index", str(repo.root), "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["files_indexed"] == 20


def test_a_start_index_past_the_end_is_said_not_answered_silently(indexed):
    body = text(indexed.call("search_symbols", {"query": "Shape", "start_index": 10**9}))
    assert "start_index 1000000000 is past the last of the 1 results" in body
    assert "No symbols matched" not in body


def _full_backlog(path: Path) -> tuple[socket.socket, list[socket.socket]]:
    """A listener at `path` that accepts nothing, its backlog filled by plain connects."""
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen(0)
    queued = []
    while True:
        s = socket.socket(socket.AF_UNIX)
        s.setblocking(False)
        try:
            s.connect(str(path))
        except BlockingIOError:
            s.close()
            return listener, queued
        queued.append(s)


def test_a_client_waits_for_room_in_a_full_backlog(tmp_path):
    """CI failure: a daemon still accepting a burst of clients has a full listen backlog,
    and a Unix connect with a timeout fails at once with EAGAIN there (it does not wait
    as a blocking connect does): the client took a busy daemon for a dead one."""
    path = tmp_path / "s"
    listener, queued = _full_backlog(path)
    accepted = []

    def accept_all() -> None:
        accepted.extend(listener.accept()[0] for _ in range(len(queued) + 1))

    try:
        t0 = time.monotonic()
        with pytest.raises(BlockingIOError):  # no one accepts: it gives up at its deadline,
            connect_socket(path, 0.2).close()
        assert time.monotonic() - t0 >= 0.19  # not at the first EAGAIN
        worker = threading.Thread(target=accept_all)
        worker.start()
        connect_socket(path, 60).close()  # waits for the accept that makes room
        worker.join(60)
        assert len(accepted) == len(queued) + 1
    finally:
        for s in queued + accepted + [listener]:
            s.close()
