"""The restrictions every search mode applies: `SearchFilters` (repositories, a path glob,
a language).

Each leg (semantic, keyword, hybrid, the store's own vector and keyword searches) takes
the same record: `sql()` is its repository and language part as an `AND ...` fragment on
`checkpoints c` joined with `repos r` (in the SQL both engines speak), `path_matcher()` its
glob, which is matched in Python after the store's rows are read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ctxd.indexer.walk.patterns import compile_globs

__all__ = ["SearchFilters"]


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Restrictions every search mode applies."""

    repositories: tuple[str, ...] = ()
    """Repository names; empty = all."""
    path_glob: str | None = None
    """A glob (with `**`) matched against the repo-relative path and the basename."""
    language: str | None = None

    def path_matcher(self) -> Callable[[str], bool]:
        if not self.path_glob:
            return lambda _p: True
        globs = compile_globs([self.path_glob], "path")
        return globs.match_file

    def sql(self, alias: str = "c") -> tuple[str, list[object]]:
        """A WHERE fragment (starting with AND) for repository and language."""
        parts: list[str] = []
        params: list[object] = []
        if self.repositories:
            marks = ",".join("?" * len(self.repositories))
            parts.append(f"AND r.name IN ({marks})")
            params.extend(self.repositories)
        if self.language:
            parts.append(f"AND lower({alias}.language) = lower(?)")
            params.append(self.language)
        return " ".join(parts), params
