"""Synthetic embedding-like vectors for the vector index's tests and benchmarks.

Real code embeddings are not uniform on the sphere: texts form topics, and a question's
answer lies near it. `clustered_unit_vectors` draws unit vectors around `topics` random
centres (cosine to the centre ~0.6-0.75); `queries_near` draws queries near given rows,
as a question lies near its answer (cosine ~0.8). Uniformly random vectors are the
quantized pass's worst case and are measured separately by the benchmark.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ctxd.indexer.embedder import unit_rows as unit


def clustered_unit_vectors(n: int, dim: int = 384, *, topics: int = 2000,
                           seed: int = 0) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    centres = unit(rng.standard_normal((topics, dim), dtype=np.float32))
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 65536):
        m = min(65536, n - start)
        noise = rng.standard_normal((m, dim), dtype=np.float32) / np.sqrt(dim)
        spread = rng.uniform(0.9, 1.3, size=(m, 1)).astype(np.float32)
        out[start:start + m] = unit(centres[rng.integers(0, topics, m)] + spread * noise)
    return out


def queries_near(rows: npt.NDArray[np.float32], count: int, *,
                 seed: int = 1) -> npt.NDArray[np.float32]:
    rng = np.random.default_rng(seed)
    picked = rows[rng.integers(0, len(rows), count)]
    dim = rows.shape[1]
    noise = rng.standard_normal((count, dim), dtype=np.float32) / np.sqrt(dim)
    return unit(picked + 0.7 * noise)
