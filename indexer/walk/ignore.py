"""Ignore files: `.gitignore`, `.ctxdignore` and git's `info/exclude`, with git's semantics.

`load_ignore_file(path, base, source)` reads and compiles one file into an `IgnoreFile`
(`pathspec.GitIgnoreSpec`, patterns relative to the folder `base`);
`ignore_sources(rel_dir)` names the ignore files a folder may hold, lowest precedence
first; `outer_ignores(root_real)` loads, for a root inside a git working tree, the
files git reads from outside the root: `info/exclude` of the repository's common git dir
(so linked worktrees and `--separate-git-dir` repositories have theirs) and the
`.gitignore` files of the folders between the working tree's top and the root (none of
them when they ignore the root itself: `unless_root_ignored`);
`ignore_hit(chain, rel, is_dir)` / `ignored_by` answer whether the chain of files from the
root down to a path's folder ignores it, and by which rule; `excluded_folder(rel, rule)`
stands for a folder git ignores but enters for its tracked files (everything else under
it ignored, whatever its own `.gitignore` says). `IgnoreCache` keeps each folder's files
between calls and re-reads one when its stat changes.

A path git tracks passes a git rule (`indexer.walk.policy`): git keeps tracked files
whatever the ignore files say. Reads the ignore files and nothing else.

Invariants: a nested file applies relative to its folder (a file outside the root relative
to its own folder, through `IgnoreFile.lead`); in a chain the deepest file with an opinion
decides (a negation is an opinion), so a deeper file overrides a shallower one and
`.ctxdignore` overrides `.gitignore` in the same folder; lines pathspec refuses are
dropped, as git drops them; an unreadable file or one without a rule counts as absent;
a file of more patterns than one RE2 set holds is compiled in parts (`compile_ignore`),
never an error.
"""

from __future__ import annotations

import logging
import os
import stat
from dataclasses import dataclass

import re2
from pathspec import GitIgnoreSpec
from pathspec.backend import _Backend

from ctxd.indexer.walk.gitrefs import git_layout
from ctxd.indexer.walk.pathguard import is_inside
from ctxd.indexer.walk.safeopen import O_FILE, open_verified

log = logging.getLogger(__name__)

__all__ = [
    "IGNORE_FILE_NAMES",
    "IgnoreCache",
    "IgnoreFile",
    "excluded_folder",
    "ignore_hit",
    "ignore_sources",
    "ignored_by",
    "load_ignore_file",
    "outer_ignores",
    "unless_root_ignored",
]

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ctxdignore")
"""Per-directory ignore files, lowest precedence first."""

GIT_INFO_EXCLUDE = ".git/info/exclude"
"""Where `info/exclude` sits for a root with its own `.git` folder (the watcher's event)."""
CTXDIGNORE = ".ctxdignore"

MAX_IGNORE_FILE = 100 << 20
"""An ignore file larger than this is not read (git's own limit, 100 MiB)."""


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """One compiled ignore file and the directory its patterns are relative to."""

    base: str
    """Repo-relative directory (`""` = root)."""
    source: str
    """Repo-relative path of the file, for `Skipped.detail`."""
    spec: GitIgnoreSpec
    lead: str = ""
    """Put before a path relative to `base` to match it: a file above the root (its
    folder's path down to the root, `a/b/`)."""
    git: bool = True
    """A file git reads (`.gitignore`, `info/exclude`): a path git tracks is never
    ignored by it. `.ctxdignore` is ctxd's own and refuses tracked files too."""
    label: str | None = None
    """The rule to report instead of `source: pattern` (`excluded_folder`)."""


def load_ignore_file(path: str, base: str, source: str, lead: str = "") -> IgnoreFile | None:
    """Read and compile one ignore file; None when unreadable or without a rule.

    `path` is symlink-free: the file is opened through `safeopen.open_verified`, so a
    symlinked ignore file, or one reached through a folder swapped for a link, counts as
    absent (git too leaves symlinked `.gitignore` files alone), as does anything but a
    regular file (a FIFO would block) or a file over `MAX_IGNORE_FILE`. Lines pathspec
    refuses (e.g. a lone `!`) are dropped, as git drops them.
    """
    lines = _read_lines(path)
    if lines is None:
        return None
    try:
        spec = compile_ignore(lines)
    except ValueError:
        spec = compile_ignore([line for line in lines if _valid_ignore_line(line)])
    if not any(p.include is not None for p in spec.patterns):
        return None
    return IgnoreFile(base, source, spec, lead, git=not source.endswith(CTXDIGNORE))


def compile_ignore(lines: list[str]) -> GitIgnoreSpec:
    """`GitIgnoreSpec.from_lines(lines)` on pathspec's RE2 backend, in parts where RE2
    cannot take every line in one set (a `.gitignore` of a few thousand lines overflows
    its memory budget: "failed to compile Set", which made the repository unindexable):
    runs of `IGNORE_PART` lines (halved again while one fails; a single line RE2 refuses
    is matched by pathspec's `simple` backend), the last part with an opinion deciding,
    as for consecutive ignore files (`ignore_hit`). Never an error of RE2's.

    Raises:
        ValueError: a line pathspec refuses (the caller drops those).
    """
    try:
        return GitIgnoreSpec.from_lines(lines)
    except re2.error as exc:
        log.info("%d ignore lines are too many for one RE2 set (%s); compiling them in parts",
                 len(lines), exc)
    parts = _parts(lines, IGNORE_PART)
    patterns = [pattern for part in parts for pattern in part.patterns]
    return GitIgnoreSpec(patterns, _test_backend_factory=lambda _p: _InParts(parts))


IGNORE_PART = 1000
"""Ignore lines per RE2 set once a file has more than one set holds (1,500 of the
heaviest `dir/**/name*` lines compile; 3,000 fail)."""


def _parts(lines: list[str], size: int) -> list[GitIgnoreSpec]:
    out: list[GitIgnoreSpec] = []
    for start in range(0, len(lines), size):
        part = lines[start : start + size]
        try:
            out.append(GitIgnoreSpec.from_lines(part))
        except re2.error:
            if len(part) == 1:
                out.append(GitIgnoreSpec.from_lines(part, backend="simple"))
            else:
                out.extend(_parts(part, max(1, len(part) // 2)))
    return out


class _InParts(_Backend):
    """pathspec's matching backend over consecutive parts of one file's lines, each its
    own RE2 set: the last part with an opinion decides; the index is the file's."""

    def __init__(self, parts: list[GitIgnoreSpec]) -> None:
        self._parts: list[tuple[int, GitIgnoreSpec]] = []
        offset = 0
        for part in parts:
            self._parts.append((offset, part))
            offset += len(part.patterns)

    def match_file(self, file: str) -> tuple[bool | None, int | None]:
        for offset, part in reversed(self._parts):
            result = part.check_file(file)
            if result.include is not None:
                return result.include, None if result.index is None else result.index + offset
        return None, None


def _read_lines(path: str) -> list[str] | None:
    try:
        fd = open_verified(path, O_FILE)
    except OSError:
        return None
    with os.fdopen(fd, encoding="utf-8", errors="replace") as fh:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > MAX_IGNORE_FILE:
                log.warning("ignoring %s: %d bytes, over %d", path, st.st_size, MAX_IGNORE_FILE)
                return None
            return fh.read(MAX_IGNORE_FILE).splitlines()
        except OSError:
            return None


def _valid_ignore_line(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line], backend="simple")
    except ValueError:
        return False
    return True


def ignore_sources(rel_dir: str, *, ctxd_only: bool = False) -> tuple[str, ...]:
    """Repo-relative paths of the ignore files of one directory, lowest precedence first
    (only its `.ctxdignore` in a folder git ignores: `excluded_folder`)."""
    names = (CTXDIGNORE,) if ctxd_only else IGNORE_FILE_NAMES
    return tuple(f"{rel_dir}/{name}" if rel_dir else name for name in names)


OuterSource = tuple[str, str, str]
"""(real path, source label, lead) of an ignore file outside the root."""


def outer_sources(root_real: str) -> list[OuterSource]:
    """The ignore files git reads for `root_real` from outside it, lowest precedence first:
    `info/exclude` of the repository, then the `.gitignore` of each folder from the
    working tree's top down to the root's parent. Empty outside a git working tree."""
    layout = git_layout(root_real)
    if layout is None:
        return []
    parts = layout.prefix.split("/") if layout.prefix else []
    found = [(layout.exclude_file, os.path.relpath(layout.exclude_file, root_real),
              "/".join(parts) + "/" if parts else "")]
    for depth in range(len(parts)):
        folder = os.path.join(layout.top, *parts[:depth])
        lead = "/".join(parts[depth:]) + "/"
        path = os.path.join(folder, ".gitignore")
        found.append((path, os.path.relpath(path, root_real), lead))
    return found


def outer_ignores(root_real: str) -> tuple[IgnoreFile, ...]:
    """`outer_sources` loaded (those absent or without a rule left out), none of them when
    they ignore the root itself (`unless_root_ignored`)."""
    loaded = [load_ignore_file(path, "", label, lead)
              for path, label, lead in outer_sources(root_real)]
    return unless_root_ignored(tuple(ig for ig in loaded if ig is not None))


def unless_root_ignored(files: tuple[IgnoreFile, ...]) -> tuple[IgnoreFile, ...]:
    """`files` without the ones from outside the root (`lead` set) when those ignore the
    root itself (or a folder above it): a folder its enclosing repository ignores (a clone
    under an ignored `vendor/`, a corpus in a git-ignored `.corpus/`) is walked as a folder
    of its own when it is the root asked for, as ripgrep searches a path it is given;
    git's rule, "nothing under an ignored folder", would leave nothing to index."""
    outer = [ig for ig in files if ig.lead]
    for ig in reversed(outer):
        result = ig.spec.check_file(ig.lead)  # the root, as a folder (`lead` ends in "/")
        if result.include is not None:
            if not result.include:
                return files
            log.info("the root is ignored by %s; its enclosing repository's ignore files "
                     "do not apply to it", ig.source)
            return tuple(ig for ig in files if not ig.lead)
    return files


def ignore_hit(
    chain: tuple[IgnoreFile, ...], rel: str, is_dir: bool
) -> tuple[IgnoreFile, str] | None:
    """The file and rule (`source: pattern`) that ignore `rel`, or None.

    The deepest file with an opinion decides (a negation is an opinion), which is git's
    "last matching pattern wins" over the files concatenated from the root down.
    """
    for ig in reversed(chain):
        sub = ig.lead + (rel[len(ig.base) + 1 :] if ig.base else rel)
        result = ig.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            if not result.include or result.index is None:
                return None
            rule = ig.label or f"{ig.source}: {ig.spec.patterns[result.index].pattern!s}"
            return ig, rule
    return None


def ignored_by(chain: tuple[IgnoreFile, ...], rel: str, is_dir: bool) -> str | None:
    """The rule that ignores `rel`, as `source: pattern`, or None (`ignore_hit`)."""
    hit = ignore_hit(chain, rel, is_dir)
    return None if hit is None else hit[1]


_EVERYTHING = GitIgnoreSpec.from_lines(["*"])


def excluded_folder(rel: str, rule: str) -> IgnoreFile:
    """The rule for what lies in a folder git ignores (by `rule`) but that the walk enters
    because git tracks files in it: everything under it is ignored, by `rule`, unless git
    tracks it. Git never looks into an ignored folder, so its own `.gitignore` files
    cannot bring anything back."""
    return IgnoreFile(rel, rule, _EVERYTHING, git=True, label=rule)


_IgnoreKey = tuple[tuple[int, int, int] | None, ...]
"""The `(mtime_ns, size, inode)` of each of a folder's ignore sources (None: absent)."""


class IgnoreCache:
    """Each folder's ignore files, kept between calls, for one repository root.

    A folder's entry is re-read when the `(mtime_ns, size, inode)` of one of its ignore
    sources changes, checked on every call (one `stat` per source); `clear()` drops
    everything, for an edit that keeps all three (same size within one timestamp tick).
    The root's entry holds `outer_sources` too (found once, at construction).
    """

    def __init__(self, root_real: str) -> None:
        self._root_real = root_real
        self._outer = outer_sources(root_real)
        self._entries: dict[tuple[str, bool], tuple[_IgnoreKey, tuple[IgnoreFile, ...]]] = {}

    def clear(self) -> None:
        """Forget every cached ignore file; the next call re-reads them."""
        self._entries.clear()

    def dir_ignores(self, rel_dir: str, *, ctxd_only: bool = False) -> tuple[IgnoreFile, ...]:
        """The compiled ignore files of the folder `rel_dir` (`""` = root), current on disk
        (`ctxd_only`: just its `.ctxdignore`, for a folder git ignores)."""
        sources = ignore_sources(rel_dir, ctxd_only=ctxd_only)
        # The folder may be reached through a symlink (the walk follows those that stay
        # inside): read its files at its real path, as the walk does.
        try:
            real_dir = os.path.realpath(os.path.join(self._root_real, rel_dir))
        except OSError:  # a link on the way changed while it was resolved
            return ()
        if not is_inside(self._root_real, real_dir):
            return ()
        start = len(rel_dir) + 1 if rel_dir else 0
        specs = [(os.path.join(real_dir, s[start:]), s, "") for s in sources]
        if not rel_dir:
            specs = self._outer + specs
        key = tuple(_file_key(path) for path, _source, _lead in specs)
        cached = self._entries.get((rel_dir, ctxd_only))
        if cached is not None and cached[0] == key:
            return cached[1]
        loaded = [
            load_ignore_file(path, rel_dir, source, lead)
            for (path, source, lead), k in zip(specs, key, strict=True)
            if k is not None
        ]
        files = tuple(ig for ig in loaded if ig is not None)
        if not rel_dir:
            files = unless_root_ignored(files)
        self._entries[(rel_dir, ctxd_only)] = (key, files)
        return files


def _file_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)
