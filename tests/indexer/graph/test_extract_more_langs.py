"""The code graph of C#, PHP, Kotlin, Swift, Scala, Lua and Elixir files
(`indexer.graph.specs_more`, `imports_more`, `langs_more`): a name written only in a
comment or a string is never a site (code inside an interpolation is); calls carry their
receivers (`this`/`self`/`$this` as the resolver reads them, a base as `super()`); imports
and the file's package are recorded."""

from __future__ import annotations

import pytest

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Import, Role, decode, encode, graph_of, link_keys

CSHARP = '''using System.Text;
using Alias = Foo.Bar.Baz;
namespace Demo.Jobs
{
    // hidden in a comment
    public class Job : Base, IRunner
    {
        private Logger _log = new Logger();
        public override void Run(int count)
        {
            var s = "hidden in a string";
            var t = $"{Format(count)}";
            this.Stop();
            base.Run(count);
            _log?.Write(s);
        }
    }
}
'''

PHP = '''<?php
namespace Demo\\Jobs;

use Other\\Lib\\{Logger, Format as F};

// hidden in a comment
class Job extends Base implements Runner
{
    public function run(Logger $log)
    {
        $s = "hidden in a string {$this->stop()}";
        self::make();
        parent::run($log);
        $log->write($s);
    }
}
'''

KOTLIN = '''package demo.jobs

import other.lib.Logger
import other.util.*

// hidden in a comment
class Job(val log: Logger) : Base(), Runner {
    override fun run(count: Int) {
        val s = "hidden in a string ${format(count)}"
        this.stop()
        super.run(count)
        val other: Logger = make()
        other.write(s)
    }
}
'''

SWIFT = '''import Foundation

// hidden in a comment
final class Job: Base, Runner {
    let log = Logger()
    override func run(count: Int) {
        let s = "hidden in a string \\(format(count))"
        self.stop()
        super.run(count: count)
        log.write(s)
    }
}
'''

SCALA = '''package demo.jobs

import other.lib.{Logger, Format => F}

// hidden in a comment
class Job(log: Logger) extends Base(log) with Runner {
  override def run(count: Int): Unit = {
    val s = s"hidden in a string ${format(count)}"
    this.stop()
    super.run(count)
    log.write(s)
  }
}
'''

LUA = '''local util = require("jobs.util")
-- hidden in a comment
local Job = {}
function Job:run(count)
  local s = "hidden in a string"
  self:stop()
  util.format(count)
end
return Job
'''

ELIXIR = '''defmodule Jobs.Job do
  alias Jobs.Util
  import Jobs.Format
  # hidden in a comment
  @moduledoc "hidden in a string"
  def run(count, opts \\\\ []) do
    s = "hidden in a string #{format(count)}"
    Util.write(s)
    count |> stop()
  end
end
'''


def graph(language: str, text: str) -> FileGraph:
    g = graph_of(language, parse_source(language, text))
    assert g is not None
    assert decode(encode(g)) == g
    return g


CASES = [
    pytest.param("csharp", CSHARP, {("Format", None), ("Stop", "this"), ("Run", "super()"),
                                    ("Write", "_log"), ("Logger", None)},
                 {"Base", "IRunner"}, ("Demo.Jobs", "System.Text"), id="csharp"),
    pytest.param("php", PHP, {("stop", "this"), ("make", "self"), ("run", "super()"),
                              ("write", "$log")},
                 {"Base", "Runner"}, ("Demo.Jobs", "Other.Lib"), id="php"),
    pytest.param("kotlin", KOTLIN, {("format", None), ("stop", "this"), ("run", "super()"),
                                    ("write", "other"), ("make", None)},
                 {"Base", "Runner"}, ("demo.jobs", "other.util"), id="kotlin"),
    pytest.param("swift", SWIFT, {("format", None), ("stop", "self"), ("run", "super()"),
                                  ("write", "log"), ("Logger", None)},
                 {"Base", "Runner"}, (None, "Foundation"), id="swift"),
    pytest.param("scala", SCALA, {("format", None), ("stop", "this"), ("run", "super()"),
                                  ("write", "log")},
                 {"Base", "Runner"}, ("demo.jobs", "other.lib"), id="scala"),
    pytest.param("lua", LUA, {("stop", "self"), ("format", "util")},
                 set(), (None, "jobs.util"), id="lua"),
    pytest.param("elixir", ELIXIR, {("format", None), ("write", "Util"), ("stop", None)},
                 set(), (None, "Jobs.Util"), id="elixir"),
]


@pytest.mark.parametrize(("language", "text", "calls", "bases", "modules"), CASES)
def test_sites_are_code_only_with_calls_bases_and_imports(language, text, calls, bases,
                                                          modules):
    g = graph(language, text)
    names = {s.name for s in g.sites}
    assert not names & {"hidden", "comment", "string"}  # never inside a comment or string
    got = {(s.name, s.receiver) for s in g.sites if s.role == Role.CALL}
    assert calls <= got, got
    assert {s.name for s in g.sites if s.role == Role.INHERIT} == bases
    package, imported = modules
    assert [i.module for i in g.imports if i.level == -1] == ([package] if package else [])
    assert imported in {i.module for i in g.imports if i.level == 0}
    assert all(s.line not in (1, 2) or s.role == Role.IMPORT for s in g.sites
               if language in ("php", "kotlin", "scala"))  # `package`/`use`: not references


def test_a_definitions_name_and_its_parameters_are_not_calls_in_elixir():
    g = graph("elixir", ELIXIR)
    assert "run" not in {s.name for s in g.sites}  # `def run(...)`: the definition
    assert {s.name for s in g.sites if s.role == Role.PARAM} >= {"count", "opts"}
    assert "moduledoc" not in {s.name for s in g.sites}
    assert "s" not in {s.name for s in g.sites if s.role == Role.REF}  # a variable


def test_imports_and_packages_key_the_file_for_its_importers():
    g = graph("kotlin", KOTLIN)
    assert Import("other.lib", "Logger", None, 0, 3) in g.imports
    assert {"jobs", "lib", "Logger", "util"} <= set(link_keys(g, "src/Job.kt"))
    php = graph("php", PHP)
    assert {(i.module, i.name, i.alias) for i in php.imports if i.level == 0} == {
        ("Other.Lib", "Logger", None), ("Other.Lib", "Format", "F")}
    typed = {(s.name, s.value) for s in graph("csharp", CSHARP).sites if s.role == Role.BIND}
    assert ("_log", ":Logger") in typed  # the declaration's type, not the declarator's


def test_namespace_paths_pipes_and_anonymous_classes():
    php = graph("php", "<?php\nnamespace App;\nclass C implements \\Psr\\Http\\Client\\I {\n"
                       "  function f() { return new \\Lib\\Http\\Request(); }\n}\n")
    assert not {"Psr", "Http", "Client", "Lib"} & {s.name for s in php.sites}  # segments
    assert ("Request", "Lib\\Http") in {(s.name, s.receiver) for s in php.sites
                                       if s.role == Role.CALL}
    ex = graph("elixir", "defmodule A do\n  def f(conn), do: conn |> halt |> g()\nend\n")
    assert {s.name for s in ex.sites if s.role == Role.CALL} == {"halt", "g"}
    scala = graph("scala", 'object T {\n  val p = new scopt.OptionParser[C]("x") {\n'
                           "    check()\n  }\n}\n")
    assert ("this", "~4()scopt.OptionParser") in {(s.name, s.value) for s in scala.sites
                                                   if s.role == Role.PARAM}


def test_a_csharp_methods_declared_return_type_is_its_return_value():
    g = graph("csharp", "class A {\n  IRunner Make() { var r = new Runner(); return r; }\n}\n")
    assert ("return", ":IRunner") in {(s.name, s.value) for s in g.sites
                                      if s.role == Role.BIND}  # (the interface, as declared)


def test_each_operand_call_of_a_swift_sum_is_a_call():
    g = graph("swift", "class Square { func area() -> Double { return 2.0 } }\n"
                       "func three() -> Double {\n    let s = Square()\n"
                       "    return s.area() + s.area() * s.area()\n}\n")
    # tree-sitter-swift reads `s.area() + s.area()` as a call of `s.area() + s.area`
    assert [(s.col, s.role, s.receiver) for s in g.sites if s.name == "area" and s.line == 4] \
        == [(14, Role.CALL, "s"), (25, Role.CALL, "s"), (36, Role.CALL, "s")]
