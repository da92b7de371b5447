"""A git working tree's layout and checked-out commit, read from `.git` without git.

`checked_out(root) -> GitHead | None` finds the repository that holds `root` (a `.git`
directory, or a `.git` file `gitdir: ...` as in linked worktrees and submodules, in `root`
or a folder above it), reads `HEAD` and resolves it: a symbolic ref (`ref: refs/heads/main`)
through the loose ref files of the worktree's own git dir and the common dir
(`commondir`), then `packed-refs`; a detached HEAD is the commit itself. `parse_head`,
`parse_packed_refs` are the pure parts. `git_layout(root) -> GitLayout | None` says where
the git dir (`.git`, or where a `.git` file points: linked worktrees, `--separate-git-dir`,
submodules), the common dir (`info/exclude` lives there) and the working tree's top are,
and the root's path from that top; `is_git_dir(path)` recognises a git dir itself (a bare
repository, or a `.git` folder), which is nothing to index.

Reads a few small files, regular files only and at most 1 MiB each (`safeopen.read_regular`:
a FIFO or `/dev/zero` planted in `.git` is not read); never runs git, never writes, never
raises for a broken or foreign `.git` (the answer is then None or a branch without a commit).

Invariants: a `GitHead` names a branch (`main`) or is detached (`branch is None`); its
`sha` is the 40-hex commit id, or None for a branch without commits yet.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ctxd.indexer.walk.safeopen import read_regular

__all__ = [
    "GitHead",
    "GitLayout",
    "branch_rows",
    "checked_out",
    "git_layout",
    "is_git_dir",
    "parse_head",
    "parse_packed_refs",
]

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
_MAX_READ = 1 << 20
_MAX_DEPTH = 5


@dataclass(frozen=True, slots=True)
class GitHead:
    """What a working tree has checked out."""

    branch: str | None
    """`main` for `refs/heads/main`; None for a detached HEAD."""
    sha: str | None
    """The commit id; None for a branch with no commits yet."""

    @property
    def label(self) -> str:
        """`main@1a2b3c4`, `HEAD@1a2b3c4` (detached) or `main` (no commits)."""
        name = self.branch or "HEAD"
        return f"{name}@{self.sha[:7]}" if self.sha else name


def parse_head(text: str) -> tuple[str | None, str | None]:
    """`(ref, sha)` from the text of a `HEAD` (or loose ref) file: `("refs/heads/main",
    None)` for a symbolic ref, `(None, sha)` for a commit id, `(None, None)` otherwise."""
    line = text.strip()
    if line.startswith("ref:"):
        ref = line[4:].strip()
        return (ref or None), None
    return (None, line) if _SHA.match(line) else (None, None)


def parse_packed_refs(text: str) -> dict[str, str]:
    """`{ref: sha}` from a `packed-refs` file (comments and peeled `^` lines skipped)."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in "#^":
            continue
        sha, _, ref = line.partition(" ")
        if _SHA.match(sha) and ref:
            out[ref.strip()] = sha
    return out


def _read(path: Path) -> str | None:
    """The text of one of git's small files; None unless it is a regular file (a FIFO,
    a device, a folder: never opened for reading; `safeopen.read_regular`)."""
    data = read_regular(path, _MAX_READ)
    return None if data is None else data.decode("utf-8", "replace")


def _git_dir(root: Path) -> Path | None:
    """The git dir of the working tree holding `root` (`.git`, or where a `.git` file
    points), searching `root` and the folders above it."""
    found = _work_tree(root)
    return None if found is None else found[1]


def _work_tree(root: Path) -> tuple[Path, Path] | None:
    """(working tree top, git dir) of the working tree holding `root`."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():
            text = _read(dot_git) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                target = target if target.is_absolute() else folder / target
                return (folder, target) if target.is_dir() else None
            return None
    return None


def _common_dir(git_dir: Path) -> Path:
    """Where a linked worktree's git dir says the repository's shared files are."""
    text = _read(git_dir / "commondir")
    if text and text.strip():
        c = Path(text.strip())
        return c if c.is_absolute() else git_dir / c
    return git_dir


@dataclass(frozen=True, slots=True)
class GitLayout:
    """Where a working tree's git files are, seen from an indexed root inside it."""

    git_dir: str
    """The worktree's own git dir (its `index`, `HEAD`): real path."""
    common_dir: str
    """The repository's shared git dir (`info/exclude`, `config`): real path."""
    top: str
    """The working tree's top folder: real path."""
    prefix: str
    """The indexed root's path from `top` (`""` when it is the top), `/`-separated."""
    hash_size: int
    """20 (SHA-1) or 32 (SHA-256 repositories): the object id size in the index."""

    @property
    def exclude_file(self) -> str:
        """`info/exclude`, which git reads from the common dir."""
        return os.path.join(self.common_dir, "info", "exclude")


_OBJECT_FORMAT = re.compile(r"^\s*objectformat\s*=\s*sha256\s*$", re.IGNORECASE | re.MULTILINE)


def git_layout(root: Path | str) -> GitLayout | None:
    """The layout of the git working tree holding `root` (`root` itself, or a folder of
    it), or None outside one."""
    root_path = Path(os.path.realpath(root))
    found = _work_tree(root_path)
    if found is None:
        return None
    top, git_dir = found
    git_real = Path(os.path.realpath(git_dir))
    common = Path(os.path.realpath(_common_dir(git_real)))
    prefix = root_path.relative_to(top).as_posix() if root_path != top else ""
    config = _read(common / "config") or ""
    hash_size = 32 if _OBJECT_FORMAT.search(config) else 20
    return GitLayout(str(git_real), str(common), str(top), "" if prefix == "." else prefix,
                     hash_size)


def is_git_dir(path: Path | str) -> bool:
    """Whether `path` is a git dir itself (a bare repository, a `.git` folder, a linked
    worktree's admin folder): a `HEAD` naming a ref or a commit, and `objects/` and
    `refs/` folders (or a `commondir` file), as git's own `is_git_directory` asks."""
    p = Path(path)
    head = _read(p / "HEAD")
    if head is None or parse_head(head) == (None, None):
        return False
    if (p / "commondir").is_file():
        return True
    return (p / "objects").is_dir() and (p / "refs").is_dir()


def _resolve(ref: str, git_dir: Path, common: Path) -> str | None:
    packed: dict[str, str] | None = None
    for _ in range(_MAX_DEPTH):
        if ".." in ref.split("/"):
            return None
        text = None
        for base in (git_dir, common):
            text = _read(base / ref)
            if text is not None:
                break
        if text is None:
            if packed is None:
                packed = parse_packed_refs(_read(common / "packed-refs") or "")
            return packed.get(ref)
        nxt, sha = parse_head(text)
        if sha is not None or nxt is None:
            return sha
        ref = nxt
    return None


def checked_out(root: Path | str) -> GitHead | None:
    """The branch and commit checked out in the git working tree holding `root`, or None
    when `root` is not in a git working tree (or its `HEAD` cannot be read)."""
    git_dir = _git_dir(Path(os.path.abspath(root)))
    if git_dir is None:
        return None
    head = _read(git_dir / "HEAD")
    if head is None:
        return None
    common = _common_dir(git_dir)
    ref, sha = parse_head(head)
    if ref is None:
        return GitHead(None, sha) if sha else None
    branch = ref.removeprefix("refs/heads/")
    return GitHead(branch, _resolve(ref, git_dir, common))


def branch_rows(root: Path | str) -> list[dict[str, str]]:
    """`[{"name", "sha"}]` for the checked-out branch (`HEAD` when detached; `sha` empty
    without commits), `[]` outside git: the `branches` of a local repository listing."""
    head = checked_out(root)
    if head is None:
        return []
    return [{"name": head.branch or "HEAD", "sha": head.sha or ""}]
