"""An index home, its files and the daemon must be the user's own (issue 39, items 2 and 13).

Before: another user made a 0777 folder with an empty 0666 `index.db`; `ctxd --home THAT
index ...` wrote the whole index (source text included) into it, for that user to copy or
swap. And another user who created `/tmp/ctxd-<uid>` first denied the daemon to every
home whose socket path is too long for the home itself. Now a home, `index.db` or a daemon
file of another user, or one other users can write, is refused with a clear error; the
client checks the uid of the daemon at the other end of its socket; and a taken
`/tmp/ctxd-<uid>` makes the daemon fall back to a private folder of its own. A second local
user is created for the session (`tests/other_user.py`); those tests are skipped, with the
reason, when not root.
"""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from ctxd.indexer.errors import ConfigError, DaemonError
from ctxd.indexer.store.private import private_home
from ctxd.server.daemon.client import Connection
from ctxd.server.daemon.paths import MAX_SOCKET_PATH, DaemonPaths
from tests.other_user import SYSTEM_PYTHON, User, run_as

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def ctxd(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full,
                          timeout=180, check=False)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture
def machine(other_user: User) -> Iterator[Path]:
    """A folder both users can reach (the test's own `tmp_path` is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="ctxd-home-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("SECRET_SAUCE = 'the source text'\n", encoding="utf-8")
    return root


def test_a_home_made_by_another_user_is_refused(machine: Path, other_user: User, repo: Path):
    public = machine / "public"
    public.mkdir(mode=0o777)
    public.chmod(0o777)
    theirs = public / "theirs"
    made = run_as(other_user, "import os\nos.umask(0)\n"
                  f"os.mkdir({str(theirs)!r}, 0o777)\n"
                  f"os.close(os.open({str(theirs / 'index.db')!r}, os.O_CREAT | os.O_WRONLY,"
                  " 0o666))\n")
    assert made.returncode == 0, made.stderr
    r = ctxd("--home", str(theirs), "--no-daemon", "index", str(repo))
    assert r.returncode != 0
    assert f"uid {other_user.uid}" in r.stderr and str(theirs) in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert (theirs / "index.db").stat().st_size == 0  # not a byte of the index written
    assert sorted(p.name for p in theirs.iterdir()) == ["index.db"]
    # The daemon is refused the same home, and says why.
    r = ctxd("--home", str(theirs), "daemon", "start")
    assert r.returncode != 0 and f"uid {other_user.uid}" in r.stderr, r.stderr
    assert sorted(p.name for p in theirs.iterdir()) == ["index.db"]


def test_a_file_of_another_user_in_your_home_is_refused(tmp_path: Path, other_user: User,
                                                        repo: Path):
    home = tmp_path / "home"
    private_home(home)
    for name in ("index.db", "daemon.json"):
        planted = home / name
        planted.write_text("", encoding="utf-8")
        os.chown(planted, other_user.uid, other_user.gid)
        with pytest.raises(ConfigError) as err:
            private_home(home)
        assert str(planted) in err.value.message
        assert f"uid {other_user.uid}" in err.value.message
        r = ctxd("--home", str(home), "--no-daemon", "index", str(repo))
        assert r.returncode != 0 and str(planted) in r.stderr, r.stderr
        planted.unlink()
    private_home(home)  # nothing of anyone else's left: the home is used again


def test_a_home_or_index_other_users_can_write_is_refused(tmp_path: Path, repo: Path):
    home = tmp_path / "home"
    private_home(home)
    home.chmod(0o777)
    with pytest.raises(ConfigError) as err:
        private_home(home)
    assert "other users can write" in err.value.message and "mode 777" in err.value.message
    assert f"chmod 700 {home}" in (err.value.hint or "")
    home.chmod(0o755)  # readable only: made private, as before (nothing could be planted)
    private_home(home)
    assert mode(home) == 0o700
    db = home / "index.db"
    db.write_text("", encoding="utf-8")
    db.chmod(0o666)
    r = ctxd("--home", str(home), "--no-daemon", "index", str(repo))
    assert r.returncode != 0 and "other users can write" in r.stderr, r.stderr
    assert str(db) in r.stderr and "Traceback" not in r.stderr
    assert db.stat().st_size == 0 and mode(db) == 0o666


def test_the_client_refuses_a_daemon_of_another_user(machine: Path, other_user: User,
                                                     tmp_path: Path):
    """The client checks the uid at the other end of the socket (`SO_PEERCRED`) before it
    sends a byte: a socket another user listens on is never the daemon."""
    if not hasattr(socket, "SO_PEERCRED"):
        pytest.skip("needs SO_PEERCRED")
    folder = machine / "sock"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    sock = folder / "d.sock"
    listener = (
        "import os, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        f"s.bind({str(sock)!r})\n"
        f"os.chmod({str(sock)!r}, 0o777)\n"
        "s.listen(4)\n"
        "print('ready', flush=True)\n"
        "c, _ = s.accept()\n"
        "c.settimeout(10)\n"
        "try:\n"
        "    got = c.recv(65536)\n"
        "except OSError:\n"
        "    got = b''\n"
        "print('GOT' if got else 'NOTHING', flush=True)\n"
        "c.sendall(b'{\"id\": 1, \"result\": {\"pid\": 1}}\\n')\n"
    )
    proc = subprocess.Popen([SYSTEM_PYTHON, "-I", "-S", "-c", listener], user=other_user.uid,
                            group=other_user.gid, extra_groups=[], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd="/",
                            env={"PATH": "/usr/bin:/bin"})
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        paths = replace(DaemonPaths.for_home(tmp_path / "home"), socket=sock)
        with pytest.raises(DaemonError) as err:
            Connection(paths)
        assert f"uid {other_user.uid}" in err.value.message and str(sock) in err.value.message
        out, _ = proc.communicate(timeout=30)
        assert out.strip() == "NOTHING"  # not even the hello reached it
    finally:
        proc.kill()
        proc.wait()


def test_a_taken_runtime_folder_falls_back_to_a_private_one(other_user: User, tmp_path: Path):
    """Another user creates `<tmp>/ctxd-<uid>` before us: a home whose socket path is too
    long still gets its daemon, with the socket in a private folder of this user's."""
    tmp = Path(tempfile.mkdtemp(prefix="t", dir="/tmp"))
    tmp.chmod(0o1777)
    home = tmp_path / ("h" * 60) / ("o" * 60)
    assert len(str(home / "daemon.sock")) > MAX_SOCKET_PATH
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    env.update(TMPDIR=str(tmp), CTXD_HOME=str(home))
    try:
        taken = tmp / f"ctxd-{os.getuid()}"
        made = run_as(other_user, f"import os; os.mkdir({str(taken)!r}, 0o700)")
        assert made.returncode == 0, made.stderr
        start = subprocess.run([*CLI, "daemon", "start"], env=env, capture_output=True,
                               text=True, timeout=180, check=False)
        assert start.returncode == 0, start.stderr
        status = subprocess.run([*CLI, "daemon", "status"], env=env, capture_output=True,
                                text=True, timeout=60, check=False)
        assert status.returncode == 0, status.stderr
        sock = next(tmp.glob("*/ctxd-*.sock"))
        assert sock.parent != taken and str(sock) in status.stdout
        st = sock.parent.lstat()
        assert st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) == 0o700
        assert taken.lstat().st_uid == other_user.uid  # theirs, untouched
    finally:
        subprocess.run([*CLI, "daemon", "stop"], env=env, capture_output=True, timeout=60,
                       check=False)
        shutil.rmtree(tmp, ignore_errors=True)
