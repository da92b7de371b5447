"""Recall of the later languages' graphs where a name alone cannot say which definition
(both stores): Swift overloads in a type's body and in an extension told apart by their
argument labels; ..."""

from __future__ import annotations

import pytest

from ctxd.search.graph.overloads import fits
from tests.search.graph.indexed import index, usages


@pytest.mark.parametrize(("call", "params", "expected"), [
    ("(queue,{)", "(queue=,closure)", True),
    ("(queue,{)", "(bufferingPolicy=)", False),
    ("()", "(queue=,closure)", False),
    ("()", "(bufferingPolicy=)", True),
    ("({)", "(queue=,closure)", True),
    ("(_,_,_,label)", "(_,_...,label)", True),
    ("(_,label)", "(_,_...,label)", True),
    ("(xs,_,_)", "(xs...)", True),
    ("(label,_)", "(_,_...,label)", False),
    ("(x,{,other)", "(x,body,other)", True),
])
def test_swift_argument_labels_fit_parameters(call, params, expected):
    assert fits(call, params) is expected


SWIFT_OVERLOADS = {
    "Sources/Req.swift": "class Req {\n"
                         "    func progress(queue: Int = 0, closure: () -> Void) -> Self {\n"
                         "        self\n    }\n}\n",
    "Sources/Req+Stream.swift": "extension Req {\n"
                                "    func progress(policy: Int = 1) -> Int {\n"
                                "        progress(queue: 2) { }\n        return 0\n"
                                "    }\n}\n",
    "Sources/Use.swift": "class Up: Req {}\n"
                         "func use(r: Up) {\n"
                         "    r.progress(queue: 1) { }\n"
                         "    _ = r.progress()\n"
                         "    _ = r.progress(policy: 3)\n"
                         "    r.progress { }\n}\n",
    "Sources/Session.swift": "class Session {\n    func make(id: Int) -> Up { Up() }\n}\n"
                             "extension Session {\n    func make(name: String) -> Up { Up() }\n}\n"
                             "func go(s: Session) {\n    s.make(id: 1).progress(queue: 1) { }\n}\n",
    "Sources/Other.swift": "class Other {\n    func make(id: Int) -> Int { 0 }\n}\n"
                           "extension Other {\n    func make(name: String) -> Up { Up() }\n}\n"
                           "func go(o: Other) {\n    o.make(id: 1).progress(queue: 1) { }\n}\n",
}


def test_swift_overloads_in_a_body_and_an_extension_are_told_apart_by_labels(store, repo):
    index(store, repo, SWIFT_OVERLOADS)
    assert usages(store, "Sources/Req.swift:2") == {
        ("Sources/Req+Stream.swift", 3, "call"),  # (a bare call in the extension's method)
        ("Sources/Use.swift", 3, "call"),
        ("Sources/Session.swift", 8, "call")}  # (`make`'s overloads all give an `Up`; not
    # `Other.make`'s, which differ)
    # `r.progress { }` may pass its closure to either (a parameter's type is not read):
    assert usages(store, "Sources/Req+Stream.swift:2") == {  # none is guessed
        ("Sources/Use.swift", 4, "call"), ("Sources/Use.swift", 5, "call")}


SCALA = {
    "src/main/scala/demo/Builder.scala": "package demo\n\n"
                                         "abstract class Builder[C] {\n"
                                         "  def check(f: C => Boolean): Unit = ()\n}\n\n"
                                         "object Parser {\n"
                                         "  def builder[C]: Builder[C] = new Builder[C] {}\n}\n\n"
                                         "class Setup {\n  def show(): Unit = ()\n}\n"
                                         "trait Extra\n",
    "src/test/scala/demo/Spec.scala": "package demo\n\n"
                                      "class Spec {\n"
                                      "  lazy val builder = Parser.builder[Int]\n"
                                      "  lazy val parser = {\n"
                                      "    import builder._\n"
                                      "    check(c => c > 0)\n"
                                      "  }\n"
                                      "  lazy val other = {\n"
                                      "    check(c => c > 0)\n"
                                      "  }\n"
                                      "  val setup = new Setup with Extra { }\n}\n",
}


def test_scala_a_values_imported_members_and_new_a_with_b(store, repo):
    index(store, repo, SCALA)
    # `import builder._` (a value's members) reaches `check` in its block only
    assert usages(store, "src/main/scala/demo/Builder.scala:4") == {
        ("src/test/scala/demo/Spec.scala", 7, "call")}
    # `new Setup with Extra { }` calls Setup's constructor
    assert usages(store, "src/main/scala/demo/Builder.scala:11") == {
        ("src/test/scala/demo/Spec.scala", 12, "call")}


KOTLIN = {
    "src/main/kotlin/demo/core/Base.kt": "package demo.core\n\n"
                                         "open class Base<T> {\n"
                                         "    fun help(): String = \"\"\n}\n\n"
                                         "fun <T : Base<T>, U : T> U.context(block: Int.() -> Unit)"
                                         ": U = apply { }\n\n"
                                         "fun Base<*>.name(): String = \"\"\n",
    "src/main/kotlin/demo/app/Cmd.kt": "package demo.app\n\n"
                                       "import demo.core.Base\nimport demo.core.context\n"
                                       "import demo.core.name\n\n"
                                       "class Cmd : Base<Cmd>() {\n"
                                       "    fun run(f: (Int) -> Unit) = f(1)\n}\n\n"
                                       "class Other {\n    fun help(): String = \"\"\n}\n\n"
                                       "fun use(command: Cmd, other: Other) {\n"
                                       "    val h = command.context { }.help()\n"
                                       "    val c = Cmd().context { }\n"
                                       "    c.help()\n"
                                       "    other.context { }.help()\n"
                                       "    command.name()\n"
                                       "}\n\nfun show() = with(Any()) { println(context) }\n",
}


def test_kotlin_extension_functions_on_an_instance_and_one_that_gives_it_back(store, repo):
    index(store, repo, KOTLIN)
    # `U.context(..): U` gives the command back: its `help()` is Base's
    assert usages(store, "src/main/kotlin/demo/core/Base.kt:4") == {
        ("src/main/kotlin/demo/app/Cmd.kt", 16, "call"),
        ("src/main/kotlin/demo/app/Cmd.kt", 18, "call")}
    assert usages(store, "src/main/kotlin/demo/core/Base.kt:7") == {  # (not on an Other,
        ("src/main/kotlin/demo/app/Cmd.kt", 4, "import"),  # nor a bare `context`: no call)
        ("src/main/kotlin/demo/app/Cmd.kt", 16, "call"),
        ("src/main/kotlin/demo/app/Cmd.kt", 17, "call")}
    assert usages(store, "src/main/kotlin/demo/core/Base.kt:9") == {
        ("src/main/kotlin/demo/app/Cmd.kt", 5, "import"),
        ("src/main/kotlin/demo/app/Cmd.kt", 20, "call")}


CPP = {
    "include/opts.hpp": "namespace opts {\n"
                        "class Result {\n public:\n  int count(int k) const { return k; }\n};\n"
                        "class Parser {\n public:\n  Result\n  parse(int argc);\n};\n"
                        "class Other {\n public:\n  int\n  parse(int argc);\n};\n\n"
                        "inline\nResult\nParser::parse(int argc)\n{\n  return Result();\n}\n\n"
                        "inline\nint\nOther::parse(int argc)\n{\n  return argc;\n}\n"
                        "}  // namespace opts\n",
    "test/main.cpp": '#include "opts.hpp"\n\n'
                     "int main(int argc) {\n"
                     "  opts::Parser parser;\n"
                     "  auto result = parser.parse(argc);\n"
                     "  return result.count(1);\n}\n",
}


def test_cpp_a_return_type_written_on_the_line_before_an_out_of_line_method(store, repo):
    index(store, repo, CPP)
    # `Result\nParser::parse(..)`: the type is the method's (not the namespace's), and
    # `Other::parse`, another class's out-of-line method in the namespace, is no overload
    assert usages(store, "include/opts.hpp:4") == {("test/main.cpp", 6, "call")}


SWIFT_CHAINS = {
    "Sources/Req.swift": "class Req {\n    func check() -> Self { self }\n}\n"
                         "class Other {\n    func check() -> Self { self }\n}\n",
    "Sources/Session.swift": "class Session {\n"
                             "    func request(_ url: String, method: Int = 0) -> Req { Req() }\n"
                             "    var state: Int = 0\n}\n",
    "Sources/Session+Other.swift": "extension Session {\n"
                                   "    func request(for task: Int) -> Other { Other() }\n}\n",
    "Tests/UseTests.swift": "extension Session {\n    func extra() {}\n}\n"
                            "func use(session: Session) {\n"
                            "    session.request(\"a\").check()\n"
                            "    session.request(for: 1).check()\n"
                            "    let s = session.state\n"
                            "    print(s)\n"
                            "    let state = session.state\n"
                            "    print(state)\n"
                            "    let made: Session = Session()\n}\n",
}


def test_swift_a_chains_calls_keep_their_labels_and_a_value_is_no_definition(store, repo):
    index(store, repo, SWIFT_CHAINS)
    # `request("a")` is the body's overload (`-> Req`), `request(for:)` the extension's
    assert usages(store, "Sources/Req.swift:2") == {("Tests/UseTests.swift", 5, "call")}
    assert usages(store, "Sources/Req.swift:5") == {("Tests/UseTests.swift", 6, "call")}
    # `s` and a local `state` hold `state`'s value: `print(..)` is no reference of it
    assert usages(store, "Sources/Session.swift:3") == {("Tests/UseTests.swift", 7, "reference"),
                                                        ("Tests/UseTests.swift", 9, "reference")}
    # a file that extends `Session` names the class, not its own extension
    assert ("Tests/UseTests.swift", 11, "reference") in usages(store, "Sources/Session.swift:1")
