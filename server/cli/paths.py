"""Where the CLI runs and how it names files for people: one convention for every command.

`path_namer(roots)` finds the indexed repository that holds the current folder
(`server.project.repository_of`: the deepest root containing it; `roots` from the
`repo_roots` use case) and returns a `PathNamer`, which names a file the way ripgrep
does: relative to the current folder when the file belongs to that repository
(`src/app.py`, `../app.py`), else `REPO/PATH`, which opens from the folder above the
repository. `search`, `symbols`, `refs` and `files` print every path through it (their
`--json` keeps the explicit `repository` and `path` fields).

Pure apart from `os.path` string work; the repository lookup is the caller's one use-case
call (the daemon's or this process's).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from ctxd.server.project import repository_of


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
