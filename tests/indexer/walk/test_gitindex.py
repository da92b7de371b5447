"""What is indexed agrees with what git shows (issue 23, item 12): tracked files despite
`.gitignore`, `info/exclude` of linked worktrees and `--separate-git-dir` repositories,
parent `.gitignore` files of a subfolder root, bare repositories refused, an unreadable
folder's files kept; and `indexer.walk.gitindex` reading index versions 2, 3 and 4.

Real repositories made by git; git also gives the expected answer (`git ls-files
--cached --others --exclude-standard`: every file git shows, tracked or not ignored); the
code under test never runs it.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.models import FileEntry, SkipReason
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.gitindex import parse_index, tracked_paths
from ctxd.indexer.walk.gitrefs import git_layout
from ctxd.indexer.walk.servable import read_servable
from ctxd.indexer.walk.walker import WalkOptions, validate_root, walk
from ctxd.server.cli.main import main
from tests.indexer.walk.test_gitrefs import ENV  # git without the user's config

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")

def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def git_shows(root: Path) -> set[str]:
    """Every file git shows under `root`: tracked, or untracked and not ignored."""
    out = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
    return {p for p in out.split("\0") if p}


def indexed(root: Path) -> set[str]:
    return {e.path for e in walk(root, WalkOptions()) if isinstance(e, FileEntry)}


def committed(tmp_path: Path, files: dict[str, str], name: str = "proj") -> Path:
    root = tmp_path / name
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        write(root / rel, text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "one")
    return root


def test_committed_file_later_gitignored_stays_indexed(tmp_path: Path) -> None:
    root = committed(tmp_path, {"app.py": "x = 1\n", "config/settings.py": "DEBUG = 1\n"})
    write(root / ".gitignore", "config/\n*.log\n")
    write(root / "config/local.py", "untracked\n")
    write(root / "debug.log", "untracked\n")
    assert git_shows(root) == {".gitignore", "app.py", "config/settings.py"}
    assert indexed(root) == git_shows(root)
    flt = FileFilter(root, WalkOptions())
    assert flt.check("config/settings.py") is None  # the watcher agrees ...
    assert flt.check("config/local.py") is SkipReason.IGNORED
    served = read_servable(root, "config/settings.py", WalkOptions())  # ... and `cat`
    assert served == ("config/settings.py", "DEBUG = 1\n")


def test_gitignore_of_everything_keeps_committed_files(tmp_path: Path) -> None:
    root = committed(tmp_path, {"src/main.py": "print(1)\n", "README.md": "# r\n",
                                "src/deep/er/util.py": "u = 1\n"})
    write(root / ".gitignore", "*\n")
    write(root / "src/scratch.py", "untracked\n")
    write(root / "notes/todo.txt", "untracked\n")
    write(root / "src/.gitignore", "!scratch.py\n")  # git never looks into an ignored folder
    assert git_shows(root) == {"README.md", "src/main.py", "src/deep/er/util.py"}
    assert indexed(root) == git_shows(root)
    flt = FileFilter(root, WalkOptions())
    assert flt.check("src/deep/er/util.py") is None
    assert flt.check("src/scratch.py") is SkipReason.IGNORED
    assert flt.check("notes/todo.txt") is SkipReason.IGNORED


def test_ctxdignore_still_refuses_tracked_files(tmp_path: Path) -> None:
    root = committed(tmp_path, {"app.py": "x\n", "fixtures/big.json": "{}\n"})
    write(root / ".ctxdignore", "fixtures/\n")
    assert indexed(root) == {"app.py", ".ctxdignore"}


def test_linked_worktree_reads_the_repositorys_info_exclude(tmp_path: Path) -> None:
    main_root = committed(tmp_path, {"app.py": "x\n"})
    git(main_root, "worktree", "add", "-q", str(tmp_path / "wt"))
    wt = tmp_path / "wt"
    write(main_root / ".git/info/exclude", "scratch/\n*.tmp\n")
    write(wt / "scratch/a.py", "local\n")
    write(wt / "b.tmp", "local\n")
    write(wt / "new.py", "untracked, not ignored\n")
    assert git_shows(wt) == {"app.py", "new.py"}
    assert indexed(wt) == git_shows(wt)
    assert FileFilter(wt, WalkOptions()).check("b.tmp") is SkipReason.IGNORED


def test_separate_git_dir_reads_its_info_exclude(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    git(tmp_path, "init", "-q", "-b", "main", f"--separate-git-dir={tmp_path / 'store.git'}",
        str(root))
    write(root / "app.py")
    write(root / "secret_stuff/x.py")
    write(tmp_path / "store.git/info/exclude", "secret_stuff/\n")
    assert (root / ".git").is_file()
    assert git_shows(root) == {"app.py"}
    assert indexed(root) == git_shows(root)


def test_subfolder_root_honours_git_files_above_it(tmp_path: Path) -> None:
    root = committed(tmp_path, {"pkg/app.py": "x\n", "pkg/gen/kept.py": "tracked\n"})
    write(root / ".gitignore", "gen/\n/pkg/local.py\n")
    write(root / ".git/info/exclude", "*.tmp\n")
    write(root / "pkg/local.py", "untracked\n")
    write(root / "pkg/gen/new.py", "untracked\n")
    write(root / "pkg/x.tmp", "untracked\n")
    sub = root / "pkg"
    assert git_shows(sub) == {"app.py", "gen/kept.py"}
    assert indexed(sub) == git_shows(sub)


@pytest.mark.parametrize("rule", ["/third_party/\n", "third_party/lib/\n", "lib/\n",
                                  "*\n!.gitignore\n", "/third_party/lib/\n*.tmp\n"])
def test_a_root_its_enclosing_repository_ignores_is_walked_as_a_folder_of_its_own(
    tmp_path: Path, rule: str
) -> None:
    """A folder asked for by name is walked even when a `.gitignore` above it (or
    `info/exclude`) ignores it, as ripgrep searches a path it is given; git would show
    nothing in it, and ctxd indexed nothing: a clone under an ignored `third_party/`, the
    benchmarks' corpus in a git-ignored folder. Rules of its own still apply."""
    top = committed(tmp_path, {"app.py": "x\n"})
    write(top / ".gitignore", rule)
    lib = top / "third_party/lib"
    write(lib / "mod.py", "def f(): pass\n")
    write(lib / "docs/guide.md", "# Guide\n")
    write(lib / "x.tmp", "scratch\n")
    write(lib / ".gitignore", "*.tmp\n")
    assert git_shows(top) >= {"app.py"} and not any(p.startswith("third_party/lib/")
                                                    for p in git_shows(top))
    assert indexed(lib) == {".gitignore", "docs/guide.md", "mod.py"}
    assert isinstance(FileFilter(lib, WalkOptions()).entry("mod.py"), FileEntry)  # watcher
    assert FileFilter(lib, WalkOptions()).entry("x.tmp").reason == SkipReason.IGNORED
    if rule.startswith("*"):
        return
    # A folder that is not ignored keeps the rules above it.
    write(top / "src/gen/out.py", "generated\n")
    write(top / "src/keep.py", "kept\n")
    write(top / ".git/info/exclude", "gen/\n")
    assert indexed(top / "src") == {"keep.py"}


@pytest.mark.parametrize("kind", ["bare", "dot-git", "inside"])
def test_git_dir_is_refused_with_a_clear_message(tmp_path: Path, kind: str) -> None:
    if kind == "bare":
        target = tmp_path / "repo.git"
        git(tmp_path, "init", "-q", "--bare", str(target))
    else:
        root = committed(tmp_path, {"a.py": "x\n"})
        target = root / ".git" if kind == "dot-git" else root / ".git" / "hooks"
    with pytest.raises(ValidationError) as info:
        validate_root(target)
    assert "git repository's own folder" in info.value.message
    assert "git clone" in (info.value.hint or "")
    r = CliRunner().invoke(main, ["index", str(target), "--json"], catch_exceptions=False)
    assert r.exit_code == 2
    err = json.loads(r.output)
    assert err["error"] == "validation_error"
    assert "git repository's own folder" in err["message"]


def test_a_plain_folder_named_like_git_files_is_still_indexed(tmp_path: Path) -> None:
    """Only a real git dir is refused: HEAD, objects/ and refs/ together."""
    root = tmp_path / "docs"
    write(root / "HEAD", "the head of the document\n")
    write(root / "objects/list.md", "# objects\n")
    assert indexed(root) == {"HEAD", "objects/list.md"}


# ------------------------------------------------------------------ the index file


@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_index_versions_read_like_git_ls_files(tmp_path: Path, version: str) -> None:
    names = ["a.py", "dir/b.py", "dir/sub/c.py", "long/" + "n" * 200 + "/" + "m" * 200 + ".txt",
             "caf\u00e9/\u00fc.md", "x y/z.txt"]
    root = committed(tmp_path, dict.fromkeys(names, "x\n"))
    if version == "3":  # an extended-flags entry: intent-to-add
        write(root / "later.py")
        git(root, "add", "-N", "later.py")
    git(root, "update-index", "--index-version", version)
    data = (root / ".git/index").read_bytes()
    assert int.from_bytes(data[4:8], "big") == int(version)
    expected = git(root, "ls-files", "-z").split("\0")[:-1]
    assert parse_index(data) == expected


def test_sha256_repository_index(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    try:
        git(root, "init", "-q", "--object-format=sha256")
    except subprocess.CalledProcessError:
        pytest.skip("this git cannot make SHA-256 repositories")
    write(root / "a.py")
    write(root / "d/b.py")
    git(root, "add", "-A")
    layout = git_layout(root)
    assert layout is not None and layout.hash_size == 32
    tracked = tracked_paths(layout)
    assert tracked is not None and tracked.files == {"a.py", "d/b.py"}


def test_split_index_is_not_guessed(tmp_path: Path) -> None:
    root = committed(tmp_path, {"a.py": "x\n"})
    git(root, "update-index", "--split-index")
    assert parse_index((root / ".git/index").read_bytes()) is None


@pytest.mark.parametrize("data", [b"", b"DIRC", b"DIRC\x00\x00\x00\x02\xff\xff\xff\xff",
                                  b"XXXX\x00\x00\x00\x02\x00\x00\x00\x00"])
def test_corrupt_index_is_none(data: bytes) -> None:
    assert parse_index(data) is None


# ------------------------------------------------------------------ an unreadable folder


def _drop_file_permission_override() -> None:  # in the child, before exec
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


INDEX_IN_CHILD = """
import json, sys
from ctxd.server.cli.render import index_stats_json
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder
service = Service(load_settings({"home": sys.argv[2]}), embedder=FakeEmbedder())
print(json.dumps(index_stats_json(service.index(sys.argv[1], embed=False))))
service.close()
"""


def _index(root: Path, home: Path) -> dict[str, object]:
    """An index run (phase 1, the pipeline mechanics) in a child process, which permission
    bits bind: as root, the child drops the capabilities that let root ignore them."""
    r = subprocess.run([sys.executable, "-c", INDEX_IN_CHILD, str(root), str(home)],
                       cwd=Path(__file__).resolve().parents[3], capture_output=True, text=True,
                       timeout=300,
                       preexec_fn=_drop_file_permission_override if os.geteuid() == 0 else None)
    assert r.returncode == 0, r.stderr[-2000:]
    out: dict[str, object] = json.loads(r.stdout)
    return out


def test_unreadable_folder_keeps_its_files_and_is_reported(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        try:
            subprocess.run(["true"], preexec_fn=_drop_file_permission_override, check=True)
        except (OSError, subprocess.SubprocessError) as exc:
            pytest.skip(f"cannot drop CAP_DAC_OVERRIDE for the child: {exc}")
    root = tmp_path / "proj"
    write(root / "open/a.md", "# a\n")
    write(root / "locked/b.md", "# b\n")
    write(root / "locked/deep/c.md", "# c\n")
    home = tmp_path / "home"
    first = _index(root, home)
    assert first["files_indexed"] == 3, first
    (root / "locked").chmod(0)
    try:
        again = _index(root, home)
    finally:
        (root / "locked").chmod(0o755)
    assert again["files_removed"] == 0, again
    assert again["files_indexed"] == 3
    failed = again["files_failed"]
    assert isinstance(failed, list) and [f["file"] for f in failed] == ["locked"]
    assert "not walked: its 2 indexed files are kept" in failed[0]["error"]
