"""The repository walker: policy order, globs, size limit, symlinks, ignore files, reading."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from ctxd.indexer.errors import PathOutsideRoot, ValidationError
from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.pathguard import ensure_inside, resolve_inside
from ctxd.indexer.walk.walker import (
    MAX_FILE_SIZE_LIMIT,
    MAX_LEXICAL_FILE_SIZE_LIMIT,
    WalkOptions,
    read_text,
    validate_root,
    validate_walk_options,
    walk,
)
from tests.conftest import RepoBuilder as Repo

MB = 1_048_576


def _chmod_blocks_reads() -> bool:
    """False where permissions do not stop reads (root with CAP_DAC_OVERRIDE)."""
    fd, name = tempfile.mkstemp()
    os.close(fd)
    try:
        os.chmod(name, 0)
        try:
            with open(name, "rb"):
                return False
        except PermissionError:
            return True
    finally:
        os.unlink(name)


CHMOD_BLOCKS_READS = _chmod_blocks_reads()


def run(root: Path, **options: object) -> tuple[dict[str, FileEntry], dict[str, Skipped]]:
    admitted: dict[str, FileEntry] = {}
    skipped: dict[str, Skipped] = {}
    for item in walk(root, WalkOptions(**options)):  # type: ignore[arg-type]
        if isinstance(item, FileEntry):
            assert item.path not in admitted
            admitted[item.path] = item
        else:
            assert item.path not in skipped
            skipped[item.path] = item
    return admitted, skipped


def walked(repo: Repo, files: dict[str, str], **options: object
           ) -> tuple[dict[str, FileEntry], dict[str, Skipped]]:
    """Write `files` (path: text) into `repo`, then walk it (`run`)."""
    for path, text in files.items():
        repo.write(path, text)
    return run(repo.root, **options)


def reasons(skipped: dict[str, Skipped]) -> dict[str, SkipReason]:
    return {path: s.reason for path, s in skipped.items()}


# --------------------------------------------------------------------------- patterns


@pytest.mark.parametrize(
    ("filename", "include", "exclude", "want"),
    [
        ("file.md", ("*.md",), (), True),  # include match
        ("test.log", (), ("*.log",), False),  # exclude match
        ("test.md", ("*.md",), ("test.*",), False),  # include + exclude: exclude wins
        ("file.txt", (), (), True),  # no patterns
        ("file.txt", ("*.md",), (), False),
        ("a/b/main.go", ("**/*.go",), (), True),
        ("main.go", ("**/*.go",), (), True),
    ],
)
def test_walker_applies_include_and_exclude_patterns(
    repo: Repo, filename: str, include: tuple[str, ...], exclude: tuple[str, ...], want: bool
) -> None:
    repo.write(filename, "x\n")
    admitted, skipped = run(repo.root, include_patterns=include, exclude_patterns=exclude)
    assert (filename in admitted) is want
    if not want:
        expected = SkipReason.EXCLUDED if exclude else SkipReason.NOT_INCLUDED
        assert skipped[filename].reason is expected


def test_walker_excludes_vendor_dir_and_test_files(repo: Repo) -> None:
    repo.write("main.go", "package main")
    repo.write("main_test.go", "package main")
    repo.write("vendor/pkg.go", "package vendor")
    repo.write("vendor/deep/more.go", "package deep")
    admitted, skipped = run(
        repo.root, include_patterns=("*.go",), exclude_patterns=("*_test.go", "vendor/**")
    )
    assert list(admitted) == ["main.go"]
    assert reasons(skipped) == {
        "main_test.go": SkipReason.EXCLUDED,
        "vendor": SkipReason.EXCLUDED,  # one Skipped for the pruned directory
    }
    assert "vendor/**" in skipped["vendor"].detail


@pytest.mark.parametrize("pattern", ["vendor", "vendor/**", "vendor/"])
def test_walker_prunes_nested_directory_matching_exclude(repo: Repo, pattern: str) -> None:
    repo.write("lib/vendor/x.go", "x\n")
    repo.write("lib/keep.go", "x\n")
    admitted, skipped = run(repo.root, exclude_patterns=(pattern,))
    assert list(admitted) == ["lib/keep.go"]
    assert reasons(skipped) == {"lib/vendor": SkipReason.EXCLUDED}


def test_walker_include_does_not_prune_directories(repo: Repo) -> None:
    repo.write("docs/guide/intro.md", "x\n")
    repo.write("docs/guide/run.sh", "x\n")
    admitted, skipped = run(repo.root, include_patterns=("*.md",))
    assert list(admitted) == ["docs/guide/intro.md"]
    assert reasons(skipped) == {"docs/guide/run.sh": SkipReason.NOT_INCLUDED}


# --------------------------------------------------------------------------- sizes


@pytest.mark.parametrize(
    ("size", "limit", "want"),
    [
        (500_000, MB, True),  # within limit
        (2_000_000, MB, False),  # exceeds limit
        (MB, MB, True),  # exactly at the limit
        (MB + 1, MB, False),
        (2_000_000, 0, True),  # 0 = no limit
        (0, MB, True),
    ],
)
def test_walker_applies_size_limit(repo: Repo, size: int, limit: int, want: bool) -> None:
    repo.write_size("f.txt", size)
    # the lexical-only limit no larger: the walk alone decides (the judge: test_judge.py)
    admitted, skipped = run(repo.root, max_file_size=limit, max_lexical_file_size=limit)
    assert ("f.txt" in admitted) is want
    if want:
        assert admitted["f.txt"].size == size
    else:
        assert skipped["f.txt"].reason is SkipReason.TOO_LARGE


def test_walker_admits_up_to_the_lexical_limit_and_names_both(repo: Repo) -> None:
    repo.write_size("big.txt", 3 * MB)
    repo.write_size("huge.txt", 5 * MB)
    admitted, skipped = run(repo.root, max_file_size=MB, max_lexical_file_size=4 * MB)
    assert list(admitted) == ["big.txt"]
    assert skipped["huge.txt"].reason is SkipReason.TOO_LARGE
    assert "max_lexical_file_size 4194304" in skipped["huge.txt"].detail
    # max_file_size = 0 (no limit) lifts both
    admitted, _ = run(repo.root, max_file_size=0, max_lexical_file_size=4 * MB)
    assert sorted(admitted) == ["big.txt", "huge.txt"]
    # the lexical limit is never below max_file_size
    admitted, _ = run(repo.root, max_file_size=6 * MB, max_lexical_file_size=MB)
    assert sorted(admitted) == ["big.txt", "huge.txt"]


def test_max_lexical_file_size_is_validated() -> None:
    with pytest.raises(ValidationError) as info:
        validate_walk_options(WalkOptions(max_lexical_file_size=-1))
    assert info.value.details["field"] == "max_lexical_file_size"
    with pytest.raises(ValidationError, match="max_lexical_file_size too large"):
        validate_walk_options(WalkOptions(max_lexical_file_size=MAX_LEXICAL_FILE_SIZE_LIMIT + 1))


def test_max_file_size_over_maximum_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        validate_walk_options(WalkOptions(max_file_size=20_971_520))
    assert info.value.to_dict()["error"] == "validation_error"
    assert info.value.message == "max_file_size too large"
    assert info.value.details == {
        "field": "max_file_size",
        "max_allowed": 10_485_760,
        "provided": 20_971_520,
    }
    validate_walk_options(WalkOptions(max_file_size=MAX_FILE_SIZE_LIMIT))


def test_negative_max_file_size_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        validate_walk_options(WalkOptions(max_file_size=-1))
    assert info.value.message == "max_file_size must be >= 0"
    assert info.value.details["provided"] == -1


@pytest.mark.parametrize("field", ["include_patterns", "exclude_patterns", "sensitive_allow"])
def test_invalid_pattern_rejected_before_any_work(tmp_path: Path, field: str) -> None:
    missing = tmp_path / "not-there"  # the root is not even looked at
    with pytest.raises(ValidationError) as info:
        walk(missing, WalkOptions(**{field: ("*.md", "[invalid")}))  # type: ignore[arg-type]
    assert info.value.details["field"] == field
    assert info.value.details["pattern"] == "[invalid"
    if field == "include_patterns":
        assert info.value.message == "invalid include pattern"


def test_walk_validates_root_eagerly(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="path does not exist"):
        walk(tmp_path / "nope", WalkOptions())


# --------------------------------------------------------------------------- root


def test_validate_root_rejects_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        validate_root(tmp_path / "missing")
    assert info.value.to_dict() == {
        "error": "validation_error",
        "message": "path does not exist",
        "details": {"field": "path", "path": str(tmp_path / "missing")},
        "hint": info.value.hint,
    }
    assert info.value.hint


def test_validate_root_rejects_file(repo: Repo) -> None:
    f = repo.write("a.txt", "x\n")
    with pytest.raises(ValidationError) as info:
        validate_root(f)
    assert info.value.message == "path is not a directory"
    assert info.value.details["field"] == "path"


def test_validate_root_rejects_empty_path() -> None:
    with pytest.raises(ValidationError):
        validate_root("")


def test_validate_root_resolves_symlinked_root(repo: Repo, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(repo.root)
    assert validate_root(str(link)) == repo.root.resolve()


# --------------------------------------------------------------------------- traversal


@pytest.mark.parametrize(
    ("candidate", "want_err"),
    [
        ("file.txt", False),  # valid path
        ("../etc/passwd", True),  # traversal up
        ("../other/file.txt", True),  # traversal sideways
        ("sub/../file.txt", False),
    ],
)
def test_ensure_inside_refuses_paths_outside_root(
    repo: Repo, candidate: str, want_err: bool
) -> None:
    path = Path(str(repo.root) + "/" + candidate)  # unnormalised, like "/repo/../etc/passwd"
    if want_err:
        with pytest.raises(PathOutsideRoot) as info:
            ensure_inside(repo.root, path)
        assert info.value.message == "path traversal detected"
    else:
        assert ensure_inside(repo.root, path) == repo.root.resolve() / "file.txt"


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "a/../../x", "a/../b", "x\x00y"])
def test_resolve_inside_refuses_traversal(repo: Repo, rel: str) -> None:
    with pytest.raises(PathOutsideRoot) as info:
        resolve_inside(repo.root, rel)
    assert info.value.details == {"path": rel}


def test_resolve_inside_refuses_symlink_out_and_accepts_inside(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    repo.symlink("out", str(tmp_path / "outside"))
    repo.write("src/a.py", "x\n")
    with pytest.raises(PathOutsideRoot):
        resolve_inside(repo.root, "out/secret.txt")
    assert resolve_inside(repo.root, "src/a.py") == repo.root.resolve() / "src/a.py"
    assert resolve_inside(repo.root, "src/new.py") == repo.root.resolve() / "src/new.py"
    assert resolve_inside(repo.root, "") == repo.root.resolve()


def test_walker_refuses_symlink_to_etc_passwd(repo: Repo) -> None:
    repo.write("ok.txt", "x\n")
    repo.symlink("passwd", "/etc/passwd")
    admitted, skipped = run(repo.root)
    assert list(admitted) == ["ok.txt"]
    assert skipped["passwd"].reason is SkipReason.OUTSIDE_ROOT


def test_walker_refuses_symlink_to_outside_dir(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "leak.txt").write_text("secret", encoding="utf-8")
    repo.symlink("out", "../outside")
    repo.symlink("sub/leak.txt", "../../outside/leak.txt")
    admitted, skipped = run(repo.root)
    assert admitted == {}
    assert reasons(skipped) == {
        "out": SkipReason.OUTSIDE_ROOT,
        "sub/leak.txt": SkipReason.OUTSIDE_ROOT,
    }


def test_walker_follows_file_links_inside_repo_and_prunes_folder_links(repo: Repo) -> None:
    """A link to a folder of the repository is not followed: its files are walked at
    their own path, and a second copy made every definition in them ambiguous to the code
    graph (a messy tree's `links/fastapi_alias -> ../fastapi`; ripgrep's
    `HomebrewFormula -> pkg/brew`). A link to a file is followed."""
    real = repo.write("src/lib/a.py", "print(1)\n")
    repo.symlink("lib", "src/lib")
    repo.symlink("a_link.py", "src/lib/a.py")
    admitted, skipped = run(repo.root)
    assert sorted(admitted) == ["a_link.py", "src/lib/a.py"]
    assert reasons(skipped) == {"lib": SkipReason.IGNORED}
    assert skipped["lib"].detail == ("built-in prune: a link to the folder 'src/lib' of this "
                                     "repository, whose files are indexed there")
    flt = FileFilter(repo.root, WalkOptions())
    assert flt.explain("lib", is_dir=True) == skipped["lib"]
    assert flt.check("lib/a.py") is SkipReason.IGNORED
    assert flt.entry("lib/a.py") == Skipped("lib/a.py", SkipReason.IGNORED, skipped["lib"].detail)
    resolved = str(real.resolve())
    assert {e.abs_path for e in admitted.values()} == {resolved}
    assert read_text(admitted["a_link.py"]) == "print(1)\n"


def test_walker_terminates_on_symlink_cycle(repo: Repo) -> None:
    repo.write("a/file.txt", "x\n")
    repo.symlink("a/up", "..")  # back to the root
    repo.symlink("a/here", ".")  # to itself
    repo.symlink("self", "self")  # a link to itself
    admitted, skipped = run(repo.root)
    assert list(admitted) == ["a/file.txt"]
    assert reasons(skipped) == {
        "a/here": SkipReason.SYMLINK_CYCLE,
        "a/up": SkipReason.SYMLINK_CYCLE,
        "self": SkipReason.SYMLINK_CYCLE,
    }


def test_walker_reports_dangling_symlink_and_fifo_as_not_regular(repo: Repo) -> None:
    repo.symlink("dangling", "missing.txt")
    os.mkfifo(repo.root / "pipe")  # would block the walk if it were opened
    admitted, skipped = run(repo.root)
    assert admitted == {}
    assert reasons(skipped) == {
        "dangling": SkipReason.NOT_REGULAR,
        "pipe": SkipReason.NOT_REGULAR,
    }


# --------------------------------------------------------------------------- reading


def test_read_text_skips_nul_bytes_as_binary(repo: Repo) -> None:
    repo.write_bytes("img.bin", b"PNG\x00\x01\x02")
    (entry,) = walk(repo.root, WalkOptions())
    assert isinstance(entry, FileEntry)
    result = read_text(entry)
    assert isinstance(result, Skipped)
    assert result.reason is SkipReason.BINARY
    assert result.path == "img.bin"


def test_read_text_skips_invalid_utf8_as_binary(repo: Repo) -> None:
    repo.write_bytes("latin1.txt", "caf\u00e9".encode("latin-1"))
    (entry,) = walk(repo.root, WalkOptions())
    assert isinstance(entry, FileEntry)
    result = read_text(entry)
    assert isinstance(result, Skipped) and result.reason is SkipReason.BINARY


def test_read_text_strips_bom_and_normalises_crlf(repo: Repo) -> None:
    repo.write_bytes("a.txt", b"\xef\xbb\xbfline1\r\nline2\r\n")
    repo.write_bytes("empty.txt", b"")
    entries = [e for e in walk(repo.root, WalkOptions()) if isinstance(e, FileEntry)]
    assert [read_text(e) for e in entries] == ["line1\nline2\n", ""]


def test_unreadable_file_reported_while_rest_indexed(repo: Repo) -> None:
    repo.write("a.txt", "a")
    repo.write("b.txt", "b")
    repo.write("c.txt", "c")
    entries = [e for e in walk(repo.root, WalkOptions()) if isinstance(e, FileEntry)]
    if CHMOD_BLOCKS_READS:
        (repo.root / "b.txt").chmod(0)
    else:  # root reads through chmod 000: the file vanishes between walk and read instead
        (repo.root / "b.txt").unlink()
    results = {e.path: read_text(e) for e in entries}
    assert results["a.txt"] == "a"
    assert results["c.txt"] == "c"
    failed = results["b.txt"]
    assert isinstance(failed, Skipped)
    assert failed.reason is SkipReason.UNREADABLE
    assert failed.detail


@pytest.mark.skipif(not CHMOD_BLOCKS_READS, reason="root reads through chmod 000")
def test_unreadable_directory_reported_while_rest_indexed(repo: Repo) -> None:
    repo.write("locked/x.txt", "x\n")
    repo.write("open/y.txt", "x\n")
    (repo.root / "locked").chmod(0)
    try:
        admitted, skipped = run(repo.root)
    finally:
        (repo.root / "locked").chmod(0o755)
    assert list(admitted) == ["open/y.txt"]
    assert reasons(skipped) == {"locked": SkipReason.UNREADABLE}


def test_read_text_refuses_file_replaced_by_symlink(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret", encoding="utf-8")
    repo.write("a.txt", "x\n")
    (entry,) = walk(repo.root, WalkOptions())
    assert isinstance(entry, FileEntry)
    (repo.root / "a.txt").unlink()
    repo.symlink("a.txt", str(outside))
    result = read_text(entry)
    assert isinstance(result, Skipped) and result.reason is SkipReason.UNREADABLE


def test_read_text_rechecks_size_of_grown_file(repo: Repo) -> None:
    repo.write_size("a.txt", 10)
    (entry,) = walk(repo.root, WalkOptions(max_file_size=10))
    assert isinstance(entry, FileEntry)
    repo.write_size("a.txt", 11)
    result = read_text(entry, max_size=10)
    assert isinstance(result, Skipped) and result.reason is SkipReason.TOO_LARGE


# --------------------------------------------------------------------------- ignore files


def test_nested_gitignore_with_negation(repo: Repo) -> None:
    admitted, skipped = walked(repo, {
        ".gitignore": "*.log\nbuild/\n",
        "app.log": "x\n",
        "build/out.js": "x\n",
        "build.txt": "x\n",  # `build/` is a directory rule
        "sub/.gitignore": "!keep.log\n/local.txt\n",
        "sub/keep.log": "x\n",
        "sub/other.log": "x\n",
        "sub/local.txt": "x\n",
        "sub/deeper/local.txt": "x\n",  # `/local.txt` is anchored to sub/
    })
    assert sorted(admitted) == [
        ".gitignore",
        "build.txt",
        "sub/.gitignore",
        "sub/deeper/local.txt",
        "sub/keep.log",
    ]
    assert reasons(skipped) == {
        "app.log": SkipReason.IGNORED,
        "build": SkipReason.IGNORED,
        "sub/local.txt": SkipReason.IGNORED,
        "sub/other.log": SkipReason.IGNORED,
    }
    assert skipped["sub/local.txt"].detail == "sub/.gitignore: /local.txt"


def test_gitignored_directory_cannot_be_reincluded(repo: Repo) -> None:
    repo.write(".gitignore", "logs/\n!logs/keep.txt\n")
    repo.write("logs/keep.txt", "x\n")
    admitted, skipped = run(repo.root)
    assert list(admitted) == [".gitignore"]
    assert reasons(skipped) == {"logs": SkipReason.IGNORED}


def test_ctxdignore_applies_and_overrides_gitignore(repo: Repo) -> None:
    admitted, skipped = walked(repo, {
        ".gitignore": "*.log\n",
        ".ctxdignore": "fixtures/\n!keep.log\n",
        "fixtures/big.json": "x\n",
        "keep.log": "x\n",
        "drop.log": "x\n",
    })
    assert sorted(admitted) == [".ctxdignore", ".gitignore", "keep.log"]
    assert reasons(skipped) == {"drop.log": SkipReason.IGNORED, "fixtures": SkipReason.IGNORED}


def test_git_info_exclude_is_honoured_and_git_dir_is_silent(repo: Repo) -> None:
    admitted, skipped = walked(repo, {
        ".git/info/exclude": "scratch.txt\n",
        ".git/HEAD": "ref: refs/heads/main\n",
        "scratch.txt": "x\n",
        "main.py": "x\n",
    })
    assert list(admitted) == ["main.py"]
    assert reasons(skipped) == {"scratch.txt": SkipReason.IGNORED}


def test_use_gitignore_false_ignores_ignore_files(repo: Repo) -> None:
    admitted, skipped = walked(repo, {
        ".gitignore": "*.log\n",
        ".ctxdignore": "*.txt\n",
        "a.log": "x\n",
        "b.txt": "x\n",
    }, use_gitignore=False)
    assert sorted(admitted) == [".ctxdignore", ".gitignore", "a.log", "b.txt"]
    assert skipped == {}


def test_invalid_gitignore_line_is_dropped_not_fatal(repo: Repo) -> None:
    repo.write(".gitignore", "!\n*.log\n")
    repo.write("a.log", "x\n")
    _, skipped = run(repo.root)
    assert skipped["a.log"].reason is SkipReason.IGNORED


# --------------------------------------------------------------------------- sensitive


SENSITIVE = [
    ".env",
    ".env.local",
    "prod.env",
    "server.pem",
    "tls/private.key",
    "id_rsa",
    "id_ed25519.pub",
    "aws_credentials.json",
    "config/My_Secret.yaml",
    "keystore.p12",
    ".netrc",
    ".npmrc",
]


def test_sensitive_files_excluded_by_default(repo: Repo) -> None:
    for path in SENSITIVE:
        repo.write(path, "x\n")
    admitted, skipped = walked(repo, {
        ".aws/config": "x\n",
        "home/.ssh/known_hosts": "x\n",
        "main.py": "x\n",
    })
    assert list(admitted) == ["main.py"]
    expected = dict.fromkeys([*SENSITIVE, ".aws", "home/.ssh"], SkipReason.SENSITIVE)
    assert reasons(skipped) == expected


def test_sensitive_files_included_when_sensitive_excludes_off(repo: Repo) -> None:
    for path in SENSITIVE:
        repo.write(path, "x\n")
    repo.write(".aws/config", "x\n")
    admitted, skipped = run(repo.root, sensitive_excludes=False)
    assert sorted(admitted) == sorted([*SENSITIVE, ".aws/config"])
    assert skipped == {}


def test_sensitive_allow_overrides_matching_paths_only(repo: Repo) -> None:
    repo.write("tests/fixtures/server.pem", "x\n")
    repo.write("tests/fixtures/deep/client.key", "x\n")
    repo.write("server.pem", "x\n")
    repo.write(".env", "x\n")
    repo.write(".aws/config", "x\n")
    repo.write(".aws/credentials", "x\n")
    # allowing a directory (like excluding one) covers everything under it
    admitted, skipped = run(repo.root, sensitive_allow=("fixtures/**", ".aws"))
    assert sorted(admitted) == [
        ".aws/config",
        ".aws/credentials",
        "tests/fixtures/deep/client.key",
        "tests/fixtures/server.pem",
    ]
    assert reasons(skipped) == {
        ".env": SkipReason.SENSITIVE,
        "server.pem": SkipReason.SENSITIVE,
    }


def test_exclude_wins_over_sensitive_allow(repo: Repo) -> None:
    repo.write("a.pem", "x\n")
    _, skipped = run(repo.root, sensitive_allow=("*.pem",), exclude_patterns=("*.pem",))
    assert skipped["a.pem"].reason is SkipReason.EXCLUDED


# --------------------------------------------------------------------------- prunes


def test_vcs_dependency_and_venv_dirs_pruned(repo: Repo) -> None:
    admitted, skipped = walked(repo, {
        ".git/config": "x\n",
        "node_modules/left-pad/index.js": "x\n",
        "web/node_modules/react/index.js": "x\n",
        ".venv/lib/site.py": "x\n",
        "venv/lib/site.py": "x\n",
        "env/pyvenv.cfg": "home = /usr/bin\n",
        "env/lib/site.py": "x\n",
        "pkg/__pycache__/m.cpython-311.pyc": "x\n",
        ".pytest_cache/v/cache": "x\n",
        "pkg/m.py": "x\n",
        "web/app.js": "x\n",
    }, include_patterns=("*.js", "*.py"))
    assert sorted(admitted) == ["pkg/m.py", "web/app.js"]
    assert reasons(skipped) == {
        ".pytest_cache": SkipReason.IGNORED,
        ".venv": SkipReason.IGNORED,
        "env": SkipReason.IGNORED,
        "node_modules": SkipReason.IGNORED,
        "pkg/__pycache__": SkipReason.IGNORED,
        "venv": SkipReason.IGNORED,
        "web/node_modules": SkipReason.IGNORED,
    }
    assert "pyvenv.cfg" in skipped["env"].detail


def test_builtin_prunes_win_over_includes(repo: Repo) -> None:
    repo.write("node_modules/x/index.js", "x\n")
    admitted, skipped = run(repo.root, include_patterns=("node_modules/**",))
    assert admitted == {}
    assert reasons(skipped) == {"node_modules": SkipReason.IGNORED}


# --------------------------------------------------------------------------- order, scale


def test_walk_order_is_sorted_depth_first_and_stable(repo: Repo) -> None:
    for path in ["b.txt", "a/z.txt", "a/b/c.txt", "c/d.txt", "A.txt"]:
        repo.write(path, "x\n")
    first = [item.path for item in walk(repo.root, WalkOptions())]
    second = [item.path for item in walk(repo.root, WalkOptions())]
    assert first == ["A.txt", "a/b/c.txt", "a/z.txt", "b.txt", "c/d.txt"]
    assert first == second


def test_walk_of_1000_files_is_complete(repo: Repo) -> None:
    for i in range(1000):
        repo.write(f"d{i % 10}/file{i}.txt", "content")
    admitted, skipped = run(repo.root)
    assert len(admitted) == 1000
    assert skipped == {}


# --------------------------------------------------------------------------- FileFilter


def _mixed_tree(repo: Repo, tmp_path: Path) -> WalkOptions:
    (tmp_path / "outside").mkdir(exist_ok=True)
    repo.write(".gitignore", "*.log\ndist/\n")
    repo.write(".ctxdignore", "generated/\n")
    repo.write("src/main.go", "x\n")
    repo.write("src/main_test.go", "x\n")
    repo.write("src/app.log", "x\n")
    repo.write("src/.gitignore", "!keep.log\n")
    repo.write("src/keep.log", "x\n")
    repo.write("src/notes.txt", "x\n")
    repo.write("dist/bundle.js", "x\n")
    repo.write("generated/x.go", "x\n")
    repo.write("vendor/lib/v.go", "x\n")
    repo.write("docs/readme.md", "x\n")
    repo.write("docs/.env", "x\n")
    repo.write("fixtures/test.pem", "x\n")
    repo.write(".ssh/id_rsa", "x\n")
    repo.write("node_modules/x/index.js", "x\n")
    repo.write("tools/env/pyvenv.cfg", "x\n")
    repo.write("tools/env/lib.py", "x\n")
    repo.write(".git/HEAD", "x\n")
    repo.write_size("big.md", 200)
    repo.symlink("out", "../outside")
    repo.symlink("srclink", "src")
    return WalkOptions(
        include_patterns=("*.go", "*.md", "*.log", "*.txt", "*.pem"),
        exclude_patterns=("*_test.go", "vendor/**"),
        sensitive_allow=("fixtures/**",),
        max_file_size=100,
        max_lexical_file_size=100,
    )


def test_file_filter_agrees_with_walk(repo: Repo, tmp_path: Path) -> None:
    opts = _mixed_tree(repo, tmp_path)
    flt = FileFilter(repo.root, opts)
    admitted: list[FileEntry] = []
    name_skipped: list[Skipped] = []
    name_reasons = {
        SkipReason.IGNORED,
        SkipReason.SENSITIVE,
        SkipReason.EXCLUDED,
        SkipReason.NOT_INCLUDED,
    }
    for item in walk(repo.root, opts):
        if isinstance(item, FileEntry):
            admitted.append(item)
        elif item.reason in name_reasons:
            name_skipped.append(item)
    assert sorted(e.path for e in admitted) == [
        "docs/readme.md",
        "fixtures/test.pem",
        "src/keep.log",
        "src/main.go",
        "src/notes.txt",
    ]
    assert len(name_skipped) >= 10
    for entry in admitted:
        assert flt.check(entry.path) is None, entry.path
        assert flt.entry(entry.path) == entry
    for skip in name_skipped:
        is_dir = (repo.root / skip.path).is_dir()
        assert flt.check(skip.path, is_dir=is_dir) is skip.reason, skip.path
        assert flt.explain(skip.path, is_dir=is_dir) == skip
    # paths inside pruned directories get the directory's reason
    assert flt.check("node_modules/x/index.js") is SkipReason.IGNORED
    assert flt.check(".git/HEAD") is SkipReason.IGNORED
    assert flt.check("tools/env/lib.py") is SkipReason.IGNORED
    assert flt.check("vendor/lib/v.go") is SkipReason.EXCLUDED
    assert flt.check(".ssh/id_rsa") is SkipReason.SENSITIVE
    assert flt.check("dist/new.js") is SkipReason.IGNORED
    assert flt.check("../etc/passwd") is SkipReason.OUTSIDE_ROOT
    assert flt.check("./src/main.go") is None
    # the filesystem steps, through entry()
    assert flt.entry("big.md") == Skipped(
        "big.md", SkipReason.TOO_LARGE, "200 bytes > max_file_size 100"
    )
    assert isinstance(out := flt.entry("out/x.txt"), Skipped)
    assert out.reason is SkipReason.UNREADABLE  # does not exist
    (tmp_path / "outside" / "x.txt").write_text("x", encoding="utf-8")
    assert flt.check("out/x.txt") is None  # name policy alone admits it ...
    assert flt.entry("out/x.txt").reason is SkipReason.OUTSIDE_ROOT  # type: ignore[union-attr]


def test_file_filter_sees_gitignore_edit(repo: Repo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.write("sub/a.log", "x\n")
    repo.write("sub/b.tmp", "x\n")
    flt = FileFilter(repo.root, WalkOptions())
    assert flt.check("sub/a.log") is SkipReason.IGNORED
    assert flt.check("sub/b.tmp") is None
    repo.write(".gitignore", "*.tmp\n*.bak\n")  # a different size: seen without reload()
    assert flt.check("sub/a.log") is None
    assert flt.check("sub/b.tmp") is SkipReason.IGNORED
    repo.write("sub/.gitignore", "!b.tmp\n")  # a new nested file
    assert flt.check("sub/b.tmp") is None
    (repo.root / "sub/.gitignore").unlink()
    assert flt.check("sub/b.tmp") is SkipReason.IGNORED


def test_file_filter_reload_rereads_ignore_files(repo: Repo) -> None:
    repo.write(".gitignore", "a.txt\n")
    flt = FileFilter(repo.root, WalkOptions())
    assert flt.check("a.txt") is SkipReason.IGNORED
    st = (repo.root / ".gitignore").stat()
    repo.write(".gitignore", "b.txt\n")  # same size; force the same mtime too
    os.utime(repo.root / ".gitignore", ns=(st.st_atime_ns, st.st_mtime_ns))
    flt.reload()
    assert flt.check("a.txt") is None
    assert flt.check("b.txt") is SkipReason.IGNORED
