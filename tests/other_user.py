"""A second local user for the tests about other users (issue 23): created with `useradd`
for the test session and removed after it; tests that need one are skipped, with the
reason, where that is not possible (not root, no `useradd`).

`run_as(user, code)` runs a Python snippet as that user with the system interpreter in
isolated mode (`/usr/bin/python3 -I -S`: the standard library only; the project's virtual
environment may not be readable by another user), from `/`.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"


@dataclass(frozen=True)
class User:
    name: str
    uid: int
    gid: int


@pytest.fixture(scope="session")
def other_user() -> Iterator[User]:
    """A fresh local user, not the one running the tests."""
    if os.geteuid() != 0:
        pytest.skip("acting as another local user needs root (to create one and run as it)")
    if shutil.which("useradd") is None or not os.path.exists(SYSTEM_PYTHON):
        pytest.skip("needs useradd and /usr/bin/python3 to act as another local user")
    name = f"ctxdt{secrets.token_hex(4)}"
    made = subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell",
                           "/usr/sbin/nologin", name], capture_output=True, text=True,
                          check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot create a second local user: {made.stderr.strip()}")
    entry = pwd.getpwnam(name)
    try:
        yield User(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", name], capture_output=True, check=False)


def run_as(user: User, code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run Python `code` as `user` (a separate process: another uid, its own groups)."""
    return subprocess.run([SYSTEM_PYTHON, "-I", "-S", "-c", code], user=user.uid,
                          group=user.gid, extra_groups=[], capture_output=True, text=True,
                          timeout=timeout, cwd="/", env={"PATH": "/usr/bin:/bin"},
                          check=False)
