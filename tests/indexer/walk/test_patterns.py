"""Glob semantics of indexer.walk.patterns: *, ?, [...], **, anchoring, basename-or-path."""

from __future__ import annotations

import pytest

from ctxd.indexer.errors import ValidationError
from ctxd.indexer.walk.patterns import compile_globs


@pytest.mark.parametrize(
    ("pattern", "path", "want"),
    [
        # basename or full path
        ("*.md", "file.md", True),
        ("*.md", "docs/deep/file.md", True),
        ("*.md", "file.mdx", False),
        ("main.go", "main.go", True),
        ("main.go", "cmd/main.go", True),
        ("test_*.go", "test_api.go", True),
        ("test_*.go", "api_test.go", False),
        ("*_test.go", "main_test.go", True),
        ("*_test.go", "pkg/a/main_test.go", True),
        ("*_test.go", "main.go", False),
        # `*` and `?` never cross a separator
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "abc.txt", False),
        ("pkg/*/service.go", "pkg/user/service.go", True),
        ("pkg/*/service.go", "pkg/a/b/service.go", False),
        ("pkg/*/service.go", "service.go", False),
        # character classes
        ("[abc].go", "b.go", True),
        ("[abc].go", "d.go", False),
        ("[a-c]x", "bx", True),
        ("[!a-c]x", "dx", True),
        ("[!a-c]x", "ax", False),
        ("[^a-c]x", "dx", True),
        ("[]]x", "]x", True),
        ("x[!a]y", "x/y", False),
        # `**`
        ("**/*.go", "main.go", True),
        ("**/*.go", "a/b/main.go", True),
        ("**/*.go", "a/b/main.py", False),
        ("vendor/**", "vendor/x.go", True),
        ("vendor/**", "vendor/a/b/c.go", True),
        ("vendor/**", "vendor", False),
        ("vendor/**", "src/vendor/x.go", False),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "ab", False),
        ("**", "any/thing/at/all.txt", True),
        ("a**b", "axxb", True),
        ("a**b", "a/b", False),
        # escapes, anchoring, directory-only
        ("\\*.md", "*.md", True),
        ("\\*.md", "x.md", False),
        ("/build.sh", "build.sh", True),
        ("/build.sh", "tools/build.sh", False),
        ("vendor/", "vendor", False),
        # case-sensitive by default
        ("*.MD", "readme.md", False),
    ],
)
def test_glob_matches_file_by_basename_or_path(pattern: str, path: str, want: bool) -> None:
    assert compile_globs([pattern], "include_patterns").match_file(path) is want


@pytest.mark.parametrize(
    ("pattern", "dir_path", "want"),
    [
        ("vendor", "vendor", True),
        ("vendor", "a/vendor", True),
        ("vendor/**", "vendor", True),
        ("vendor/**", "lib/vendor", True),
        ("node_modules/**", "web/node_modules", True),
        ("vendor/", "vendor", True),
        ("vendor/", "a/vendor", True),
        ("/vendor/", "a/vendor", False),
        ("/vendor/**", "vendor", True),
        ("docs/**", "docs2", False),
        ("*.go", "src", False),
        ("**", "anything", True),
    ],
)
def test_glob_matches_directory_for_pruning(pattern: str, dir_path: str, want: bool) -> None:
    assert compile_globs([pattern], "exclude_patterns").match_dir(dir_path) is want


def test_which_names_the_first_matching_pattern() -> None:
    m = compile_globs(["*.log", "*_test.go", "**/*.go"], "exclude_patterns")
    assert m.which_file("a/x_test.go") == "*_test.go"
    assert m.which_file("a/x.go") == "**/*.go"
    assert m.which_file("a/x.py") is None
    assert m.which_dir("x.log") == "*.log"


def test_empty_matcher_matches_nothing_and_is_falsy() -> None:
    m = compile_globs([], "include_patterns")
    assert not m
    assert not m.match_file("a.txt")
    assert not m.match_dir("a")
    assert m.patterns == ()


def test_ignore_case_matches_any_case() -> None:
    m = compile_globs(["*secret*", ".env"], "sensitive", ignore_case=True)
    assert m.match_file("config/My_SECRET.yaml")
    assert m.match_file(".ENV")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("[invalid", "unterminated"),
        ("[]", "unterminated"),
        ("a\\", "trailing backslash"),
        ("[z-a]", "bad character range"),
        ("", "empty"),
        ("/", "empty"),
    ],
)
def test_invalid_include_pattern_rejected_naming_field_and_pattern(
    pattern: str, reason: str
) -> None:
    with pytest.raises(ValidationError) as info:
        compile_globs(["*.md", pattern], "include_patterns")
    err = info.value
    assert err.message == "invalid include pattern"
    assert err.details["field"] == "include_patterns"
    assert err.details["pattern"] == pattern
    assert reason in err.details["reason"]
    assert repr(pattern) in (err.hint or "")
    assert err.to_dict()["error"] == "validation_error"


def test_invalid_exclude_pattern_names_exclude_field() -> None:
    with pytest.raises(ValidationError) as info:
        compile_globs(["[invalid"], "exclude_patterns")
    assert info.value.message == "invalid exclude pattern"
    assert info.value.details == {
        "field": "exclude_patterns",
        "pattern": "[invalid",
        "reason": "unterminated character class '['",
    }


def test_single_string_instead_of_list_is_rejected() -> None:
    with pytest.raises(ValidationError) as info:
        compile_globs("*.md", "include_patterns")
    assert info.value.details["field"] == "include_patterns"


@pytest.mark.parametrize(
    ("pattern", "path", "want"),
    [
        # consecutive `**` segments mean one
        ("a/**/**/b", "a/b", True),
        ("a/**/**/b", "a/x/y/b", True),
        ("**/**/d/zzz", "d/zzz", True),
        ("**/**", "any/thing", True),
        # globs Python's `re` would backtrack on run on RE2, with the same meaning
        ("**/a/**/b.txt", "a/b.txt", True),
        ("**/a/**/b.txt", "x/a/y/z/b.txt", True),
        ("**/a/**/b.txt", "x/a/y/z/bxtxt", False),
        ("**/a/**/b.txt", "x/ab.txt", False),
        ("*x*y*", "axbyc", True),
        ("*x*y*", "x/y", False),
        ("src/*x*y*/**", "src/axby/k/l.py", True),
        ("[%-0]?", ".a", True),
        ("[%-0]?", "0a", True),
        ("a[%-0]b", "a/b", False),
        ("a[/]b", "a/b", False),
        ("*T*T*", "xtyt", False),
        # a name holding a newline is still a name
        ("**/*.py", "a\nb/c.py", True),
        ("vendor/**", "vendor/x\ny", True),
    ],
)
def test_glob_semantics_kept_by_linear_matching(pattern: str, path: str, want: bool) -> None:
    assert compile_globs([pattern], "include_patterns").match_file(path) is want


def test_ignore_case_holds_on_re2_globs() -> None:
    m = compile_globs(["*key*store*"], "sensitive", ignore_case=True)
    assert m.match_file("My.KEY.STORE")
    assert not m.match_file("keys/store")


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    "pattern",
    ["**/**/d/d/zzz", "**/d/**/d/**/zzz", "**/**/**/d/zzz", "d/**/d/**/d/**/*z*z*z",
     "**/d/zzz/**"],
)
def test_glob_matching_is_linear_in_path_depth(pattern: str) -> None:
    """Issue 23: on a 2,000-level tree `--exclude '**/**/d/d/zzz'` took 34 s and three `**`
    segments over 120 s, polynomial backtracking over the depth. Every directory of such
    a tree is matched (the walk asks at each level); linear matching does it in well under
    a second, the old translation not within the timeout."""
    m = compile_globs([pattern], "exclude_patterns")
    path = ""
    for _depth in range(2000):
        path = f"{path}/d" if path else "d"
        assert m.which_dir(path, "d") is None
    assert m.which_file(path + "/zzz" + ("/x" if pattern.endswith("/**") else "")) is not None


@pytest.mark.timeout(60)
def test_many_stars_in_one_segment_do_not_backtrack() -> None:
    """`*a*a*a*a*b` against a 200-character name of `a`s: 17.7 s with the old translation."""
    m = compile_globs(["*a*a*a*a*b"], "exclude_patterns")
    assert not m.match_file("a" * 255)
    assert m.match_file("a" * 254 + "b")


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [("x" * 5000, "longer than 4096"), ("a\udc80*", "not valid UTF-8")],
)
def test_oversized_or_unencodable_glob_rejected(pattern: str, reason: str) -> None:
    with pytest.raises(ValidationError) as info:
        compile_globs([pattern], "exclude_patterns")
    assert reason in info.value.details["reason"]
