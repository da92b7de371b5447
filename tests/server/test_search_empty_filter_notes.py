"""A search that finds nothing because its path or language filter matches no indexed file
says so (found on a messy tree: `ctxd search "how to encode json" --path 'nope/**'` and
`--lang rust` in a tree without Rust answered a bare "No results"; lexical search's own
`lang:` already said "matches no indexed file").

A real repository and SQLite index (fake embedder); the service's search use case, as the
CLI, the daemon and MCP call it, in each mode.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


@pytest.fixture
def service(tmp_path: Path, repo: RepoBuilder) -> Iterator[Service]:
    repo.write("src/encode.py", "def encode_json(obj):\n    return str(obj)\n")
    repo.write("docs/guide.md", "# Guide\n\nHow to encode json.\n")
    svc = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    svc.index(repo.root)
    yield svc
    svc.close()


@pytest.mark.parametrize("mode", ["hybrid", "semantic", "keyword", "lexical"])
def test_a_filter_that_matches_no_file_is_named(service: Service, mode: str) -> None:
    query = "encode_json" if mode == "lexical" else "encode json"
    page = service.search(query, mode=mode, path_glob="nope/**")
    assert page.results == []
    said = [n for n in page.notes if "matches no indexed file" in n]
    assert said and "'nope/**'" in said[0] and "ctxd files" in said[0], page.notes
    page = service.search(query, mode=mode, language="rust")
    assert page.results == []
    said = [n for n in page.notes if "matches no indexed file" in n]
    assert len(said) == 1 and "rust" in said[0] and "python" in said[0], page.notes


def test_no_note_when_the_filter_matches_files(service: Service) -> None:
    page = service.search("zzzunmatched qqq", mode="keyword", path_glob="src/**",
                          language="python")
    assert page.results == []
    assert not [n for n in page.notes if "matches no indexed file" in n]
