"""`ctxd serve` at start-up (issue 31, items 10 and 11): `--no-daemon` and
`CTXD_NO_DAEMON=1` keep it in its own process (no daemon started), and an `http-token`
that is a FIFO, a symlink or no token at all is a clear error instead of a server that
never starts. Real `ctxd serve` processes; a start-up that blocks is killed by the
subprocess timeout, which is what fails the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxd.indexer.store.private import private_home
from ctxd.server.daemon import lifecycle
from ctxd.server.daemon.paths import DaemonPaths
from tests.server.serving import free_port

SERVE = [sys.executable, "-m", "ctxd.server.cli.main"]
HANG = 60


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTXD_")}
    return {**env, "CTXD_HOME": str(home), "HF_HUB_OFFLINE": "1",
            "CTXD_SERVER_AUTO_PROJECT": "false", **extra}


@pytest.mark.parametrize("how", ["flag", "env"])
def test_no_daemon_serve_starts_no_daemon(tmp_path: Path, how: str):
    home = tmp_path / "home"
    args = [*SERVE, "--no-daemon", "serve"] if how == "flag" else [*SERVE, "serve"]
    env = env_for(home, CTXD_DAEMON_AUTOSTART="true",
                  **({"CTXD_NO_DAEMON": "1"} if how == "env" else {}))
    paths = DaemonPaths.for_home(home)
    try:
        # stdin at EOF: the stdio server ends as soon as it has started.
        proc = subprocess.run(args, env=env, cwd=tmp_path, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=HANG, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert "starting the ctxd daemon" not in proc.stderr
        assert lifecycle.probe(paths) is None
        assert not paths.record.exists()
    finally:
        lifecycle.stop(paths, timeout=20)


def serve_http(home: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            [*SERVE, "--no-daemon", "serve", "--transport", "http", "--port",
             str(free_port())], env=env_for(home), cwd=home.parent, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=HANG, check=False)
    finally:  # (a ctxd that ignored --no-daemon left one behind)
        lifecycle.stop(DaemonPaths.for_home(home), timeout=20)


def test_a_fifo_as_the_http_token_is_a_clear_error(tmp_path: Path):
    home = tmp_path / "home"
    private_home(home)
    os.mkfifo(home / "http-token", 0o600)
    proc = serve_http(home)
    assert proc.returncode != 0
    assert "http-token is not a regular file of this user" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("plant", ["symlink", "huge"])
def test_an_http_token_that_is_no_token_file_is_a_clear_error(tmp_path: Path, plant: str):
    home = tmp_path / "home"
    private_home(home)
    token = home / "http-token"
    if plant == "symlink":
        target = tmp_path / "elsewhere"
        target.write_text("s3cret\n", encoding="utf-8")
        token.symlink_to(target)
        why = "cannot be opened"
    else:
        fd = os.open(token, os.O_WRONLY | os.O_CREAT, 0o600)
        os.ftruncate(fd, 1 << 30)
        os.close(fd)
        why = "not a token"
    proc = serve_http(home)
    assert proc.returncode != 0
    assert why in proc.stderr and "Traceback" not in proc.stderr
