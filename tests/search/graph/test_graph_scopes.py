"""A relative import keys its file under the folder it climbs to, a Python absolute one
under the importer's top folder and the module's first name (`indexer.graph.links`), and
a definition's candidates look importers up under the folders above the files they may
name and the top folders without a copy of them (`search.graph.candidates`): in a
monorepo of copies, another copy's importers are never read, and the files searched and
the answers are those of looking every importer up by its module's name alone (both
stores)."""

from __future__ import annotations

import posixpath
import re

import pytest

from ctxd.indexer.graph import FileGraph, Import, link_keys
from ctxd.indexer.graph.links import SCOPE, TOP, import_scope
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.protocol import IndexStore
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import candidates, queries, workspace
from ctxd.search.graph.modules import RepoLayout
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.search.graph.test_graph_cold import IMPORTS, PATHS

MORE_IMPORTS = [  # (importer, import, language): dots past the root, `.`, `index` files
    ("a.py", Import("", "x", None, 3, 1), "python"),
    ("pkg/a.py", Import("sub", "deep", None, 1, 1), "python"),
    ("pkg/sub/mod.py", Import("", "sub", None, 2, 1), "python"),
    ("web/a.ts", Import(".", "f", None, 0, 1), "typescript"),
    ("web/a.ts", Import("./util/index", "f", None, 0, 1), "typescript"),
    ("web/a.ts", Import("./c/index.js", "f", None, 0, 1), "javascript"),
    ("top.ts", Import("./web/util", "f", None, 0, 1), "typescript"),
    ("top.ts", Import("../web/util", "f", None, 0, 1), "typescript"),
]


def test_every_file_a_relative_import_names_lies_under_its_scope() -> None:
    """The scope is a necessary condition: whatever `RepoLayout.import_files` finds for a
    relative import lies under `import_scope` (so `_folders_above` of the file holds
    it), and the file's keys for that import all name the scope."""
    layout = RepoLayout([*PATHS, "web/index.ts"], lambda p: None)
    landed = 0
    for path, imp, language in [*IMPORTS, *MORE_IMPORTS]:
        scope = import_scope(path, imp, language)
        relative = imp.level > 0 if language == "python" else imp.module.startswith(".")
        assert (scope is not None) == relative, (path, imp)
        keys = link_keys(FileGraph(language, imports=[imp]), path)
        if scope is None:
            assert not any(SCOPE in k for k in keys)
            top = path.partition("/")[0] if "/" in path else ""
            root = imp.module.partition(".")[0]
            assert all(k.startswith((top + TOP, f"{TOP}{root}{TOP}")) for k in keys) if (
                language == "python") else not any(TOP in k for k in keys)
            continue
        assert all(k.startswith(scope + SCOPE) for k in keys), (path, imp, keys)
        for f in layout.import_files(path, imp, language):
            landed += 1
            assert scope in candidates._folders_above(posixpath.dirname(f)), (path, imp, f)
    assert landed >= 14  # (the table exercises real landings)
    assert import_scope("c7/pkg/a.py", Import("store", "S", None, 1, 1), "python") == "c7/pkg"
    assert import_scope("w/x/a.ts", Import("../y/index", "f", None, 0, 1), "typescript") == "w/y"
    assert link_keys(FileGraph("python", imports=[Import("store", "S", None, 1, 1)]),
                     "c7/pkg/a.py") == ["c7/pkg\x1fstore", "c7/pkg\x1fS"]
    assert link_keys(FileGraph("python", imports=[Import("pkg.store", "S", None, 0, 1)]),
                     "c7/app/a.py") == ["c7\x1estore", "\x1epkg\x1estore", "c7\x1eS",
                                        "\x1epkg\x1eS"]
    assert link_keys(FileGraph("typescript", imports=[Import("lodash", "f", None, 0, 1)]),
                     "c7/web/a.ts") == ["lodash", "f"]


SHAPES = {  # a package, its re-exports, relative and absolute importers, Python and TS
    "pkg/__init__.py": "from .store import Store\nfrom . import helpers\n",
    "pkg/store.py": "class Store:\n    def get(self, key):\n        return key\n",
    "pkg/helpers.py": "from . import store\n\ndef h():\n    return store.Store().get(1)\n",
    "pkg/sub/deep.py": "from ..store import Store\n\ndef d():\n    return Store().get(6)\n",
    "pkg/sub/again.py": "from .. import Store\n\ndef e():\n    return Store().get(7)\n",
    "pkg/use.py": "from pkg import Store\nimport pkg.store\n\nStore().get(2)\n"
                  "pkg.store.Store().get(3)\n",
    "pkg/lib.py": "from .store import Store as S\n\nS().get(4)\n",
    "app/main.py": "import pkg\n\npkg.Store().get(5)\n",
    "web/store.ts": "export class Store {\n  get(k: string) { return k; }\n}\n",
    "web/index.ts": "export { Store } from './store';\n",
    "web/use.ts": "import { Store } from '.';\nnew Store().get('a');\n",
    "web/deep/use.ts": "import { Store } from '../store.js';\nnew Store().get('b');\n",
    "web/deep/far.ts": "import { Store } from '..';\nnew Store().get('c');\n",
}
RELATIVE_ONLY = ("pkg/helpers.py", "pkg/sub/deep.py", "pkg/sub/again.py", "pkg/lib.py",
                 "web/use.ts", "web/deep/use.ts", "web/deep/far.ts", "web/index.ts")
"""The files of `SHAPES` whose imports of the store are all relative."""


@pytest.mark.parametrize("symbol", ["pkg/store.py:2", "web/store.ts:2"])
def test_another_copy_importers_are_not_read_and_answers_are_the_same(
        store: IndexStore, tmp_path, monkeypatch, symbol: str) -> None:
    """Three copies of a tree: the files searched and the usages are those of looking
    each key up without its folder (every copy's importers found, then dropped as
    landing elsewhere); no file of the copy at the same depth (`b`) is read, and of the
    copy one folder deeper (`c/nested`: its absolute imports may reach `a`) only
    absolute importers are. Then a file of `b` that names `a`'s module by its full name
    (`from a.pkg.store import Store`) and one at the root (its nearest `pkg.store` is
    `a`'s, the shortest) are found, as they are without the keys' folders."""
    repo = RepoBuilder(tmp_path / "mono")
    for copy in ("a", "b", "c/nested"):
        for path, text in SHAPES.items():
            repo.write(f"{copy}/{path}", text)
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    python = symbol.endswith(".py:2")
    files, usages, read = _same_answers(store, f"a/{symbol}", monkeypatch)
    others = {f for f in read if not f.startswith("a/")}
    relative_only = {f"{c}/{p}" for c in ("b", "c/nested") for p in RELATIVE_ONLY}
    assert not others & relative_only, sorted(others & relative_only)
    assert not any(f.startswith("b/") for f in others), sorted(others)
    assert all(f.startswith("a/") for f in files)
    assert {u[0] for u in usages} >= ({"a/pkg/sub/deep.py", "a/pkg/sub/again.py"} if python
                                      else {"a/web/use.ts", "a/web/deep/far.ts"})
    if python:
        repo.write("b/app/cross.py", "from a.pkg.store import Store\n\nStore().get(9)\n")
        repo.write("top.py", "from pkg.store import Store\n\nStore().get(10)\n")
        Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
        files, usages, _ = _same_answers(store, f"a/{symbol}", monkeypatch)
        assert {"b/app/cross.py", "top.py"} <= {u[0] for u in usages}


def _same_answers(store: IndexStore, symbol: str, monkeypatch: pytest.MonkeyPatch
                  ) -> tuple[list[str], list[tuple[str, int, str]], set[str]]:
    """The candidates, references and a depth-3 callers tree of `symbol` with the link
    keys looked up as they are, and each without its folder (`_name`: every folder's
    importers under that name): the same; and what the first way read (peeked or
    decoded)."""
    d = name_definition(store, symbol, ["mono"])
    importers = workspace.Workspace.importers

    def unscoped(self: workspace.Workspace, keys: list[str]) -> list[str]:
        every = {k for k, _ in self.store.graph_links(None, None)}
        names = {_name(k) for k in keys}
        return importers(self, sorted(k for k in every if k in keys or _name(k) in names))

    answers = []
    reads: list[set[str]] = []
    for patch in (False, True):
        workspace._cache.clear()
        with monkeypatch.context() as m:
            if patch:
                m.setattr(workspace.Workspace, "importers", unscoped)
            graph = queries._Graph(store, "mono")
            target = graph.target_of(d)
            assert target is not None
            files = graph.candidates(target)
            reads.append(set(graph.ws.shared.peeks) | set(graph.ws.shared.graphs))
            refs = queries.references(store, d)
            calls = queries.callers(store, d, depth=3)
        answers.append((files, [(u.path, u.line, u.kind) for u in refs.usages],
                        [(e.site_path, e.site_line, e.depth) for e in calls.edges]))
    assert answers[0] == answers[1]
    assert len(reads[1]) > len(reads[0])  # (found, then dropped: what the keys save)
    return answers[0][0], answers[0][1], reads[0]


def _name(key: str) -> str:
    """A link key without its folder, top folder or first name."""
    return re.split(f"[{SCOPE}{TOP}]", key)[-1]
