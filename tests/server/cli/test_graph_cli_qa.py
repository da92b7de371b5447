"""What a QA pass over real, messy trees found in `ctxd refs`, `callers`, `callees`, `path`
and `impact` (issue 38), each as the smallest tree that shows it, through the real CLI on a
real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxd.server.config import load_settings
from ctxd.server.service import Service
from tests.conftest import FakeEmbedder, RepoBuilder
from tests.server.cli.test_cli_hardening import run


def index(root: Path) -> None:
    service = Service(load_settings({}), embedder=FakeEmbedder())
    try:
        service.index(root)
    finally:
        service.close()


@pytest.fixture
def shop(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "shop")
    repo.write("app/store.py", "class Store:\n    def get(self, key):\n        return key\n")
    repo.write("app/use.py", "from app.store import Store\n\n\ndef handler(key):\n"
               + "".join(f"    Store().get(key + {n})\n" for n in range(8)))
    index(repo.root)
    monkeypatch.chdir(repo.root)
    return repo


def test_a_cut_by_name_list_says_so_in_text(shop: RepoBuilder) -> None:
    """`refs NAME --by-name --limit N` said "N usages" and stopped, silently (the issue's
    complaint about text mode); `--json` had `truncated: true`."""
    r = run("refs", "Store.get", "--by-name", "--limit", "3")
    assert r.exit_code == 0, r.output
    assert "1 definitions, 3 usages of get" in r.stdout
    assert r.stdout.rstrip().endswith("(cut at 3 usages; raise --limit to see more)")
    whole = run("refs", "Store.get", "--by-name").stdout
    assert "cut" not in whole and "8 usages of get" in whole


@pytest.fixture
def cpp(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "calc")
    repo.write("src/util.h", "#pragma once\nnamespace util {\nint add(int a, int b);\n}\n")
    repo.write("src/util.cpp", '#include "util.h"\n\nnamespace util {\n'
               "int add(int a, int b) {\n    return a + b;\n}\n}\n")
    repo.write("src/main.cpp", '#include "util.h"\n\nint main() {\n'
               "    return util::add(1, 2);\n}\n")
    repo.write("tests/test_util.cpp", '#include "../src/util.h"\n\nvoid test_add() {\n'
               "    util::add(2, 2);\n}\n")
    repo.write("lib/args.dart", "class ArgParser {\n  void addOption() {}\n}\n")
    repo.write("bin/tool", "#!/usr/bin/env python3\n\n\ndef run():\n    return 1\n")
    repo.write("docs/guide.md", "# Guide\n\nUse util::add.\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    return repo


def test_impact_of_a_file_whose_code_is_inside_a_namespace(cpp: RepoBuilder) -> None:
    """A file's code inside `namespace util { ... }` (C++; Ruby's `module`, a TS namespace)
    is the file's code: `impact src/util.cpp` followed only the namespace and answered
    "0 dependents" while main() and a test call util::add."""
    r = run("impact", "src/util.cpp")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0] == "src/util.cpp: 2 dependents, 1 of them in tests"
    assert "  main  src/main.cpp:3  uses util.add" in r.stdout
    assert "  test_add  tests/test_util.cpp:3  uses util.add  [test]" in r.stdout


def test_impact_of_a_file_in_a_language_the_graph_does_not_read(cpp: RepoBuilder) -> None:
    """`impact lib/args.dart` said "not a symbol (a path without :LINE)" and that `ctxd
    impact` also takes a whole file: the command the user had just run."""
    r = run("impact", "lib/args.dart")
    assert r.exit_code == 2, r.output
    assert "lib/args.dart is Dart, which the code graph does not read" in r.output
    assert "--by-name" in r.output and "without :LINE" not in r.output
    r = run("impact", "docs/guide.md")
    assert r.exit_code == 2 and "docs/guide.md is Markdown, which the code graph" in r.output
    r = run("refs", "ArgParser")  # Dart: no definitions; the text matches are a flag away
    assert r.exit_code == 1 and "no definition named 'ArgParser'" in r.output
    assert "`ctxd refs NAME --by-name`" in r.output
    r = run("impact", "bin/tool")  # a Python script without an extension is code
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("bin/tool: 0 dependents")


def test_a_type_is_named_by_its_name_beside_its_impls(isolated_env: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """axum: `refs Router` was "'Router' names 4 definitions: Router (impl) ..., Router
    (struct) ..." (Alamofire's `refs Session`: the class and three extensions); the impls
    share the type's qualified name, so only PATH:LINE could name it. The type is named; an
    impl alone (of a type defined elsewhere) still is."""
    repo = RepoBuilder(tmp_path / "web")
    repo.write("Cargo.toml", '[package]\nname = "web"\nversion = "0.1.0"\n')
    repo.write("src/lib.rs", "pub struct Router;\n\nimpl Router {\n    pub fn new() -> Self {\n"
               "        Router\n    }\n}\n\npub mod ext;\n\npub fn app() -> Router {\n"
               "    Router::new()\n}\n")
    repo.write("src/ext.rs", "use crate::Router;\n\nimpl Router {\n    pub fn extra(&self) {}\n"
               "}\n\nimpl Clone for Router {\n    fn clone(&self) -> Self {\n        Router\n"
               "    }\n}\n\nimpl std::fmt::Debug for Outside {}\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    r = run("refs", "Router")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Router (struct) at src/lib.rs:1: ")
    assert run("callers", "Router::new").stdout.startswith("Router.new (method) at src/lib.rs:4")
    assert run("refs", "Outside").stdout.startswith("Outside (impl) at src/ext.rs:13")


def test_path_says_which_of_its_two_names_is_wrong(shop: RepoBuilder) -> None:
    """`path handler Nope` said "no definition named 'Nope'" with `field: symbol`: which of
    SOURCE and TARGET is not said by the field (an agent reads the field)."""
    r = run("path", "handler", "Nope", "--json")
    assert r.exit_code == 1, r.output
    out = json.loads(r.stdout)
    assert out["message"] == "target: no definition named 'Nope' in shop"
    assert out["details"] == {"field": "target", "value": "Nope"}
    r = run("path", "Nope.x", "handler")
    assert "error: NOT_FOUND: source: no definition named 'Nope.x' in shop" in r.output
    out = json.loads(run("impact", "Nope", "--json").stdout)
    assert out["details"]["field"] == "subject" and out["message"].startswith("no definition")


def test_impact_of_a_bundle_says_it_is_greppable_only(isolated_env: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A committed library build (`/*! lib v1.2.3 */`) is kept greppable only: `impact` of it
    said "not an indexed code file, or it defines nothing", while `ctxd files` lists it."""
    repo = RepoBuilder(tmp_path / "web")
    repo.write("public/js/lib.js", "/*! lib v1.2.3 | MIT */\n" + "".join(
        f"function helper{n}(a) {{\n  return a + {n};\n}}\n" for n in range(40)))
    repo.write("src/app.js", "function main() {\n  return 1;\n}\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    r = run("impact", "public/js/lib.js", "--json")
    assert r.exit_code == 2, r.output
    out = json.loads(r.stdout)
    assert out["message"] == ("public/js/lib.js is build output (JavaScript), which the code "
                              "graph does not read: `impact` follows code files and "
                              "definitions")
    assert "--by-name" in out["hint"] and "walk.embed_allow" in out["hint"]
    r = run("impact", "src/nothere.js")
    assert "no indexed file at src/nothere.js" in r.output


@pytest.fixture
def unicode_names(isolated_env: Path, tmp_path: Path,
                  monkeypatch: pytest.MonkeyPatch) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "uni")
    repo.write("m.py", "def größe(x):\n    return x\n\n\ndef λ(y):\n    return größe(y)\n\n\n"
               "class Ünit:\n    def méthode(self):\n        return λ(1) + λx\n\n\nλx = 2\n")
    repo.write("store.js", "function $patch(s) {\n  return s;\n}\n\nfunction 呼ぶ() {\n"
               "  return $patch(1) + $patchAll;\n}\n\nconst $patchAll = 呼ぶ;\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    return repo


def test_names_that_are_not_ascii_are_names(unicode_names: RepoBuilder) -> None:
    """`refs λ`, `refs Ünit.méthode`, `callers 呼ぶ` were "not a symbol" (the name's first
    letter had to be ASCII), though Python, JS, Go, Rust, Java, ... allow any letter."""
    r = run("refs", "λ")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("λ (function) at m.py:5: 1 references")
    assert "11:16  call      return λ(1) + λx  in Ünit.méthode" in r.stdout
    assert run("refs", "Ünit.méthode").stdout.startswith("Ünit.méthode (method) at m.py:10")
    assert "$patch  at store.js:5" not in run("callers", "呼ぶ").stdout
    assert run("callers", "$patch").stdout.splitlines()[1] == "  呼ぶ  at store.js:6"


def test_by_name_finds_names_that_begin_with_a_dollar_or_a_letter_not_ascii(
        unicode_names: RepoBuilder) -> None:
    """pinia: `refs '$patch' --by-name` listed 0 usages ("44 other sites bear the name",
    said the resolved answer): the search was `\\b$patch\\b`, `$` unescaped and no word
    boundary before it. `\\bλ\\b` found nothing either (RE2's `\\b` is ASCII). Neither may
    match inside a longer name (`$patchAll`, `λx`)."""
    out = json.loads(run("refs", "$patch", "--by-name", "--json").stdout)
    assert [(u["path"], u["line"], u["column"]) for u in out["usages"]] == [
        ("store.js", 6, 10)]
    assert [(d["line"], d["column"]) for d in out["definitions"]] == [(1, 10)]
    out = json.loads(run("refs", "λ", "--by-name", "--json").stdout)
    assert [(u["path"], u["line"], u["column"]) for u in out["usages"]] == [("m.py", 11, 16)]
    out = json.loads(run("refs", "größe", "--by-name", "--json").stdout)
    assert [(u["line"], u["column"]) for u in out["usages"]] == [(6, 12)]


def test_a_place_with_its_column_names_the_definition(shop: RepoBuilder,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`refs --by-name` prints `def app/store.py:2:9`, compilers and grep print
    PATH:LINE:COLUMN: `callers app/store.py:2:9` said "not a symbol (a path without :LINE)"
    and offered `app/store.py:2:9:12`."""
    for place in ("app/store.py:2:9", "app/store.py:2"):
        r = run("callers", place)
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith("Store.get (method) at app/store.py:2: 8 direct callers")
    out = json.loads(run("refs", "app/store.py:2:9", "--by-name", "--json").stdout)
    assert out["symbol"] == "get" and len(out["usages"]) == 8
    monkeypatch.chdir(shop.root / "app")  # relative to the current folder, as ctxd prints
    assert run("refs", "store.py:2:9").stdout.startswith("Store.get (method) at store.py:2")


def test_a_cut_impact_list_says_so_in_its_first_line(shop: RepoBuilder) -> None:
    """`impact FILE --limit N` began "N dependents, 0 of them in tests" when the walk stopped
    at N (rich/console.py: "200 dependents, 0 of them in tests"), read as a count of all;
    the cut was said only at the end of a long list."""
    shop.write("app/more.py", "".join(f"from app.store import Store\n\n\ndef use{n}():\n"
                                      "    return Store()\n\n\n" for n in range(3)))
    shop.write("tests/test_store.py", "from app.store import Store\n\n\ndef test_it():\n"
               "    assert Store()\n")
    index(shop.root)
    first = run("impact", "app/store.py", "--limit", "2").stdout.splitlines()[0]
    assert first == "app/store.py: 2 dependents (cut: there are more), 0 of them in tests"
    first = run("impact", "app/store.py").stdout.splitlines()[0]
    assert first.startswith("app/store.py: ") and "cut" not in first
    assert first.endswith(", 2 of them in tests")  # its import line and test_it


def test_a_cut_among_direct_callers_says_so_in_the_first_line(shop: RepoBuilder) -> None:
    """`callers X --limit 3` began "X ...: 3 direct callers" though there were more (said
    only at the end); a cut deeper in the tree leaves the direct count whole."""
    shop.write("app/more.py", "".join(f"from app.store import Store\n\n\ndef use{n}():\n"
                                      "    return Store().get(1)\n\n\n" for n in range(3)))
    index(shop.root)
    lines = run("callers", "Store.get", "--limit", "3").stdout.splitlines()
    assert lines[0] == ("Store.get (method) at app/store.py:2: 11 direct callers, 3 listed "
                        "(8 cut)")
    assert lines[-1] == "(cut at 3 calls; raise --limit)"
    whole = run("callers", "Store.get").stdout.splitlines()[0]
    assert whole == "Store.get (method) at app/store.py:2: 11 direct callers"


def test_php_names_with_their_namespace(isolated_env: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """guzzle: `refs 'GuzzleHttp\\Client'` (PHP's own notation) was "not a symbol (a path
    without :LINE)", and `GuzzleHttp.Client` not found: composer maps the namespace to
    src/, so the folders do not spell it; the file's `namespace GuzzleHttp;` does."""
    repo = RepoBuilder(tmp_path / "guzzle")
    repo.write("src/Client.php", "<?php\n\nnamespace Acme;\n\nclass Client\n{\n"
               "    public function send($r)\n    {\n        return $r;\n    }\n}\n")
    repo.write("tests/ClientTest.php", "<?php\n\nnamespace Acme\\Tests;\n\nuse Acme\\Client;\n\n"
               "class ClientTest\n{\n    public function testSend()\n    {\n"
               "        $c = new Client();\n        return $c->send(1);\n    }\n}\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    for name in ("Acme\\Client", "\\Acme\\Client", "Acme.Client"):
        r = run("refs", name)
        assert r.exit_code == 0, r.output
        assert r.stdout.startswith("Client (class) at src/Client.php:5: ")
    r = run("callers", "Acme\\Client::send")
    assert r.stdout.startswith("Client.send (method) at src/Client.php:7: 1 direct caller")
    r = run("refs", "Other\\Client")
    assert r.exit_code == 1 and "no definition named 'Other\\\\Client'" in r.output


def test_a_lua_module_function_is_named_as_require_names_it(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """lazy.nvim: every module is `local M = {} ... return M`, so `refs M.setup` names 8
    definitions and `refs lazy.core.config.setup` (how `require` names it) was not found."""
    repo = RepoBuilder(tmp_path / "nvim")
    setup = "local M = {}\n\nfunction M.setup(opts)\n  return opts\nend\n\nreturn M\n"
    repo.write("lua/app/init.lua", setup)
    repo.write("lua/app/core/config.lua", setup)
    repo.write("lua/app/core/loader.lua", setup)
    index(repo.root)
    monkeypatch.chdir(repo.root)
    for name, path in (("app.core.config.setup", "lua/app/core/config.lua"),
                       ("config.setup", "lua/app/core/config.lua"),
                       ("app.setup", "lua/app/init.lua")):
        r = run("refs", name)
        assert r.exit_code == 0, (name, r.output)
        assert r.stdout.startswith(f"M.setup (function) at {path}:3: "), (name, r.stdout)
    assert "names 3 definitions" in run("refs", "M.setup").output
    assert run("refs", "app.nope.setup").exit_code == 1


def test_a_language_without_by_name_is_refused_not_ignored(shop: RepoBuilder) -> None:
    """`refs Store.get --lang go` (and `--lang klingon`) answered the resolved references
    as if no --lang were given; the MCP tool ignored `language` the same way."""
    r = run("refs", "Store.get", "--lang", "go")
    assert r.exit_code == 2
    assert "--lang go goes with --by-name only" in r.output and "add --by-name" in r.output
    r = run("refs", "Store.get", "--lang", "python", "--by-name", "--json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)["usages"]) == 8


def test_impact_of_a_module_counts_the_files_that_import_it(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ky: `impact source/index.ts` was "0 dependents" though every test imports it (its
    default export is a value, `const ky = createInstance(); export default ky`, no
    definition); requests: `impact src/requests/__init__.py` the same (`import requests`)."""
    repo = RepoBuilder(tmp_path / "lib")
    repo.write("source/index.ts", "function createInstance() {\n  return {};\n}\n\n"
               "const ky = createInstance();\n\nexport default ky;\n")
    repo.write("test/main.ts", "import ky from '../source/index.js';\n\nky.get('/');\n")
    repo.write("test/other.ts", "import ky from '../source/index';\n\nexport const k = ky;\n")
    repo.write("pkg/__init__.py", "from .api import get\n\n\ndef check():\n    return 1\n\n\n"
               "VERSION = check()\n")
    repo.write("pkg/api.py", "def get(url):\n    return url\n")
    repo.write("tests/test_pkg.py", "import pkg\n\n\ndef test_version():\n"
               "    assert pkg.VERSION\n")
    repo.write("unrelated.py", "import os\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    out = run("impact", "source/index.ts").stdout
    assert out.splitlines()[0] == "source/index.ts: 2 dependents, 2 of them in tests"
    assert "  (module level)  test/main.ts:1  uses ../source/index.js  [test]" in out
    assert "  (module level)  test/other.ts:1  uses ../source/index  [test]" in out
    out = run("impact", "pkg/__init__.py").stdout
    assert out.splitlines()[0] == "pkg/__init__.py: 2 dependents, 2 of them in tests"
    assert "  (module level)  tests/test_pkg.py:1  uses pkg  [test]" in out
    assert "  test_version  tests/test_pkg.py:4  uses VERSION  [test]" in out


def test_a_rust_name_with_its_crate_as_cargo_names_it(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ripgrep: the crate `grep-searcher` lives in crates/searcher/, so `refs
    grep_searcher::Searcher` (how another crate `use`s it) was not found."""
    repo = RepoBuilder(tmp_path / "rg")
    repo.write("Cargo.toml", '[workspace]\nmembers = ["crates/searcher"]\n')
    repo.write("crates/searcher/Cargo.toml", '[package]\nname = "grep-searcher"\n'
               'version = "0.1.0"\n')
    repo.write("crates/searcher/src/lib.rs", "pub mod searcher;\n\npub use searcher::Searcher;\n")
    repo.write("crates/searcher/src/searcher/mod.rs", "pub struct Searcher;\n\nimpl Searcher {\n"
               "    pub fn search_path(&self) {}\n}\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    for name in ("grep_searcher::Searcher", "grep_searcher::searcher::Searcher"):
        r = run("refs", name)
        assert r.exit_code == 0, (name, r.output)
        assert r.stdout.startswith("Searcher (struct) at crates/searcher/src/searcher/mod.rs:1")
    r = run("callers", "grep_searcher::Searcher::search_path")
    assert r.stdout.startswith("Searcher.search_path (method) at crates/searcher/src/searcher/")
    assert run("refs", "grep_printer::Searcher").exit_code == 1


def test_impact_of_a_lua_module(isolated_env: Path, tmp_path: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """lazy.nvim: `impact lua/lazy/async.lua` said "no definitions in lua/lazy/async.lua":
    its functions hang on `local M = {}` (and `local Async = {}`), tables that are no
    definitions, so none was at the file's top level."""
    repo = RepoBuilder(tmp_path / "nvim")
    repo.write("lua/app/async.lua", "local M = {}\n\nfunction M.run(fn)\n  return fn()\nend\n\n"
               "return M\n")
    repo.write("lua/app/runner.lua", "local Async = require(\"app.async\")\n\nlocal R = {}\n\n"
               "function R.start()\n  return Async.run(print)\nend\n\nreturn R\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    r = run("impact", "lua/app/async.lua")
    assert r.exit_code == 0, r.output
    assert "  R.start  lua/app/runner.lua:5  uses M.run" in r.stdout


def test_kotlin_names_in_backticks_are_names(isolated_env: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """clikt: ctxd prints `ChainedCliktCommandTest.\\`chained run\\`.C` (a class inside a
    test function named in backticks), and `callers` of what it printed was "not a
    symbol"."""
    repo = RepoBuilder(tmp_path / "kt")
    repo.write("src/test/kotlin/OptionTest.kt",
               "class OptionTest {\n    fun `default option`() {\n        class C {\n"
               "            fun go() = 1\n        }\n        C().go()\n    }\n\n"
               "    fun other() = `default option`()\n}\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    r = run("callers", "OptionTest.`default option`")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OptionTest.`default option` (method) at src/test/kotlin/")
    r = run("refs", "OptionTest.`default option`.C")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("OptionTest.`default option`.C (class) at src/test/kotlin/")
    out = json.loads(run("refs", "`default option`", "--by-name", "--json").stdout)
    assert [(u["line"], u["column"]) for u in out["usages"]] == [(9, 19)]


def test_ruby_names_ending_in_a_question_or_exclamation_mark(
        isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """sinatra prints `Sinatra.Base.call!`, plug `JSON.decode!`; `callers` of what ctxd
    printed, and `refs 'call!' --by-name`, were "not a symbol"."""
    repo = RepoBuilder(tmp_path / "shop")
    repo.write("lib/cart.rb", "class Cart\n  def valid?\n    true\n  end\n\n  def save!\n"
               "    raise 'no' unless valid?\n    self\n  end\nend\n")
    index(repo.root)
    monkeypatch.chdir(repo.root)
    r = run("callers", "Cart#valid?")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[:2] == [
        "Cart.valid? (method) at lib/cart.rb:2: 1 direct caller", "  Cart.save!  at lib/cart.rb:7"]
    assert run("refs", "Cart.save!").stdout.startswith("Cart.save! (method) at lib/cart.rb:6")
    out = json.loads(run("refs", "valid?", "--by-name", "--json").stdout)
    assert [(u["line"], u["column"]) for u in out["usages"]] == [(7, 23)]
