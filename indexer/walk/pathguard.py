"""Root containment: the one place that decides whether a path lies inside a repository.

Provides `is_inside(root_real, real)` (pure, on already-resolved strings),
`ensure_inside(root, candidate)` (resolves symlinks, raises) and
`resolve_inside(root, rel_path)` (for a repo-relative path from a caller, e.g. the
`file_content` tool: refuses absolute paths and `..` before resolving). The walker calls
`is_inside` for every symlink it meets; the service layer calls `resolve_inside`.

Invariant: a path is inside when its fully resolved form (every symlink followed) is the
resolved root or lies under it. A path that does not exist is resolved as far as it can be
(`Path.resolve(strict=False)`), so a missing file under the root is still inside.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from ctxd.indexer.errors import PathOutsideRoot

__all__ = ["ensure_inside", "is_inside", "resolve_inside"]


def is_inside(root_real: str, real: str) -> bool:
    """Whether the resolved path `real` is the resolved root `root_real` or under it.

    Both arguments must already be absolute and free of symlinks and `..` (e.g. from
    `os.path.realpath`); this is a string comparison on path boundaries, nothing more.
    """
    if real == root_real:
        return True
    prefix = root_real if root_real.endswith(os.sep) else root_real + os.sep
    return real.startswith(prefix)


def ensure_inside(root: Path, candidate: Path) -> Path:
    """Resolve `candidate` (relative ones against `root`) and check it lies inside `root`.

    Args:
        root: the repository root.
        candidate: an absolute path, or a path relative to `root`.

    Returns:
        The resolved candidate.

    Raises:
        PathOutsideRoot: the resolved candidate is outside the resolved root (`..`
            traversal, an absolute path elsewhere, a symlink pointing out).
    """
    root_real = root.resolve()
    resolved = (root_real / candidate).resolve()
    if not is_inside(str(root_real), str(resolved)):
        raise PathOutsideRoot(
            "path traversal detected",
            hint=f"Only paths inside {root_real} can be used; this one resolves to {resolved}.",
            details={"path": str(candidate)},
        )
    return resolved


def resolve_inside(root: Path, rel_path: str) -> Path:
    """Turn a caller-supplied repo-relative path into an absolute path inside `root`.

    Stricter than `ensure_inside`: an absolute path or any `..` segment is refused before
    anything is resolved, even one that would land back inside the root.

    Args:
        root: the repository root.
        rel_path: a repo-relative POSIX path such as `src/main.py` (`""` or `.` = the root).

    Returns:
        The resolved absolute path (symlinks followed).

    Raises:
        PathOutsideRoot: absolute path, `..` segment, NUL byte, or a symlink leading out.
    """
    pure = PurePosixPath(rel_path)
    if "\x00" in rel_path or pure.is_absolute() or ".." in pure.parts:
        raise PathOutsideRoot(
            "path traversal detected",
            hint="Pass a path relative to the repository root, without '..', e.g. 'src/main.py'.",
            details={"path": rel_path},
        )
    return ensure_inside(root, Path(*pure.parts) if pure.parts else Path("."))
