"""A folder swapped for a symlink mid-walk never lets a file outside the repository in
(issue 23, item 3): `indexer.walk.safeopen` and every reader built on it.

A real race: a separate process swaps a folder of the repository with a symlink to a
folder outside it, as fast as it can, while the walk, the pipeline (into a real SQLite
index) and `file_content` (what `ctxd cat` and the MCP tool call) run again and again.
Before the fix the walk listed the outside folder and the reads followed the link: a few
hundred secret reads in 50 walks, and `cat` served the secret a few times in a thousand.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.errors import CtxdError
from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.safeopen import O_DIR, O_FILE, PathChanged, open_by_steps, open_verified
from ctxd.indexer.walk.walker import WalkOptions, read_text, walk
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
from tests.conftest import RepoBuilder as Repo

SECRET = "TOPSECRET-outside-the-repository"
FILES = 100

SWAPPER = """
import os, sys
repo, outside = sys.argv[1], sys.argv[2]
sub, real, link = (os.path.join(repo, n) for n in ("sub", ".sub-real", ".sub-link"))
os.symlink(outside, link)
print("ready", flush=True)
while True:
    os.rename(sub, real)   # the folder steps aside ...
    os.rename(link, sub)   # ... a link to the outside takes its name ...
    os.rename(sub, link)
    os.rename(real, sub)   # ... and the folder comes back
"""


@pytest.fixture
def swapped(repo: Repo, tmp_path: Path) -> Iterator[Repo]:
    """A repository whose `sub/` a separate process keeps swapping with a link to a folder
    outside it holding files of the same names."""
    outside = tmp_path / "outside"
    outside.mkdir()
    for i in range(FILES):
        repo.write(f"sub/f{i:03}.txt", f"public {i}\n")
        (outside / f"f{i:03}.txt").write_text(f"{SECRET} {i}\n", encoding="utf-8")
    repo.write("a.txt", "a\n")
    repo.write(".ctxdignore", ".sub-*\n")  # the swapper's parking places
    proc = subprocess.Popen([sys.executable, "-c", SWAPPER, str(repo.root), str(outside)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        yield repo
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()  # type: ignore[union-attr]


@pytest.mark.timeout(240)
def test_walk_and_reads_never_leave_the_repository_while_a_folder_is_swapped(
    swapped: Repo,
) -> None:
    admitted = 0
    for _round in range(400):  # until enough reads got through the swaps
        if admitted >= 500:
            break
        for item in walk(swapped.root, WalkOptions()):
            if not isinstance(item, FileEntry):
                continue
            assert item.abs_path.startswith(str(swapped.root) + os.sep), item
            text = read_text(item)
            if isinstance(text, Skipped):
                continue
            admitted += 1
            assert SECRET not in text, item
    assert admitted > 0  # the race was run: reads went through between the swaps


@pytest.mark.timeout(240)
def test_index_and_cat_never_serve_the_outside_while_a_folder_is_swapped(
    swapped: Repo, tmp_path: Path
) -> None:
    service = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    try:
        served = 0
        for _round in range(20):  # until enough files were served between the swaps
            if served >= 500:
                break
            stats = service.index(swapped.root, embed=False)
            rows = service.store().query(
                "SELECT count(*) FROM file_text WHERE content LIKE ?", (f"%{SECRET}%",))
            assert rows[0][0] == 0, stats
            for i in range(500):
                try:
                    fc = service.file_content(stats.repository, f"sub/f{i % FILES:03}.txt")
                except CtxdError:  # vanished mid-swap, or refused: never served
                    continue
                served += 1
                assert SECRET not in fc.content
        assert served > 0
    finally:
        service.close()


def test_symlinks_inside_the_repository_are_still_followed(repo: Repo) -> None:
    repo.write("src/a.py", "x = 1\n")
    repo.symlink("linked", "src")
    repo.symlink("a_link.py", "src/a.py")
    found = {e.path: read_text(e) for e in walk(repo.root, WalkOptions())
             if isinstance(e, FileEntry)}
    # (a link to a folder of the repository is pruned: its files are read at their own
    # path; a link to a file is read through the verified open)
    assert found == {"src/a.py": "x = 1\n", "a_link.py": "x = 1\n"}


def test_open_verified_refuses_a_path_through_a_link(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("secret\n", encoding="utf-8")
    repo.symlink("sub", str(outside))
    path = str(repo.root / "sub" / "f.txt")  # what the walk would have recorded for a folder
    with pytest.raises(PathChanged) as info:
        open_verified(path, O_FILE)
    assert info.value.filename == str(outside / "f.txt")
    with pytest.raises(OSError):
        open_by_steps(path, O_FILE)  # the portable way refuses it too (ELOOP / ENOTDIR)
    with pytest.raises(OSError):
        open_verified(str(repo.root / "sub"), O_DIR)  # a final link: O_NOFOLLOW


def test_open_by_steps_opens_a_real_path(repo: Repo) -> None:
    repo.write("d/e/f.txt", "hello\n")
    fd = open_by_steps(str((repo.root / "d/e/f.txt").resolve()), O_FILE)
    try:
        assert os.read(fd, 100) == b"hello\n"
    finally:
        os.close(fd)


def test_read_refused_when_a_folder_on_the_way_became_a_link(repo: Repo, tmp_path: Path) -> None:
    """Deterministic half of the race: the walk recorded `sub/x.txt`, then `sub` became a
    link to a folder outside holding a file of the same name."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text(SECRET, encoding="utf-8")
    repo.write("sub/x.txt", "public\n")
    (entry,) = walk(repo.root, WalkOptions())
    assert isinstance(entry, FileEntry) and read_text(entry) == "public\n"
    os.rename(repo.root / "sub", repo.root / ".sub-real")
    os.symlink(outside, repo.root / "sub")
    result = read_text(entry)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNREADABLE
    assert str(outside / "x.txt") in result.detail  # where it would have led


def test_swap_between_listing_and_entering_is_refused(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.txt").write_text(SECRET, encoding="utf-8")
    repo.write("a.txt", "a\n")
    repo.write("sub/x.txt", "public\n")
    items = walk(repo.root, WalkOptions())
    assert next(items) == FileEntry("a.txt", str(repo.root / "a.txt"), 2,
                                    (repo.root / "a.txt").stat().st_mtime_ns)
    # `sub` was listed as a directory of the root; now it becomes a link to the outside
    os.rename(repo.root / "sub", repo.root / ".sub-real")
    os.symlink(outside, repo.root / "sub")
    rest = list(items)
    assert rest == [Skipped("sub", SkipReason.UNREADABLE, rest[0].detail)]
    assert "symlink or a file took its place" in rest[0].detail
