"""The inventory use cases: `Inventory`, what is indexed and in what state.

`repos`, `repo_roots`, `list_repos` (local repositories merged with Zoekt's), `status`,
`health`, `freshness` and `memory` read; `remove` and `compact` write, as the index's
single writer (`Resources.writing`). Composed by `server.service.Service`. A repository
is "indexing" when its run started and a live process holds the write lock
(`is_indexing`): a run whose process died leaves `index_started_at` behind but no lock
holder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ctxd.indexer.errors import IndexNotFound, QueryError, ValidationError
from ctxd.indexer.model_embedder import encoder_state_of
from ctxd.indexer.models import IndexStats
from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.records import RepoRow
from ctxd.indexer.store.storage_errors import free_bytes, last_storage_error
from ctxd.indexer.walk.gitrefs import branch_rows
from ctxd.indexer.walk.repo_options import options_view
from ctxd.indexer.walk.rootpin import moved_root
from ctxd.server.resources import Resources
from ctxd.server.text_args import MAX_FILTER_LENGTH, shown
from ctxd.server.watch_state import watch_health


class Inventory:
    """The inventory use cases over one service's `Resources`."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    def list_repos(self, filter: str | None = None) -> dict[str, Any]:
        """Local repositories merged with Zoekt's `/api/list`, optionally regex-filtered.

        A local repository's `branches` is the branch and commit checked out in its
        working tree (read from `.git`), `[]` outside git; its files are the working
        tree's, whatever the branch."""
        rx = None
        if filter and len(filter) > MAX_FILTER_LENGTH:
            raise ValidationError(
                f"filter is {len(filter)} characters long; at most {MAX_FILTER_LENGTH}",
                hint="The filter is a regular expression matched against repository names: "
                "a name or a short pattern, e.g. `shop` or `^github.com/org/`.",
                details={"field": "filter", "length": len(filter)})
        if filter:
            try:
                rx = re.compile(filter)
            except re.error as exc:
                raise QueryError(
                    f"Query syntax error: invalid filter regex {shown(filter)!r}: {exc}",
                    hint="The filter is a regular expression matched against repository names, "
                    "e.g. `shop` or `^github.com/org/`.",
                    details={"field": "filter", "value": filter},
                ) from exc
        repos: list[dict[str, Any]] = [
            {"name": r["name"], "root": r["root"], "source": "local", "files": r["files"],
             "bytes": r["bytes"],
             "branches": [] if "root_moved" in r else branch_rows(r["root"]),
             "symbols": r["symbols"] > 0,
             "indexed_at": r["indexed_at"], "indexing": r["indexing"], "coverage": r["coverage"],
             "options": r["options"], **{k: r[k] for k in ("root_moved",) if k in r}}
            for r in self.repos()
        ]
        client = self.resources.zoekt()
        if client is not None:
            repos.extend(
                {"name": z.name, "source": "zoekt", "files": z.files, "bytes": z.content_bytes,
                 "branches": [{"name": b, "sha": sha} for b, sha in z.branches],
                 "symbols": z.has_symbols,
                 "indexed_at": z.indexed_at.isoformat() if z.indexed_at else None,
                 "indexing": False, "coverage": None, "options": None}
                for z in client.list_repos()
            )
        if rx is not None:
            repos = [r for r in repos if rx.search(r["name"])]
        return {"repositories": repos, "total": len(repos),
                "total_files": sum(r["files"] for r in repos),
                "total_bytes": sum(r["bytes"] for r in repos)}

    def health(self) -> dict[str, Any]:
        """The store's state and, when configured, Zoekt's."""
        watch = watch_health(self.resources.settings, self.resources.watcher)
        st = self._status(watch)
        out: dict[str, Any] = {
            "ok": True,
            "index": {k: st[k] for k in ("database", "model", "dimension", "size_bytes")},
            "totals": st["totals"],
            "repositories": [
                {k: r[k] for k in ("name", "files", "checkpoints", "embedded", "coverage",
                                   "indexed_at", "indexing", "options", "root_moved") if k in r}
                for r in st["repositories"]
            ],
            "lexical_backend": "zoekt" if self.resources.settings.search.zoekt_url else "embedded",
            "watch": watch,
            "storage": {"home": str(self.resources.settings.home),
                        "free_bytes": free_bytes(self.resources.settings.home),
                        "last_error": last_storage_error()},
        }
        client = self.resources.zoekt()
        if client is not None:
            z = client.health()
            out["zoekt"] = z
            out["ok"] = bool(z.get("ok"))
        return out

    def repo_roots(self) -> dict[str, str]:
        """Each indexed repository's name and folder: one small read, for the edges that
        find the repository they run in (the CLI's current folder, `ctxd serve`'s project)."""
        return {r.name: r.root for r in self.resources.store().repos()}

    def repos(self) -> list[dict[str, Any]]:
        """Every indexed repository with its counts and freshness."""
        store = self.resources.store()
        writing = self.resources.writers()
        out = []
        for repo in store.repos():
            counts = store.repo_counts(repo.id)
            out.append(
                {
                    "name": repo.name,
                    "root": repo.root,
                    "files": counts["files"],
                    "checkpoints": counts["checkpoints"],
                    "embedded": counts["embedded"],
                    "symbols": counts["symbols"],
                    "bytes": counts["bytes"],
                    "coverage": round(counts["embedded"] / counts["checkpoints"], 4)
                    if counts["checkpoints"]
                    else 1.0,
                    "indexed_at": repo.indexed_at,
                    "indexing": is_indexing(repo, writing(repo.root)),
                    "skipped": skipped_files(store, repo),
                    "options": options_view(self.resources.settings.walk, repo.options),
                    **({"host": repo.host} if repo.host else {}),
                    **moved_root(repo.root, repo.root_id,
                                 here=repo.host in ("", this_host())),
                }
            )
        return out

    def status(self) -> dict[str, Any]:
        """Where the index lives, its model, size and per-repository state."""
        return self._status(watch_health(self.resources.settings, self.resources.watcher))

    def _status(self, watch: dict[str, Any]) -> dict[str, Any]:
        """`status` with the watcher's health already read (`health` needs it whole)."""
        store = self.resources.store()
        model = store.model()
        size = store.file_bytes()
        repos = self.repos()
        for r in repos:
            r["watch"] = watch["repos"].get(r["name"])
        return {
            "watch": {k: v for k, v in watch.items() if k != "repos"},
            "home": str(self.resources.settings.home),
            "database": self.resources.settings.store_location,
            "engine": store.engine,
            "model": model[0] if model else self.resources.settings.embedding.model,
            "dimension": model[1] if model else None,
            "size_bytes": size,
            "query_encoder": encoder_state_of(self.resources.settings.embedding),
            "repositories": repos,
            "totals": {
                "repositories": len(repos),
                "files": sum(r["files"] for r in repos),
                "checkpoints": sum(r["checkpoints"] for r in repos),
                "embedded": sum(r["embedded"] for r in repos),
                "symbols": sum(r["symbols"] for r in repos),
            },
            **({"memory": self.memory()} if self.resources.matrix is not None else {}),
        }

    def memory(self) -> dict[str, Any]:
        """What a long-lived service (the daemon) holds in memory for search: the vectors
        (their form, rows, bytes) and the keyword postings and symbol names (`off` below
        their size threshold, `building`, `ready`)."""
        assert self.resources.matrix is not None
        out: dict[str, Any] = {"vectors": {
            "form": "int8 + float16" if self.resources.matrix.coarse else "float32",
            "rows": len(self.resources.matrix), "bytes": self.resources.matrix.nbytes}}
        for name, index in (("keyword_postings", self.resources.keywords),
                            ("symbol_names", self.resources.symbol_index)):
            if index is not None:
                out[name] = index.report()
        return out

    def resolve_repo(self, name_or_path: str) -> tuple[int, str, str]:
        """(id, name, root) of a repository given its name or its folder."""
        store = self.resources.store()
        repo = store.repo_by_name(name_or_path)
        if repo is None and os.path.isdir(name_or_path):
            repo = store.repo_by_root(str(Path(name_or_path).resolve()))
        if repo is None:
            known = ", ".join(r.name for r in store.repos()) or "none"
            raise IndexNotFound(
                f"Repository not indexed: {name_or_path}",
                hint=f"Indexed repositories: {known}. `ctxd repos` lists them.",
                details={"field": "repository", "value": name_or_path},
            )
        return repo.id, repo.name, repo.root

    def remove(self, name_or_path: str) -> dict[str, Any]:
        """Delete a repository and all its rows from the index."""
        repo_id, name, root = self.resolve_repo(name_or_path)
        with self.resources.writing(root=root) as store:
            counts = store.repo_counts(repo_id)
            store.remove_repo(repo_id)
            with store.transaction():
                store.set_meta(SKIPPED_META.format(repo_id), "")
            store.checkpoint()  # a large delete: the WAL does not stay at its size
        return {"removed": name, "root": root, "files": counts["files"],
                "checkpoints": counts["checkpoints"], "size_bytes": store.file_bytes(),
                "reclaimable_bytes": store.reclaimable_bytes()}

    def compact(self) -> dict[str, Any]:
        """Give the free space of the index back to the file system (`VACUUM`, then the
        WAL truncated). Waits for another writer (an index run) to finish first."""
        with self.resources.writing() as store:
            before, after = store.compact()
        return {"database": self.resources.settings.store_location, "before_bytes": before,
                "after_bytes": after, "freed_bytes": max(0, before - after)}


    def freshness(self) -> list[dict[str, Any]]:
        """When each repository was last indexed and whether a re-index is running: its
        run started and a live process holds the write lock (a run whose process died
        leaves `index_started_at` behind but no lock holder), plus the embedding backlog
        the active watcher reports (`embedding_backlog`, only when non-zero): this
        process's, else the one another process (the daemon) publishes."""
        writing = self.resources.writers()
        watched = watch_health(self.resources.settings, self.resources.watcher).get("repos", {})
        out: list[dict[str, Any]] = []
        for r in self.resources.store().repos():
            row: dict[str, Any] = {"repository": r.name, "indexed_at": r.indexed_at,
                                   "indexing": is_indexing(r, writing(r.root))}
            backlog = (watched.get(r.name) or {}).get("embedding_backlog")
            if backlog:
                row["embedding_backlog"] = int(backlog)
            out.append(row)
        return out


SKIPPED_META = "skipped_files:{}"
"""The meta key of a repository's (by id) skipped files, as its last whole run counted
them (`remember_skipped`)."""


def remember_skipped(store: IndexStore, stats: IndexStats) -> None:
    """Keep the skipped files by reason of a run that walked the whole repository (not a
    watcher's paths, not a stopped run), so the status and the page show them without a
    new walk (`skipped_files`)."""
    repo = store.repo_by_name(stats.repository)
    if repo is None:
        return
    value = json.dumps({"root": repo.root, "at": repo.indexed_at,
                        "counts": dict(sorted(stats.files_skipped.items()))})
    with store.transaction():
        store.set_meta(SKIPPED_META.format(repo.id), value)


def skipped_files(store: IndexStore, repo: RepoRow) -> dict[str, Any] | None:
    """`{"counts": {reason: files}, "at": when}` from the repository's last whole run
    (`remember_skipped`); None when no run since this was kept, or the id now names
    another folder."""
    raw = store.get_meta(SKIPPED_META.format(repo.id))
    try:
        data = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("root") != repo.root:
        return None
    counts = data.get("counts")
    if not isinstance(counts, dict):
        return None
    return {"counts": {str(k): int(v) for k, v in counts.items()}, "at": data.get("at")}


def is_indexing(repo: RepoRow, writing: bool) -> bool:
    """A repository is being indexed now when its run started and a live process holds the
    write lock (`writing`): a run whose process died leaves `index_started_at` behind."""
    return repo.index_started_at is not None and writing
