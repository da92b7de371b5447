"""`Lru`: a small bounded map, safe across threads, that forgets its least recently used
entry: the per-process answer caches of the search layer (keyed by what their answer
depends on, such as the store's location and text generation) share it, and so do the
lexical engine's kept texts (bounded by their bytes: `weigh`)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Lru(Generic[K, V]):
    """At most `size` entries, or entries weighing at most `size` together when `weigh`
    is given; `get` marks an entry as recently used."""

    def __init__(self, size: int, weigh: Callable[[V], int] | None = None) -> None:
        self.size = size
        self._weigh = weigh
        self._items: OrderedDict[K, V] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            if key not in self._items:
                return None
            self._items.move_to_end(key)
            return self._items[key]

    def put(self, key: K, value: V) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= self._of(old)
            self._items[key] = value
            self._weight += self._of(value)
            while self._weight > self.size:
                self._weight -= self._of(self._items.popitem(last=False)[1])

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._weight = 0

    def _of(self, value: V) -> int:
        return 1 if self._weigh is None else self._weigh(value)
