"""The graph tests' store: a real index file, on each store engine (`store_url`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore


@pytest.fixture
def store(tmp_path: Path, store_url: str) -> Iterator[IndexStore]:
    with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as st:
        yield st
