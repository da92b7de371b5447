"""`ctxd search --batch` writes JSON Lines through orjson (`render.dumps_line`): the same
objects as `render.dumps` writes, on one line each, valid UTF-8 whatever the text holds."""

from __future__ import annotations

import dataclasses
import datetime
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxd.indexer.errors import CtxdError
from ctxd.server.cli import render
from ctxd.server.cli.main import main
from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder


@pytest.fixture
def service(isolated_env: Path) -> Iterator[Service]:
    svc = Service(load_settings({}), embedder=FakeEmbedder())
    yield svc
    svc.close()


@dataclasses.dataclass
class _Point:
    x: int


@pytest.mark.parametrize("orjson_installed", [True, False])
@pytest.mark.parametrize("obj", [
    {"path": "caf\u00e9/\u65e5\u672c.py", "score": 5950.0, "lines": ["a\tb", "\"q\"\\"],
     "none": None, "flags": [True, False], "n": -3, "pair": (1, 2)},
    {"path": "bad\udcff.py", "text": "ok"},  # a lone surrogate: an undecodable file name
    {"when": datetime.date(2026, 11, 27), "at": _Point(1)},  # json's default=str
    {1: "int key"},
    {"big": 2**70},
])
def test_a_json_line_is_what_dumps_writes(obj, orjson_installed, monkeypatch):
    if not orjson_installed:  # an install without orjson: `json` writes the line
        monkeypatch.setitem(sys.modules, "orjson", None)
    line = render.dumps_line(obj)
    assert "\n" not in line
    line.encode("utf-8")  # valid UTF-8: a surrogate is escaped, never written raw
    assert json.loads(line) == json.loads(render.dumps(obj))


def test_batch_lines_are_the_json_of_each_search(service: Service, repo: RepoBuilder,
                                                 monkeypatch: pytest.MonkeyPatch):
    repo.write("pkg/app.py", "def handler(request):\n    return 'caf\u00e9'\n\n"
                             "class Handler:\n    def handle(self):\n        return handler(1)\n")
    repo.write("docs/notes.md", "# Handler\r\nThe handler answers \u65e5\u672c.\r\n")
    service.index(repo.root)
    monkeypatch.chdir(repo.root)
    queries = ["handler", "caf\u00e9", "case:yes Handler", "nothing_matches_this", "foo("]
    r = CliRunner().invoke(main, ["search", "--batch", "-", "--mode", "lexical"],
                           input="\n".join(queries) + "\n", catch_exceptions=False)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) == len(queries)
    for n, (query, line) in enumerate(zip(queries, lines, strict=True), start=1):
        got = json.loads(line)
        assert got.pop("id") == n
        try:
            want = render.search_page_json(service.search(query, mode="lexical",
                                                          repositories=["repo"]))
        except CtxdError as err:
            want = err.to_dict()
        assert got == json.loads(render.dumps(want))
    assert json.loads(lines[0])["results"][0]["symbol"] in ("handler", "Handler")
