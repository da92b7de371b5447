"""The walk's fast paths (`indexer.graph.extract._fast`: plain member accesses and calls
answered by `_Walk.run` itself) record exactly what the table-driven rules
(`_Walk.children`, `extract.PLAIN`) record, on the shapes they take over and the ones
they must leave alone."""

from __future__ import annotations

import sys

import pytest

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Role, graph_of

EXTRACT = sys.modules["ctxd.indexer.graph.extract"]

SOURCES = {
    "python": '''import os
from pkg import mod as m


class Client(Base):
    def fetch(self, url: "Session", *args, n: int = 3):
        s = Session()
        s.get(url, timeout=self.timeout).json()["x"].items()
        self.session.close()
        os.path.join(a.b.c, m.f(x)(y))
        (lambda q: q.r)(s).t
        return s.send(req, **kw)
''',
    "typescript": '''import { Observable } from "./Observable";
const fs = require("fs");
interface Helpers { cold: typeof TestScheduler.prototype.createColdObservable; }
export class A<T> extends B implements C {
  private x = new Map<string, Sub>();
  run(cb: (a: Action<T>) => void): void {
    this.x.get("k")!.unsubscribe();
    new Subject<T>().pipe(map((v) => v.y), take(1)).subscribe(this.obs);
    operate((source, subscriber) => source.subscribe(subscriber));
    (cond ? a : b).call(this);
    foo<T>(x)?.bar.baz();
  }
}
''',
    "javascript": '''const express = require("express");
const { a, b: c } = require("./lib");
module.exports = function (app) {
  app.get("/", (req, res) => res.send(req.query.x));
  new Router().use(mw);
  require("side-effect");
};
''',
    "go": '''package main

import "fmt"

func (s *Server) Run(c *Context) error {
	fmt.Println(s.cfg.Name)
	c.JSON(200, gin.H{"a": s.store.Get(c.Param("id"))})
	return s.next(c)
}
''',
    "rust": '''use std::fmt;
fn main() {
    let v = Vec::new();
    v.iter().map(|x| x.len()).collect::<Vec<_>>();
    println!("{}", fmt::format(args));
    self.router.route("/", get(handler));
}
''',
    "java": '''import java.util.List;
class A extends B {
    void run() {
        List<String> xs = Builder.create().name("x").build();
        this.helper.go(xs.get(0));
        super.run();
    }
}
''',
}


def extracted(language: str, text: str, *, plain: bool) -> FileGraph:
    parsed = parse_source(language, text)
    assert parsed is not None
    before = EXTRACT.PLAIN
    EXTRACT.PLAIN = plain
    try:
        got = graph_of(language, parsed)
    finally:
        EXTRACT.PLAIN = before
    assert got is not None
    return got


@pytest.mark.parametrize("language", sorted(SOURCES))
def test_fast_paths_record_what_the_rules_record(language: str) -> None:
    fast = extracted(language, SOURCES[language], plain=False)
    slow = extracted(language, SOURCES[language], plain=True)
    assert fast == slow
    assert any(s.role == Role.CALL and s.receiver for s in fast.sites)  # the paths ran


def test_a_field_naming_another_nodes_child_is_left_as_the_rules_leave_it() -> None:
    """TypeScript's `typeof A.b.c`: the outer member's `property` field names the inner
    `b`; the rules then give `c` no receiver, and so must the fast path (no second `b`)."""
    g = extracted("typescript", SOURCES["typescript"], plain=False)
    line3 = [(s.name, s.receiver) for s in g.sites if s.line == 3]
    assert [name for name, _ in line3].count("prototype") == 1
    assert ("prototype", "TestScheduler") in line3
    assert ("createColdObservable", None) in line3
