"""A `.gitignore` of thousands of lines (issue 31, item 5): pathspec's RE2 backend cannot
compile them into one set ("failed to compile Set", an internal error that made the
repository unindexable); they are compiled in parts instead, with the same verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ctxd.indexer.models import FileEntry, Skipped
from ctxd.indexer.walk.ignore import compile_ignore
from ctxd.indexer.walk.walker import WalkOptions, walk
from tests.conftest import RepoBuilder

LINES = [f"generated{i}/**/out{i}_*.txt" for i in range(3000)]


def test_a_gitignore_of_3000_lines_is_honoured_not_an_internal_error(repo: RepoBuilder):
    # `*.log` in the first part RE2 compiles, its negation in the last one.
    repo.write(".gitignore", "\n".join(["*.log", *LINES, "!keep.log"]) + "\n")
    repo.write("app.py", "x = 1\n")
    repo.write("generated2999/a/out2999_1.txt", "ignored by the last generated rule\n")
    repo.write("generated5/out5_x.txt", "ignored by an early rule\n")
    repo.write("generated5/other.txt", "not ignored\n")
    repo.write("debug.log", "ignored\n")
    repo.write("keep.log", "negated back in\n")
    items = list(walk(repo.root, WalkOptions()))
    kept = {i.path for i in items if isinstance(i, FileEntry)}
    assert kept == {".gitignore", "app.py", "generated5/other.txt", "keep.log"}
    ignored = {i.path: i.detail for i in items if isinstance(i, Skipped)}
    assert ignored["generated2999/a/out2999_1.txt"] == (
        ".gitignore: generated2999/**/out2999_*.txt")

    env = {**os.environ, "CTXD_HOME": str(repo.root.parent / "home")}
    proc = subprocess.run([sys.executable, "-m", "ctxd.server.cli.main", "--no-daemon",
                           "index", "--dry-run", "--json", str(repo.root)],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["files_indexed"] == 4


def test_the_fallback_matches_as_the_set_does():
    lines = [*LINES[:50], "build/", "!build/keep/", "*.tmp", "!important.tmp", "/root_only"]
    fast, slow = compile_ignore(lines), compile_ignore([*lines, *LINES])
    for path in ("generated7/x/out7_a.txt", "build/", "build/keep/", "a.tmp",
                 "important.tmp", "root_only", "sub/root_only", "generated7/x/other.txt"):
        assert fast.check_file(path).include == slow.check_file(path).include, path


def test_an_empty_ignore_line_list_compiles(tmp_path: Path):
    assert compile_ignore([]).patterns == []
