"""Another local user must not choose the project of your `ctxd serve` (issue 31, item 4).

Before: user B writes `/var/tmp/package.json` (or creates `/var/tmp/.git`); user A runs
`ctxd serve` in `/var/tmp/scratch`; A's server indexed and watched all of `/var/tmp`. A
project root must now belong to the user (or root) and no other user may write it; the
search for markers stops at the first folder that fails this, and `serve` says why it
indexes nothing. The process tests create a second user for the session
(`tests/other_user.py`) and are skipped, with the reason, when not root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.server.project import locate_project, not_ours
from tests.other_user import User, run_as

SERVE = [sys.executable, "-m", "ctxd.server.cli.main", "--no-daemon", "serve"]


def shared_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    path.chmod(0o1777)  # as /tmp and /var/tmp are
    return path


def test_a_shared_temporary_folder_is_never_a_project(tmp_path: Path):
    home = tmp_path / "home"
    shared = shared_folder(tmp_path / "vartmp")
    (shared / ".git").mkdir()
    (shared / "package.json").write_text("{}", encoding="utf-8")
    scratch = shared / "scratch"
    scratch.mkdir()
    root, why = locate_project(scratch, home)
    assert root is None
    assert why is not None and str(shared) in why and "every local user can write" in why
    assert "mode 1777" in why
    # The user's own manifest below it is the project: the planted `.git` no longer wins.
    (scratch / "pyproject.toml").write_text("", encoding="utf-8")
    assert locate_project(scratch, home) == (scratch, None)


def test_a_shared_folder_without_markers_is_not_worth_a_word(tmp_path: Path):
    scratch = shared_folder(tmp_path / "tmp") / "scratch"
    scratch.mkdir()
    assert locate_project(scratch, tmp_path / "home") == (None, None)


def test_a_folder_of_another_user_is_not_a_project(tmp_path: Path):
    folder = tmp_path / "theirs"
    folder.mkdir()
    me = os.geteuid()
    assert not_ours(folder) is None
    if me == 0:  # root's folders are anyone's to serve: give this one to somebody else
        os.chown(folder, 4242, -1)
        assert not_ours(folder) == f"{folder} belongs to another user (uid 4242)"
    else:
        assert not_ours(folder, uid=me + 1) == f"{folder} belongs to another user (uid {me})"


@pytest.fixture
def machine(other_user: User) -> Iterator[Path]:
    """A folder both users can reach (the test's own `tmp_path` is root's alone)."""
    base = Path(tempfile.mkdtemp(prefix="ctxd-owner-", dir="/tmp"))
    base.chmod(0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def serve_in(folder: Path, home: Path) -> str:
    """`ctxd serve` (stdio, the automatic project on) started in `folder` by this user;
    its stdin at EOF, so it stops once started. Its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    env.update(CTXD_HOME=str(home / ".ctxd"), HOME=str(home), HF_HUB_OFFLINE="1",
               CTXD_DAEMON_AUTOSTART="false", CTXD_SERVER_AUTO_PROJECT="true")
    proc = subprocess.run(SERVE, env=env, cwd=folder, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stderr


def plant(user: User, folder: Path, *names: str) -> None:
    code = "; ".join(f"open({str(folder / n)!r}, 'w').write('{{}}')" for n in names)
    done = run_as(user, code)
    assert done.returncode == 0, done.stderr


def test_another_users_manifest_in_a_shared_folder_does_not_choose_the_project(
    machine: Path, other_user: User
):
    shared = shared_folder(machine / "vartmp")
    plant(other_user, shared, "package.json")
    assert run_as(other_user, f"import os; os.mkdir({str(shared / '.git')!r})").returncode == 0
    scratch = shared / "scratch"
    scratch.mkdir()
    log = serve_in(scratch, machine / "home")
    assert "not taking a project" in log and f"{shared} is a shared temporary folder" in log
    assert "indexing the project" not in log


def test_a_folder_of_another_user_does_not_become_the_project(machine: Path, other_user: User):
    theirs = machine / "theirs"
    theirs.mkdir(mode=0o755)
    os.chown(theirs, other_user.uid, other_user.gid)  # B's folder, with B's manifest
    plant(other_user, theirs, "package.json")
    inside = theirs / "sub"
    inside.mkdir()  # ours (root's), below theirs
    log = serve_in(inside, machine / "home")
    assert f"{theirs} belongs to another user (uid {other_user.uid})" in log
    assert "indexing the project" not in log
