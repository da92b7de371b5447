"""How the CLI names a hit's file for people: a path the terminal can open.

A hit names its repository and its path inside it. When the current folder is inside
the repository (a folder of that name that holds the file, the current one or above
it), the path is relative to the current folder (`src/app.py`, `../app.py`), as ripgrep
prints it; otherwise it is `REPO/PATH`, which opens from the folder above the
repository. Only `os.stat` calls: no index or daemon round trip.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ctxd.search.models import Hit


@lru_cache(maxsize=64)
def _root_here(repository: str, cwd: str) -> Path | None:
    """The folder named `repository` at or above `cwd`, if any."""
    here = Path(cwd)
    for folder in (here, *here.parents):
        if folder.name == repository:
            return folder
    return None


def display_path(hit: Hit) -> str:
    """`hit`'s file relative to the current folder when that is inside its repository,
    else `REPO/PATH`."""
    cwd = os.getcwd()
    root = _root_here(hit.repository, cwd)
    if root is not None and (root / hit.path).is_file():
        return os.path.relpath(root / hit.path, cwd)
    return f"{hit.repository}/{hit.path}"
