"""Receivers typed the way real code types them, resolved through the store (both
engines): return annotations (quoted, `Optional`), `cast`, attributes annotated in a
base class's `__init__`, a method's first parameter whatever its name, parameters typed
by the method they override, lists of instances (`List[T]`, `T[]`, `[new T()]`, loops,
`xs[i]`, `xs.shift()`), `T | null` variables assigned in closures, `this:` parameters,
`x as T`, `import a.b` binding `a`, and `__all__` entries. Each shape also checks what
must not resolve (a list's own methods, a name only assigned in a closure)."""

from __future__ import annotations

import pytest

from ctxd.indexer.pipeline import Indexer
from ctxd.indexer.walk.walker import WalkOptions
from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.conftest import FakeEmbedder
from tests.search.graph.indexed import index, usages

PYTHON = {
    "pkg/__init__.py": '''from .core import Command, Context
from .utils import style

__all__ = [
    "Command",
    "Context",
    "style",
]
''',
    "pkg/utils.py": "def style(text):\n    return text\n",
    "pkg/core.py": '''import typing as t


class Context:
    def invoke(self, f):
        return f()


class ParamType:
    def get_metavar(self, param):
        return None


class Command:
    def invoke(self, ctx: "Context"):
        return ctx.invoke(len)

    def main(
        __self, ctx
    ):
        return __self.invoke(ctx)


class Parameter:
    def __init__(self) -> None:
        self.type: ParamType = ParamType()


class Option(Parameter):
    def help(self):
        return self.type.get_metavar(self)


class Group(Command):
    def __init__(self, sources: t.List[Command]) -> None:
        self.sources: t.List[Command] = sources

    def walk(self, ctx):
        for source in self.sources:
            source.invoke(ctx)
        self.sources[0].invoke(ctx)
        self.sources.invoke(ctx)


class Custom(Command):
    def invoke(self, ctx):
        ctx.invoke(len)


def get_current_context() -> t.Optional["Context"]:
    return None


def current():
    ctx = get_current_context()
    ctx.invoke(len)
    other = t.cast("Context", None)
    other.invoke(len)


Source = t.Union["Context", t.Mapping[str, "Literal"], t.Literal["Context"]]
''',
    "tests/test_style.py": '''import pkg.core


def test_style():
    pkg.style("x")
''',
}

TYPESCRIPT = {
    "src/sub.ts": '''export class Subscription {
  unsubscribe(): void {}
}
export class Subject<T> extends Subscription {
  next(v: T): void {}
  complete(): void {}
}
export interface SchedulerAction<T> extends Subscription {
  schedule(state?: T): Subscription;
}
export class Observable<T> {
  subscribe(): Subscription { return new Subscription(); }
}
''',
    "src/ops.ts": '''import { Subscription, Subject, Observable, SchedulerAction } from "./sub";

export function debounce(source: Observable<number>, thing: unknown) {
  let active: Subscription | null = null;
  const emit = () => {
    if (active) {
      active.unsubscribe();
      active = null;
    }
  };
  const sub = source.subscribe();
  sub.unsubscribe();
  let windows = [new Subject<number>()];
  for (const w of windows) {
    w.next(1);
  }
  windows.shift()!.complete();
  windows[0].complete();
  windows.complete();
  const typed: Subject<number>[] = [];
  typed[1].next(2);
  const made = thing as Subject<number>;
  made.next(3);
  function work(this: SchedulerAction<number>) {
    this.unsubscribe();
  }
  return [emit, work];
}

export function shadow() {
  const run = () => {
    lost = new Subject<number>();
    lost.next(4);
  };
  return run;
}
''',
}

PRIVATE = {
    "src/cache.ts": '''export class QueryCache {
  find(key: string): void {}
  #notify(): void {}
  clear(): void { this.#notify(); }
}
export interface ClientConfig {
  queryCache?: QueryCache
}
''',
    "src/client.ts": '''import { QueryCache, ClientConfig } from "./cache";

export class QueryClient {
  #queryCache: QueryCache
  #other = new QueryCache()
  #fallback
  constructor(config: ClientConfig = {}) {
    this.#queryCache = config.queryCache || new QueryCache();
    this.#fallback = config.queryCache ?? new QueryCache();
  }
  get(key: string) {
    this.#queryCache.find(key);
    this.#other.find(key);
    this.#fallback.find(key);
  }
}

export function use(config: ClientConfig) {
  config.queryCache.find("k");
}
''',
}

SHAPES = {
    "src/manager.ts": '''export class Manager {
  forEach(fn: () => void): void {}
  get first(): Manager { return this; }
}
export interface Options {
  manager: Manager
}
''',
    "src/axios.ts": '''import { Manager, Options } from "./manager";

export class Axios {
  constructor() {
    this.interceptors = { request: new Manager(), count: 0 };
  }
  run() {
    this.interceptors.request.forEach(() => {});
    this.interceptors.count.forEach(() => {});
  }
}

export function buffer(record: { manager: Manager; size: number }, { manager }: Options) {
  const { manager: mine } = record;
  mine.forEach(() => {});
  manager.forEach(() => {});
  record.manager.first.forEach(() => {});
}
''',
    "py/models.py": '''class Session:
    def close(self):
        return None


class Client:
    session: Session

    @property
    def current(self) -> Session:
        return self.session

    def stop(self):
        self.session.close()
        self.current.close()


class Pool(Session):
    @classmethod
    def make(cls):
        made = cls()
        made.close()
        return made
''',
}

EITHER = {
    "src/obs.ts": '''export class Subscriber<T> {
  next(v: T): void {}
}
export class Observable<T> {
  constructor(subscribe?: (subscriber: Subscriber<T>) => void) {}
  pipe(): Observable<T> { return this; }
}
export function timer(n: number): Observable<number> { return new Observable(); }
export function later(n: number): Observable<number> { return new Observable(); }
export function factory(): () => Observable<number> { return () => new Observable(); }
''',
    "src/use.ts": '''import { Observable, Subscriber, timer, later, factory } from "./obs";

export function range(scheduler: unknown, thing: unknown) {
  const o = new Observable<number>(
    scheduler
      ? // the scheduled path
        (subscriber) => { subscriber.next(1); }
      : (subscriber) => { subscriber.next(2); }
  );
  const either = scheduler ? timer(1) : later(2);
  either.pipe();
  (thing as Observable<number>).pipe();
  (scheduler ? timer(1) : timer(2)).pipe();
  factory()().pipe();
  const mixed = scheduler ? timer(1) : new Subscriber<number>();
  mixed.pipe();
  return o;
}
''',
}

NARROWED = {
    "py/nodes.py": '''class Node:
    pass


class Call(Node):
    def args(self):
        return []


def visit(node: Node, other):
    if isinstance(node, Call) and other:
        node.args()
    node.args()
    if isinstance(other, (Call, Node)):
        other.args()


def early(node: Node, other):
    if not isinstance(node, Call):
        return None
    node.args()
    assert isinstance(other, Call)
    other.args()
    other = Node()
    other.args()
''',
    "ts/nodes.ts": '''export class Node {}
export class Call extends Node {
  args(): void {}
}
export function visit(node: Node, queue: unknown) {
  if (queue && queue instanceof Call) {
    queue.args();
  }
  queue.args();
}
export function early(node: Node) {
  if (!(node instanceof Call)) {
    return;
  }
  node.args();
}
''',
}

DEFAULTS = {
    "py/conn.py": '''import typing as t


class Conn:
    def close(self):
        return None


def all_conns() -> t.List[Conn]:
    return []


def shut(conn=Conn(), other=None):
    conn.close()
    for i, c in enumerate(all_conns()):
        c.close()
    for c in all_conns():
        c.close()


class Pool:
    def copy(self) -> "t.Self":
        return clone(self)

    def drain(self):
        return None


def use(pool: Pool):
    pool.copy().drain()
''',
    "ts/conn.ts": '''export class Conn {
  close(): void {}
}
export async function open(): Promise<Conn> { return new Conn(); }
export async function shut(conn = new Conn()) {
  conn.close();
  const c = await open();
  c.close();
}
''',
}

SINGLETONS = {
    "src/client.ts": '''export class QueryClient {
  fetch(): void {}
}
export const client = new QueryClient();
export const Alias = QueryClient;
''',
    "src/use.ts": '''import { client, Alias } from "./client";
import * as mod from "./client";

client.fetch();
mod.client.fetch();
Alias.fetch();
''',
    "py/app.py": '''class App:
    def run(self):
        return None


app = App()
''',
    "py/main.py": '''import app as appmod
from app import app

app.run()
appmod.app.run()
''',
}

MAPPINGS = {
    "py/group.py": '''import typing as t


class Cmd:
    def run(self):
        return None


class Group:
    def __init__(self, commands: t.Dict[str, Cmd]) -> None:
        self.commands: t.Dict[str, Cmd] = commands

    def go(self, name):
        self.commands[name].run()
        self.commands.get(name).run()
        for cmd in self.commands.values():
            cmd.run()
        for key in self.commands:
            key.run()
        self.commands.run()
''',
    "ts/group.ts": '''export class Sub {
  run(): void {}
}
export function go(subs: Map<string, Sub>, byId: Record<string, Sub>) {
  subs.get("a").run();
  byId["b"].run();
  subs.run();
}
export class Cache {
  #subs = new Map<string, Sub>();
  #all = new Set<Sub>();
  each(list: Sub[]) {
    this.#subs.get("a").run();
    list.forEach((sub) => sub.run());
    this.#subs.forEach((sub, key) => { sub.run(); key.run(); });
    [...this.#all].find((sub) => sub.run());
  }
}
''',
}


def test_python_receivers_typed_by_annotations_casts_bases_and_lists(store, repo):
    index(store, repo, PYTHON)
    assert usages(store, "Context.invoke") == {
        ("pkg/core.py", 16, "call"),  # ctx: "Context"
        ("pkg/core.py", 47, "call"),  # def invoke(self, ctx) over invoke(self, ctx: Context)
        ("pkg/core.py", 56, "call"),  # get_current_context() -> t.Optional["Context"]
        ("pkg/core.py", 58, "call"),  # t.cast("Context", ...)
    }
    assert usages(store, "Command.invoke") == {
        ("pkg/core.py", 21, "call"),  # __self, on the line after `def main(`
        ("pkg/core.py", 40, "call"),  # for source in self.sources (t.List[Command])
        ("pkg/core.py", 41, "call"),  # self.sources[0]
        ("pkg/core.py", 46, "override"),
    }  # not line 42: `self.sources.invoke` is the list's, not a Command's
    assert usages(store, "ParamType.get_metavar") == {("pkg/core.py", 31, "call")}


def test_python_import_of_a_submodule_binds_the_package_and_all_lists_names(store, repo):
    index(store, repo, PYTHON)
    assert usages(store, "style") == {
        ("pkg/__init__.py", 2, "import"),
        ("pkg/__init__.py", 7, "reference"),  # "style" in a multi-line __all__
        ("tests/test_style.py", 5, "call"),  # import pkg.core binds pkg
    }
    context = usages(store, "pkg.core.Context")
    assert ("pkg/__init__.py", 6, "reference") in context
    assert [u for u in context if u[0] == "pkg/core.py" and u[1] == 61] == [
        ("pkg/core.py", 61, "reference")]  # a type alias's forward reference, once


def test_typescript_receivers_typed_by_unions_returns_lists_casts_and_this(store, repo):
    index(store, repo, TYPESCRIPT)
    assert usages(store, "Subscription.unsubscribe") == {
        ("src/ops.ts", 7, "call"),  # let active: Subscription | null, assigned in a closure
        ("src/ops.ts", 12, "call"),  # subscribe(): Subscription
        ("src/ops.ts", 25, "call"),  # function (this: SchedulerAction<number>)
    }
    assert usages(store, "Subject.next") == {
        ("src/ops.ts", 15, "call"),  # for (const w of [new Subject()])
        ("src/ops.ts", 21, "call"),  # typed[1], typed: Subject<number>[]
        ("src/ops.ts", 23, "call"),  # thing as Subject<number>
    }  # not line 33: `lost` is only assigned in the closure, declared nowhere
    assert usages(store, "Subject.complete") == {
        ("src/ops.ts", 17, "call"),  # windows.shift()!
        ("src/ops.ts", 18, "call"),  # windows[0]
    }  # not line 19: `windows.complete()` is the array's


def test_a_full_run_extracts_again_what_an_older_extractor_made(store, repo):
    """A repository indexed by an older extractor (its graphs lack the new facts) gets
    every graph extracted again by the next full run, and the next query sees them."""
    from ctxd.indexer.checkpoints import graph_row
    from ctxd.indexer.graph.model import EXTRACTION
    from ctxd.indexer.pipeline import GRAPH_KEY

    index(store, repo, PYTHON)
    all_entry = ("pkg/__init__.py", 7, "reference")
    assert all_entry in usages(store, "style")
    rid = store.repos()[0].id
    fid = {p: i for i, p in store.file_paths_in([store.repos()[0].name])}
    old = graph_row("pkg/__init__.py", "python", "import bogus\nfrom .utils import style\n",
                    0)  # no __all__
    options = {**store.repos()[0].options, GRAPH_KEY: EXTRACTION - 1}
    store.upsert_repo(str(repo.root), options, "2026-01-01T00:00:00Z")
    store.put_graphs(rid, [(fid["pkg/__init__.py"], old)])
    bogus = "pkg\x1ebogus"  # (`import bogus` in the top folder `pkg`: `links.top_keyed`)
    assert store.graph_linked(rid, [bogus]) == [fid["pkg/__init__.py"]]
    assert all_entry not in usages(store, "style")
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions(), only_paths=["x.py"])
    assert store.repos()[0].options[GRAPH_KEY] == EXTRACTION - 1  # partial: not yet
    Indexer(store, FakeEmbedder()).index(repo.root, WalkOptions())
    assert store.repos()[0].options[GRAPH_KEY] == EXTRACTION
    assert all_entry in usages(store, "style")
    assert store.graph_linked(rid, [bogus]) == []  # the old row's keys went with it


def test_typescript_private_fields_interface_properties_and_defaults(store, repo):
    index(store, repo, PRIVATE)
    assert usages(store, "QueryCache.find") == {
        ("src/client.ts", 12, "call"),  # #queryCache: QueryCache
        ("src/client.ts", 13, "call"),  # #other = new QueryCache()
        ("src/client.ts", 14, "call"),  # this.#fallback = x ?? new QueryCache()
        ("src/client.ts", 19, "call"),  # an interface's property: queryCache?: QueryCache
    }
    assert usages(store, "QueryCache.#notify") == {("src/cache.ts", 4, "call")}


def test_object_literal_fields_type_literals_destructuring_and_properties(store, repo):
    index(store, repo, SHAPES)
    assert usages(store, "Manager.forEach") == {
        ("src/axios.ts", 8, "call"),  # this.interceptors = { request: new Manager() }
        ("src/axios.ts", 15, "call"),  # const { manager: mine } = record (a type literal)
        ("src/axios.ts", 16, "call"),  # { manager }: Options
        ("src/axios.ts", 17, "call"),  # a getter's value: get first(): Manager
    }  # not line 9: `count` is a number
    assert usages(store, "Session.close") == {
        ("py/models.py", 14, "call"),  # session: Session in the class body
        ("py/models.py", 15, "call"),  # @property def current(self) -> Session
        ("py/models.py", 22, "call"),  # made = cls() in a classmethod
    }


def test_either_branch_casts_in_receivers_and_calls_of_calls(store, repo):
    index(store, repo, EITHER)
    assert usages(store, "Subscriber.next") == {
        ("src/use.ts", 7, "call"),  # callbacks in both branches, a comment between
        ("src/use.ts", 8, "call"),
    }
    assert usages(store, "Observable.pipe") == {
        ("src/use.ts", 11, "call"),  # c ? timer() : later(): both give an Observable
        ("src/use.ts", 12, "call"),  # (thing as Observable<number>)
        ("src/use.ts", 13, "call"),  # (c ? timer(1) : timer(2))
    }  # not 14 (a function's result called: unknown) nor 16 (the branches disagree)


def test_isinstance_and_instanceof_narrow_a_name_in_their_block_or_after_it(store, repo):
    index(store, repo, NARROWED)
    assert usages(store, "py/nodes.py:6") == {
        ("py/nodes.py", 12, "call"),
        ("py/nodes.py", 21, "call"),  # after `if not isinstance(...): return`
        ("py/nodes.py", 23, "call"),  # after `assert isinstance(...)`
    }  # not 13 (after the block: a Node), 15 (a tuple of classes), 25 (assigned since)
    assert usages(store, "ts/nodes.ts:3") == {("ts/nodes.ts", 7, "call"),
                                              ("ts/nodes.ts", 15, "call")}  # not 9


NOT_CODE = {
    "go.mod": "module example.com/shop\n",
    "srv/serve.go": '''package srv

// Serve is called by Run: Serve()
/* Serve(x) in a block comment */
type Server struct{}

func (s *Server) Serve() {}

func Run(s *Server, other interface{ Serve() }) {
	s.Serve()
	_ = "Serve() in a string"
	_ = `Serve() in a raw string`
	_ = 'S'
	other.Serve()
}
''',
    "Cargo.toml": '[package]\nname = "shop"\n',
    "src/lib.rs": '''//! fetch() in a crate doc
pub struct Client;

impl Client {
    /// fetch() in a doc comment
    pub fn fetch(&self) {}
}

pub fn run(c: &Client, other: &dyn Fetch) {
    c.fetch(); /* fetch() */
    let _ = r#"fetch() in a raw string"#;
    let _ = b"fetch()";
    other.fetch();
}
''',
}


@pytest.mark.parametrize("symbol", ["Server.Serve", "Client.fetch"])
def test_go_and_rust_comments_and_strings_are_never_usages(store, repo, symbol):
    """Only code is a usage; what bears the name but does not resolve is counted apart
    as a by-name candidate (`unresolved`), never listed."""
    index(store, repo, NOT_CODE)
    refs = queries.references(store, name_definition(store, symbol))
    lines = {u.line for u in refs.usages if u.kind != "override"}
    path = "srv/serve.go" if symbol == "Server.Serve" else "src/lib.rs"
    assert {(u.path, u.line) for u in refs.usages} == {(path, 10)}, refs.usages
    assert lines == {10} and all(u.resolved for u in refs.usages)
    assert refs.unresolved == 1  # other.Serve() / other.fetch(): a by-name candidate


def test_defaults_enumerate_returned_lists_and_promises(store, repo):
    index(store, repo, DEFAULTS)
    assert usages(store, "py/conn.py:5") == {
        ("py/conn.py", 14, "call"),  # conn=Conn()
        ("py/conn.py", 16, "call"),  # for i, c in enumerate(all_conns())
        ("py/conn.py", 18, "call"),  # all_conns() -> t.List[Conn]
    }
    assert usages(store, "Pool.drain") == {("py/conn.py", 30, "call")}  # -> "t.Self"
    assert usages(store, "ts/conn.ts:2") == {
        ("ts/conn.ts", 6, "call"),  # conn = new Conn()
        ("ts/conn.ts", 8, "call"),  # await open(): Promise<Conn>
    }


def test_module_level_instances_imported_by_name_or_through_the_module(store, repo):
    index(store, repo, SINGLETONS)
    assert usages(store, "QueryClient.fetch") == {
        ("src/use.ts", 4, "call"),  # import { client }: export const client = new ...
        ("src/use.ts", 5, "call"),  # mod.client
    }  # not 6: `Alias` is the class itself, `fetch` an instance's method
    assert usages(store, "App.run") == {("py/main.py", 4, "call"), ("py/main.py", 5, "call")}


def test_mappings_give_their_values(store, repo):
    index(store, repo, MAPPINGS)
    assert usages(store, "py/group.py:5") == {
        ("py/group.py", 14, "call"),  # self.commands[name] (t.Dict[str, Cmd])
        ("py/group.py", 15, "call"),  # .get(name)
        ("py/group.py", 17, "call"),  # for cmd in .values()
    }  # not 19 (a key) nor 20 (the mapping's own member)
    assert usages(store, "ts/group.ts:2") == {
        ("ts/group.ts", 5, "call"),  # Map.get
        ("ts/group.ts", 6, "call"),  # Record[k]
        ("ts/group.ts", 13, "call"),  # #subs = new Map<string, Sub>()
        ("ts/group.ts", 14, "call"),  # list.forEach((sub) => ...)
        ("ts/group.ts", 15, "call"),  # a Map's forEach: its values (not `key`)
    }  # not 16: a spread array literal is not known


PROTOTYPES = {
    "lib/Axios.js": '''class Axios {
  request(url) { return url; }
}

utils.forEach(["post", "put"], function each(method) {
  Axios.prototype[method] = function (url) {
    return this.request(url);
  };
});

Axios.prototype.get = function get(url) { return this.request(url); };

export default Axios;
''',
}


def test_functions_assigned_to_a_class_prototype_see_it_as_this(store, repo):
    index(store, repo, PROTOTYPES)
    assert usages(store, "Axios.request") == {("lib/Axios.js", 7, "call"),
                                              ("lib/Axios.js", 11, "call")}


GO_RUST = {
    "go.mod": "module example.com/web\n",
    "web/context.go": '''package web

type Context struct{}

func (c *Context) Next() {}

type Params []Param

type Param struct{}

func (ps Params) Get(name string) string { return "" }

func CreateTestContext(w int) (c *Context, r *Engine) { return nil, nil }

type Engine struct{}

func use(ps Params) {
	c, _ := CreateTestContext(1)
	c.Next()
	ps.Get("a")
}
''',
    "Cargo.toml": '[package]\nname = "globs"\n',
    "src/lib.rs": '''pub struct GlobSet {
    len: usize,
}

impl GlobSet {
    pub fn len(&self) -> usize {
        self.len
    }
}

pub fn count(set: &GlobSet) -> usize {
    let f = GlobSet::len;
    set.len()
}
''',
}


def test_go_results_named_types_and_rust_fields(store, repo):
    index(store, repo, GO_RUST)
    # c, _ := f() with f's named results (c *Context, r *Engine)
    assert usages(store, "Context.Next") == {("web/context.go", 19, "call")}
    assert usages(store, "Params.Get") == {("web/context.go", 20, "call")}  # type Params []Param
    assert usages(store, "GlobSet.len") == {("src/lib.rs", 12, "reference"),
                                            ("src/lib.rs", 13, "call")}  # not 7: the field


GO_ROOT = {
    "go.mod": "module github.com/spf13/cobra\n",
    "command.go": '''package cobra

type Command struct{}

func (c *Command) Parent() *Command { return nil }
''',
    "doc/man.go": '''package doc

import "github.com/spf13/cobra"

func Gen(cmd *cobra.Command) {
	cmd.Parent()
}
''',
}


def test_go_a_module_root_package_is_found_by_its_importers(store, repo):
    index(store, repo, GO_ROOT)
    assert usages(store, "Command.Parent") == {("doc/man.go", 6, "call")}


FIELDS = {
    "go.mod": "module example.com/web\n",
    "web/ctx.go": '''package web

type Params []Param

type Param struct{}

func (ps Params) Get(name string) string { return "" }

type Context struct {
	Params Params
}

func use(c *Context) {
	c.Params.Get("a")
}
''',
    "Cargo.toml": '[package]\nname = "routes"\n',
    "src/lib.rs": '''pub struct PathRouter;

impl PathRouter {
    pub fn merge(&mut self) {}
}

pub struct Router {
    path_router: PathRouter,
}

impl Router {
    pub fn merge(&mut self) {
        self.path_router.merge();
    }
}
''',
}


def test_go_and_rust_struct_fields_type_their_reads(store, repo):
    index(store, repo, FIELDS)
    assert usages(store, "Params.Get") == {("web/ctx.go", 14, "call")}
    assert usages(store, "PathRouter.merge") == {("src/lib.rs", 13, "call")}
    assert usages(store, "Router.merge") == set()  # not the field's merge()
