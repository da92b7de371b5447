"""A symlink to a folder of the repository is not indexed a second time (found on a messy
tree: `links/fastapi_alias -> ../fastapi` made every definition of fastapi ambiguous to
`ctxd callers`, `refs`, `path` and the MCP graph tools: "names 2 definitions"; ripgrep's
`HomebrewFormula -> pkg/brew` is a real one). Its files keep their own path; asking for one
through the link says where it is.

A real repository with real links, a real SQLite index (fake embedder), the service's use
cases as the CLI and MCP call them, and a real watcher for the link made later.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.errors import FileRefused
from ctxd.server.service import Service
from tests.conftest import RepoBuilder
from tests.server.watch.test_watch import TIMEOUT, make_service, start


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    s = make_service(tmp_path / "ctxd-home")
    yield s
    s.close()


def stored(service: Service) -> list[str]:
    store = service.store()
    return sorted(store.stored_files(next(r.id for r in store.repos())))


def callers(service: Service, name: str) -> list[str]:
    calls = service.calls(name, repositories=["repo"])
    return [e.definition.qualified_name for e in calls.edges if e.definition]


def test_a_link_to_a_folder_of_the_repository_is_not_a_second_copy(
    service: Service, repo: RepoBuilder
) -> None:
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/encoders.py", "def encode(obj):\n    return str(obj)\n")
    repo.write("app.py", "from pkg.encoders import encode\n\n\n"
                         "def main():\n    return encode(1)\n")
    (repo.root / "links").mkdir()
    (repo.root / "links" / "pkg_alias").symlink_to("../pkg")
    (repo.root / "README.md").symlink_to("app.py")  # a link to a file is still followed
    stats = service.index(repo.root)
    assert stored(service) == ["README.md", "app.py", "pkg/__init__.py", "pkg/encoders.py"]
    assert stats.files_skipped.get("ignored") == 1
    assert callers(service, "encode") == ["main"]  # one definition, not "names 2"
    with pytest.raises(FileRefused) as exc:
        service.file_content("repo", "links/pkg_alias/encoders.py")
    assert "link to another folder" in exc.value.message
    assert exc.value.hint is not None and "'pkg'" in exc.value.hint
    assert service.file_content("repo", "pkg/encoders.py").content.startswith("def encode")

    watcher = start(service)
    try:  # a link made while watched is not indexed either
        (repo.root / "links" / "again").symlink_to("../pkg")
        repo.write("more.py", "from pkg.encoders import encode\n\n\n"
                              "def again():\n    return encode(2)\n")
        ok = watcher.wait_for(lambda: sorted(callers(service, "encode")) == ["again", "main"],
                              TIMEOUT)
        assert ok, (callers(service, "encode"), stored(service))
        assert not [p for p in stored(service) if p.startswith("links/")]
    finally:
        watcher.stop()
