"""How code connects (`search.graph`), over repositories shaped like real ones, indexed
for real in both stores: packages that re-export, relative imports, same-named methods on
several classes, decorators, nested functions, TS path aliases, Go packages, Rust modules;
an edit seen by the next query; bad names refused with what to do."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import AmbiguousSymbol, SymbolNotFound, ValidationError
from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder
from tests.search.graph.indexed import index, usages

PYTHON = {
    "src/shop/__init__.py": "from .models import Session, Cart\nfrom . import util\n",
    "src/shop/models.py": '''class Base:
    def get(self, key):
        return self.fetch(key)

    def fetch(self, key):
        return key


class Session(Base):
    """get() here is prose."""

    def get(self, key):
        # get the key
        return super().get(key)


class Cart:
    def get(self, key):
        return None

    @property
    def total(self):
        return 0
''',
    "src/shop/util.py": '''import functools

from .models import Session, Cart


def cached(fn):
    @functools.wraps(fn)
    def wrapper(*a):
        return fn(*a)
    return wrapper


@cached
def helper():
    s = Session()
    s.get("a")
    c = Cart()
    c.get("b")
    return s


def nested():
    def inner(get):
        return get("x")
    return inner()
''',
    "src/shop/sub/service.py": '''from ..models import Session
from .. import util


class Fancy(Session):
    def get(self, key):
        return "fancy"


def run(session: Session):
    session.get("k")
    return util.helper()
''',
    "tests/test_shop.py": '''import shop
from shop import Session


def test_session():
    s = Session()
    s.get("k")
    shop.Session().fetch("x")
    shop.util.helper()
''',
}


def test_python_references_follow_reexports_relative_imports_and_receivers(store, repo):
    index(store, repo, PYTHON)
    assert usages(store, "Session.get") == {
        ("src/shop/util.py", 16, "call"),          # s = Session(); s.get
        ("src/shop/sub/service.py", 11, "call"),   # session: Session
        ("tests/test_shop.py", 7, "call"),         # through the package's re-export
        ("src/shop/sub/service.py", 6, "override"),
    }
    assert usages(store, "Cart.get") == {("src/shop/util.py", 18, "call")}
    base_get = usages(store, "src/shop/models.py:2")
    assert ("src/shop/models.py", 14, "call") in base_get  # super().get
    assert ("src/shop/models.py", 12, "override") in base_get
    fetch = usages(store, "Base.fetch")
    assert fetch == {("src/shop/models.py", 3, "call"), ("tests/test_shop.py", 8, "call")}
    session = usages(store, "shop.models.Session")
    assert {("src/shop/__init__.py", 1, "import"), ("src/shop/sub/service.py", 5, "inherit"),
            ("tests/test_shop.py", 6, "call"), ("tests/test_shop.py", 8, "call")} <= session


def test_decorators_and_nested_functions_resolve_in_their_scope(store, repo):
    index(store, repo, PYTHON)
    assert usages(store, "cached") == {("src/shop/util.py", 13, "reference")}
    assert ("src/shop/util.py", 25, "call") in usages(store, "inner")
    helper = usages(store, "helper")
    assert helper == {("src/shop/sub/service.py", 12, "call"),
                      ("tests/test_shop.py", 9, "call")}


def test_callers_callees_paths_and_impact(store, repo):
    index(store, repo, PYTHON)
    callers = queries.callers(store, name_definition(store, "Base.get"), depth=3)
    tree = [(e.depth, e.definition.qualified_name if e.definition else None, e.site_line)
            for e in callers.edges]
    assert tree[0] == (1, "Session.get", 14)
    assert (2, "helper", 16) in tree and (2, "test_session", 7) in tree
    assert (3, "run", 12) in tree
    callees = queries.callees(store, name_definition(store, "helper"))
    assert [(e.name, e.definition.qualified_name if e.definition else None)
            for e in callees.edges] == [("Session", "Session"), ("get", "Session.get"),
                                        ("Cart", "Cart"), ("get", "Cart.get")]
    paths = queries.call_paths(store, name_definition(store, "run"),
                               name_definition(store, "Base.fetch"))
    assert [[e.definition.qualified_name for e in p if e.definition] for p in paths.paths] == [
        ["Session.get", "Base.get", "Base.fetch"]]  # session: Session, not through helper
    impact = queries.impact(store, [name_definition(store, "Session")], "Session", depth=2)
    assert {i.path for i in impact.tests} == {"tests/test_shop.py"}
    assert impact.items[0].distance == 1



def test_a_files_definitions_share_one_gathering_of_candidates_with_the_same_uses(store, repo):
    """`impact FILE` gathers the candidates of all the file's definitions once
    (`file_candidates`): a superset of each one's, so each one's uses read from it are
    exactly its own (fastapi's routing.py: 149 gatherings, 7 s cold, before)."""
    index(store, repo, PYTHON)
    g = queries._Graph(store, name_definition(store, "Session").repository)
    graph = g.ws.graph("src/shop/models.py")
    assert graph is not None and len(graph.defs) > 3
    targets = [queries.Target("def", "src/shop/models.py", k) for k in range(len(graph.defs))]
    pool = g.file_candidates(targets)
    assert g.file_candidates(targets) is pool  # remembered for the text generation
    for t in targets:
        assert set(g.candidates(t)) <= set(pool), graph.defs[t.index].qualname
        assert g.uses(t, pool)[0] == g.uses(t)[0], graph.defs[t.index].qualname
    whole = queries.impact(store, [name_definition(store, "Session"),
                                   name_definition(store, "Cart")], "src/shop/models.py",
                           depth=2, file="src/shop/models.py")
    assert {i.path for i in whole.items} >= {"src/shop/util.py", "tests/test_shop.py"}

def test_names_are_one_definition_or_a_clear_error(store, repo):
    index(store, repo, PYTHON)
    with pytest.raises(AmbiguousSymbol) as amb:
        name_definition(store, "get")
    assert "Base.get (method) at src/shop/models.py:2" in amb.value.message
    assert "Cart.get" in amb.value.message and "PATH:LINE" in (amb.value.hint or "")
    with pytest.raises(SymbolNotFound, match="no definition named 'nothing'"):
        name_definition(store, "nothing")
    with pytest.raises(SymbolNotFound, match=r"no definition at src/shop/models\.py:3") as at:
        name_definition(store, "src/shop/models.py:3")
    assert "Base.get at src/shop/models.py:2" in (at.value.hint or "")
    with pytest.raises(ValidationError, match="not a symbol"):
        name_definition(store, "a b(")
    assert name_definition(store, "Cart.total").kind == "method"  # decorated: its name's line


def test_an_edit_is_seen_by_the_next_query(store, repo):
    index(store, repo, PYTHON)
    before = queries.callers(store, name_definition(store, "Cart.get"))
    assert [e.definition.qualified_name for e in before.edges if e.definition] == ["helper"]
    repo.write("src/shop/sub/service.py", PYTHON["src/shop/sub/service.py"]
               + "\n\ndef more():\n    from ..models import Cart\n    Cart().get(1)\n")
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    after = queries.callers(store, name_definition(store, "Cart.get"))
    assert [e.definition.qualified_name for e in after.edges if e.definition] == [
        "more", "helper"]
    repo.remove("src/shop/util.py")
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    gone = queries.callers(store, name_definition(store, "Cart.get"))
    assert [e.definition.qualified_name for e in gone.edges if e.definition] == ["more"]


TYPESCRIPT = {
    "tsconfig.json": '{\n  // comments are allowed\n  "compilerOptions": {"baseUrl": ".", '
                     '"paths": {"@core/*": ["src/core/*"]}},\n}\n',
    "src/core/session.ts": '''export class Session {
  fetch(url: string): string { return url; }
}

export class Cart {
  fetch(id: number): number { return id; }
}
''',
    "src/core/index.ts": 'export { Session } from "./session";\nexport * from "./session";\n',
    "src/app/main.ts": '''import { Session } from "@core/session";
import * as core from "../core";
import { Cart as Basket } from "../core/session.js";

export function main(): void {
  const s = new Session();
  s.fetch("a");
  new core.Session().fetch("b");
  const b: Basket = make();
  b.fetch(1);
}

function make(): any { return null; }
''',
    "src/app/view.tsx": '''import { Session } from "@core/index";

export class View {
  private session = new Session();
  show(session: Session) { return session.fetch("c"); }
}
''',
}


def test_typescript_path_aliases_index_files_and_extensions(store, repo):
    index(store, repo, TYPESCRIPT)
    assert usages(store, "Session.fetch") == {
        ("src/app/main.ts", 7, "call"), ("src/app/main.ts", 8, "call"),
        ("src/app/view.tsx", 5, "call")}
    assert usages(store, "Cart.fetch") == {("src/app/main.ts", 10, "call")}
    callers = queries.callers(store, name_definition(store, "Session.fetch"))
    assert {e.definition.qualified_name for e in callers.edges if e.definition} == {
        "main", "View.show"}


GO = {
    "go.mod": "module example.com/shop\n\ngo 1.22\n",
    "store/store.go": '''package store

type Store struct{}

func (s *Store) Get(key string) string { return key }

func New() *Store { return &Store{} }
''',
    "store/helpers.go": "package store\n\nfunc Default() *Store {\n\treturn New()\n}\n",
    "cmd/main.go": '''package main

import (
\t"fmt"

\tst "example.com/shop/store"
)

func main() {
\ts := st.New()
\tvar t st.Store
\tfmt.Println(s.Get("a"), t.Get("b"))
}
''',
}


def test_go_packages_and_module_paths(store, repo):
    index(store, repo, GO)
    assert usages(store, "store.New") == {("cmd/main.go", 10, "call"),
                                          ("store/helpers.go", 4, "call")}
    assert ("cmd/main.go", 12, "call") in usages(store, "Store.Get")


RUST = {
    "Cargo.toml": '[package]\nname = "shop"\n',
    "src/lib.rs": "pub mod net;\nmod util;\n\npub fn run() {\n    net::client::connect();\n"
                  "    util::helper();\n}\n",
    "src/net/mod.rs": "pub mod client;\n",
    "src/net/client.rs": "pub struct Client;\n\nimpl Client {\n    pub fn new() -> Self "
                         "{ Client }\n    pub fn send(&self) {}\n}\n\npub fn connect() {\n"
                         "    let c = Client::new();\n    c.send();\n}\n",
    "src/util.rs": "use crate::net::client::{connect, Client};\n\npub fn helper() {\n"
                   "    connect();\n    Client::new().send();\n}\n",
}


def test_rust_modules_and_use_paths(store, repo):
    index(store, repo, RUST)
    assert usages(store, "connect") >= {("src/util.rs", 4, "call")}
    assert ("src/net/client.rs", 10, "call") in usages(store, "Client.send")


INFERRED = {
    "py/pool.py": '''import typing


class Pool:
    def __init__(self) -> None:
        self.size = 1

    def request(self, url):
        return url

    def clone(self):
        return self

    @typing.overload
    def get(self, key: int) -> int: ...
    @typing.overload
    def get(self, key: str) -> str: ...
    def get(self, key):
        return key


def make_pool() -> "Pool":
    return Pool()


def use(__me=None):
    with Pool() as p:
        p.request("a")
    make_pool().request("b")
    Pool().clone().request("c")
    Pool().get(1)
''',
    "ts/headers.ts": '''export class Headers {
  static from(h: any): Headers { return new this(h); }
  normalize(): Headers { return this; }
  set(k: string): void {}
}
export class Sub extends Headers {
  private other: Headers;
  constructor(private readonly mine: Headers) { super(); }
  set(k: string): void { super.set(k); this.other.set(k); this.mine.set(k); }
}
''',
    "ts/utils.ts": "function each(x: any) { return x; }\nexport default { each };\n",
    "ts/main.ts": '''import utils from "./utils";
import { Headers } from "./headers";

export function main(flag: boolean) {
  const h = Headers.from({}).normalize();
  h.set("a");
  const g = flag ? h : new Headers();
  g.set("b");
  utils.each(1);
  const bound = Headers.prototype.set;
}
''',
}


def test_types_known_from_with_returns_fields_and_constructors(store, repo):
    index(store, repo, INFERRED)
    assert usages(store, "Pool.request") == {("py/pool.py", 28, "call"),
                                             ("py/pool.py", 29, "call"),
                                             ("py/pool.py", 30, "call")}
    assert usages(store, "py/pool.py:18") == {("py/pool.py", 31, "call")}  # overloads: one
    headers_set = usages(store, "Headers.set")
    assert {("ts/main.ts", 6, "call"), ("ts/main.ts", 8, "call"), ("ts/main.ts", 10, "reference"),
            ("ts/headers.ts", 9, "call"), ("ts/headers.ts", 9, "override")} <= headers_set
    assert [u for u in headers_set if u[0] == "ts/headers.ts" and u[2] == "call"] == [
        ("ts/headers.ts", 9, "call")]
    assert usages(store, "each") >= {("ts/main.ts", 9, "call")}


CALLBACKS = {
    "src/obs.ts": '''export class Subscriber<T> {
  next(v: T): void {}
}
export class Observable<T> {
  constructor(subscribe?: (this: Observable<T>, subscriber: Subscriber<T>) => void) {}
  subscribe(): void {}
}
export function operate<T, R>(
  init: (source: Observable<T>, subscriber: Subscriber<R>) => void, name?: string,
): void {}
''',
    "src/use.ts": '''import { Observable, operate } from "./obs";

export const EMPTY = new Observable<never>((subscriber) => subscriber.next(1));

export function buffer() {
  return operate((source, subscriber) => {
    source.subscribe();
    subscriber.next(2);
  });
}
''',
}


def test_callback_parameters_take_the_types_the_callee_declares(store, repo):
    index(store, repo, CALLBACKS)
    assert usages(store, "Subscriber.next") == {("src/use.ts", 3, "call"),
                                                ("src/use.ts", 8, "call")}
    assert usages(store, "Observable.subscribe") == {("src/use.ts", 7, "call")}


def test_queries_from_several_threads_share_one_workspace(tmp_path, repo):
    """A daemon answers from worker threads, each with its own connection: the shared
    workspace never hands one thread's connection to another."""
    from concurrent.futures import ThreadPoolExecutor

    from ctxd.indexer.store.sqlite.store import Store

    with Store.open(tmp_path / "index.db") as store:
        index(store, repo, PYTHON)

    def ask(_n: int) -> set[tuple[str, int, str]]:
        with Store.open(tmp_path / "index.db") as own:
            return usages(own, "Session.get")

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(ask, range(8)))
    assert all(a == answers[0] for a in answers) and len(answers[0]) == 4


RETURNS = {
    "go.mod": "module example.com/r\n",
    "store/store.go": "package store\n\ntype Store struct{}\n\nfunc (s *Store) Get(k string) "
                      "string { return k }\n\nfunc Open() *Store { return &Store{} }\n",
    "main.go": 'package main\n\nimport "example.com/r/store"\n\nfunc main() {\n'
               '\ts := store.Open()\n\ts.Get("a")\n}\n',
    "src/lib.rs": "pub struct Client;\n\nimpl Client {\n    pub fn new() -> Self { Client }\n"
                  "    pub fn send(&self) {}\n}\n\npub fn open() -> Client {\n"
                  "    Client::new()\n}\n\npub fn run() {\n    let c = open();\n    c.send();\n"
                  "    Client::new().send();\n}\n",
}


def test_go_and_rust_result_types_type_what_a_call_returns(store, repo):
    index(store, repo, RETURNS)
    assert usages(store, "Store.Get") == {("main.go", 7, "call")}
    assert usages(store, "Client.send") == {("src/lib.rs", 14, "call"),
                                            ("src/lib.rs", 15, "call")}


JAVA = {
    "src/main/java/com/shop/Store.java": "package com.shop;\n\npublic class Store {\n"
        "    public String get(String k) { return k; }\n}\n",
    "src/main/java/com/shop/Helper.java": "package com.shop;\n\nclass Helper {\n"
        "    String run() { Store s = new Store(); return s.get(\"a\"); }\n}\n",
    "src/main/java/com/app/Main.java": "package com.app;\n\nimport com.shop.Store;\n\n"
        "class Main {\n    void main() {\n        Store s = new Store();\n"
        "        s.get(\"b\");\n    }\n}\n",
}


def test_java_imports_and_packages(store, repo):
    index(store, repo, JAVA)
    assert usages(store, "Store.get") == {("src/main/java/com/shop/Helper.java", 4, "call"),
                                          ("src/main/java/com/app/Main.java", 8, "call")}


def test_a_whole_qualified_name_is_not_ambiguous(store, repo):
    index(store, repo, {"a.py": "def request():\n    pass\n\n\nclass S:\n"
                                "    def request(self):\n        pass\n"})
    assert name_definition(store, "request").qualified_name == "request"
    assert name_definition(store, "S.request").qualified_name == "S.request"
