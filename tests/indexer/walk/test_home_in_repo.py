"""An index home inside an indexed repository stays out of the walk.

Its database files must never be opened outside SQLite (closing a descriptor of
`index.db` drops every lock this process's connections hold on it), and its log and lock
files change with every run: the walker, the watcher's per-path filter and `ctxd cat`
all treat a folder holding the home marker as pruned, without reading anything in it.
"""

from __future__ import annotations

from pathlib import Path

from ctxd.indexer.models import HOME_MARKER, FileEntry, Skipped, SkipReason
from ctxd.indexer.store.private import private_home
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.servable import read_servable
from ctxd.indexer.walk.walker import WalkOptions, walk


def _repo_with_home(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    home = repo / ".ctxd"
    store = Store.open(home / "index.db")
    with store.transaction():
        store.set_meta("probe", "x")
    store.close()
    (home / "daemon.log").write_text("log line\n", encoding="utf-8")
    return repo, home


def test_a_home_inside_the_repository_is_pruned_by_the_walk(tmp_path: Path) -> None:
    repo, home = _repo_with_home(tmp_path)
    assert (home / HOME_MARKER).is_file()
    items = list(walk(repo, WalkOptions()))
    admitted = [i.path for i in items if isinstance(i, FileEntry)]
    skipped = {i.path: i for i in items if isinstance(i, Skipped)}
    assert admitted == ["src/app.py"]
    assert set(skipped) == {".ctxd"}
    assert skipped[".ctxd"].reason is SkipReason.IGNORED
    assert "ctxd index home" in skipped[".ctxd"].detail
    # Excludes, includes and ignore files cannot bring it back.
    items = list(walk(repo, WalkOptions(include_patterns=("**/*",), use_gitignore=False,
                                        sensitive_excludes=False)))
    assert not any(i.path.startswith(".ctxd/") for i in items)


def test_the_watcher_s_filter_and_readers_refuse_the_home_s_files(tmp_path: Path) -> None:
    repo, _ = _repo_with_home(tmp_path)
    ff = FileFilter(repo, WalkOptions())
    for name in ("index.db", "daemon.log", HOME_MARKER):
        verdict = ff.entry(f".ctxd/{name}")
        assert isinstance(verdict, Skipped), name
        assert verdict.reason is SkipReason.IGNORED
    assert ff.check(".ctxd/index.db-wal") is SkipReason.IGNORED
    assert ff.check(".ctxd", is_dir=True) is SkipReason.IGNORED


def test_walking_a_home_itself_reads_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    private_home(home)
    Store.open(home / "index.db").close()
    items = list(walk(home, WalkOptions()))
    assert [(i.path, i.reason) for i in items if isinstance(i, Skipped)] == [
        (".", SkipReason.IGNORED)
    ]
    assert not [i for i in items if isinstance(i, FileEntry)]


def test_a_symlink_into_an_in_repo_home_is_neither_indexed_nor_served(tmp_path: Path) -> None:
    """Issue 31, item 14: `tok -> .ctxd/http-token` (and a link to a folder inside the
    home) led the walk, `ctxd cat` and `file_content` into the home through a name that
    does not look like one."""
    repo, home = _repo_with_home(tmp_path)
    (home / "http-token").write_text("tok-zanzibar-secret\n", encoding="utf-8")
    (home / "sub").mkdir()
    (home / "sub" / "notes.txt").write_text("inside the home\n", encoding="utf-8")
    (repo / "tok").symlink_to(".ctxd/http-token")
    (repo / "src" / "log.txt").symlink_to("../.ctxd/daemon.log")
    (repo / "deep").symlink_to(".ctxd/sub", target_is_directory=True)
    (repo / "src" / "alias.py").symlink_to("app.py")  # an ordinary link still followed

    items = list(walk(repo, WalkOptions(include_patterns=("**/*",), use_gitignore=False,
                                        sensitive_excludes=False)))
    admitted = sorted(i.path for i in items if isinstance(i, FileEntry))
    assert admitted == ["src/alias.py", "src/app.py"]
    skipped = {i.path: i for i in items if isinstance(i, Skipped)}
    for link in ("tok", "src/log.txt", "deep"):
        assert skipped[link].reason is SkipReason.IGNORED, link
        assert "ctxd index home" in skipped[link].detail

    ff = FileFilter(repo, WalkOptions())
    for link in ("tok", "src/log.txt", "deep/notes.txt"):
        verdict = ff.entry(link)
        assert isinstance(verdict, Skipped) and verdict.reason is SkipReason.IGNORED, link
        served = read_servable(repo, link, WalkOptions())
        assert isinstance(served, Skipped), link
    assert read_servable(repo, "src/alias.py", WalkOptions()) == (
        "src/alias.py", "def main():\n    return 1\n")
