"""The Zoekt query parser (search/lexical/query.py) and the regex analysis it relies on
(search/lexical/regex_trigrams.py): atoms, precedence, quoting, case, errors, literals."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import QueryError
from ctxd.search.lexical.query import (
    And,
    Branch,
    Const,
    Field,
    Lang,
    Meta,
    Not,
    Or,
    Repo,
    RepoFlag,
    ResultType,
    Sym,
    Text,
    Type,
    format_node,
    parse,
)
from ctxd.search.lexical.regex_trigrams import (
    MATCH_ALL,
    AllOf,
    AnyOf,
    Lit,
    has_uppercase,
    literal_text,
    required_literals,
    to_fts_match,
)


def any_(pattern: str, case: bool = False) -> Text:
    return Text(pattern, Field.ANY, case)


# -- atoms -------------------------------------------------------------------------------


def test_bare_word_matches_path_or_content_case_insensitively() -> None:
    assert parse("needle") == any_("needle")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("content:foo", Text("foo", Field.CONTENT, False)),
        ("c:foo", Text("foo", Field.CONTENT, False)),
        ("file:\\.go$", Text("\\.go$", Field.PATH, False)),
        ("f:src/", Text("src/", Field.PATH, False)),
        ("regex:a.b", any_("a.b")),
        ("repo:^shop$", Repo("^shop$")),
        ("r:go", Repo("go")),
        ("lang:Python", Lang("python")),
        ("sym:Greet", Sym("Greet", True)),
        ("branch:main", Branch("main")),
        ("b:HEAD", Branch("HEAD")),
        ("archived:no", RepoFlag("archived", False)),
        ("fork:yes", RepoFlag("fork", True)),
        ("public:yes", RepoFlag("public", True)),
        ("meta.team:^core$", Meta("team", "^core$")),
    ],
)
def test_each_atom_prefix_makes_its_node(query: str, expected: object) -> None:
    assert parse(query) == expected


def test_empty_file_and_content_atoms_match_everything_as_regexes() -> None:
    assert parse("f:") == Text("", Field.PATH, False)
    assert parse('c:""') == Text("", Field.CONTENT, False)


def test_quoting_a_prefix_disables_it() -> None:
    assert parse('"file:bla"') == any_("file:bla")
    assert parse('fi"le:bla"') == any_("file:bla")


# -- combining -----------------------------------------------------------------------------


def test_juxtaposition_is_and() -> None:
    assert parse("foo bar") == And((any_("foo"), any_("bar")))


def test_or_binds_weaker_than_and() -> None:
    assert parse("a1 b2 or c3") == Or((And((any_("a1"), any_("b2"))), any_("c3")))


def test_only_lowercase_unquoted_or_is_an_operator() -> None:
    assert parse("foo OR bar") == And((any_("foo"), any_("OR", True), any_("bar")))
    assert parse('foo "or" bar') == And((any_("foo"), any_("or"), any_("bar")))


def test_negation_applies_to_one_atom_or_group() -> None:
    assert parse("-foo bar") == And((Not(any_("foo")), any_("bar")))
    assert parse("- foo") == Not(any_("foo"))
    assert parse("-(a1 b2)") == Not(And((any_("a1"), any_("b2"))))
    assert parse("-repo:shop cart") == And((Not(Repo("shop")), any_("cart")))


def test_parentheses_group_only_with_inner_whitespace() -> None:
    assert parse("(r:a or r:b) lang:go") == And((Or((Repo("a"), Repo("b"))), Lang("go")))
    assert parse("foo(bar)") == any_("foo(bar)")
    assert parse("(abc)(de)") == any_("(abc)(de)")
    assert parse("( foo )") == any_("foo")


def test_empty_group_matches_everything() -> None:
    assert parse("( )") == Const(True)


def test_nested_and_or_are_flattened() -> None:
    assert parse("(a1 (b2 c3)) d4") == And((any_("a1"), any_("b2"), any_("c3"), any_("d4")))
    assert parse("(x1 or y2) or z3") == Or((any_("x1"), any_("y2"), any_("z3")))


# -- quoting and escaping ---------------------------------------------------------------------


def test_quotes_group_words_but_stay_regexes() -> None:
    assert parse('"def total"') == any_("def total")
    assert parse('"foo.bar"') == any_("foo.bar")


def test_backslash_inside_quotes_stands_for_the_next_character() -> None:
    assert parse(r'"a \"b\" c"') == any_('a "b" c')
    assert parse(r'"foo\\.bar"') == any_(r"foo\.bar")


def test_backslash_outside_quotes_is_kept_for_the_regex() -> None:
    assert parse(r"foo\.bar") == any_(r"foo\.bar")
    assert parse(r"a\ b") == any_(r"a\ b")


def test_quoted_and_unquoted_parts_concatenate() -> None:
    assert parse('ab"c d"ef') == any_("abc def")


def test_quoted_leading_dash_is_text() -> None:
    assert parse('"-foo"') == any_("-foo")


# -- case ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "sensitive"),
    [
        ("cart", False),
        ("Cart", True),
        ("[A-Z]x", True),
        (r"\w+foo", True),
        ("[^A-Z]", False),
        (r"\S+", False),
        (r"\d+", False),
        ("[@-[]", False),
        (r"\x41", True),
        ("École", False),
    ],
)
def test_case_auto_is_sensitive_iff_an_ascii_uppercase_letter_is_in_the_pattern(
    pattern: str, sensitive: bool
) -> None:
    assert has_uppercase(pattern) is sensitive
    node = parse(f"c:{pattern}")
    assert isinstance(node, Text) and node.case_sensitive is sensitive


def test_case_yes_and_no_apply_to_their_whole_level() -> None:
    assert parse("foo case:yes bar") == And((any_("foo", True), any_("bar", True)))
    assert parse("case:no AUTHSERVICE") == any_("AUTHSERVICE", False)


def test_last_case_modifier_wins() -> None:
    assert parse("case:no foo case:yes") == any_("foo", True)


def test_inner_group_keeps_its_own_case_and_inherits_otherwise() -> None:
    got = parse("case:yes (foo case:no) (bar or baz)")
    assert got == And((any_("foo", False), Or((any_("bar", True), any_("baz", True)))))


def test_repo_patterns_ignore_case_modifiers() -> None:
    assert parse("case:no repo:Shop foo") == And((Repo("Shop"), any_("foo")))


def test_sym_follows_case_auto() -> None:
    assert parse("sym:calc") == Sym("calc", False)


# -- type ------------------------------------------------------------------------------------


def test_type_wraps_its_whole_level_including_or_branches() -> None:
    assert parse("type:filename foo or bar") == Type(
        ResultType.FILENAME, Or((any_("foo"), any_("bar")))
    )
    assert parse("foo t:repo") == Type(ResultType.REPO, any_("foo"))
    assert parse("type:file foo") == Type(ResultType.FILENAME, any_("foo"))


def test_type_inside_a_group_stays_in_the_group() -> None:
    assert parse("x1 (type:filename y2)") == And(
        (any_("x1"), Type(ResultType.FILENAME, any_("y2")))
    )


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "position", "fragment"),
    [
        ("foo(", 0, "invalid regular expression"),
        ("ok [a-", 3, "invalid regular expression"),
        ("a{2,1}", 0, "invalid regular expression"),
        ("(?=x)", 0, "invalid regular expression"),
        (r"\1", 0, "invalid regular expression"),
        (r"a \C", 2, "invalid regular expression"),
        ('foo "bar', 4, "unterminated quoted string"),
        ('"abc\\', 4, "missing character after"),
        ("foo \\", 4, "lone \\"),
        ("(a b", 0, "missing close paren"),
        ("foo)", 3, "extra tokens"),
        ("foo\nbar", 3, "newline"),
        ("abc or", 4, "OR operator should have operand"),
        ("or abc", 0, "OR operator should have operand"),
        ("a or or b", 5, "OR operator should have operand"),
        ("--", 1, "'-' operator needs an argument"),
        ("foo -", 4, "'-' operator needs an argument"),
        ("case:maybe x", 0, "unknown case argument"),
        ("type:blob x", 0, "unknown type argument"),
        ("archived:maybe", 0, "unknown archived argument"),
        ("sym: foo", 0, "sym: atom must have an argument"),
        ('x ""', 2, "extra tokens"),
        ("meta.team", 0, "invalid meta field"),
        ("r:(", 0, "invalid regular expression"),
    ],
)
def test_malformed_queries_raise_query_error_with_position(
    query: str, position: int, fragment: str
) -> None:
    with pytest.raises(QueryError) as info:
        parse(query)
    err = info.value
    assert err.message.startswith("Query syntax error: ")
    assert fragment in err.message
    assert err.details["position"] == position
    assert err.hint
    assert err.code == "QUERY_ERROR"


@pytest.mark.parametrize("query", ["", "   ", "\t"])
def test_empty_queries_are_errors(query: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        parse(query)


def test_unknown_language_is_not_a_parse_error() -> None:
    assert parse("lang:klingon foo") == And((Lang("klingon"), any_("foo")))


def test_format_node_is_readable() -> None:
    text = format_node(parse("lang:go -f:_test Greet or sym:main"))
    assert text == "or(and(lang:go, not(path:'_test'/i), any:'Greet'), sym:'main'/i)"


# -- literals for the trigram index -------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("calculate_tax", Lit("calculate_tax")),
        ("CamelCase", Lit("camelcase")),
        (r"def \w+_item\(", AllOf((Lit("def "), Lit("_item(")))),
        ("foo.*bar", AllOf((Lit("foo"), Lit("bar")))),
        (r"(logout|discard)\(", AnyOf((Lit("discard("), Lit("logout(")))),
        ("[Cc]art", Lit("cart")),
        ("colou?r", AnyOf((Lit("color"), Lit("colour")))),
        ("ab(c|d)ef", AnyOf((Lit("abcef"), Lit("abdef")))),
        (r"^\s*def\s+main\b", AllOf((Lit("def"), Lit("main")))),
        (r"\Qa.b*c\E", Lit("a.b*c")),
        ("x{3}", Lit("xxx")),
        ("(abc)+def", AllOf((Lit("abc"), Lit("def")))),
        ("foo(bar)?baz", AnyOf((Lit("foobarbaz"), Lit("foobaz")))),
    ],
)
def test_required_literals_of_regexes(pattern: str, expected: object) -> None:
    assert required_literals(pattern) == expected


@pytest.mark.parametrize(
    "pattern", ["ab", ".*", r"\w+", "abc|de", "[a-z]+", "x*", "(abc)?", r"\pL\pL\pL"]
)
def test_patterns_without_a_three_character_literal_require_nothing(pattern: str) -> None:
    assert required_literals(pattern) == MATCH_ALL


def test_small_character_classes_expand_into_alternatives() -> None:
    got = required_literals("ab[0-9]cd")
    assert isinstance(got, AnyOf)
    assert {c.text for c in got.children if isinstance(c, Lit)} == {f"ab{d}cd" for d in range(10)}


def test_fts_match_quotes_user_text() -> None:
    lq = AllOf((Lit('say "hi"'), AnyOf((Lit("abc"), Lit("def")))))
    assert to_fts_match(lq) == '("say ""hi""" AND ("abc" OR "def"))'
    assert to_fts_match(MATCH_ALL) is None


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("foo", "foo"),
        (r"a\.b", "a.b"),
        ("(abc)(de)", "abcde"),
        ("", None),
        ("a.b", None),
        ("(?i)foo", None),
        ("^foo", None),
    ],
)
def test_literal_text_recognizes_plain_substrings(pattern: str, text: str | None) -> None:
    assert literal_text(pattern) == text


def test_absurdly_nested_query_is_a_query_error_not_a_crash() -> None:
    with pytest.raises(QueryError, match="nests too deeply"):
        parse("( " * 3000 + "x" + " )" * 3000)


def test_scoped_query_keeps_a_top_level_or_inside_the_scope():
    from ctxd.search.lexical.query import format_node
    from ctxd.search.zoekt.query import scoped_query

    q = scoped_query("login or logout", ["shop"], "python")
    assert q == '( login or logout ) repo:"^shop$" lang:"python"'
    assert format_node(parse(q)) == (
        "and(or(any:'login'/i, any:'logout'/i), repo:'^shop$', lang:python)")
    assert scoped_query("x") == "x"


@pytest.mark.parametrize(
    ("query", "repos", "tree"),
    [
        # issue 15: `(repo:"^flask$")` was one regex atom over paths and contents
        ("session", ["flask"], "and(any:'session'/i, repo:'^flask$')"),
        ("a b", ["x", "y"], "and(any:'a'/i, any:'b'/i, or(repo:'^x$', repo:'^y$'))"),
        ("foo(bar)", ["x"], "and(any:'foo(bar)'/i, repo:'^x$')"),
        ("repo:sh cart", ["a.b"], r"and(repo:'sh', any:'cart'/i, repo:'^a\\.b$')"),
    ],
)
def test_scoped_query_scopes_by_repository_atoms(query: str, repos: list[str], tree: str):
    from ctxd.search.lexical.query import format_node
    from ctxd.search.zoekt.query import scoped_query

    assert format_node(parse(scoped_query(query, repos))) == tree
