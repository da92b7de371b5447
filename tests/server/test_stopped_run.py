"""A run that was stopped says so, says what is missing, and exits non-zero (issue 23,
item 9).

`ctxd index` through a real daemon that gets SIGTERM in the middle of embedding (the CLI's
progress bar on a pseudo-terminal tells when embedding has begun); the pipeline stopped in
the middle of its walk; the MCP answer for a stopped run.
"""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ctxd.server.cli import render
from ctxd.server.cli.main import STOPPED_EXIT, TERMINATED_EXIT
from ctxd.server.config import load_settings
from ctxd.server.daemon.paths import wait_lock_free
from ctxd.server.mcp import markdown_status as status_md
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.daemon.test_daemon import daemons  # noqa: F401  (the fixture)

CLI = [sys.executable, "-m", "ctxd.server.cli.main"]


def many_functions(root: Path, files: int = 150, per_file: int = 12) -> RepoBuilder:
    repo = RepoBuilder(root)
    for n in range(files):
        repo.write(f"pkg/m{n:03d}.py", "".join(
            f"def handler_{n}_{k}(request, session):\n"
            f"    \"\"\"Handle request {k} of module {n} with its own session.\"\"\"\n"
            f"    value = session.fetch(request.key_{k}, default={n * k})\n"
            f"    return value * {k + 1}\n\n\n" for k in range(per_file)))
    return repo


def read_until(master: int, needle: bytes) -> bytes:
    """What a pseudo-terminal shows until `needle` appears (or its child closes it)."""
    seen = b""
    while needle not in seen:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        seen += data
    return seen


@pytest.mark.model
def test_sigterm_to_the_daemon_mid_run_is_reported_as_stopped(isolated_env, daemons,  # noqa: F811
                                                               tmp_path):
    info = daemons.start()
    paths = daemons.paths()
    repo = many_functions(tmp_path / "big", files=40, per_file=5)
    master, slave = pty.openpty()  # stderr is a terminal: the progress bar is drawn
    proc = subprocess.Popen([*CLI, "index", str(repo.root)], stdout=subprocess.PIPE,
                            stderr=slave, env={**os.environ, "CTXD_DAEMON_AUTOSTART": "false"})
    os.close(slave)
    try:
        shown = read_until(master, b"embed ")
        assert b"embed " in shown, shown[-500:]
        os.kill(info["pid"], signal.SIGTERM)  # `systemctl stop`, `kill`: the daemon stops
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    text = out.decode()
    assert proc.returncode == STOPPED_EXIT, text
    assert text.startswith(f"Stopped indexing {repo.root} as `big`: "), text
    assert "Indexed" not in text
    assert "Stopped before the end (the process doing the work was asked to stop): " in text
    assert "texts still have no embedding (semantic search does not see them yet)" in text
    assert f"`ctxd index {repo.root}` again resumes where this run stopped" in text
    assert wait_lock_free(paths.lock, 30)  # the daemon did stop
    # The next run finishes it (in-process: the daemon is gone) and succeeds.
    again = subprocess.run([*CLI, "index", str(repo.root), "--json"], capture_output=True,
                           text=True, timeout=600, check=False,
                           env={**os.environ, "CTXD_DAEMON_AUTOSTART": "false"})
    assert again.returncode == 0, again.stderr
    stats = json.loads(again.stdout)
    assert not stats["stopped"] and stats["chunks_embedded"] > 0


@pytest.mark.model
def test_sigterm_to_an_index_run_in_this_process_stops_it_and_says_what_it_kept(
        isolated_env, tmp_path):
    """`ctxd --no-daemon index` gets SIGTERM once it embeds: it stops at the next commit,
    prints the stopped run's report and exits 143 (it used to die silently with 143)."""
    repo = many_functions(tmp_path / "big", files=80, per_file=6)
    master, slave = pty.openpty()  # stderr is a terminal: the progress bar is drawn
    proc = subprocess.Popen([*CLI, "--no-daemon", "index", str(repo.root)],
                            stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = [b""]
    try:
        shown[0] = read_until(master, b"embed ")
        assert b"embed " in shown[0], shown[0][-500:]
        proc.send_signal(signal.SIGTERM)
        # Keep reading the terminal so that the child never blocks on its progress bar.
        drain = threading.Thread(target=lambda: shown.append(read_until(master, b"\0\0")),
                                 daemon=True)
        drain.start()
        out, _ = proc.communicate(timeout=180)
        drain.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        os.close(master)
    text = out.decode()
    assert proc.returncode == TERMINATED_EXIT == 143, (proc.returncode, text, shown[-1][-500:])
    assert text.startswith(f"Stopped indexing {repo.root} as `big`: 80 files "), text
    assert "Stopped before the end (the process doing the work was asked to stop): " in text
    assert "texts still have no embedding (semantic search does not see them yet)" in text
    assert f"`ctxd index {repo.root}` again resumes where this run stopped" in text
    assert b"Traceback" not in shown[-1]
    # What it kept is whole: the next run re-reads no file and only embeds the rest.
    again = subprocess.run([*CLI, "--no-daemon", "index", str(repo.root), "--json"],
                           capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    stats = json.loads(again.stdout)
    assert not stats["stopped"] and stats["files_updated"] == 0
    assert stats["files_unchanged"] == 80 and stats["chunks_embedded"] > 0


@pytest.mark.model
def test_ctrl_c_of_an_index_run_says_what_it_kept_and_the_next_run_resumes(isolated_env,
                                                                          tmp_path):
    """Ctrl-C (SIGINT) of `ctxd --no-daemon index` while it embeds exits 130 saying that
    the committed files are kept and that the same command resumes (it said a bare
    "interrupted"), and the next run re-reads no file: what was committed is whole."""
    repo = many_functions(tmp_path / "big", files=80, per_file=6)
    master, slave = pty.openpty()  # stderr is a terminal: the progress bar is drawn
    proc = subprocess.Popen([*CLI, "--no-daemon", "index", str(repo.root)],
                            stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    shown = [b""]
    try:
        shown[0] = read_until(master, b"embed ")
        assert b"embed " in shown[0], shown[0][-500:]
        proc.send_signal(signal.SIGINT)
        shown.append(read_until(master, b"resume"))
        proc.wait(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        os.close(master)
    said = shown[-1].decode(errors="replace")
    assert proc.returncode == 130, (proc.returncode, said[-500:])
    assert ("interrupted; the files committed so far are kept: run the same command again "
            "to resume") in said, said[-500:]
    assert "Traceback" not in said
    again = subprocess.run([*CLI, "--no-daemon", "index", str(repo.root), "--json"],
                           capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    stats = json.loads(again.stdout)
    assert stats["files_updated"] == 0 and stats["files_unchanged"] == 80


def test_a_walk_stopped_half_way_says_what_it_left_undone(isolated_env, tmp_path):
    repo = many_functions(tmp_path / "walked", files=40, per_file=1)
    service = Service(load_settings({}), embedder=FakeEmbedder())
    asked = iter(range(10**6))
    try:
        stats = service.index(repo.root, should_stop=lambda: next(asked) >= 10)
    finally:
        service.close()
    assert stats.stopped and stats.stopped_in == "walk"
    text = render.index_stats_text(stats)
    assert text.startswith(f"Stopped indexing {repo.root} as `walked`: ")
    assert (f"the walk did not finish: {stats.files_indexed} files are in the index, files "
            "not reached yet are not, deleted files are not removed") in text
    mcp = status_md.render_index(stats, None, budget=6000)
    assert mcp.markdown.startswith("## Stopped indexing `walked` before the end\n")
    assert f"`index_repository` with path `{repo.root}` again resumes" in mcp.markdown
    assert mcp.data["stopped"] is True
