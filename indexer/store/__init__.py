"""The index's storage: one protocol (`IndexStore`), two engines behind it.

`open_store` opens the index where it lives: the SQLite file in the index home
(`sqlite/`) or a PostgreSQL database a team shares (`pg/`); the pipeline, the search layer
and the service talk to `IndexStore` only, and neither engine imports the other. Here, at
the root, live the engine-neutral parts: the protocol and its records, the keyword
tokeniser (`words`), the dialect seam and the literal formulas of the search layer's SQL,
the reads both engines share (`lookups`), where the index lives (`location`), its locks
and its private home, and storage errors.

The names below load on first use, so that importing one light module of this package
(`location`, for the settings) loads no engine.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxd.indexer.store.location import StoreOptions, redact_url
    from ctxd.indexer.store.open import (
        WriterLock,
        open_store,
        store_location,
        write_lock,
        writers_at_work,
    )
    from ctxd.indexer.store.protocol import IndexStore
    from ctxd.indexer.store.records import FileRecord, RepoRow, StoredFile, Summary
    from ctxd.indexer.store.vector_rows import serialize_vector
    from ctxd.indexer.store.words import chunk_fts_row, split_identifiers

_WHERE = {
    "IndexStore": "protocol", "open_store": "open", "write_lock": "open",
    "writers_at_work": "open", "store_location": "open", "WriterLock": "open",
    "StoreOptions": "location", "redact_url": "location", "RepoRow": "records",
    "FileRecord": "records", "StoredFile": "records", "Summary": "records",
    "serialize_vector": "vector_rows", "chunk_fts_row": "words", "split_identifiers": "words",
}
__all__ = [
    "FileRecord", "IndexStore", "RepoRow", "StoreOptions", "StoredFile", "Summary",
    "WriterLock", "chunk_fts_row", "open_store", "redact_url", "serialize_vector",
    "split_identifiers", "store_location", "write_lock", "writers_at_work",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_WHERE[name]}"), name)
