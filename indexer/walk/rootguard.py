"""Refuses index roots that would index a whole machine or a whole home directory.

`check_index_root(path, force=False)` raises a `ValidationError` for the filesystem root,
the user's home directory and the folder that holds the home directories (`/home`,
`/Users`), unless `force` is set (`ctxd index --force`, `index_repository` with
`force: true`). Pure apart from resolving the path and reading `$HOME`; checked before
any walking, so a mistyped `ctxd index ~` costs nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from ctxd.indexer.errors import ValidationError


def broad_roots(home: Path | None = None) -> dict[Path, str]:
    """The roots refused without `force`, each with why it is too broad."""
    home = (home or Path(os.path.expanduser("~"))).resolve()
    out = {Path("/"): "the filesystem root (the whole machine)"}
    if home != Path("/"):
        out[home] = "your home directory (every project, cache and download in it)"
        if home.parent != Path("/"):
            out[home.parent] = "the folder of every user's home directory"
    return out


def check_index_root(path: str | Path, *, force: bool = False, home: Path | None = None) -> None:
    """Refuse to index a machine-wide root unless `force`.

    Raises:
        ValidationError: `path` is `/`, the home directory or its parent, and not `force`.
    """
    if force:
        return
    real = Path(path).expanduser().resolve()
    why = broad_roots(home).get(real)
    if why is None:
        return
    raise ValidationError(
        f"refusing to index {real}: it is {why}",
        hint="Index a project folder instead (e.g. `ctxd index ~/src/myproject`), or insist "
        "with `ctxd index --force` (MCP: `force: true`); `--dry-run` first shows what it "
        "would take.",
        details={"field": "path", "value": str(path), "resolved": str(real), "force": False},
    )
