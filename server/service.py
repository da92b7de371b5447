"""The use cases of ctxd, shared by the CLI, the MCP server and the watcher: `Service`.

`Service(settings)` composes small collaborators over one `Resources` (a store
connection per thread, the embedding model, the write lock, the search accelerators a
long-lived process holds; `server.resources`):

- `SearchCases` (`server.search_cases`): search in every mode, explain, lexical, files,
  references, symbols;
- `FileContents` (`server.file_contents`): file content;
- `GraphCases` (`server.graph_cases`): how code connects: resolved references, callers,
  callees, call paths, impact;
- `Inventory` (`server.inventory`): repositories, status, health, freshness, remove,
  compact;
- indexing itself (`index`, here): one run of the pipeline under the write lock; the
  background index jobs of the MCP server are `server.jobs.JobManager`'s, over a service.

The use cases with a request record are routed by `ROUTES` (`answer`); their methods come
from `server.use_cases.UseCases`. Every method takes plain values and returns records or
plain dicts; rendering happens at the edges (`server/cli/render.py`, `server/mcp/`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from ctxd.indexer.embedder import Embedder
from ctxd.indexer.memory import release_free_memory
from ctxd.indexer.models import IndexStats, ProgressFn
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.location import this_host
from ctxd.indexer.store.open import WriterLock
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.repo_options import pinned_options, with_options
from ctxd.indexer.walk.rootguard import check_index_root
from ctxd.indexer.walk.rootpin import RootMoved, root_moved, unconfirmed_swap
from ctxd.indexer.walk.walker import validate_root
from ctxd.search import legs
from ctxd.search.filters import SearchFilters
from ctxd.search.keyword_index import KeywordIndex, KeywordPostings
from ctxd.search.legs import Legs
from ctxd.search.models import LexicalBackend
from ctxd.search.parsed import ParsedQuery
from ctxd.search.symbol_names import SymbolIndex, SymbolNames
from ctxd.search.vectors import VectorMatrix
from ctxd.search.zoekt.client import ZoektClient
from ctxd.server.config import Settings
from ctxd.server.file_contents import FileContents
from ctxd.server.graph_cases import GraphCases
from ctxd.server.inventory import Inventory, remember_skipped
from ctxd.server.resources import LockedEmbedder, Resources
from ctxd.server.search_cases import SearchCases
from ctxd.server.use_cases import UseCases
from ctxd.server.watch_state import HealthSource

__all__ = ["LockedEmbedder", "Service"]


class Service(UseCases):
    """ctxd's use cases over one index."""

    def __init__(
        self, settings: Settings, *, embedder: Embedder | None = None, long_lived: bool = False,
        resources: Resources | None = None,
    ) -> None:
        """
        Args:
            embedder: use this embedder instead of the configured model (tests, benches).
            long_lived: keep the vectors in memory between queries (server, batch search).
            resources: share these (a view); the other arguments are then unused.
        """
        self.settings = settings
        self.resources = resources or Resources(settings, embedder=embedder,
                                                long_lived=long_lived)
        self.searches = SearchCases(self.resources)
        self.contents = FileContents(self.resources)
        self.inventory = Inventory(self.resources)
        self.graph = GraphCases(self.resources)
        self.routes: dict[str, Callable[[Any], Any]] = {
            "search": self.searches.search,
            "explain": self.searches.explain,
            "lexical": self.searches.lexical,
            "files": self.searches.files,
            "references": self.searches.references,
            "symbols": self.searches.symbols,
            "file_content": self.contents.file_content,
            "graph_refs": self.graph.graph_refs,
            "calls": self.graph.calls,
            "call_path": self.graph.call_path,
            "impact": self.graph.impact,
        }
        """Use case name -> the collaborator's method that answers its request record."""

    def answer(self, name: str, request: Any) -> Any:
        return self.routes[name](request)

    # -- resources -----------------------------------------------------------------------

    def view(self, settings: Settings) -> Service:
        """A service answering with other request settings (search, walk, chunk) over the
        same index: it shares this one's model (loaded once, by whichever asks first), its
        vectors in memory, its watcher and its connections (`Resources.view`)."""
        return Service(settings, resources=self.resources.view(settings))

    @property
    def embedder(self) -> LockedEmbedder:
        return self.resources.embedder

    @property
    def model_loaded(self) -> bool:
        """Whether the embedding model is loaded (without loading it)."""
        return self.resources.model_loaded

    @property
    def matrix(self) -> VectorMatrix | None:
        return self.resources.matrix

    @matrix.setter
    def matrix(self, matrix: VectorMatrix | None) -> None:
        self.resources.matrix = matrix

    @property
    def keywords(self) -> KeywordIndex | None:
        return self.resources.keywords

    @keywords.setter
    def keywords(self, index: KeywordIndex | None) -> None:
        self.resources.keywords = index

    @property
    def symbol_index(self) -> SymbolIndex | None:
        return self.resources.symbol_index

    @symbol_index.setter
    def symbol_index(self, index: SymbolIndex | None) -> None:
        self.resources.symbol_index = index

    @property
    def watcher(self) -> HealthSource | None:
        """The file watcher of this process, handed in by the edge that starts it."""
        return self.resources.watcher

    @watcher.setter
    def watcher(self, watcher: HealthSource | None) -> None:
        self.resources.watcher = watcher

    def store(self) -> IndexStore:
        """This thread's connection to the index (opened on first use)."""
        return self.resources.store()

    def close(self) -> None:
        """Close every connection this service opened (call from the owning thread at exit);
        a view opens none (they are its parent's)."""
        self.resources.close()

    def write_lock(self, root: str | None = None) -> WriterLock:
        return self.resources.write_lock(root)

    def writers(self) -> Callable[[str], bool]:
        return self.resources.writers()

    def writing(
        self, wait: float | None = None, on_wait: Callable[[str], None] | None = None,
        root: str | None = None,
    ) -> AbstractContextManager[IndexStore]:
        return self.resources.writing(wait, on_wait, root)

    def postings(self, store: IndexStore) -> KeywordPostings | None:
        return self.resources.postings(store)

    def symbol_names(self, store: IndexStore) -> SymbolNames | None:
        return self.resources.symbol_names(store)

    def zoekt(self) -> ZoektClient | None:
        return self.resources.zoekt()

    def lexical_backend(self) -> LexicalBackend:
        return self.searches.lexical_backend()

    def warm_caches(self, store: IndexStore) -> None:
        """Count what an unscoped semantic or hybrid query needs counted once (the
        embedding coverage, a count over every checkpoint), so its first one does not."""
        legs.coverage(store, ())

    def hybrid_legs(
        self, query: ParsedQuery | str, *, depth: int, filters: SearchFilters | None = None,
        store: IndexStore | None = None,
    ) -> Legs:
        """The candidates of each hybrid leg, each leg's time (ms) and notes."""
        return self.searches.hybrid_legs(query, depth=depth, filters=filters, store=store)

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
        should_stop: Callable[[], bool] | None = None,
        force: bool = False,
        reset_options: bool = False,
        only_paths: list[str] | None = None,
        embed: bool = True,
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
            only_paths: a watcher's partial run: these paths only.
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
            if not force and not dry_run:
                self._confirmed_root(path)
        root: str | None = None

        def checked_root() -> str:  # the root, resolved once for this run
            nonlocal root
            if root is None:
                root = str(validate_root(path))
            return root

        given = {"include_patterns": include_patterns, "exclude_patterns": exclude_patterns,
                 "max_file_size": max_file_size}
        pinned = {} if reset_options else self._pinned_options(checked_root())
        pinned.update({k: tuple(v) if isinstance(v, list) else v
                       for k, v in given.items() if v is not None})
        walk = with_options(self.settings.walk, pinned)
        indexer = Indexer(self.store(), self.embedder, self.settings.chunk,
                          embed_budget=self.settings.embedding.run_budget)
        if dry_run:
            return indexer.index(path, walk, progress=progress, dry_run=True)
        try:
            with self.writing(wait=lock_wait, on_wait=on_lock_wait, root=checked_root()):
                stats = indexer.index(path, walk, progress=progress, only_paths=only_paths,
                                      should_stop=should_stop, embed=embed,
                                      explicit=sorted(pinned))
                if only_paths is None and not stats.stopped:  # a whole walk's counts
                    remember_skipped(self.store(), stats)
                return stats
        finally:
            release_free_memory()  # the embedding buffers' peak, back to the OS

    def _confirmed_root(self, path: str | Path) -> None:
        """Refuse a full run of a stored root that another folder of this user's replaced
        while other users can write its parent (`rootpin.unconfirmed_swap`, issue 39 item
        7): `force` is the user's confirmation.

        Raises:
            RootMoved: naming the folder, the parent and `--force`.
        """
        stored = self.store().repo_by_root(os.path.abspath(os.path.expanduser(str(path))))
        if stored is None or (stored.host and stored.host != this_host()):
            return
        why = unconfirmed_swap(stored.root, stored.root_id)
        if why is not None:
            moved = root_moved(stored.root, why)
            raise RootMoved(
                moved.message, details=moved.details,
                hint=f"If you put that folder there yourself, confirm with `ctxd index "
                f"{stored.root} --force` (`force: true`); if you did not, check who can "
                f"write {os.path.dirname(stored.root)} first.")

    def _pinned_options(self, root: str) -> dict[str, Any]:
        """The options given explicitly to earlier runs of the repository at `root` (none
        for a folder not indexed yet)."""
        repo = self.store().repo_by_root(root)
        return {} if repo is None else pinned_options(self.settings.walk, repo.options)

    # -- inventory -----------------------------------------------------------------------

    def list_repos(self, filter: str | None = None) -> dict[str, Any]:
        return self.inventory.list_repos(filter)

    def health(self) -> dict[str, Any]:
        return self.inventory.health()

    def repo_roots(self) -> dict[str, str]:
        return self.inventory.repo_roots()

    def repos(self) -> list[dict[str, Any]]:
        return self.inventory.repos()

    def status(self) -> dict[str, Any]:
        return self.inventory.status()

    def memory(self) -> dict[str, Any]:
        return self.inventory.memory()

    def resolve_repo(self, name_or_path: str) -> tuple[int, str, str]:
        return self.inventory.resolve_repo(name_or_path)

    def remove(self, name_or_path: str) -> dict[str, Any]:
        return self.inventory.remove(name_or_path)

    def compact(self) -> dict[str, Any]:
        return self.inventory.compact()

    def freshness(self) -> list[dict[str, Any]]:
        return self.inventory.freshness()
