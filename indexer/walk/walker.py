"""Walks a repository and yields the files eligible for indexing.

`walk(root, opts)` does a stat-only, depth-first walk (entries sorted by name within each
directory, so re-runs are identical) and yields a `FileEntry` for every admitted file and
a `Skipped` for every refused file or directory; it never raises for a bad file and never
reads file contents. Each directory is listed through a descriptor opened by
`indexer.walk.safeopen.open_verified`: a folder swapped for a symlink after its parent was
listed is refused, never listed in its place (files are read later, the same way, by
`indexer.walk.judge`; `read_text`, re-exported from `indexer.walk.reader`, reads one).
`validate_walk_options` / `validate_root` check the caller's input before any work;
`compile_policy(opts)` turns `WalkOptions` into the `indexer.walk.policy.Policy` that both
`walk` and `indexer.walk.filefilter.FileFilter` (the same policy, one path at a time, for
the file watcher) apply. Knows nothing of chunks, embeddings or storage.

Policy, first match wins (the same order in `walk` and `FileFilter`):

1. Built-in directory prunes, never descended into: `VCS_DIR_NAMES` (skipped silently,
   no `Skipped`: every repository has one), `PRUNED_DIR_NAMES` and any directory holding
   a `VENV_MARKERS` entry or ctxd's `HOME_MARKER` (one `Skipped(dir, IGNORED)` for the
   directory; a root that is an index home yields one `Skipped(".")` and nothing else).
2. Ignore files (`use_gitignore`): `.gitignore` and `.ctxdignore` in every directory, with
   gitignore semantics (`indexer.walk.ignore`; a nested file applies relative to its
   folder, a deeper file overrides a shallower one, `.ctxdignore` overrides `.gitignore`
   in the same folder, negation works), plus git's `info/exclude` (from the repository's
   git dir, wherever a `.git` file points) and, for a root below a working tree's top,
   the `.gitignore` files above it -> IGNORED. A path git tracks (`indexer.walk.gitindex`,
   read from the index file) is never refused by a rule of a file git reads: a folder git
   ignores but holds tracked files is entered for those alone (`.ctxdignore` still
   applies to them).
3. Built-in sensitive excludes (`SENSITIVE_FILE_PATTERNS` for files,
   `SENSITIVE_DIR_PATTERNS` for directories, case-insensitive) -> SENSITIVE, unless
   `sensitive_excludes=False` or the file, or a directory above it, matches
   `sensitive_allow` (an allowed directory lifts the rule for everything under it).
4. User excludes (win over includes) -> EXCLUDED; they prune directories too.
5. User includes (empty = all; files only) -> NOT_INCLUDED.
6. Symlinks (after 1-5, judged by the target's type): dangling -> NOT_REGULAR, a loop in
   the link chain or a directory that is one of its own ancestors (by `(st_dev, st_ino)`)
   -> SYMLINK_CYCLE, resolving outside the root -> OUTSIDE_ROOT, into a ctxd index home
   inside it (its `http-token`, its log) -> IGNORED, to another folder of the repository
   -> IGNORED (its files are walked at their own path: `linked_folder_verdict`; a link
   to a file is followed); sockets, FIFOs and devices -> NOT_REGULAR.
7. Size: larger than `max_file_size` -> TOO_LARGE (a file exactly at the limit is
   admitted; 0 = no limit of its own, but never more than `policy.READ_LIMIT`, 64 MiB),
   except that a file may reach `max_lexical_file_size` (16 MiB) if, once read, it proves
   to be kept for lexical search only (step 10).
8. At read time (`indexer.walk.judge`, through `indexer.walk.reader`): NUL byte or
   invalid UTF-8 -> BINARY; OSError, or a path that now leads through a symlink ->
   UNREADABLE.
9. Content (`indexer.walk.judge`): a private key, a well-known token format, password
   hashes, a password in a git or database URL, other tools' credentials
   (`indexer.walk.secrets`) -> SENSITIVE; source code and docs are kept with each secret
   masked instead; lifted like step 3.
10. Role (`indexer.walk.textclass`): a file over `max_file_size` that is not
   lexical-only -> TOO_LARGE.

Before all of these, a name that is not valid UTF-8 -> BAD_NAME (its path shown with
`\\xNN` escapes; a directory is pruned with it).

A pruned directory (steps 1-4, 6) yields one `Skipped` with the directory's path; the
files inside are not reported one by one.

Invariants: `FileEntry.abs_path` is a symlink-free real path inside the resolved root, and
every listing the walk yields from was of the directory at such a path (checked on the
open descriptor, not on the name);
`FileEntry.path` is the repo-relative POSIX path as seen in the repository (through
symlinks); each ignore file is read once per walk, each pattern compiled once.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.models import FileEntry, Skipped, SkipReason
from ctxd.indexer.walk.gitindex import tracked_paths
from ctxd.indexer.walk.gitrefs import git_layout, is_git_dir
from ctxd.indexer.walk.ignore import (
    IgnoreFile,
    excluded_folder,
    ignore_sources,
    load_ignore_file,
    outer_ignores,
)
from ctxd.indexer.walk.options import (
    DEFAULT_MAX_FILE_SIZE,
    DEFAULT_MAX_LEXICAL_FILE_SIZE,
    MAX_FILE_SIZE_LIMIT,
    MAX_LEXICAL_FILE_SIZE_LIMIT,
    WalkOptions,
)
from ctxd.indexer.walk.pathguard import is_inside
from ctxd.indexer.walk.patterns import compile_globs
from ctxd.indexer.walk.policy import (
    HOME_MARKER,
    VCS_DIR_NAMES,
    Policy,
    bad_name,
    home_verdict,
    linked_folder_verdict,
    refused_by_name,
    stat_error,
    venv_verdict,
)
from ctxd.indexer.walk.reader import read_text
from ctxd.indexer.walk.rootpin import pinned_root
from ctxd.indexer.walk.safeopen import O_DIR, PathChanged, open_verified

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "DEFAULT_MAX_LEXICAL_FILE_SIZE",
    "MAX_FILE_SIZE_LIMIT",
    "MAX_LEXICAL_FILE_SIZE_LIMIT",
    "WalkOptions",
    "compile_policy",
    "read_text",
    "validate_root",
    "validate_walk_options",
    "walk",
    "with_git",
]

# --------------------------------------------------------------------------- validation


def validate_walk_options(opts: WalkOptions) -> None:
    """Check every option before any work is done.

    Raises:
        ValidationError: an invalid glob (message `invalid include pattern` /
            `invalid exclude pattern` / `invalid sensitive_allow pattern`, details
            `{"field", "pattern", "reason"}`) or a bad `max_file_size` or
            `max_lexical_file_size` (details `{"field", "max_allowed", "provided"}`).
    """
    compile_policy(opts)


def _check_size(n: object, field: str = "max_file_size") -> int:
    """A valid size limit `n` for the option `field`, or a ValidationError naming it."""
    limit, default = ((MAX_FILE_SIZE_LIMIT, DEFAULT_MAX_FILE_SIZE) if field == "max_file_size"
                      else (MAX_LEXICAL_FILE_SIZE_LIMIT, DEFAULT_MAX_LEXICAL_FILE_SIZE))
    details = {"field": field, "max_allowed": limit, "provided": n}
    if not isinstance(n, int) or isinstance(n, bool):
        raise ValidationError(
            f"{field} must be an integer",
            hint=f"Give a number of bytes between 0 (no limit) and {limit}.",
            details=details,
        )
    if n > limit:
        raise ValidationError(
            f"{field} too large",
            hint=f"Use at most {limit} bytes ({limit >> 20} MiB); the default is {default}.",
            details=details,
        )
    if n < 0:
        raise ValidationError(
            f"{field} must be >= 0",
            hint=f"Give a number of bytes between 0 (no limit) and {limit}.",
            details=details,
        )
    return n


def validate_root(path: str | Path) -> Path:
    """Resolve a repository root given by a caller.

    Args:
        path: the directory to index (`~` is expanded, symlinks resolved).

    Returns:
        The resolved absolute path.

    Raises:
        ValidationError: `path does not exist` / `path is not a directory` (details
            `{"field": "path", "path": <as given>}`), an empty path, or a git dir (a
            bare repository, a `.git` folder or a folder inside one: nothing to index).
    """
    details = {"field": "path", "path": str(path)}
    if not str(path).strip():
        raise ValidationError(
            "path must not be empty",
            hint="Pass the repository's directory, e.g. `ctxd index .`.",
            details=details,
        )
    try:
        resolved = Path(path).expanduser().resolve(strict=True)
    except (OSError, RuntimeError):
        raise ValidationError(
            "path does not exist",
            hint=f"Check the spelling of {str(path)!r}, or pass an existing directory "
            "(e.g. `ctxd index .`).",
            details=details,
        ) from None
    if not resolved.is_dir():
        raise ValidationError(
            "path is not a directory",
            hint=f"{str(path)!r} is a file; pass the repository's top-level directory.",
            details=details,
        )
    if git_dir := next((p for p in (resolved, *resolved.parents) if is_git_dir(p)), None):
        raise ValidationError(
            "path is a git repository's own folder, not a working tree: "
            f"{git_dir} holds git's objects, refs and hooks, no files to index"
            + (" (a bare repository)" if git_dir.name != ".git" else ""),
            hint="Index a checkout of it instead: `git clone "
            f"{git_dir} checkout` (or `git worktree add`), then `ctxd index checkout`.",
            details={**details, "git_dir": str(git_dir)},
        )
    return resolved


def with_git(policy: Policy, root_real: str) -> Policy:
    """`policy` with what git tracks under `root_real` (`Policy.tracked`), when ignore
    files are in use and the root lies in a git working tree with a readable index."""
    if not policy.use_ignore_files:
        return policy
    layout = git_layout(root_real)
    tracked = None if layout is None else tracked_paths(layout)
    return policy if tracked is None else replace(policy, tracked=tracked)


def compile_policy(opts: WalkOptions) -> Policy:
    """Validate `opts` and compile them into the policy `walk` and `FileFilter` apply.

    Raises:
        ValidationError: as `validate_walk_options`.
    """
    size = _check_size(opts.max_file_size)
    lexical = _check_size(opts.max_lexical_file_size, "max_lexical_file_size")
    opts.text_rules()  # validates the lexical_only_patterns and embed_allow globs
    return Policy(
        include=compile_globs(opts.include_patterns, "include_patterns"),
        exclude=compile_globs(opts.exclude_patterns, "exclude_patterns"),
        allow=compile_globs(opts.sensitive_allow, "sensitive_allow"),
        sensitive=opts.sensitive_excludes,
        max_file_size=size,
        use_ignore_files=opts.use_gitignore,
        max_lexical_file_size=lexical,
    )


# --------------------------------------------------------------------------- walk


def walk(
    root: Path, opts: WalkOptions, *, pin: str | None = None
) -> Iterator[FileEntry | Skipped]:
    """Walk `root` and yield admitted files and refused entries, in a stable order.

    Options and root are validated eagerly (at call time); the walk itself is lazy.

    Args:
        root: the repository root (resolved here, unless `pin` is given).
        opts: the walk policy.
        pin: a stored repository's root identity (`indexer.walk.rootpin`; `""`: checked
            by path only): `root` is then its stored path, never resolved again, and a
            root that is no longer that folder is refused (`RootMoved`).

    Returns:
        An iterator of `FileEntry` (admitted, stat facts only) and `Skipped` (refused
        file or pruned directory, with reason and detail), depth-first, sorted by name.

    Raises:
        ValidationError: bad options or root (see `validate_walk_options`,
            `validate_root`). Nothing is raised for a bad file once the walk has begun.
    """
    policy = compile_policy(opts)
    root_real = str(validate_root(root)) if pin is None else pinned_root(str(root), pin)
    return _Walk(root_real, policy).run()


_DIR, _LINK, _FILE, _OTHER = "dir", "link", "file", "other"
"""What a directory listing says an entry is (without following a symlink)."""

_Entry = tuple[str, str]
"""(name, kind): one entry of a listing, taken while the directory was open."""


@dataclass(frozen=True, slots=True)
class _Frame:
    """A directory being listed: its identity, and the state its entries inherit."""

    rel: str
    real: str
    """Its symlink-free path: entries are opened under it (`safeopen` checks they are)."""
    key: tuple[int, int]
    chain: tuple[IgnoreFile, ...]
    allowed: bool
    entries: Iterator[_Entry]


class _Walk:
    """One walk's state: the policy, the root, and the ancestor directories' identities."""

    def __init__(self, root_real: str, policy: Policy) -> None:
        self.root_real = root_real
        self.policy = with_git(policy, root_real)
        self.ancestors: dict[tuple[int, int], str] = {}

    def run(self) -> Iterator[FileEntry | Skipped]:
        try:
            st = os.stat(self.root_real)
            entries = self._list(self.root_real)
        except OSError as exc:
            yield Skipped(".", SkipReason.UNREADABLE, str(exc))
            return
        names = {name for name, _kind in entries}
        if HOME_MARKER in names:  # the root is an index home itself: never read
            yield Skipped(".", *venv_verdict(names) or (SkipReason.IGNORED, ""))
            return
        chain = self._load_ignores(self.root_real, "", names)
        if self.policy.use_ignore_files:
            chain = outer_ignores(self.root_real) + chain
        root = _Frame("", self.root_real, (st.st_dev, st.st_ino), chain, False, iter(entries))
        stack = [root]
        self.ancestors[root.key] = "."
        while stack:
            frame = stack[-1]
            entry = next(frame.entries, None)
            if entry is None:
                stack.pop()
                del self.ancestors[frame.key]
                continue
            if entry[0] in VCS_DIR_NAMES:
                continue
            result = self._visit(frame, entry)
            if isinstance(result, _Frame):
                self.ancestors[result.key] = result.rel
                stack.append(result)
            else:
                yield result

    @staticmethod
    def _list(real: str) -> list[_Entry]:
        """The entries of the directory at the symlink-free path `real`, sorted by name.

        The directory is opened through `open_verified` and listed through that descriptor,
        so a folder swapped for a symlink since its parent was listed is refused (an
        OSError), never listed in its place; each entry's kind is read while it is open."""
        fd = open_verified(real, O_DIR)
        try:
            with os.scandir(fd) as it:
                found = [(e.name, _kind(e)) for e in it]
        finally:
            os.close(fd)
        found.sort()
        return found

    def _load_ignores(
        self, real: str, rel: str, names: set[str], ctxd_only: bool = False
    ) -> tuple[IgnoreFile, ...]:
        if not self.policy.use_ignore_files:
            return ()
        found = []
        for source in ignore_sources(rel, ctxd_only=ctxd_only):
            local = source[len(rel) + 1 :] if rel else source
            if local.partition("/")[0] not in names:
                continue
            ig = load_ignore_file(os.path.join(real, local), rel, source)
            if ig is not None:
                found.append(ig)
        return tuple(found)

    def _visit(self, frame: _Frame, entry: _Entry) -> FileEntry | Skipped | _Frame:
        name, kind = entry
        rel = f"{frame.rel}/{name}" if frame.rel else name
        if skipped := bad_name(rel):
            return skipped
        path = frame.real + "/" + name if frame.real != "/" else "/" + name
        try:
            if kind == _LINK:
                return self._visit_link(frame, path, rel, name)
            if kind == _DIR:
                if verdict := self.policy.dir_verdict(rel, name, frame.chain, frame.allowed):
                    return refused_by_name(rel, verdict)
                return self._enter(frame, rel, name, path, os.lstat(path))
            if verdict := self.policy.file_verdict(rel, name, frame.chain, frame.allowed):
                return refused_by_name(rel, verdict)
            if kind != _FILE:
                return Skipped(rel, SkipReason.NOT_REGULAR, "not a regular file")
            return self._file(rel, path, os.lstat(path))
        except PathChanged as exc:
            outside = not is_inside(self.root_real, exc.filename)
            return Skipped(rel, SkipReason.OUTSIDE_ROOT if outside else SkipReason.UNREADABLE,
                           f"refused: {exc.strerror}")
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                return Skipped(rel, SkipReason.UNREADABLE, "changed since it was listed (a "
                               f"symlink or a file took its place), refused: {exc}")
            return Skipped(rel, SkipReason.UNREADABLE, str(exc))

    def _visit_link(
        self, frame: _Frame, path: str, rel: str, name: str
    ) -> FileEntry | Skipped | _Frame:
        try:
            st = os.stat(path)
        except OSError as exc:
            return stat_error(rel, exc, path)
        is_dir = stat.S_ISDIR(st.st_mode)
        policy = self.policy
        verdict = (policy.dir_verdict if is_dir else policy.file_verdict)(
            rel, name, frame.chain, frame.allowed
        )
        if verdict:
            return refused_by_name(rel, verdict)
        real = os.path.realpath(path)
        if not is_inside(self.root_real, real):
            return Skipped(
                rel, SkipReason.OUTSIDE_ROOT, f"symlink resolves outside the repository: {real}"
            )
        if verdict := home_verdict(self.root_real, real):
            return Skipped(rel, *verdict)
        if is_dir:
            if (st.st_dev, st.st_ino) not in self.ancestors:  # (an ancestor: a cycle)
                return Skipped(rel, *linked_folder_verdict(self.root_real, real))
            return self._enter(frame, rel, name, real, st)
        if not stat.S_ISREG(st.st_mode):
            return Skipped(rel, SkipReason.NOT_REGULAR, "symlink to a non-regular file")
        return self._file(rel, real, st)

    def _enter(
        self, frame: _Frame, rel: str, name: str, real: str, st: os.stat_result
    ) -> Skipped | _Frame:
        key = (st.st_dev, st.st_ino)
        if (ancestor := self.ancestors.get(key)) is not None:
            return Skipped(rel, SkipReason.SYMLINK_CYCLE, f"points to its ancestor {ancestor!r}")
        entries = self._list(real)
        names = {entry_name for entry_name, _kind in entries}
        if verdict := venv_verdict(names):
            return Skipped(rel, *verdict)
        chain = frame.chain
        if kept := self.policy.kept_by_git(chain, rel):  # ignored by git, holds tracked files
            chain += (excluded_folder(rel, kept),)
        chain += self._load_ignores(real, rel, names, ctxd_only=bool(kept))
        allowed = self.policy.dir_allowed(rel, name, frame.allowed)
        return _Frame(rel, real, key, chain, allowed, iter(entries))

    def _file(self, rel: str, real: str, st: os.stat_result) -> FileEntry | Skipped:
        if verdict := self.policy.size_verdict(st.st_size):
            return Skipped(rel, *verdict)
        return FileEntry(rel, real, st.st_size, st.st_mtime_ns)


def _kind(entry: os.DirEntry[str]) -> str:
    """An entry's kind, from the listing's file type (a `stat` through the listing's
    descriptor where the file system gives none): call it while the directory is open."""
    if entry.is_file(follow_symlinks=False):
        return _FILE
    if entry.is_dir(follow_symlinks=False):
        return _DIR
    return _LINK if entry.is_symlink() else _OTHER
