"""`ctxd refs`, `callers`, `callees`, `path` and `impact` end to end: a real index, the
CLI's text and `--json` shapes (bench/graph_eval reads them), and bad input as clear
errors with exit codes, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

FILES = {
    "app/models.py": '''class Store:
    def get(self, key):
        return self.load(key)

    def load(self, key):
        return key


class Other:
    def get(self, key):
        return None
''',
    "app/api.py": '''from app.models import Store


def handler(key):
    store = Store()
    return store.get(key)  # get, in a comment


def main():
    return handler("x")
''',
    "tests/test_api.py": "from app.api import handler\n\n\ndef test_handler():\n"
                         "    assert handler('k') == 'k'\n",
}


@pytest.fixture
def indexed(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "shop")
    for path, text in FILES.items():
        repo.write(path, text)
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    monkeypatch.chdir(repo.root)
    return repo


def test_refs_json_and_text(indexed):
    r = run("refs", "Store.get", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["definitions"] == [{"name": "get", "qualified_name": "Store.get",
                                   "kind": "method", "repository": "shop",
                                   "path": "app/models.py", "line": 2, "end_line": 3}]
    assert out["usages"] == [{"path": "app/api.py", "line": 6, "column": 18, "kind": "call",
                              "resolved": True, "in": "handler",
                              "text": "return store.get(key)  # get, in a comment"}]
    assert out["truncated"] is False and out["total"] == 1
    text = run("refs", "app/models.py:1").stdout
    assert text.splitlines()[:4] == ["Store (class) at app/models.py:1: 2 references", "",
                                     "app/api.py", "  1:24  import    from app.models import Store"]
    cut = run("refs", "Store", "--limit", "1")
    assert "(cut: 1 of 2 shown; raise --limit to see more)" in cut.stdout
    by_name = json.loads(run("refs", "get", "--by-name", "--json").stdout)
    assert {(u["path"], u["line"]) for u in by_name["usages"]} >= {("app/api.py", 6)}
    assert {(u["kind"], u["resolved"]) for u in by_name["usages"]} == {("text", False)}
    assert "(by name: text matches, not resolved)" in run("refs", "get", "--by-name").stdout


def test_callers_callees_path_and_impact(indexed):
    out = json.loads(run("callers", "Store.load", "--depth", "3", "--json").stdout)
    assert [(c["depth"], c["qualified_name"], c["site"]["path"], c["site"]["line"])
            for c in out["callers"]] == [
        (1, "Store.get", "app/models.py", 3), (2, "handler", "app/api.py", 6),
        (3, "main", "app/api.py", 10), (3, "test_handler", "tests/test_api.py", 5)]
    first = out["callers"][0]
    assert first["definition"] == {"name": "get", "qualified_name": "Store.get",
                                   "path": "app/models.py", "line": 2, "kind": "method"}
    text = run("callers", "Store.load", "--depth", "2").stdout
    assert text.splitlines() == ["Store.load (method) at app/models.py:5: 1 direct caller",
                                 "  Store.get  at app/models.py:3",
                                 "    handler  at app/api.py:6"]
    callees = json.loads(run("callees", "handler", "--json").stdout)["callees"]
    assert [(c["name"], c["qualified_name"], c["resolved"]) for c in callees] == [
        ("Store", "Store", True), ("get", "Store.get", True)]
    path = json.loads(run("path", "main", "Store.load", "--json").stdout)
    assert [[e["qualified_name"] for e in p] for p in path["paths"]] == [
        ["handler", "Store.get", "Store.load"]]
    assert "no call path within 5 calls" in run("path", "Store.load", "main").stdout
    impact = json.loads(run("impact", "app/models.py", "--json").stdout)
    assert {(t["path"], t["name"]) for t in impact["tests"]} == {
        ("tests/test_api.py", None), ("tests/test_api.py", "test_handler")}  # import, call
    assert impact["dependents"][0]["distance"] == 1


@pytest.mark.parametrize(("args", "code", "words"), [
    (("refs", "get"), 2, "'get' names 2 definitions: Store.get (method) at app/models.py:2; "
                         "Other.get (method) at app/models.py:10"),
    (("refs", "nothing_here"), 1, "no definition named 'nothing_here'"),
    (("callers", "app/models.py:4"), 1, "no definition at app/models.py:4"),
    (("callers", "Store.get", "--depth", "9"), 2, "depth must be between 1 and 6, not 9"),
    (("callees", "Store.get", "--depth", "0"), 2, "depth must be between 1 and 6, not 0"),
    (("path", "main", "a b"), 2, "not a symbol: 'a b'"),
    (("impact", "app/nothing.py"), 1, "no indexed file at app/nothing.py"),
])
def test_bad_input_is_a_clear_error(indexed, args, code, words):
    r = run(*args)
    assert r.exit_code == code, r.output
    assert words in r.stderr and "Traceback" not in r.output
    assert "hint:" in r.stderr


def test_refs_with_nothing_resolved_points_to_the_text_matches(indexed):
    """An empty resolved answer with nothing left unresolved (no file imports the module,
    or only a C header reaches it) still says where the text matches are."""
    text = run("refs", "main").stdout
    assert text.startswith("main (function) at app/api.py:") and ": 0 references" in text
    assert "`--by-name` lists every text match" in text
