"""The use cases of ctxd, shared by the CLI, the MCP server and the watcher.

`Service(settings)` owns the store and embedder lifecycle: one store connection per
thread (MCP runs sync tools in worker threads): the SQLite file in the home, or the
PostgreSQL store at `[store] url` (`indexer.store.open`), one lazily loaded embedding
model per process guarded by a lock. Every method takes plain values and returns records
or plain dicts; rendering happens in `server/cli/render.py`.

A long-lived service (the daemon, `ctxd serve`) holds the search accelerators in memory
for a large SQLite index: the vector matrix and the keyword postings (both read the whole
local index); over a PostgreSQL store it holds neither (the database searches its HNSW
and full-text indexes, and a laptop never copies a team's vectors); the distinct symbol
names it holds for both.

Here: resources (store per thread, embedder, write lock), `index`, and the inventory
(`repos`, `status`, `list_repos`, `health`, `freshness`, `remove`). The search use cases
(`search` in every mode, `lexical`, `symbols`, `references`, `files`, `file_content`)
come from the `SearchCases` mixin in `server/search_cases.py`.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ctxd.indexer.embedder import Embedder, SentenceTransformerEmbedder, Vectors
from ctxd.indexer.errors import IndexNotFound, QueryError, ValidationError
from ctxd.indexer.memory import release_free_memory
from ctxd.indexer.pipeline import Indexer, IndexStats, ProgressFn
from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.open import WriterLock, open_store, write_lock, writers_at_work
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.storage_errors import free_bytes, last_storage_error, storage_errors
from ctxd.indexer.store.store import RepoRow
from ctxd.indexer.walk.gitrefs import branch_rows
from ctxd.indexer.walk.repo_options import options_view, pinned_options, with_options
from ctxd.indexer.walk.rootguard import check_index_root
from ctxd.indexer.walk.rootpin import moved_root
from ctxd.indexer.walk.walker import validate_root
from ctxd.search.keyword_index import KeywordIndex
from ctxd.search.semantic import VectorMatrix
from ctxd.search.symbol_names import SymbolIndex
from ctxd.server.config import Settings
from ctxd.server.search_cases import SearchCases
from ctxd.server.text_args import MAX_FILTER_LENGTH, shown
from ctxd.server.watch_state import HealthSource, watch_health

log = logging.getLogger(__name__)




class LockedEmbedder:
    """An `Embedder` safe to share between threads (the model runs one batch at a time)."""

    def __init__(self, inner: Embedder, step: int = 32) -> None:
        self.inner = inner
        self.step = step
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def embed(self, texts: list[str]) -> Vectors:
        """Embed in sub-batches, releasing the model between them, so that a search's
        one-text query never waits for more than one batch of an index run."""
        if len(texts) <= self.step:
            with self._lock:
                return self.inner.embed(texts)
        parts = []
        for i in range(0, len(texts), self.step):
            with self._lock:
                parts.append(self.inner.embed(texts[i : i + self.step]))
        return np.concatenate(parts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return self.inner.count_tokens(texts)


class Service(SearchCases):
    """ctxd's use cases over one index."""

    def __init__(
        self, settings: Settings, *, embedder: Embedder | None = None, long_lived: bool = False
    ) -> None:
        """
        Args:
            embedder: use this embedder instead of the configured model (tests, benches).
            long_lived: keep the vectors in memory between queries (server, batch search).
        """
        self.settings = settings
        above = settings.search.quantized_above
        local = not settings.store.shared  # accelerators that copy the whole index
        self.matrix = (VectorMatrix(exact_below=above + 1 if above else sys.maxsize)
                       if long_lived and local else None)
        self.keywords = KeywordIndex() if long_lived and local else None
        """The keyword leg's common-term postings (large SQLite indexes; built in the
        background)."""
        self.symbol_index = SymbolIndex() if long_lived else None
        """The distinct symbol names (large indexes; built in the background)."""
        self.watcher: HealthSource | None = None
        """The file watcher of this process (`ctxd serve --watch`), for status and health:
        handed in by the edge that starts it; the service never imports the watcher."""
        self._embedder = LockedEmbedder(embedder) if embedder is not None else None
        self._parent: Service | None = None
        self._local = threading.local()
        self._stores: list[IndexStore] = []
        self._stores_lock = threading.Lock()
        self._init_lock = threading.Lock()

    # -- resources -----------------------------------------------------------------------

    def view(self, settings: Settings) -> Service:
        """A service answering with other request settings (search, walk, chunk) over the
        same index: it shares this one's model (loaded once, by whichever asks first), its
        vectors in memory, its watcher and its SQLite connections (one per thread: the index
        file depends only on the home, which a view shares)."""
        other = Service(settings)
        other._parent = self
        other.matrix = self.matrix
        other.keywords = self.keywords
        other.symbol_index = self.symbol_index
        other.watcher = self.watcher
        return other

    @property
    def embedder(self) -> LockedEmbedder:
        if self._parent is not None:
            return self._parent.embedder
        with self._init_lock:
            if self._embedder is None:
                self._embedder = LockedEmbedder(
                    SentenceTransformerEmbedder(self.settings.embedding)
                )
            return self._embedder

    @property
    def model_loaded(self) -> bool:
        """Whether the embedding model is loaded (without loading it)."""
        if self._parent is not None:
            return self._parent.model_loaded
        return self._embedder is not None

    def store(self) -> IndexStore:
        """This thread's connection to the index (opened on first use)."""
        if self._parent is not None:
            return self._parent.store()
        store: IndexStore | None = getattr(self._local, "store", None)
        if store is None:
            with storage_errors(self.settings.home):
                store = open_store(self.settings.db_path, self.settings.store)
            self._local.store = store
            with self._stores_lock:
                self._stores.append(store)
        return store

    def close(self) -> None:
        """Close every connection this service opened (call from the owning thread at exit);
        a view opens none (they are its parent's)."""
        with self._stores_lock:
            for s in self._stores:
                try:
                    s.close()
                except Exception:
                    log.debug("closing store failed", exc_info=True)
            self._stores.clear()
        self._local = threading.local()

    def write_lock(self, root: str | None = None) -> WriterLock:
        """The lock a writer of the repository at `root` takes: the whole index's on
        SQLite, that repository's on PostgreSQL (`indexer.store.open.write_lock`)."""
        return write_lock(self.settings.db_path, self.settings.store, root)

    def writers(self) -> Callable[[str], bool]:
        """root -> whether a writer holds that repository's lock now (read once)."""
        return writers_at_work(self.settings.db_path, self.settings.store)

    # -- indexing ------------------------------------------------------------------------

    def index(
        self,
        path: str | Path,
        *,
        include_patterns: list[str] | None = None,
        exclude_patterns: list[str] | None = None,
        max_file_size: int | None = None,
        dry_run: bool = False,
        progress: ProgressFn | None = None,
        lock_wait: float | None = None,
        on_lock_wait: Callable[[str], None] | None = None,
        only_paths: list[str] | None = None,
        should_stop: Callable[[], bool] | None = None,
        embed: bool = True,
        force: bool = False,
        reset_options: bool = False,
    ) -> IndexStats:
        """Index (or refresh) the repository at `path`.

        Args:
            include_patterns / exclude_patterns / max_file_size: override the configured
                walk options; they stick to the repository: a later run without them (a
                plain refresh, a dry run, the watcher) uses them again
                (`indexer.walk.repo_options`).
            reset_options: forget the options given to earlier runs: back to the
                configured ones (plus those given to this run).
            dry_run: walk and chunk only; nothing is written or embedded.
            lock_wait: seconds to wait for another writer (None = wait as long as it takes).
            embed: False = phase 1 only (text, symbols); the embeddings stay pending.
            force: index even the filesystem root or a home directory (refused otherwise;
                a watcher's partial run, `only_paths`, is never refused).

        Raises:
            ValidationError: bad path or options (before any work).
            IndexLocked: another process is writing and `lock_wait` ran out.
            ModelMismatch: the index belongs to another model.
        """
        if only_paths is None:
            check_index_root(path, force=force)
        given = {"include_patterns": include_patterns, "exclude_patterns": exclude_patterns,
                 "max_file_size": max_file_size}
        pinned = {} if reset_options else self._pinned_options(path)
        pinned.update({k: tuple(v) if isinstance(v, list) else v
                       for k, v in given.items() if v is not None})
        walk = with_options(self.settings.walk, pinned)
        indexer = Indexer(self.store(), self.embedder, self.settings.chunk)
        if dry_run:
            return indexer.index(path, walk, progress=progress, dry_run=True)
        try:
            with self.writing(wait=lock_wait, on_wait=on_lock_wait,
                              root=str(validate_root(path))):
                return indexer.index(path, walk, progress=progress, only_paths=only_paths,
                                     should_stop=should_stop, embed=embed,
                                     explicit=sorted(pinned))
        finally:
            release_free_memory()  # the embedding buffers' peak, back to the OS

    @contextmanager
    def writing(
        self, wait: float | None = None, on_wait: Callable[[str], None] | None = None,
        root: str | None = None,
    ) -> Iterator[IndexStore]:
        """This thread's store, as the single writer of the repository at `root` (SQLite:
        of the whole index): the write lock held (waiting `wait` seconds, None = as long
        as it takes), storage errors turned into `StorageError`."""
        with storage_errors(self.settings.home):
            lock = self.write_lock(root)
            lock.acquire(wait=wait, on_wait=on_wait)
            try:
                yield self.store()
            finally:
                lock.release()

    def _pinned_options(self, path: str | Path) -> dict[str, Any]:
        """The options given explicitly to earlier runs of the repository at `path` (none
        for a folder not indexed yet)."""
        repo = self.store().repo_by_root(str(validate_root(path)))
        return {} if repo is None else pinned_options(self.settings.walk, repo.options)

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
        client = self.zoekt()
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
        watch = watch_health(self.settings, self.watcher)
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
            "lexical_backend": "zoekt" if self.settings.search.zoekt_url else "embedded",
            "watch": watch,
            "storage": {"home": str(self.settings.home),
                        "free_bytes": free_bytes(self.settings.home),
                        "last_error": last_storage_error()},
        }
        client = self.zoekt()
        if client is not None:
            z = client.health()
            out["zoekt"] = z
            out["ok"] = bool(z.get("ok"))
        return out

    # -- inventory -----------------------------------------------------------------------

    def repo_roots(self) -> dict[str, str]:
        """Each indexed repository's name and folder: one small read, for the edges that
        find the repository they run in (the CLI's current folder, `ctxd serve`'s project)."""
        return {r.name: r.root for r in self.store().repos()}

    def repos(self) -> list[dict[str, Any]]:
        """Every indexed repository with its counts and freshness."""
        store = self.store()
        writing = self.writers()
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
                    "options": options_view(self.settings.walk, repo.options),
                    **({"host": repo.host} if repo.host else {}),
                    **moved_root(repo.root, repo.root_id,
                                 here=repo.host in ("", this_host())),
                }
            )
        return out

    def status(self) -> dict[str, Any]:
        """Where the index lives, its model, size and per-repository state."""
        return self._status(watch_health(self.settings, self.watcher))

    def _status(self, watch: dict[str, Any]) -> dict[str, Any]:
        """`status` with the watcher's health already read (`health` needs it whole)."""
        store = self.store()
        model = store.model()
        size = store.file_bytes()
        repos = self.repos()
        for r in repos:
            r["watch"] = watch["repos"].get(r["name"])
        return {
            "watch": {k: v for k, v in watch.items() if k != "repos"},
            "home": str(self.settings.home),
            "database": self.settings.store_location,
            "engine": store.engine,
            "model": model[0] if model else self.settings.embedding.model,
            "dimension": model[1] if model else None,
            "size_bytes": size,
            "repositories": repos,
            "totals": {
                "repositories": len(repos),
                "files": sum(r["files"] for r in repos),
                "checkpoints": sum(r["checkpoints"] for r in repos),
                "embedded": sum(r["embedded"] for r in repos),
                "symbols": sum(r["symbols"] for r in repos),
            },
            **({"memory": self.memory()} if self.matrix is not None else {}),
        }

    def memory(self) -> dict[str, Any]:
        """What a long-lived service (the daemon) holds in memory for search: the vectors
        (their form, rows, bytes) and the keyword postings and symbol names (`off` below
        their size threshold, `building`, `ready`)."""
        assert self.matrix is not None
        out: dict[str, Any] = {"vectors": {
            "form": "int8 + float16" if self.matrix.coarse else "float32",
            "rows": len(self.matrix), "bytes": self.matrix.nbytes}}
        for name, index in (("keyword_postings", self.keywords),
                            ("symbol_names", self.symbol_index)):
            if index is not None:
                out[name] = index.report()
        return out

    def resolve_repo(self, name_or_path: str) -> tuple[int, str, str]:
        """(id, name, root) of a repository given its name or its folder."""
        store = self.store()
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
        with self.writing(root=root) as store:
            counts = store.repo_counts(repo_id)
            store.remove_repo(repo_id)
            store.checkpoint()  # a large delete: the WAL does not stay at its size
        return {"removed": name, "root": root, "files": counts["files"],
                "checkpoints": counts["checkpoints"], "size_bytes": store.file_bytes(),
                "reclaimable_bytes": store.reclaimable_bytes()}

    def compact(self) -> dict[str, Any]:
        """Give the free space of the index back to the file system (`VACUUM`, then the
        WAL truncated). Waits for another writer (an index run) to finish first."""
        with self.writing() as store:
            before, after = store.compact()
        return {"database": self.settings.store_location, "before_bytes": before,
                "after_bytes": after, "freed_bytes": max(0, before - after)}


    def freshness(self) -> list[dict[str, Any]]:
        """When each repository was last indexed and whether a re-index is running: its
        run started and a live process holds the write lock (a run whose process died
        leaves `index_started_at` behind but no lock holder), plus the embedding backlog
        the active watcher reports (`embedding_backlog`, only when non-zero): this
        process's, else the one another process (the daemon) publishes."""
        writing = self.writers()
        watched = watch_health(self.settings, self.watcher).get("repos", {})
        out: list[dict[str, Any]] = []
        for r in self.store().repos():
            row: dict[str, Any] = {"repository": r.name, "indexed_at": r.indexed_at,
                                   "indexing": is_indexing(r, writing(r.root))}
            backlog = (watched.get(r.name) or {}).get("embedding_backlog")
            if backlog:
                row["embedding_backlog"] = int(backlog)
            out.append(row)
        return out


def is_indexing(repo: RepoRow, writing: bool) -> bool:
    """A repository is being indexed now when its run started and a live process holds the
    write lock (`writing`): a run whose process died leaves `index_started_at` behind."""
    return repo.index_started_at is not None and writing
