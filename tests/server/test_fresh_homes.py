"""First commands on fresh index homes, several at once (issue 22, item 2).

The CLI and the daemon it starts both open a new index at the same moment; before the
migrations were serialised, 2 of 3 fresh homes answered `internal_error: OperationalError:
table meta already exists`. Real processes on real homes; every daemon is stopped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]
FIRST_COMMANDS = (
    ("daemon", "start"),
    ("status",),
    ("search", "--mode", "lexical", "anything"),
    ("--no-daemon", "repos"),
    ("--no-daemon", "status", "--json"),
    ("symbols", "Anything"),
)


def _said(args: tuple[str, ...], proc: subprocess.Popen[str]) -> str:
    out, err = proc.communicate(timeout=600)
    said = out + err
    for bad in ("internal_error", "Traceback", "This is a bug"):
        assert bad not in said, (args, said)
    assert proc.returncode in (0, 1), (args, proc.returncode, said)
    return said


def test_a_first_search_on_a_fresh_home_and_the_daemon_it_starts(tmp_path: Path) -> None:
    """The reported case: `ctxd search QUESTION` on a new home opens the index while the
    daemon it starts opens it too."""
    homes = [tmp_path / f"new-{i}" for i in range(3)]
    args = ("search", "how are retries configured")
    try:
        for home in homes:
            env = {**os.environ, "CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "true"}
            proc = subprocess.Popen([*CLI, *args], env=env, text=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
            assert "nothing is indexed yet" in _said(args, proc)
    finally:
        for home in homes:
            lifecycle.stop(DaemonPaths.for_home(home), timeout=60)


def test_first_commands_on_fresh_homes_at_once_never_fail_inside(tmp_path: Path) -> None:
    homes = [tmp_path / f"home-{i}" for i in range(3)]
    try:
        procs = []
        for home in homes:
            env = {**os.environ, "CTXD_HOME": str(home), "CTXD_DAEMON_AUTOSTART": "true"}
            procs += [(args, subprocess.Popen([*CLI, *args], env=env, text=True,
                                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                              stdin=subprocess.DEVNULL))
                      for args in FIRST_COMMANDS]
        for args, proc in procs:
            _said(args, proc)
    finally:
        for home in homes:
            lifecycle.stop(DaemonPaths.for_home(home), timeout=60)
