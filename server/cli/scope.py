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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from ctxd.server.cli.paths import PathNamer, path_namer

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Scope:
    """What a command searches and how it names files."""

    repositories: list[str] | None
    """The repositories to search (None = all)."""
    names: PathNamer
    note: str | None = None
    """Said once on stderr when the current folder narrowed the search."""


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
        return Scope(list(given), names)
    if all_repos or names.current is None:
        return Scope(None, names)
    name = names.current[0]
    note = None
    if remote or len(roots) > 1:
        others = "every indexed repository" if remote else f"all {len(roots)} indexed repositories"
        note = (f"note: searching repository `{name}` only (the current folder is in it); "
                f"-a (--all-repos) searches {others}")
    return Scope([name], names, note)


def all_repos_option(f: F) -> F:
    """`-a` / `--all-repos`."""
    return click.option(
        "-a", "--all-repos", "all_repos", is_flag=True,
        help="Search every indexed repository (by default, inside an indexed repository "
        "only that one is searched; --repo picks others).")(f)
