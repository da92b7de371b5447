"""Config and home mistakes are clear errors that name the key, the value and the fix, and a
relative home is one folder for every process (issue 23, items 10 and 11).

Real `ctxd` processes (the console module, in a temporary working folder), a real daemon
started by `ctxd daemon start` and stopped by the `daemons` fixture.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxd.server.config import load_settings
from ctxd.server.daemon.paths import DaemonPaths
from tests.server.daemon.test_daemon import daemons  # noqa: F401  (the fixture)

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def ctxd(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`ctxd ARGS` in a fresh process run in `cwd`, with this test's environment plus `env`
    (a value of "" removes the variable)."""
    full = {**os.environ, "CTXD_DAEMON_AUTOSTART": "false", **env}
    full = {k: v for k, v in full.items() if v != ""}
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=full, cwd=cwd,
                          timeout=180, check=False)


def failed(out: subprocess.CompletedProcess[str], code: str) -> str:
    """The stderr of a command that failed cleanly with `code` (no traceback)."""
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith(f"error: {code}: "), out.stderr
    assert "Traceback" not in out.stderr and "internal_error" not in out.stderr
    assert "bug in ctxd" not in out.stderr
    return out.stderr


# -- item 10: a relative home is one folder ----------------------------------------------------


def test_a_relative_ctxd_home_is_the_same_folder_for_the_cli_and_its_daemon(
    tmp_path: Path, daemons: Any  # noqa: F811
):
    work = tmp_path / "work"
    work.mkdir()
    name = f"relhome-{os.getpid()}-{tmp_path.name}"
    home, stray = work / name, Path("/") / name  # the daemon runs in `/`
    paths = daemons.track(DaemonPaths.for_home(home))
    daemons.track(DaemonPaths.for_home(stray))  # where the daemon went before
    try:
        started = ctxd("daemon", "start", cwd=work, CTXD_HOME=name)
        assert started.returncode == 0, started.stdout + started.stderr
        assert paths.socket.exists() and paths.record.exists() and not stray.exists()
        status = ctxd("daemon", "status", "--json", cwd=work, CTXD_HOME=name)
        assert status.returncode == 0 and str(paths.socket) in status.stdout, status
        # The in-process CLI uses the very same folder.
        out = ctxd("--no-daemon", "status", "--json", cwd=work, CTXD_HOME=name)
        assert out.returncode == 0 and f'"home": "{home}"' in out.stdout, out.stderr
        stopped = ctxd("daemon", "stop", cwd=work, CTXD_HOME=name)
        assert stopped.returncode == 0 and "stopped ctxd daemon" in stopped.stdout
    finally:
        if stray.exists():  # made by the code before the fix: stop its daemon, then remove
            subprocess.run([*CLI, "--home", str(stray), "daemon", "stop"], check=False,
                           capture_output=True, timeout=60)
            shutil.rmtree(stray, ignore_errors=True)


def test_a_relative_home_in_a_config_file_is_taken_from_the_files_folder(tmp_path: Path):
    cfg = tmp_path / "conf" / "ctxd.toml"
    cfg.parent.mkdir()
    cfg.write_text('home = "index"\n', encoding="utf-8")
    assert load_settings(env={"CTXD_CONFIG": str(cfg)}).home == cfg.parent / "index"
    rel = load_settings(env={"CTXD_HOME": "relhome"}).home
    assert rel.is_absolute() and rel == Path.cwd() / "relhome"


# -- item 11: config and home mistakes ---------------------------------------------------------


def test_a_config_file_that_is_not_utf8_names_the_file_and_the_byte(tmp_path: Path):
    cfg = tmp_path / "bad.toml"
    cfg.write_bytes(b'[walk]\nexclude_patterns = ["caf\xe9"]\n')
    err = failed(ctxd("status", cwd=tmp_path, CTXD_CONFIG=str(cfg)), "validation_error")
    assert f"config file {cfg} is not valid UTF-8: byte 0xe9 at offset 31" in err
    assert "Save the file as UTF-8" in err


@pytest.mark.parametrize("how", ["env", "flag"])
def test_a_config_path_that_is_a_folder_says_so(tmp_path: Path, how: str):
    args = ("--config", str(tmp_path), "status") if how == "flag" else ("status",)
    env = {"CTXD_CONFIG": str(tmp_path)} if how == "env" else {}
    out = ctxd(*args, cwd=tmp_path, **env)
    assert out.returncode == 2 and "does not exist" not in out.stderr
    said = f"config file {tmp_path} is a folder, not a file" if how == "env" else (
        f"Invalid value for '--config': File '{tmp_path}' is a directory")
    assert said in out.stderr, out.stderr


def test_a_home_that_is_not_a_folder_is_a_validation_error(tmp_path: Path):
    err = failed(ctxd("status", cwd=tmp_path, CTXD_HOME="/dev/null"), "validation_error")
    assert ("invalid value for home: '/dev/null' (environment variable CTXD_HOME): /dev/null "
            "exists and is not a folder") in err


@pytest.mark.skipif(not Path("/proc/1").is_dir(), reason="needs /proc (Linux)")
def test_a_home_that_cannot_be_created_is_a_storage_error(tmp_path: Path):
    for home in ("/proc/1/nope", "/dev/null/sub"):
        for command in (("status",), ("index", str(tmp_path))):
            err = failed(ctxd(*command, cwd=tmp_path, CTXD_HOME=home), "storage_error")
            assert f"cannot write the index at {home}: its folder cannot be created" in err
            assert "Set CTXD_HOME" in err


def test_a_home_that_is_not_a_string_is_refused(tmp_path: Path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("home = 5\n", encoding="utf-8")
    err = failed(ctxd("status", cwd=tmp_path, CTXD_CONFIG=str(cfg), CTXD_HOME=""),
                 "validation_error")
    assert f"invalid value for home: 5 (config file {cfg}); expected a folder path" in err


def test_a_bad_chunk_size_blames_the_key_that_was_set(tmp_path: Path):
    err = failed(ctxd("status", cwd=tmp_path, CTXD_CHUNK_MAX_TOKENS="0"), "validation_error")
    assert ("invalid value for chunk.max_tokens: '0' (environment variable "
            "CTXD_CHUNK_MAX_TOKENS); expected a positive number of tokens") in err
    err = failed(ctxd("status", cwd=tmp_path, CTXD_CHUNK_MAX_TOKENS="100"), "validation_error")
    assert ("invalid value for chunk.max_tokens: '100' (environment variable "
            "CTXD_CHUNK_MAX_TOKENS); expected min_tokens (24) <= target_tokens (160) <= "
            "max_tokens (100)") in err
    assert "(default)" not in err


def test_log_level_debug_shows_the_traceback_of_an_internal_error(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "index.db").write_bytes(b"this is not an SQLite database\n" * 64)
    plain = ctxd("status", cwd=tmp_path, CTXD_HOME=str(home))
    assert plain.returncode == 2 and "Re-run with LOG_LEVEL=debug" in plain.stderr
    assert "Traceback" not in plain.stderr
    debug = ctxd("status", cwd=tmp_path, CTXD_HOME=str(home), LOG_LEVEL="debug")
    assert debug.returncode == 2 and "Traceback (most recent call last)" in debug.stderr
