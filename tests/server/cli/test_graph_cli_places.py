"""Graph commands given files the way the CLI prints them, and `impact` of a whole file.

Found by trying the commands on real trees (jq, gin, guzzle): `callers jv.c:2014` from
`jq/src` and `refs gin/logger.go:224` (the CLI's own `REPO/PATH`) were NOT_FOUND; `impact
context.go` listed the file's own methods as its dependents; `impact src/Client.php` was
'not a symbol'; an ambiguous name across repositories listed paths without them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.search.graph.models import Edge
from ctxd.server.config import load_settings
from ctxd.server.mcp.graph_markdown import _edge_row
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run

SHOP = {
    "app/models.py": '''class Store:
    def get(self, key):
        return self.load(key)

    def load(self, key):
        return key


def make():
    return Store()


DEFAULT = make()
''',
    "app/api.py": '''from app.models import Store


def handler(key):
    return Store().get(key)


def twice(key):
    Store().get(key)
    return Store().get(key)
''',
    "app/Client.php": '''<?php
class Client
{
    public function send($request)
    {
        return $request;
    }
}
''',
}
OTHER = {"lib/tool.py": "def make():\n    return 1\n"}


@pytest.fixture
def two(isolated_env: Path, tmp_path: Path) -> tuple[RepoBuilder, RepoBuilder]:
    shop, other = RepoBuilder(tmp_path / "shop"), RepoBuilder(tmp_path / "other")
    for repo, files in ((shop, SHOP), (other, OTHER)):
        for path, text in files.items():
            repo.write(path, text)
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(shop.root)
    service.index(other.root)
    service.close()
    return shop, other


def test_paths_as_printed_name_the_definition(two, monkeypatch):
    shop, _ = two
    monkeypatch.chdir(shop.root / "app")  # cwd-relative, as the CLI prints them here
    r = run("callers", "models.py:5")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Store.load (method) at models.py:5: 1 direct caller")
    assert run("callers", "app/models.py:5").exit_code == 0  # root-relative still works
    assert run("impact", "./models.py", "--json").exit_code == 0
    monkeypatch.chdir(shop.root.parent)  # REPO/PATH, from the folder above
    out = json.loads(run("refs", "shop/app/models.py:1", "--json").stdout)
    assert out["definitions"][0]["qualified_name"] == "Store"
    monkeypatch.chdir("/")  # REPO/PATH from anywhere: the repository's name
    path = json.loads(run("path", "shop/app/api.py:4", "Store.load", "--json").stdout)
    assert [[e["qualified_name"] for e in p] for p in path["paths"]] == [
        ["Store.get", "Store.load"]]  # the chain after the source


def test_impact_of_a_file_lists_only_code_outside_it(two, monkeypatch):
    shop, _ = two
    monkeypatch.chdir(shop.root)
    out = json.loads(run("impact", "app/models.py", "--json").stdout)
    assert {(d["path"], d["name"]) for d in out["dependents"]} == {
        ("app/api.py", None), ("app/api.py", "handler"), ("app/api.py", "twice")}  # not Store.get


def test_impact_takes_path_line_of_a_definition_as_the_other_commands_do(two, monkeypatch):
    monkeypatch.chdir(two[0].root)  # it said 'not a code file the code graph reads'
    by_place = run("impact", "app/models.py:5", "--json")
    assert by_place.exit_code == 0, by_place.output
    by_name = json.loads(run("impact", "Store.load", "--json").stdout)
    got = json.loads(by_place.stdout)
    assert got["definitions"] == by_name["definitions"] and got["dependents"] == by_name[
        "dependents"] and got["dependents"]


def test_impact_of_a_php_file_nothing_uses_says_0_dependents(two, monkeypatch):
    monkeypatch.chdir(two[0].root)
    r = run("impact", "app/Client.php")
    assert r.exit_code == 0, r.output
    assert "0 dependents" in r.stdout and "does not read" not in r.stdout


def test_an_ambiguous_name_across_repositories_names_them(two, monkeypatch):
    monkeypatch.chdir("/")
    r = run("refs", "make")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "make (function) at other/lib/tool.py:1" in r.stderr
    assert "make (function) at shop/app/models.py:9" in r.stderr
    assert "--repo NAME" in r.stderr


def test_a_call_from_module_level_code_is_resolved_not_unresolved(two, monkeypatch):
    """jq's `#define BINOP(name) ... jv_free(input)`: the caller is module-level code,
    and the call resolves; it read '<module>  (unresolved)'."""
    monkeypatch.chdir(two[0].root)
    text = run("callers", "make", "--repo", "shop").stdout
    assert "  (module level)  at app/models.py:13" in text.splitlines()
    assert "unresolved" not in text
    edge = Edge("app/models.py", 13, 11, None, "<module>", 1)
    assert _edge_row(edge) == "- (module level) — call at app/models.py:13"
    assert "`len` (unresolved)" in _edge_row(Edge("a.py", 1, 0, None, "len", 1, False))


def test_a_path_is_one_chain_not_one_per_call_site(two, monkeypatch):
    """jq's `path jq_next jv_free` printed the one chain five times (five call sites of
    jv_free in jq_next), '5 shortest paths, 1 calls each'."""
    monkeypatch.chdir(two[0].root)
    text = run("path", "twice", "Store.get").stdout
    assert text.splitlines() == ["twice -> Store.get: 1 shortest path, 1 call", "  twice",
                                 "    -> Store.get (called at app/api.py:9)"]
    two_ways = run("path", "handler", "Store.load").stdout
    assert two_ways.splitlines()[0] == "handler -> Store.load: 1 shortest path, 2 calls"


JAVA = {
    "src/main/java/com/x/Foo.java": "package com.x;\n\npublic class Foo {\n"
                                    "  public static Foo make() {\n    return new Foo();\n  }\n}\n",
    "src/test/java/com/x/FooTest.java": "package com.x;\n\npublic class FooTest {\n"
                                        "  void makes() {\n    Foo.make();\n  }\n}\n",
    "src/test/java/com/y/BarTest.java": "package com.y;\n\npublic class BarTest {\n"
                                        "  void makes() {\n    Foo.make();\n  }\n}\n",
}


def test_java_tests_see_their_package_without_an_import(isolated_env, tmp_path, monkeypatch):
    """JavaPoet: `TypeSpec.classBuilder` had 1 reference of 172, every test in
    src/test/java/com/squareup/javapoet/ calls it without an import (same package, other
    source set)."""
    repo = RepoBuilder(tmp_path / "poet")
    for path, text in JAVA.items():
        repo.write(path, text)
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    monkeypatch.chdir(repo.root)
    out = json.loads(run("refs", "Foo.make", "--json").stdout)
    assert [(u["path"], u["line"]) for u in out["usages"]] == [
        ("src/test/java/com/x/FooTest.java", 5)]  # not com.y's, which would need an import


def test_a_rust_path_names_the_definition(isolated_env, tmp_path, monkeypatch):
    """axum: `ctxd refs axum::routing::Router::merge` was NOT_FOUND (the file is
    axum/src/routing/mod.rs, a crate named axum-core is `axum_core` in paths)."""
    repo = RepoBuilder(tmp_path / "ws")
    repo.write("my-core/src/routing/mod.rs",
               "pub struct Router;\n\nimpl Router {\n    pub fn merge(self) -> Self {\n"
               "        self\n    }\n}\n")
    service = Service(load_settings({}), embedder=FakeEmbedder())
    service.index(repo.root)
    service.close()
    monkeypatch.chdir(repo.root)
    for name in ("my_core::routing::Router::merge", "routing::Router::merge"):
        r = run("refs", name, "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["definitions"][0]["path"] == "my-core/src/routing/mod.rs"
    assert run("refs", "other::Router::merge").exit_code == 1


@pytest.mark.parametrize(("args", "words", "hint"), [
    (("callers", "app/models.py"), "not a symbol: 'app/models.py' (a path without :LINE)",
     "`app/models.py:12`"),
    (("impact", "app/"), "not a symbol: 'app/' (a folder)", "ctxd files 'app/**'"),
])
def test_a_path_where_a_definition_goes_says_what_is_missing(two, monkeypatch, args, words,
                                                              hint):
    monkeypatch.chdir(two[0].root)
    r = run(*args)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert words in r.stderr and hint in r.stderr


def test_by_name_takes_what_refs_takes(two, monkeypatch):
    """`refs src/jv.c:2014 --by-name` and `refs Router::merge --by-name` were 'not a symbol
    name'."""
    monkeypatch.chdir(two[0].root / "app")
    for symbol in ("models.py:5", "app/models.py:5", "Store::load"):
        r = run("refs", symbol, "--by-name", "--json")
        assert r.exit_code == 0, (symbol, r.output)
        out = json.loads(r.stdout)
        assert out["symbol"] == "load"
        assert [(d["path"], d["line"]) for d in out["definitions"]] == [("app/models.py", 5)]
