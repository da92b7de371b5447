"""Reading and judging admitted files (`indexer.walk.judge`): files kept for lexical search
only may be larger than `max_file_size`, up to `max_lexical_file_size`; anything else over
`max_file_size` is refused; an index built under older rules re-decides its files once.
Real files on disk, a real SQLite index."""

from __future__ import annotations

import json
from pathlib import Path

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.store.sqlite.store import Store
from ctxd.indexer.walk.textclass import RULES_VERSION
from ctxd.indexer.walk.walker import WalkOptions
from tests.conftest import FakeEmbedder, RepoBuilder

MB = 1 << 20


def package_lock(size: int) -> str:
    """An npm v3 lockfile of at least `size` bytes."""
    packages: dict[str, object] = {"": {"name": "shop", "version": "1.0.0"}}
    i = 0
    while True:
        name = f"pkg-{i:05d}"
        packages[f"node_modules/{name}"] = {
            "version": "1.0.0",
            "resolved": f"https://registry.npmjs.org/{name}/-/{name}-1.0.0.tgz",
            "integrity": f"sha512-{i:064x}",
        }
        i += 1
        if i % 500 == 0:
            text = json.dumps({"name": "shop", "lockfileVersion": 3, "packages": packages},
                              indent=2)
            if len(text) >= size:
                return text + "\n"


def test_a_large_lockfile_is_greppable_and_large_code_is_refused(repo: RepoBuilder,
                                                                 tmp_path: Path) -> None:
    repo.write("package-lock.json", package_lock(3 * MB))
    repo.write("src/huge.py", "def f():\n    return 1\n" * (3 * MB // 22))
    repo.write("src/app.py", "def main():\n    return 0\n")
    store = Store.open(tmp_path / "index.db")
    stats = Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    assert stats.not_embedded == {"lockfile": 1}
    assert stats.files_skipped == {"too_large": 1}
    (big,) = stats.skipped_files
    assert big.path == "src/huge.py"
    assert "max_file_size 1048576" in big.detail and "max_lexical_file_size" in big.detail
    rows = store.query("SELECT f.path FROM files f JOIN file_text t ON t.rowid = f.id "
                       "WHERE t.content LIKE '%pkg-04321%'")
    assert [r[0] for r in rows] == ["package-lock.json"]
    assert not store.query("SELECT 1 FROM checkpoints WHERE path = 'package-lock.json'")


def test_the_lexical_limit_applies_to_lexical_only_files(repo: RepoBuilder,
                                                         tmp_path: Path) -> None:
    repo.write("package-lock.json", package_lock(3 * MB))
    store = Store.open(tmp_path / "index.db")
    stats = Indexer(store, FakeEmbedder()).index(
        repo.root, WalkOptions(max_lexical_file_size=2 * MB))
    assert stats.files_skipped == {"too_large": 1}
    assert "max_lexical_file_size 2097152" in stats.skipped_files[0].detail


def test_an_index_built_under_older_rules_re_decides_its_files(repo: RepoBuilder,
                                                               tmp_path: Path) -> None:
    repo.write("package.json", json.dumps({"name": "fetchy", "main": "dist/fetchy.js"}))
    repo.write("dist/fetchy.js", "function retryWithBackoff(call) {\n  return call();\n}\n")
    repo.write("lib/retry.js", "export function retryWithBackoff(call) {\n  return call();\n}\n")
    store = Store.open(tmp_path / "index.db")
    indexer = Indexer(store, FakeEmbedder())
    first = indexer.index(repo.root, WalkOptions())
    assert first.not_embedded == {"built": 1}
    # the repository as an older ctxd left it: the bundle embedded, no rules version stored
    repo_row = store.repo_by_root(str(repo.root))
    assert repo_row is not None and repo_row.options["rules_version"] == RULES_VERSION
    old = {k: v for k, v in repo_row.options.items() if k != "rules_version"}
    store.upsert_repo(str(repo.root), old, "2026-01-01T00:00:00Z")
    with store.transaction():
        store.db.execute("UPDATE files SET role = '' WHERE path = 'dist/fetchy.js'")
    again = indexer.index(repo.root, WalkOptions())
    assert again.files_updated == 1 and again.not_embedded == {"built": 1}
    assert indexer.index(repo.root, WalkOptions()).files_updated == 0
