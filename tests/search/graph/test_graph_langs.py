"""Resolution outside Python and TypeScript, through the store (both engines): C calls
across files through `#include` (a header's prototype, transitive includes, an include
folder, calls in macro bodies; `static` functions stay their file's own; a local variable
hides a function), C++ namespace-qualified calls (`util::add`), Rust `use` of a Cargo
workspace's sibling crate and calls inside macro arguments, and Go calls through an
interface that a concrete method implements."""

from __future__ import annotations

from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.search.graph.indexed import index, usages

C = {
    "include/jv.h": '''#ifndef JV_H
#define JV_H
typedef struct { int k; } jv;
void jv_free(jv);
jv jv_parse(const char* s);
int jv_shadowed(int);
#endif
''',
    "src/util.h": '#include "jv.h"\nint count(void);\n'
                  "#define FREE2(a, jv_parse) do { jv_free(a); jv_parse(1); } while (0)\n",
    "src/jv.c": '''#include "jv.h"
static int helper(int x) { return x + 1; }
void jv_free(jv j) { helper(j.k); }
int jv_shadowed(int x) { return x; }
''',
    "src/jv_parse.c": '''#include "jv.h"
jv jv_parse(const char* s) {
  jv r;
  jv_free(r);
  return r;
}
''',
    "src/main.c": '''#include <stdio.h>
#include "util.h"
static int helper(int x) { return x; }
int main(void) {
  int jv_shadowed = 2;
  jv j = jv_parse("1");
  jv_free(j);
  helper(jv_shadowed);
  printf("jv_free(x)"); /* jv_free(y) */
  return count();
}
''',
    "src/other.c": '''static int helper(int x);
int other(void) { return helper(1); }
static int helper(int x) { return x * 2; }
''',
    "src/nodecl.c": "int call_undeclared(void) { return helper(3); }\n",
    "src/vars.c": '#include "util.h"\nvoid shadow(void) {\n  jv jv_parse;\n'
                  "  jv_free(jv_parse);\n}\n",
    # a function named like libc's, defined and declared by the repository
    "compat/compat.h": "char *strdup(const char *s);\n",
    "compat/compat.c": '#include "compat.h"\nchar *strdup(const char *s) { return 0; }\n',
    "src/uses_libc.c": '#include <string.h>\nchar *a(void) { return strdup("x"); }\n',
    "src/uses_compat.c": '#include "compat.h"\nchar *b(void) { return strdup("y"); }\n',
}


def test_c_calls_resolve_through_includes_and_statics_stay_in_their_file(store, repo):
    index(store, repo, C)
    # through jv.h, directly and through util.h (main.c), never in a comment or string
    assert usages(store, "jv_free") == {("src/jv_parse.c", 4, "call"),
                                        ("src/main.c", 7, "call"),
                                        ("src/util.h", 3, "call"),  # in a macro's body
                                        ("src/vars.c", 4, "call")}
    # not the macro's parameter, not vars.c's local variable (declared without a value)
    assert usages(store, "jv_parse") == {("src/main.c", 6, "call")}
    # a struct typedef'd in a header, used in the files that include it
    assert ("src/main.c", 6, "reference") in usages(store, "jv")
    # each static helper has its own file's calls only; nodecl.c sees no declaration
    assert usages(store, "src/jv.c:2") == {("src/jv.c", 3, "call")}
    assert usages(store, "src/main.c:3") == {("src/main.c", 8, "call")}
    assert usages(store, "src/other.c:3") == {("src/other.c", 2, "call")}
    # libc's strdup where only <string.h> is included; the repository's where its header is
    assert usages(store, "strdup") == {("src/uses_compat.c", 2, "call")}
    # a local variable of the name is not the function
    assert usages(store, "jv_shadowed") == set()
    refs = queries.references(store, name_definition(store, "jv_shadowed"))
    assert refs.unresolved == 1
    callers = queries.callers(store, name_definition(store, "jv_free"))
    assert {(e.site_path, e.site_line, e.name) for e in callers.edges} == {
        ("src/jv_parse.c", 4, "jv_parse"), ("src/main.c", 7, "main"),
        ("src/util.h", 3, "<module>"), ("src/vars.c", 4, "shadow")}


RUST = {
    "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
    "crates/globset/Cargo.toml": '[package]\nname = "globset"\n',
    "crates/globset/src/lib.rs": '''mod glob;
pub use crate::glob::Glob;

pub struct Candidate {}

impl Candidate {
    pub fn new(path: &str) -> Candidate {
        Candidate {}
    }
}

pub fn escape(s: &str) -> String {
    s.to_string()
}
''',
    "crates/globset/src/glob.rs": '''pub struct Glob {}

impl Glob {
    pub fn matches(&self, c: &str) -> bool {
        true
    }
}
''',
    "crates/grep-cli/Cargo.toml": '[package]\nname = "grep-cli"\n',
    "crates/grep-cli/src/lib.rs": '''use globset::{Candidate, Glob};

pub fn unescape(s: &str) -> String {
    s.to_string()
}

pub fn run(g: &Glob) -> bool {
    let c = Candidate::new("a");
    let e = globset::escape("x");
    g.matches("b")
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn t() {
        assert_eq!("a", unescape("a"));
        assert!(globset::Candidate::new("b").is_ok());
    }
}
''',
    "crates/ignore/Cargo.toml": '[package]\nname = "ignore"\n',
    "crates/ignore/src/lib.rs": '''use grep_cli::unescape;

pub fn clean(s: &str) -> String {
    unescape(s)
}
''',
}


def test_rust_sibling_crates_of_a_workspace_and_calls_in_macro_arguments(store, repo):
    index(store, repo, RUST)
    lib = "crates/grep-cli/src/lib.rs"
    assert usages(store, "Candidate.new") == {(lib, 8, "call"), (lib, 20, "call")}
    assert usages(store, "escape") == {(lib, 9, "call")}
    assert usages(store, "Glob.matches") == {(lib, 10, "call")}
    assert usages(store, "unescape") == {
        (lib, 15, "import"), (lib, 19, "call"), ("crates/ignore/src/lib.rs", 1, "import"),
        ("crates/ignore/src/lib.rs", 4, "call")}
    callers = queries.callers(store, name_definition(store, "unescape"))
    assert {(e.site_path, e.site_line) for e in callers.edges} == {
        (lib, 19), ("crates/ignore/src/lib.rs", 4)}


GO = {
    "go.mod": "module example.com/web\n",
    "web/writer.go": '''package web

type ResponseWriter interface {
	// Size is the bytes written.
	Size() int
	Written() bool
}

type Sizer interface {
	Size() int
	Missing() bool
}

type responseWriter struct{ size int }

func (w *responseWriter) Size() int { return w.size }

func (w *responseWriter) Written() bool { return w.size > 0 }

type other struct{}

func (o other) Size() int { return 0 }
''',
    "web/context.go": '''package web

type Context struct {
	Writer    ResponseWriter
	writermem responseWriter
}

func (c *Context) Len(s Sizer) int {
	w := ResponseWriter(&c.writermem)
	n := w.Size()
	n += c.Writer.Size()
	n += c.writermem.Size()
	var o other
	n += o.Size()
	return n + s.Size()
}
''',
}


def test_go_calls_through_an_interface_the_concrete_method_implements(store, repo):
    index(store, repo, GO)
    # direct (c.writermem) and through ResponseWriter (w, c.Writer); never other.Size,
    # never Sizer (responseWriter has no Missing method, so it does not implement it)
    assert usages(store, "responseWriter.Size") == {("web/context.go", 10, "call"),
                                                    ("web/context.go", 11, "call"),
                                                    ("web/context.go", 12, "call")}
    assert usages(store, "responseWriter.Written") == set()
    # the other type's method (it implements no interface): only its own direct call
    assert usages(store, "other.Size") == {("web/context.go", 14, "call")}


RUST_FIELDS = {
    "crates/globset/Cargo.toml": '[package]\nname = "globset"\n',
    "crates/globset/src/lib.rs": '''pub struct Fallback {}

impl Fallback {
    pub fn merge(self) -> Fallback {
        self
    }
}

pub struct Router {
    fallback: Fallback,
}

impl Router {
    pub fn make() -> Router {
        Router { fallback: Fallback {} }
    }

    pub fn fallback(self) -> Router {
        self
    }

    pub fn merge(self) -> Router {
        self.fallback.merge();
        self
    }
}
''',
    "crates/web/Cargo.toml": '[package]\nname = "web"\n',
    "crates/web/src/lib.rs": '''use globset::Router;

impl From<u8> for Router {
    fn from(x: u8) -> Router {
        Router::make()
    }
}

pub fn app(r: Router) {
    r.merge();
}
''',
}


def test_rust_a_field_is_not_its_namesake_method_and_an_impl_is_not_its_type(store, repo):
    index(store, repo, RUST_FIELDS)
    web = "crates/web/src/lib.rs"
    # self.fallback (a field) is a Fallback, not what the method fallback() returns
    assert usages(store, "Fallback.merge") == {("crates/globset/src/lib.rs", 23, "call")}
    assert usages(store, "Router.merge") == {(web, 10, "call")}
    # `impl From<u8> for Router` defines no Router: the name is still the imported one
    assert usages(store, "Router.make") == {(web, 5, "call")}


CPP = {
    "include/util.h": "namespace util {\nint add(int a, int b);\n}\n",
    "src/util.cpp": '#include "util.h"\nnamespace util {\n'
                    "int add(int a, int b) { return a + b; }\n}\n",
    "src/other.cpp": "namespace other {\nint add(int a, int b) { return 0; }\n}\n",
    "src/main.cpp": '''#include "util.h"
int main() {
  int x = util::add(1, 2);
  return x + other::add(1, 2);
}
''',
}


def test_cpp_namespace_qualified_calls_resolve_through_includes(store, repo):
    index(store, repo, CPP)
    assert usages(store, "util.add") == {("src/main.cpp", 3, "call")}
    assert usages(store, "other.add") == set()  # no header main.cpp includes declares it


def test_a_cpp_namespace_function_named_at_its_definition_is_found_through_its_header(
        store, repo):
    """Named by PATH:LINE of its body in a .cpp (not the header's declaration), a function
    inside `namespace util` is looked for in the files that include a header declaring it."""
    index(store, repo, CPP)
    assert usages(store, "src/util.cpp:3") == {("src/main.cpp", 3, "call")}
