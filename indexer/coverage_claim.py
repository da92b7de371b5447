"""A recorded fact: at one state of the index, every checkpoint had a vector.

A semantic or hybrid search says how far each repository in its scope is embedded
(`search.legs.coverage`), and finding out is a count over every checkpoint in scope: 0.3 s
on SQLite, 0.47 s on PostgreSQL at 1M checkpoints. A one-shot search pays it every time,
and so does a daemon's first search after each write, even once the write's texts are all
embedded. The writer knows better: after embedding (`Indexer.index`), `record` checks once
that no checkpoint lacks a vector, and writes down at which state (`state`: the text
generation, which moves with every change to the text, and the vector deletion generation,
which moves whenever vectors go). A search whose index is still at that state
(`holds`) knows every repository is complete without counting.

The fact stays true for that state: adding vectors does not move the state and only adds
coverage; any change to the text moves the text generation (never back to an old value:
it grows by random steps), and deleting vectors moves the deletion generation. `record`
reads the state before and after its check and writes only if it did not move, so the
check saw that state.
"""

from __future__ import annotations

from ctxd.indexer.store.protocol import IndexStore

__all__ = ["KEY", "current", "holds", "record", "state"]

KEY = "coverage_complete"
"""The `meta` row: the state (`state`) at which every checkpoint had a vector."""


def state(text_generation: int, vec_generation: str | None) -> str:
    """The state a claim names: `<text generation>:<vector deletion generation>`."""
    return f"{text_generation}:{vec_generation or 0}"


def current(store: IndexStore) -> str:
    """The index's state as this connection sees it."""
    return state(store.text_generation(), store.get_meta("vec_generation"))


def holds(store: IndexStore, at: str) -> bool:
    """Whether every checkpoint had a vector at state `at` (one lookup)."""
    return store.get_meta(KEY) == at


def record(store: IndexStore) -> bool:
    """Check that every checkpoint has a vector and record the state; whether it holds.
    A writer calls it after embedding; a state already recorded costs one lookup."""
    before = current(store)
    if holds(store, before):
        return True
    if not store.every_checkpoint_embedded() or current(store) != before:
        return False
    with store.transaction():
        store.set_meta(KEY, before)
    return True
