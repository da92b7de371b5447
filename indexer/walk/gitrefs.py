"""The checked-out branch and commit of a git working tree, read from `.git` without git.

`checked_out(root) -> GitHead | None` finds the repository that holds `root` (a `.git`
directory, or a `.git` file `gitdir: ...` as in linked worktrees and submodules, in `root`
or a folder above it), reads `HEAD` and resolves it: a symbolic ref (`ref: refs/heads/main`)
through the loose ref files of the worktree's own git dir and the common dir
(`commondir`), then `packed-refs`; a detached HEAD is the commit itself. `parse_head`,
`parse_packed_refs` are the pure parts.

Callers: `server.service` (`list_repos`, `file_content`'s branch check). Reads a few
small files; never runs git, never writes, never raises for a broken or foreign `.git`
(the answer is then None or a branch without a commit).

Invariants: a `GitHead` names a branch (`main`) or is detached (`branch is None`); its
`sha` is the 40-hex commit id, or None for a branch without commits yet.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitHead", "branch_rows", "checked_out", "parse_head", "parse_packed_refs"]

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
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read(_MAX_READ)
    except (OSError, ValueError):
        return None


def _git_dir(root: Path) -> Path | None:
    """The git dir of the working tree holding `root` (`.git`, or where a `.git` file
    points), searching `root` and the folders above it."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = _read(dot_git) or ""
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:"):].strip())
                target = target if target.is_absolute() else folder / target
                return target if target.is_dir() else None
            return None
    return None


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
    common_text = _read(git_dir / "commondir")
    common = git_dir
    if common_text and common_text.strip():
        c = Path(common_text.strip())
        common = c if c.is_absolute() else git_dir / c
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
