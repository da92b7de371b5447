"""The seam of the stored vectors: `VectorRows`, what the pipeline, the service and the
search layer do with the vectors of an index, whatever engine holds them.

`indexer.store.sqlite.vectors.SqliteVecRows` implements it on the SQLite file (an
`embeddings` row per embedded text, its vector in the sqlite-vec table `vec_embeddings`),
`indexer.store.pg.vectors.PgVectorRows` with pgvector; nothing that calls these methods
knows which. The nearest-neighbour search is the engine's own (`VectorSearch` of
`indexer.store.protocol`), or the search layer's in-memory matrices (`search.vectors`).

Contract, for every implementation:
- A checkpoint's vector belongs to the hash of the text that was embedded, shared by every
  checkpoint with that hash; it is added once and kept until no checkpoint refers to it
  (`gc_embeddings`). `vector_state` and `vector_batches` cover these vectors. A file
  summary's vector is stored on every summary with that hash and goes with them.
- Vectors travel as little-endian float32 blobs (`serialize_vector`) on the way in, as
  numpy rows on the way out. Each has a positive integer id; a vector added gets an id
  larger than any id present, so that, while none is deleted, `vector_batches(past)`
  yields exactly the vectors added after the one with id `past`.
- `vector_state()` changes whenever the set of vectors changes; its third item grows
  whenever vectors are deleted (an id may then be used again), so a reader holding a copy
  knows whether appending is enough or it must read them all again.
- The index records the model name and dimension once (`ensure_model`); a store opened for
  another model raises `ModelMismatch` (`check_model`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy only where vectors are read: settings and help stay light
    import numpy as np
    import numpy.typing as npt


def serialize_vector(vec: Sequence[float]) -> bytes:
    """Pack a vector as little-endian float32, the format vec0 expects."""
    return struct.pack(f"<{len(vec)}f", *vec)


@runtime_checkable
class VectorRows(Protocol):
    """The stored vectors of one index (see the module docstring for the contract)."""

    def model(self) -> tuple[str, int] | None:
        """The (model name, dimension) the vectors were made with, if any yet."""
        ...

    def check_model(self, name: str, dimension: int | None = None) -> None:
        """Raise `ModelMismatch` if the index was built with another model."""
        ...

    def ensure_model(self, name: str, dimension: int) -> None:
        """Record the model on first use and make room for its vectors; check it afterwards."""
        ...

    def has_vectors(self) -> bool:
        """Whether a model is recorded (the vector storage exists)."""
        ...

    def add_embeddings(self, items: Sequence[tuple[str, bytes]],
                       summaries: Sequence[tuple[str, bytes]] = ()) -> None:
        """Store (hash, vector blob) pairs of checkpoint texts and of file summaries, in
        one transaction; a hash that has a vector keeps it."""
        ...

    def vector_state(self) -> tuple[int, int, int]:
        """(count, largest id, deletion generation) of the vectors: a cache key."""
        ...

    def last_vector_id(self) -> int:
        """The largest id of the vectors (0 without any): one lookup, no count."""
        ...

    def vector_batches(
        self, rowid: int, batch: int = 16384
    ) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]]:
        """(ids, float32 rows) of every vector with a larger id, in id order, a batch at a
        time."""
        ...

    def gc_embeddings(self, min_orphans: int = 0) -> int:
        """Delete the vectors no checkpoint refers to (none while fewer than
        `min_orphans`); returns how many went."""
        ...

    def embedding_coverage(self, names: Sequence[str] = ()) -> list[tuple[str, int, int]]:
        """(repository, checkpoints, embedded checkpoints) per repository, or for `names`."""
        ...

    def every_checkpoint_embedded(self) -> bool:
        """Whether every checkpoint's text has a vector (one anti-join over every
        checkpoint; `indexer.coverage_claim` records the answer)."""
        ...
