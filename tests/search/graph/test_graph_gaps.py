"""Receivers typed by what the language writes, in the shapes of real repositories
(through the store, both engines): a Go package variable given by `var x = &T{..}` in
another file of the package (cobra's doc tests), Java builder chains typed by declared
return types through overloaded static factories (JavaPoet's
`TypeSpec.classBuilder(..).addMethod(..)`), and Java locals typed by their declaration;
overloads that disagree on their return type stay unresolved."""

from __future__ import annotations

from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.search.graph.indexed import index, usages

GO = {
    "go.mod": "module github.com/spf13/cobra\n",
    "command.go": "package cobra\n\ntype Command struct{ Use string }\n\n"
                  "func (c *Command) Parent() *Command { return nil }\n",
    "doc/cmd_test.go": 'package doc\n\nimport "github.com/spf13/cobra"\n\n'
                       'var echoCmd = &cobra.Command{Use: "echo"}\n'
                       "var rootCmd, other = cobra.Command{}, 1\n",
    "doc/man_docs_test.go": 'package doc\n\nimport "github.com/spf13/cobra"\n\n'
                            "func TestParent(c *cobra.Command) {\n"
                            "\techoCmd.Parent()\n\trootCmd.Parent()\n\tother.Parent()\n}\n",
}


def test_go_package_variable_declared_with_var_types_its_method_calls(store, repo):
    index(store, repo, GO)
    assert usages(store, "Command.Parent") == {("doc/man_docs_test.go", 6, "call"),
                                               ("doc/man_docs_test.go", 7, "call")}


_PKG = "src/main/java/com/squareup/javapoet"
JAVA = {
    f"{_PKG}/TypeSpec.java": """package com.squareup.javapoet;

public final class TypeSpec {
  public static Builder classBuilder(String name) {
    return new Builder(name);
  }

  public static Builder classBuilder(ClassName className) {
    return classBuilder(className.simpleName());
  }

  public static final class Builder {
    private Builder(String name) {
    }

    public Builder addMethod(MethodSpec methodSpec) {
      return this;
    }

    public Builder addField(FieldSpec fieldSpec) {
      return this;
    }

    public Builder addField(String type, String name) {
      return addField(FieldSpec.builder(type, name).build());
    }

    public TypeSpec build() {
      return new TypeSpec();
    }
  }
}
""",
    f"{_PKG}/MethodSpec.java": """package com.squareup.javapoet;

public final class MethodSpec {
  public static Builder methodBuilder(String name) {
    return new Builder();
  }

  public static final class Builder {
    public Builder addMethod(String code) {
      return this;
    }

    public MethodSpec build() {
      return new MethodSpec();
    }
  }
}
""",
    f"{_PKG}/Mixed.java": """package com.squareup.javapoet;

public final class Mixed {
  public TypeSpec.Builder make(String name) {
    return TypeSpec.classBuilder(name);
  }

  public MethodSpec.Builder make(int n) {
    return MethodSpec.methodBuilder("m");
  }
}
""",
    "src/test/java/com/example/UseTest.java": """package com.example;

import com.squareup.javapoet.MethodSpec;
import com.squareup.javapoet.Mixed;
import com.squareup.javapoet.TypeSpec;

class UseTest {
  void chained() {
    TypeSpec t = TypeSpec.classBuilder("Taco")
        .addMethod(MethodSpec.methodBuilder("a").addMethod("x").build())
        .addField("int", "a")
        .addField("int", "b")
        .addField("int", "c")
        .addField("int", "d")
        .addField("int", "e")
        .addField("int", "f")
        .addMethod(null)
        .build();
    TypeSpec.Builder builder = TypeSpec.classBuilder("Y");
    builder.addMethod(null);
    var inferred = TypeSpec.classBuilder("Z");
    inferred.addMethod(null);
    new Mixed().make(1).addMethod(null);
  }
}
""",
}


def test_java_builder_chains_follow_declared_return_types_through_overloads(store, repo):
    index(store, repo, JAVA)
    test = "src/test/java/com/example/UseTest.java"
    # every link of a long chain, through the overloaded static factory (the last
    # `classBuilder` delegates to the first), `addField` overloads (both `Builder`), a
    # local declared `TypeSpec.Builder`, and `var` typed by its value
    assert usages(store, "TypeSpec.Builder.addMethod") == {
        (test, 10, "call"), (test, 17, "call"), (test, 20, "call"), (test, 22, "call")}
    assert usages(store, "TypeSpec.Builder.build") == {(test, 18, "call")}
    # never the other builder's same-named methods; `Mixed.make`'s overloads return two
    # different builders, so `make(1).addMethod` names neither
    assert usages(store, "MethodSpec.Builder.addMethod") == {(test, 10, "call")}
    assert usages(store, "MethodSpec.Builder.build") == {(test, 10, "call")}
    refs = queries.references(store, name_definition(store, "MethodSpec.Builder.addMethod"))
    assert (test, 23) not in {(u.path, u.line) for u in refs.usages}


RUST = {
    "Cargo.toml": '[package]\nname = "axum"\n',
    "src/lib.rs": "pub mod routing;\n",
    "src/routing/mod.rs": """pub mod method_routing;

pub struct Router;

impl Router {
    pub fn new() -> Self { Router }
    pub fn route(self, p: &str) -> Self { self }
    pub fn merge(self, other: Router) -> Self { self }
}
""",
    "src/routing/method_routing.rs": """pub struct MethodRouter<S> { s: S }

pub struct Other;

impl Other {
    pub fn merge(self, o: Other) -> Self { self }
}

macro_rules! top_level_handler_fn {
    (
        $name:ident, GET
    ) => {
        top_level_handler_fn!(
            /// Route `GET` requests to the given handler.
            $name,
            GET
        );
    };
    (
        $(#[$m:meta])+
        $name:ident, $method:ident
    ) => {
        $(#[$m])+
        pub fn $name<H, T, S>(handler: H) -> MethodRouter<S>
        where
            H: Handler<T, S>,
        {
            on(MethodFilter::$method, handler)
        }
    };
}

macro_rules! chained_handler_fn {
    (
        $(#[$m:meta])*
        $name:ident, $method:ident
    ) => {
        $(#[$m])*
        pub fn $name<H, T>(self, handler: H) -> Self {
            self.on(MethodFilter::$method, handler)
        }
    };
}

macro_rules! either {
    ($name:ident) => { pub fn $name() -> Other { Other } };
    ($name:ident, $x:ident) => { pub fn $name() -> MethodRouter<()> { todo!() } };
}

top_level_handler_fn!(get, GET);
top_level_handler_fn!(post, POST);
either!(make);

impl<S> MethodRouter<S> {
    chained_handler_fn!(patch, PATCH);

    pub fn merge(self, other: MethodRouter<S>) -> Self { self }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merge() {
        let mut svc = get(ok).merge(post(ok));
        let a = post(ok).patch(ok);
        let b = get(ok);
        a.merge(b);
        make().merge(Other);
        Other.merge(Other);
    }
}
""",
    "tests/chain.rs": """use axum::routing::Router;

fn many() {
    let app = Router::new()
        .route("/r1")
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new())
        .merge(Router::new());
}
""",
}


def test_rust_functions_made_by_macro_rules_type_what_their_calls_return(store, repo):
    index(store, repo, RUST)
    mr = "src/routing/method_routing.rs"
    # `get(ok)` / `post(ok)` (a macro's functions: `-> MethodRouter<S>`), `.patch(ok)` (a
    # macro's method in the impl: `-> Self`); never `Other::merge`, never through `make()`
    # (the `either!` arms make functions of two different types)
    assert usages(store, f"{mr}:57") == {(mr, 65, "call"), (mr, 68, "call")}
    assert usages(store, f"{mr}:6") == {(mr, 70, "call")}
    # every link of a long chain (eight `.merge()` after `new().route()`)
    assert usages(store, "Router.merge") == {("tests/chain.rs", n, "call")
                                             for n in range(6, 14)}


CPP = {
    "include/util/box.hpp": """#pragma once
namespace util {
class Box {
 public:
  Box(int v);
  int get() const;
  int get(int k) const;
  void set(int v);
  static Box make();
 private:
  int v_;
};
}
""",
    "src/box_impl.cpp": """#include "util/box.hpp"
namespace util {
Box::Box(int v) : v_(v) {}
int Box::get() const { return v_; }
int Box::get(int k) const { return v_ + k; }
void Box::set(int v) { v_ = v; get(); this->get(); }
Box Box::make() { return Box(1); }
}
""",
    "src/main.cpp": """#include "util/box.hpp"
struct Other { int get() { return 0; } };
int get() { return 1; }
int main() {
  util::Box b(1);
  b.get();
  util::Box* p = new util::Box(2);
  p->get();
  auto c = util::Box::make();
  c.get();
  Other o;
  o.get();
  util::Box d = util::Box::make();
  d.set(3);
  get();  // the free function
  return 0;
}
""",
}


def test_cpp_methods_defined_outside_their_class_resolve_through_the_header(store, repo):
    index(store, repo, CPP)
    impl, main = "src/box_impl.cpp", "src/main.cpp"
    # declared in the header's class body, defined in another file: a variable of the
    # class (declared, pointer, `new`, a static factory's result), `this->` and a bare
    # call inside another method; both overloads are one definition
    assert usages(store, f"{impl}:4") == {(impl, 6, "call"), (main, 6, "call"),
                                          (main, 8, "call"), (main, 10, "call")}
    assert usages(store, "util.Box.set") == {(main, 14, "call")}
    assert usages(store, "Box.make") == {(main, 9, "call"), (main, 13, "call")}
    # never another class's method or the free function of the name
    assert usages(store, "Other.get") == {(main, 12, "call")}
    assert usages(store, f"{main}:3") == {(main, 15, "call")}


CONTAINERS = {
    # Rust: a module written inline in lib.rs, used by `crate::` and by the crate's name
    "Cargo.toml": '[package]\nname = "shapes"\n',
    "src/lib.rs": "pub mod geo {\n    pub fn area(r: i32) -> i32 {\n        r * r\n    }\n}\n\n"
                  "pub mod user;\n",
    "src/user.rs": "use crate::geo::area;\n\npub fn go() -> i32 {\n    area(1)\n}\n",
    "src/main.rs": "use shapes::geo::area;\n\nfn main() {\n    area(2);\n}\n",
    # TypeScript: a namespace's exported function through the imported namespace
    "web/util.ts": "export namespace Util {\n  export function area(r: number): number {\n"
                   "    return r * r;\n  }\n}\n",
    "web/main.ts": "import { Util } from './util';\n\nexport function run(): number {\n"
                   "  return Util.area(2);\n}\n",
    # Ruby: a class in a module, through `require_relative` (and a file it requires)
    "lib/shop.rb": "module Shop\n  class Cart\n    def total\n      1\n    end\n  end\n\n"
                   "  def self.helper\n    Cart.new.total\n  end\nend\n",
    "lib/use.rb": "require_relative 'shop'\n\nclass Checkout\n  def run\n"
                  "    Shop::Cart.new.total\n  end\nend\n",
    "test/test_cart.rb": "require_relative '../lib/use'\n\nclass TestCart\n  def test_total\n"
                         "    cart = Shop::Cart.new\n    cart.total\n  end\nend\n",
    # the module reopened in another file: `Cart` inside it, and `Shop::Cart` beside it
    "lib/shop/ext.rb": "require_relative '../shop'\n\nmodule Shop\n  def self.other\n"
                       "    Cart.new.total\n  end\nend\n\nShop::Cart.new.total\n",
    # `require 'spec_helper'`: the spec folder is on the load path (not the root, not lib/)
    "spec/spec_helper.rb": "require_relative '../lib/shop'\n",
    "spec/cart_spec.rb": "require 'spec_helper'\n\nShop::Cart.new.total\n",
}


def test_members_of_inline_modules_namespaces_and_required_ruby_modules(store, repo):
    index(store, repo, CONTAINERS)
    assert usages(store, "geo.area") == {("src/user.rs", 1, "import"), ("src/user.rs", 4, "call"),
                                         ("src/main.rs", 1, "import"), ("src/main.rs", 4, "call")}
    assert usages(store, "Util.area") == {("web/main.ts", 4, "call")}
    assert usages(store, "Cart#total") == {("lib/shop.rb", 9, "call"), ("lib/use.rb", 5, "call"),
                                           ("test/test_cart.rb", 6, "call"),
                                           ("lib/shop/ext.rb", 5, "call"),
                                           ("lib/shop/ext.rb", 9, "call"),
                                           ("spec/cart_spec.rb", 3, "call")}


GO_EMBEDDED = {
    "go.mod": "module github.com/gin-gonic/gin\n",
    "routergroup.go": "package gin\n\ntype RouterGroup struct{ basePath string }\n\n"
                      "func (group *RouterGroup) GET(p string) {}\n\n"
                      "func (group *RouterGroup) Use(h int) {}\n\n"
                      "func (group *RouterGroup) Group(p string) *RouterGroup "
                      "{ return group }\n",
    "gin.go": "package gin\n\ntype Engine struct {\n\tRouterGroup\n\tname string\n}\n\n"
              "func New() *Engine { return &Engine{} }\n\n"
              "func (engine *Engine) Use(h int) {\n\tengine.RouterGroup.Use(h)\n}\n",
    "gin_test.go": "package gin\n\nfunc TestRoutes() {\n\trouter := New()\n"
                   '\trouter.GET("/a")\n\trouter.Use(1)\n\tv1 := router.Group("/v1")\n'
                   '\tv1.GET("/b")\n}\n',
}


def test_go_methods_promoted_from_an_embedded_struct(store, repo):
    index(store, repo, GO_EMBEDDED)
    # `router` is an *Engine: GET is promoted from the embedded RouterGroup; Use is the
    # Engine's own (it shadows RouterGroup.Use, which `engine.RouterGroup.Use` calls)
    assert usages(store, "RouterGroup.GET") == {("gin_test.go", 5, "call"),
                                                ("gin_test.go", 8, "call")}
    assert usages(store, "RouterGroup.Use") == {("gin.go", 11, "call")}
    assert usages(store, "Engine.Use") == {("gin_test.go", 6, "call")}
    # the embedded field's type is a base of the struct, named once
    named = usages(store, "RouterGroup")
    assert ("gin.go", 4, "inherit") in named and ("gin.go", 4, "reference") not in named


EXTERN_CRATE = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/searcher/Cargo.toml": '[package]\nname = "grep-searcher"\n',
    "crates/searcher/src/lib.rs": "pub struct Searcher;\n\nimpl Searcher {\n"
                                  "    pub fn search_path(&mut self) {}\n}\n",
    "crates/grep/Cargo.toml": '[package]\nname = "grep"\n',
    "crates/matcher/Cargo.toml": '[package]\nname = "grep-matcher"\n',
    "crates/matcher/src/lib.rs": "pub trait Matcher {}\n",
    "crates/grep/src/lib.rs": "pub extern crate grep_matcher as matcher;\n"
                              "pub extern crate grep_searcher as searcher;\n",
    "crates/core/Cargo.toml": '[package]\nname = "core"\n',
    "crates/core/src/search.rs": "use grep::matcher::Matcher;\n\n"
                                 "fn run(searcher: &mut grep::searcher::Searcher) {\n"
                                 "    searcher.search_path();\n}\n",
}


def test_rust_extern_crate_alias_reexports_the_crate(store, repo):
    index(store, repo, EXTERN_CRATE)
    # `grep::searcher::Searcher`: the grep crate's `pub extern crate grep_searcher as
    # searcher;` (ripgrep's crates/grep/src/lib.rs); the file `use`s the grep crate
    assert usages(store, "Searcher.search_path") == {("crates/core/src/search.rs", 4, "call")}
