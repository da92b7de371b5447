"""What keeps a fresh process's first graph query cheap, in both stores, and answers the
same: a candidate file's imports are followed only when they may name a file near the
definition (`modules.import_keys` / `file_keys`), the module layout indexes its paths
at first use (`RepoLayout.py_named`, `by_dir`, `by_base`, tsconfig options) and reads its
build files in one go, and a query runs with the garbage collector paused
(`workspace.collector_paused`)."""

from __future__ import annotations

import gc
import threading
from collections import defaultdict

import pytest

from ctxd.indexer.graph import Import
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries, workspace
from ctxd.search.graph.modules import (
    RepoLayout,
    _nearest,
    _py_tail,
    file_keys,
    import_keys,
    module_name,
)
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder, RepoBuilder

PATHS = [
    "pkg/__init__.py", "pkg/store.py", "pkg/lib.py", "pkg/index.py", "pkg/sub/__init__.pyi",
    "pkg/sub/mod.py", "pkg/sub/deep.py", "py3.11/site/pkg/store.py", "a.b/c.py", "__init__.py",
    "top.py", "src/pkg/store.pyi", "x/y.tar.py", "other/store.py", "other/__init__.py",
    "web/util/index.ts", "web/util.d.ts", "web/a.js", "web/a.ts", "web/b.mjs", "web/c/index.js",
    "web/store.ts", "web/deep/x.tsx", "web/dir.d/index.ts",
]
IMPORTS = [  # (importer, import, language)
    ("pkg/sub/deep.py", Import("", "mod", None, 1, 1), "python"),
    ("pkg/sub/deep.py", Import("", "store", None, 2, 1), "python"),
    ("pkg/sub/deep.py", Import("", "*", None, 2, 1), "python"),
    ("pkg/sub/deep.py", Import("store", "Store", None, 2, 1), "python"),
    ("pkg/sub/deep.py", Import("sub.mod", "f", None, 2, 1), "python"),
    ("pkg/sub/deep.py", Import(".", "x", None, 1, 1), "python"),
    ("top.py", Import("pkg.store", None, None, 0, 1), "python"),
    ("top.py", Import("pkg", "store", None, 0, 1), "python"),
    ("top.py", Import("pkg", "lib", None, 0, 1), "python"),
    ("top.py", Import("pkg.sub", "mod", "m", 0, 1), "python"),
    ("top.py", Import("store", None, None, 0, 1), "python"),
    ("top.py", Import("site.pkg.store", None, None, 0, 1), "python"),
    ("top.py", Import("b.c", None, None, 0, 1), "python"),
    ("top.py", Import("y.tar", "z", None, 0, 1), "python"),
    ("top.py", Import("", None, None, 0, 1), "python"),
    ("x/y.tar.py", Import("", "top", None, 2, 1), "python"),
    ("web/deep/x.tsx", Import("../util", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../util.js", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../a.js", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../b.mjs", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../c", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../c/", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("..", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("../dir.d", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("./x", "f", None, 0, 1), "typescript"),
    ("web/deep/x.tsx", Import("lodash", "f", None, 0, 1), "typescript"),
]


def test_every_file_an_import_lands_in_has_one_of_its_names() -> None:
    """`import_keys` is a necessary condition: whatever `RepoLayout.import_files` finds
    for an import carries one of the import's names among its `file_keys` (or the import
    says None: follow it)."""
    layout = RepoLayout(PATHS, lambda p: None)
    landed = 0
    for path, imp, language in IMPORTS:
        files = layout.import_files(path, imp, language)
        names = import_keys(path, imp, language)
        landed += bool(files)
        for f in files:
            assert names is None or not names.isdisjoint(file_keys(f)), (path, imp, f)
    assert landed >= 18  # (the table exercises real landings)
    assert import_keys("web/deep/x.tsx", IMPORTS[-1][1], "typescript") is None
    assert import_keys("web/deep/x.tsx", IMPORTS[-4][1], "typescript") == {"\0web"}  # `..`
    assert import_keys("c7/pkg/a.py", Import("store", "S", None, 1, 1), "python") == {
        "c7/pkg\0store", "c7/pkg\0S"}  # (another copy's `.store`: not `c0/pkg/store.py`)
    assert "c7/pkg\0store" not in file_keys("c0/pkg/store.py")


def test_python_modules_by_name_as_the_full_suffix_index() -> None:
    """`py_named(dotted)` is what the index of every dotted suffix of every Python module
    gave, in path order; `_py_tail` is `module_name`'s last part; `_nearest` (a binary
    search) picks what the scan over every path picked."""
    old: dict[str, list[str]] = defaultdict(list)
    for p in sorted(PATHS):
        if p.endswith((".py", ".pyi")):
            parts = module_name(p).split(".")
            for k in range(len(parts)):
                old[".".join(parts[k:])].append(p)
    layout = RepoLayout(PATHS, lambda p: None)
    for dotted, files in old.items():
        assert layout.py_named(dotted) == files, dotted
    assert layout.py_named("nothing.here") == []
    for p in [*PATHS, "a//b/__init__.py", "lib.py", "q/mod.pyi", "/abs/x.py", "a/.py"]:
        if p.endswith((".py", ".pyi")):
            assert _py_tail(p) == module_name(p).rpartition(".")[2], p
    found = sorted(f"c{c:03d}/requests/{sub}sessions.py" for c in range(30)
                   for sub in ("", "src/requests/", "src/requests/x/", "src/requests0/"))
    for importer in ("c007/requests/src/requests/api.py", "c007/requests/tests/t.py",
                     "c029/requests/src/requests/x/y/z.py", "zzz/a.py", "c00/a.py"):
        scan = min(found, key=lambda p: (-_shared(p, importer), len(p), p))
        assert _nearest(found, importer) == scan, importer


def _shared(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        n += 1
    return n


def test_a_layout_indexes_at_first_use_and_reads_only_build_files() -> None:
    """The layout asks its reader for the build files only, once each; its folder and
    name indexes and tsconfig options are made when first asked, and answer as before."""
    asked: list[str] = []
    texts = {"web/tsconfig.json": '{"compilerOptions": {"baseUrl": ".", "paths": '
                                  '{"@u/*": ["util/*"]}}}', "go.mod": "module example.com/m\n",
             "tsconfig.json": '{"compilerOptions": {"paths": {"@u/*": ["other/*"]}}}'}

    def read(path: str) -> str | None:
        asked.append(path)
        return texts.get(path)

    layout = RepoLayout([*PATHS, *texts, "web/util/x.ts", "other/x.ts", "m/a.go", "m/b.go"],
                        read)
    assert sorted(asked) == ["go.mod", "tsconfig.json", "web/tsconfig.json"]
    assert "by_dir" not in vars(layout) and "ts_configs" not in vars(layout)
    assert layout.resolve("web/a.ts", Import("@u/x", "f", None, 0, 1), "typescript") == [
        "web/util/x.ts"]  # (the innermost tsconfig first)
    assert layout.resolve("top.ts", Import("@u/x", "f", None, 0, 1), "typescript") == [
        "other/x.ts"]
    assert layout.resolve("x.go", Import("example.com/m/m", None, None, 0, 1), "go") == [
        "m/a.go", "m/b.go"]
    assert layout.by_base["store.py"] and len(asked) == 3


SHAPES = {
    "pkg/__init__.py": "from .store import Store\nfrom . import helpers\n",
    "pkg/store.py": "class Store:\n    def get(self, key):\n        return key\n",
    "pkg/helpers.py": "from . import store\n\ndef h():\n    return store.Store().get(1)\n",
    "pkg/use.py": "from pkg import Store\nimport pkg.store\n\nStore().get(2)\n"
                  "pkg.store.Store().get(3)\n",
    "pkg/lib.py": "from .store import Store as S\n\nS().get(4)\n",
    "app/main.py": "import pkg\n\npkg.Store().get(5)\n",
    "web/store.ts": "export class Store {\n  get(k: string) { return k; }\n}\n",
    "web/index.ts": "export { Store } from './store';\n",
    "web/use.ts": "import { Store } from '.';\nnew Store().get('a');\n",
    "web/deep/use.ts": "import { Store } from '../store.js';\nnew Store().get('b');\n",
}


@pytest.mark.parametrize("symbol", ["pkg/store.py:2", "web/store.ts:2"])
def test_followed_imports_give_the_candidates_of_every_import_followed(
        store: IndexStore, tmp_path, monkeypatch, symbol: str) -> None:
    """Two copies of a tree (re-exports, `from . import`, `import a.b`, JS `index`
    files and `.js` specifiers): the files searched and the answer are those of
    following every import of every file found (the filter never drops a file)."""
    repo = RepoBuilder(tmp_path / "mono")
    for copy in ("a", "b"):
        for path, text in SHAPES.items():
            repo.write(f"{copy}/{path}", text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    d = name_definition(store, f"a/{symbol}", ["mono"])

    def every_import(self: queries._Graph, path: str, reach: set[str],
                     tails: set[str]) -> bool:
        peek = self.ws.peek(path)
        if peek is None:
            return False
        if peek.language != "python" and peek.language not in ("typescript", "javascript"):
            return True
        return any(not reach.isdisjoint(self.ws.layout.import_files(path, i, peek.language))
                   for i in peek.imports)

    answers = []
    for patch in (False, True):
        workspace._cache.clear()
        with monkeypatch.context() as m:
            if patch:
                m.setattr(queries._Graph, "_lands", every_import)
            graph = queries._Graph(store, "mono")
            target = graph.target_of(d)
            assert target is not None
            files = graph.candidates(target)
            refs = queries.references(store, d)
        answers.append((files, [(u.path, u.line, u.kind) for u in refs.usages]))
    assert answers[0] == answers[1]
    files, usages = answers[0]
    assert all(f.startswith("a/") for f in files) and len(usages) >= 2
    if symbol.endswith(".py:2"):  # (through the package, not its `lib.py` module)
        assert {("a/pkg/use.py", 4, "call"), ("a/pkg/use.py", 5, "call"),
                ("a/app/main.py", 3, "call")} <= set(usages)
    workspace._cache.clear()


def test_a_python_lib_module_is_not_its_package() -> None:
    """Python's `pkg/lib.py` (or `index.py`, `mod.py`) is the module `pkg.lib`; only
    `__init__` stands for its package (JS `index` and Rust `mod`/`lib` files still do)."""
    assert module_name("pkg/lib.py") == "pkg.lib" and module_name("pkg/index.pyi") == "pkg.index"
    assert module_name("pkg/__init__.py") == "pkg" and module_name("web/index.ts") == "web"
    assert module_name("src/mod.rs") == "src" and module_name("a/src/lib.rs") == "a.src"
    layout = RepoLayout(PATHS, lambda p: None)
    assert layout.python_module("top.py", "pkg", 0) == ["pkg/__init__.py"]
    assert layout.python_module("top.py", "pkg.lib", 0) == ["pkg/lib.py"]


def test_a_query_pauses_the_collector_and_puts_it_back(store: IndexStore, tmp_path) -> None:
    """Inside `collector_paused` the collector is off (nested and from two threads: the
    last one out turns it back on); a query leaves it as it found it."""
    assert gc.isenabled()
    inside: list[bool] = []
    entered, release = threading.Barrier(2), threading.Event()

    def other() -> None:
        with workspace.collector_paused():
            entered.wait()
            release.wait()
            inside.append(gc.isenabled())

    t = threading.Thread(target=other)
    t.start()
    with workspace.collector_paused():
        entered.wait()
        with workspace.collector_paused():
            inside.append(gc.isenabled())
        inside.append(gc.isenabled())
    inside.append(gc.isenabled())  # the other thread is still inside
    release.set()
    t.join()
    assert inside == [False, False, False, False] and gc.isenabled()
    repo = RepoBuilder(tmp_path / "r")
    for path, text in SHAPES.items():
        repo.write(path, text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    d = name_definition(store, "pkg/store.py:2", ["r"])
    assert queries.references(store, d).usages and gc.isenabled()
    gc.disable()
    try:
        queries.callers(store, d)
        assert not gc.isenabled()
    finally:
        gc.enable()
    workspace._cache.clear()
