"""One repository's code graph as the resolver reads it: `Workspace`.

`Workspace.open(store, repository)` holds the repository's file list (path <-> id), its
`RepoLayout` (`search.graph.modules`) and the graphs it has read: decoded (`graph`), or
only peeked at (`peek`: a file's language, imports and strings, several times cheaper, so
that a query's many candidate files are sorted out before any is decoded); and finds the
files that may use another file's definitions (`importers`: the files whose imports end
in the given keys, from the store's `graph_links`, each key read once). What it reads
stays valid while the store's text generation does not move: `Workspace.open` keeps the
state of the last few (store location, repository, text generation) and hands each query
a `Workspace` over it with the query's own connection (a daemon's worker threads never
share one), so a warm daemon answers the next query from memory, and an edit (which
moves the generation) is seen by the next query. The repository's file list is read
again at each generation, but when it is the same as the last one's (most edits change a
file's text, not which files there are) its tables and module layout are kept
(`_layouts`), not built again over a monorepo's 80,000 paths.

`collector_paused()` holds Python's cyclic garbage collector off while a query runs: a
query makes (and the workspace keeps) hundreds of thousands of small objects, and each
full collection the allocations trigger walks every object of the process (35 ms and
more in a daemon keeping decoded graphs): 2-3x the query's own time. When the last query
leaves, what the queries made (most of it kept: decoded graphs, peeks, lookups) is moved
to the oldest generation unscanned (`gc.freeze()` then `gc.unfreeze()`), instead of the
young collection the next allocation would start over all of it (5-40 ms after a cold
query); a cycle the queries left is freed by the next full collection.

Invariants: reads only; a file without a stored graph (not code, lexical-only, indexed
before the graph existed) reads as None; the collector is back on (if it was) once the
last concurrent query leaves `collector_paused`.
"""

from __future__ import annotations

import gc
import hashlib
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar, cast

from ctxd.indexer.graph import FileGraph
from ctxd.indexer.graph.model import Peek
from ctxd.indexer.graph.reading import decode_lazy, peek
from ctxd.indexer.store.protocol import IndexStore
from ctxd.search.graph.build_files import BUILD_ENDS, is_build_file
from ctxd.search.graph.modules import RepoLayout

__all__ = ["Workspace", "collector_paused"]

KEEP_WORKSPACES = 4
"""Workspaces kept per process (each holds one repository's paths and decoded graphs)."""
KEEP_GRAPHS = 20_000
"""Decoded graphs a workspace keeps (and as many peeks, and import keys' files)."""
LINK_ALL_FILES = 20_000
"""A repository of at most this many files has all its import keys read at once (one
read of its `graph_links`) after `KEY_READS` reads of a few keys with a join on its
files; a larger one has each key read when asked, from every repository, its own kept."""
KEY_READS = {"sqlite": 0, "postgresql": 12}
"""Per engine, the reads of a few import keys a workspace makes before it reads them all:
SQLite reads a repository's keys at once in 5-10 ms, fewer than a query's few reads
cost; PostgreSQL's planner scans every repository's keys for that (30-90 ms at 1M
checkpoints) where a read of a few keys takes ~1 ms."""
KEEP_BLOBS = 5_000
"""Stored graphs a workspace keeps read but not decoded (`preload`, `peek`)."""

KEEP_READ = 20_000
"""Decoded graphs and peeks kept by their blob's content across text generations."""

_cache: OrderedDict[tuple[str, str, int], _Shared] = OrderedDict()
_lock = threading.Lock()
_read_cache: OrderedDict[tuple[bytes, Callable[[bytes], object]], object] = OrderedDict()
"""(blob digest, reader) -> what the reader made of it: an edit moves the text generation
and so starts a new workspace, but the files it did not change have the same blobs, whose
decoded graphs (and peeks) are taken from here instead of being decoded again."""

_layouts: OrderedDict[tuple[str, str], tuple[RepoLayout, dict[str, str], dict[int, str],
                                              dict[str, int]]] = OrderedDict()
"""(store location, repository) -> its last layout, the build files it read (path ->
text) and its files (id -> path, path -> id), kept for the next text generation
(`_Shared`: the same files keep their tables, `_Shared._layout`)."""

_T = TypeVar("_T")

_pausing = 0
"""Queries inside `collector_paused` now."""
_restore = False
"""Whether the collector was on when the first of them came in."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (nested and concurrent blocks
    count: the last one out turns it back on, if it was on). What the block leaves
    unreachable is freed by reference counting, the rare cycle by the next collection."""
    global _pausing, _restore
    with _lock:
        if _pausing == 0:
            _restore = gc.isenabled()
            gc.disable()
        _pausing += 1
    try:
        yield
    finally:
        with _lock:
            _pausing -= 1
            if _pausing == 0 and _restore:
                if not gc.get_freeze_count():  # (a process that froze its own: as it was)
                    gc.freeze()  # what the queries made joins the oldest generation, with
                    gc.unfreeze()  # no pass over it (two list splices)
                gc.enable()


def _read(blob: bytes, reader: Callable[[bytes], _T]) -> _T:
    """`reader(blob)`, kept by the blob's content (a graph is immutable)."""
    key = (hashlib.blake2b(blob, digest_size=16).digest(), reader)
    with _lock:
        if key in _read_cache:
            _read_cache.move_to_end(key)
            return cast(_T, _read_cache[key])
    got = reader(blob)
    with _lock:
        _read_cache[key] = got
        while len(_read_cache) > KEEP_READ:
            _read_cache.popitem(last=False)
    return got


class _Shared:
    """What every query at one text generation shares: the repository's paths, layout,
    decoded graphs and derived lookups (no connection: each query brings its own)."""

    def __init__(self, store: IndexStore, repository: str) -> None:
        self.repository = repository
        self.repo_id = store.repo_ids().get(repository, -1)
        self.paths: dict[int, str] = dict(store.file_paths_in([repository]))
        with _lock:
            last = _layouts.get((store.location, repository))
        if last is not None and last[2] == self.paths:  # the same files as the last text
            self.paths, self.ids = last[2], last[3]  # generation's: its tables, not new
        else:
            self.ids = {path: fid for fid, path in self.paths.items()}
        self.graphs: OrderedDict[str, FileGraph | None] = OrderedDict()
        self.peeks: OrderedDict[str, Peek | None] = OrderedDict()
        self.blobs: OrderedDict[str, bytes] = OrderedDict()
        """Graphs read (`preload`) but not yet decoded."""
        self.linked: dict[str, tuple[int, ...]] = {}
        """Import key -> the ids of the files found under it (`importers`)."""
        self.all_linked = False
        """Whether `linked` holds every key of the repository (read at once)."""
        self.key_reads = 0
        """Reads of some of the repository's keys so far (`importers`)."""
        self.memo: dict[str, Any] = {}
        self.imports: dict[str, Any] = {}
        """A file's imports as `queries` follows them (what they land in: facts of the
        paths, kept like the peeks they come from, not with the per-query `memo`)."""
        self.lock = threading.Lock()
        self.layout = self._layout(store)

    def _layout(self, store: IndexStore) -> RepoLayout:
        """The repository's layout: the one of its last text generation when the edit
        between left its paths and build files as they were (most edits: its module
        lookups stay true), else a new one."""
        key = (store.location, self.repository)
        with _lock:
            last = _layouts.get(key)
        if last is not None:
            layout, builds = last[0], last[1]
            ids = [self.ids[p] for p in builds if p in self.ids]
            texts = store.file_texts(ids) if ids else {}
            if (last[3] is self.ids or layout.paths == self.ids.keys()) and all(
                    p in self.ids and texts.get(self.ids[p]) == text
                    for p, text in builds.items()):
                if last[3] is not self.ids:  # (the same paths, some of them new ids)
                    with _lock:
                        _layouts[key] = (layout, builds, self.paths, self.ids)
                return layout
        found = [p for p in self.ids if p.endswith(BUILD_ENDS) and is_build_file(p)]
        texts = store.file_texts([self.ids[p] for p in found]) if found else {}
        read = {p: texts.get(self.ids[p]) for p in found}  # (all in one read)
        layout = RepoLayout(self.ids, read.get, builds=found)
        with _lock:
            _layouts[key] = (layout, {p: t for p, t in read.items() if t is not None},
                             self.paths, self.ids)
            _layouts.move_to_end(key)
            while len(_layouts) > KEEP_WORKSPACES:
                _layouts.popitem(last=False)
        return layout


class Workspace:
    """A repository's files and graphs for one query: the shared state of its text
    generation, read through this query's own connection."""

    def __init__(self, shared: _Shared, store: IndexStore) -> None:
        self.shared = shared
        self.store = store
        self.repository = shared.repository
        self.repo_id = shared.repo_id
        self.ids = shared.ids
        self.paths = shared.paths
        self.layout = shared.layout
        self.memo = shared.memo
        self.imports = shared.imports
        """What readers derive from the graphs, kept as long as the text generation (the
        resolver's per-file lookups)."""

    @classmethod
    def open(cls, store: IndexStore, repository: str) -> Workspace:
        """The repository's workspace at the store's current text generation."""
        key = (store.location, repository, store.text_generation())
        with _lock:
            got = _cache.get(key)
            if got is not None:
                _cache.move_to_end(key)
                return cls(got, store)
        made = _Shared(store, repository)
        with _lock:
            _cache[key] = made
            while len(_cache) > KEEP_WORKSPACES:
                _cache.popitem(last=False)
        return cls(made, store)

    def graph(self, path: str) -> FileGraph | None:
        """The decoded graph of a file (None: no such file, or no graph)."""
        with self.shared.lock:
            if path in self.shared.graphs:
                return self.shared.graphs[path]
        blob = self._blob(path)
        graph = _read(blob, decode_lazy) if blob else None
        self._remember(self.shared.graphs, path, graph)
        return graph

    def peek(self, path: str) -> Peek | None:
        """A file's language, imports and strings (`indexer.graph.model.peek`: its graph
        short of the sites, several times cheaper to read; None: no graph)."""
        with self.shared.lock:
            if path in self.shared.peeks:
                return self.shared.peeks[path]
        blob = self._blob(path, keep=True)
        got = _read(blob, peek) if blob else None
        self._remember(self.shared.peeks, path, got)
        return got

    def _blob(self, path: str, *, keep: bool = False) -> bytes | None:
        """A file's stored graph as read by `preload` (kept for `graph` when `keep`),
        else from the store."""
        with self.shared.lock:
            blob = self.shared.blobs.get(path) if keep else self.shared.blobs.pop(path, None)
        if blob is None:
            fid = self.ids.get(path)
            blob = self.store.graph_data([fid]).get(fid) if fid is not None else None
            if keep and blob:
                self._remember(self.shared.blobs, path, blob)
        return blob

    def preload(self, paths: list[str], *, peeks: bool = False) -> None:
        """Read the stored graphs of many files in one go (a query's candidate files),
        to be decoded when asked (`peeks`: peeked at now, so that a monorepo's thousands
        of candidates, more than `KEEP_BLOBS`, are read once and never one by one)."""
        shared = self.shared
        with shared.lock:
            todo = [p for p in paths if p not in shared.graphs and p not in shared.blobs
                    and not (peeks and p in shared.peeks) and p in self.ids]
        if not todo:
            return
        data = self.store.graph_data([self.ids[p] for p in todo])
        for p in todo:
            blob = data.get(self.ids[p])
            if blob:
                if peeks:
                    self._remember(shared.peeks, p, _read(blob, peek))
                self._remember(shared.blobs, p, blob)
            else:
                self._remember(shared.graphs, p, None)
                self._remember(shared.peeks, p, None)

    def _remember(self, cache: OrderedDict[str, Any], path: str, value: Any) -> None:
        keep = KEEP_BLOBS if cache is self.shared.blobs else KEEP_GRAPHS
        with self.shared.lock:
            cache[path] = value
            while len(cache) > keep:
                cache.popitem(last=False)

    def defining(self, name: str) -> list[str]:
        """Paths of the files with a definition named `name` (the symbols table)."""
        rows = self.store.symbol_rows("s.name = ? AND r.name = ?", [name, self.repository])
        return sorted({str(r[3]) for r in rows if str(r[3]) in self.ids})

    def importers(self, keys: list[str]) -> list[str]:
        """Paths of the files whose imports end in any of `keys`, by path (each key's
        files read from the store once per text generation)."""
        linked = self.shared.linked
        ids: set[int] = set()
        with self.shared.lock:
            todo = [] if self.shared.all_linked else [
                k for k in dict.fromkeys(keys) if k not in linked]
        small = len(self.ids) <= LINK_ALL_FILES
        if todo and small and self.shared.key_reads >= KEY_READS.get(self.store.engine, 0):
            every: dict[str, list[int]] = defaultdict(list)
            for key, fid in self.store.graph_links(self.repo_id, None):
                every[key].append(fid)
            with self.shared.lock:
                linked.clear()
                linked.update((k, tuple(v)) for k, v in every.items())
                self.shared.all_linked = True
            todo = []
        if todo:  # these keys: a small repository's with a join on its files; a big
            # one's from every repository, its own kept (no join: ~8x cheaper there)
            found: dict[str, list[int]] = {k: [] for k in todo}
            paths = self.paths
            with self.shared.lock:
                self.shared.key_reads += 1
            for key, fid in self.store.graph_links(self.repo_id if small else None, todo):
                if fid in paths:
                    found[key].append(fid)
            with self.shared.lock:
                if len(linked) + len(found) > KEEP_GRAPHS:
                    linked.clear()
                for key, fids in found.items():
                    linked[key] = tuple(fids)
            ids.update(i for fids in found.values() for i in fids)
        with self.shared.lock:
            ids.update(i for k in keys for i in linked.get(k, ()))
        return sorted(self.paths[i] for i in ids if i in self.paths)
