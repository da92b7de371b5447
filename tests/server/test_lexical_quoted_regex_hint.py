"""A quoted lexical query that finds nothing because its text is still a regular expression
says so, and how to write it literally (found on a messy tree: `"start_engine(3)"` looked
for `start_engine3` and answered "No results", with no word on why; the README calls
quotes an "exact phrase").

A real repository and SQLite index (fake embedder); the service's lexical use case as the
CLI and MCP call it, and the CLI itself.
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
    repo.write("engine.py", "def start_engine(speed):\n    return speed * 2\n\n\n"
                            "def main():\n    return start_engine(3) + total[0]\n")
    svc = Service(load_settings({"home": str(tmp_path / "home")}), embedder=FakeEmbedder())
    svc.index(repo.root)
    yield svc
    svc.close()


def notes(service: Service, query: str) -> tuple[list[str], list[str]]:
    page = service.lexical(query)
    return [f.path for f in page.result.files], list(page.result.notes)


def test_a_quoted_query_that_finds_nothing_for_its_regex_says_how_to_write_it(
    service: Service,
) -> None:
    files, said = notes(service, '"start_engine(3)"')
    assert files == []
    hint = [n for n in said if "regular expression" in n]
    assert hint, said
    assert '`"start_engine\\\\(3\\\\)"`' in hint[0]
    files, said = notes(service, '"start_engine\\\\(3\\\\)"')  # the spelling it suggests
    assert files == ["engine.py"]
    assert not [n for n in said if "regular expression" in n]
    files, said = notes(service, '"total[0]"')
    assert files == [] and any('`"total\\\\[0\\\\]"`' in n for n in said)


def test_no_hint_when_the_quoted_regex_finds_something(service: Service) -> None:
    files, said = notes(service, '"(start|stop)_engine"')  # a group on purpose
    assert files == ["engine.py"]
    assert not [n for n in said if "regular expression" in n]
