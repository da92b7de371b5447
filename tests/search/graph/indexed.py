"""Index a tree of files for real and read one definition's resolved usages back."""

from __future__ import annotations

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder, RepoBuilder


def index(store: IndexStore, repo: RepoBuilder, files: dict[str, str]) -> None:
    for path, text in files.items():
        repo.write(path, text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())


def usages(store: IndexStore, symbol: str) -> set[tuple[str, int, str]]:
    refs = queries.references(store, name_definition(store, symbol))
    assert all(u.resolved for u in refs.usages)
    return {(u.path, u.line, u.kind) for u in refs.usages}
