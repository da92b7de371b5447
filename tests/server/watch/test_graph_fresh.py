"""The code graph stays as fresh as the text: the watcher's re-index of an edited file
rewrites its graph, and the next `callers` sees the new call."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ctxd.server.service import Service
from tests.conftest import RepoBuilder
from tests.server.watch.test_watch import TIMEOUT, make_service, start


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    s = make_service(tmp_path / "ctxd-home")
    yield s
    s.close()


def callers(service: Service) -> list[str]:
    calls = service.calls("Engine.start", repositories=["repo"])
    return [e.definition.qualified_name for e in calls.edges if e.definition]


def test_callers_follow_an_edit_through_the_watcher(service, repo: RepoBuilder):
    repo.write("app/engine.py", "class Engine:\n    def start(self):\n        return 1\n")
    repo.write("app/run.py", "from app.engine import Engine\n\n\ndef main():\n"
                             "    return Engine().start()\n")
    service.index(repo.root)
    assert callers(service) == ["main"]
    watcher = start(service)
    try:
        repo.write("app/other.py", "from app.engine import Engine\n\n\ndef again():\n"
                                   "    e = Engine()\n    return e.start()\n")
        assert watcher.wait_for(lambda: callers(service) == ["again", "main"], TIMEOUT)
        repo.write("app/run.py", "def main():\n    return None\n")
        assert watcher.wait_for(lambda: callers(service) == ["again"], TIMEOUT)
    finally:
        watcher.stop()
