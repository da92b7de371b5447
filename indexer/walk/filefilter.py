"""The walk's policy for one path at a time: `FileFilter`, for the file watcher.

`FileFilter(root, opts)` answers, for one repo-relative path, what `indexer.walk.walker.walk`
would have done with it: `check` / `explain` apply the name-based steps (built-in
prunes, ignore files, sensitive excludes, user excludes and includes) to the path and
to every directory above it; `entry` adds the filesystem steps (symlink containment,
file type, size) and returns the `FileEntry` or `Skipped` the walk would have yielded.

The watcher judges changed paths with it without walking the whole tree; what git tracks
(`indexer.walk.gitindex`) is re-read when git's index file changes.

Invariants: the same policy, in the same order, as `walk` (both apply one
`indexer.walk.policy.Policy`); an absolute path or one with a `..` segment is OUTSIDE_ROOT
before anything is read; ignore files are re-read when they change on disk, so a
verdict never rests on a stale `.gitignore` (short of `reload()`'s corner case).
"""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from pathlib import Path

from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.gitindex import tracked_paths
from ctxd.indexer.walk.gitrefs import git_layout
from ctxd.indexer.walk.ignore import IgnoreCache, IgnoreFile, excluded_folder
from ctxd.indexer.walk.pathguard import is_inside
from ctxd.indexer.walk.policy import (
    PRUNE_MARKERS,
    Policy,
    Verdict,
    bad_name,
    home_verdict,
    linked_folder_verdict,
    refused_by_name,
    stat_error,
    venv_verdict,
)
from ctxd.indexer.walk.rootpin import pinned_root
from ctxd.indexer.walk.walker import WalkOptions, compile_policy, validate_root

__all__ = ["FileFilter", "normalize_rel"]


class FileFilter:
    """The walk's policy for one path at a time, for the file watcher.

    `check` applies the name-based steps (prunes, ignore files, sensitive, exclude,
    include) to the path and to every directory above it, exactly as `walk` would have
    met them; `entry` adds the filesystem steps (symlink containment, file type, size)
    and returns what `walk` would have yielded for that file.

    Ignore files are cached per directory (`IgnoreCache`) and re-read when their
    `(mtime_ns, size, inode)` changes, checked on every call (two `stat`s per directory
    level); `reload()` drops the cache, for an edit that keeps all three (same size
    within one timestamp tick).
    """

    def __init__(self, root: Path, opts: WalkOptions, *, pin: str | None = None) -> None:
        """Raises ValidationError for bad options or root, like `walk` (`pin`: a stored
        repository's root identity, as `walk` takes it; `RootMoved` when it moved)."""
        self._policy = compile_policy(opts)
        self._root_real = (str(validate_root(root)) if pin is None
                           else pinned_root(str(root), pin))
        self._git = git_layout(self._root_real) if self._policy.use_ignore_files else None
        self._ignores = IgnoreCache(self._root_real)

    @property
    def policy(self) -> Policy:
        """The compiled policy this filter applies."""
        return self._policy

    @property
    def root(self) -> Path:
        """The resolved repository root."""
        return Path(self._root_real)

    def reload(self) -> None:
        """Forget every cached ignore file; the next call re-reads them."""
        self._ignores.clear()

    def _current_policy(self) -> Policy:
        """The policy with what git tracks now (`gitindex.tracked_paths` re-reads the index
        when its stat changes: a `git add` or `git rm --cached` since the last call)."""
        if self._git is not None:
            tracked = tracked_paths(self._git)
            if tracked is not self._policy.tracked:
                self._policy = replace(self._policy, tracked=tracked)
        return self._policy

    def check(self, rel_path: str, *, is_dir: bool = False) -> SkipReason | None:
        """Why `walk` would refuse `rel_path` by name, or None if the name policy admits it.

        Args:
            rel_path: repo-relative POSIX path (`./` prefix tolerated).
            is_dir: judge it as a directory (prunes, directory patterns).

        Returns:
            None (admitted by name; size and content not checked), or IGNORED,
            SENSITIVE, EXCLUDED, NOT_INCLUDED, or OUTSIDE_ROOT for an absolute or `..` path.
        """
        verdict = self.explain(rel_path, is_dir=is_dir)
        return None if verdict is None else verdict.reason

    def explain(self, rel_path: str, *, is_dir: bool = False) -> Skipped | None:
        """Like `check`, with the detail (`Skipped`), or None when admitted."""
        rel = normalize_rel(rel_path)
        if rel is None:
            return Skipped(rel_path, SkipReason.OUTSIDE_ROOT, "absolute path or '..' segment")
        if skipped := bad_name(rel):
            return skipped
        verdict = self._verdict(rel, is_dir)
        return None if verdict is None else refused_by_name(rel, verdict)

    def entry(self, rel_path: str) -> FileEntry | Skipped:
        """What `walk` would yield for the file `rel_path` (a directory is NOT_REGULAR).

        A path that does not exist (deleted) is `Skipped(UNREADABLE)`.
        """
        rel = normalize_rel(rel_path)
        if rel is None:
            return Skipped(rel_path, SkipReason.OUTSIDE_ROOT, "absolute path or '..' segment")
        if not rel:
            return Skipped(".", SkipReason.NOT_REGULAR, "the repository root is a directory")
        if skipped := bad_name(rel):
            return skipped
        path = os.path.join(self._root_real, rel)
        try:
            st = os.stat(path)
        except OSError as exc:
            return stat_error(rel, exc, path)
        is_dir = stat.S_ISDIR(st.st_mode)
        if verdict := self._verdict(rel, is_dir):
            return refused_by_name(rel, verdict)
        try:
            real = os.path.realpath(path)
        except OSError as exc:  # a link on the way changed while it was resolved
            return Skipped(rel, SkipReason.UNREADABLE, f"changed while resolved: {exc}")
        if not is_inside(self._root_real, real):
            return Skipped(
                rel, SkipReason.OUTSIDE_ROOT, f"symlink resolves outside the repository: {real}"
            )
        if real != path and (verdict := home_verdict(self._root_real, real)):
            return Skipped(rel, *verdict)
        if not stat.S_ISREG(st.st_mode):
            return Skipped(rel, SkipReason.NOT_REGULAR, "not a regular file")
        if verdict := self._policy.size_verdict(st.st_size):
            return Skipped(rel, *verdict)
        return FileEntry(rel, real, st.st_size, st.st_mtime_ns)

    def _verdict(self, rel: str, is_dir: bool) -> Verdict | None:
        if not rel:
            return None
        policy = self._current_policy()
        parts = rel.split("/")
        chain = self._dir_ignores("")
        allowed = False
        last = len(parts) - 1
        for depth, name in enumerate(parts):
            drel = "/".join(parts[: depth + 1])
            if depth == last and not is_dir:
                return policy.file_verdict(drel, name, chain, allowed)
            if verdict := (policy.dir_verdict(drel, name, chain, allowed) or self._link(drel)
                           or self._venv(drel)):
                return verdict
            if depth < last:
                allowed = policy.dir_allowed(drel, name, allowed)
                if kept := policy.kept_by_git(chain, drel):  # as the walk: see `walk`
                    chain += (excluded_folder(drel, kept),)
                chain += self._dir_ignores(drel, ctxd_only=bool(kept))
        return None

    def _link(self, rel_dir: str) -> Verdict | None:
        """As the walk judges a symlink to a folder: a link to another folder of the
        repository is pruned (`linked_folder_verdict`), one to an ancestor is a cycle;
        other links (outside, dangling) are left to `entry`'s checks."""
        path = os.path.join(self._root_real, rel_dir)
        if not os.path.islink(path):
            return None
        try:
            st = os.stat(path)
            real = os.path.realpath(path)
            parent = os.path.realpath(os.path.dirname(path))
        except OSError:
            return None
        if not stat.S_ISDIR(st.st_mode) or not is_inside(self._root_real, real):
            return None
        if verdict := home_verdict(self._root_real, real):
            return verdict
        if is_inside(real, parent):
            return SkipReason.SYMLINK_CYCLE, f"points to its ancestor {real!r}"
        return linked_folder_verdict(self._root_real, real)

    def _venv(self, rel_dir: str) -> Verdict | None:
        base = os.path.join(self._root_real, rel_dir)
        return venv_verdict({m for m in PRUNE_MARKERS if os.path.lexists(os.path.join(base, m))})

    def _dir_ignores(self, rel_dir: str, ctxd_only: bool = False) -> tuple[IgnoreFile, ...]:
        if not self._policy.use_ignore_files:
            return ()
        return self._ignores.dir_ignores(rel_dir, ctxd_only=ctxd_only)


def normalize_rel(rel_path: str) -> str | None:
    """`./a//b/` -> `a/b`; None for an absolute path or one with a `..` segment."""
    if rel_path.startswith("/") or "\x00" in rel_path:
        return None
    parts = [p for p in rel_path.split("/") if p and p != "."]
    if ".." in parts:
        return None
    return "/".join(parts)
