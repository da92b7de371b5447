"""Which repositories a CLI search answers from: the one it runs in, unless told otherwise.

As `rg` searches the current folder, `ctxd search`, `symbols`, `refs` and `files` run from
inside an indexed repository search that repository only, and say so once on stderr with
the flag that widens them (`-a` / `--all-repos`). `--repo NAME` always wins; outside every
indexed repository they search all of them, as before.

`command_scope(roots, given, all_repos)` is the pure decision (`roots`: each indexed
repository's name and folder, from the `repo_roots` use case); `all_repos_option` is the
flag. Called by `server/cli/main.py`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import click

from ctxd.server.cli.paths import PathNamer, path_namer
from ctxd.server.project import repository_of

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Scope:
    """What a command searches and how it names files."""

    repositories: list[str] | None
    """The repositories to search (None = all)."""
    names: PathNamer
    note: str | None = None
    """Said once on stderr when the current folder narrowed the search."""
    roots: Mapping[str, str] = field(default_factory=dict)
    """Indexed repositories, name -> folder."""

    def place(self, subject: str) -> tuple[str, list[str] | None]:
        """A graph command's SYMBOL or file as the index names it, and the repositories to
        search: a path given the way the CLI prints files (relative to the current folder,
        `../x.c`, or `REPO/PATH`) is made relative to its repository's root, and that
        repository searched; anything else is left as it is. Only a file that is there on
        disk is taken so (a root-relative path keeps working)."""
        m = _PLACE.match(subject.strip())
        if m is None or not self.roots:
            return subject, self.repositories
        path, line = m.group("path"), m.group("line") or ""
        found = None
        on_disk = os.path.join(self.names.cwd, path)
        if os.path.isfile(on_disk):
            found = repository_of(self.roots, on_disk)
            if found is not None:
                rel = os.path.relpath(os.path.realpath(on_disk), os.path.realpath(found[1]))
                found = (found[0], rel.replace(os.sep, "/"))
        head, _, rest = path.partition("/")
        if found is None and rest and head in self.roots and os.path.isfile(
                os.path.join(self.roots[head], rest)):
            found = (head, rest)
        if found is None or (self.repositories is not None
                             and found[0] not in self.repositories):
            return subject, self.repositories  # none, or `--repo` names another: as given
        return found[1] + line, [found[0]]


_PLACE = re.compile(r"^(?P<path>[^:\s]*[/.][^:\s]*?)(?P<line>:\d+(?::\d+)?)?$")
"""A file path, perhaps with `:LINE` or `:LINE:COLUMN`."""


def command_scope(roots: Mapping[str, str], given: Sequence[str], all_repos: bool, *,
                  remote: bool = False, cwd: str | None = None) -> Scope:
    """The scope of a command run in `cwd` (default: the current folder).

    Args:
        roots: indexed repositories, name -> folder.
        given: `--repo` names (they win).
        all_repos: `--all-repos`: every repository.
        remote: repositories beyond `roots` can answer (a Zoekt server).
    """
    names = path_namer(roots, cwd)
    if given:
        return Scope(list(given), names, roots=roots)
    if all_repos or names.current is None:
        return Scope(None, names, roots=roots)
    name = names.current[0]
    note = None
    if remote or len(roots) > 1:
        others = "every indexed repository" if remote else f"all {len(roots)} indexed repositories"
        note = (f"note: searching repository `{name}` only (the current folder is in it); "
                f"-a (--all-repos) searches {others}")
    return Scope([name], names, note, roots)


def all_repos_option(f: F) -> F:
    """`-a` / `--all-repos`."""
    return click.option(
        "-a", "--all-repos", "all_repos", is_flag=True,
        help="Search every indexed repository (by default, inside an indexed repository "
        "only that one is searched; --repo picks others).")(f)
