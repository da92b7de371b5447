"""What the later languages' graphs record so that resolution can tell same-named
definitions apart: a Swift call's argument labels and a function's parameters' labels,
existential types (`(any P)?`)."""

from __future__ import annotations

from ctxd.indexer.chunk.syntax import parse_source
from ctxd.indexer.graph import FileGraph, Role, graph_of
from ctxd.indexer.graph.langs_more import LABELS


def graph(language: str, text: str) -> FileGraph:
    got = graph_of(language, parse_source(language, text))
    assert got is not None
    return got


SWIFT = '''class Req {
    func progress(queue: Int = 0, closure: @escaping () -> Void) -> Self { self }
    func log(_ first: Int, _ rest: Int..., to file: String) {}
    weak var provider: (any Provider)?
}
func use(r: Req) {
    r.progress(queue: 1) { }
    r.log(1, 2, 3, to: "f")
    r.progress { } other: { }
}
'''


def test_swift_calls_and_functions_record_their_argument_labels():
    g = graph("swift", SWIFT)
    labels = {(s.line, s.value) for s in g.sites if s.name == LABELS and s.role == Role.BIND}
    assert labels == {(2, "(queue=,closure)"), (3, "(_,_...,to)"), (6, "(r)")}
    calls = {(s.line, s.name, s.value) for s in g.sites if s.role == Role.CALL}
    assert calls == {(7, "progress", "(queue,{)"), (8, "log", "(_,_,_,to)"),
                     (9, "progress", "({,other)")}
    assert not [s for s in g.sites if s.name == "other"]  # a trailing closure's label


def test_a_swift_existential_optional_is_its_protocol():
    g = graph("swift", SWIFT)
    assert [s.value for s in g.sites if s.name == "provider" and s.role == Role.BIND] == [
        ":Provider"]


def test_scala_new_a_with_b_calls_a_and_a_type_applied_method_is_a_call():
    g = graph("scala", "object P {\n  val a = new scopt.A[C] with B\n"
                       "  val b = new A with B { }\n  val c = Parser.builder[Int]\n}\n")
    assert {(s.line, s.name) for s in g.sites if s.role == Role.CALL} == {(2, "A"), (3, "A")}
    assert {(s.line, s.name) for s in g.sites if s.name == "B"} == {(2, "B"), (3, "B")}
    assert [s.value for s in g.sites if s.name == "c" and s.role == Role.BIND] == [
        "()Parser.builder"]


def test_a_kotlin_extensions_receiver_is_its_this_and_a_function_reference_is_marked():
    g = graph("kotlin", "fun <U : Base> U.context(): U = this\nfun Cmd.test(): Int = 1\n"
                        "fun plain() {\n    val a = ::listOf\n    g(context)\n}\n")
    assert {(s.line, s.value) for s in g.sites if s.name == "this" and s.role == Role.PARAM} \
        == {(1, ":U"), (2, ":Cmd")}
    assert [(s.name, s.value) for s in g.sites if s.line >= 4 and s.role == Role.REF] == [
        ("listOf", "::"), ("context", None)]


def test_a_cpp_return_type_on_the_line_before_the_name_is_the_functions():
    g = graph("cpp", "namespace n {\nclass R {};\nclass P { R parse(); };\n"
                     "inline\nR\nP::parse()\n{\n  return R();\n}\n}\n")
    parse = next(k for k, d in enumerate(g.defs) if d.qualname == "n.P.parse" and d.line == 6)
    assert (":R", parse) in {(s.value, s.scope) for s in g.sites if s.name == "return"}


def test_a_swift_chains_calls_keep_their_labels():
    g = graph("swift", "func use(s: Session) {\n    s.request(\"a\", to: b).validate()\n"
                       "    let r = s.request(for: t)\n}\n")
    assert [s.receiver for s in g.sites if s.name == "validate"] == ["s.request#_,to()"]
    assert [s.value for s in g.sites if s.name == "r"] == ["()s.request#for"]


def test_a_kotlin_named_arguments_name_is_no_site():
    g = graph("kotlin", "fun f() {\n    g(help = \"x\", y)\n    h(name = a.b, *xs)\n}\n")
    assert {s.name for s in g.sites if s.line >= 2} == {"g", "y", "h", "a", "b", "xs"}
