"""The file-watch daemon (server/watch.py, server/watch_cli.py) end to end.

Real files in temporary repositories, real watchdog observers (inotify), a real SQLite
index; the `FakeEmbedder` keeps embedding instant. Every wait is on the watcher's
condition (re-checked after each batch) with a timeout, never a fixed sleep.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from watchdog.observers.api import BaseObserver
from watchdog.observers.inotify import InotifyObserver

from ctxd.indexer.store.lock import IndexFileLock
from ctxd.server.cli.watch_cmd import run_watch
from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.service import Service
from ctxd.server.watch.status import read_watch_status, watch_health
from ctxd.server.watch.watcher import Role, Watcher, start_watching
from tests.conftest import FakeEmbedder, RepoBuilder

ROOT = Path(__file__).resolve().parents[3]
TIMEOUT = 30.0
FAST = WatchOptions(debounce_ms=50, rescan_seconds=0, force_polling=False)


def make_service(home: Path) -> Service:
    settings = replace(load_settings({"home": str(home)}), watch=FAST)
    return Service(settings, embedder=FakeEmbedder())


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "ctxd-home"


@pytest.fixture
def service(home: Path) -> Iterator[Service]:
    s = make_service(home)
    yield s
    s.close()


def seed(repo: RepoBuilder) -> None:
    repo.write("src/app.py", "def start_engine(speed):\n    return speed * 2\n")
    repo.write("src/util.py", "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n")
    repo.write("docs/guide.md", "# Guide\n\nHow to start the engine.\n")


def start(service: Service, observer_factory: Callable[[], BaseObserver] | None = None) -> Watcher:
    """A running watcher with fast polls, once its start-up catch-up is done."""
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2,
                      observer_factory=observer_factory)
    watcher.start()
    assert watcher.wait_ready(TIMEOUT)
    assert watcher.wait_idle(TIMEOUT)
    return watcher


@pytest.fixture
def watched(service: Service, repo: RepoBuilder) -> Iterator[Watcher]:
    seed(repo)
    service.index(repo.root)
    watcher = start(service)
    yield watcher
    watcher.stop()


def paths(service: Service) -> set[str]:
    return {r[0] for r in service.store().query("SELECT path FROM files")}


def fts(service: Service, text: str) -> set[str]:
    rows = service.store().query(
        "SELECT f.path FROM file_text JOIN files f ON f.id = file_text.rowid "
        "WHERE file_text MATCH ?",
        ['"' + text.replace('"', '""') + '"'],
    )
    return {r[0] for r in rows}


def embedded(service: Service, path: str) -> bool:
    n, done = service.store().query(
        "SELECT count(*), coalesce(sum(EXISTS "
        "(SELECT 1 FROM embeddings e WHERE e.hash = c.hash)), 0) "
        "FROM checkpoints c WHERE c.path = ?",
        [path],
    )[0]
    return n > 0 and n == done


def searchable(service: Service, text: str, path: str) -> Callable[[], bool]:
    return lambda: path in fts(service, text) and embedded(service, path)


# -- behaviour ---------------------------------------------------------------------------


def test_edit_makes_new_text_searchable_and_old_text_gone(service, repo, watched):
    repo.write("src/app.py", "def start_engine(speed):\n    return zebracorn_turbo(speed)\n")
    assert watched.wait_for(searchable(service, "zebracorn_turbo", "src/app.py"), TIMEOUT)
    assert "src/app.py" not in fts(service, "speed * 2")
    hits = service.search("zebracorn turbo engine", mode="semantic", limit=3)
    assert hits.results[0].path == "src/app.py"
    result = watched.results[-1]
    assert result.changed == 1 and result.deleted == 0 and result.trigger == "events"
    assert result.lag_ms is not None and result.lag_ms < 10_000


def test_delete_removes_file_from_index(service, repo, watched):
    repo.remove("src/util.py")
    assert watched.wait_for(lambda: "src/util.py" not in paths(service), TIMEOUT)
    assert not fts(service, "clamp(x, lo, hi)")
    assert service.store().query("SELECT count(*) FROM symbols WHERE name = 'clamp'")[0][0] == 0


def test_rename_moves_file(service, repo, watched):
    (repo.root / "src/util.py").rename(repo.root / "src/helpers.py")
    assert watched.wait_for(
        lambda: "src/helpers.py" in paths(service) and "src/util.py" not in paths(service),
        TIMEOUT,
    )
    assert fts(service, "max(lo, min(x, hi))") == {"src/helpers.py"}


def test_directory_rename_moves_every_file_and_delete_removes_them(service, repo, watched):
    (repo.root / "src").rename(repo.root / "lib")
    assert watched.wait_for(
        lambda: paths(service) == {"lib/app.py", "lib/util.py", "docs/guide.md"}, TIMEOUT
    )
    shutil.rmtree(repo.root / "lib")
    assert watched.wait_for(lambda: paths(service) == {"docs/guide.md"}, TIMEOUT)


def test_new_directory_with_files_is_indexed(service, repo, watched):
    for i in range(5):
        repo.write(f"pkg/sub{i % 2}/deep/mod{i}.py", f"def quokka_{i}():\n    return {i}\n")
    want = {f"pkg/sub{i % 2}/deep/mod{i}.py" for i in range(5)}
    assert watched.wait_for(
        lambda: want <= paths(service) and all(embedded(service, p) for p in want), TIMEOUT
    )
    assert fts(service, "quokka_3") == {"pkg/sub1/deep/mod3.py"}


def test_directory_moved_in_from_outside_is_indexed(service, repo, watched, tmp_path):
    outside = RepoBuilder(tmp_path / "outside")
    outside.write("vendorlib/a.py", "A = 'wombat_alpha'\n")
    outside.write("vendorlib/b/c.py", "C = 'wombat_gamma'\n")
    (tmp_path / "outside" / "vendorlib").rename(repo.root / "vendorlib")
    assert watched.wait_for(
        lambda: {"vendorlib/a.py", "vendorlib/b/c.py"} <= paths(service), TIMEOUT
    )


def test_gitignore_change_moves_files_out_and_back_in(service, repo, watched):
    repo.write(".gitignore", "docs/\n*.md\n")
    assert watched.wait_for(
        lambda: not any(p.startswith("docs/") for p in paths(service))
        and ".gitignore" in paths(service),
        TIMEOUT,
    )
    repo.write("docs/more.md", "# More\n")
    repo.write("src/sentinel.py", "S = 1\n")
    assert watched.wait_for(lambda: "src/sentinel.py" in paths(service), TIMEOUT)
    assert "docs/more.md" not in paths(service)
    repo.write(".gitignore", "# nothing ignored\n")
    assert watched.wait_for(
        lambda: {"docs/guide.md", "docs/more.md"} <= paths(service), TIMEOUT
    )


def test_nested_ctxdignore_re_evaluates_only_its_folder(service, repo, watched):
    repo.write("src/.ctxdignore", "util.py\n")
    assert watched.wait_for(lambda: "src/util.py" not in paths(service), TIMEOUT)
    assert {"src/app.py", "docs/guide.md", "src/.ctxdignore"} <= paths(service)
    (repo.root / "src/.ctxdignore").unlink()
    assert watched.wait_for(lambda: "src/util.py" in paths(service), TIMEOUT)


def test_burst_of_2000_files_is_one_consistent_index(service, repo, watched):
    before = watched.batches
    for i in range(2000):
        repo.write(f"burst/d{i % 40}/f{i}.py", f"def burst_{i}(x):\n    return x + {i}\n")
    want = 3 + 2000

    def done() -> bool:
        return len(paths(service)) == want and watched.idle

    assert watched.wait_for(done, 120)
    store = service.store()
    assert store.count_pending() == 0
    repo_id = store.repos()[0].id
    counts = store.repo_counts(repo_id)
    assert counts["files"] == want
    assert counts["checkpoints"] == counts["embedded"] >= want
    assert fts(service, "burst_1999(") == {"burst/d39/f1999.py"}
    applied = list(watched.results)[-(watched.batches - before):]
    assert sum(r.changed for r in applied) == 2000
    assert watched.batches - before <= 3, [r.changed for r in applied]


def test_touch_without_content_change_embeds_nothing(service, repo, watched):
    emb = service.embedder.inner
    assert isinstance(emb, FakeEmbedder)
    calls, before = len(emb.calls), watched.batches
    for rel in ("src/app.py", "src/util.py"):
        p = repo.root / rel
        p.write_text(p.read_text(encoding="utf-8"), encoding="utf-8")

    def new_results() -> list:
        return list(watched.results)[len(watched.results) - (watched.batches - before):]

    assert watched.wait_for(
        lambda: sum(r.changed for r in new_results()) == 2 and watched.idle, TIMEOUT
    )
    assert sum(r.files_updated for r in new_results()) == 0
    assert len(emb.calls) == calls


def test_events_in_ignored_folders_cost_no_index_work(service, repo, watched):
    repo.write(".gitignore", "build/\n")
    assert watched.wait_for(lambda: ".gitignore" in paths(service) and watched.idle, TIMEOUT)
    before = watched.batches
    for i in range(300):
        repo.write(f"build/out/gen{i}.py", f"GEN = {i}\n")
        repo.write(f"web/node_modules/pkg{i % 10}/i{i}.js", "module.exports = 1\n")
    repo.write("src/sentinel.py", "SENTINEL = True\n")
    assert watched.wait_for(lambda: "src/sentinel.py" in paths(service), TIMEOUT)
    applied = list(watched.results)[-(watched.batches - before):]
    assert sum(r.changed for r in applied) == 1
    assert not any(p.startswith(("build/", "web/")) for p in paths(service))


def test_binary_file_is_not_re_read_on_every_rescan(service, repo, watched):
    repo.write_bytes("logo.png", b"\x89PNG\x00\x00binary")
    repo.write("src/sentinel.py", "S = 1\n")
    assert watched.wait_for(lambda: "src/sentinel.py" in paths(service) and watched.idle,
                            TIMEOUT)
    before = watched.batches
    watched.request_rescan()
    assert watched.wait_for(lambda: watched.idle, TIMEOUT)
    assert watched.batches == before
    assert "logo.png" not in paths(service)


HOLD_LOCK = (
    "import sys\n"
    "from pathlib import Path\n"
    "from ctxd.indexer.store.lock import IndexFileLock\n"
    "lock = IndexFileLock(Path(sys.argv[1]))\n"
    "lock.acquire(wait=None)\n"
    "print('held', flush=True)\n"
    "sys.stdin.readline()\n"
)


def test_second_writer_makes_the_watcher_wait_with_a_message(service, repo, watched, caplog):
    caplog.set_level(logging.WARNING, logger="ctxd.server.watch.watcher")
    with subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(service.settings.db_path)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as writer:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline().strip() == "held"
        repo.write("src/app.py", "X = 'platypus_waits'\n")
        other = str(writer.pid)
        assert watched.wait_for(
            lambda: watched.repos_health()[0].waiting_for_lock == other, TIMEOUT
        )
        assert "src/app.py" not in fts(service, "platypus_waits")
        assert watched.repos_health()[0].pending >= 1
        writer.stdin.write("\n")
        writer.stdin.flush()
    assert watched.wait_for(searchable(service, "platypus_waits", "src/app.py"), TIMEOUT)
    messages = [r.getMessage() for r in caplog.records if "is writing the index" in r.getMessage()]
    assert len(messages) == 1 and f"Another ctxd process (pid {other})" in messages[0]
    assert watched.repos_health()[0].waiting_for_lock is None


def test_a_scan_waiting_for_this_process_s_own_index_run_is_no_pending_change(
    service, repo, caplog
):
    """The daemon starts watching a repository while its own index run writes it: the
    start-up scan waits for that run. It is shown as a rescan, not as a pending change
    with a growing lag, and the log does not blame "another process" for the daemon's own
    write lock."""
    caplog.set_level(logging.INFO, logger="ctxd.server.watch")
    seed(repo)
    service.index(repo.root)
    lock = IndexFileLock(service.settings.db_path)
    lock.acquire(wait=0)  # this process's own index run, as far as the watcher can tell
    watcher = Watcher(service, FAST, repo_poll_seconds=0.2, poll_seconds=0.2)
    watcher.start()
    try:
        me = str(os.getpid())
        assert watcher.wait_for(
            lambda: bool(watcher.repos_health())
            and watcher.repos_health()[0].waiting_for_lock == me, TIMEOUT)
        health = watcher.repos_health()[0]
        assert (health.pending, health.pending_since, health.lag_ms) == (0, None, None)
        assert health.rescan == "startup"
        entry = watch_health(service.settings, watcher)["repos"][health.name]
        assert (entry["pending"], entry["lag_ms"], entry["rescan"]) == (0, None, "startup")
    finally:
        lock.release()
    try:
        assert watcher.wait_idle(TIMEOUT)
        health = watcher.repos_health()[0]
        assert health.rescan is None and health.waiting_for_lock is None
    finally:
        watcher.stop()
    said = [r.getMessage() for r in caplog.records]
    assert not any("Another ctxd process" in m for m in said), said
    assert any("waiting for this process's index run" in m for m in said), said


def test_second_watcher_stands_by_and_takes_over(home, repo, caplog):
    caplog.set_level(logging.WARNING, logger="ctxd.server.watch.watcher")
    seed(repo)
    first_service, second_service = make_service(home), make_service(home)
    first_service.index(repo.root)
    first = start(first_service)
    second = Watcher(second_service, FAST, repo_poll_seconds=0.2).start()
    try:
        assert second.wait_for(lambda: second.role is Role.STANDBY, TIMEOUT)
        assert f"pid {os.getpid()}" in second.health()["message"]
        assert any("already watching" in r.getMessage() for r in caplog.records)
        first.stop()
        assert second.wait_for(lambda: second.role is Role.ACTIVE and second.idle, TIMEOUT)
        repo.write("src/app.py", "X = 'echidna_takeover'\n")
        assert second.wait_for(searchable(second_service, "echidna_takeover", "src/app.py"),
                               TIMEOUT)
    finally:
        first.stop()
        second.stop()
        first_service.close()
        second_service.close()


class _NoWatchesObserver(InotifyObserver):
    """The OS seam: an inotify observer whose watches cannot be added (limit reached)."""

    def schedule(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "inotify watch limit reached")


def test_falls_back_to_polling_when_watches_cannot_be_added(service, repo, caplog):
    caplog.set_level(logging.WARNING, logger="ctxd.server.watch.watcher")
    seed(repo)
    service.index(repo.root)
    watcher = start(service, observer_factory=_NoWatchesObserver)
    try:
        health = watcher.repos_health()[0]
        assert health.watching and health.mode == "polling"
        assert "watches cannot be added" in (health.note or "")
        warned = [r for r in caplog.records if "Cannot watch" in r.getMessage()]
        assert len(warned) == 1
        repo.write("src/app.py", "X = 'numbat_polled'\n")
        repo.remove("src/util.py")
        assert watcher.wait_for(
            lambda: "src/app.py" in fts(service, "numbat_polled")
            and "src/util.py" not in paths(service)
            and len(watcher.results) > 0,  # the batch is logged just after it commits
            TIMEOUT,
        )
        assert watcher.results[-1].trigger == "poll"
        assert watch_health(service.settings, watcher)["repos"][repo.root.name]["mode"] == "polling"
    finally:
        watcher.stop()


def test_queue_overflow_warning_triggers_a_rescan(service, repo, watched):
    repo_id = service.store().repos()[0].id
    with service.write_lock():
        service.store().delete_files(repo_id, ["src/util.py"])  # a change the index missed
    assert "src/util.py" not in paths(service)
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost"
    )
    assert watched.wait_for(lambda: "src/util.py" in paths(service), TIMEOUT)
    assert watched.results[-1].trigger == "rescan"


def test_repository_indexed_while_running_is_watched(service, repo, tmp_path):
    watcher = start(service)
    try:
        assert watcher.repos_health() == []
        other = RepoBuilder(tmp_path / "later")
        other.write("a.py", "A = 1\n")
        service.index(other.root)
        watcher.refresh_repos()
        assert watcher.wait_for(
            lambda: any(h.name == "later" and h.watching for h in watcher.repos_health()),
            TIMEOUT,
        )
        other.write("b.py", "B = 'bilby_later'\n")
        assert watcher.wait_for(searchable(service, "bilby_later", "b.py"), TIMEOUT)
    finally:
        watcher.stop()


def test_removed_repository_is_no_longer_watched(service, repo, watched):
    service.remove("repo")
    assert watched.wait_for(lambda: watched.repos_health() == [], TIMEOUT)
    repo.write("src/app.py", "X = 'not_recreated'\n")
    assert watched.wait_idle(TIMEOUT)
    assert service.store().repos() == []


def test_repository_folder_deleted_then_restored_is_watched_again(service, repo, watched):
    shutil.rmtree(repo.root)
    assert watched.wait_for(
        lambda: watched.repos_health()[0].error is not None
        and not watched.repos_health()[0].watching,
        TIMEOUT,
    )
    seed(repo)
    assert watched.wait_for(lambda: watched.repos_health()[0].watching, TIMEOUT)
    repo.write("src/app.py", "X = 'phoenix_back'\n")
    assert watched.wait_for(searchable(service, "phoenix_back", "src/app.py"), TIMEOUT)
    assert {"src/util.py", "docs/guide.md"} <= paths(service)


def test_changed_repository_options_apply_to_later_events(service, repo, watched):
    service.index(repo.root, exclude_patterns=["*.md"])
    assert "docs/guide.md" not in paths(service)
    repo.write("docs/new.md", "# kakapo\n")
    repo.write("src/sentinel.py", "S = 'kakapo'\n")
    assert watched.wait_for(lambda: "src/sentinel.py" in paths(service), TIMEOUT)
    assert "docs/new.md" not in paths(service)


def test_startup_catches_up_with_changes_made_while_stopped(service, repo):
    seed(repo)
    service.index(repo.root)
    repo.write("src/app.py", "X = 'dingo_offline'\n")
    repo.remove("docs/guide.md")
    repo.write("new/added.py", "Y = 1\n")
    watcher = start(service)
    try:
        assert paths(service) == {"src/app.py", "src/util.py", "new/added.py"}
        assert searchable(service, "dingo_offline", "src/app.py")()
        assert watcher.results[-1].trigger == "rescan"
    finally:
        watcher.stop()


def test_health_and_status_file_for_other_processes(service, repo, watched):
    settings = service.settings
    repo.write("src/app.py", "X = 'wallaby_status'\n")
    assert watched.wait_for(searchable(service, "wallaby_status", "src/app.py"), TIMEOUT)

    def status_written() -> bool:
        data = read_watch_status(settings)
        return bool(data) and data["repos"]["repo"]["last_update"] is not None

    assert watched.wait_for(status_written, TIMEOUT)
    data = read_watch_status(settings)
    assert data is not None and data["pid"] == os.getpid() and data["role"] == "active"
    entry = data["repos"]["repo"]
    assert entry["watching"] is True and entry["mode"] == "inotify"
    assert entry["pending"] == 0 and entry["lag_ms"] is not None
    assert watch_health(settings)["repos"]["repo"]["mode"] == "inotify"
    watched.stop()
    assert read_watch_status(settings) is None
    assert watch_health(settings) == {"running": False, "repos": {}}


def test_stop_is_clean_and_releases_the_lock(service, repo):
    seed(repo)
    service.index(repo.root)
    watcher = start_watching(service, replace(service.settings, watch=FAST))
    assert watcher.wait_ready(TIMEOUT)
    watcher.stop()
    assert not watcher.running and watcher.role is Role.STOPPED
    probe = IndexFileLock(Path(f"{service.settings.db_path}.watch"))
    probe.acquire(wait=0)
    probe.release()


class GatedEmbedder(FakeEmbedder):
    """Blocks in `embed` while the gate is closed, and says when it got there."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.entered.set()
        assert self.gate.wait(TIMEOUT)
        return super().embed(texts)


def test_reads_are_not_blocked_while_a_batch_embeds_and_stop_finishes_it(home, repo):
    seed(repo)
    emb = GatedEmbedder()
    service = Service(replace(load_settings({"home": str(home)}), watch=FAST), embedder=emb)
    reader = make_service(home)
    service.index(repo.root)
    watcher = start(service)
    try:
        emb.gate.clear()
        emb.entered.clear()
        repo.write("src/app.py", "def start_engine(speed):\n    return 'koala_reads'\n")
        assert emb.entered.wait(TIMEOUT)  # the batch holds the write lock, embedding
        # phase 1 is committed: full text and symbols are readable meanwhile
        assert fts(reader, "koala_reads") == {"src/app.py"}
        assert reader.symbols("start_engine").items
        watcher.request_stop()
        emb.gate.set()
        watcher.stop()
        assert not watcher.running
        lock = IndexFileLock(service.settings.db_path)
        lock.acquire(wait=0)  # released by the watcher
        lock.release()
    finally:
        emb.gate.set()
        watcher.stop()
        reader.close()
        service.close()


# -- crash and restart -------------------------------------------------------------------

CHILD = """
import sys, threading
sys.path.insert(0, {root!r})
from tests.conftest import FakeEmbedder
from ctxd.server.config import WatchOptions, load_settings
from ctxd.server.service import Service
from ctxd.server.watch.watcher import Watcher

class StuckEmbedder(FakeEmbedder):
    def embed(self, texts):
        print("EMBEDDING", flush=True)
        threading.Event().wait()

service = Service(load_settings({{"home": {home!r}}}), embedder=StuckEmbedder())
watcher = Watcher(service, WatchOptions(debounce_ms=50, rescan_seconds=0)).start()
assert watcher.wait_ready(60) and watcher.wait_idle(60)
print("READY", flush=True)
threading.Event().wait()
"""


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    """The child's stdout, line by line (the pipe is closed at EOF)."""
    out: queue.Queue[str] = queue.Queue()
    stdout = proc.stdout
    assert stdout is not None

    def pump() -> None:
        with stdout:
            for line in stdout:
                out.put(line.strip())
        out.put("EOF")

    threading.Thread(target=pump, daemon=True).start()
    return out


def _drain(lines: queue.Queue[str]) -> None:
    """Wait for the pump to see EOF (the child is dead), so the pipe is closed."""
    while lines.get(timeout=30) != "EOF":
        pass


def _json_lines(lines: queue.Queue[str]) -> Iterator[dict]:
    while True:
        line = lines.get(timeout=180)
        assert line != "EOF", "child exited"
        if line.startswith("{"):
            yield json.loads(line)


def _expect(lines: queue.Queue[str], want: str, timeout: float = 90) -> None:
    while True:
        line = lines.get(timeout=timeout)
        assert line != "EOF", f"child exited before printing {want}"
        if line == want:
            return


def test_kill_9_during_a_batch_then_restart_catches_up(service, repo, home):
    seed(repo)
    service.index(repo.root)
    code = CHILD.format(root=str(ROOT), home=str(home))
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    lines = _lines(proc)
    try:
        _expect(lines, "READY")
        for i in range(30):
            repo.write(f"crash/m{i}.py", f"def crash_{i}():\n    return 'tasmanian_{i}'\n")
        _expect(lines, "EMBEDDING")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        _drain(lines)
    store = service.store()
    assert store.count_pending() > 0  # killed after the rows, before the vectors
    # more changes while nothing watches
    repo.write("src/app.py", "X = 'quoll_after_crash'\n")
    repo.remove("src/util.py")
    repo.write("crash/late.py", "L = 'late'\n")
    watcher = start(service)
    try:
        want = {"src/app.py", "docs/guide.md", "crash/late.py"} | {
            f"crash/m{i}.py" for i in range(30)
        }
        assert paths(service) == want
        assert store.count_pending() == 0
        assert all(embedded(service, p) for p in want)
        assert fts(service, "tasmanian_29") == {"crash/m29.py"}
        assert searchable(service, "quoll_after_crash", "src/app.py")()
        assert store.repos()[0].index_started_at is None
    finally:
        watcher.stop()


# -- CLI ---------------------------------------------------------------------------------


def test_run_watch_shows_updates_and_stops_on_request(service, repo, home):
    seed(repo)
    lines: list[str] = []
    got = threading.Condition()
    stop = threading.Event()

    def emit(line: str) -> None:
        with got:
            lines.append(line)
            got.notify_all()

    def edit(watcher: Watcher) -> None:
        repo.write("src/app.py", "X = 'pademelon_cli'\n")

    def run() -> None:
        run_watch(service, [repo.root], stop=stop, emit=emit, on_started=edit)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        with got:
            assert got.wait_for(lambda: any("1 changed" in x for x in lines), TIMEOUT)
    finally:
        stop.set()
        thread.join(TIMEOUT)
    assert not thread.is_alive()
    assert lines[0].endswith("is not indexed yet: indexing it first...")
    assert any(x.startswith("watching 1 repository (Ctrl-C") for x in lines)
    assert any("src/app.py" in x and "1 changed" in x for x in lines)
    assert lines[-1].startswith("stopped after")


@pytest.mark.model
def test_ctxd_watch_command_prints_updates_and_exits_cleanly_on_sigterm(repo, home):
    """SIGTERM while the second file's embedding may be running: the command stops at a
    consistent point, whichever thread the kernel hands the signal to (the main thread
    used to notice it only at the end of its 1 s wait). No clock is read: the exit code,
    the status file, the watch lock and the index's rows tell it all."""
    seed(repo)
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r});"
        "from ctxd.server.cli.watch_cmd import watch;"
        f"watch.main(args=[{str(repo.root)!r}, '--debounce-ms', '50', '--json'],"
        f" obj={{'home': {str(home)!r}}}, prog_name='ctxd watch')"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    lines = _lines(proc)
    try:
        events = _json_lines(lines)
        assert next(events)["event"] == "watching"
        (repo.root / "src" / "app.py").write_text("X = 'cassowary'\n", encoding="utf-8")
        while True:
            obj = next(events)
            if obj["event"] == "batch" and "src/app.py" in obj["paths"]:
                break
        assert obj["chunks_embedded"] == 0  # a batch indexes; its vectors follow
        done = next(e for e in events if e["event"] == "embedded")  # honest counts
        assert done == {"event": "embedded", "repository": repo.root.name, "checkpoints": 1}
        (repo.root / "src" / "util.py").write_text("Y = 'quokka'\n", encoding="utf-8")
        batch = next(e for e in events if e["event"] == "batch")
        assert batch["paths"] == ["src/util.py"]
        # Its embedding runs now (or is about to); the signal does not wait for it.
        rest = [json.loads(line) for line in _stop(proc, lines, signal.SIGTERM)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert proc.returncode == 0
    assert not (home / "watch-status.json").exists()
    # The index is consistent: the batch's rows are whole; util.py's vector is there when
    # its embedding said so, and otherwise it is whole or still pending (the next run
    # computes it), never half-written.
    assert all(e["event"] == "embedded" for e in rest), rest
    s = make_service(home)
    try:
        assert fts(s, "quokka") == {"src/util.py"}
        assert fts(s, "cassowary") == {"src/app.py"}
        assert embedded(s, "src/app.py")
        if rest:
            assert rest == [{"event": "embedded", "repository": repo.root.name,
                             "checkpoints": 1}]
            assert embedded(s, "src/util.py")
        assert (s.store().count_pending() == 0) == embedded(s, "src/util.py")
    finally:
        s.close()


def _watch_cli(home: Path, *args: str) -> subprocess.Popen[str]:
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r});"
        "from ctxd.server.cli.main import main;"
        f"main(args=['--home', {str(home)!r}, 'watch', *sys.argv[1:]], prog_name='ctxd')"
    )
    return subprocess.Popen([sys.executable, "-c", code, *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _stop(proc: subprocess.Popen[str], lines: queue.Queue[str],
          sig: signal.Signals = signal.SIGINT) -> list[str]:
    """Send `proc` `sig`, wait for it, and return the rest of its output."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    rest = []
    while (line := lines.get(timeout=30)) != "EOF":
        rest.append(line)
    return rest


def test_ctxd_watch_says_standby_once(home):
    first = _watch_cli(home)
    first_lines = _lines(first)
    second = None
    try:
        _expect(first_lines, "No repositories are indexed yet; watching for new ones "
                "(`ctxd index PATH`).")
        second = _watch_cli(home)
        second_lines = _lines(second)
        said = second_lines.get(timeout=60)
        assert said.startswith("standby: Another ctxd process")
        rest = _stop(second, second_lines)
        assert not any("Another ctxd process" in line for line in rest), rest
        assert rest == ["stopped after 0 updates"]
    finally:
        _stop(first, first_lines)
        if second is not None and second.poll() is None:
            second.kill()
            second.wait(10)

