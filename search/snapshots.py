"""Answers computed from the indexed text, held in memory for one text generation.

`Snapshots(build, above=N)` keeps the value `build(store)` made for the store's
`text_generation()` (the keyword postings of `search.keyword_index`, the distinct symbol
names of `search.symbol_names`). When the text changes, `current(store)` answers None
(the caller then answers from the store, exactly) or `latest(store)` the older snapshot
(for callers that correct for what changed since), and either starts one rebuild in a
background thread on its own connection (`IndexStore.reopen`), so no query waits for a
build. Builds are spaced by
`spacing` times the last build's duration: a tree that changes all the time costs at
most 1 / (1 + spacing) of a core. Indexes of at most `above` checkpoints hold nothing
(the store answers them fast enough).

Held by the long-lived service (server.service), like the vector matrix. Reads the store
only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from ctxd.indexer.store.protocol import IndexStore

__all__ = ["LARGE_INDEX_CHECKPOINTS", "Generational", "Snapshots", "checkpoint_count"]

LARGE_INDEX_CHECKPOINTS = 150_000
"""Where an index becomes large: above it the long-lived service holds the keyword
postings and the symbol names, and hybrid search leaves out the embedded lexical leg.
Below it SQLite answers each of those in tens of ms (at 100k checkpoints: the keyword
leg 22 ms, symbols p50 24 ms; `bench/results/search-issue18-parallel.json`)."""

_COUNTS: dict[tuple[str, int], int] = {}
_COUNTS_LOCK = threading.Lock()


def checkpoint_count(store: IndexStore) -> int:
    """How many checkpoints the index holds, counted once per text generation (ids only
    grow, so the largest id overstates a tree that was edited a lot)."""
    key = (store.location, store.text_generation())
    with _COUNTS_LOCK:
        if key in _COUNTS:
            return _COUNTS[key]
    count = store.checkpoint_total()
    with _COUNTS_LOCK:
        if len(_COUNTS) > 64:
            _COUNTS.clear()
        _COUNTS[key] = count
    return count


class Generational(Protocol):
    """A value made from the store's text as it was at one `text_generation()`."""

    @property
    def generation(self) -> int: ...

    @property
    def nbytes(self) -> int: ...


T = TypeVar("T", bound=Generational)


class Snapshots(Generic[T]):
    """The current snapshot, or a background build of the next (see the module)."""

    def __init__(self, build: Callable[[IndexStore], T | None], *, above: int,
                 spacing: float = 4.0,
                 name: str = "ctxd-snapshot") -> None:
        self.above = above
        self.spacing = spacing
        self._build_value = build
        self._name = name
        self._value: T | None = None
        self._lock = threading.Lock()
        self._building: threading.Thread | None = None
        self._not_before = 0.0
        self.builds = 0
        """Snapshots built so far (status, tests)."""
        self.last_error: str | None = None
        """Why the last build failed (the store keeps answering meanwhile)."""

    @property
    def value(self) -> T | None:
        """The latest snapshot built, current or not."""
        return self._value

    def report(self) -> dict[str, object]:
        """State for `ctxd status`: `off` (none built: a small index), `building`, or
        `ready` (the latest snapshot, which a query uses while it is current), and bytes."""
        thread, value = self._building, self._value
        state = ("building" if thread is not None and thread.is_alive()
                 else "ready" if value is not None else "off")
        return {"state": state, "bytes": value.nbytes if value is not None else 0,
                **({"error": self.last_error} if self.last_error else {})}

    def current(self, store: IndexStore) -> T | None:
        """The snapshot for `store`'s text as it is now, or None; starts a build when the
        text changed and the index is large enough."""
        value = self._value
        if value is not None and value.generation == store.text_generation():
            return value
        self._maybe_build(store)
        return None

    def latest(self, store: IndexStore) -> T | None:
        """The latest snapshot, current or not (None before the first build), for callers
        that can answer from an older one; starts a build when the text changed."""
        value = self._value
        if value is None or value.generation != store.text_generation():
            self._maybe_build(store)
        return value

    def wait(self, timeout: float | None = None) -> None:
        """Block until a build in progress ends (tests, benchmarks)."""
        thread = self._building
        if thread is not None:
            thread.join(timeout)

    def _maybe_build(self, store: IndexStore) -> None:
        with self._lock:
            if self._building is not None and self._building.is_alive():
                return
            if time.monotonic() < self._not_before:
                return
            if checkpoint_count(store) <= self.above:
                self._value = None
                return
            self._building = threading.Thread(target=self._build, args=(store,),
                                              name=self._name, daemon=True)
            self._building.start()

    def _build(self, store: IndexStore) -> None:
        started = time.monotonic()
        value: T | None = None
        try:
            reader = store.reopen()  # this thread's own connection
            try:
                value = self._build_value(reader)
            finally:
                reader.close()
        except Exception as exc:  # the store keeps answering; status says why
            self.last_error = f"{type(exc).__name__}: {exc}"
        took = time.monotonic() - started
        with self._lock:
            if value is not None:
                self._value = value
                self.builds += 1
            self._not_before = time.monotonic() + self.spacing * took
