"""The code graph's extraction (`indexer.graph`): sites are code only, with their roles,
receivers, scopes and values; imports per grammar; the blob round-trips."""

from __future__ import annotations

import pytest

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Role, decode, encode, graph_of, link_keys


def graph(language: str, text: str) -> FileGraph:
    g = graph_of(language, parse_source(language, text))
    assert g is not None
    assert decode(encode(g)) == g
    return g


def sites(g: FileGraph, role: Role | None = None) -> list[tuple[str, str | None, int]]:
    return [(s.name, s.receiver, s.line) for s in g.sites if role is None or s.role == role]


PY = '''"""Module doc naming fetch and Session."""
from ..core.models import Session as S, Base
import os.path as osp, json


@decorate(with_arg=1)
class Client(Base, mixins.Retry):
    """fetch() in a docstring is not a call."""

    def fetch(self, url: str, *args, retries: int = 3, **kw) -> Response:
        # fetch in a comment
        s = S()
        s.get(f"{url}/x", timeout=TIMEOUT)
        self.session = S()
        self.session.close()
        for i, (a, b) in enumerate(args):
            pass
        with open(url) as fh:
            return super().fetch(fh, "fetch")

    def outer(self):
        def inner(get):
            return get()
        return inner
'''


def test_python_sites_are_code_only_with_roles_receivers_and_values():
    g = graph("python", PY)
    names = {s.name for s in g.sites}
    assert "doc" not in names and "docstring" not in names and "comment" not in names
    assert [(s.name, s.line) for s in g.sites if s.name == "fetch"] == [("fetch", 19)]
    calls = sites(g, Role.CALL)
    assert ("get", "s", 13) in calls and ("close", "self.session", 15) in calls
    assert ("fetch", "super()", 19) in calls and ("decorate", None, 6) in calls
    binds = {(s.name, s.value) for s in g.sites if s.role == Role.BIND}
    assert {("s", "()S"), ("i", None), ("a", None), ("b", None), ("fh", "()open")} <= binds
    params = {(s.name, s.value) for s in g.sites if s.role == Role.PARAM}
    assert {("url", ":str"), ("args", None), ("retries", ":int"), ("kw", None),
            ("get", None)} <= params
    assert [s.role for s in g.sites if s.name == "self"] == [Role.PARAM] * 2  # never a use
    assert not any(s.name == "with_arg" or s.name == "timeout" for s in g.sites)
    assert [(s.name, s.receiver) for s in g.sites if s.role == Role.INHERIT] == [
        ("Base", None), ("Retry", "mixins")]
    assert [(s.name, s.receiver, s.value) for s in g.sites if s.role == Role.ATTR_BIND] == [
        ("session", "self", "()S")]
    scope = {s.name: g.defs[s.scope].qualname for s in g.sites if s.scope >= 0}
    assert scope["get"] == "Client.outer.inner" and scope["close"] == "Client.fetch"


def test_python_imports_with_aliases_and_relative_levels():
    g = graph("python", PY)
    assert [(i.module, i.name, i.alias, i.level) for i in g.imports] == [
        ("core.models", "Session", "S", 2), ("core.models", "Base", None, 2),
        ("os.path", None, "osp", 0), ("json", None, None, 0)]
    assert [(s.name, s.line) for s in g.sites if s.role == Role.IMPORT] == [
        ("Session", 2), ("S", 2), ("Base", 2), ("osp", 3), ("json", 3)]
    assert {"app\x1epath", "\x1eos\x1epath", "app\x1ejson", "\x1ejson\x1ejson"} <= set(
        link_keys(g, "app/cli/main.py"))  # absolute: the top folder's, the first name's
    assert {"app\x1fmodels", "app\x1fSession", "app\x1fBase"} <= set(  # `from ..core.models`
        link_keys(g, "app/cli/main.py"))


TS = '''// fetchAll in a comment
import Default, { a as b, c } from "./lib/util";
import * as ns from "@/core";
export { q as r } from "../z";
export * from "./w";
const m = require("./m");

/** doc fetchAll */
export class Api extends Base implements Client {
  private s = new Session();
  fetchAll(p: Session, o?: Options): void {
    this.get(`url ${p.path} fetchAll`);
    const local = new Session();
    local.fetch("fetchAll");
    ns.helper(b);
  }
}
const arrow = (x) => x.go();
'''


def test_typescript_imports_calls_and_no_strings():
    g = graph("typescript", TS)
    assert [(i.module, i.name, i.alias, i.reexport) for i in g.imports] == [
        ("./lib/util", "default", "Default", False), ("./lib/util", "a", "b", False),
        ("./lib/util", "c", None, False), ("@/core", "*", "ns", False),
        ("../z", "q", "r", True), ("./w", "*", None, True), ("./m", None, "m", False)]
    assert [(s.name, s.line) for s in g.sites if s.name == "fetchAll"] == []
    calls = sites(g, Role.CALL)
    assert {("get", "this", 12), ("fetch", "local", 14), ("helper", "ns", 15),
            ("Session", None, 13), ("go", "x", 18)} <= set(calls)
    assert ("path", "p", 12) in sites(g, Role.REF)  # inside a template substitution
    assert {(s.name, s.value) for s in g.sites if s.role == Role.PARAM} >= {
        ("p", ":Session"), ("o", ":Options"), ("x", None)}
    assert ("local", "()Session") in {(s.name, s.value) for s in g.sites
                                      if s.role == Role.BIND}
    assert [s.name for s in g.sites if s.role == Role.INHERIT] == ["Base", "Client"]


@pytest.mark.parametrize(("language", "text", "calls", "imports"), [
    ("go", 'package a\n\nimport (\n\tf "fmt"\n\t"net/http"\n)\n\n// Run calls Serve\n'
     'func Run(s *Server) {\n\tf.Println("Serve")\n\ts.Serve(http.X)\n}\n',
     {("Println", "f"), ("Serve", "s")}, [("fmt", "f"), ("net/http", "http")]),
    ("rust", 'use crate::net::{Client, retry as again};\nmod util;\n\n/// calls fetch\n'
     'fn main() {\n    let c = Client::new();\n    c.fetch("fetch");\n    println!("{}", 1);\n}\n',
     {("new", "Client"), ("fetch", "c"), ("println", None)},
     [("crate::net", None), ("crate::net", "again"), ("self", None)]),
    ("java", 'import java.util.List;\n\nclass A extends B {\n  // fetch\n'
     '  void run() { List x = new List(); x.fetch("fetch"); }\n}\n',
     {("fetch", "x"), ("List", None)}, [("java.util", None)]),
    ("c", '#include "util.h"\n#include <stdio.h>\n/* fetch */\n'
     'int main(void) { fetch("fetch"); return 0; }\n',
     {("fetch", None)}, [("util.h", None), ("stdio.h", None)]),
    ("ruby", "require_relative 'lib/util'\n# fetch\nclass A < B\n  def run\n"
     "    c = Client.new\n    c.fetch('fetch')\n  end\nend\n",
     {("fetch", "c"), ("new", "Client")}, [("lib/util", None)]),
])
def test_other_grammars_calls_imports_and_no_comment_or_string(language, text, calls, imports):
    g = graph(language, text)
    got = {(s.name, s.receiver) for s in g.sites if s.role == Role.CALL}
    assert calls <= got, got
    assert [(i.module, i.alias) for i in g.imports] == imports
    lines = text.split("\n")
    for s in g.sites:  # no site lies inside a comment or a string literal
        line = lines[s.line - 1]
        before = line[: s.col - 1]
        assert before.count('"') % 2 == 0 and before.count("'") % 2 == 0, (s, line)
        assert "//" not in before and "#" not in before.replace("#include", "") and (
            "/*" not in before), (s, line)


def test_a_file_without_a_parse_or_grammar_has_no_graph():
    assert graph_of("python", None) is None
    assert graph_of("markdown", parse_source("python", "x = 1\n")) is None
