"""`ctxd daemon`: real daemons in temporary index homes, always stopped by the fixtures.

Covers the protocol records round trip, CLI output that is the same through the daemon and
in-process, progress streaming, and the failure cases: a daemon killed with `kill -9`, a
daemon of another version, a daemon dying mid-request, two starts at once, a socket path
too long for AF_UNIX, another user's client, and the idle exit.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import DaemonError, IndexNotFound
from ctxd.indexer.models import Progress
from ctxd.search.models import Copy, Hit, LineMatch, MatchSource
from ctxd.server import first_search
from ctxd.server.cli.main import main
from ctxd.server.config import Settings, load_settings
from ctxd.server.daemon import lifecycle, protocol
from ctxd.server.daemon.client import exchange
from ctxd.server.daemon.paths import (
    MAX_SOCKET_PATH,
    DaemonPaths,
    lock_is_held,
    runtime_dir,
    wait_lock_free,
)
from ctxd.server.search_cases import SearchPage
from ctxd.server.service import Service
from tests.conftest import RepoBuilder
from tests.server.cli.test_cli_output import read_terminal
from tests.server.conftest import RETRY

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def ctxd(*args: str, autostart: bool = False, **env: str) -> subprocess.CompletedProcess[str]:
    """`ctxd ARGS` in a fresh process (the environment of this test, plus `env`)."""
    full = {**os.environ, "CTXD_DAEMON_AUTOSTART": "true" if autostart else "false", **env}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full,
                          timeout=180, check=False)


def run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def daemons(isolated_env: Path) -> Iterator[SimpleNamespace]:
    """`start(settings=None)` starts a daemon for the test's home; every daemon of a home
    the test touched (`track(paths)`) is stopped afterwards, whatever happened."""
    homes: list[DaemonPaths] = []

    def track(paths: DaemonPaths) -> DaemonPaths:
        homes.append(paths)
        return paths

    def start(settings: Settings | None = None) -> dict:
        settings = settings or load_settings()
        paths = track(DaemonPaths.for_home(settings.home))
        return lifecycle.start(settings, paths)

    yield SimpleNamespace(start=start, track=track,
                          paths=lambda: track(DaemonPaths.for_home(isolated_env)))
    for paths in homes:
        lifecycle.stop(paths, timeout=20)


@pytest.fixture
def indexed(repo: RepoBuilder) -> RepoBuilder:
    """A small repository indexed in-process with the real model."""
    repo.write("net/retry.py", RETRY)
    repo.write("shop/cart.py", "class Cart:\n    def total(self, prices):\n"
                               "        return sum(prices)\n\n\ndef checkout(cart):\n"
                               "    return cart.total([1, 2])\n")
    assert run("--no-daemon", "index", str(repo.root)).exit_code == 0
    return repo


# -- protocol ---------------------------------------------------------------------------------


def test_protocol_round_trips_records_enums_tuples_and_errors():
    hit = Hit(repository="r", path="a.py", language="python", start_line=1, end_line=2,
              score=0.5, sources=(MatchSource.SEMANTIC, MatchSource.LEXICAL),
              matches=(LineMatch(line=1, text="x", ranges=((1, 2),)),),
              also_in=(Copy("r", "docs/a.py", 3, 4),))
    page = SearchPage(query="q", mode="hybrid", results=[hit], stats={"$odd": 1, "n": (1, 2)})
    wire = json.loads(json.dumps(protocol.encode(page)))
    assert protocol.decode(wire) == page
    err = protocol.error_from_wire(json.loads(json.dumps(protocol.error_to_wire(
        IndexNotFound("Repository not indexed: x", hint="h", details={"field": "repository"})))))
    assert type(err) is IndexNotFound and err.code == "NOT_FOUND" and err.hint == "h"
    assert err.details == {"field": "repository"}


def test_protocol_refuses_to_build_unknown_types():
    with pytest.raises(protocol.ProtocolError):
        protocol.decode({"$t": "Popen", "args": ["rm"]})
    with pytest.raises(TypeError):
        protocol.encode(Path("/x"))


# -- same output either way -------------------------------------------------------------------


def _untimed(text: str) -> str:
    """Output with its timings zeroed: the one thing allowed to differ between two runs."""
    return re.sub(r'"duration_ms": [0-9.]+', '"duration_ms": 0', text)


def _strip_daemon(text: str) -> str:
    """Status text less what only the daemon reports (itself, what it holds in memory)."""
    return "\n".join(ln for ln in text.splitlines()
                     if not ln.startswith(("daemon:", "memory:")))


@pytest.mark.model
def test_cli_output_is_byte_for_byte_the_same_through_the_daemon(indexed, daemons):
    daemons.start()
    paths = daemons.paths()
    before = exchange(paths, "daemon_info")["requests"]
    commands = [
        ("search", "exponential backoff between attempts"),
        ("search", "exponential backoff between attempts", "--json"),
        ("search", "retry", "--mode", "keyword", "--json"),
        ("search", "backoff_delays lang:python", "--mode", "lexical"),
        ("search", "nothing-matches-this-zzzz", "--mode", "lexical"),
        ("symbols", "tot"), ("symbols", "tot", "--json"),
        ("refs", "Cart"), ("refs", "Cart", "--json"),
        ("files", "**/*.py"), ("files", "**/*.py", "--json"),
        ("cat", "repo", "net/retry.py", "--lines", "2:6"),
        ("cat", "repo", "net/retry.py", "--json"),
        ("cat", "repo", "../outside.py"),
        ("repos",), ("repos", "--json"),
        ("search", "x", "--repo", "no-such-repo", "--json"),
    ]
    for args in commands:
        via_daemon, local = run(*args), run("--no-daemon", *args)
        assert (via_daemon.exit_code, _untimed(via_daemon.output)) == (
            local.exit_code, _untimed(local.output)), (args, via_daemon.output, local.output)
    served = exchange(paths, "daemon_info")["requests"] - before
    assert served >= len(commands)

    daemon_status, local_status = run("status"), run("--no-daemon", "status")
    assert _strip_daemon(daemon_status.output) == _strip_daemon(local_status.output)
    assert "daemon: pid" in daemon_status.output
    assert "memory: vectors float32" in daemon_status.output
    as_json = [json.loads(r.output) for r in (run("status", "--json"),
                                              run("--no-daemon", "status", "--json"))]
    for d in as_json:
        assert d.pop("daemon")["running"] is True
    held = as_json[0].pop("memory")  # what the warm daemon holds; a one-shot CLI holds none
    assert held["vectors"]["form"] == "float32" and held["vectors"]["rows"] > 0
    assert held["keyword_postings"]["state"] == held["symbol_names"]["state"] == "off"
    assert "memory" not in as_json[1]
    assert as_json[0] == as_json[1]


@pytest.mark.model
def test_index_and_remove_through_the_daemon_match_in_process(indexed, daemons, tmp_path):
    daemons.start()
    other = RepoBuilder(tmp_path / "other")
    other.write("a.py", "def alpha():\n    return 1\n")
    outputs = []
    for prefix in ((), ("--no-daemon",)):
        first = run(*prefix, "index", str(other.root), "--json")
        again = run(*prefix, "index", str(other.root))
        removed = run(*prefix, "remove", "other")
        # stdout only: through the daemon, an index run may first wait for the daemon's
        # watcher (a note on stderr) while it picks up the repository it just learned of.
        stats = json.loads(first.stdout)
        stats.pop("duration_ms"), stats.pop("indexed_at")
        outputs.append((first.exit_code, stats, again.stdout.rsplit("\n  in ", 1)[0],
                        removed.stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0][1]["files_indexed"] == 1


@pytest.mark.model
def test_index_through_the_daemon_streams_progress(indexed, daemons, tmp_path):
    daemons.start()
    notes: list[str] = []
    client = lifecycle.connect(load_settings(), autostart=False,
                               local=lambda: pytest.fail("fell back"), note=notes.append)
    assert client is not None
    other = RepoBuilder(tmp_path / "other")
    for n in range(5):
        other.write(f"m{n}.py", f"def f{n}():\n    return {n}\n")
    seen: list[Progress] = []
    stats = client.index(str(other.root), progress=seen.append)
    assert stats.files_indexed == 5 and not notes
    assert {p.phase for p in seen} >= {"walk", "done"}
    assert all(isinstance(p, Progress) for p in seen)


# -- failures -----------------------------------------------------------------------------------


@pytest.mark.model
def test_a_daemon_killed_with_kill_9_is_cleaned_up_and_restarted(indexed, daemons):
    old = daemons.start()
    paths = daemons.paths()
    os.kill(old["pid"], signal.SIGKILL)
    assert wait_lock_free(paths.lock, 20)
    assert paths.socket.exists()  # the leftover a crash leaves

    status = ctxd("status")  # no autostart: notices, cleans up, works in-process
    assert status.returncode == 0, status.stderr
    assert "daemon: not running" in status.stdout
    assert not paths.socket.exists() and not paths.record.exists()

    r = ctxd("search", "exponential backoff", autostart=True)
    assert r.returncode == 0, r.stderr
    assert "net/retry.py" in r.stdout
    new = lifecycle.probe(paths)
    assert new is not None and new["pid"] != old["pid"]


OLD_DAEMON = (
    "import sys; import ctxd.server.daemon.protocol as p; p.CTXD_VERSION = '0.0.1-old'; "
    "from ctxd.server.cli.main import main; main(['daemon', 'run'])"
)


@contextlib.contextmanager
def _daemon_process(code: str) -> Iterator[subprocess.Popen[str]]:
    """`python -c code` (a daemon with something changed), killed afterwards if still
    running."""
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


def test_a_daemon_of_another_version_is_stopped_and_not_trusted(isolated_env, daemons):
    paths = daemons.paths()
    with _daemon_process(OLD_DAEMON) as old:
        info = _wait_connectable(paths, old)
        assert info["version"] == "0.0.1-old"
        r = ctxd("status")  # would use a running daemon, if it trusted it
        assert r.returncode == 0, r.stderr
        assert "is version 0.0.1-old" in r.stderr and "stopping it" in r.stderr
        assert old.wait(timeout=20) == 0
        assert lifecycle.probe(paths) is None


SLOW_CHECK_DAEMON = (
    "import ctxd.server.daemon.server as s; s.HOME_CHECK_INTERVAL = 3600.0; "
    "from ctxd.server.cli.main import main; main(['daemon', 'run'])"
)


def test_a_sigterm_taken_by_a_worker_thread_stops_the_daemon(isolated_env, daemons):
    """The kernel may hand a SIGTERM to any thread; the selector, here with its home check
    moved out of the way (so idle until its idle exit), wakes at once all the same."""
    libc = ctypes.CDLL(None, use_errno=True)
    if not hasattr(libc, "tgkill"):
        pytest.skip("no tgkill in this C library (glibc >= 2.30 has it)")
    paths = daemons.paths()
    with _daemon_process(SLOW_CHECK_DAEMON) as proc:
        info = _wait_connectable(paths, proc)
        assert ctxd("status").returncode == 0  # a request: a worker thread stays for the next
        workers = [int(t) for t in os.listdir(f"/proc/{info['pid']}/task")
                   if int(t) != info["pid"]]
        assert workers
        assert libc.tgkill(info["pid"], workers[-1], signal.SIGTERM) == 0
        assert proc.wait(timeout=60) == 0  # the old daemon slept on (until its idle exit)
        assert lifecycle.probe(paths) is None


def _wait_connectable(paths: DaemonPaths, proc: subprocess.Popen, timeout: float = 60) -> dict:
    """The handshake of the daemon `proc`, once its socket accepts connections."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = lifecycle.probe(paths)
        if info is not None:
            return info
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else proc.returncode
        time.sleep(0.05)
    raise AssertionError(f"daemon socket {paths.socket} not connectable after {timeout}s")


@pytest.mark.model
def test_a_daemon_dying_mid_request_is_reported_and_the_request_runs_in_process(
    indexed, daemons, tmp_path, real_embedder
):
    info = daemons.start()
    notes: list[str] = []
    settings = load_settings()
    client = lifecycle.connect(settings, autostart=False, note=notes.append,
                               local=lambda: Service(settings, embedder=real_embedder))
    assert client is not None
    other = RepoBuilder(tmp_path / "other")
    for n in range(20):
        other.write(f"m{n}.py", f"def f{n}():\n    return {n}\n")
    killed: list[int] = []

    def kill_on_first_event(_p: Progress) -> None:
        if not killed:
            os.kill(info["pid"], signal.SIGKILL)
            killed.append(info["pid"])

    stats = client.index(str(other.root), progress=kill_on_first_event)
    assert killed and stats.files_indexed == 20
    assert len(notes) == 1 and f"pid {info['pid']}" in notes[0]
    assert "went away during `index`" in notes[0] and "in this process" in notes[0]
    assert client.search("f3", mode="keyword").results  # later calls stay in-process
    client.close()


def test_two_daemon_starts_at_once_one_wins(isolated_env, daemons):
    paths = daemons.paths()
    env = {**os.environ, "CTXD_DAEMON_AUTOSTART": "false"}
    procs = [subprocess.Popen([*CLI, "daemon", "start", "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    pids = {json.loads(out)["pid"] for out, _err in outs}
    assert len(pids) == 1
    assert lock_is_held(paths.lock)
    assert (paths.read_record() or {})["pid"] in pids


@pytest.fixture
def short_dir():
    """Folders with short paths under /tmp (a Unix socket path must fit in ~107 bytes, and
    pytest's tmp_path is long), removed after the test."""
    made: list[Path] = []

    def make(prefix: str) -> Path:
        made.append(Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp")))
        return made[-1]

    yield make
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_socket_path_too_long_for_af_unix_goes_to_the_runtime_dir(tmp_path, monkeypatch,
                                                                     daemons, short_dir):
    home = tmp_path / ("h" * 60) / ("o" * 60)
    assert len(str(home / "daemon.sock")) > MAX_SOCKET_PATH
    runtime = short_dir("ctxd-rt-")
    monkeypatch.setenv("CTXD_HOME", str(home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    paths = daemons.track(DaemonPaths.for_home(home))
    assert paths.socket.parent == runtime

    info = daemons.start()
    assert info["socket"] == str(paths.socket)
    assert stat.S_IMODE(paths.socket.stat().st_mode) == 0o600
    assert (paths.read_record() or {})["socket"] == str(paths.socket)  # recorded in the home
    r = ctxd("daemon", "status")
    assert r.returncode == 0 and str(paths.socket) in r.stdout

    private = runtime_dir(env={})  # without XDG_RUNTIME_DIR
    assert private.name == f"ctxd-{os.getuid()}"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700


def test_the_socket_is_owner_only_and_other_users_are_refused(isolated_env, daemons, short_dir):
    info = daemons.start()
    paths = daemons.paths()
    assert stat.S_IMODE(paths.socket.stat().st_mode) == 0o600
    assert paths.socket.stat().st_uid == os.getuid()
    if os.getuid() != 0 or not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("needs root (to act as another user) and SO_PEERCRED")
    # The index home is private (pytest's tmp folders are 0700): give the socket inode a
    # second name in a folder anyone may enter, so only the socket's own checks remain.
    public = short_dir("ctxd-perm-")
    public.chmod(0o755)
    link = public / "d.sock"
    os.link(paths.socket, link)
    probe = (
        "import json, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "try:\n"
        f"    s.connect({str(link)!r})\n"
        "except PermissionError:\n"
        "    print('EACCES'); sys.exit()\n"
        # A stranger is refused before it can send anything: just read the answer.
        "print(s.makefile().readline().strip())\n"
    )
    nobody = 65534

    def as_nobody() -> str:
        r = subprocess.run(["/usr/bin/python3", "-I", "-S", "-c", probe], user=nobody,
                           group=nobody, capture_output=True, text=True, timeout=30, cwd="/")
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    assert as_nobody() == "EACCES"  # the file mode keeps other users out
    os.chmod(paths.socket, 0o666)  # even if the mode were wrong, the peer check refuses
    answer = json.loads(as_nobody())
    assert "error" in answer and f"refused uid {nobody}" in answer["error"]["message"]
    assert lifecycle.probe(paths)["pid"] == info["pid"]  # and the owner is still served
    link.unlink()
    public.rmdir()


def test_an_idle_daemon_exits_by_itself(isolated_env, monkeypatch, daemons):
    monkeypatch.setenv("CTXD_DAEMON_IDLE_MINUTES", "0.01")
    daemons.start()
    paths = daemons.paths()
    assert wait_lock_free(paths.lock, 60)
    assert not paths.socket.exists() and not paths.record.exists()


def test_daemon_commands_report_and_stop(isolated_env, daemons):
    daemons.paths()
    assert ctxd("daemon", "status").returncode == 1
    started = ctxd("daemon", "start")
    assert started.returncode == 0 and "ctxd daemon running (pid" in started.stdout
    st = json.loads(ctxd("daemon", "status", "--json").stdout)
    assert st["running"] and st["version"] == protocol.CTXD_VERSION and st["uptime_s"] >= 0
    assert st["model"] == "all-MiniLM-L6-v2"
    stopped = ctxd("daemon", "stop")
    assert stopped.returncode == 0 and f"stopped ctxd daemon (pid {st['pid']})" in stopped.stdout
    assert ctxd("daemon", "stop").stdout.strip() == "no ctxd daemon is running"


# -- ctxd serve -------------------------------------------------------------------------------


@pytest.mark.model
def test_serve_clients_share_one_daemon(tmp_path, daemons):
    """Three `ctxd serve` stdio clients: the first starts the daemon, all three send their
    tool calls to it (one model, one vector matrix, one writer)."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.server.conftest import text, write_sample
    from tests.server.mcp.test_mcp_e2e import exercise
    from tests.server.serving import serve_command, server_env

    repo = write_sample(RepoBuilder(tmp_path / "sample")).root
    paths = daemons.paths()
    cmd = serve_command()
    params = StdioServerParameters(
        command=cmd[0], args=[*cmd[1:], "--transport", "stdio"], cwd=str(tmp_path),
        env=server_env(tmp_path, CTXD_DAEMON_AUTOSTART="true"))
    logs = tmp_path / "serve-stderr.log"

    async def ask(question: str) -> str:
        with logs.open("a", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=240) as client:
                found = await client.call_tool("semantic_search", {"query": question})
                assert not found.is_error, text(found)
                return text(found)

    async def main() -> None:
        with logs.open("a", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog),
                              read_timeout_seconds=240) as client:
                await exercise(client, repo)
        answers: list[str] = []

        async def one(q: str) -> None:
            answers.append(await ask(q))

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "wait longer after each failed attempt")
            tg.start_soon(one, "area of a circle")
        assert len(answers) == 2

    anyio.run(main)
    info = exchange(paths, "daemon_info")
    # exercise: index + search + semantic_search + file_content (+ freshness reads), and
    # the two later clients' semantic searches: all answered by this one daemon.
    assert info["requests"] >= 6
    assert info["model_loaded"] is True
    assert "Traceback" not in logs.read_text(encoding="utf-8")


def test_a_client_finds_the_socket_its_daemon_recorded(isolated_env, monkeypatch, daemons,
                                                       short_dir):
    """A daemon started with another runtime folder (e.g. by systemd) is still found."""
    home = isolated_env
    long_home = home.parent / ("x" * 70) / ("y" * 40)
    runtime = short_dir("ctxd-rt-")
    monkeypatch.setenv("CTXD_HOME", str(long_home))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    started = daemons.start()
    daemons.track(DaemonPaths.for_home(long_home))
    other = short_dir("ctxd-rt-")
    assert DaemonPaths.for_home(long_home, env={"XDG_RUNTIME_DIR": str(other)}).socket == Path(
        started["socket"])
    r = ctxd("daemon", "status", "--json", XDG_RUNTIME_DIR=str(other))
    assert r.returncode == 0 and json.loads(r.stdout)["pid"] == started["pid"]


@pytest.mark.model
def test_the_cli_says_when_the_daemon_dies_mid_request_and_finishes_in_process(
    indexed, daemons, tmp_path
):
    import time

    info = daemons.start()
    paths = daemons.paths()
    big = RepoBuilder(tmp_path / "big")
    for n in range(300):
        big.write(f"pkg/m{n}.py", f"def function_{n}(x):\n    '''Doubles {n}.'''\n"
                                  f"    return x * {n}\n")
    before = exchange(paths, "daemon_info")["requests"]
    cli = subprocess.Popen([*CLI, "index", str(big.root)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "CTXD_DAEMON_AUTOSTART": "false"})
    try:
        deadline = time.monotonic() + 60
        while exchange(paths, "daemon_info")["requests"] == before:  # the index request began
            assert time.monotonic() < deadline and cli.poll() is None
            time.sleep(0.02)
        os.kill(info["pid"], signal.SIGKILL)
        out, err = cli.communicate(timeout=300)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.communicate()
    assert cli.returncode == 0, err
    assert f"note: ctxd daemon (pid {info['pid']}) went away during `index`" in err
    assert "running it in this process instead" in err
    assert out.startswith(f"Indexed {big.root} as `big`: 300 files")


def test_stop_does_not_wait_for_a_client_holding_an_idle_connection(isolated_env, daemons):
    info = daemons.start()
    paths = daemons.paths()
    idle = socket.socket(socket.AF_UNIX)
    idle.connect(str(paths.socket))  # connected, never sends a request
    try:
        assert lifecycle.stop(paths, timeout=10) == info["pid"]
        assert not lock_is_held(paths.lock)
        assert idle.recv(1) == b""  # the daemon hung up on it
        # ... and exited by itself (not through SIGTERM/SIGKILL, which log nothing):
        assert f"ctxd daemon (pid {info['pid']}) stopped" in paths.log.read_text("utf-8")
    finally:
        idle.close()


def test_only_a_query_that_needs_the_model_starts_the_daemon(indexed_text_only, daemons):
    paths = daemons.paths()
    for args in (("search", "--mode", "lexical", "alpha"), ("search", "alpha", "--mode",
                                                             "keyword"),
                 ("symbols", "alpha"), ("status",), ("search", "alpha", "--explain")):
        r = ctxd(*args, autostart=True)
        assert r.returncode in (0, 1), r.stderr
        assert lifecycle.probe(paths) is None, args


@pytest.fixture
def indexed_text_only(repo: RepoBuilder, fake_embedder) -> RepoBuilder:
    """Text and symbols in a real index (vectors from the fake embedder: no model here)."""
    repo.write("a.py", "def alpha():\n    return 1\n")
    service = Service(load_settings(), embedder=fake_embedder)
    service.index(repo.root)
    service.close()
    return repo


@pytest.mark.model
def test_no_daemon_and_autostart_false_keep_a_semantic_search_in_process(indexed, daemons):
    paths = daemons.paths()
    r = ctxd("search", "exponential backoff", "--no-daemon", autostart=True)
    assert r.returncode == 0 and "net/retry.py" in r.stdout
    assert lifecycle.probe(paths) is None
    r = ctxd("search", "exponential backoff", autostart=False)
    assert r.returncode == 0 and "net/retry.py" in r.stdout
    assert lifecycle.probe(paths) is None
    assert "starting the ctxd daemon" not in r.stderr
    # the in-process searches loaded the model: what that took here is recorded (issue 30)
    measured = first_search.last(paths.home)
    assert measured is not None and measured > 0
    r = ctxd("search", "exponential backoff", autostart=True)
    assert r.returncode == 0 and "net/retry.py" in r.stdout
    assert lifecycle.probe(paths) is not None, r.stderr  # and by default it starts one
    # ... and says so, since it is the wait a search cannot explain (issue 17), with what
    # loading the model took here the last time
    assert (f"note: starting the ctxd daemon (loading the model: {measured:.1f} s the last "
            "time here)...") in r.stderr
    r = ctxd("search", "exponential backoff", autostart=True)
    assert r.returncode == 0 and "starting the ctxd daemon" not in r.stderr


@pytest.mark.model
@pytest.mark.timeout(900)  # two daemons load the model: slow on a busy machine
def test_a_daemon_start_says_what_the_last_one_took_here(indexed, daemons):
    """Before any measure the general figure; the daemon records its own start-up (from
    the client's launch to its model and vectors loaded), and the next start says it."""
    paths = daemons.paths()
    r = ctxd("search", "exponential backoff", autostart=True)
    assert r.returncode == 0 and "net/retry.py" in r.stdout
    assert lifecycle.probe(paths) is not None, r.stderr  # the daemon, not this process
    assert (f"note: starting the ctxd daemon (loading the model: {first_search.UNMEASURED})"
            "...") in r.stderr
    deadline = time.monotonic() + 300  # written once the daemon is warm
    while first_search.last(paths.home) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    took = first_search.last(paths.home)
    assert took is not None and took > 0
    assert ctxd("daemon", "stop").returncode == 0
    r = ctxd("search", "exponential backoff", autostart=True)
    assert r.returncode == 0 and "net/retry.py" in r.stdout
    assert lifecycle.probe(paths) is not None, r.stderr
    assert (f"note: starting the ctxd daemon (loading the model: {took:.1f} s the last time "
            "here)...") in r.stderr


@pytest.mark.model
def test_ctxd_index_through_the_daemon_draws_its_progress_bar_on_a_terminal(
    indexed, daemons, tmp_path
):
    import pty

    daemons.start()
    paths = daemons.paths()
    before = exchange(paths, "daemon_info")["requests"]
    big = RepoBuilder(tmp_path / "big")
    for n in range(60):
        big.write(f"m{n}.py", f"def function_{n}(x):\n    return x * {n}\n")
    master, slave = pty.openpty()  # stderr is a terminal, so the bar is drawn
    proc = subprocess.Popen([*CLI, "index", str(big.root)], stdout=subprocess.PIPE,
                            stderr=slave, text=True,
                            env={**os.environ, "CTXD_DAEMON_AUTOSTART": "false"})
    os.close(slave)
    drawn = read_terminal(master)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0
    assert out.startswith(f"Indexed {big.root} as `big`: 60 files")
    assert "\r\x1b[K" in drawn and "walk" in drawn  # the bar, fed by the daemon's events
    assert exchange(paths, "daemon_info")["requests"] > before  # the daemon did the work


def test_protocol_carries_file_names_that_are_not_utf8():
    """`os` hands such names back as lone surrogates; the wire must carry them unchanged."""
    message = {"id": 1, "result": {"path": "caf\udce9.py"}}
    line = protocol.dumps(message)
    assert line.endswith(b"\n") and json.loads(line) == message


def test_stop_leaves_the_socket_of_a_live_holder_it_cannot_signal(isolated_env):
    """A process holds the daemon lock but answers nothing and left no record (pid
    unknown): `stop` must say so and keep its socket, not delete a live daemon's files."""
    paths = DaemonPaths.for_home(isolated_env)
    paths.socket.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()",
         str(paths.lock)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(paths.socket))  # the socket file exists; nobody accepts on it
        try:
            with pytest.raises(DaemonError, match="does not answer and did not stop; its pid "
                                                  "is unknown") as err:
                lifecycle.stop(paths, timeout=0.2)
            assert "fuser" in (err.value.hint or "")
            assert paths.socket.exists()
            assert lock_is_held(paths.lock)
        finally:
            listener.close()
    finally:
        holder.communicate(timeout=10)  # closes its stdin (it lets go) and our pipes
    assert wait_lock_free(paths.lock, 10)
    assert lifecycle.stop(paths, timeout=1) is None  # now nothing runs


def test_a_large_daemon_log_is_rotated_when_the_daemon_starts(isolated_env, daemons):
    from ctxd.server.daemon.paths import LOG_MAX_BYTES

    paths = daemons.paths()
    paths.home.mkdir(parents=True, exist_ok=True)
    old = "an old line from a previous daemon\n" * (LOG_MAX_BYTES // 30)
    paths.log.write_text(old, encoding="utf-8")
    info = daemons.start()
    rotated = paths.log.with_name("daemon.log.1")
    assert rotated.read_text(encoding="utf-8") == old
    assert f"(pid {info['pid']}) listening on" in paths.log.read_text(encoding="utf-8")
    assert paths.log.stat().st_size < 10_000
    assert not paths.rotate_log()  # this process's stdout is not the daemon's log


@pytest.mark.model
def test_a_no_daemon_command_beside_the_daemon_leaves_its_writes_visible(indexed, daemons):
    """Issue 22, defect 1: the daemon opened a connection per thread through a helper that
    `open()`ed and `close()`d index.db outside SQLite, dropping the POSIX locks of its other
    connections; a `--no-daemon status` that then closed its own connection took itself for
    the last one, checkpointed and deleted the WAL the daemon went on writing into. Its
    later writes were invisible to other processes and hybrid queries failed with `disk I/O
    error` until the daemon stopped."""
    daemons.start()
    for _ in range(3):  # several worker threads, each with its connection
        assert ctxd("search", "checkout", "--json").returncode == 0
    beside = ctxd("--no-daemon", "status")
    assert beside.returncode == 0, beside.stderr
    indexed.write("shop/cart.py", "def zebra_discount(cart):\n    return 0\n")
    write = ctxd("index", str(indexed.root))  # through the daemon
    assert write.returncode == 0 and "note:" not in write.stderr, write.stderr
    seen = ctxd("--no-daemon", "search", "zebra_discount", "--mode", "lexical", "--json")
    assert seen.returncode == 0, seen.stderr
    assert "zebra_discount" in seen.stdout  # at once, by another process
    for query in ("zebra_discount", "checkout"):
        hybrid = ctxd("search", query, "--json")
        assert hybrid.returncode == 0, hybrid.stderr
        assert "disk I/O error" not in hybrid.stdout + hybrid.stderr
    assert "zebra_discount" in ctxd("search", "zebra_discount", "--json").stdout
