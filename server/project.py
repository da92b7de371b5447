"""The project a process runs in: found from its folder, indexed without being asked.

Coding agents launch `ctxd serve` in their project folder. `find_project(folder)` says which
project that is: the top of the nearest version-control work tree (`.git`, `.hg`, `.jj`,
`.svn`) at or above the folder, else the nearest folder holding a project manifest
(`MANIFESTS`: `pyproject.toml`, `package.json`, `go.mod`, `Cargo.toml`, ...). The search
stops below the home directory and the filesystem root, which are never a project, so a
server started in `$HOME` or `/` has none; it stops too at a folder another local user
could have chosen for it (`not_ours`: owned by another user, or writable by every user,
as a shared `/tmp` or `/var/tmp` is), so that nobody else's `package.json` or `.git`
makes the server index and watch a shared folder (`locate_project` says why).
`repository_of(roots, folder)` is the indexed repository that already holds a folder (the
deepest one), which the CLI uses too.

`ProjectScope` is what `ctxd serve` keeps about its project (`server/mcp/serve.py` builds
it with `open_project`): the folder, the background index job that indexes it when it was
not indexed yet (`server.jobs`), who keeps it fresh, and `scope(...)`, the repositories a
tool answers from: the one a `repository` argument names, every one with `all_repos`, else
the project's and those of the folders clients asked this server to index
(`index_repository`), which an agent means to search.

`auto_index_refusal(root, transport, allowed)` decides whether a server may index its
launch folder by itself: over stdio the user launched it there, which is trusted (even
outside configured `server.allowed_roots`, which bound what clients may ask for); over HTTP
only a folder inside the configured `server.allowed_roots`, the rule of
`server.jobs.index_roots` (a client's word never widens them).

Light: no engine, no model, no MCP import (the CLI imports `repository_of`). Touches the
filesystem only to look for markers (`os.scandir` of the folders above the start).
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxd.indexer.errors import IndexNotFound
from ctxd.indexer.walk.pathguard import is_inside

if TYPE_CHECKING:  # annotations only: the jobs pull in the pipeline
    from ctxd.server.jobs import IndexJob

log = logging.getLogger(__name__)

VCS_MARKERS = (".git", ".hg", ".jj", ".svn")
"""A folder holding one of these is the top of a work tree."""

MANIFESTS = frozenset({
    "pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "requirements.txt",
    "environment.yml", "package.json", "deno.json", "deno.jsonc", "go.mod", "Cargo.toml",
    "pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts",
    "build.sbt", "build.xml", "Gemfile", "composer.json", "mix.exs", "rebar.config",
    "pubspec.yaml", "Package.swift", "Podfile", "CMakeLists.txt", "meson.build",
    "configure.ac", "stack.yaml", "dune-project", "project.clj", "deps.edn", "shard.yml",
    "gleam.toml", "build.zig", "Project.toml", "flake.nix",
})
"""File names that make a folder a project (the manifests of the usual ecosystems)."""

MANIFEST_SUFFIXES = (".csproj", ".fsproj", ".vbproj", ".sln", ".cabal", ".gemspec",
                     ".nimble")
"""Manifest file extensions (.NET projects and solutions, Haskell, Ruby gems, Nim)."""


def _names(folder: Path) -> set[str]:
    try:
        with os.scandir(folder) as entries:
            return {e.name for e in entries}
    except OSError:
        return set()


def _has_manifest(names: set[str]) -> bool:
    return bool(names & MANIFESTS) or any(n.endswith(MANIFEST_SUFFIXES) for n in names)


def _is_marked(names: set[str]) -> bool:
    return any(m in names for m in VCS_MARKERS) or _has_manifest(names)


def not_ours(folder: Path, uid: int | None = None) -> str | None:
    """Why `folder` may not be a project of the user `uid` (default: this process's), or
    None when it may: it must belong to that user or to root, and no other user may
    create files in it (a world-writable folder, such as a shared temporary folder like
    `/tmp` or `/var/tmp`, sticky or not). Otherwise another local user chooses what the
    server indexes and watches: a `package.json` or a `.git` they put there would make the
    whole folder the project."""
    me = os.geteuid() if uid is None else uid
    try:
        st = folder.stat()
    except OSError as exc:
        return f"{folder} cannot be examined ({exc.strerror})"
    if st.st_uid not in (me, 0):
        return f"{folder} belongs to another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        kind = "a shared temporary folder" if st.st_mode & stat.S_ISVTX else "a folder"
        return (f"{folder} is {kind} that every local user can write (mode "
                f"{stat.S_IMODE(st.st_mode):o})")
    return None


def find_project(start: str | Path, home: str | Path | None = None) -> Path | None:
    """The project folder holding `start` (module docstring), resolved, or None."""
    return locate_project(start, home)[0]


def locate_project(
    start: str | Path, home: str | Path | None = None
) -> tuple[Path | None, str | None]:
    """`(project folder, None)`, or `(None, why)` when the search met a folder that may not
    be a project (`not_ours`) and found none below it, or `(None, None)` outside any.

    Only folders this user (or root) owns and no other user can write are looked at; the
    search stops at the first other one, whose markers count for nothing (another user's
    `.git` in a shared `/var/tmp` no longer wins over the user's own manifest below it).

    Args:
        start: the folder to start from (the server's working directory).
        home: the user's home directory (default `~`); it and every folder above it are
            never a project, nor is the filesystem root.
    """
    here = Path(start).expanduser().resolve()
    top = Path(home or os.path.expanduser("~")).resolve()
    chain: list[Path] = []
    refused: str | None = None
    for folder in (here, *here.parents):
        if folder == top or folder.parent == folder or folder == top.parent:
            break
        if (why := not_ours(folder)) is not None:
            # Said only where it matters: that folder, or one above it, looks like a project.
            above = [f for f in (folder, *folder.parents)
                     if not (f == top or f.parent == f or f == top.parent)]
            if any(_is_marked(_names(f)) for f in above):
                refused = why
            break
        chain.append(folder)
    listed = [(folder, _names(folder)) for folder in chain]
    for folder, names in listed:
        if any(m in names for m in VCS_MARKERS):
            return folder, None
    for folder, names in listed:
        if _has_manifest(names):
            return folder, None
    return None, refused


def repository_of(roots: Mapping[str, str], folder: str | Path) -> tuple[str, str] | None:
    """(name, root) of the indexed repository holding `folder` (the deepest one when roots
    nest), or None; `roots` maps names to folders (the `repo_roots` use case)."""
    here = os.path.realpath(folder)
    holding = [(name, root) for name, root in roots.items()
               if is_inside(os.path.realpath(root), here)]
    return max(holding, key=lambda nr: len(os.path.realpath(nr[1])), default=None)


def _named(roots: Mapping[str, str], folder: str) -> str | None:
    """The repository indexed at exactly `folder` (not one holding it), or None."""
    found = repository_of(roots, folder)
    if found is None or os.path.realpath(found[1]) != os.path.realpath(folder):
        return None
    return found[0]


def auto_index_refusal(root: Path, transport: str, allowed: Sequence[str]) -> str | None:
    """Why a server must not index its launch project `root` by itself, or None when it
    may: over stdio it may (the user launched it there); over HTTP only inside the
    configured `server.allowed_roots`."""
    if transport != "http":
        return None
    real = os.path.realpath(root)
    if any(is_inside(os.path.realpath(os.path.expanduser(a)), real) for a in allowed):
        return None
    return (f"{root} is not inside the configured server.allowed_roots "
            f"({', '.join(allowed) or 'none set'}): an HTTP server indexes only those")


@dataclass
class ProjectScope:
    """The project `ctxd serve` was started in, and how tools are scoped to it."""

    root: Path
    repo_roots: Callable[[], Mapping[str, str]]
    """The indexed repositories' names and folders, asked at each call (the project's name
    is known once its index run has created it; it may be removed and re-indexed)."""
    job: IndexJob | None = None
    """The background run indexing it, when it was not indexed at start."""
    watched_by: str = "none"
    """`daemon`, `this server` or `none`."""
    asked: list[str] = field(default_factory=list)
    """The folders clients asked this server to index (`index_repository`), resolved: the
    default scope holds them beside the project. An agent that indexes another folder
    means to search it; a server launched in one checkout (a harness's, an editor's) and
    asked to index another must not keep answering from the first alone."""

    def ask(self, root: Path) -> None:
        """Remember that a client asked to index `root` (resolved)."""
        if str(root) not in self.asked:
            self.asked.append(str(root))

    def repository(self, roots: Mapping[str, str] | None = None) -> str | None:
        """The project's repository name, once indexed (None before); `roots`: the
        `repo_roots` the caller already asked for (a daemon round trip)."""
        return _named(self.repo_roots() if roots is None else roots, str(self.root))

    def scope(self, repository: str | None, all_repos: bool) -> list[str] | None:
        """The repositories a tool answers from: `repository` when given, all (None) with
        `all_repos`, else the project's.

        Raises:
            IndexNotFound: the project is not in the index (yet): its job is still
                starting, failed, or it was removed; the message says which.
        """
        if repository:
            return [repository]
        if all_repos:
            return None
        roots = self.repo_roots()
        names = [n for n in (_named(roots, f) for f in (str(self.root), *self.asked)) if n]
        if names:
            return list(dict.fromkeys(names))
        raise self._not_yet()

    def _not_yet(self) -> IndexNotFound:
        hint = ("Pass `all_repos: true` to search every indexed repository meanwhile, or "
                "`repository` to name one.")
        snap = self.job.snapshot() if self.job is not None else None
        if snap is not None and not snap.finished:
            why = f"is being indexed in the background (job {snap.job_id}: {snap.message})"
            hint = (f"Wait for it with `index_status` (job_id {snap.job_id!r}, wait_seconds "
                    "30); lexical and symbol search see its files as they land. " + hint)
        elif snap is not None and snap.error is not None:
            why = (f"could not be indexed (job {snap.job_id}: {snap.error.code}: "
                   f"{snap.error.message})")
            hint = (f"Fix the cause and call `index_repository` with path {str(self.root)!r}. "
                    + hint)
        else:
            why = "is not indexed (it was removed from the index)"
            hint = f"Call `index_repository` with path {str(self.root)!r}. " + hint
        return IndexNotFound(f"The project {self.root} {why}", hint=hint,
                             details={"field": "repository", "project": str(self.root)})

    def info(self) -> dict[str, Any]:
        """The project for `get_health`: its folder, repository, index job and watcher."""
        snap = self.job.snapshot() if self.job is not None else None
        name = self.repository()
        if snap is not None and not snap.finished:
            state = "indexing"
        elif snap is not None and snap.error is not None:
            state = "failed"
        else:
            state = "indexed" if name is not None else "not indexed"
        out: dict[str, Any] = {
            "root": str(self.root), "repository": name, "state": state,
            "watched_by": self.watched_by,
            "scope": "answers come from this project unless a tool is given `all_repos: "
                     "true` or a `repository`",
        }
        if snap is not None:
            out["job"] = {"job_id": snap.job_id, "state": snap.state.value,
                          "phase": snap.phase, "progress": snap.progress,
                          "total": snap.total, "message": snap.message}
        return out
