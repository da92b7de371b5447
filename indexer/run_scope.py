"""Which folder and which files one index run covers: the root it pins
(`pinned_root`), the paths a watcher's batch examines (`candidates_of`), and the stored
files it removes, with why, or keeps (`not_walked`, `remove_gone`).

Invariants: a partial run never resolves a stored root again, and a stored root that now
leads elsewhere is refused (`indexer.walk.rootpin`); files under a folder the walk could
not read, or whose existence cannot be told, stay in the index.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.models import FileEntry, FileFailure, IndexStats, RemovedFile, Skipped
from ctxd.indexer.run_stats import REMOVED_SAMPLE
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.walk.filefilter import FileFilter
from ctxd.indexer.walk.rootpin import identity_of, pinned_identity, root_moved
from ctxd.indexer.walk.walker import WalkOptions, validate_root


def pinned_root(store: IndexStore, root: Path | str, *, partial: bool
                ) -> tuple[Path, RepoRow | None, str]:
    """The folder a run indexes, its stored repository (None: a new one) and the
    folder's identity now (`indexer.walk.rootpin`), which the run pins and records.

    A partial run (the watcher's) re-indexes a stored repository at its stored path,
    which must still be the folder indexed (or one of this user's re-created there:
    `rootpin`): it is never resolved again. A full run resolves the path it is given
    (the user's own request: a folder re-created at the same place is pinned anew),
    but a stored root given by its path that now leads elsewhere is refused rather
    than indexed as a new repository there.

    Raises:
        RootMoved: the stored root is no longer the folder indexed.
        ValidationError: a bad path (`validate_root`).
    """
    given = os.path.abspath(os.path.expanduser(str(root)))
    stored = store.repo_by_root(given)
    if partial and stored is not None:
        return Path(stored.root), stored, pinned_identity(stored.root, stored.root_id)
    root_path = validate_root(root)
    if stored is None:
        stored = store.repo_by_root(str(root_path))
    elif str(root_path) != given:
        raise root_moved(given, f"it now leads to {root_path}")
    return root_path, stored, _identity(str(root_path))


def _identity(real: str) -> str:
    """`rootpin.identity_of`, with a folder gone since it was validated as a bad path."""
    try:
        return identity_of(real)
    except OSError as exc:
        raise ValidationError(
            f"the folder {real} changed while it was opened: {exc.strerror}",
            hint="Check the path and index it again.",
            details={"field": "path", "path": real},
        ) from None


def candidates_of(
    root: Path, options: WalkOptions, paths: Iterable[str], *, pin: str | None = None
) -> Iterator[FileEntry | Skipped]:
    """What `walk` would yield for just these repo-relative paths (the watcher's batch):
    each is checked by the same policy, at the cost of one stat, not a walk of the tree.
    Paths that no longer exist yield nothing (they are removals, not failures). `pin`:
    the root's identity, as `walk` takes it."""
    policy = FileFilter(root, options, pin=pin)
    for path in sorted(paths):
        if os.path.lexists(root / path):
            yield policy.entry(path)


def removal_reasons(
    gone: Iterable[str], skip_reasons: Mapping[str, str], root: Path
) -> list[RemovedFile]:
    """Why each removed file left the index: the walk's skip reason when it was walked and
    refused, `deleted` when it no longer exists, else `not_walked` (under a pruned or
    unreadable directory)."""
    return [
        RemovedFile(p, skip_reasons.get(p)
                    or ("not_walked" if os.path.lexists(root / p) else "deleted"))
        for p in gone
    ]


def not_walked(gone: list[str], unreadable: list[str], root: Path) -> set[str]:
    """The files of `gone` to keep in the index: those under a folder the walk could not
    read that is still there (`chmod 000`: its files were not walked, not deleted), and
    those whose very existence cannot be told (a folder on the way refuses a `stat`, as
    the watcher's single-path checks meet it). A folder that vanished loses its files."""
    folders = [p for p in unreadable if p == "." or os.path.lexists(root / p)]
    kept: set[str] = set()
    for path in gone:
        if any(f == "." or path.startswith(f + "/") for f in folders):
            kept.add(path)
            continue
        try:
            os.lstat(root / path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ENOTDIR):
                kept.add(path)
    return kept


def note_kept(stats: IndexStats, kept: set[str]) -> None:
    """Say, on each unreadable folder's failure, how many indexed files under it were kept."""
    for i, failure in enumerate(stats.files_failed):
        folder = failure.file
        n = sum(1 for p in kept if folder == "." or p.startswith(folder + "/"))
        if n:
            stats.files_failed[i] = FileFailure(
                folder, f"{failure.error} (not walked: its {n} indexed files are kept)")


def remove_gone(store: IndexStore, gone: list[str], unreadable: list[str],
                skip_reasons: Mapping[str, str], root: Path, repo_id: int,
                stats: IndexStats, *, dry_run: bool) -> None:
    """Remove the stored files the walk did not see (keeping those under unreadable
    folders), with their reasons in `stats`."""
    if kept := not_walked(gone, unreadable, root):
        gone = [p for p in gone if p not in kept]
        note_kept(stats, kept)
    removed = removal_reasons(gone, skip_reasons, root)
    stats.removed_reasons = dict(sorted(Counter(r.reason for r in removed).items()))
    stats.removed_files = removed[:REMOVED_SAMPLE]
    if dry_run:
        stats.files_removed = len(gone)
    elif gone:
        stats.files_removed = store.delete_files(repo_id, gone)
