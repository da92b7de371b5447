"""`indexer.walk.gitrefs` against real repositories made by git: branch, loose and packed refs,
detached HEAD, linked worktrees, a subfolder, no commits, no git (issue 9, item 11).

git itself only builds the fixtures and gives the expected answers (`git rev-parse`);
the code under test never runs it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ctxd.indexer.walk.gitrefs import GitHead, checked_out, parse_head, parse_packed_refs

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
       "PATH": "/usr/bin:/bin"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.py").write_text("x = 1\n", encoding="utf-8")
    git(root, "add", "a.py")
    git(root, "commit", "-q", "-m", "one")
    return root


def test_a_checked_out_branch_and_its_commit(repo: Path):
    head = checked_out(repo)
    assert head == GitHead("main", git(repo, "rev-parse", "HEAD"))
    assert head is not None and head.label == f"main@{git(repo, 'rev-parse', '--short=7', 'HEAD')}"


def test_a_branch_only_in_packed_refs(repo: Path):
    git(repo, "checkout", "-q", "-b", "feature/x")
    (repo / "b.py").write_text("y = 2\n", encoding="utf-8")
    git(repo, "add", "b.py")
    git(repo, "commit", "-q", "-m", "two")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "feature" / "x").exists()
    assert checked_out(repo) == GitHead("feature/x", git(repo, "rev-parse", "HEAD"))


def test_a_detached_head(repo: Path):
    sha = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach")
    head = checked_out(repo)
    assert head == GitHead(None, sha) and head.label == f"HEAD@{sha[:7]}"


def test_a_linked_worktree_reads_its_own_head_and_the_common_refs(repo: Path, tmp_path: Path):
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(wt))
    git(repo, "pack-refs", "--all")
    assert (wt / ".git").is_file()
    assert checked_out(wt) == GitHead("side", git(wt, "rev-parse", "HEAD"))
    assert checked_out(repo) == GitHead("main", git(repo, "rev-parse", "HEAD"))


def test_a_subfolder_of_a_repository_and_a_branch_without_commits(repo: Path, tmp_path: Path):
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    assert checked_out(sub) == checked_out(repo)
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "trunk")
    head = checked_out(empty)
    assert head == GitHead("trunk", None) and head.label == "trunk"


def test_no_git_and_a_broken_git_give_none(tmp_path: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert checked_out(plain) is None
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /does/not/exist\n", encoding="utf-8")
    assert checked_out(broken) is None


def test_parsers():
    sha = "a" * 40
    assert parse_head("ref: refs/heads/main\n") == ("refs/heads/main", None)
    assert parse_head(sha + "\n") == (None, sha)
    assert parse_head("garbage") == (None, None)
    packed = f"# pack-refs with: peeled fully-peeled sorted\n{sha} refs/heads/main\n^{'b' * 40}\n"
    assert parse_packed_refs(packed) == {"refs/heads/main": sha}
