"""The `file_content` use case: `FileContents`, a file (or a line range) of an indexed
repository.

A local repository's file is read from disk inside its root, if the walk that indexed the
repository would index it (`indexer.walk.servable`), from the branch checked out in its
working tree; a repository indexed on another machine of a shared store is served from
the text the store holds; a repository only Zoekt knows, from Zoekt. Refusals and misses
are the errors of `server.file_access`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from ctxd.indexer.chunk.languages import detect_language
from ctxd.indexer.errors import ValidationError
from ctxd.indexer.models import Skipped, SkipReason
from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.walk.gitrefs import checked_out
from ctxd.indexer.walk.rootpin import RootMoved, root_moved, root_problem
from ctxd.indexer.walk.servable import name_verdict, read_servable, stored_walk_options
from ctxd.search.models import FileContent
from ctxd.search.zoekt.client import ZoektClient
from ctxd.server.file_access import not_found, refusal
from ctxd.server.repo_names import not_indexed
from ctxd.server.requests import FileContentRequest
from ctxd.server.resources import Resources


class FileContents:
    """Reads the files of indexed repositories for `Service.file_content`."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    def file_content(self, request: FileContentRequest) -> FileContent:
        """A file of an indexed repository, read from disk inside the repository root, if
        the walk that indexed the repository would index it (`indexer.walk.servable`). In a
        shared store, a repository another machine indexed (or whose folder is not here) is
        served from its indexed text: what the store holds is exactly what was admitted.

        Raises:
            IndexNotFound: "Repository not indexed: {repository}".
            FileNotFound: "File not found: {repository}/{path}" (also for paths that
                escape the root, directories and unreadable files).
            FileRefused: a likely secret, an ignored, excluded, not included, over-size
                or binary file; the hint says how to allow it.
            ValidationError: a bad line range.
        """
        repository, path, branch = request.repository, request.path, request.branch
        start_line, end_line = request.start_line, request.end_line
        settings = self.resources.settings
        store = self.resources.store()
        repo = store.repo_by_name(repository)
        zoekt = self.resources.zoekt() if repo is None else None
        if zoekt is not None:  # Zoekt indexed it under its own rules: refuse likely secrets
            if refused := name_verdict(path, settings.walk,
                                       only=frozenset({SkipReason.SENSITIVE})):
                raise refusal(repository, path, refused)
            return zoekt_file_content(zoekt, repository, path, branch, start_line, end_line)
        if repo is None:
            raise not_indexed(repository, {r.name for r in store.repos()})
        if settings.store.shared and (repo.host != this_host()
                                      or not os.path.isdir(repo.root)):
            return stored_file_content(store, repo, path, branch, start_line, end_line)
        if moved := root_problem(repo.root, repo.root_id):  # never read through another
            raise root_moved(repo.root, moved)
        served_branch = working_tree_branch(repository, repo.root, branch)
        opts = stored_walk_options(settings.walk, repo.options)
        try:
            served = read_servable(Path(repo.root), path, opts, pin=repo.root_id)
        except RootMoved:
            raise
        except ValidationError:  # the root itself is gone or no longer a directory
            raise not_found(repository, path, "the repository root is not a directory") from None
        if isinstance(served, Skipped):
            raise refusal(repository, path, served)
        rel, text = served
        fc = line_range(repo.name, rel, text, served_branch, start_line, end_line)
        return replace(fc, working_tree=True, index_state=index_state(store, repo, rel, text))


def index_state(store: IndexStore, repo: RepoRow, path: str, text: str) -> str:
    """`FileContent.index_state` of a file read from disk: its text against the text the
    index holds for it (as the walk admitted it: secrets masked alike)."""
    stored = store.stored_text(repo.id, path)
    if stored is None:
        return "not indexed"
    return "indexed" if stored == text else "changed"


def stored_file_content(
    store: IndexStore, repo: RepoRow, path: str, branch: str, start: int | None,
    end: int | None,
) -> FileContent:
    """A file of a repository indexed on another machine, from the store's copy of its text
    (the text the index was built from; `working_tree` False).

    Raises:
        FileNotFound: the store holds no such file.
        ValidationError: a branch other than `HEAD`, or a bad line range.
    """
    if branch not in ("", "HEAD"):
        raise ValidationError(
            f"branch {branch!r} is not served: {repo.name} is served from the text the team "
            "store indexed",
            hint='Omit `branch` (or pass "HEAD").',
            details={"field": "branch", "value": branch})
    rel = path.strip().lstrip("/")
    text = store.stored_text(repo.id, rel)
    if text is None:
        raise not_found(repo.name, path, "not in the index")
    return replace(line_range(repo.name, rel, text, "HEAD", start, end), index_state="indexed")


def working_tree_branch(repository: str, root: str, asked: str) -> str:
    """The branch a local repository's `file_content` serves: the one checked out in its
    working tree (`HEAD` outside git). `asked` must be `HEAD`, that branch or (a prefix of
    at least 7 hex digits of) its commit.

    Raises:
        ValidationError: another branch was asked for.
    """
    head = checked_out(root)
    current = head.branch if head is not None and head.branch else "HEAD"
    sha = head.sha if head is not None else None
    if asked in ("", "HEAD", current) or (sha and len(asked) >= 7 and sha.startswith(asked)):
        return current
    has = head.label if head is not None else "no git branch (not a git repository)"
    raise ValidationError(
        f"branch {asked!r} is not served: {repository} is read from its working tree, which "
        f"has {has} checked out",
        hint=f'Omit `branch` (or pass "HEAD" or "{current}"): ctxd indexes and serves the '
        "working tree only; check the branch out and re-index to read another one.",
        details={"field": "branch", "value": asked, "checked_out": current,
                 "commit": sha},
    )


def zoekt_file_content(
    client: ZoektClient, repository: str, path: str, branch: str, start: int | None,
    end: int | None,
) -> FileContent:
    """A file of a repository only Zoekt knows (the whole-file recipe), as a line range."""
    text = client.file_content(repository, path, branch)
    return line_range(repository, path, text, branch, start, end)


def line_range(
    repository: str, path: str, text: str, branch: str, start: int | None, end: int | None,
    *, truncated: bool = False,
) -> FileContent:
    """Lines `start..end` (1-based, inclusive; default the whole file) of `text`.

    Line ends are `\n`, `\r\n` or a bare `\r` (numbered like the index numbers them) and
    come back as `\n`; a range that reaches the last line keeps the file's final newline,
    so the whole file's `content` is the file's text.

    Raises:
        ValidationError: start < 1, end < start, or a start past the last line (line 1
            of an empty file is its empty content).
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    final_newline = text.endswith("\n")
    lines = text.split("\n")
    if final_newline:
        lines.pop()
    total = len(lines)
    a = 1 if start is None else start  # 0 is a bad line number, not "from the start"
    b = total if end is None else end
    if a < 1 or b < a:
        raise ValidationError(
            f"invalid line range {a}:{b}",
            hint=f"Lines are 1-based and inclusive; this file has {total} lines.",
            details={"field": "start_line", "start_line": a, "end_line": b, "total_lines": total},
        )
    if a > max(total, 1):
        raise ValidationError(
            f"line range {a}:{b} starts past the end of {path}, which has {total} lines",
            hint=f"Ask for lines 1 to {total}." if total else "The file is empty.",
            details={"field": "start_line", "start_line": a, "end_line": b, "total_lines": total},
        )
    b = min(b, total)
    content = "\n".join(lines[a - 1 : b])
    if final_newline and b == total and a <= total:
        content += "\n"
    return FileContent(repository=repository, path=path, language=detect_language(path),
                       content=content, start_line=a, end_line=b,
                       total_lines=total, branch=branch, truncated=truncated)
