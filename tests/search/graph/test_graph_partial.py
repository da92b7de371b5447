"""What a fresh process's first query reads, and that it answers the same: one file's
lookups over a graph read in part (`indexer.graph.reading`) equal those over the whole
list; a repository's import keys are read a few at a time with a join on its files,
then all at once (both stores: the same importers and answers); a query's objects leave
with no young collection over them."""

from __future__ import annotations

import dataclasses
import gc

import pytest

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import encode, graph_of
from ctxd.indexer.graph.reading import Sites, decode_lazy
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries, workspace
from ctxd.search.graph.facts import FileFacts
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.search.graph.test_graph_cold import SHAPES

PY = '''import os
from .base import Base, helper as h


class Client(Base):
    timeout: int = 3

    def __init__(self, url: str, retries=2) -> None:
        self.url = url
        self.session = Session()
        s = self.session

    def fetch(self, path, *, retries: "Retry" = None):
        resp = self.session.get(path)
        resp = h(resp) if resp else None
        for item in resp.items:
            self.url.join(item)
        return resp


class Other(Client, os.PathLike):
    def fetch(self, path):
        def inner(x):
            y = x
            return y
        return inner(super().fetch(path))
'''
TS = '''import { Base } from './base';
export class Store extends Base {
  private items: Map<string, Item> = new Map();
  get(this: Store, key: string): Item | undefined { const v = this.items.get(key); return v; }
}
'''


@pytest.mark.parametrize(("language", "source"), [("python", PY), ("typescript", TS)])
def test_lookups_of_a_graph_read_in_part_equal_those_of_the_whole(language, source) -> None:
    g = graph_of(language, parse_source(language, source))
    assert g is not None
    lazy_graph = decode_lazy(encode(g))
    assert lazy_graph is not None and isinstance(lazy_graph.sites, Sites)
    full, lazy = FileFacts(g), FileFacts(lazy_graph)
    assert (full.first_params, full.params, full.bases) == (
        lazy.first_params, lazy.params, lazy.bases)
    assert full.bases and full.params
    keys = {(s.scope, s.name) for s in g.sites} | {(-1, "absent"), (0, "url")}
    for key in sorted(keys):
        assert lazy.binds.get(key) == full.binds.get(key), key
        assert lazy.attr_binds.get(key) == full.attr_binds.get(key), key
        assert (key in lazy.binds) == (key in full.binds), key
        assert lazy.named(key[1]) == full.named(key[1]), key
    for key in sorted(keys):
        assert lazy.binds[key] == full.binds[key] and lazy.attr_binds[key] == full.attr_binds[
            key], key
    assert any(full.binds.values()) and (any(full.attr_binds.values()) or language != "python")
    assert lazy.imports == full.imports and lazy.children == full.children


def _answers(store: IndexStore, d) -> tuple[object, ...]:
    refs = queries.references(store, d)
    calls = queries.callers(store, d, depth=3)
    return (dataclasses.replace(refs, duration_ms=0.0),
            dataclasses.replace(calls, duration_ms=0.0))


def test_import_keys_are_read_a_few_at_a_time_then_all_at_once(
        store: IndexStore, tmp_path, monkeypatch) -> None:
    """The same importers and answers whether the keys are read all at once from the
    start, after one read of a few, or never; a query leaves the collector on, nothing
    frozen, and its objects out of the young generation."""
    repo = RepoBuilder(tmp_path / "r")
    for copy in ("a", "b"):
        for path, text in SHAPES.items():
            repo.write(f"{copy}/{path}", text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    repo_id = store.repo_ids()["r"]
    every = sorted({k for k, _ in store.graph_links(repo_id, None)})
    assert len(every) >= 4
    asked = [every[:2], every[2:3], [every[0], "nothing here"], every]
    seen = []
    for reads in (0, 1, 1000):  # all at once from the start; after one read; never
        monkeypatch.setattr(workspace, "KEY_READS", {store.engine: reads})
        workspace._cache.clear()
        answers = [_answers(store, name_definition(store, f"a/{s}", ["r"]))
                   for s in ("pkg/store.py:2", "web/store.ts:2")]
        workspace._cache.clear()
        ws = workspace.Workspace.open(store, "r")
        importers = [ws.importers(keys) for keys in asked]
        assert ws.shared.all_linked == (reads < 1000)
        assert ws.shared.key_reads == {0: 0, 1: 1, 1000: 4}[reads]
        seen.append((answers, importers))
    assert seen[0] == seen[1] == seen[2]
    (refs, calls), _ = seen[0][0]
    assert len(refs.usages) >= 5 and calls.edges  # type: ignore[attr-defined]
    assert all(seen[0][1]) and len(seen[0][1][3]) >= 8
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 700  # (no young collection owed for what the query made)
    workspace._cache.clear()
