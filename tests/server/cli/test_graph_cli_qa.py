"""What a QA pass over real, messy trees found in `ctxd refs`, `callers`, `callees`, `path`
and `impact` (issue 38), each as the smallest tree that shows it, through the real CLI on a
real index."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run


def index(root: Path) -> None:
    service = Service(load_settings({}), embedder=FakeEmbedder())
    try:
        service.index(root)
    finally:
        service.close()


@pytest.fixture
def shop(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "shop")
    repo.write("app/store.py", "class Store:\n    def get(self, key):\n        return key\n")
    repo.write("app/use.py", "from app.store import Store\n\n\ndef handler(key):\n"
               + "".join(f"    Store().get(key + {n})\n" for n in range(8)))
    index(repo.root)
    monkeypatch.chdir(repo.root)
    return repo


def test_a_cut_by_name_list_says_so_in_text(shop: RepoBuilder) -> None:
    """`refs NAME --by-name --limit N` said "N usages" and stopped, silently (the issue's
    complaint about text mode); `--json` had `truncated: true`."""
    r = run("refs", "Store.get", "--by-name", "--limit", "3")
    assert r.exit_code == 0, r.output
    assert "1 definitions, 3 usages of get" in r.stdout
    assert r.stdout.rstrip().endswith("(cut at 3 usages; raise --limit to see more)")
    whole = run("refs", "Store.get", "--by-name").stdout
    assert "cut" not in whole and "8 usages of get" in whole
