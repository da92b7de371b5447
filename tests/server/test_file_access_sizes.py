"""A file refused for its size says what would let it in, and nothing that would not
(found with an 80 MB log in a messy tree: the hint said to re-index with
`--max-file-size 10485760`, which can never admit it).

Real temp repositories (sparse files: their size is refused before anything is read), a
real SQLite index (fake embedder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.indexer.errors import FileRefused
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder

MIB = 1 << 20


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = Service(load_settings({"home": str(tmp_path / "ctxd-home")}), embedder=FakeEmbedder())
    yield svc
    svc.close()


def sparse(repo: RepoBuilder, rel: str, size: int) -> None:
    with open(repo.root / rel, "wb") as f:
        f.truncate(size)


def refused(service: Service, path: str) -> FileRefused:
    with pytest.raises(FileRefused) as exc:
        service.file_content("repo", path)
    assert exc.value.details["reason"] == "too_large"
    return exc.value


def test_the_hint_for_a_large_file_names_only_limits_that_would_admit_it(
    service: Service, repo: RepoBuilder
) -> None:
    repo.write("app.py", "print(1)\n")
    repo.write_size("two.txt", 2 * MIB)
    sparse(repo, "twenty.log", 20 * MIB)
    sparse(repo, "eighty.log", 80 * MIB)
    service.index(repo.root)

    small = refused(service, "two.txt")  # a bigger max_file_size admits it
    assert small.hint is not None and "--max-file-size" in small.hint

    mid = refused(service, "twenty.log")  # over max_file_size's own ceiling (10 MiB)
    assert mid.hint is not None and "--max-file-size" not in mid.hint
    assert "max_lexical_file_size" in mid.hint and "lexical search only" in mid.hint

    huge = refused(service, "eighty.log")  # over what ctxd reads of any file (64 MiB)
    assert huge.hint is not None
    assert "max_file_size" not in huge.hint and "max_lexical_file_size" not in huge.hint
    assert "64 MiB" in huge.hint and "rg" in huge.hint
