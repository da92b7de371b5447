"""The graph's lookups that keep large indexes fast (`bench/bench_graph_scale.py`), in both
stores: `PATH:LINE` found through the files' (repository, path) index, in the right
repository when several hold the same path; a definition's uses found only where a site
bears its name, the same as resolving every candidate file; and the stored graph blob the
same for the same file, whichever repository holds it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.errors import SymbolNotFound
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.location import StoreOptions
from ctxd.indexer.store.open import open_store
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries, workspace
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder, RepoBuilder

FILES = {
    "pkg/__init__.py": "from .store import Store\n",
    "pkg/store.py": ("class Store:\n"
                     "    def get(self, key):\n"
                     "        return key\n"
                     "\n"
                     "    def put(self, key):\n"
                     "        return self.get(key)\n"),
    "pkg/use.py": ("from .store import Store\n"
                   "\n"
                   "def run():\n"
                   "    s = Store()\n"
                   "    return s.get(1)\n"),
    "pkg/other.py": ("from .store import Store\n"
                     "\n"
                     "def other(d):\n"
                     "    return Store, d.items()\n"),
}


@pytest.fixture
def store(tmp_path: Path, store_url: str) -> Iterator[IndexStore]:
    with open_store(tmp_path / "index.db", StoreOptions(url=store_url)) as st:
        yield st


@pytest.fixture
def two_repos(tmp_path: Path, store: IndexStore) -> tuple[str, str]:
    """The same files in two repositories (`one`, `two`), `two`'s `use.py` calling `get`
    twice."""
    names = []
    for name in ("one", "two"):
        repo = RepoBuilder(tmp_path / name)
        for path, text in FILES.items():
            repo.write(path, text)
        if name == "two":
            repo.write("pkg/use.py", FILES["pkg/use.py"] + "\n\ndef again(s: Store):\n"
                       "    return s.get(2)\n")
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
        names.append(name)
    return names[0], names[1]


def test_path_line_names_the_definition_in_the_asked_repository(store, two_repos):
    one, two = two_repos
    for name in (one, two):
        d = name_definition(store, "pkg/store.py:2", [name])
        assert (d.qualified_name, d.repository, d.path, d.line) == (
            "Store.get", name, "pkg/store.py", 2)
    assert name_definition(store, "pkg/store.py:2").qualified_name == "Store.get"
    with pytest.raises(SymbolNotFound, match=r"no definition at pkg/store\.py:4"):
        name_definition(store, "pkg/store.py:4", [one])
    with pytest.raises(SymbolNotFound):
        name_definition(store, "pkg/nothing.py:2", [one])


def test_uses_are_those_of_resolving_every_candidate_file(store, two_repos, monkeypatch):
    """Skipping the files where no site bears the name changes no answer: the same
    usages as with the skip turned off (every candidate file indexed and resolved)."""
    _one, two = two_repos
    d = name_definition(store, "pkg/store.py:2", [two])
    workspace._cache.clear()
    fast = queries.references(store, d)
    workspace._cache.clear()
    monkeypatch.setattr(queries._Graph, "names", lambda self, path: _EVERY_NAME)
    slow = queries.references(store, d)
    got = {(u.path, u.line, u.kind) for u in fast.usages}
    assert got == {(u.path, u.line, u.kind) for u in slow.usages}
    assert got == {("pkg/store.py", 6, "call"), ("pkg/use.py", 5, "call"),
                   ("pkg/use.py", 9, "call")}


class _Every(frozenset[str]):
    """A name set that holds every name (the skip turned off)."""

    def __contains__(self, _name: object) -> bool:
        return True


_EVERY_NAME = _Every()


def test_the_same_file_is_stored_as_the_same_graph(store, two_repos):
    ids = {name: {p: i for i, p in store.file_paths_in([name])} for name in two_repos}
    one, two = (ids[n]["pkg/store.py"] for n in two_repos)
    data = store.graph_data([one, two])
    assert data[one] == data[two]


JS_FILES = {
    "web/store.ts": "export class Store {\n  get(key: string) { return key; }\n}\n",
    "web/use.ts": ("import { Store } from './store';\n"
                   "export function run() { return new Store().get('a'); }\n"),
}


def test_candidates_are_the_files_whose_imports_reach_the_definition(store, tmp_path,
                                                                     monkeypatch):
    """A monorepo of two copies of a package, and an unrelated package with a module of
    the same name: the files searched for the copy's `Store.get` are the copy's own (the
    others import a `store` module, but not this one), and the answer is the same as with
    every file whose imports end in `store` searched."""
    repo = RepoBuilder(tmp_path / "mono")
    files = {f"{copy}/{path}": text for copy in ("a", "b")
             for path, text in {**FILES, **JS_FILES}.items()}
    files["c/other/store.py"] = "class Thing:\n    def get(self):\n        return 1\n"
    files["c/other/main.py"] = "from .store import Thing\n\nThing().get()\n"
    for path, text in files.items():
        repo.write(path, text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    for symbol, own in (("a/pkg/store.py:2", {"a/pkg/store.py", "a/pkg/__init__.py",
                                               "a/pkg/use.py", "a/pkg/other.py"}),
                        ("a/web/store.ts:2", {"a/web/store.ts", "a/web/use.ts"})):
        d = name_definition(store, symbol, ["mono"])
        workspace._cache.clear()
        graph = queries._Graph(store, "mono")
        target = graph.target_of(d)
        assert target is not None and set(graph.candidates(target)) == own
        fast = queries.references(store, d)
        workspace._cache.clear()
        with monkeypatch.context() as m:
            m.setattr(queries._Graph, "_lands", lambda self, path, reach, tails: True)
            slow = queries.references(store, d)
        got = {(u.path, u.line, u.kind) for u in fast.usages}
        assert got == {(u.path, u.line, u.kind) for u in slow.usages}
        assert got and all(path.startswith("a/") for path, _, _ in got)
        workspace._cache.clear()


def test_an_edit_decodes_only_the_files_it_changed(store, tmp_path):
    """The first query after an edit reads a new workspace (the text generation moved),
    but the files the edit left alone keep their decoded graphs (the same blob: the same
    graph), and the edited file's graph is its new one; the same files under the same ids
    keep their id and path tables, a file added or removed makes new ones."""
    repo = RepoBuilder(tmp_path / "r")
    for path, text in FILES.items():
        repo.write(path, text)
    indexer = Indexer(store, FakeEmbedder())
    indexer.index(repo.root, WalkOptions())
    workspace._cache.clear()
    before = workspace.Workspace.open(store, "r")
    kept, edited = before.graph("pkg/store.py"), before.graph("pkg/use.py")
    repo.write("pkg/use.py", FILES["pkg/use.py"] + "\n\ndef more():\n    return Store().get(3)\n")
    indexer.index(repo.root, WalkOptions())
    after = workspace.Workspace.open(store, "r")
    assert after.shared is not before.shared and after.layout is before.layout  # same paths
    if after.paths == before.paths:  # (SQLite keeps an edited file's id: the same tables)
        assert after.ids is before.ids and after.paths is before.paths
    assert after.ids == {p: i for i, p in dict(store.file_paths_in(["r"])).items()}
    assert after.graph("pkg/store.py") is kept
    new = after.graph("pkg/use.py")
    assert new is not edited and new is not None and len(new.sites) > len(edited.sites)
    d = name_definition(store, "pkg/store.py:2", ["r"])
    assert {(u.path, u.line) for u in queries.references(store, d).usages} == {
        ("pkg/store.py", 6), ("pkg/use.py", 5), ("pkg/use.py", 9)}
    repo.write("pkg/extra.py", "from .store import Store\n\nStore().get(4)\n")
    indexer.index(repo.root, WalkOptions())  # a new file: a new layout that knows it
    again = workspace.Workspace.open(store, "r")
    assert again.layout is not after.layout and "pkg/extra.py" in again.layout.paths
    assert again.paths == dict(store.file_paths_in(["r"])) and again.ids is not after.ids
    assert again.ids == {p: i for i, p in again.paths.items()}
    assert ("pkg/extra.py", 3) in {(u.path, u.line)
                                   for u in queries.references(store, d).usages}
    (repo.root / "pkg/extra.py").unlink()
    indexer.index(repo.root, WalkOptions())  # a file removed: new tables without it
    gone = workspace.Workspace.open(store, "r")
    assert "pkg/extra.py" not in gone.ids and gone.paths == dict(store.file_paths_in(["r"]))
    assert ("pkg/extra.py", 3) not in {(u.path, u.line)
                                       for u in queries.references(store, d).usages}


def test_an_edited_build_file_makes_a_new_layout(store, tmp_path):
    """The layout is kept across an edit only while the build files it read are as
    they were: a changed tsconfig.json (its `paths`) makes a new one."""
    repo = RepoBuilder(tmp_path / "t")
    config = '{"compilerOptions": {"baseUrl": ".", "paths": {"@a/*": ["web/*"]}}}\n'
    for path, text in {**JS_FILES, "tsconfig.json": config}.items():
        repo.write(path, text)
    indexer = Indexer(store, FakeEmbedder())
    indexer.index(repo.root, WalkOptions())
    workspace._cache.clear()
    before = workspace.Workspace.open(store, "t").layout
    repo.write("web/use.ts", JS_FILES["web/use.ts"] + "export const x = 1;\n")
    indexer.index(repo.root, WalkOptions())
    same = workspace.Workspace.open(store, "t").layout
    repo.write("tsconfig.json", config.replace("@a/*", "@b/*"))
    indexer.index(repo.root, WalkOptions())
    changed = workspace.Workspace.open(store, "t").layout
    assert same is before and changed is not before
    assert [m for _, _, m in changed.ts_configs] == [{"@b/*": ["web/*"]}]
