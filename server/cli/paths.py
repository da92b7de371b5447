"""Where the CLI runs and how it names files for people: one convention for every command.

`repository_of(roots, cwd)` is the indexed repository that holds the current folder (the
deepest root containing it; `roots` from the `repo_roots` use case). `PathNamer` names a
file the way ripgrep does: relative to the current folder when the file belongs to that
repository (`src/app.py`, `../app.py`), else `REPO/PATH`, which opens from the folder above
the repository. `search`, `symbols`, `refs` and `files` print every path through it (their
`--json` keeps the explicit `repository` and `path` fields).

Pure apart from `os.path` string work; the repository lookup is the caller's one use-case
call (the daemon's or this process's).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass


def _inside(root: str, folder: str) -> bool:
    """Whether `folder` is `root` or below it (both absolute, normalised)."""
    root = root.rstrip("/") or "/"
    return folder == root or folder.startswith(root if root == "/" else root + "/")


def repository_of(roots: Mapping[str, str], cwd: str) -> tuple[str, str] | None:
    """(name, root) of the indexed repository holding `cwd` (the deepest one when roots
    nest), or None."""
    here = os.path.realpath(cwd)
    holding = [(name, root) for name, root in roots.items()
               if _inside(os.path.realpath(root), here)]
    return max(holding, key=lambda nr: len(nr[1]), default=None)


@dataclass(frozen=True, slots=True)
class PathNamer:
    """Names (repository, path) for people: relative to `cwd` inside the `current`
    repository, `REPO/PATH` elsewhere."""

    current: tuple[str, str] | None
    """(name, root) of the repository holding the current folder, if any."""
    cwd: str

    def __call__(self, repository: str, path: str) -> str:
        if self.current is not None and repository == self.current[0]:
            return os.path.relpath(os.path.join(self.current[1], path), self.cwd)
        return f"{repository}/{path}"


def path_namer(roots: Mapping[str, str], cwd: str | None = None) -> PathNamer:
    """The `PathNamer` for the current folder (`cwd`, default `os.getcwd()`)."""
    here = os.path.realpath(cwd or os.getcwd())
    current = repository_of(roots, here)
    if current is not None:
        current = (current[0], os.path.realpath(current[1]))
    return PathNamer(current, here)
