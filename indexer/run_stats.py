"""What one run's `IndexStats` names besides its totals: skipped, failed, removed and
large files, samples of each bounded (`SKIPPED_SAMPLE`, `REMOVED_SAMPLE`, `TOP_FILES`).

Invariants: the samples never grow past their bounds, whatever the repository's size;
every skip reason gets its own sample (a thousand images do not hide a secret).
"""

from __future__ import annotations

from collections import Counter

from ctxd.indexer.models import FileFailure, IndexStats, LargeFile, Skipped, SkipReason

REMOVED_SAMPLE = 50
"""How many removed files `IndexStats.removed_files` names."""
SKIPPED_SAMPLE = 100
"""How many skipped (and how many not-embedded) files `IndexStats` names."""
LARGE_FILE_CHECKPOINTS = 1000
"""A file that yields this many checkpoints is named in `IndexStats.large_files`."""
TOP_FILES = 10
"""How many files `IndexStats.top_files` names."""


def count_checkpoints(stats: IndexStats, path: str, kind: str, checkpoints: int) -> None:
    """Count one chunked file's checkpoints by kind, name it if it yields
    `LARGE_FILE_CHECKPOINTS` or more, and keep it if it is among the `TOP_FILES` that
    yield the most."""
    if not checkpoints:
        return
    if checkpoints >= LARGE_FILE_CHECKPOINTS:
        stats.large_files.append(LargeFile(path, checkpoints))
    stats.checkpoints_by_kind[kind] = stats.checkpoints_by_kind.get(kind, 0) + checkpoints
    top = stats.top_files
    if len(top) < TOP_FILES or checkpoints > top[-1].checkpoints:
        top.append(LargeFile(path, checkpoints))
        top.sort(key=lambda f: (-f.checkpoints, f.path))
        del top[TOP_FILES:]


def record_skip(item: Skipped, skipped: Counter[str], stats: IndexStats) -> None:
    """Count a refused file in `skipped` and `stats` (an unreadable one is a failure),
    naming it among the first `SKIPPED_SAMPLE` of its reason."""
    if item.reason is SkipReason.UNREADABLE:
        stats.files_failed.append(FileFailure(item.path, item.detail or "unreadable"))
    else:
        skipped[item.reason.value] += 1
        if skipped[item.reason.value] <= SKIPPED_SAMPLE:  # every reason gets its sample
            stats.skipped_files.append(item)
        if (item.reason is SkipReason.SENSITIVE
                and len(stats.sensitive_files) < SKIPPED_SAMPLE):
            stats.sensitive_files.append(item.path)
