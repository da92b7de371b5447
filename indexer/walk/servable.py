"""What a file request may read: the walker's policy, applied to one requested path.

`read_servable(root, rel_path, opts)` returns the text of a file exactly when
`indexer.walk.walker.walk` with the same `WalkOptions` would have indexed it, else the
`Skipped` the walk would have recorded: the name-based steps and the filesystem steps
come from `indexer.walk.filefilter.FileFilter.entry`, the content steps (binary, size
re-check, secrets in the text, size by role) from `indexer.walk.judge.FileJudge`, as in
the indexing pipeline. `stored_walk_options(base, stored)` rebuilds the options
a repository was indexed with from what the pipeline stored in its row, and
`name_verdict(rel_path, opts)` applies the name-only steps (built-in prunes, sensitive
files, user excludes and includes; no ignore files) to a path that is not on disk, for
files a remote engine serves.

Invariants: never serves a file the walk would refuse (sensitive by name or content,
ignored, excluded, not included, too large, binary, outside the root, not a regular
file); a request can never read more than `MAX_LEXICAL_FILE_SIZE_LIMIT` bytes (and an
embedded file no more than `MAX_FILE_SIZE_LIMIT`), even when the repository has no size
limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxd.indexer.models import Skipped, SkipReason
from ctxd.indexer.walk.filefilter import FileFilter, normalize_rel
from ctxd.indexer.walk.judge import FileJudge
from ctxd.indexer.walk.repo_options import pinned_options, with_options
from ctxd.indexer.walk.walker import (
    MAX_FILE_SIZE_LIMIT,
    MAX_LEXICAL_FILE_SIZE_LIMIT,
    WalkOptions,
    compile_policy,
)

__all__ = ["name_verdict", "read_servable", "stored_walk_options"]


def stored_walk_options(base: WalkOptions, stored: Mapping[str, Any]) -> WalkOptions:
    """The walk options a repository's next run uses (`indexer.walk.repo_options`).

    The patterns and size limit given explicitly to its runs (stored in its row by the
    pipeline) win over `base` (the configured ones); sensitive-file and ignore-file
    settings come from `base`, the configuration, as in `Service.index`.
    """
    return with_options(base, pinned_options(base, stored))


def read_servable(
    root: Path, rel_path: str, opts: WalkOptions, *, pin: str | None = None
) -> tuple[str, str] | Skipped:
    """Read `rel_path` under `root` if the walk with `opts` would index it.

    Args:
        root: the repository root.
        pin: its stored identity (`indexer.walk.rootpin`): a root that is no longer the
            folder indexed is refused, never read through.
        rel_path: repo-relative POSIX path from a caller (`./` tolerated; absolute paths
            and `..` segments are OUTSIDE_ROOT).
        opts: the repository's walk options (`stored_walk_options`).

    Returns:
        `(normalized path, text)` (UTF-8, BOM stripped, `\\r\\n` as `\\n`), or the
        `Skipped` that says why the walk would have refused the file.

    Raises:
        ValidationError: bad options or a root that is not a directory (as `walk`).
        RootMoved: `pin` given and the root is no longer that folder.
    """
    if opts.max_file_size == 0:
        opts = replace(opts, max_file_size=MAX_FILE_SIZE_LIMIT)
    if opts.max_lexical_file_size == 0:
        opts = replace(opts, max_lexical_file_size=MAX_LEXICAL_FILE_SIZE_LIMIT)
    files = FileFilter(root, opts, pin=pin)
    found = files.entry(rel_path)
    if isinstance(found, Skipped):
        return found
    judged = FileJudge(files.root, opts, files.policy).judge(found)
    if isinstance(judged, Skipped):
        return judged
    return found.path, judged.text


def name_verdict(
    rel_path: str, opts: WalkOptions, *, only: frozenset[SkipReason] | None = None
) -> Skipped | None:
    """The name-only steps of the walk for a path that is not on disk: built-in prunes,
    sensitive files and directories, user excludes and includes (no ignore files, no
    virtualenv markers). None when the name is admitted.

    `only`: count just these reasons (e.g. SENSITIVE for files another engine indexed
    under its own rules); a folder refused for another reason is looked inside."""
    rel = normalize_rel(rel_path)
    if rel is None:
        return Skipped(rel_path, SkipReason.OUTSIDE_ROOT, "absolute path or '..' segment")
    policy = compile_policy(opts)
    parts = rel.split("/")
    allowed = False
    for depth, name in enumerate(parts):
        drel = "/".join(parts[: depth + 1])
        if depth == len(parts) - 1:
            verdict = policy.file_verdict(drel, name, (), allowed)
        else:
            verdict = policy.dir_verdict(drel, name, (), allowed)
            allowed = policy.dir_allowed(drel, name, allowed)
        if verdict and (only is None or verdict[0] in only):
            return Skipped(rel, *verdict)
    return None
