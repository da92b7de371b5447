"""The stored-vector seam (`indexer.store.vector_rows.VectorRows`): both stores keep to it,
and the contract its docstring states holds, written against the Protocol alone and run
against each engine (sqlite-vec; pgvector on the session's real PostgreSQL)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ctxd.indexer.errors import ModelMismatch
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.pg.vectors import PgVectorRows
from ctxd.indexer.store.sqlite.store import Store, VectorRows, serialize_vector
from ctxd.indexer.store.sqlite.vectors import SqliteVecRows

ENGINES = ("sqlite-vec", "pgvector")


@pytest.fixture(params=ENGINES)
def rows(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorRows]:
    url = request.getfixturevalue("pg_url") if request.param == "pgvector" else ""
    with open_store(tmp_path / "index.db", StoreOptions(url=url)) as store:
        yield store


def members() -> list[str]:
    return sorted(n for n, v in vars(VectorRows).items()
                  if inspect.isfunction(v) and not n.startswith("_"))


@pytest.mark.parametrize("implementation", [SqliteVecRows, PgVectorRows])
def test_both_stores_keep_to_the_seam(tmp_path: Path, implementation: type) -> None:
    with Store.open(tmp_path / "index.db") as store:
        assert isinstance(store, VectorRows)
    assert len(members()) == 11  # `last_vector_id` (issue 28: no SQL in server/),
    # `every_checkpoint_embedded` (`indexer.coverage_claim`)
    for name in members():
        want, got = (inspect.signature(getattr(c, name)) for c in (VectorRows, implementation))
        # what callers rely on: names, kinds and defaults of the parameters
        assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == \
            [(p.name, p.kind, p.default) for p in want.parameters.values()], name


def test_model_is_recorded_once_and_checked(rows: VectorRows) -> None:
    assert rows.model() is None and not rows.has_vectors()
    assert list(rows.vector_batches(0)) == []
    rows.ensure_model("m", 4)
    rows.ensure_model("m", 4)
    assert rows.model() == ("m", 4) and rows.has_vectors()
    with pytest.raises(ModelMismatch):
        rows.check_model("other")
    with pytest.raises(ModelMismatch):
        rows.ensure_model("m", 8)


def test_vectors_are_added_once_read_in_batches_and_collected(rows: VectorRows) -> None:
    rows.ensure_model("m", 4)
    assert rows.vector_state() == (0, 0, 0)
    first = {f"h{i}": [float(i), 0.5, -1.0, 2.0] for i in range(5)}
    rows.add_embeddings([(h, serialize_vector(v)) for h, v in first.items()])
    rows.add_embeddings([("h0", serialize_vector([9.0, 9.0, 9.0, 9.0]))])  # known: kept
    count, top, generation = rows.vector_state()
    assert (count, generation) == (5, 0)
    rows.add_embeddings([("h5", serialize_vector([5.0, 5.0, 5.0, 5.0]))])
    new = list(rows.vector_batches(top, batch=2))
    assert len(new) == 1 and new[0][0].tolist() == [rows.vector_state()[1]]
    assert new[0][1].tolist() == [[5.0, 5.0, 5.0, 5.0]]
    batches = list(rows.vector_batches(0, batch=2))
    assert [len(ids) for ids, _ in batches] == [2, 2, 2]
    ids = np.concatenate([ids for ids, _ in batches])
    assert (np.diff(ids) > 0).all()
    matrix = np.concatenate([m for _, m in batches])
    assert matrix[0].tolist() == [0.0, 0.5, -1.0, 2.0] and matrix.dtype == np.float32
    # no checkpoint refers to any of them: all are orphans
    assert rows.gc_embeddings(min_orphans=7) == 0
    assert rows.vector_state()[0] == 6
    assert rows.gc_embeddings() == 6
    assert rows.vector_state()[0::2] == (0, 1)
    assert rows.embedding_coverage() == []
    assert rows.every_checkpoint_embedded()  # none lacks a vector: there is none
