"""What every use case of a `Service` shares: `Resources`.

One store connection per thread (MCP runs sync tools in worker threads): the SQLite file
in the home, or the PostgreSQL store at `[store] url` (`indexer.store.open`); one lazily
loaded embedding model per process, behind a lock (`LockedEmbedder`); the index's write
lock; and, in a long-lived process (the daemon, `ctxd serve`), the search accelerators
held in memory: the vector matrix for a large SQLite index (it reads the whole local index;
over PostgreSQL the database searches its own vectors, and a laptop never copies a team's
vectors), the keyword postings of a large index's common words (either store: over
PostgreSQL they spare a search scoring every row that holds a common word in SQL) and
the distinct symbol names.

A view (`view(settings)`) answers with other request settings over the same index: it
shares its parent's model, accelerators, watcher and connections (the index depends only
on the home, which a view shares). Invariant: a connection is used only by the thread that
opened it; `close()` closes them all.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ctxd.indexer.embedder import Embedder, Vectors
from ctxd.indexer.model_embedder import ModelEmbedder
from ctxd.indexer.store.open import WriterLock, open_store, write_lock, writers_at_work
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.store.storage_errors import storage_errors
from ctxd.search.keyword_index import KeywordIndex, KeywordPostings
from ctxd.search.legs import LegOptions, LegSources
from ctxd.search.symbol_names import SymbolIndex, SymbolNames
from ctxd.search.vectors import VectorMatrix
from ctxd.search.zoekt.client import ZoektClient
from ctxd.server.config import Settings
from ctxd.server.watch_state import HealthSource

log = logging.getLogger("ctxd.server.service")


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

    @property
    def tokens_add_up(self) -> bool:
        return bool(getattr(self.inner, "tokens_add_up", False))

    def prepare(self) -> None:
        """Start loading the model in a thread, where the embedder can (`ModelEmbedder`)."""
        if (prepare := getattr(self.inner, "prepare", None)) is not None:
            prepare()

    def expect(self, texts: int) -> None:
        """An index run will embed `texts` texts (`ModelEmbedder.expect`)."""
        if (expect := getattr(self.inner, "expect", None)) is not None:
            expect(texts)

    def encoder_state(self) -> dict[str, Any] | None:
        """The query encoder for `status` (`ModelEmbedder.encoder_state`), None for an
        embedder handed in (tests, benches)."""
        state = getattr(self.inner, "encoder_state", None)
        return state() if state is not None else None


class Resources:
    """The connections, model, locks and in-memory accelerators of one service."""

    def __init__(
        self, settings: Settings, *, embedder: Embedder | None = None, long_lived: bool = False
    ) -> None:
        self.settings = settings
        above = settings.search.quantized_above
        local = not settings.store.shared  # accelerators that copy the whole index
        self.matrix = (VectorMatrix(exact_below=above + 1 if above else sys.maxsize)
                       if long_lived and local else None)
        self.keywords = KeywordIndex() if long_lived else None
        """The keyword leg's common-term postings (large indexes, on either store; built in
        the background)."""
        self.symbol_index = SymbolIndex() if long_lived else None
        """The distinct symbol names (large indexes; built in the background)."""
        self.watcher: HealthSource | None = None
        """The file watcher of this process (`ctxd serve --watch`), for status and health:
        handed in by the edge that starts it; the service never imports the watcher."""
        self._embedder = LockedEmbedder(embedder) if embedder is not None else None
        self._long_lived = long_lived
        self._parent: Resources | None = None
        self._local = threading.local()
        self._stores: list[IndexStore] = []
        self._stores_lock = threading.Lock()
        self._init_lock = threading.Lock()

    def view(self, settings: Settings) -> Resources:
        """These resources, answering with other request settings (module docstring)."""
        other = Resources(settings)
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
                self._embedder = LockedEmbedder(ModelEmbedder(
                    self.settings.embedding, background_export=self._long_lived))
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
        """Close every connection these resources opened (call from the owning thread at
        exit); a view opens none (they are its parent's)."""
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

    def postings(self, store: IndexStore) -> KeywordPostings | None:
        """The keyword postings in memory, if these resources hold them (long-lived, large
        index) and they are built (`search.keyword_index`); possibly older than the text,
        which the keyword search corrects for while they are rebuilt."""
        return self.keywords.latest(store) if self.keywords is not None else None

    def symbol_names(self, store: IndexStore) -> SymbolNames | None:
        """The distinct symbol names in memory for `store`'s text as it is now, if these
        resources hold them and they are built (`search.symbol_names`)."""
        return self.symbol_index.current(store) if self.symbol_index is not None else None

    def zoekt(self) -> ZoektClient | None:
        """A client for the configured Zoekt server, or None without `search.zoekt_url`."""
        url = self.settings.search.zoekt_url
        return ZoektClient(url, timeout_ms=self.settings.search.zoekt_timeout_ms) if url else None

    def leg_options(self) -> LegOptions:
        """The hybrid legs' options from `[search]` and `[walk]`."""
        s = self.settings.search
        return LegOptions(zoekt_url=s.zoekt_url, zoekt_timeout_ms=s.zoekt_timeout_ms,
                          lexical_timeout_ms=s.hybrid_lexical_timeout_ms,
                          lexical_weight=s.lexical_weight, summary_weight=s.summary_weight,
                          text_rules=self.settings.walk.text_rules())

    def leg_sources(self, store: IndexStore) -> LegSources:
        """What the hybrid legs search with, for a search on `store`."""
        return LegSources(embedder=self.embedder, thread_store=self.store,
                          postings=self.postings, matrix=self.matrix,
                          own_worker_store=store.location == self.settings.store_location)
