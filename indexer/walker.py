"""Walks a repository and yields the files eligible for indexing.

`walk(root, opts)` does a stat-only, depth-first walk (entries sorted by name within each
directory, so re-runs are identical) and yields a `FileEntry` for every admitted file and
a `Skipped` for every refused file or directory; it never raises for a bad file and never
reads file contents. `read_text(entry)` reads one admitted file (binary check, UTF-8).
`FileFilter` answers the same policy for one path at a time, for the file watcher.
`validate_walk_options` / `validate_root` check the caller's input before any work.

Callers: the indexing pipeline (walk + read_text), the watcher (FileFilter), the config
loader (validate_walk_options). Calls: `indexer.patterns` (globs), `indexer.pathguard`
(root containment), `pathspec` (gitignore semantics). Knows nothing of chunks,
embeddings or storage.

Policy, first match wins (the same order in `walk` and `FileFilter`):

1. Built-in directory prunes, never descended into: `VCS_DIR_NAMES` (skipped silently,
   no `Skipped`: every repository has one), `PRUNED_DIR_NAMES` and any directory holding
   a `VENV_MARKERS` entry (one `Skipped(dir, IGNORED)` for the directory).
2. Ignore files (`use_gitignore`): `.gitignore` and `.ctxdignore` in every directory, with
   gitignore semantics (`pathspec.GitIgnoreSpec`; a nested file applies relative to its
   folder, a deeper file overrides a shallower one, `.ctxdignore` overrides `.gitignore`
   in the same folder, negation works) plus the root's `.git/info/exclude` -> IGNORED.
3. Built-in sensitive excludes (`SENSITIVE_FILE_PATTERNS` for files,
   `SENSITIVE_DIR_PATTERNS` for directories, case-insensitive) -> SENSITIVE, unless
   `sensitive_excludes=False` or the file, or a directory above it, matches
   `sensitive_allow` (an allowed directory lifts the rule for everything under it).
4. User excludes (win over includes) -> EXCLUDED; they prune directories too.
5. User includes (empty = all; files only) -> NOT_INCLUDED.
6. Symlinks (after 1-5, judged by the target's type): dangling -> NOT_REGULAR, a loop in
   the link chain or a directory that is one of its own ancestors (by `(st_dev, st_ino)`)
   -> SYMLINK_CYCLE, resolving outside the root -> OUTSIDE_ROOT; sockets, FIFOs and
   devices -> NOT_REGULAR.
7. Size: larger than `max_file_size` -> TOO_LARGE (a file exactly at the limit is
   admitted; 0 = no limit).
8. At read time (`read_text`): NUL byte or invalid UTF-8 -> BINARY; OSError -> UNREADABLE.

A pruned directory (steps 1-4, 6) yields one `Skipped` with the directory's path; the
files inside are not reported one by one.

Invariants: `FileEntry.abs_path` is a symlink-free real path inside the resolved root;
`FileEntry.path` is the repo-relative POSIX path as seen in the repository (through
symlinks); each ignore file is read once per walk, each pattern compiled once.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path

from pathspec import GitIgnoreSpec

from indexer.errors import ValidationError
from indexer.models import FileEntry, Skipped, SkipReason
from indexer.pathguard import is_inside
from indexer.patterns import GlobMatcher, compile_globs

__all__ = [
    "DEFAULT_MAX_FILE_SIZE",
    "IGNORE_FILE_NAMES",
    "MAX_FILE_SIZE_LIMIT",
    "PRUNED_DIR_NAMES",
    "SENSITIVE_DIR_PATTERNS",
    "SENSITIVE_FILE_PATTERNS",
    "VCS_DIR_NAMES",
    "VENV_MARKERS",
    "FileFilter",
    "WalkOptions",
    "read_text",
    "too_large",
    "validate_root",
    "validate_walk_options",
    "walk",
]

MAX_FILE_SIZE_LIMIT = 10_485_760
"""The largest `max_file_size` a caller may ask for (10 MiB, the contract's maximum)."""
DEFAULT_MAX_FILE_SIZE = 1_048_576
"""1 MiB: most source files are far smaller; larger ones are mostly generated."""

VCS_DIR_NAMES = frozenset({".git", ".hg", ".svn", ".bzr", "_darcs", ".jj"})
"""Version-control metadata: never descended into, never reported (also a `.git` file)."""

PRUNED_DIR_NAMES = frozenset(
    {
        # dependencies and virtualenvs
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        ".direnv",
        ".eggs",
        # tool caches: machine-written, never source
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".ipynb_checkpoints",
        ".tox",
        ".nox",
        ".gradle",
        ".terraform",
        ".next",
        ".nuxt",
        ".parcel-cache",
        ".sass-cache",
    }
)
"""Directories pruned by name at any depth, reported once as `Skipped(dir, IGNORED)`.

Only names that are never hand-written source. `target/`, `build/`, `dist/` and `out/`
are left out on purpose: they are common real package or source names, and the
projects that generate them list them in `.gitignore` anyway.
"""

VENV_MARKERS = frozenset({"pyvenv.cfg", "conda-meta"})
"""A directory containing one of these is a Python virtualenv or conda env: pruned."""

SENSITIVE_FILE_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.env",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.ppk",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.backup",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "*credentials*",
    "*secret*",
    ".netrc",
    "_netrc",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".htpasswd",
)
"""Built-in sensitive file globs (case-insensitive), matched like user globs."""

SENSITIVE_DIR_PATTERNS: tuple[str, ...] = (".aws", ".ssh", ".gnupg", ".kube", ".azure")
"""Built-in sensitive directories (case-insensitive): pruned with one `Skipped`."""

IGNORE_FILE_NAMES: tuple[str, ...] = (".gitignore", ".ctxdignore")
"""Per-directory ignore files, lowest precedence first."""

_GIT_INFO_EXCLUDE = ".git/info/exclude"

_SENSITIVE_FILES = compile_globs(SENSITIVE_FILE_PATTERNS, "sensitive", ignore_case=True)
_SENSITIVE_DIRS = compile_globs(SENSITIVE_DIR_PATTERNS, "sensitive", ignore_case=True)
_O_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_O_READ |= getattr(os, "O_CLOEXEC", 0)

_Verdict = tuple[SkipReason, str]
"""A refusal: the reason and a human-readable detail."""


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """What to walk: globs, size limit, and which built-in rules apply."""

    include_patterns: tuple[str, ...] = ()
    """Globs; empty = every file. Files only."""
    exclude_patterns: tuple[str, ...] = ()
    """Globs; win over includes; a matching directory is pruned."""
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    """Bytes; 0 = no limit; at most `MAX_FILE_SIZE_LIMIT`."""
    sensitive_excludes: bool = True
    """Apply `SENSITIVE_FILE_PATTERNS` / `SENSITIVE_DIR_PATTERNS`."""
    sensitive_allow: tuple[str, ...] = ()
    """Globs that lift the sensitive excludes for the files they match, and for whole
    directories they match (everything under them), like excludes prune directories."""
    use_gitignore: bool = True
    """Honour `.gitignore` (nested), `.ctxdignore` and `.git/info/exclude`."""


# --------------------------------------------------------------------------- validation


def validate_walk_options(opts: WalkOptions) -> None:
    """Check every option before any work is done.

    Raises:
        ValidationError: an invalid glob (message `invalid include pattern` /
            `invalid exclude pattern` / `invalid sensitive_allow pattern`, details
            `{"field", "pattern", "reason"}`) or a bad `max_file_size` (details
            `{"field": "max_file_size", "max_allowed", "provided"}`).
    """
    _Policy.build(opts)


def _check_max_file_size(n: object) -> int:
    details = {"field": "max_file_size", "max_allowed": MAX_FILE_SIZE_LIMIT, "provided": n}
    if not isinstance(n, int) or isinstance(n, bool):
        raise ValidationError(
            "max_file_size must be an integer",
            hint=f"Give a number of bytes between 0 (no limit) and {MAX_FILE_SIZE_LIMIT}.",
            details=details,
        )
    if n > MAX_FILE_SIZE_LIMIT:
        raise ValidationError(
            "max_file_size too large",
            hint=f"Use at most {MAX_FILE_SIZE_LIMIT} bytes (10 MiB); the default is "
            f"{DEFAULT_MAX_FILE_SIZE}.",
            details=details,
        )
    if n < 0:
        raise ValidationError(
            "max_file_size must be >= 0",
            hint=f"Give a number of bytes between 0 (no limit) and {MAX_FILE_SIZE_LIMIT}.",
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
            `{"field": "path", "path": <as given>}`), or an empty path.
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
    return resolved


def too_large(size: int, limit: int) -> bool:
    """Whether a file of `size` bytes exceeds `limit` (0 = no limit; equal is allowed)."""
    return 0 < limit < size


# --------------------------------------------------------------------------- ignore files


@dataclass(frozen=True, slots=True)
class _IgnoreFile:
    """One compiled ignore file and the directory its patterns are relative to."""

    base: str
    """Repo-relative directory (`""` = root)."""
    source: str
    """Repo-relative path of the file, for `Skipped.detail`."""
    spec: GitIgnoreSpec


def _load_ignore_file(path: str, base: str, source: str) -> _IgnoreFile | None:
    """Read and compile one ignore file; None when unreadable or without a rule.

    Lines pathspec refuses (e.g. a lone `!`) are dropped, as git drops them.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    try:
        spec = GitIgnoreSpec.from_lines(lines)
    except ValueError:
        spec = GitIgnoreSpec.from_lines([line for line in lines if _valid_ignore_line(line)])
    if not any(p.include is not None for p in spec.patterns):
        return None
    return _IgnoreFile(base, source, spec)


def _valid_ignore_line(line: str) -> bool:
    try:
        GitIgnoreSpec.from_lines([line])
    except ValueError:
        return False
    return True


def _ignore_sources(rel_dir: str) -> tuple[str, ...]:
    """Repo-relative paths of the ignore files of one directory, lowest precedence first."""
    if not rel_dir:
        return (_GIT_INFO_EXCLUDE, *IGNORE_FILE_NAMES)
    return tuple(f"{rel_dir}/{name}" for name in IGNORE_FILE_NAMES)


def _ignored_by(chain: tuple[_IgnoreFile, ...], rel: str, is_dir: bool) -> str | None:
    """The rule that ignores `rel`, as `source: pattern`, or None.

    The deepest file with an opinion decides (a negation is an opinion), which is git's
    "last matching pattern wins" over the files concatenated from the root down.
    """
    for ig in reversed(chain):
        sub = rel[len(ig.base) + 1 :] if ig.base else rel
        result = ig.spec.check_file(sub + "/" if is_dir else sub)
        if result.include is not None:
            if not result.include or result.index is None:
                return None
            return f"{ig.source}: {ig.spec.patterns[result.index].pattern!s}"
    return None


# --------------------------------------------------------------------------- policy


@dataclass(frozen=True, slots=True)
class _Policy:
    """The compiled name-based policy (steps 1-5 and 7); pure decisions, no I/O."""

    include: GlobMatcher
    exclude: GlobMatcher
    allow: GlobMatcher
    sensitive: bool
    max_file_size: int
    use_ignore_files: bool

    @classmethod
    def build(cls, opts: WalkOptions) -> _Policy:
        size = _check_max_file_size(opts.max_file_size)
        return cls(
            include=compile_globs(opts.include_patterns, "include_patterns"),
            exclude=compile_globs(opts.exclude_patterns, "exclude_patterns"),
            allow=compile_globs(opts.sensitive_allow, "sensitive_allow"),
            sensitive=opts.sensitive_excludes,
            max_file_size=size,
            use_ignore_files=opts.use_gitignore,
        )

    def dir_verdict(
        self, rel: str, name: str, chain: tuple[_IgnoreFile, ...], allowed: bool
    ) -> _Verdict | None:
        """Why the directory `rel` is pruned (steps 1-4, by name), or None.

        `allowed`: a directory above matched `sensitive_allow`.
        """
        if name in VCS_DIR_NAMES:
            return SkipReason.IGNORED, "version-control directory"
        if name in PRUNED_DIR_NAMES:
            return SkipReason.IGNORED, f"built-in prune: {name}"
        if chain and (rule := _ignored_by(chain, rel, True)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _SENSITIVE_DIRS.which_dir(rel, name))
            and not self.dir_allowed(rel, name, allowed)
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
        if pat := self.exclude.which_dir(rel, name):
            return SkipReason.EXCLUDED, f"exclude pattern {pat!r}"
        return None

    def dir_allowed(self, rel: str, name: str, allowed: bool) -> bool:
        """Whether `sensitive_allow` covers the directory `rel` (or one above it)."""
        return allowed or self.allow.match_dir(rel, name)

    def file_verdict(
        self, rel: str, name: str, chain: tuple[_IgnoreFile, ...], allowed: bool
    ) -> _Verdict | None:
        """Why the file `rel` is refused by name (steps 2-5), or None."""
        if name in VCS_DIR_NAMES:
            return SkipReason.IGNORED, "version-control metadata"
        if chain and (rule := _ignored_by(chain, rel, False)):
            return SkipReason.IGNORED, rule
        if (
            self.sensitive
            and (pat := _SENSITIVE_FILES.which_file(rel, name))
            and not (allowed or self.allow.match_file(rel, name))
        ):
            return SkipReason.SENSITIVE, f"sensitive pattern {pat!r}"
        if pat := self.exclude.which_file(rel, name):
            return SkipReason.EXCLUDED, f"exclude pattern {pat!r}"
        if self.include and not self.include.match_file(rel, name):
            return SkipReason.NOT_INCLUDED, "matches no include pattern"
        return None

    def size_verdict(self, size: int) -> _Verdict | None:
        if too_large(size, self.max_file_size):
            return SkipReason.TOO_LARGE, f"{size} bytes > max_file_size {self.max_file_size}"
        return None


def _venv_verdict(names: frozenset[str] | set[str]) -> _Verdict | None:
    if found := VENV_MARKERS & names:
        return SkipReason.IGNORED, f"built-in prune: virtualenv ({min(found)})"
    return None


def _stat_error(rel: str, exc: OSError, path: str) -> Skipped:
    """A `Skipped` for a path whose (followed) stat failed."""
    if exc.errno == errno.ELOOP:
        return Skipped(rel, SkipReason.SYMLINK_CYCLE, "symlink loop")
    if exc.errno in (errno.ENOENT, errno.ENOTDIR) and os.path.islink(path):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return Skipped(rel, SkipReason.NOT_REGULAR, f"dangling symlink -> {target}")
    return Skipped(rel, SkipReason.UNREADABLE, str(exc))


# --------------------------------------------------------------------------- walk


def walk(root: Path, opts: WalkOptions) -> Iterator[FileEntry | Skipped]:
    """Walk `root` and yield admitted files and refused entries, in a stable order.

    Options and root are validated eagerly (at call time); the walk itself is lazy.

    Args:
        root: the repository root (resolved here).
        opts: the walk policy.

    Returns:
        An iterator of `FileEntry` (admitted, stat facts only) and `Skipped` (refused
        file or pruned directory, with reason and detail), depth-first, sorted by name.

    Raises:
        ValidationError: bad options or root (see `validate_walk_options`,
            `validate_root`). Nothing is raised for a bad file once the walk has begun.
    """
    policy = _Policy.build(opts)
    root_real = str(validate_root(root))
    return _Walk(root_real, policy).run()


@dataclass(frozen=True, slots=True)
class _Frame:
    """A directory being listed: its identity, and the state its entries inherit."""

    rel: str
    key: tuple[int, int]
    chain: tuple[_IgnoreFile, ...]
    allowed: bool
    entries: Iterator[os.DirEntry[str]]


class _Walk:
    """One walk's state: the policy, the root, and the ancestor directories' identities."""

    def __init__(self, root_real: str, policy: _Policy) -> None:
        self.root_real = root_real
        self.policy = policy
        self.ancestors: dict[tuple[int, int], str] = {}

    def run(self) -> Iterator[FileEntry | Skipped]:
        try:
            st = os.stat(self.root_real)
            entries = self._list(self.root_real)
        except OSError as exc:
            yield Skipped(".", SkipReason.UNREADABLE, str(exc))
            return
        chain = self._load_ignores(self.root_real, "", {e.name for e in entries})
        root = _Frame("", (st.st_dev, st.st_ino), chain, False, iter(entries))
        stack = [root]
        self.ancestors[root.key] = "."
        while stack:
            frame = stack[-1]
            entry = next(frame.entries, None)
            if entry is None:
                stack.pop()
                del self.ancestors[frame.key]
                continue
            if entry.name in VCS_DIR_NAMES:
                continue
            result = self._visit(frame, entry)
            if isinstance(result, _Frame):
                self.ancestors[result.key] = result.rel
                stack.append(result)
            else:
                yield result

    @staticmethod
    def _list(path: str) -> list[os.DirEntry[str]]:
        with os.scandir(path) as it:
            return sorted(it, key=attrgetter("name"))

    def _load_ignores(self, real: str, rel: str, names: set[str]) -> tuple[_IgnoreFile, ...]:
        if not self.policy.use_ignore_files:
            return ()
        found = []
        for source in _ignore_sources(rel):
            local = source[len(rel) + 1 :] if rel else source
            if local.partition("/")[0] not in names:
                continue
            ig = _load_ignore_file(os.path.join(real, local), rel, source)
            if ig is not None:
                found.append(ig)
        return tuple(found)

    def _visit(self, frame: _Frame, entry: os.DirEntry[str]) -> FileEntry | Skipped | _Frame:
        name = entry.name
        rel = f"{frame.rel}/{name}" if frame.rel else name
        try:
            if entry.is_symlink():
                return self._visit_link(frame, entry.path, rel, name)
            if entry.is_dir(follow_symlinks=False):
                if verdict := self.policy.dir_verdict(rel, name, frame.chain, frame.allowed):
                    return Skipped(rel, *verdict)
                return self._enter(frame, rel, name, entry.path, entry.stat(follow_symlinks=False))
            if verdict := self.policy.file_verdict(rel, name, frame.chain, frame.allowed):
                return Skipped(rel, *verdict)
            if not entry.is_file(follow_symlinks=False):
                return Skipped(rel, SkipReason.NOT_REGULAR, "not a regular file")
            return self._file(rel, entry.path, entry.stat(follow_symlinks=False))
        except OSError as exc:
            return Skipped(rel, SkipReason.UNREADABLE, str(exc))

    def _visit_link(
        self, frame: _Frame, path: str, rel: str, name: str
    ) -> FileEntry | Skipped | _Frame:
        try:
            st = os.stat(path)
        except OSError as exc:
            return _stat_error(rel, exc, path)
        is_dir = stat.S_ISDIR(st.st_mode)
        policy = self.policy
        verdict = (policy.dir_verdict if is_dir else policy.file_verdict)(
            rel, name, frame.chain, frame.allowed
        )
        if verdict:
            return Skipped(rel, *verdict)
        real = os.path.realpath(path)
        if not is_inside(self.root_real, real):
            return Skipped(
                rel, SkipReason.OUTSIDE_ROOT, f"symlink resolves outside the repository: {real}"
            )
        if is_dir:
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
        names = {e.name for e in entries}
        if verdict := _venv_verdict(names):
            return Skipped(rel, *verdict)
        chain = frame.chain + self._load_ignores(real, rel, names)
        allowed = self.policy.dir_allowed(rel, name, frame.allowed)
        return _Frame(rel, key, chain, allowed, iter(entries))

    def _file(self, rel: str, real: str, st: os.stat_result) -> FileEntry | Skipped:
        if verdict := self.policy.size_verdict(st.st_size):
            return Skipped(rel, *verdict)
        return FileEntry(rel, real, st.st_size, st.st_mtime_ns)


# --------------------------------------------------------------------------- read


def read_text(entry: FileEntry, *, max_size: int = 0) -> str | Skipped:
    """Read an admitted file as text.

    The file is opened without following a final symlink (`abs_path` is already
    resolved, so a link appearing there since the walk is refused) and without blocking.

    Args:
        entry: a file from `walk` or `FileFilter.entry`.
        max_size: re-check the size limit on the bytes actually read (0 = no check), for
            a file that grew since it was stat'ed.

    Returns:
        The text (UTF-8, a leading BOM stripped, `\\r\\n` turned into `\\n`), or a
        `Skipped`: BINARY (NUL byte, invalid UTF-8), TOO_LARGE, NOT_REGULAR, or UNREADABLE
        (any OSError: permissions, vanished, replaced by a symlink).
    """
    try:
        fd = os.open(entry.abs_path, _O_READ)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return Skipped(entry.path, SkipReason.NOT_REGULAR, "not a regular file")
            data = fh.read(max_size + 1) if max_size > 0 else fh.read()
    except OSError as exc:
        detail = str(exc)
        if exc.errno == errno.ELOOP:
            detail = f"became a symlink since the walk, refused: {exc}"
        return Skipped(entry.path, SkipReason.UNREADABLE, detail)
    if too_large(len(data), max_size):
        return Skipped(entry.path, SkipReason.TOO_LARGE, f"grew past max_file_size {max_size}")
    if b"\x00" in data:
        return Skipped(entry.path, SkipReason.BINARY, "contains NUL bytes")
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Skipped(entry.path, SkipReason.BINARY, f"not valid UTF-8 (byte {exc.start})")
    return text.replace("\r\n", "\n")


# --------------------------------------------------------------------------- one path


_IgnoreKey = tuple[tuple[int, int, int] | None, ...]


class FileFilter:
    """The walk's policy for one path at a time, for the file watcher.

    `check` applies the name-based steps (prunes, ignore files, sensitive, exclude,
    include) to the path and to every directory above it, exactly as `walk` would have
    met them; `entry` adds the filesystem steps (symlink containment, file type, size)
    and returns what `walk` would have yielded for that file.

    Ignore files are cached per directory and re-read when their `(mtime_ns, size,
    inode)` changes, checked on every call (two `stat`s per directory level); `reload()`
    drops the cache, for an edit that keeps all three (same size within one timestamp
    tick).
    """

    def __init__(self, root: Path, opts: WalkOptions) -> None:
        """Raises ValidationError for bad options or root, like `walk`."""
        self._policy = _Policy.build(opts)
        self._root_real = str(validate_root(root))
        self._ignores: dict[str, tuple[_IgnoreKey, tuple[_IgnoreFile, ...]]] = {}

    @property
    def root(self) -> Path:
        """The resolved repository root."""
        return Path(self._root_real)

    def reload(self) -> None:
        """Forget every cached ignore file; the next call re-reads them."""
        self._ignores.clear()

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
        rel = _normalize_rel(rel_path)
        if rel is None:
            return Skipped(rel_path, SkipReason.OUTSIDE_ROOT, "absolute path or '..' segment")
        verdict = self._verdict(rel, is_dir)
        return None if verdict is None else Skipped(rel, *verdict)

    def entry(self, rel_path: str) -> FileEntry | Skipped:
        """What `walk` would yield for the file `rel_path` (a directory is NOT_REGULAR).

        A path that does not exist (deleted) is `Skipped(UNREADABLE)`.
        """
        rel = _normalize_rel(rel_path)
        if rel is None:
            return Skipped(rel_path, SkipReason.OUTSIDE_ROOT, "absolute path or '..' segment")
        if not rel:
            return Skipped(".", SkipReason.NOT_REGULAR, "the repository root is a directory")
        path = os.path.join(self._root_real, rel)
        try:
            st = os.stat(path)
        except OSError as exc:
            return _stat_error(rel, exc, path)
        is_dir = stat.S_ISDIR(st.st_mode)
        if verdict := self._verdict(rel, is_dir):
            return Skipped(rel, *verdict)
        real = os.path.realpath(path)
        if not is_inside(self._root_real, real):
            return Skipped(
                rel, SkipReason.OUTSIDE_ROOT, f"symlink resolves outside the repository: {real}"
            )
        if not stat.S_ISREG(st.st_mode):
            return Skipped(rel, SkipReason.NOT_REGULAR, "not a regular file")
        if verdict := self._policy.size_verdict(st.st_size):
            return Skipped(rel, *verdict)
        return FileEntry(rel, real, st.st_size, st.st_mtime_ns)

    def _verdict(self, rel: str, is_dir: bool) -> _Verdict | None:
        if not rel:
            return None
        policy = self._policy
        parts = rel.split("/")
        chain = self._dir_ignores("")
        allowed = False
        last = len(parts) - 1
        for depth, name in enumerate(parts):
            drel = "/".join(parts[: depth + 1])
            if depth == last and not is_dir:
                return policy.file_verdict(drel, name, chain, allowed)
            if verdict := policy.dir_verdict(drel, name, chain, allowed) or self._venv(drel):
                return verdict
            if depth < last:
                allowed = policy.dir_allowed(drel, name, allowed)
                chain += self._dir_ignores(drel)
        return None

    def _venv(self, rel_dir: str) -> _Verdict | None:
        base = os.path.join(self._root_real, rel_dir)
        return _venv_verdict({m for m in VENV_MARKERS if os.path.lexists(os.path.join(base, m))})

    def _dir_ignores(self, rel_dir: str) -> tuple[_IgnoreFile, ...]:
        if not self._policy.use_ignore_files:
            return ()
        sources = _ignore_sources(rel_dir)
        paths = [os.path.join(self._root_real, s) for s in sources]
        key = tuple(_file_key(p) for p in paths)
        cached = self._ignores.get(rel_dir)
        if cached is not None and cached[0] == key:
            return cached[1]
        loaded = [
            _load_ignore_file(p, rel_dir, s)
            for p, s, k in zip(paths, sources, key, strict=True)
            if k is not None
        ]
        files = tuple(ig for ig in loaded if ig is not None)
        self._ignores[rel_dir] = (key, files)
        return files


def _file_key(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _normalize_rel(rel_path: str) -> str | None:
    """`./a//b/` -> `a/b`; None for an absolute path or one with a `..` segment."""
    if rel_path.startswith("/") or "\x00" in rel_path:
        return None
    parts = [p for p in rel_path.split("/") if p and p != "."]
    if ".." in parts:
        return None
    return "/".join(parts)
