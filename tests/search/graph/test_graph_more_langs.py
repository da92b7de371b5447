"""The code graph of C#, PHP, Kotlin, Swift, Scala, Lua and Elixir, through the store
(both engines): in each language two classes (modules, tables) define a method of the same
name; a comment and a string mention it; one call goes through a typed or constructed
receiver (or the class's own `this`/`self`, or an anonymous subclass's body), one through a
package's other file. `refs`
names the calls of one method only, never the comment or the string, and `callers` lists
the calling definitions; what the graph cannot resolve stays unresolved (by name)."""

from __future__ import annotations

import pytest

from ctxd.search.graph import queries
from ctxd.search.graph.naming import name_definition
from tests.search.graph.indexed import index, usages

CSHARP = {
    "src/Jobs/Runner.cs": '''using System;
namespace Demo.Jobs
{
    // Run is mentioned in a comment
    public class Runner
    {
        public void Run(int count) { Console.WriteLine("Run in a string"); }
    }
    public class Other
    {
        public void Run(int count) { }
        public void Start() { this.Run(1); }
    }
}
''',
    "src/Jobs/Planner.cs": '''namespace Demo.Jobs
{
    public class Planner
    {
        private Runner _runner = new Runner();
        public void Plan(Runner given)
        {
            given.Run(2);
            var made = new Runner();
            made.Run(3);
            _runner.Run(4);
        }
    }
}
''',
    "app/Program.cs": '''using Demo.Jobs;
namespace App
{
    static class Program
    {
        static void Main() { new Planner().Plan(new Runner()); }
    }
}
''',
}

PHP = {
    "src/Runner.php": '''<?php
namespace Demo\\Jobs;

// run is mentioned in a comment
class Runner
{
    public function run($count) { echo "run in a string"; return $this->stop(); }
    public function stop() { return 1; }
}
''',
    "src/Other.php": '''<?php
namespace Demo\\Jobs;

class Other
{
    public function run($count) { return 0; }
}
''',
    "app/Planner.php": '''<?php
namespace App;

use Demo\\Jobs\\Runner;

class Planner
{
    public function plan(Runner $given)
    {
        $given->run(2);
        $made = new Runner();
        $made->run(3);
    }
}
''',
}

KOTLIN = {
    "src/demo/jobs/Runner.kt": '''package demo.jobs

// run is mentioned in a comment
class Runner {
    fun run(count: Int) { println("run in a string") }
}

class Other {
    fun run(count: Int) {}
    fun start() { this.run(1) }
}
''',
    "src/demo/jobs/Planner.kt": '''package demo.jobs

class Planner {
    fun plan(given: Runner) {
        given.run(2)
        val made = Runner()
        made.run(3)
    }
}
''',
    "app/Main.kt": '''package app

import demo.jobs.Planner
import demo.jobs.Runner

fun main() { Planner().plan(Runner()) }
fun Runner.twice() { run(5) }
fun <T : Runner> each(job: T) { job.run(6) }
''',
}

SWIFT = {
    "Sources/Jobs/Runner.swift": '''import Foundation

// run is mentioned in a comment
class Runner {
    func run(count: Int) { print("run in a string") }
}

class Other {
    func run(count: Int) {}
    func start() { self.run(count: 1) }
}
''',
    "Sources/Jobs/Planner.swift": '''class Planner {
    let runner = Runner()
    func plan(given: Runner) {
        given.run(count: 2)
        let made = Runner()
        made.run(count: 3)
        runner.run(count: 4)
    }
}
''',
    "Sources/Jobs/Runner+More.swift": '''extension Runner {
    func twice() { run(count: 5) }
}
''',
    "Sources/Jobs/Generic.swift": '''func each<T: Runner>(job: T) {
    job.run(count: 6)
}
''',
}

SCALA = {
    "src/main/scala/demo/jobs/Runner.scala": '''package demo.jobs

// run is mentioned in a comment
class Runner {
  def run(count: Int): Unit = println("run in a string")
}

class Other {
  def run(count: Int): Unit = ()
  def start(): Unit = this.run(1)
}
''',
    "src/main/scala/demo/jobs/Planner.scala": '''package demo.jobs

class Planner {
  def plan(job: Runner): Unit = {
    job.run(2)
    val made = new Runner()
    made.run(3)
  }
  val anonymous = new Runner {
    run(4)
  }
}
''',
}

LUA = {
    "lua/jobs/runner.lua": '''-- run is mentioned in a comment
local Runner = {}
local Other = {}

function Runner.run(count)
  print("run in a string")
end

function Other.run(count) end

function Runner:twice()
  self.run(1)
  Runner.run(2)
end

return Runner
''',
    "lua/jobs/plan.lua": '''local runner = require("jobs.runner")
local M = {}

function M.plan()
  runner.run(3)
end

return M
''',
}

ELIXIR = {
    "lib/jobs/runner.ex": '''defmodule Jobs.Runner do
  # run is mentioned in a comment
  @moduledoc "run in a string"
  def run(count), do: IO.puts("run in a string #{count}")

  def twice(count) do
    run(count)
    count |> run()
  end
end
''',
    "lib/jobs/other.ex": '''defmodule Jobs.Other do
  def run(count), do: count
end
''',
    "lib/jobs/planner.ex": '''defmodule Jobs.Planner do
  alias Jobs.Runner

  def plan(run) do
    Runner.run(run)
    Jobs.Runner.run(2)
  end
end
''',
}

CASES = [
    pytest.param(CSHARP, "src/Jobs/Runner.cs:7", {
        ("src/Jobs/Planner.cs", 8, "call"), ("src/Jobs/Planner.cs", 10, "call"),
        ("src/Jobs/Planner.cs", 11, "call")}, {"Planner.Plan"}, id="csharp"),
    pytest.param(PHP, "src/Runner.php:7", {
        ("app/Planner.php", 10, "call"), ("app/Planner.php", 12, "call")},
        {"Planner.plan"}, id="php"),
    pytest.param(KOTLIN, "src/demo/jobs/Runner.kt:5", {
        ("src/demo/jobs/Planner.kt", 5, "call"), ("src/demo/jobs/Planner.kt", 7, "call"),
        ("app/Main.kt", 7, "call"),  # in an extension function of Runner
        ("app/Main.kt", 8, "call")},  # through a type parameter bounded by Runner
        {"Planner.plan", "Runner.twice", "each"}, id="kotlin"),
    pytest.param(SWIFT, "Sources/Jobs/Runner.swift:5", {
        ("Sources/Jobs/Planner.swift", 4, "call"), ("Sources/Jobs/Planner.swift", 6, "call"),
        ("Sources/Jobs/Planner.swift", 7, "call"),
        ("Sources/Jobs/Runner+More.swift", 2, "call"), ("Sources/Jobs/Generic.swift", 2, "call")},
        {"Planner.plan", "Runner.twice", "each"}, id="swift"),
    pytest.param(SCALA, "src/main/scala/demo/jobs/Runner.scala:5", {
        ("src/main/scala/demo/jobs/Planner.scala", 5, "call"),
        ("src/main/scala/demo/jobs/Planner.scala", 7, "call"),
        ("src/main/scala/demo/jobs/Planner.scala", 10, "call")},  # in `new Runner { }`
        {"Planner.plan", "Planner"}, id="scala"),
    pytest.param(LUA, "lua/jobs/runner.lua:5", {
        ("lua/jobs/runner.lua", 12, "call"), ("lua/jobs/runner.lua", 13, "call"),
        ("lua/jobs/plan.lua", 5, "call")}, {"Runner.twice", "M.plan"}, id="lua"),
    pytest.param(ELIXIR, "lib/jobs/runner.ex:4", {
        ("lib/jobs/runner.ex", 7, "call"), ("lib/jobs/runner.ex", 8, "call"),
        ("lib/jobs/planner.ex", 5, "call"), ("lib/jobs/planner.ex", 6, "call")},
        {"Jobs.Runner.twice", "Jobs.Planner.plan"}, id="elixir"),
]


@pytest.mark.parametrize(("files", "symbol", "expected", "calling"), CASES)
def test_refs_and_callers_of_one_of_two_same_named_methods(store, repo, files, symbol,
                                                             expected, calling):
    index(store, repo, files)
    assert usages(store, symbol) == expected  # not the other class's, no comment or string
    d = name_definition(store, symbol)
    got = queries.callers(store, d)
    assert {e.definition.qualified_name for e in got.edges if e.definition} == calling
    assert all(e.resolved for e in got.edges)
    texts = [line for f in files.values() for line in f.splitlines()]
    mentions = {(p, n) for p, f in files.items() for n, line in enumerate(f.splitlines(), 1)
                if "in a string" in line or "in a comment" in line}
    assert mentions and not mentions & {(p, n) for p, n, _ in expected}
    assert texts


def test_declared_return_types_chain_and_overloads_split_across_files_answer_none(store, repo):
    index(store, repo, {
        "Sources/Req.swift": "class Req {\n    func validate(_ code: Int = 200) -> Self { self }\n"
                             "    func send() {}\n    func retry() -> Self { self }\n}\n",
        "Sources/Req+Validate.swift": "extension Req {\n    func validate() -> Self { self }\n}\n",
        "Sources/Session.swift": "class Session {\n    func request() -> Req { Req() }\n}\n"
                                 "func use(s: Session) {\n    s.request().validate().send()\n"
                                 "    s.request().retry().send()\n}\n",
        "src/app/Make.kt": "package app\n\nclass Box {\n    fun open() {}\n}\n\n"
                           "fun make(): Box = Box()\n\nfun use() {\n    make().open()\n}\n",
    })
    # `validate` is declared in the type and in an extension, and `validate()` fits both
    # (a default): which one is not guessed
    assert usages(store, "Sources/Req.swift:2") == set()
    assert usages(store, "Sources/Req+Validate.swift:2") == set()
    # ... but the chain's type is known from `-> Self` / `-> Req` (Swift), `: Box` (Kotlin),
    # also through both `validate`s (each gives a `Req`)
    assert usages(store, "Sources/Req.swift:3") == {("Sources/Session.swift", 5, "call"),
                                                    ("Sources/Session.swift", 6, "call")}
    assert usages(store, "src/app/Make.kt:4") == {("src/app/Make.kt", 10, "call")}
