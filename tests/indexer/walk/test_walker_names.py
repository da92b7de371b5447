"""Names that are not valid UTF-8 (issue 9, item 23): the walk and the per-path filter
skip them as BAD_NAME with a printable path, instead of failing later in chunking."""

from __future__ import annotations

import os

from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.walker import WalkOptions, walk
from tests.conftest import RepoBuilder


def bad_names(repo: RepoBuilder) -> None:
    root = os.fsencode(repo.root)
    repo.write("ok.py", "def fine():\n    return 1\n")
    with open(root + b"/caf\xe9.py", "wb") as f:
        f.write(b"def cafe_fn():\n    return 1\n")
    os.mkdir(root + b"/d\xff")
    with open(root + b"/d\xff/inner.py", "wb") as f:
        f.write(b"x = 1\n")


def test_walker_and_file_filter_skip_names_that_are_not_utf8(repo: RepoBuilder):
    bad_names(repo)
    found = list(walk(repo.root, WalkOptions()))
    assert [e.path for e in found if isinstance(e, FileEntry)] == ["ok.py"]
    skipped = {s.path: s for s in found if isinstance(s, Skipped)}
    assert set(skipped) == {"caf\\xe9.py", "d\\xff"}
    assert {s.reason for s in skipped.values()} == {SkipReason.BAD_NAME}
    assert "not valid UTF-8" in skipped["caf\\xe9.py"].detail
    flt = FileFilter(repo.root, WalkOptions())
    entry = flt.entry(os.fsdecode(b"caf\xe9.py"))
    assert isinstance(entry, Skipped) and entry.reason is SkipReason.BAD_NAME
