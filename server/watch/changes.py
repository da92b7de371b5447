"""What the file watcher should re-index: file events -> a path set -> (changed, deleted).

Pure decisions for `server/watch/watcher.py`, no filesystem, database, clock or watchdog inside:

- `classify(event)` / `ChangeAccumulator` / `coalesce(events)`: turn events (hints, not
  truth) into a `ChangeSet` of file paths to re-stat and directory subtrees to
  re-evaluate. Events inside version-control folders and built-in pruned folders
  (`node_modules`, virtualenvs, tool caches) are dropped at once; a change to an ignore
  file (`.gitignore`, `.ctxdignore`, `.git/info/exclude`) or a virtualenv marker turns
  into a re-evaluation of the folder it governs; a directory created, deleted or renamed
  becomes a subtree to re-evaluate (stored paths under it and files found under it).
- `candidates(changes, stored, scanned)`: the paths worth a stat: the changed files plus
  every stored or scanned path under a re-evaluated subtree.
- `diff(paths, stored, on_disk)`: compare each candidate's stat with the store and
  return the files to (re)index and the ones to drop.

Invariants: paths are repo-relative POSIX strings ("" is the repository root); a
`ChangeSet` is normalised (no directory inside another one, no file inside a
directory); `diff` never reports a path both changed and deleted, and never reports a
file whose (size, mtime_ns) equals the stored one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from ctxd.indexer.walk.ignore import GIT_INFO_EXCLUDE, IGNORE_FILE_NAMES
from ctxd.indexer.walk.policy import PRUNED_DIR_NAMES, VCS_DIR_NAMES, VENV_MARKERS

"""The one path inside a VCS folder that changes the policy (a root-level ignore file)."""


class EventKind(StrEnum):
    """What a file-system event says happened (a hint: the watcher re-stats anyway)."""

    CREATED = "created"
    """A file or directory appeared (also: moved in from outside the repository)."""
    MODIFIED = "modified"
    """A file's content or attributes changed, or it was closed after writing."""
    DELETED = "deleted"
    """A file or directory disappeared (also: moved out of the repository)."""
    MOVED = "moved"
    """Renamed inside the repository: `path` is the old name, `dest` the new one."""


@dataclass(frozen=True, slots=True)
class FsEvent:
    """One file-system event, with repo-relative paths."""

    kind: EventKind
    path: str
    is_dir: bool = False
    dest: str | None = None
    """The new path of a MOVED event."""


@dataclass(frozen=True, slots=True)
class ChangeSet:
    """Paths to re-examine: single files, and directory subtrees ("" = the whole repo)."""

    files: frozenset[str] = frozenset()
    dirs: frozenset[str] = frozenset()

    @property
    def full(self) -> bool:
        """The whole repository must be re-evaluated (a root ignore file changed, a rescan)."""
        return "" in self.dirs

    def __bool__(self) -> bool:
        return bool(self.files or self.dirs)

    def __len__(self) -> int:
        return len(self.files) + len(self.dirs)

    def merge(self, other: ChangeSet) -> ChangeSet:
        return normalize(self.files | other.files, self.dirs | other.dirs)


FULL = ChangeSet(dirs=frozenset({""}))
"""Re-evaluate everything: what a rescan (startup, periodic, after a queue overflow) asks."""


def is_under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` itself or inside it ("" contains everything)."""
    return not folder or path == folder or path.startswith(folder + "/")


def under_any(path: str, folders: Iterable[str]) -> bool:
    return any(is_under(path, d) for d in folders)


def normalize(files: Iterable[str], dirs: Iterable[str]) -> ChangeSet:
    """A `ChangeSet` without nested directories and without files inside a directory."""
    kept: list[str] = []
    for d in sorted(set(dirs), key=lambda s: (s.count("/"), s)):
        if not d:
            return FULL
        if not under_any(d, kept):
            kept.append(d)
    return ChangeSet(
        frozenset(f for f in files if not under_any(f, kept)), frozenset(kept)
    )


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def classify(path: str, is_dir: bool) -> tuple[str | None, str | None]:
    """What one event path asks for: `(file to re-stat, directory to re-evaluate)`.

    Returns `(None, None)` for paths that can never be indexed and change no policy:
    anything inside a VCS folder (except `.git/info/exclude`, which is a root ignore
    file) and anything inside a built-in pruned folder (`node_modules`, `.venv`, ...).
    """
    parts = path.split("/") if path else []
    if path == GIT_INFO_EXCLUDE:
        return None, ""
    dir_parts = parts if is_dir else parts[:-1]
    for name in dir_parts:
        if name in VCS_DIR_NAMES or name in PRUNED_DIR_NAMES:
            return None, None
    if parts and parts[-1] in VCS_DIR_NAMES:
        return None, None  # a `.git` file (worktree pointer) or folder
    name = parts[-1] if parts else ""
    if is_dir:
        return None, (_parent(path) if name in VENV_MARKERS else path)
    if name in IGNORE_FILE_NAMES or name in VENV_MARKERS:
        return path, _parent(path)
    return path, None


class ChangeAccumulator:
    """Collects events between two batches (the debounce window); no I/O, no clock.

    `add` is called from the observer thread for every event and must stay cheap; the
    caller serialises access. `take` hands the normalised `ChangeSet` over and resets.
    """

    def __init__(self) -> None:
        self._files: set[str] = set()
        self._dirs: set[str] = set()

    def __len__(self) -> int:
        return len(self._files) + len(self._dirs)

    def __bool__(self) -> bool:
        return bool(self._files or self._dirs)

    def add(self, event: FsEvent) -> bool:
        """Record one event; returns whether it asked for anything."""
        wanted = self._add_path(event.path, event.is_dir)
        if event.kind is EventKind.MOVED and event.dest is not None:
            wanted = self._add_path(event.dest, event.is_dir) or wanted
        return wanted

    def add_changes(self, changes: ChangeSet) -> None:
        """Put a change set back (a batch that could not be applied yet)."""
        self._files |= changes.files
        self._dirs |= changes.dirs

    def _add_path(self, path: str, is_dir: bool) -> bool:
        file, folder = classify(path, is_dir)
        if file is not None:
            self._files.add(file)
        if folder is not None:
            self._dirs.add(folder)
        return file is not None or folder is not None

    def take(self) -> ChangeSet:
        out = normalize(self._files, self._dirs)
        self._files = set()
        self._dirs = set()
        return out


def coalesce(events: Iterable[FsEvent]) -> ChangeSet:
    """Collapse a sequence of events into one normalised `ChangeSet`."""
    acc = ChangeAccumulator()
    for event in events:
        acc.add(event)
    return acc.take()


def relative_path(root: str, path: str) -> str | None:
    """`path` relative to `root` as POSIX ("" for the root), or None when outside it.

    Both are absolute, normalised paths as the observer reports them (no `..`).
    """
    root = root.rstrip("/")
    if path == root:
        return ""
    if path.startswith(root + "/"):
        return path[len(root) + 1 :].rstrip("/")
    return None


# --------------------------------------------------------------------------- diff


@dataclass(frozen=True, slots=True)
class Stat:
    """The facts incremental indexing compares: size and modification time."""

    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Diff:
    """Files to (re)index and files to drop, each sorted."""

    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    @property
    def paths(self) -> list[str]:
        """Every path of the diff, sorted: the `only_paths` of the re-index."""
        return sorted((*self.changed, *self.deleted))

    def __bool__(self) -> bool:
        return bool(self.changed or self.deleted)

    def __len__(self) -> int:
        return len(self.changed) + len(self.deleted)


def candidates(
    changes: ChangeSet, stored: Iterable[str], scanned: Iterable[str] = ()
) -> set[str]:
    """Paths to compare: the changed files, plus stored and scanned paths under its dirs.

    Args:
        changes: the coalesced events.
        stored: every path the store holds for the repository.
        scanned: admitted files found on disk under `changes.dirs` (the caller walks
            them; paths outside the dirs are ignored).
    """
    out = set(changes.files)
    if changes.dirs:
        dirs = sorted(changes.dirs)
        out.update(p for p in stored if under_any(p, dirs))
        out.update(p for p in scanned if under_any(p, dirs))
    return out


def diff(
    paths: Iterable[str],
    stored: Mapping[str, Stat],
    on_disk: Mapping[str, Stat | None],
    unindexable: Mapping[str, Stat] | None = None,
) -> Diff:
    """Which candidate paths changed on disk and which are gone, compared with the store.

    Args:
        paths: candidates (from `candidates`).
        stored: the store's (size, mtime_ns) per path.
        on_disk: the file's stat when the walk policy admits it now; None (or absent)
            when it is gone, a directory, or refused by the policy (ignored, excluded,
            too large, outside the root...).
        unindexable: admitted files a previous re-index could not store (binary,
            unreadable) with the stat they had then: not retried until the stat changes.

    Returns:
        `changed`: admitted and new or with another (size, mtime_ns); `deleted`: stored
        but no longer admitted.
    """
    skip = unindexable or {}
    changed: list[str] = []
    deleted: list[str] = []
    for path in sorted(set(paths)):
        now = on_disk.get(path)
        old = stored.get(path)
        if now is None:
            if old is not None:
                deleted.append(path)
        elif now != old and skip.get(path) != now:
            changed.append(path)
    return Diff(tuple(changed), tuple(deleted))
